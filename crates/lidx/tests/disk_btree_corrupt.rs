//! A disk B+-tree file damaged on disk gives a typed error, never a panic or a wrong answer:
//! the header (magic, version, inconsistent fields, a flipped byte), a node (count past the
//! capacity, a child beyond the file, keys out of order, a sibling cycle, a flipped byte), a
//! free-list block (a flipped byte, a reachable block listed as free, bad fields) and a
//! truncated file. Content damage is written back with a valid checksum so that the tree's own
//! checks, not the device's, must catch it.

mod disk_btree_common;

use std::path::Path;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{DeviceKind, IoClass, Storage};
use lidx::Error;

const BS: usize = 4096;
/// Children per inner node for u64 keys in 4 KiB blocks: child ids start at this offset.
const INNER_CHILDREN_AT: usize = 16 + 254 * 8;

struct Fixture {
    _dir: tempfile::TempDir,
    storage: Storage,
    keys: Vec<u64>,
}

/// The tree `bt` of `storage` over `keys`, each key's payload its own bytes.
fn build(storage: &Storage, keys: &[u64]) -> DiskBTree<u64> {
    DiskBTree::build(
        storage,
        "bt",
        keys,
        |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
        DiskBTreeParams::default(),
    )
    .unwrap()
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, BS).unwrap();
    let keys: Vec<u64> = (0..70_000u64).map(|i| i * 3).collect();
    let tree = build(&storage, &keys);
    assert_eq!(tree.height(), 3);
    drop(tree);
    Fixture {
        _dir: dir,
        storage,
        keys,
    }
}

impl Fixture {
    fn path(&self) -> std::path::PathBuf {
        self.storage.dir().unwrap().join("bt")
    }

    /// Changes the usable bytes of `block` and writes it back with a valid checksum.
    fn rewrite(&self, block: u64, change: impl FnOnce(&mut [u8])) {
        disk_btree_common::rewrite_block(&self.storage, "bt", block, change);
    }

    fn read(&self, block: u64) -> Vec<u8> {
        let device = self.storage.open("bt", false).unwrap();
        let mut buf = lidx::io::AlignedBuf::zeroed(BS);
        device
            .read_blocks(block, &mut buf, IoClass::Header)
            .unwrap();
        buf.to_vec()
    }

    fn root(&self) -> u64 {
        u64::from_le_bytes(self.read(0)[48..56].try_into().unwrap())
    }

    fn first_key(&self, block: u64) -> u64 {
        u64::from_le_bytes(self.read(block)[16..24].try_into().unwrap())
    }

    fn open(&self, resident: Resident) -> lidx::Result<DiskBTree<u64>> {
        DiskBTree::open(&self.storage, "bt", resident, false)
    }

    fn get(&self, resident: Resident, key: u64) -> lidx::Result<bool> {
        self.open(resident)?.get(&key, &mut [0u8; 8])
    }

    /// Deletes the keys of four leaves (their merges free blocks), flushes, and returns the
    /// first block of the free list's chain.
    fn free_some_blocks(&self) -> u64 {
        let mut tree =
            DiskBTree::<u64>::open(&self.storage, "bt", Resident::AllInner, true).unwrap();
        for k in &self.keys[1000..2016] {
            tree.delete(k).unwrap();
        }
        tree.flush().unwrap();
        assert!(tree.storage_bytes().free > 0);
        u64::from_le_bytes(self.read(0)[104..112].try_into().unwrap())
    }
}

