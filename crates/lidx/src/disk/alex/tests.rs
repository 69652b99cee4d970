//! The on-disk ALEX against `BTreeMap`: proptest operation sequences with flush and reopen
//! (inner nodes on disk or in memory), small nodes so that expansions, both kinds of split and
//! contractions happen; block accounting (inner / leaf, nothing written by reads); damaged and
//! truncated files.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::disk::{DiskIndex, DiskMap};
use crate::error::Error;
use crate::io::{DeviceKind, IoClass, SimProfile, Storage};
use crate::mem::alex::AlexParams;

const BS: usize = 512;

fn small() -> DiskAlexParams {
    DiskAlexParams {
        alex: AlexParams {
            max_node_bytes: 4096,
            ..AlexParams::default()
        },
        payload_size: 8,
    }
}

fn storage() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), BS).unwrap()
}

fn payload(k: u64, salt: u64) -> [u8; 8] {
    (k ^ salt).to_le_bytes()
}

fn build(storage: &Storage, keys: &[u64]) -> DiskAlex {
    DiskAlex::build(
        storage,
        "a",
        keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        small(),
    )
    .unwrap()
}

fn check_all(alex: &DiskAlex, model: &BTreeMap<u64, u64>) {
    assert_eq!(alex.len(), model.len() as u64);
    let mut out = [0u8; 8];
    for (&k, &v) in model {
        assert!(alex.get(&k, &mut out).unwrap(), "key {k}");
        assert_eq!(u64::from_le_bytes(out), v, "key {k}");
    }
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    let n = alex.scan(&0, usize::MAX, &mut keys, &mut payloads).unwrap();
    assert_eq!(n, model.len());
    assert!(keys.iter().copied().eq(model.keys().copied()));
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Delete(u64),
    Get(u64),
    Scan(u64, usize),
    Reopen(bool),
}

fn op(range: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..range).prop_map(Op::Insert),
        2 => (0..range).prop_map(Op::Delete),
        2 => (0..range).prop_map(Op::Get),
        1 => ((0..range), 0usize..40).prop_map(|(k, n)| Op::Scan(k, n)),
        1 => any::<bool>().prop_map(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn ops_match_a_btreemap_across_reopens(
        start in proptest::collection::btree_set(0u64..20_000, 0..400),
        ops in proptest::collection::vec(op(20_000), 0..600),
        spread in 0u64..3,
    ) {
        // `spread` widens the keys so that some land past the bulk-loaded range.
        let scale = 1 + spread * 1000;
        let storage = storage();
        let keys: Vec<u64> = start.iter().map(|k| k * scale).collect();
        let mut model: BTreeMap<u64, u64> =
            keys.iter().map(|&k| (k, u64::from_le_bytes(payload(k, 0)))).collect();
        let mut alex = build(&storage, &keys);
        let mut out = [0u8; 8];
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert(k) => {
                    let k = k * scale;
                    let p = payload(k, i as u64 + 1);
                    let replaced = alex.insert(k, &p).unwrap();
                    prop_assert_eq!(replaced, model.insert(k, u64::from_le_bytes(p)).is_some());
                }
                Op::Delete(k) => {
                    let k = k * scale;
                    prop_assert_eq!(alex.delete(&k).unwrap(), model.remove(&k).is_some());
                }
                Op::Get(k) => {
                    let k = k * scale;
                    let found = alex.get(&k, &mut out).unwrap();
                    prop_assert_eq!(found.then(|| u64::from_le_bytes(out)), model.get(&k).copied());
                }
                Op::Scan(k, n) => {
                    let k = k * scale;
                    let (mut ks, mut ps) = (Vec::new(), Vec::new());
                    let got = alex.scan(&k, n, &mut ks, &mut ps).unwrap();
                    let want: Vec<(u64, u64)> =
                        model.range(k..).take(n).map(|(&k, &v)| (k, v)).collect();
                    prop_assert_eq!(got, want.len());
                    let got: Vec<(u64, u64)> = ks.iter().zip(ps.chunks_exact(8))
                        .map(|(&k, p)| (k, u64::from_le_bytes(p.try_into().unwrap())))
                        .collect();
                    prop_assert_eq!(got, want);
                }
                Op::Reopen(in_memory) => {
                    alex.flush().unwrap();
                    drop(alex);
                    alex = DiskAlex::open(&storage, "a", true, in_memory).unwrap();
                }
            }
        }
        check_all(&alex, &model);
        alex.flush().unwrap();
        drop(alex);
        let again = DiskAlex::open(&storage, "a", false, false).unwrap();
        check_all(&again, &model);
    }
}

