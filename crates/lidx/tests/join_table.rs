//! Join tables: round trips through the writer and both readers, the header checks, and the
//! typed errors for a truncated or corrupted file and a key type mismatch.

use lidx::io::{DeviceKind, IoClass, Storage};
use lidx::join::{read_header, Table, TableHeader, TableWriter, WindowReader};
use lidx::raw::join::table::HEADER_BYTES;
use lidx::{Error, Str16};

fn value_of(k: u64) -> [u8; 8] {
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()
}

fn write_u64(storage: &Storage, name: &str, keys: &[u64]) {
    let mut w = TableWriter::<u64>::create(storage, name, 8).unwrap();
    for k in keys {
        w.push(k, &value_of(*k)).unwrap();
    }
    let h = w.finish().unwrap();
    assert_eq!(h.count, keys.len() as u64);
}

/// Checks a window reader's lower bound of `q` in `keys` (written by `write_u64`), from a
/// window of `slack` records before the answer and `slack / 2` after it, and its record.
fn assert_window_answer(r: &mut WindowReader<'_, u64>, keys: &[u64], q: u64, slack: u64) {
    let truth = keys.partition_point(|&k| k < q) as u64;
    let got = r
        .lower_bound(truth.saturating_sub(slack), truth + slack / 2, q)
        .unwrap();
    assert_eq!(got, truth, "q {q}");
    match r.found() {
        Some((k, v)) => {
            assert_eq!(k, keys[got as usize]);
            assert_eq!(v, value_of(k));
        }
        None => assert_eq!(got, keys.len() as u64),
    }
}

#[test]
fn round_trip_scan_and_windows() {
    let storage = Storage::ram();
    for n in [0usize, 1, 254, 255, 256, 1000, 70_000] {
        let keys: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
        write_u64(&storage, "t", &keys);
        let t = Table::<u64>::open(&storage, "t").unwrap();
        assert_eq!(t.len(), n as u64);
        assert_eq!(t.read_keys().unwrap(), keys);
        let mut scan = t.scan(0..t.len()).unwrap();
        for &k in &keys {
            assert_eq!(scan.key(), Some(k));
            assert_eq!(scan.value(), value_of(k));
            scan.advance().unwrap();
        }
        assert_eq!(scan.key(), None);
        // Windows that move forward: exact lower bounds for present and absent keys.
        let mut r = t.window_reader();
        for q in (0..n as u64 * 3 + 3).step_by(7) {
            let truth = keys.partition_point(|&k| k < q) as u64;
            let lo = truth.saturating_sub(300);
            let hi = (truth + 200).min(n as u64);
            let got = r.lower_bound(lo, hi, q).unwrap();
            assert_eq!(got, truth, "n {n} q {q}");
            match r.found() {
                Some((k, v)) => {
                    assert_eq!(k, keys[got as usize]);
                    assert_eq!(v, value_of(k));
                    assert_eq!(r.key(got), Some(k));
                    assert_eq!(r.value(got), Some(v));
                }
                None => {
                    assert_eq!(got, n as u64);
                    assert!(!r.holds(got));
                }
            }
        }
        for q in [0, 1, 2, 3 * n as u64, u64::MAX] {
            let truth = keys.partition_point(|&k| k < q) as u64;
            assert_eq!(t.lower_bound_on_disk(q).unwrap(), truth);
        }
    }
}

/// A table of the keys `0 .. 255 * 40` (40 full blocks) in memory, and its storage.
fn forty_blocks() -> (Storage, Table<u64>, u64) {
    let storage = Storage::ram();
    let keys: Vec<u64> = (0..255 * 40).collect();
    write_u64(&storage, "t", &keys);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    (storage, t, keys.len() as u64)
}

#[test]
fn forward_windows_read_each_block_once() {
    let (storage, t, n) = forty_blocks();
    let before = storage.stats();
    let mut r = t.window_reader();
    for q in 0..n {
        let lo = q.saturating_sub(100);
        assert_eq!(r.lower_bound(lo, q + 100, q).unwrap(), q);
    }
    let read = storage.stats() - before;
    assert_eq!(read.blocks_read(IoClass::Leaf), 40);
    assert!(
        read.read_requests < 10,
        "readahead: {} requests",
        read.read_requests
    );
}