fn flip_raw(path: &Path, offset: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

fn assert_corrupt<T: std::fmt::Debug>(result: lidx::Result<T>, block: u64) {
    match result {
        Err(Error::Corrupt { block: got, .. }) => assert_eq!(got, Some(block)),
        other => panic!("expected Corrupt in block {block}, got {other:?}"),
    }
}

#[test]
fn intact_file_answers() {
    let f = fixture();
    let tree = f.open(Resident::AllInner).unwrap();
    assert_eq!(tree.len(), f.keys.len() as u64);
    assert!(tree.get(&300, &mut [0u8; 8]).unwrap());
}

#[test]
fn header_damage() {
    let f = fixture();
    f.rewrite(0, |b| b[0] ^= 1);
    assert!(matches!(
        f.open(Resident::None),
        Err(Error::BadMagic { .. })
    ));

    let f = fixture();
    // Version 1 (before the fill factor was recorded) is refused: rebuild the file.
    f.rewrite(0, |b| b[8] = 1);
    assert!(matches!(
        f.open(Resident::None),
        Err(Error::UnsupportedVersion { got: 1, .. })
    ));

    let f = fixture();
    f.rewrite(0, |b| b[88] ^= 0x40);
    assert_corrupt(f.open(Resident::None), 0);

    let f = fixture();
    f.rewrite(0, |b| b[40] = 1);
    assert_corrupt(f.open(Resident::None), 0);

    let f = fixture();
    flip_raw(&f.path(), 50);
    assert!(matches!(
        f.open(Resident::None),
        Err(Error::ChecksumMismatch { block: 0, .. })
    ));
}

#[test]
fn truncated_file() {
    let f = fixture();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(f.path())
        .unwrap();
    file.set_len(10 * BS as u64).unwrap();
    assert!(matches!(
        f.open(Resident::None),
        Err(Error::Truncated { .. })
    ));
    file.set_len(0).unwrap();
    assert!(matches!(
        f.open(Resident::None),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn leaf_count_past_capacity() {
    let f = fixture();
    let key = f.first_key(5);
    f.rewrite(5, |b| b[4..8].copy_from_slice(&10_000u32.to_le_bytes()));
    for mode in [Resident::None, Resident::AllInner] {
        assert_corrupt(f.get(mode, key), 5);
    }
    assert!(f.get(Resident::AllInner, f.first_key(6)).unwrap());
}

#[test]
fn leaf_keys_out_of_order() {
    let f = fixture();
    let key = f.first_key(7);
    f.rewrite(7, |b| {
        let (a, c) = (b[16..24].to_vec(), b[24..32].to_vec());
        b[16..24].copy_from_slice(&c);
        b[24..32].copy_from_slice(&a);
    });
    assert_corrupt(f.get(Resident::AllInner, key), 7);
}

#[test]
fn child_beyond_the_file() {
    let f = fixture();
    let root = f.root();
    f.rewrite(root, |b| {
        b[INNER_CHILDREN_AT..INNER_CHILDREN_AT + 8].copy_from_slice(&1_000_000u64.to_le_bytes())
    });
    assert_corrupt(f.open(Resident::AllInner).map(|_| ()), root);
    assert_corrupt(f.get(Resident::None, 0), root);
}

#[test]
fn child_pointing_to_the_wrong_subtree() {
    let f = fixture();
    let root = f.root();
    // The root's first child replaced by its second: the separators are outside the range.
    f.rewrite(root, |b| {
        let second = b[INNER_CHILDREN_AT + 8..INNER_CHILDREN_AT + 16].to_vec();
        b[INNER_CHILDREN_AT..INNER_CHILDREN_AT + 8].copy_from_slice(&second);
    });
    let err = f.open(Resident::AllInner).map(|_| ());
    assert!(matches!(err, Err(Error::Corrupt { .. })), "{err:?}");
    let err = f.get(Resident::None, 0);
    assert!(matches!(err, Err(Error::Corrupt { .. })), "{err:?}");
}

#[test]
fn inner_node_with_wrong_level() {
    let f = fixture();
    let root = f.root();
    f.rewrite(root, |b| b[1] = 7);
    assert_corrupt(f.open(Resident::AllInner).map(|_| ()), root);
    assert_corrupt(f.get(Resident::None, 3), root);
}

#[test]
fn sibling_cycles_end_in_an_error() {
    let f = fixture();
    let start = f.first_key(9);
    f.rewrite(9, |b| b[8..16].copy_from_slice(&3u64.to_le_bytes()));
    let tree = f.open(Resident::AllInner).unwrap();
    let err = tree.scan(&start, 100_000, &mut Vec::new(), &mut Vec::new());
    assert!(matches!(err, Err(Error::Corrupt { .. })), "{err:?}");

    f.rewrite(9, |b| b[8..16].copy_from_slice(&9u64.to_le_bytes()));
    assert_corrupt(f.get(Resident::AllInner, start), 9);
}

/// Issue 13: a leaf whose sibling link was edited to skip the next leaf (keys still ascending,
/// no cycle, a valid checksum) made a scan skip a leaf's keys silently. With the inner nodes
/// resident, the link is checked against the tree.
#[test]
fn a_sibling_link_that_skips_a_leaf_is_corrupt() {
    let f = fixture();
    let start = f.first_key(9);
    let tree = f.open(Resident::AllInner).unwrap();
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    tree.scan(&start, 2_000, &mut keys, &mut payloads).unwrap();
    let whole = keys.clone();
    drop(tree);
    f.rewrite(9, |b| b[8..16].copy_from_slice(&11u64.to_le_bytes()));
    let tree = f.open(Resident::AllInner).unwrap();
    keys.clear();
    let err = tree.scan(&start, 2_000, &mut keys, &mut payloads);
    match err {
        Err(Error::Corrupt { block, what, .. }) => {
            assert_eq!(block, Some(9));
            assert!(what.contains("sibling link names block 11"), "{what}");
            assert!(
                what.contains("routes the keys after it to block 10"),
                "{what}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(keys.len() < whole.len() && whole.starts_with(&keys));
    // The last leaf must not link on.
    let last = tree.leaf_count();
    let end = f.first_key(last);
    drop(tree);
    f.rewrite(last, |b| b[8..16].copy_from_slice(&5u64.to_le_bytes()));
    let tree = f.open(Resident::AllInner).unwrap();
    assert_corrupt(
        tree.scan(&end, 1_000_000, &mut Vec::new(), &mut Vec::new()),
        last,
    );
}

#[test]
fn flipped_byte_in_a_leaf() {
    let f = fixture();
    let key = f.first_key(11);
    flip_raw(&f.path(), 11 * BS + 100);
    let tree = f.open(Resident::AllInner).unwrap();
    assert!(matches!(
        tree.get(&key, &mut [0u8; 8]),
        Err(Error::ChecksumMismatch { block: 11, .. })
    ));
    assert!(tree.get(&f.first_key(12), &mut [0u8; 8]).unwrap());
}

/// Issue 16: a flipped byte in a free-list block is a checksum error naming the file and the
/// block; a free-list block changed under a valid checksum so that it lists a block of the
/// tree, or damaged in its own fields, is `Corrupt` naming the file and the block.
#[test]
fn damaged_free_list() {
    let f = fixture();
    let head = f.free_some_blocks();
    assert_eq!(
        f.open(Resident::None).unwrap().verify().unwrap(),
        70_000 - 1016
    );
    flip_raw(&f.path(), head as usize * BS + 40);
    match f.open(Resident::None) {
        Err(Error::ChecksumMismatch { file, block, .. }) => {
            assert_eq!(block, head);
            assert!(file.ends_with("bt"), "{file}");
        }
        other => panic!("expected a checksum error in block {head}, got {other:?}"),
    }

    let f = fixture();
    let head = f.free_some_blocks();
    // Block 1 is the first leaf: never freed, reachable from the root.
    f.rewrite(head, |b| b[16..24].copy_from_slice(&1u64.to_le_bytes()));
    for mode in [Resident::None, Resident::AllInner] {
        match f.open(mode) {
            Err(Error::Corrupt { file, block, what }) => {
                assert_eq!(block, Some(1), "{what}");
                assert!(what.contains("free list and reachable"), "{what}");
                assert!(file.ends_with("bt"), "{file}");
            }
            other => panic!("expected Corrupt naming block 1, got {other:?}"),
        }
    }

    let f = fixture();
    let head = f.free_some_blocks();
    f.rewrite(head, |b| b[0] = 1);
    assert_corrupt(f.open(Resident::None).map(|_| ()), head);
    let f = fixture();
    let head = f.free_some_blocks();
    f.rewrite(head, |b| b[8..16].copy_from_slice(&head.to_le_bytes()));
    assert_corrupt(f.open(Resident::None).map(|_| ()), head);
}

/// Issue 13: the disk B+-tree's write path on a device that fails. It has no log, so what
/// must hold is that every fault is a typed error (never a panic), that the tree in memory
/// keeps answering every key it holds or a typed error, and that the file reopened on a sound
/// device either opens and answers with typed errors at worst, or is refused with a typed
/// error: never a panic.
#[test]
fn write_faults_are_typed_errors() {
    use lidx::io::{FaultPlan, WriteFault};
    use std::sync::Arc;
    let mut struck = 0;
    for fault in WriteFault::ALL {
        for after in [0, 1, 3, 9, 27] {
            let dir = tempfile::tempdir().unwrap();
            let plan = FaultPlan::new();
            let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, BS)
                .unwrap()
                .with_faults(Arc::clone(&plan));
            let keys: Vec<u64> = (0..5_000u64).map(|i| i * 4).collect();
            let mut tree = build(&storage, &keys);
            plan.fail_write_after(after, fault);
            let mut failed = false;
            for i in 0..3_000u64 {
                let key = i * 4 + 1;
                match tree.insert(key, &key.to_le_bytes()) {
                    Ok(_) => {}
                    Err(e) => {
                        assert!(matches!(e, Error::Io { .. }), "{fault:?}/{after}: {e:?}");
                        failed = true;
                        break;
                    }
                }
            }
            if let Err(e) = tree.flush() {
                assert!(matches!(e, Error::Io { .. }), "{fault:?}/{after}: {e:?}");
                failed = true;
            }
            struck += usize::from(failed);
            for &k in keys.iter().step_by(97) {
                if let Err(e) = tree.get(&k, &mut [0u8; 8]) {
                    assert!(!e.to_string().is_empty());
                }
            }
            drop(tree);
            plan.disarm();
            let sound = Storage::new(dir.path(), DeviceKind::File { direct: false }, BS).unwrap();
            if let Ok(tree) = DiskBTree::<u64>::open(&sound, "bt", Resident::AllInner, false) {
                for &k in keys.iter().step_by(97) {
                    if let Ok(found) = tree.get(&k, &mut [0u8; 8]) {
                        assert!(found, "{fault:?}/{after}: key {k} of the bulk load is gone");
                    }
                }
            }
        }
    }
    assert!(struck >= 15, "{struck} runs met their fault");
}