#[test]
fn edge_keys_and_an_empty_build() {
    let storage = storage();
    let mut alex = build(&storage, &[]);
    let mut model = BTreeMap::new();
    for k in [u64::MAX, 0, 1, u64::MAX - 1, 1 << 63] {
        assert!(!alex.insert(k, &payload(k, 7)).unwrap());
        model.insert(k, u64::from_le_bytes(payload(k, 7)));
    }
    check_all(&alex, &model);
    assert!(alex.delete(&u64::MAX).unwrap());
    model.remove(&u64::MAX);
    let mut out = [0u8; 8];
    assert!(!alex.get(&u64::MAX, &mut out).unwrap());
    check_all(&alex, &model);
}

#[test]
fn growth_splits_and_reports_invalid_space() {
    let storage = storage();
    let keys: Vec<u64> = (0..2000u64).map(|i| i * 10).collect();
    let mut alex = build(&storage, &keys);
    let mut model: BTreeMap<u64, u64> = keys
        .iter()
        .map(|&k| (k, u64::from_le_bytes(payload(k, 0))))
        .collect();
    let before = alex.storage_bytes();
    assert_eq!(before.used, before.allocated);
    for i in 0..6000u64 {
        let k = (i * 7919) % 25_000;
        alex.insert(k, &payload(k, 3)).unwrap();
        model.insert(k, u64::from_le_bytes(payload(k, 3)));
    }
    let smos = alex.smos();
    assert!(
        smos.expansions > 0 && smos.splits_sideways + smos.splits_down > 0,
        "{smos:?}"
    );
    let after = alex.storage_bytes();
    assert!(after.allocated > before.allocated);
    assert_eq!(after.allocated - after.used, alex.invalid_bytes());
    assert!(alex.invalid_bytes() > 0);
    let w = alex.write_breakdown();
    assert!(w.search_ns > 0 && w.insert_ns > 0 && w.smo_ns > 0 && w.maintenance_ns > 0);
    check_all(&alex, &model);
    for k in (0..25_000u64).filter(|k| k % 3 != 0) {
        if alex.delete(&k).unwrap() {
            model.remove(&k);
        }
    }
    assert!(alex.smos().contractions > 0);
    check_all(&alex, &model);
}

#[test]
fn reads_write_nothing_and_count_inner_and_leaf_blocks() {
    let storage = storage();
    let keys: Vec<u64> = (0..5000u64).map(|i| i * i).collect();
    let alex = build(&storage, &keys);
    assert!(alex.node_counts().1 > 0, "the tree has inner nodes");
    drop(alex);
    for in_memory in [false, true] {
        let alex = DiskAlex::open(&storage, "a", false, in_memory).unwrap();
        let before = storage.stats();
        let mut out = [0u8; 8];
        for k in keys.iter().step_by(97) {
            assert!(alex.get(k, &mut out).unwrap());
        }
        let (mut ks, mut ps) = (Vec::new(), Vec::new());
        alex.scan(&keys[10], 100, &mut ks, &mut ps).unwrap();
        let used = storage.stats() - before;
        assert_eq!(used.write_blocks, 0);
        let inner = used.blocks_read(IoClass::Inner);
        let leaf = used.blocks_read(IoClass::Leaf);
        assert!(leaf > 0);
        assert_eq!(
            inner == 0,
            in_memory,
            "inner reads {inner}, in memory {in_memory}"
        );
    }
}

