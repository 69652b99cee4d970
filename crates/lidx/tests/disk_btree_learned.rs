//! The learned-inner B+-tree (`lidx::disk::BTreeLearned`) against `BTreeMap`: proptest
//! operation sequences with flushes, reopens and retrains; one leaf block per lookup; a crash
//! at every write of a run of splitting inserts; and damaged files (a flipped byte, leaf or
//! meta content rewritten under a valid checksum, truncation) giving typed errors that name the
//! file and the block.

mod disk_btree_common;

use std::collections::BTreeMap;
use std::sync::Arc;

use lidx::disk::{BTreeLearned, BTreeLearnedParams};
use lidx::disk::{DiskIndex, DiskMap};
use lidx::io::{DeviceKind, FaultPlan, IoClass, SimProfile, Storage, WriteFault};
use lidx::Error;
use proptest::prelude::*;

fn small_storage() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
}

fn payload(key: u64, version: u64) -> [u8; 8] {
    (key ^ (version << 56)).to_le_bytes()
}

/// Parameters for 512-byte blocks (30 entries a leaf) or 4 KiB ones (254).
fn params(fill_factor: f64, retrain_ratio: f64) -> BTreeLearnedParams {
    BTreeLearnedParams {
        payload_size: 8,
        fill_factor,
        eps: 4,
        retrain_ratio,
    }
}

fn build(storage: &Storage, keys: &[u64], p: BTreeLearnedParams) -> BTreeLearned<u64> {
    BTreeLearned::build(
        storage,
        "t",
        keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        p,
    )
    .unwrap()
}

fn check(index: &BTreeLearned<u64>, model: &BTreeMap<u64, [u8; 8]>, probes: &[u64]) {
    assert_eq!(index.len(), model.len() as u64);
    let mut buf = [0u8; 8];
    for &p in probes {
        let found = index.get(&p, &mut buf).unwrap();
        assert_eq!(found, model.contains_key(&p), "key {p}");
        if found {
            assert_eq!(&buf, &model[&p], "payload of {p}");
        }
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let got = index.scan(&p, 7, &mut keys, &mut payloads).unwrap();
        let want: Vec<u64> = model.range(p..).take(7).map(|(k, _)| *k).collect();
        assert_eq!(keys, want, "scan from {p}");
        assert_eq!(got, want.len());
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(&payloads[i * 8..i * 8 + 8], &model[k]);
        }
    }
    let (mut all, mut payloads) = (Vec::new(), Vec::new());
    index.scan(&0, usize::MAX, &mut all, &mut payloads).unwrap();
    assert_eq!(all, model.keys().copied().collect::<Vec<_>>());
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Delete(u64),
    Flush,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u64..3000).prop_map(Op::Insert),
        3 => (0u64..3000).prop_map(Op::Delete),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random inserts (splits, retrains), deletes, flushes and reopens agree with a `BTreeMap`
    /// at every step, and after a final reopen.
    #[test]
    fn op_sequences_match_a_btreemap(
        initial in proptest::collection::btree_set(0u64..3000, 0..700),
        ops in proptest::collection::vec(op(), 1..300),
        fill in prop_oneof![Just(1.0), Just(0.6)],
        ratio in prop_oneof![Just(0.05), Just(1.0), Just(f64::INFINITY)],
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.iter().copied().collect();
        let mut model: BTreeMap<u64, [u8; 8]> = keys.iter().map(|&k| (k, payload(k, 0))).collect();
        let mut index = build(&storage, &keys, params(fill, ratio));
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(k) => {
                    let v = payload(k, step as u64 + 1);
                    let replaced = index.insert(k, &v).unwrap();
                    prop_assert_eq!(replaced, model.insert(k, v).is_some());
                }
                Op::Delete(k) => {
                    prop_assert_eq!(index.delete(&k).unwrap(), model.remove(&k).is_some());
                }
                Op::Flush => index.flush().unwrap(),
                Op::Reopen => {
                    drop(index);
                    index = BTreeLearned::open(&storage, "t", true).unwrap();
                }
            }
            if step % 50 == 0 {
                check(&index, &model, &[0, 1, 1500, 2999, 3000]);
            }
        }
        let probes: Vec<u64> = (0..3010).step_by(7).collect();
        check(&index, &model, &probes);
        index.flush().unwrap();
        drop(index);
        let index = BTreeLearned::<u64>::open(&storage, "t", false).unwrap();
        check(&index, &model, &probes);
    }
}

