//! The disk B+-tree's deletes that merge, its free list and its storage size (issue 16): op
//! sequences against `BTreeMap` with the tree's invariants checked after every step, the
//! blocks a delete reads and writes, blocks reused after deletes, and crashes in the middle of
//! merges and splits. (A damaged free list: `disk_btree_corrupt.rs`.)

mod disk_btree_common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{FaultPlan, IoClass, Storage, WriteFault};
use lidx::Error;
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use disk_btree_common::{small_storage, MODES};

fn params(fill_factor: f64, resident: Resident) -> DiskBTreeParams {
    DiskBTreeParams {
        payload_size: 8,
        fill_factor,
        resident,
    }
}

fn payload(key: u64, version: u64) -> [u8; 8] {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ version).to_le_bytes()
}

/// [`payload`] repeated to `size` bytes.
fn wide(key: u64, version: u64, size: usize) -> Vec<u8> {
    payload(key, version)
        .iter()
        .cycle()
        .take(size)
        .copied()
        .collect()
}

/// A tree of `keys` in `storage`, payloads [`wide`] version 0.
fn build(storage: &Storage, name: &str, keys: &[u64], params: DiskBTreeParams) -> DiskBTree<u64> {
    let size = params.payload_size;
    DiskBTree::build(
        storage,
        name,
        keys,
        |_, k, out| out.copy_from_slice(&wide(*k, 0, size)),
        params,
    )
    .unwrap()
}

/// The tree's invariants (every node but the root at least the minimum fill, separators and
/// key ranges, the sibling chain, counts, the free list disjoint from the tree, resident nodes
/// equal to their blocks) and its storage figures.
fn check_invariants(tree: &DiskBTree<u64>, model: &BTreeMap<u64, Vec<u8>>, step: usize) {
    let check = tree.check().unwrap_or_else(|e| panic!("step {step}: {e}"));
    assert_eq!(
        check.under_min, 0,
        "step {step}: nodes under the minimum fill"
    );
    assert_eq!(check.entries, model.len() as u64, "step {step}");
    assert_eq!(tree.len(), model.len() as u64, "step {step}");
    let storage = tree.storage_bytes();
    let block = 512;
    assert_eq!(
        storage.used,
        (1 + check.leaves + check.inners) * block,
        "step {step}"
    );
    assert_eq!(storage.free, check.free * block, "step {step}");
    assert!(
        storage.allocated >= storage.used + storage.free,
        "step {step}"
    );
    assert_eq!(
        tree.resident_levels(),
        tree.params().resident.levels(tree.height())
    );
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64),
    Delete(u64),
    DeleteRange(u64, u64),
    Get(u64),
    LowerBound(u64),
    Scan(u64, usize),
    Flush,
    Reopen(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..1500, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        5 => (0u64..1500).prop_map(Op::Delete),
        1 => (0u64..1500, 1u64..200).prop_map(|(k, n)| Op::DeleteRange(k, n)),
        2 => (0u64..1500).prop_map(Op::Get),
        1 => (0u64..1500).prop_map(Op::LowerBound),
        1 => (0u64..1500, 0usize..80).prop_map(|(k, n)| Op::Scan(k, n)),
        1 => Just(Op::Flush),
        1 => (0usize..4).prop_map(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random op sequences on a small-block tree agree with `BTreeMap`, and after every step
    /// the tree keeps its invariants: deletes merge and borrow so no node but the root is under
    /// the minimum fill, and merged-away blocks are free, never reachable.
    #[test]
    fn op_sequences_keep_the_invariants(
        initial in proptest::collection::btree_set(0u64..1500, 0..600),
        ops in proptest::collection::vec(op(), 1..160),
        fill in prop_oneof![Just(1.0f64), Just(0.5)],
        size in prop_oneof![Just(8usize), Just(40)],
        mode in 0usize..4,
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.iter().copied().collect();
        let mut model: BTreeMap<u64, Vec<u8>> =
            keys.iter().map(|&k| (k, wide(k, 0, size))).collect();
        let mut tree = build(&storage, "t", &keys, DiskBTreeParams {
            payload_size: size,
            ..params(fill, MODES[mode])
        });
        check_invariants(&tree, &model, 0);
        let mut buf = vec![0u8; size];
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(k, v) => {
                    let replaced = tree.insert(k, &wide(k, v, size)).unwrap();
                    prop_assert_eq!(replaced, model.insert(k, wide(k, v, size)).is_some());
                }
                Op::Delete(k) => {
                    prop_assert_eq!(tree.delete(&k).unwrap(), model.remove(&k).is_some());
                }
                Op::DeleteRange(k, n) => {
                    for key in k..k + n {
                        prop_assert_eq!(tree.delete(&key).unwrap(), model.remove(&key).is_some());
                    }
                }
                Op::Get(k) => {
                    let found = tree.get(&k, &mut buf).unwrap();
                    prop_assert_eq!(found.then_some(&buf), model.get(&k));
                }
                Op::LowerBound(k) => {
                    let found = tree.lower_bound(&k, &mut buf).unwrap();
                    let want = model.range(k..).next().map(|(k, p)| (*k, p));
                    prop_assert_eq!(found.map(|f| (f, &buf)), want);
                }
                Op::Scan(k, n) => {
                    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
                    tree.scan(&k, n, &mut keys, &mut payloads).unwrap();
                    let want: Vec<(&u64, &Vec<u8>)> = model.range(k..).take(n).collect();
                    prop_assert_eq!(keys, want.iter().map(|w| *w.0).collect::<Vec<_>>());
                    prop_assert_eq!(payloads, want.iter().flat_map(|w| w.1.clone()).collect::<Vec<_>>());
                }
                Op::Flush => tree.flush().unwrap(),
                Op::Reopen(m) => {
                    drop(tree);
                    tree = DiskBTree::open(&storage, "t", MODES[m], true).unwrap();
                }
            }
            check_invariants(&tree, &model, step + 1);
        }
    }
}