#[test]
fn damaged_and_truncated_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let kind = DeviceKind::Sim(SimProfile::named("ram").unwrap());
    let storage = Storage::new(dir.path(), kind.clone(), BS).unwrap();
    let keys: Vec<u64> = (0..3000u64).map(|i| i * 3).collect();
    drop(build(&storage, &keys));
    let reopen = || {
        let storage = Storage::new(dir.path(), kind.clone(), BS).unwrap();
        DiskAlex::open(&storage, "a", false, false).and_then(|a| {
            let mut out = [0u8; 8];
            for k in &keys {
                a.get(k, &mut out)?;
            }
            a.scan(&0, usize::MAX, &mut Vec::new(), &mut Vec::new())?;
            Ok(())
        })
    };
    reopen().unwrap();
    for (file, block) in [
        ("a.inner", 0u64),
        ("a.inner", 1),
        ("a.data", 0),
        ("a.data", 3),
    ] {
        let path = dir.path().join(file);
        let clean = std::fs::read(&path).unwrap();
        let mut bytes = clean.clone();
        bytes[block as usize * BS + 20] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        match reopen() {
            Err(Error::ChecksumMismatch {
                file: f, block: b, ..
            }) => {
                assert!(f.ends_with(file), "{f}");
                assert_eq!(b, block);
            }
            other => panic!("{file} block {block}: {other:?}"),
        }
        std::fs::write(&path, &clean).unwrap();
    }
    let path = dir.path().join("a.data");
    let clean = std::fs::read(&path).unwrap();
    std::fs::write(&path, &clean[..clean.len() - 2 * BS]).unwrap();
    assert!(
        matches!(reopen(), Err(Error::Truncated { .. })),
        "{:?}",
        reopen()
    );
    std::fs::write(&path, &clean).unwrap();
    reopen().unwrap();

    // A header field made inconsistent, checksum valid: the node codec must catch it.
    let storage = Storage::new(dir.path(), kind.clone(), BS).unwrap();
    let dev = storage.open("a.data", true).unwrap();
    let mut block = vec![0u8; BS];
    dev.read_blocks(1, &mut block, IoClass::Leaf).unwrap();
    block[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    dev.write_blocks(1, &mut block, IoClass::Leaf).unwrap();
    dev.sync().unwrap();
    drop(dev);
    match reopen() {
        Err(Error::Corrupt { file, block, .. }) => {
            assert!(file.ends_with("a.data"));
            assert_eq!(block, Some(1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn write_breakdown_counts_the_modeled_device_time() {
    let storage = Storage::in_memory(SimProfile::named("hdd").unwrap(), BS).unwrap();
    let mut alex = build(&storage, &(0..500u64).map(|i| i * 4).collect::<Vec<_>>());
    let before = crate::io::sim::thread_modeled_ns();
    for k in 0..300u64 {
        alex.insert(k * 4 + 1, &payload(k, 1)).unwrap();
    }
    let modeled = crate::io::sim::thread_modeled_ns() - before;
    assert!(modeled > 0);
    assert!(alex.write_breakdown().total_ns() >= modeled);
}

/// Inner nodes on the way to `key`'s data node.
fn depth(alex: &DiskAlex, key: u64) -> usize {
    let mut path = Vec::new();
    alex.descend(&mut alex.inner_pages(), key, Some(&mut path))
        .unwrap();
    path.len()
}

/// Keys appended in increasing order (TPC-C's HISTORY, paper 002 §10.6) must not deepen the
/// right edge by a level per split. Before the root widening, the append-aware expansion
/// and the halving sideways split, every split of the right edge went down: 30,000 appends
/// into small nodes made the descent 256 inner nodes deep and the insert failed as a
/// "cycle"; after 3,000 the edge was already 31 deep.
#[test]
fn appends_past_the_domain_keep_the_tree_shallow() {
    let s = storage();
    let mut a = build(&s, &(0..10).collect::<Vec<_>>());
    let mut model: BTreeMap<u64, u64> = (0..10).map(|k| (k, k)).collect();
    for k in 10..30_000u64 {
        a.insert(k, &payload(k, 0)).unwrap();
        model.insert(k, k);
        if k == 3_000 {
            assert!(
                depth(&a, k) <= 4,
                "depth {} after 3,000 appends",
                depth(&a, k)
            );
        }
    }
    assert!(a.smos().widenings > 0);
    assert!(depth(&a, 29_999) <= 8, "depth {}", depth(&a, 29_999));
    check_all(&a, &model);
    a.flush().unwrap();
    drop(a);
    let a = DiskAlex::open(&s, "a", false, false).unwrap();
    check_all(&a, &model);
}

/// The deepest descent to any of `keys`.
fn deepest(alex: &DiskAlex, keys: impl Iterator<Item = u64>) -> usize {
    keys.map(|k| depth(alex, k)).max().unwrap_or(0)
}

/// `n` keys inserted after a small sorted start, each below (or past) every key so far, then
/// every key looked up, before and after a reopen (inner nodes on disk, then in memory); no
/// descent deeper than `bound` inner nodes.
fn one_way_inserts(descending: bool, n: u64, bound: usize) {
    let s = storage();
    let start: Vec<u64> = (0..10).map(|k| (1 << 40) + k).collect();
    let mut a = build(&s, &start);
    let mut model: BTreeMap<u64, u64> = start.iter().map(|&k| (k, k)).collect();
    for i in 1..=n {
        let k = if descending {
            (1 << 40) - i
        } else {
            (1 << 40) + 9 + i
        };
        a.insert(k, &payload(k, 3)).unwrap();
        model.insert(k, k ^ 3);
    }
    assert!(a.smos().widenings > 0);
    let deep = deepest(&a, model.keys().copied().step_by(97));
    assert!(deep <= bound, "a descent {deep} inner nodes deep");
    check_all(&a, &model);
    a.flush().unwrap();
    drop(a);
    for in_memory in [false, true] {
        let a = DiskAlex::open(&s, "a", false, in_memory).unwrap();
        check_all(&a, &model);
    }
}

/// Keys inserted in decreasing order went to the left edge's data node, which split down
/// as it filled (no widening looked left): 22,486 such keys into 4 KiB nodes made the
/// descent 256 inner nodes deep, after which every insert and lookup failed with
/// `Error::Corrupt` ("a cycle") on a sound index. A full left-edge node holding keys below
/// an inner node's domain now puts a node of twice its slots over it.
#[test]
fn decreasing_inserts_below_the_domain_keep_the_tree_shallow() {
    one_way_inserts(true, 300_000, 16);
}

/// The mirror of the test above: 1,000,000 appends past every key. Before a node under the
/// root could be raised, a node at the largest fanout split its right edge down once keys
/// passed its span (about 43,000 of them in 4 KiB nodes): 1,000,000 appends made descents 25
/// inner nodes deep, 3,000,000 made them 73.
#[test]
fn increasing_inserts_past_the_domain_keep_the_tree_shallow() {
    one_way_inserts(false, 1_000_000, 6);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Keys below every other (in decreasing steps) mixed with inserts, deletes and updates
    /// above them, reopened now and then with the inner nodes on disk or in memory: the
    /// left widenings keep every answer `BTreeMap`'s.
    #[test]
    fn prepends_mixed_with_other_writes_match_btreemap(
        ops in proptest::collection::vec((0u8..10, 0u64..4_000, 1u64..40), 1..1_500),
    ) {
        let base = 100_000;
        let s = storage();
        let mut a = build(&s, &(0..50).map(|k| base + k * 10).collect::<Vec<_>>());
        let mut model: BTreeMap<u64, u64> =
            (0..50).map(|k| (base + k * 10, base + k * 10)).collect();
        let mut next = base;
        for (i, &(kind, key, step)) in ops.iter().enumerate() {
            let key = base - 30_000 + key * 10;
            match kind {
                0..=5 => {
                    next -= step;
                    a.insert(next, &payload(next, 0)).unwrap();
                    model.insert(next, next);
                }
                6 | 7 => {
                    a.insert(key, &payload(key, 1)).unwrap();
                    model.insert(key, key ^ 1);
                }
                8 => {
                    prop_assert_eq!(a.delete(&key).unwrap(), model.remove(&key).is_some());
                }
                _ if i % 97 == 0 => {
                    a.flush().unwrap();
                    drop(a);
                    a = DiskAlex::open(&s, "a", true, key % 2 == 0).unwrap();
                }
                _ => {}
            }
        }
        check_all(&a, &model);
    }

    /// Appends (keys past every other, in increasing steps) mixed with inserts, deletes and
    /// updates below them, reopened now and then with the inner nodes on disk or in memory:
    /// the widenings and halving splits keep every answer `BTreeMap`'s.
    #[test]
    fn appends_mixed_with_other_writes_match_btreemap(
        ops in proptest::collection::vec((0u8..10, 0u64..4_000, 1u64..40), 1..1_500),
    ) {
        let s = storage();
        let mut a = build(&s, &(0..50).map(|k| k * 10).collect::<Vec<_>>());
        let mut model: BTreeMap<u64, u64> = (0..50).map(|k| (k * 10, k * 10)).collect();
        let mut next = 500;
        for (i, &(kind, key, step)) in ops.iter().enumerate() {
            match kind {
                0..=5 => {
                    next += step;
                    a.insert(next, &payload(next, 0)).unwrap();
                    model.insert(next, next);
                }
                6 | 7 => {
                    a.insert(key, &payload(key, 1)).unwrap();
                    model.insert(key, key ^ 1);
                }
                8 => {
                    prop_assert_eq!(a.delete(&key).unwrap(), model.remove(&key).is_some());
                }
                _ if i % 97 == 0 => {
                    a.flush().unwrap();
                    drop(a);
                    a = DiskAlex::open(&s, "a", true, key % 2 == 0).unwrap();
                }
                _ => {}
            }
        }
        check_all(&a, &model);
    }
}
