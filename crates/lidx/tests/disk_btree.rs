//! The disk B+-tree against `BTreeMap`: bulk load, reopen, every resident mode, updates with
//! splits and deletes, exact block counts per lookup, and bad input.

mod disk_btree_common;

use std::collections::BTreeMap;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{IoClass, SimProfile, Storage};
use lidx::{Error, Key, Str16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use disk_btree_common::{small_storage, MODES};

/// A payload derived from the key and a version, `ps` bytes.
fn payload(seed: u64, ps: usize) -> Vec<u8> {
    (0..ps)
        .map(|i| (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> ((i % 8) * 8)) as u8 ^ i as u8)
        .collect()
}

fn params(payload_size: usize, fill_factor: f64, resident: Resident) -> DiskBTreeParams {
    DiskBTreeParams {
        payload_size,
        fill_factor,
        resident,
    }
}

/// Checks every kind of answer of `tree` against `model` on `probes`.
fn check_against<K: Key + Ord>(tree: &DiskBTree<K>, model: &BTreeMap<K, Vec<u8>>, probes: &[K]) {
    let ps = tree.payload_size();
    assert_eq!(tree.len(), model.len() as u64);
    let mut buf = vec![0u8; ps];
    for probe in probes {
        let found = tree.get(probe, &mut buf).unwrap();
        assert_eq!(found, model.contains_key(probe), "get {probe:?}");
        if found {
            assert_eq!(&buf, &model[probe], "payload of {probe:?}");
        }
        let lb = tree.lower_bound(probe, &mut buf).unwrap();
        let expected = model.range(*probe..).next();
        assert_eq!(lb, expected.map(|(k, _)| *k), "lower_bound {probe:?}");
        if let Some((_, p)) = expected {
            assert_eq!(&buf, p);
        }
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let n = tree.scan(probe, 37, &mut keys, &mut payloads).unwrap();
        let want: Vec<(&K, &Vec<u8>)> = model.range(*probe..).take(37).collect();
        assert_eq!(n, want.len());
        assert_eq!(keys, want.iter().map(|(k, _)| **k).collect::<Vec<_>>());
        assert_eq!(
            payloads,
            want.iter()
                .flat_map(|(_, p)| p.iter().copied())
                .collect::<Vec<_>>()
        );
    }
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    let n = tree
        .scan(&K::MIN, usize::MAX, &mut keys, &mut payloads)
        .unwrap();
    assert_eq!(n, model.len());
    assert!(keys.iter().eq(model.keys()));
}

fn sorted_u64(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    keys.extend([0, u64::MAX]);
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn sorted_str16(n: usize, seed: u64) -> Vec<Str16> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<Str16> = (0..n)
        .map(|i| {
            let mut k = [0u8; 16];
            // Shared 8-byte prefixes in groups, so the tail bytes decide the order.
            k[..8].copy_from_slice(&((i / 5) as u64 * 977).to_be_bytes());
            rng.fill(&mut k[8..]);
            k
        })
        .collect();
    keys.extend([[0u8; 16], [0xff; 16]]);
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn bulk_load_and_reopen<K: Key + Ord>(keys: &[K], probes: &[K]) {
    for block_size in [512, 4096] {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), block_size).unwrap();
        let model: BTreeMap<K, Vec<u8>> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, payload(i as u64, 8)))
            .collect();
        let tree = DiskBTree::build(
            &storage,
            "t",
            keys,
            |i, _, out| out.copy_from_slice(&payload(i as u64, 8)),
            DiskBTreeParams::default(),
        )
        .unwrap();
        check_against(&tree, &model, probes);
        assert_eq!(tree.disk_bytes(), storage.file_bytes("t"));
        assert_eq!(
            tree.disk_bytes(),
            (1 + tree.leaf_count() + tree.inner_count()) * block_size as u64
        );
        let height = tree.height();
        drop(tree);
        for mode in MODES {
            let reopened = DiskBTree::<K>::open(&storage, "t", mode, false).unwrap();
            assert_eq!(reopened.height(), height);
            assert_eq!(reopened.resident_levels(), mode.levels(height));
            check_against(&reopened, &model, probes);
        }
    }
}

#[test]
fn bulk_load_and_reopen_u64() {
    let keys = sorted_u64(20_000, 1);
    let mut probes: Vec<u64> = keys.iter().step_by(97).copied().collect();
    probes.extend(keys.iter().step_by(89).map(|k| k.wrapping_add(1)));
    probes.extend([0, 1, u64::MAX, u64::MAX - 1]);
    bulk_load_and_reopen(&keys, &probes);
}

#[test]
fn bulk_load_and_reopen_str16() {
    let keys = sorted_str16(8_000, 2);
    let mut probes: Vec<Str16> = keys.iter().step_by(53).copied().collect();
    probes.extend(keys.iter().step_by(61).map(|k| {
        let mut p = *k;
        p[15] = p[15].wrapping_add(1);
        p
    }));
    probes.extend([[0u8; 16], [0xff; 16], [0x80; 16]]);
    bulk_load_and_reopen(&keys, &probes);
}