/// Deleting every key merges the tree down to one leaf and frees every other block; inserting
/// the same keys again takes the free blocks and the file does not grow, cycle after cycle.
#[test]
fn delete_all_then_reinsert_reuses_the_blocks() {
    for mode in MODES {
        let storage = small_storage();
        let mut tree =
            DiskBTree::<u64>::build(&storage, "r", &[], |_, _, _| {}, params(1.0, mode)).unwrap();
        let mut keys: Vec<u64> = (0..4000u64).map(|i| i * 7).collect();
        keys.shuffle(&mut ChaCha8Rng::seed_from_u64(5));
        for &k in &keys {
            tree.insert(k, &payload(k, 1)).unwrap();
        }
        tree.flush().unwrap();
        let full = tree.storage_bytes();
        let height = tree.height();
        assert!(height >= 3, "a tree of several levels: {height}");
        assert_eq!(full.free, 0);
        for cycle in 0..2 {
            for &k in &keys {
                assert!(tree.delete(&k).unwrap(), "{mode:?}: delete {k}");
            }
            let check = tree.check().unwrap();
            assert_eq!((tree.len(), tree.height(), check.leaves), (0, 1, 1));
            let empty = tree.storage_bytes();
            assert_eq!(empty.used, 2 * 512, "the header and one leaf");
            assert_eq!(empty.allocated, full.allocated);
            assert_eq!(
                empty.free,
                full.used - empty.used,
                "every other block is free"
            );
            tree.flush().unwrap();
            drop(tree);
            tree = DiskBTree::open(&storage, "r", mode, true).unwrap();
            assert_eq!(
                tree.storage_bytes(),
                empty,
                "the free list survives a reopen"
            );
            for &k in &keys {
                assert!(!tree.insert(k, &payload(k, cycle)).unwrap());
            }
            let again = tree.storage_bytes();
            assert_eq!(
                again.allocated, full.allocated,
                "{mode:?} cycle {cycle}: the file grew"
            );
            assert_eq!(again.used, full.used, "the same inserts, the same tree");
            assert_eq!(tree.height(), height);
            assert_eq!(tree.check().unwrap().under_min, 0);
            for &k in keys.iter().step_by(37) {
                let mut buf = [0u8; 8];
                assert!(tree.get(&k, &mut buf).unwrap());
                assert_eq!(buf, payload(k, cycle));
            }
        }
    }
}