#[test]
fn empty_and_single_key_indexes() {
    let storage = small_storage();
    let mut index = build(&storage, &[], params(1.0, 1.0));
    assert!(!index.get(&5, &mut [0u8; 8]).unwrap());
    assert!(!index.insert(5, &payload(5, 1)).unwrap());
    drop(index);
    let index = BTreeLearned::<u64>::open(&storage, "t", false).unwrap();
    let mut model = BTreeMap::new();
    model.insert(5u64, payload(5, 1));
    check(&index, &model, &[0, 5, 6, u64::MAX]);
    let storage = small_storage();
    let index = build(&storage, &[u64::MAX], params(1.0, 1.0));
    let model: BTreeMap<u64, [u8; 8]> = [(u64::MAX, payload(u64::MAX, 0))].into();
    check(&index, &model, &[0, u64::MAX - 1, u64::MAX]);
}

/// Every lookup reads exactly one block, a leaf, and no inner block (paper 003 Table 4's
/// split), before and after splits; a scan of 100 entries reads the leaves it spans.
#[test]
fn a_lookup_reads_one_leaf() {
    let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 4096).unwrap();
    let keys: Vec<u64> = (0..200_000u64).map(|i| i * i / 7 + i * 13).collect();
    let mut index = build(&storage, &keys, BTreeLearnedParams::default());
    assert!(
        index.segment_count() < (index.leaf_count() as usize) / 4,
        "{} segments for {} leaves",
        index.segment_count(),
        index.leaf_count()
    );
    let mut buf = [0u8; 8];
    let lookups = |index: &BTreeLearned<u64>| {
        let before = storage.stats();
        for k in keys.iter().step_by(97) {
            assert!(index.get(k, &mut buf.clone()).unwrap());
        }
        let d = storage.stats() - before;
        (
            d.read_blocks,
            d.blocks_read(IoClass::Leaf),
            keys.len().div_ceil(97),
        )
    };
    let (all, leaf, n) = lookups(&index);
    assert_eq!((all, leaf), (n as u64, n as u64));
    for k in (0..3000u64).map(|i| i * 4001 + 1) {
        index.insert(k, &payload(k, 1)).unwrap();
    }
    assert!(index.split_count() > 0);
    let (all, leaf, n) = lookups(&index);
    assert_eq!((all, leaf), (n as u64, n as u64));
    assert!(index.get(&4002, &mut buf).unwrap());
}

/// A retrain empties the split list and keeps every answer.
#[test]
fn retrains_fold_the_split_list_into_the_model() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..2000u64).map(|i| i * 10).collect();
    let mut index = build(&storage, &keys, params(1.0, 0.1));
    let mut model: BTreeMap<u64, [u8; 8]> = keys.iter().map(|&k| (k, payload(k, 0))).collect();
    for k in (0..2000u64).map(|i| i * 10 + 3) {
        index.insert(k, &payload(k, 1)).unwrap();
        model.insert(k, payload(k, 1));
    }
    assert!(index.retrain_count() > 0);
    let probes: Vec<u64> = (0..20_010).step_by(3).collect();
    check(&index, &model, &probes);
    let b = index.write_breakdown();
    assert!(b.search_ns > 0 && b.insert_ns > 0 && b.smo_ns > 0 && b.maintenance_ns > 0);
}