#[test]
fn windows_without_readahead_read_only_their_blocks() {
    let (storage, t, n) = forty_blocks();
    let before = storage.stats();
    let mut r = t.window_reader();
    r.set_readahead(false);
    // A window in each of the first 20 blocks, one after another (a walk that would read
    // ahead): 20 blocks in 20 requests, none ahead.
    for b in 0..20u64 {
        let q = b * 255 + 10;
        assert_eq!(r.lower_bound(b * 255, b * 255 + 200, q).unwrap(), q);
    }
    let read = storage.stats() - before;
    assert_eq!(read.blocks_read(IoClass::Leaf), 20);
    assert_eq!(read.read_requests, 20);
    // Back on, a dense walk reads ahead again: the rest in a few long requests.
    r.set_readahead(true);
    let before = storage.stats();
    for q in n / 2..n {
        let lo = q.saturating_sub(100);
        assert_eq!(r.lower_bound(lo, q + 100, q).unwrap(), q);
    }
    let read = storage.stats() - before;
    assert!(
        read.read_requests < 10,
        "readahead: {} requests",
        read.read_requests
    );
}

#[test]
fn string_keys_round_trip() {
    let storage = Storage::ram();
    let keys: Vec<Str16> = (0..3000u64)
        .map(|i| {
            let mut s = *b"common-prefix-00";
            s[8..].copy_from_slice(&i.to_be_bytes());
            s
        })
        .collect();
    let mut w = TableWriter::<Str16>::create(&storage, "s", 0).unwrap();
    for k in &keys {
        w.push(k, &[]).unwrap();
    }
    w.finish().unwrap();
    let t = Table::<Str16>::open(&storage, "s").unwrap();
    assert_eq!(t.records_per_block(), 4092 / 16);
    assert_eq!(t.read_keys().unwrap(), keys);
    assert!(matches!(
        Table::<u64>::open(&storage, "s"),
        Err(Error::KeyTypeMismatch { .. })
    ));
}

#[test]
fn header_decoder_rejects_bad_fields() {
    let good = TableHeader {
        count: 5,
        key_size: 8,
        value_size: 8,
        fingerprint: 7,
    };
    let mut bytes = [0u8; HEADER_BYTES];
    good.encode(&mut bytes);
    assert_eq!(TableHeader::decode("t", &bytes, 4092).unwrap(), good);
    assert!(matches!(
        TableHeader::decode("t", &bytes[..10], 4092),
        Err(Error::Truncated { .. })
    ));
    for bad in [
        TableHeader {
            key_size: 4,
            ..good
        },
        TableHeader {
            value_size: 5000,
            ..good
        },
        TableHeader {
            count: u64::MAX,
            ..good
        },
    ] {
        bad.encode(&mut bytes);
        assert!(matches!(
            TableHeader::decode("t", &bytes, 4092),
            Err(Error::Corrupt { .. })
        ));
    }
}

#[test]
fn truncated_extended_and_corrupted_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    let keys: Vec<u64> = (0..2000).collect();
    write_u64(&storage, "t", &keys);
    let path = dir.path().join("t");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(read_header(&storage, "t").unwrap().count, 2000);

    std::fs::write(&path, &bytes[..bytes.len() - 4096]).unwrap();
    assert!(matches!(
        Table::<u64>::open(&storage, "t"),
        Err(Error::Truncated { .. })
    ));

    let mut longer = bytes.clone();
    longer.extend_from_slice(&bytes[4096..8192]);
    std::fs::write(&path, &longer).unwrap();
    assert!(matches!(
        Table::<u64>::open(&storage, "t"),
        Err(Error::Corrupt { .. })
    ));

    let mut flipped = bytes.clone();
    flipped[3] ^= 0x40;
    std::fs::write(&path, &flipped).unwrap();
    assert!(matches!(
        Table::<u64>::open(&storage, "t"),
        Err(Error::ChecksumMismatch { block: 0, .. })
    ));

    let mut flipped = bytes.clone();
    flipped[4096 * 3 + 100] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    let t = Table::<u64>::open(&storage, "t").unwrap();
    assert!(matches!(
        t.read_keys(),
        Err(Error::ChecksumMismatch { block: 3, .. })
    ));

    std::fs::write(&path, []).unwrap();
    assert!(matches!(
        Table::<u64>::open(&storage, "t"),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn bad_values_are_rejected() {
    let storage = Storage::ram();
    assert!(matches!(
        TableWriter::<u64>::create(&storage, "t", 5000),
        Err(Error::InvalidParameter { .. })
    ));
    let mut w = TableWriter::<u64>::create(&storage, "t", 8).unwrap();
    assert!(matches!(
        w.push(&1, &[0; 7]),
        Err(Error::InvalidParameter { .. })
    ));
}

mod window_property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Forward windows of random slack over tables of random record sizes: the lower bound
        /// and the record found are exact, present keys or absent.
        #[test]
        fn forward_windows_are_exact(
            mut keys in proptest::collection::vec(0u64..1 << 30, 0..4000),
            mut queries in proptest::collection::vec(0u64..1 << 30, 1..300),
            value_size in 0usize..40,
            slack in 0u64..700,
        ) {
            keys.sort_unstable();
            keys.dedup();
            queries.sort_unstable();
            let storage = Storage::ram();
            let mut w = TableWriter::<u64>::create(&storage, "t", value_size).unwrap();
            for k in &keys {
                w.push(k, &vec![*k as u8; value_size]).unwrap();
            }
            w.finish().unwrap();
            let t = Table::<u64>::open(&storage, "t").unwrap();
            let mut r = t.window_reader();
            let n = keys.len() as u64;
            for q in queries {
                let truth = keys.partition_point(|&k| k < q) as u64;
                let got = r
                    .lower_bound(truth.saturating_sub(slack), truth + slack / 2, q)
                    .unwrap();
                prop_assert_eq!(got, truth);
                match r.found() {
                    Some((k, v)) => {
                        prop_assert_eq!(k, keys[got as usize]);
                        prop_assert_eq!(v, &vec![k as u8; value_size][..]);
                    }
                    None => prop_assert_eq!(got, n),
                }
            }
        }
    }
}

