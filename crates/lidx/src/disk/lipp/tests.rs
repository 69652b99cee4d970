//! The on-disk LIPP against `BTreeMap`: fixed cases, proptest operation sequences with flush
//! and reopen (with headers on disk and in memory), and typed errors for damaged files.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{DiskLipp, DiskLippParams};
use crate::disk::{DiskIndex, DiskMap};
use crate::error::Error;
use crate::io::{DeviceKind, IoClass, Storage};
use crate::mem::lipp::LippParams;

fn payload(k: u64, salt: u8) -> [u8; 8] {
    let mut p = k.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes();
    p[0] ^= salt;
    p
}

fn small_params() -> DiskLippParams {
    DiskLippParams {
        lipp: LippParams {
            min_rebuild: 8,
            ..LippParams::default()
        },
        ..DiskLippParams::default()
    }
}

/// Every entry of `model` is found, absent keys are not, and scans from several starts agree.
fn check(index: &DiskLipp, model: &BTreeMap<u64, [u8; 8]>, probes: &[u64]) {
    assert_eq!(index.len(), model.len() as u64);
    let mut out = [0u8; 8];
    for (k, v) in model {
        assert!(index.get(k, &mut out).unwrap(), "key {k} lost");
        assert_eq!(&out, v, "payload of {k}");
    }
    for p in probes {
        assert_eq!(
            index.get(p, &mut out).unwrap(),
            model.contains_key(p),
            "probe {p}"
        );
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let n = index.scan(p, 7, &mut keys, &mut payloads).unwrap();
        let want: Vec<u64> = model.range(p..).take(7).map(|(k, _)| *k).collect();
        assert_eq!(keys, want, "scan from {p}");
        assert_eq!(n, want.len());
        for (j, k) in keys.iter().enumerate() {
            assert_eq!(&payloads[j * 8..j * 8 + 8], &model[k]);
        }
    }
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    index
        .scan(&0, usize::MAX, &mut keys, &mut payloads)
        .unwrap();
    assert_eq!(keys, model.keys().copied().collect::<Vec<_>>());
}

#[test]
fn build_lookup_scan_and_reopen() {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..3000u64).map(|i| i * i * 7 + (i % 5)).collect();
    let mut keys = keys;
    keys.dedup();
    let index = DiskLipp::build(
        &storage,
        "l",
        &keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        DiskLippParams::default(),
    )
    .unwrap();
    let model: BTreeMap<u64, [u8; 8]> = keys.iter().map(|&k| (k, payload(k, 0))).collect();
    let probes = [0, 1, 5, 6, 7, 100, keys[1500] + 1, u64::MAX];
    check(&index, &model, &probes);
    drop(index);
    for resident in [false, true] {
        let index = DiskLipp::open(&storage, "l", false, resident).unwrap();
        check(&index, &model, &probes);
    }
}

#[test]
fn empty_and_extreme_keys() {
    let storage = Storage::ram();
    let mut index =
        DiskLipp::build(&storage, "e", &[], |_, _, _| {}, DiskLippParams::default()).unwrap();
    let mut model = BTreeMap::new();
    check(&index, &model, &[0, u64::MAX]);
    for k in [u64::MAX, 0, u64::MAX - 1, 1, 1 << 63] {
        assert!(!index.insert(k, &payload(k, 1)).unwrap());
        model.insert(k, payload(k, 1));
    }
    assert!(index.insert(0, &payload(0, 2)).unwrap());
    model.insert(0, payload(0, 2));
    check(&index, &model, &[0, 2, u64::MAX]);
    index.flush().unwrap();
    drop(index);
    let index = DiskLipp::open(&storage, "e", true, false).unwrap();
    check(&index, &model, &[0, 2, u64::MAX]);
}