/// What `update`'s docs claim for a crash: the device dies at the k-th write request of a run
/// of splitting inserts (and retrains) after a flush, the index is dropped, and the file is
/// reopened on a sound device: it opens (recovering from its leaves), no flushed key is
/// missing, no key never inserted is found, every payload is the flushed or the new one; or a
/// typed error names a block.
#[test]
fn a_crash_during_splits_loses_no_flushed_entry() {
    let loaded: Vec<u64> = (0..900u64).map(|i| i * 4).collect();
    let touched: Vec<u64> = (0..900u64).map(|i| i * 4 + 1).collect();
    let run = |storage: &Storage| {
        let mut index = build(storage, &loaded, params(1.0, 0.2));
        for k in loaded.iter().step_by(5) {
            index.insert(*k + 2, &payload(*k + 2, 0)).unwrap();
        }
        index.flush().unwrap();
        index
    };
    let writes = {
        let storage = small_storage();
        let mut index = run(&storage);
        let before = storage.stats();
        touched.iter().for_each(|&k| {
            index.insert(k, &payload(k, 1)).unwrap();
        });
        assert!(index.retrain_count() > 0);
        (storage.stats() - before).write_requests
    };
    let mut stopped = 0;
    for after in (0..writes).step_by((writes as usize / 150).max(1)) {
        let plan = FaultPlan::new();
        let storage = small_storage().with_faults(Arc::clone(&plan));
        let mut index = run(&storage);
        plan.sticky(true);
        plan.fail_write_after(after, WriteFault::Torn);
        let struck = touched
            .iter()
            .any(|&k| index.insert(k, &payload(k, 1)).is_err());
        assert!(struck, "write {after} of {writes}");
        drop(index);
        plan.disarm();
        let index = match BTreeLearned::<u64>::open(&storage, "t", true) {
            Ok(index) => index,
            Err(e) => {
                assert!(
                    matches!(
                        e,
                        Error::ChecksumMismatch { .. } | Error::Corrupt { block: Some(_), .. }
                    ),
                    "write {after}: {e:?}"
                );
                stopped += 1;
                continue;
            }
        };
        let mut buf = [0u8; 8];
        for probe in 0..3700u64 {
            let flushed = probe % 4 == 0 && probe < 3600
                || (probe % 4 == 2 && (probe - 2) % 20 == 0 && probe < 3600);
            let new = probe % 4 == 1 && probe < 3600;
            let found = index.get(&probe, &mut buf).unwrap();
            if flushed {
                assert!(found, "write {after}: flushed key {probe} missing");
                assert_eq!(buf, payload(probe, 0));
            } else if found {
                assert!(new, "write {after}: {probe} never inserted");
                assert_eq!(buf, payload(probe, 1));
            }
        }
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        index
            .scan(&0, usize::MAX, &mut keys, &mut payloads)
            .unwrap();
        assert_eq!(keys.len() as u64, index.len(), "write {after}");
    }
    assert!(stopped < 5, "{stopped} crashes refused at open");
}

const BS: usize = 4096;

struct Fixture {
    _dir: tempfile::TempDir,
    storage: Storage,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, BS).unwrap();
    let keys: Vec<u64> = (0..50_000u64).map(|i| i * 3).collect();
    let mut index = BTreeLearned::build(
        &storage,
        "bl",
        &keys,
        |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
        BTreeLearnedParams::default(),
    )
    .unwrap();
    for k in (0..2000u64).map(|i| i * 75 + 1) {
        index.insert(k, &k.to_le_bytes()).unwrap();
    }
    index.flush().unwrap();
    drop(index);
    Fixture { _dir: dir, storage }
}

impl Fixture {
    fn path(&self) -> std::path::PathBuf {
        self.storage.dir().unwrap().join("bl")
    }

    fn header_u64(&self, at: usize) -> u64 {
        let bytes = std::fs::read(self.path()).unwrap();
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    }

    /// Changes the usable bytes of `block` and writes it back with a valid checksum.
    fn rewrite(&self, block: u64, change: impl FnOnce(&mut [u8])) {
        disk_btree_common::rewrite_block(&self.storage, "bl", block, change);
    }

    fn open(&self) -> lidx::Result<BTreeLearned<u64>> {
        BTreeLearned::open(&self.storage, "bl", false)
    }
}

fn assert_block<T: std::fmt::Debug>(result: lidx::Result<T>, block: u64) {
    match result {
        Err(Error::Corrupt {
            block: Some(b),
            file,
            ..
        }) => {
            assert_eq!(b, block);
            assert!(file.contains("bl"), "{file}");
        }
        Err(Error::ChecksumMismatch { block: b, file, .. }) => {
            assert_eq!(b, block);
            assert!(file.contains("bl"), "{file}");
        }
        other => panic!("expected an error naming block {block}, got {other:?}"),
    }
}