#[test]
fn empty_and_single_key_trees() {
    let storage = small_storage();
    let mut tree =
        DiskBTree::<u64>::build(&storage, "e", &[], |_, _, _| {}, DiskBTreeParams::default())
            .unwrap();
    let mut buf = [0u8; 8];
    assert_eq!((tree.len(), tree.height(), tree.leaf_count()), (0, 1, 1));
    assert!(!tree.get(&0, &mut buf).unwrap());
    assert_eq!(tree.lower_bound(&0, &mut buf).unwrap(), None);
    assert_eq!(
        tree.scan(&0, 10, &mut Vec::new(), &mut Vec::new()).unwrap(),
        0
    );
    assert!(!tree.delete(&5).unwrap());
    let mut model = BTreeMap::new();
    for k in (0..1500u64).rev() {
        tree.insert(k * 3, &payload(k, 8)).unwrap();
        model.insert(k * 3, payload(k, 8));
    }
    assert!(tree.height() >= 3, "ascending inserts grew the tree");
    check_against(&tree, &model, &(0..4510).step_by(7).collect::<Vec<_>>());

    let one = DiskBTree::<u64>::build(
        &storage,
        "one",
        &[u64::MAX],
        |_, _, out| out.fill(7),
        DiskBTreeParams::default(),
    )
    .unwrap();
    assert!(one.get(&u64::MAX, &mut buf).unwrap());
    assert_eq!(buf, [7; 8]);
    assert_eq!(one.lower_bound(&0, &mut buf).unwrap(), Some(u64::MAX));
    assert!(!one.get(&0, &mut buf).unwrap());
}

