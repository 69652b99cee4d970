//! Saved indexes (paper 000 §5.2): built once, reloaded, rebuilt for another table or window,
//! typed errors for corrupted files; and the model cursors of §4.1 give exactly the windows of
//! a root-to-leaf search for keys in increasing order, present or absent, u64 and strings.

use lidx::io::{DeviceKind, Storage};
use lidx::join::{JoinIndex, WindowCursor};
use lidx::join::{Table, TableWriter};
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::raw::join::table_index::{decode_saved, load_or_build, read_saved};
use lidx::{Error, Key, StaticIndex, Str16};
use proptest::prelude::*;

fn write(storage: &Storage, name: &str, keys: &[u64]) {
    let mut w = TableWriter::<u64>::create(storage, name, 8).unwrap();
    for k in keys {
        w.push(k, &k.to_le_bytes()).unwrap();
    }
    w.finish().unwrap();
}

fn pgm(keys: &[u64]) -> lidx::Result<Pgm<u64>> {
    Pgm::build(keys, PgmParams::new(16, 4))
}

#[test]
fn saved_index_is_reloaded_rebuilt_or_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    let keys: Vec<u64> = (0..50_000u64).map(|i| i * i / 7 + i).collect();
    write(&storage, "t", &keys);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    let (built, first) = load_or_build(&storage, "t.idx", &t, 0, pgm).unwrap();
    assert!(!first.loaded);
    let (loaded, again) = load_or_build(&storage, "t.idx", &t, 0, pgm).unwrap();
    assert!(again.loaded);
    assert_eq!(again.memory_bytes, first.memory_bytes);
    for q in (0..keys[keys.len() - 1]).step_by(9973) {
        assert_eq!(built.search(q), loaded.search(q));
    }
    // Another tag (window setting) rebuilds; so does another table.
    let (_, other) = load_or_build(&storage, "t.idx", &t, 7, pgm).unwrap();
    assert!(!other.loaded);
    write(&storage, "t", &keys[..40_000]);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    let (_, other) = load_or_build(&storage, "t.idx", &t, 7, pgm).unwrap();
    assert!(!other.loaded);
    // Another model kind under the same name is a typed error.
    let r = load_or_build(&storage, "t.idx", &t, 7, |k: &[u64]| {
        BTreeModel::build(k, BTreeModelParams::default())
    });
    assert!(matches!(r, Err(Error::ModelKindMismatch { .. })));

    let path = dir.path().join("t.idx");
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    bad[30] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(
        load_or_build(&storage, "t.idx", &t, 7, pgm),
        Err(Error::ChecksumMismatch { block: 0, .. })
    ));
    let mut longer = good.clone();
    longer.extend_from_slice(&good[..4096]);
    std::fs::write(&path, &longer).unwrap();
    assert!(matches!(
        read_saved(&storage, "t.idx"),
        Err(Error::Corrupt { .. })
    ));
    std::fs::write(&path, &good).unwrap();
    assert!(read_saved(&storage, "t.idx").is_ok());
}

#[test]
fn stream_decoder_checks_magic_version_and_checksums() {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..10_000).collect();
    write(&storage, "t", &keys);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    load_or_build(&storage, "i", &t, 0, pgm).unwrap();
    // The stream as the file holds it (the blocks' payloads), then broken field by field.
    let mut stream = Vec::new();
    let dev = storage.open("i", false).unwrap();
    let mut buf = lidx::io::AlignedBuf::zeroed(4096 * dev.len_blocks() as usize);
    dev.read_blocks(0, &mut buf, lidx::io::IoClass::Model)
        .unwrap();
    for block in buf.chunks(4096) {
        stream.extend_from_slice(&block[..4092]);
    }
    assert!(decode_saved("i", &stream).is_ok());
    let cases: [(usize, ErrorCheck); 5] = [
        (0, |e| matches!(e, Error::BadMagic { .. })),
        (8, |e| matches!(e, Error::UnsupportedVersion { .. })),
        (40, |e| matches!(e, Error::Corrupt { .. })),
        (88, |e| matches!(e, Error::Corrupt { .. })),
        (72, |e| {
            matches!(e, Error::Corrupt { .. } | Error::Truncated { .. })
        }),
    ];
    for (at, check) in cases {
        let mut s = stream.clone();
        s[at] ^= 0x10;
        let e = decode_saved("i", &s).unwrap_err();
        assert!(check(&e), "byte {at}: {e:?}");
    }
    assert!(matches!(
        decode_saved("i", &stream[..50]),
        Err(Error::Truncated { .. })
    ));
}

/// A test of an error's kind.
type ErrorCheck = fn(&Error) -> bool;

fn check_cursor<K: Key, I: JoinIndex<K>>(index: &I, queries: &[K]) {
    let mut cursor = index.cursor();
    for &q in queries {
        assert_eq!(cursor.window(q), index.search(q), "{q:?}");
    }
}

fn check_all_cursors<K: Key + Ord>(keys: &[K], queries: &[K]) {
    check_cursor(&Pgm::build(keys, PgmParams::new(4, 2)).unwrap(), queries);
    check_cursor(
        &SampledPgm::build(keys, SampledPgmParams::new(8, 2)).unwrap(),
        queries,
    );
    check_cursor(
        &RadixSpline::build(keys, RadixSplineParams::new(6, 4)).unwrap(),
        queries,
    );
    check_cursor(&Rmi::build(keys, RmiParams::new(16)).unwrap(), queries);
    check_cursor(
        &BTreeModel::build(keys, BTreeModelParams::with_every(8)).unwrap(),
        queries,
    );
}

fn string(prefix_len: usize, v: u64) -> Str16 {
    // `prefix_len` shared bytes, then the value: keys sharing long prefixes.
    let mut s = [b'p'; 16];
    let tail = (16 - prefix_len).min(8);
    s[16 - tail..].copy_from_slice(&v.to_be_bytes()[8 - tail..]);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn cursors_match_search(
        mut keys in proptest::collection::vec(0u64..1 << 40, 1..3000),
        mut queries in proptest::collection::vec(any::<u64>(), 0..500),
    ) {
        keys.sort_unstable();
        keys.dedup();
        queries.extend(keys.iter().step_by(7).copied());
        queries.extend([0, u64::MAX]);
        queries.sort_unstable();
        check_all_cursors(&keys, &queries);
    }

    #[test]
    fn cursors_match_search_on_strings_with_long_prefixes(
        raw in proptest::collection::vec(0u64..1 << 20, 1..2000),
        prefix in 8usize..14,
    ) {
        let mut keys: Vec<Str16> = raw.iter().map(|&v| string(prefix, v)).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut queries: Vec<Str16> = raw.iter().map(|&v| string(prefix, v ^ 1)).collect();
        queries.extend([[0u8; 16], [0xff; 16]]);
        queries.sort_unstable();
        check_all_cursors(&keys, &queries);
    }
}