#[test]
fn damaged_files_give_typed_errors() {
    // A flipped byte in a leaf: the device's checksum, naming the block, at the lookup.
    let f = fixture();
    let mut bytes = std::fs::read(f.path()).unwrap();
    bytes[5 * BS + 100] ^= 0x10;
    std::fs::write(f.path(), &bytes).unwrap();
    let index = f.open().unwrap();
    let key_in_leaf_5 = u64::from_le_bytes(bytes[5 * BS + 16..5 * BS + 24].try_into().unwrap());
    assert_block(index.get(&key_in_leaf_5, &mut [0u8; 8]), 5);
    // A leaf whose keys belong elsewhere, under a valid checksum: Corrupt naming the block.
    let f = fixture();
    f.rewrite(7, |b| b[16..24].copy_from_slice(&1u64.to_le_bytes()));
    let index = f.open().unwrap();
    let key = u64::from_le_bytes(
        std::fs::read(f.path()).unwrap()[7 * BS + 24..7 * BS + 32]
            .try_into()
            .unwrap(),
    );
    assert_block(index.get(&key, &mut [0u8; 8]), 7);
    // The meta chain: a flipped byte (checksum) and bad content (a segment out of order).
    let f = fixture();
    let meta = f.header_u64(96);
    let mut bytes = std::fs::read(f.path()).unwrap();
    bytes[meta as usize * BS + 40] ^= 0x10;
    std::fs::write(f.path(), &bytes).unwrap();
    assert_block(f.open().map(|_| ()), meta);
    let f = fixture();
    let meta = f.header_u64(96);
    f.rewrite(meta, |b| b[16] = 7);
    assert_block(f.open().map(|_| ()), meta);
    // The header: magic, version, a field, a flipped byte.
    let f = fixture();
    f.rewrite(0, |b| b[0] ^= 1);
    assert!(matches!(f.open(), Err(Error::BadMagic { .. })));
    f.rewrite(0, |b| {
        b[0] ^= 1;
        b[8] = 7;
    });
    assert!(matches!(
        f.open(),
        Err(Error::UnsupportedVersion { got: 7, .. })
    ));
    // Version 1 cut its leaves by the model, without the corrections version 2 reads; version
    // 2 recorded no fingerprint of the keys built from.
    for old in [1u8, 2] {
        f.rewrite(0, |b| b[8] = old);
        assert!(matches!(
            f.open(),
            Err(Error::UnsupportedVersion { got, supported, .. })
                if got == u32::from(old)
                    && supported == lidx::raw::disk::btree_learned::header::VERSION
        ));
    }
    f.rewrite(0, |b| {
        b[8] = lidx::raw::disk::btree_learned::header::VERSION as u8;
        b[56..64].copy_from_slice(&u64::MAX.to_le_bytes());
    });
    assert_block(f.open().map(|_| ()), 0);
    let f = fixture();
    let mut bytes = std::fs::read(f.path()).unwrap();
    bytes[50] ^= 0x10;
    std::fs::write(f.path(), &bytes).unwrap();
    assert_block(f.open().map(|_| ()), 0);
    // Truncation.
    let f = fixture();
    let bytes = std::fs::read(f.path()).unwrap();
    std::fs::write(f.path(), &bytes[..bytes.len() - 3 * BS]).unwrap();
    assert!(matches!(f.open(), Err(Error::Truncated { .. })));
    // The wrong key type.
    let f = fixture();
    assert!(matches!(
        BTreeLearned::<i64>::open(&f.storage, "bl", false),
        Err(Error::KeyTypeMismatch { .. })
    ));
}

#[test]
fn bad_input_is_a_typed_error() {
    let storage = small_storage();
    let build =
        |keys: &[u64], p| BTreeLearned::build(&storage, "b", keys, |_, _, _| {}, p).map(|_| ());
    assert!(matches!(
        build(&[3, 2], params(1.0, 1.0)),
        Err(Error::OutOfOrder { .. })
    ));
    assert!(matches!(
        build(&[2, 2], params(1.0, 1.0)),
        Err(Error::DuplicateKey { .. })
    ));
    assert!(matches!(
        build(&[1], params(0.0, 1.0)),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        build(&[1], params(1.0, 0.0)),
        Err(Error::InvalidParameter { .. })
    ));
    let mut index = build_ok(&storage);
    assert!(matches!(
        index.insert(1, &[0u8; 3]),
        Err(Error::InvalidParameter { .. })
    ));
    drop(index);
    let mut ro = BTreeLearned::<u64>::open(&storage, "t", false).unwrap();
    assert!(matches!(
        ro.insert(1, &[0u8; 8]),
        Err(Error::ReadOnly { .. })
    ));
    assert!(matches!(ro.delete(&1), Err(Error::ReadOnly { .. })));
}

fn build_ok(storage: &Storage) -> BTreeLearned<u64> {
    build(storage, &[1, 2, 3], params(1.0, 1.0))
}