/// With every inner node in memory a lookup reads exactly one block, its leaf, however tall
/// the tree, also after splits grew it; without, one block per level.
#[test]
fn block_reads_per_lookup_by_resident_mode() {
    let keys: Vec<u64> = (0..60_000u64).map(|i| i * 10).collect();
    for mode in MODES {
        let storage = small_storage();
        let mut tree = DiskBTree::build(
            &storage,
            "t",
            &keys,
            |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
            params(8, 1.0, mode),
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for round in 0..2 {
            let height = tree.height();
            assert!(height >= 4, "a deep tree: height {height}");
            let inner_reads = u64::from(height - 1 - mode.levels(height));
            let mut buf = [0u8; 8];
            for _ in 0..300 {
                let probe = rng.gen_range(0..700_000u64);
                let before = storage.stats();
                let found = tree.get(&probe, &mut buf).unwrap();
                let d = storage.stats() - before;
                let present = probe % 10 == 0 || round == 1 && probe % 10 == 5;
                assert_eq!(found, present && probe < 600_000);
                assert_eq!(d.blocks_read(IoClass::Leaf), 1, "{mode:?}");
                assert_eq!(d.blocks_read(IoClass::Inner), inner_reads, "{mode:?}");
                assert_eq!(
                    (d.read_blocks, d.read_requests),
                    (1 + inner_reads, 1 + inner_reads)
                );
            }
            // Fill the gaps: many splits, and the tree grows.
            for k in (0..60_000u64).map(|i| i * 10 + 5) {
                tree.insert(k, &k.to_le_bytes()).unwrap();
            }
        }
        assert!(tree.memory_bytes() > 0);
    }
}

#[test]
fn memory_holds_only_resident_levels() {
    let keys: Vec<u64> = (0..50_000u64).collect();
    let storage = small_storage();
    let build =
        |mode| DiskBTree::build(&storage, "m", &keys, |_, _, _| {}, params(8, 1.0, mode)).unwrap();
    let none = build(Resident::None);
    let top1 = build(Resident::TopLevels(1));
    let all = build(Resident::AllInner);
    assert!(none.memory_bytes() < top1.memory_bytes());
    assert!(top1.memory_bytes() < all.memory_bytes());
    assert_eq!(all.inner_bytes_on_disk(), all.inner_count() * 512);
}

/// Deletes merge the leaves they empty (the tree shrinks and scans see no gap), and inserts
/// into the emptied range take the freed blocks before the file grows.
#[test]
fn deletes_merge_leaves_and_reinserts_reuse_their_blocks() {
    let keys: Vec<u64> = (0..3000).collect();
    let storage = small_storage();
    let mut tree = DiskBTree::build(
        &storage,
        "d",
        &keys,
        |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
        params(8, 1.0, Resident::None),
    )
    .unwrap();
    let leaves = tree.leaf_count();
    let allocated = tree.storage_bytes().allocated;
    for k in 100..2900u64 {
        assert!(tree.delete(&k).unwrap());
    }
    assert!(
        tree.leaf_count() < leaves / 4,
        "{} leaves",
        tree.leaf_count()
    );
    assert!(tree.storage_bytes().free > 0);
    let mut buf = [0u8; 8];
    assert_eq!(tree.lower_bound(&100, &mut buf).unwrap(), Some(2900));
    let (mut got, mut payloads) = (Vec::new(), Vec::new());
    assert_eq!(tree.scan(&50, 100, &mut got, &mut payloads).unwrap(), 100);
    assert_eq!(got, (50..100).chain(2900..2950).collect::<Vec<u64>>());
    for k in (100..2900u64).step_by(3) {
        assert!(!tree.insert(k, &k.to_le_bytes()).unwrap());
    }
    assert_eq!(tree.len(), 200 + 934);
    assert_eq!(
        tree.storage_bytes().allocated,
        allocated,
        "reinserts reuse the freed blocks"
    );
    assert_eq!(tree.verify().unwrap(), 200 + 934);
}

#[test]
fn bad_input_is_a_typed_error() {
    let storage = small_storage();
    let build = |keys: &[u64], p| DiskBTree::build(&storage, "b", keys, |_, _, _| {}, p);
    let d = DiskBTreeParams::default();
    assert!(matches!(
        build(&[3, 1], d),
        Err(Error::OutOfOrder { index: 1, .. })
    ));
    assert!(matches!(
        build(&[1, 1], d),
        Err(Error::DuplicateKey { index: 1, .. })
    ));
    for ff in [0.0, -1.0, 1.5, f64::NAN] {
        let p = params(8, ff, Resident::None);
        assert!(matches!(
            build(&[1], p),
            Err(Error::InvalidParameter {
                name: "fill_factor",
                ..
            })
        ));
    }
    let p = params(400, 1.0, Resident::None);
    assert!(matches!(
        build(&[1], p),
        Err(Error::InvalidParameter {
            name: "payload_size",
            ..
        })
    ));
    let nan = DiskBTree::<f64>::build(&storage, "f", &[f64::NAN], |_, _, _| {}, d);
    assert!(matches!(nan, Err(Error::InvalidKey { .. })));

    let mut tree = build(&[1, 2, 3], d).unwrap();
    assert!(matches!(
        tree.insert(4, &[0; 3]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        tree.get(&1, &mut [0; 3]),
        Err(Error::InvalidParameter { .. })
    ));
    tree.flush().unwrap();
    drop(tree);
    assert!(matches!(
        DiskBTree::<Str16>::open(&storage, "b", Resident::None, false),
        Err(Error::KeyTypeMismatch {
            expected: "str16",
            ..
        })
    ));
    assert!(matches!(
        DiskBTree::<i64>::open(&storage, "b", Resident::None, false),
        Err(Error::KeyTypeMismatch { .. })
    ));
    let mut ro = DiskBTree::<u64>::open(&storage, "b", Resident::None, false).unwrap();
    assert!(matches!(ro.insert(9, &[0; 8]), Err(Error::ReadOnly { .. })));
    assert!(matches!(ro.delete(&1), Err(Error::ReadOnly { .. })));
}

/// A tree grown from empty by inserts keeps exactly its resident levels in memory as the root
/// splits (the lowest resident level is evicted under `TopLevels`), and lookups read the rest.
#[test]
fn growing_tree_keeps_its_resident_levels() {
    for mode in MODES {
        let storage = small_storage();
        let mut tree =
            DiskBTree::<u64>::build(&storage, "g", &[], |_, _, _| {}, params(40, 1.0, mode))
                .unwrap();
        let mut model = BTreeMap::new();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..8000 {
            let k = rng.gen_range(0..1_000_000u64);
            tree.insert(k, &payload(k, 40)).unwrap();
            model.insert(k, payload(k, 40));
            assert_eq!(tree.resident_levels(), mode.levels(tree.height()));
        }
        assert!(tree.height() >= 4, "height {}", tree.height());
        let inner_reads = u64::from(tree.height() - 1 - tree.resident_levels());
        for &k in model.keys().step_by(50) {
            let before = storage.stats();
            assert!(tree.get(&k, &mut [0u8; 40]).unwrap());
            let d = storage.stats() - before;
            assert_eq!(d.blocks_read(IoClass::Inner), inner_reads, "{mode:?}");
            assert_eq!(d.blocks_read(IoClass::Leaf), 1);
        }
        let probes: Vec<u64> = (0..1_000_000).step_by(997).collect();
        check_against(&tree, &model, &probes);
    }
}

/// The header records the build parameters (payload size, fill factor) and the reopened tree
/// exposes them with the resident levels it was opened with: what `lidx bench --on-disk`
/// checks a file against (issue 13, fix 3).
#[test]
fn build_parameters_survive_a_reopen() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..500).collect();
    let built = params(16, 0.7, Resident::AllInner);
    let tree = DiskBTree::build(&storage, "p", &keys, |_, _, _| {}, built).unwrap();
    assert_eq!(tree.params(), built);
    drop(tree);
    let reopened = DiskBTree::<u64>::open(&storage, "p", Resident::None, false).unwrap();
    assert_eq!(reopened.params(), params(16, 0.7, Resident::None));
}