#[test]
fn reads_split_inner_and_leaf_and_resident_headers_remove_inner_reads() {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..20_000u64).map(|i| i * 13).collect();
    DiskLipp::build(
        &storage,
        "c",
        &keys,
        |_, _, _| {},
        DiskLippParams::default(),
    )
    .unwrap();
    for resident in [false, true] {
        let index = DiskLipp::open(&storage, "c", false, resident).unwrap();
        let before = storage.stats();
        let mut out = [0u8; 8];
        for k in keys.iter().step_by(97) {
            assert!(index.get(k, &mut out).unwrap());
        }
        let d = storage.stats() - before;
        assert_eq!(d.blocks_read(IoClass::Inner) == 0, resident);
        assert!(d.blocks_read(IoClass::Leaf) > 0 || !resident);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Delete(u64),
    Get(u64),
    Scan(u64),
    FlushReopen(bool),
}

fn op(space: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..space).prop_map(Op::Insert),
        2 => (0..space).prop_map(Op::Delete),
        1 => (0..space).prop_map(Op::Get),
        1 => (0..space).prop_map(Op::Scan),
        1 => any::<bool>().prop_map(Op::FlushReopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ops_match_btreemap(
        initial in proptest::collection::btree_set(0u64..2000, 0..200),
        ops in proptest::collection::vec(op(2000), 1..300),
        spread in 0u32..40,
    ) {
        let spread_key = |k: u64| k << spread;
        let storage = Storage::ram();
        let keys: Vec<u64> = initial.iter().map(|&k| spread_key(k)).collect();
        let mut model: BTreeMap<u64, [u8; 8]> =
            keys.iter().map(|&k| (k, payload(k, 0))).collect();
        let mut index = DiskLipp::build(
            &storage,
            "p",
            &keys,
            |_, k, out| out.copy_from_slice(&payload(*k, 0)),
            small_params(),
        )
        .unwrap();
        for (n, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert(k) => {
                    let k = spread_key(k);
                    let p = payload(k, n as u8);
                    let replaced = index.insert(k, &p).unwrap();
                    prop_assert_eq!(replaced, model.insert(k, p).is_some());
                }
                Op::Delete(k) => {
                    let k = spread_key(k);
                    prop_assert_eq!(index.delete(&k).unwrap(), model.remove(&k).is_some());
                }
                Op::Get(k) => {
                    let k = spread_key(k);
                    let mut out = [0u8; 8];
                    let found = index.get(&k, &mut out).unwrap();
                    prop_assert_eq!(found, model.contains_key(&k));
                    if found {
                        prop_assert_eq!(&out, &model[&k]);
                    }
                }
                Op::Scan(k) => {
                    let k = spread_key(k);
                    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
                    index.scan(&k, 5, &mut keys, &mut payloads).unwrap();
                    let want: Vec<u64> = model.range(k..).take(5).map(|(k, _)| *k).collect();
                    prop_assert_eq!(keys, want);
                }
                Op::FlushReopen(resident) => {
                    index.flush().unwrap();
                    drop(index);
                    index = DiskLipp::open(&storage, "p", true, resident).unwrap();
                }
            }
        }
        check(&index, &model, &[0, spread_key(1000), u64::MAX]);
        let used = index.storage_bytes().used;
        prop_assert!(used <= index.storage_bytes().allocated);
        index.flush().unwrap();
        drop(index);
        let index = DiskLipp::open(&storage, "p", false, false).unwrap();
        check(&index, &model, &[0, spread_key(1000)]);
    }
}

#[test]
fn inserts_make_children_and_rebuilds_and_breakdown_adds_up() {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..1000u64).map(|i| i * 1000).collect();
    let mut index = DiskLipp::build(&storage, "w", &keys, |_, _, _| {}, small_params()).unwrap();
    let nodes = index.node_count();
    for i in 0..5000u64 {
        index.insert(i * 1000 + 1 + i % 7, &[1; 8]).unwrap();
    }
    assert!(index.node_count() > nodes, "conflicts made no child");
    assert!(index.dead_bytes() > 0, "no subtree was rebuilt");
    let b = index.write_breakdown();
    assert!(b.search_ns > 0 && b.insert_ns > 0 && b.smo_ns > 0 && b.maintenance_ns > 0);
    let s = index.storage_bytes();
    assert!(s.allocated >= s.used + index.dead_bytes());
    for i in 0..5000u64 {
        assert!(index.delete(&(i * 1000 + 1 + i % 7)).unwrap());
    }
    let model: BTreeMap<u64, [u8; 8]> = keys.iter().map(|&k| (k, [0; 8])).collect();
    check(&index, &model, &[1, 999, 1001]);
}