/// The blocks a delete reads and writes (the merge module's docs): one leaf written when the
/// leaf keeps the minimum fill; a merge or a borrow reads the sibling and writes two or three
/// blocks per level it reaches.
#[test]
fn blocks_a_delete_reads_and_writes() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..3000u64).collect();
    let mut tree = build(&storage, "b", &keys, params(1.0, Resident::AllInner));
    // Leaves of 30: the first 23 deletes of a leaf keep it at 7 or more (the minimum, 30 / 4).
    for k in 0..23u64 {
        let before = storage.stats();
        tree.delete(&k).unwrap();
        let d = storage.stats() - before;
        assert_eq!((d.read_blocks, d.write_blocks), (1, 1), "delete {k}");
        assert_eq!(d.blocks_read(IoClass::Leaf), 1);
    }
    let leaves = tree.leaf_count();
    let before = storage.stats();
    tree.delete(&23).unwrap();
    let d = storage.stats() - before;
    // 6 left and 30 in the right sibling: a borrow (36 >= 2 * 7), both leaves and the parent.
    assert_eq!((d.read_blocks, d.write_blocks), (2, 3));
    assert_eq!(tree.leaf_count(), leaves);
    let mut merges = 0;
    for k in 24..1000u64 {
        let before = storage.stats();
        tree.delete(&k).unwrap();
        let d = storage.stats() - before;
        assert!(
            d.read_blocks <= 2,
            "no inner reads with every inner node resident"
        );
        merges += u64::from(d.write_blocks == 2);
    }
    assert!(merges > 0);
    assert!(tree.leaf_count() < leaves);
    assert_eq!(tree.check().unwrap().under_min, 0);
}

/// One run of a crash test: which keys the bulk load holds, which of them deletes then remove
/// before a flush (making free blocks), which keys the operations touch, and the operation (a
/// delete, or an insert of a key with payload version 1).
struct CrashRun {
    loaded: Vec<u64>,
    removed: Vec<u64>,
    touched: Vec<u64>,
    delete: bool,
}

impl CrashRun {
    fn build(&self, storage: &Storage, mode: Resident) -> DiskBTree<u64> {
        let mut tree = build(storage, "c", &self.loaded, params(1.0, mode));
        self.removed
            .iter()
            .for_each(|k| assert!(tree.delete(k).unwrap()));
        tree.flush().unwrap();
        tree
    }

    fn apply(&self, tree: &mut DiskBTree<u64>, key: u64) -> lidx::Result<bool> {
        if self.delete {
            tree.delete(&key)
        } else {
            tree.insert(key, &payload(key, 1)).map(|replaced| !replaced)
        }
    }