#[test]
fn dense_walks_stream_and_jumps_leave_the_stream() {
    // Long enough for readahead to reach its largest and the reader to stream blocks from a
    // background thread (its fast path: kept blocks copied in front of each chunk); then
    // windows that jump far ahead, a dense walk again, a dense walk with windows wider than
    // the room in front of a streamed chunk (the gathering path), and keys past the end.
    let storage = Storage::ram();
    let n = 5_000_000u64;
    let keys: Vec<u64> = (0..n).map(|i| i * 2).collect();
    write_u64(&storage, "t", &keys);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    let mut r = t.window_reader();
    let walks: Vec<(Vec<u64>, u64)> = vec![
        ((0..3_000_000u64).step_by(3).collect(), 129),
        ((3_000_000..5_000_000u64).step_by(500_001).collect(), 129),
        ((5_000_000..8_000_000u64).step_by(5).collect(), 129),
        ((8_000_000..9_990_000u64).step_by(7).collect(), 20_000),
        ((9_999_990..10_000_010u64).collect(), 129),
    ];
    for (queries, slack) in walks {
        for q in queries {
            assert_window_answer(&mut r, &keys, q, slack);
        }
    }
    let blocks = n.div_ceil(255);
    let read = storage.stats();
    // The dense walks read their blocks about once, plus what a stream had read ahead when a
    // jump left it; the writes are not counted here.
    assert!(
        read.read_blocks < blocks + blocks / 4,
        "{}",
        read.read_blocks
    );
}

#[test]
fn a_held_reader_walks_on_across_batches_and_reads_each_block_about_once() {
    // A query engine's join probes in batches, each sorted: a reader put aside between them
    // continues its dense walk (and its stream), where a reader per batch starts over and drops
    // what it had read ahead. A batch that starts behind the run, and a hold resumed on another
    // open of the table, still answer exactly.
    let storage = Storage::ram();
    let n = 2_000_000u64;
    let keys: Vec<u64> = (0..n).map(|i| i * 2).collect();
    write_u64(&storage, "t", &keys);
    let t = Table::<u64>::open(&storage, "t").unwrap();
    let queries: Vec<u64> = (0..2 * n).step_by(3).collect();
    let check = |r: &mut WindowReader<'_, u64>, q: u64| assert_window_answer(r, &keys, q, 129);
    let blocks = n.div_ceil(255);
    let walk = |held: bool| {
        let before = storage.stats();
        let mut hold = None;
        for batch in queries.chunks(8192) {
            let mut r = match hold.take() {
                Some(h) => t.resume_window_reader(h),
                None => t.window_reader(),
            };
            for &q in batch {
                check(&mut r, q);
            }
            if held {
                hold = Some(r.into_hold());
            }
        }
        (storage.stats() - before).blocks_read(IoClass::Leaf)
    };
    let with_hold = walk(true);
    let per_batch = walk(false);
    assert!(with_hold < blocks + blocks / 8, "{with_hold} of {blocks}");
    assert!(
        per_batch > with_hold + blocks / 4,
        "{per_batch} {with_hold}"
    );

    let mut r = t.window_reader();
    for &q in &queries[..100_000] {
        check(&mut r, q);
    }
    let mut r = t.resume_window_reader(r.into_hold());
    for &q in queries[..50_000].iter().step_by(7) {
        check(&mut r, q);
    }
    // A hold of another table's device is not used: the reader starts afresh on `u`, whose
    // keys are the odd numbers (a resumed run of `t` would answer with `t`'s records).
    let odd: Vec<u64> = (0..300_000u64).map(|i| i * 2 + 1).collect();
    let other_storage = Storage::ram();
    write_u64(&other_storage, "u", &odd);
    let u = Table::<u64>::open(&other_storage, "u").unwrap();
    let mut r = u.resume_window_reader(r.into_hold());
    for q in (0..600_000u64).step_by(11) {
        assert_window_answer(&mut r, &odd, q, 129);
    }
}
