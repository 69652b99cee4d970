//! Every join algorithm against a reference intersection: same output count, same checksum,
//! same records, for u64 and 16-byte string keys, table ratios 1 and 10, 1 and 3 threads; plus
//! the typed errors for unsorted, duplicated and mismatched inputs and memory budgets.

use std::collections::BTreeMap;

use lidx::io::Storage;
use lidx::join::{join, JoinAlgo, JoinParams, Table, TableKey, TableRef, TableWriter};
use lidx::raw::join::output::record_hash;
use lidx::{Error, Str16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn value(k: &[u8], side: u8, size: usize) -> Vec<u8> {
    (0..size).map(|i| k[i % k.len()] ^ side ^ i as u8).collect()
}

fn write<K: TableKey>(storage: &Storage, name: &str, keys: &[K], side: u8, vsize: usize) {
    let mut w = TableWriter::<K>::create(storage, name, vsize).unwrap();
    for k in keys {
        let mut kb = [0u8; 16];
        k.write_to(&mut kb);
        w.push(k, &value(&kb[..K::SIZE], side, vsize)).unwrap();
    }
    w.finish().unwrap();
}

/// Sorted unique keys: `n` of them, with a long shared prefix for strings.
fn keys_u64(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = BTreeMap::new();
    while m.len() < n {
        // A lognormal-ish spread: a random exponent.
        let e = rng.gen_range(0..40);
        m.insert(rng.gen::<u64>() >> (24 + e / 2), ());
    }
    m.into_keys().collect()
}

fn to_str(k: u64) -> Str16 {
    // 8 bytes of shared prefix, then the key: every model value of the first 8 bytes is equal
    // for half the keys, the worst case for a non-injective model map.
    let mut s = *b"ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    if k.is_multiple_of(2) {
        s[2..6].copy_from_slice(b"long");
    }
    s[8..].copy_from_slice(&k.to_be_bytes());
    s
}

fn sample<K: Copy>(keys: &[K], ratio: usize, seed: u64) -> Vec<K> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    keys.iter()
        .copied()
        .filter(|_| ratio == 1 || rng.gen_range(0..ratio) == 0)
        .collect()
}

fn expected<K: TableKey + Ord>(left: &[K], right: &[K], lv: usize, rv: usize) -> (u64, u64) {
    let r: std::collections::BTreeSet<K> = right.iter().copied().collect();
    let mut sum = 0u64;
    let mut count = 0;
    for k in left.iter().filter(|k| r.contains(k)) {
        let mut kb = [0u8; 16];
        k.write_to(&mut kb);
        let mut rec = kb[..K::SIZE].to_vec();
        rec.extend(value(&kb[..K::SIZE], 1, lv));
        rec.extend(value(&kb[..K::SIZE], 2, rv));
        sum = sum.wrapping_add(record_hash(&rec));
        count += 1;
    }
    (count, sum)
}

fn all_algorithms<K: TableKey + Ord>(big: &[K], small: &[K]) {
    let storage = Storage::ram();
    // The left table is the smaller one in one run and the larger in the other, so both
    // role assignments are exercised; left values are 8 bytes, right 4.
    for (left, right) in [(small, big), (big, small)] {
        write(&storage, "left", left, 1, 8);
        write(&storage, "right", right, 2, 4);
        let want = expected(left, right, 8, 4);
        for algo in JoinAlgo::ALL {
            for threads in [1, 3] {
                let params = JoinParams {
                    algo,
                    threads,
                    ..JoinParams::default()
                };
                let at = |name| TableRef {
                    storage: &storage,
                    name,
                };
                let report = join::<K>(at("left"), at("right"), at("out"), &params)
                    .unwrap_or_else(|e| panic!("{} threads {threads}: {e}", algo.name()));
                assert_eq!(
                    (report.output_count, report.checksum),
                    (want.0, Some(want.1)),
                    "{} threads {threads}",
                    algo.name()
                );
                let out = Table::<K>::open(&storage, "out").unwrap();
                assert_eq!(out.len(), want.0);
                assert_eq!(out.value_size(), 12);
                let keys = out.read_keys().unwrap();
                if algo.output_sorted() {
                    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{}", algo.name());
                }
            }
        }
    }
}

#[test]
fn every_algorithm_agrees_u64() {
    let big = keys_u64(20_000, 1);
    for ratio in [1, 10] {
        let mut small = sample(&big, ratio, 2);
        // Keys absent from the big table, below, between and above its keys.
        small.extend([0, 3, big[big.len() / 2] + 1, u64::MAX]);
        small.sort_unstable();
        small.dedup();
        all_algorithms(&big, &small);
    }
}

#[test]
fn every_algorithm_agrees_str16() {
    let big: Vec<Str16> = {
        let mut v: Vec<Str16> = keys_u64(8_000, 3).into_iter().map(to_str).collect();
        v.sort_unstable();
        v
    };
    for ratio in [1, 10] {
        let mut small = sample(&big, ratio, 4);
        small.push([0; 16]);
        small.push([0xff; 16]);
        small.push(to_str(5));
        small.sort_unstable();
        small.dedup();
        all_algorithms(&big, &small);
    }
}