fn file_storage(dir: &std::path::Path) -> Storage {
    Storage::new(dir, DeviceKind::File { direct: false }, 4096).unwrap()
}

/// Opens with headers in memory (a pass over every node) and scans everything.
fn read_all(storage: &Storage, name: &str) -> crate::Result<usize> {
    let index = DiskLipp::open(storage, name, false, true)?;
    let (mut k, mut p) = (Vec::new(), Vec::new());
    index.scan(&0, usize::MAX, &mut k, &mut p)
}

#[test]
fn damaged_files_give_typed_errors_naming_the_block() {
    let dir = tempfile::tempdir().unwrap();
    let storage = file_storage(dir.path());
    let keys: Vec<u64> = (0..5000u64).map(|i| i * 3 + i * i).collect();
    DiskLipp::build(
        &storage,
        "d",
        &keys,
        |_, _, _| {},
        DiskLippParams::default(),
    )
    .unwrap();
    let path = dir.path().join("d");
    let pristine = std::fs::read(&path).unwrap();
    let blocks = (pristine.len() / 4096) as u64;
    assert_eq!(read_all(&storage, "d").unwrap(), keys.len());
    // A flipped byte anywhere fails its block's checksum on the read that meets it.
    for b in [0, 1, blocks / 2, blocks - 1] {
        let mut bytes = pristine.clone();
        bytes[b as usize * 4096 + 17] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        match read_all(&file_storage(dir.path()), "d") {
            Err(Error::ChecksumMismatch { block, .. }) => assert_eq!(block, b),
            other => panic!("block {b}: {other:?}"),
        }
    }
    // Damaged fields under valid checksums are Corrupt naming the block.
    std::fs::write(&path, &pristine).unwrap();
    let rewrite = |block: u64, f: &dyn Fn(&mut [u8])| {
        std::fs::write(&path, &pristine).unwrap();
        let storage = file_storage(dir.path());
        let dev = storage.open("d", true).unwrap();
        let mut buf = crate::io::AlignedBuf::zeroed(4096);
        dev.read_blocks(block, &mut buf, IoClass::Leaf).unwrap();
        f(&mut buf);
        dev.write_blocks(block, &mut buf, IoClass::Leaf).unwrap();
        dev.sync().unwrap();
    };
    rewrite(0, &|b| b[88..92].copy_from_slice(&[0xff; 4]));
    assert!(matches!(
        read_all(&file_storage(dir.path()), "d"),
        Err(Error::Corrupt { block: Some(0), .. })
    ));
    rewrite(1, &|b| b[0] ^= 0xff);
    assert!(matches!(
        read_all(&file_storage(dir.path()), "d"),
        Err(Error::Corrupt { block: Some(1), .. })
    ));
    // A child address pointing back at its parent: refused, no loop.
    rewrite(1, &|b| {
        let slot = (64..4092 - 17)
            .step_by(17)
            .find(|&at| b[at] == super::node::NODE)
            .expect("the root has a child in its first block");
        b[slot + 1..slot + 9].copy_from_slice(&(1u64 << 32).to_le_bytes());
    });
    assert!(matches!(
        read_all(&file_storage(dir.path()), "d"),
        Err(Error::Corrupt { block: Some(1), .. })
    ));
    // Truncation: the file ends before the nodes the meta block records.
    std::fs::write(&path, &pristine[..pristine.len() - 4096]).unwrap();
    assert!(matches!(
        read_all(&file_storage(dir.path()), "d"),
        Err(Error::Truncated { .. })
    ));
}