    /// Runs the operations on a sound device, then 120 times with the device dead from a
    /// write request on (each of the first 60, then random ones), each time reopening the file on a sound device and checking
    /// every key (see the tests). Returns how many reopens or reads a typed error stopped.
    fn run(&self, seed: u64) -> usize {
        let storage = small_storage();
        let mut tree = self.build(&storage, Resident::None);
        let before = storage.stats();
        for &k in &self.touched {
            assert!(self.apply(&mut tree, k).unwrap());
        }
        let writes = (storage.stats() - before).write_requests;
        let mut loaded: BTreeSet<u64> = self.loaded.iter().copied().collect();
        self.removed.iter().for_each(|k| assert!(loaded.remove(k)));
        let touched: BTreeSet<u64> = self.touched.iter().copied().collect();
        let typed = |e: &Error| {
            matches!(
                e,
                Error::Corrupt { block: Some(_), .. } | Error::ChecksumMismatch { .. }
            )
        };
        let mut stopped = 0;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Every one of the first writes (the first structural changes, before a reused block
        // makes the file refused at open), then random ones.
        for i in 0..120 {
            let after = if i < 60 {
                i as u64
            } else {
                rng.gen_range(0..writes)
            };
            let plan = FaultPlan::new();
            let storage = small_storage().with_faults(Arc::clone(&plan));
            let mut tree = self.build(&storage, MODES[i % 4]);
            plan.sticky(true);
            plan.fail_write_after(after, WriteFault::Error);
            let struck = self
                .touched
                .iter()
                .any(|&k| self.apply(&mut tree, k).is_err());
            assert!(struck, "write {after} of {writes} failed");
            drop(tree);
            plan.disarm();
            let tree = match DiskBTree::<u64>::open(&storage, "c", MODES[(i + 1) % 4], false) {
                Ok(tree) => tree,
                Err(e) => {
                    assert!(typed(&e), "write {after}: {e:?}");
                    stopped += 1;
                    continue;
                }
            };
            let mut buf = [0u8; 8];
            for probe in 0..4800u64 {
                let (was, may_change) = (loaded.contains(&probe), touched.contains(&probe));
                match tree.get(&probe, &mut buf) {
                    Ok(true) => {
                        assert!(
                            was || may_change,
                            "write {after}: {probe} was never inserted"
                        );
                        let version = u64::from(!was);
                        assert_eq!(buf, payload(probe, version), "write {after}: {probe}");
                    }
                    Ok(false) => assert!(
                        !was || may_change,
                        "write {after}: {probe} is missing and was never deleted"
                    ),
                    Err(e) => {
                        assert!(typed(&e), "write {after}: {e:?}");
                        stopped += 1;
                    }
                }
            }
        }
        stopped
    }
}

/// What `update`'s docs claim for a crash in the middle of deletes that merge: the device dies
/// at the k-th write request of a run of deletes (borrows, leaf and inner merges, root
/// collapses) and the tree is dropped without a flush reaching the disk. Reopened on a sound
/// device, the file either is refused with a typed error naming a block, or opens and every
/// read answers as the last flush or the deletes did, or fails with such an error: a key that
/// was never deleted is never reported missing, a key never inserted is never found.
#[test]
fn a_crash_during_merges_loses_no_entry_silently() {
    let loaded: Vec<u64> = (0..2400u64).map(|i| i * 2).collect();
    let mut touched: Vec<u64> = loaded.iter().copied().filter(|k| k % 12 != 0).collect();
    touched.shuffle(&mut ChaCha8Rng::seed_from_u64(9));
    let run = CrashRun {
        loaded,
        removed: Vec::new(),
        touched,
        delete: true,
    };
    let storage = small_storage();
    let mut tree = run.build(&storage, Resident::None);
    run.touched
        .iter()
        .for_each(|k| assert!(tree.delete(k).unwrap()));
    assert!(
        tree.leaf_count() < 60,
        "merges: {} leaves",
        tree.leaf_count()
    );
    assert!(
        run.run(10) > 0,
        "some crashes left damage the checks caught"
    );
}

/// The same for inserts that split leaves and inner nodes and grow the root, into a tree whose
/// deletes left free blocks (so splits reuse blocks inside the file, where a link to them is
/// no sign of damage): no key of the bulk load is ever reported missing.
#[test]
fn a_crash_during_splits_loses_no_entry_silently() {
    let loaded: Vec<u64> = (0..600u64).map(|i| i * 8).collect();
    let removed: Vec<u64> = loaded.iter().copied().filter(|k| k % 64 != 0).collect();
    // Ascending: the first split comes within the first writes.
    let touched: Vec<u64> = (0..4800u64).filter(|k| k % 64 != 0 && k % 3 == 0).collect();
    let run = CrashRun {
        loaded,
        removed,
        touched,
        delete: false,
    };
    let storage = small_storage();
    let mut tree = run.build(&storage, Resident::None);
    let (height, free) = (tree.height(), tree.storage_bytes().free);
    assert!(free > 0);
    run.touched
        .iter()
        .for_each(|&k| assert!(!tree.insert(k, &payload(k, 1)).unwrap()));
    assert!(tree.height() > height, "the root split");
    assert_eq!(tree.storage_bytes().free, 0, "splits took the free blocks");
    assert!(
        run.run(12) > 0,
        "some crashes left damage the checks caught"
    );
}