fn run(
    storage: &Storage,
    algo: JoinAlgo,
    memory: Option<u64>,
) -> lidx::Result<lidx::join::JoinReport> {
    let at = |name| TableRef { storage, name };
    join::<u64>(
        at("left"),
        at("right"),
        at("out"),
        &JoinParams {
            algo,
            memory,
            ..JoinParams::default()
        },
    )
}

#[test]
fn unsorted_and_duplicated_tables_are_rejected() {
    let storage = Storage::ram();
    write(&storage, "left", &[1u64, 5, 3, 7], 1, 8);
    write(&storage, "right", &(0..1000u64).collect::<Vec<_>>(), 2, 8);
    for algo in JoinAlgo::ALL {
        let r = run(&storage, algo, None);
        // The hash joins and the unsorted joins take tables in any order.
        let any_order = matches!(
            algo,
            JoinAlgo::Hash
                | JoinAlgo::GraceHash
                | JoinAlgo::UnsortedBTree
                | JoinAlgo::UnsortedLearned
        );
        if any_order {
            assert!(r.is_ok(), "{}", algo.name());
        } else {
            assert!(
                matches!(r, Err(Error::OutOfOrder { index: 2, .. })),
                "{} {r:?}",
                algo.name()
            );
        }
    }
    write(&storage, "left", &[1u64, 5, 5, 7], 1, 8);
    for algo in JoinAlgo::ALL {
        let r = run(&storage, algo, None);
        if algo == JoinAlgo::UnsortedLearned {
            // Learned partitioning joins repeated keys (a x b records, tests/join_unsorted.rs).
            assert!(r.is_ok(), "{r:?}");
            continue;
        }
        assert!(
            matches!(r, Err(Error::DuplicateKey { .. })),
            "{} {r:?}",
            algo.name()
        );
    }
    // A duplicate in the indexed (larger) table.
    write(&storage, "left", &[1u64, 5], 1, 8);
    write(&storage, "right", &[1u64, 2, 2, 3, 9], 2, 8);
    let r = run(&storage, JoinAlgo::Inlj(lidx::join::InljIndex::Pgm), None);
    assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
    let r = run(&storage, JoinAlgo::SortMerge, None);
    assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
}

#[test]
fn key_types_must_match() {
    let storage = Storage::ram();
    write(&storage, "left", &[1u64, 2], 1, 8);
    write(&storage, "right", &[to_str(1)], 2, 8);
    let r = run(&storage, JoinAlgo::SortMerge, None);
    assert!(matches!(r, Err(Error::KeyTypeMismatch { .. })), "{r:?}");
}

#[test]
fn memory_budgets() {
    let storage = Storage::ram();
    let big = keys_u64(30_000, 7);
    write(&storage, "left", &big, 1, 8);
    write(&storage, "right", &sample(&big, 2, 8), 2, 8);
    let full = run(&storage, JoinAlgo::Hash, None).unwrap();
    let r = run(&storage, JoinAlgo::Hash, Some(64 << 10));
    assert!(
        matches!(r, Err(Error::InvalidParameter { name: "memory", .. })),
        "{r:?}"
    );
    let grace = run(&storage, JoinAlgo::GraceHash, Some(64 << 10)).unwrap();
    assert_eq!(
        (grace.output_count, grace.checksum),
        (full.output_count, full.checksum)
    );
    assert!(grace.blocks_written > full.blocks_written);
    let r = run(&storage, JoinAlgo::GraceHash, Some(100));
    assert!(
        matches!(r, Err(Error::InvalidParameter { name: "memory", .. })),
        "{r:?}"
    );
}

#[test]
fn zero_threads_and_bad_windows_are_invalid() {
    let storage = Storage::ram();
    write(&storage, "left", &[1u64], 1, 8);
    write(&storage, "right", &[1u64], 2, 8);
    let at = |name| TableRef {
        storage: &storage,
        name,
    };
    let params = JoinParams {
        threads: 0,
        ..JoinParams::default()
    };
    assert!(matches!(
        join::<u64>(at("left"), at("right"), at("out"), &params),
        Err(Error::InvalidParameter {
            name: "threads",
            ..
        })
    ));
    let params = JoinParams {
        algo: JoinAlgo::Inlj(lidx::join::InljIndex::Pgm),
        window: Some(3),
        ..JoinParams::default()
    };
    assert!(matches!(
        join::<u64>(at("left"), at("right"), at("out"), &params),
        Err(Error::InvalidParameter { name: "window", .. })
    ));
    assert!(matches!(
        JoinAlgo::parse("nested"),
        Err(Error::InvalidParameter { name: "algo", .. })
    ));
    for algo in JoinAlgo::ALL {
        assert_eq!(JoinAlgo::parse(algo.name()).unwrap(), algo);
    }
}

#[test]
fn string_keys_sharing_twelve_bytes_join_exactly() {
    // Keys that share their first 12 bytes: every model sees one value for all of them, the
    // paper's base-256 double would too; the windows widen to the whole run and stay exact.
    let key = |v: u32| {
        let mut s = *b"shared-prefix\0\0\0";
        s[12..].copy_from_slice(&v.to_be_bytes());
        s
    };
    let big: Vec<Str16> = (0..5000u32).map(|v| key(v * 3)).collect();
    let small: Vec<Str16> = (0..2000u32).map(|v| key(v * 5)).collect();
    all_algorithms(&big, &small);
}
