//! Regression (issue 13, "fix first" 1): a stale saved join index gave a wrong join, silently.
//! Saved `<table>.<index>.idx` files were matched to their table by record count and end keys
//! only, so re-creating a table in place from other keys with the same count and the same
//! first and last key, then running `inlj-pgm` (also `inlj-rs`, `inlj-btree`), loaded the old
//! index and returned 132 matches instead of 99,999. A saved index is now bound to the table's
//! content fingerprint (in the table's header) and rebuilt, saying so, when it does not match.
//! Also: the table header's version 1 (no fingerprint) is refused with a typed error.

use lidx::io::{AlignedBuf, DeviceKind, IoClass, Storage};
use lidx::join::TableHeader;
use lidx::join::{join, InljIndex, JoinAlgo, JoinParams, Table, TableRef, TableWriter};
use lidx::raw::join::table::HEADER_BYTES;
use lidx::Error;

fn write(storage: &Storage, name: &str, keys: &[u64]) -> TableHeader {
    let mut w = TableWriter::<u64>::create(storage, name, 8).unwrap();
    for k in keys {
        w.push(k, &k.to_le_bytes()).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn a_table_recreated_with_the_same_count_and_end_keys_gets_a_rebuilt_index() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    let n = 20_000u64;
    // The outer table: the even keys below 2n. The inner (larger, indexed) table, first: 0 and
    // the odd keys below 2n (one match); then, re-created in place: the even keys and 2n - 1
    // (n matches). Same count, same first and last key.
    let outer: Vec<u64> = (0..n).map(|i| i * 2).collect();
    let old_inner: Vec<u64> = std::iter::once(0)
        .chain((0..n).map(|i| 2 * i + 1))
        .collect();
    let new_inner: Vec<u64> = outer.iter().copied().chain([2 * n - 1]).collect();
    write(&storage, "outer", &outer);
    let at = |name| TableRef {
        storage: &storage,
        name,
    };
    for index in [InljIndex::Pgm, InljIndex::RadixSpline, InljIndex::BTree] {
        let params = JoinParams {
            algo: JoinAlgo::Inlj(index),
            ..JoinParams::default()
        };
        let old = write(&storage, "inner", &old_inner);
        let built = join::<u64>(at("outer"), at("inner"), at("out"), &params).unwrap();
        assert_eq!(built.output_count, 1);
        assert_eq!(built.index.as_deref(), Some("built"));
        let again = join::<u64>(at("outer"), at("inner"), at("out"), &params).unwrap();
        assert_eq!(
            (again.output_count, again.index.as_deref()),
            (1, Some("loaded"))
        );
        let new = write(&storage, "inner", &new_inner);
        assert_eq!(new.count, old.count);
        assert_ne!(new.fingerprint, old.fingerprint);
        let report = join::<u64>(at("outer"), at("inner"), at("out"), &params).unwrap();
        assert_eq!(report.output_count, n, "{}", index.name());
        assert!(!report.index_loaded);
        assert_eq!(report.index.as_deref(), Some("rebuilt: stale"));
        let reused = join::<u64>(at("outer"), at("inner"), at("out"), &params).unwrap();
        assert_eq!((reused.output_count, reused.index_loaded), (n, true));
    }
}

#[test]
fn the_fingerprint_follows_the_records_and_their_order() {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..3000).collect();
    let a = write(&storage, "a", &keys);
    assert_eq!(write(&storage, "b", &keys).fingerprint, a.fingerprint);
    let mut swapped = keys.clone();
    swapped.swap(10, 2900);
    assert_ne!(write(&storage, "c", &swapped).fingerprint, a.fingerprint);
    assert_eq!(write(&storage, "e", &[]).fingerprint, 0);
    assert_eq!(Table::<u64>::open(&storage, "a").unwrap().header(), a);
    // A join's output written by threads in stretches has the fingerprint of the same records
    // written by one writer.
    let big: Vec<u64> = (0..5000).collect();
    write(&storage, "big", &big);
    let at = |name| TableRef {
        storage: &storage,
        name,
    };
    let mut fingerprints = Vec::new();
    for threads in [1, 3] {
        let params = JoinParams {
            threads,
            ..JoinParams::default()
        };
        join::<u64>(at("a"), at("big"), at("out"), &params).unwrap();
        fingerprints.push(
            Table::<u64>::open(&storage, "out")
                .unwrap()
                .header()
                .fingerprint,
        );
    }
    assert_eq!(fingerprints[0], fingerprints[1]);
}

#[test]
fn a_version_1_table_header_is_refused_with_what_to_do() {
    let storage = Storage::ram();
    write(&storage, "t", &[1, 2, 3]);
    let device = storage.open("t", true).unwrap();
    let mut block = AlignedBuf::zeroed(device.block_size());
    device.read_blocks(0, &mut block, IoClass::Header).unwrap();
    block[16..HEADER_BYTES].fill(0);
    device.write_blocks(0, &mut block, IoClass::Header).unwrap();
    let err = Table::<u64>::open(&storage, "t").err().unwrap();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                got: 1,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("rebuild it"), "{err}");
}
