//! Joins on unsorted tables (paper 000 §5.4): the B+-tree route and the learned route against a
//! `BTreeMap` reference, for `u64` and 16-byte string keys, one and several threads, and skewed
//! data whose bucket pairs exceed the memory budget.

use std::collections::BTreeMap;

use lidx::io::Storage;
use lidx::join::{join, JoinAlgo, JoinParams, JoinReport, Table, TableKey, TableRef, TableWriter};
use lidx::{Error, Key, Str16};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

type Output<K> = Vec<(K, Vec<u8>, Vec<u8>)>;

/// A table's `(key, value)` records.
type Rows<K> = Vec<(K, Vec<u8>)>;

/// Writes `records` (key, value) in the given order.
fn write<K: TableKey>(storage: &Storage, name: &str, vsize: usize, records: &[(K, Vec<u8>)]) {
    let mut w = TableWriter::<K>::create(storage, name, vsize).unwrap();
    for (k, v) in records {
        w.push(k, v).unwrap();
    }
    w.finish().unwrap();
}

fn record<K: Key>(k: &K, v: &[u8]) -> Vec<u8> {
    let mut r = vec![0u8; K::SIZE];
    k.write_to(&mut r);
    r.extend_from_slice(v);
    r
}

/// Every pair of records with equal keys, in key order; ties by left then right record bytes.
fn reference<K: TableKey + Ord>(l: &[(K, Vec<u8>)], r: &[(K, Vec<u8>)]) -> Output<K> {
    let mut rm: BTreeMap<K, Vec<Vec<u8>>> = BTreeMap::new();
    for (k, v) in r {
        rm.entry(*k).or_default().push(record(k, v));
    }
    let mut lm: BTreeMap<K, Vec<Vec<u8>>> = BTreeMap::new();
    for (k, v) in l {
        lm.entry(*k).or_default().push(record(k, v));
    }
    let mut out = Vec::new();
    for (k, ls) in lm.iter_mut() {
        if let Some(rs) = rm.get_mut(k) {
            ls.sort();
            rs.sort();
            for a in ls.iter() {
                for b in rs.iter() {
                    out.push((*k, a.clone(), b.clone()));
                }
            }
        }
    }
    out
}

fn run<K: TableKey>(
    storage: &Storage,
    algo: JoinAlgo,
    tables: (&str, &str),
    threads: usize,
    memory: Option<u64>,
) -> lidx::Result<(Vec<Vec<u8>>, JoinReport)> {
    let at = |name| TableRef { storage, name };
    let params = JoinParams {
        algo,
        threads,
        memory,
        window: None,
    };
    let report = join::<K>(at(tables.0), at(tables.1), at("out"), &params)?;
    let out = Table::<K>::open(storage, "out")?;
    let mut scan = out.scan(0..out.len())?;
    let mut records = Vec::new();
    while scan.key().is_some() {
        records.push(scan.record().to_vec());
        scan.advance()?;
    }
    Ok((records, report))
}

/// The output records `(key, left value, right value)` of a reference join.
fn output_records<K: Key>(expected: &Output<K>) -> Vec<Vec<u8>> {
    expected
        .iter()
        .map(|(_, l, r)| {
            let mut rec = l.clone();
            rec.extend_from_slice(&r[K::SIZE..]);
            rec
        })
        .collect()
}

fn learned<K: TableKey>(
    storage: &Storage,
    memory: u64,
    threads: usize,
) -> lidx::Result<(Vec<Vec<u8>>, JoinReport)> {
    run::<K>(
        storage,
        JoinAlgo::UnsortedLearned,
        ("l", "r"),
        threads,
        Some(memory),
    )
}

fn btree<K: TableKey>(storage: &Storage, memory: u64) -> lidx::Result<Vec<Vec<u8>>> {
    Ok(run::<K>(
        storage,
        JoinAlgo::UnsortedBTree,
        ("l", "r"),
        1,
        Some(memory),
    )?
    .0)
}

/// Unique keys from `gen`; the right table is every `ratio`-th of them plus `extra` absent
/// ones, both shuffled.
fn tables<K: TableKey + Ord>(
    n: usize,
    ratio: usize,
    seed: u64,
    gen: impl Fn(&mut ChaCha8Rng) -> K,
) -> (Rows<K>, Rows<K>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < n + n / ratio / 4 + 1 {
        keys.insert(gen(&mut rng));
    }
    let mut keys: Vec<K> = keys.into_iter().collect();
    keys.shuffle(&mut rng);
    let absent = keys.split_off(n);
    let mut left: Rows<K> = keys
        .iter()
        .map(|k| (*k, rng.gen::<u64>().to_le_bytes().to_vec()))
        .collect();
    let mut right: Rows<K> = keys
        .iter()
        .step_by(ratio)
        .chain(absent.iter())
        .map(|k| (*k, rng.gen::<u32>().to_le_bytes().to_vec()))
        .collect();
    left.shuffle(&mut rng);
    right.shuffle(&mut rng);
    (left, right)
}

/// Both routes against the reference, and the learned route's checksum against sort-merge
/// on the same tables sorted.
fn check_both<K: TableKey + Ord>(l: &[(K, Vec<u8>)], r: &[(K, Vec<u8>)]) {
    let storage = Storage::ram();
    write(&storage, "l", 8, l);
    write(&storage, "r", 4, r);
    let (mut ls, mut rs) = (l.to_vec(), r.to_vec());
    ls.sort();
    rs.sort();
    write(&storage, "ls", 8, &ls);
    write(&storage, "rs", 4, &rs);
    let (_, sorted) = run::<K>(&storage, JoinAlgo::SortMerge, ("ls", "rs"), 1, None).unwrap();
    let expected = output_records(&reference(l, r));
    assert!(!expected.is_empty());
    assert_eq!(sorted.output_count, expected.len() as u64);
    assert_eq!(btree::<K>(&storage, 16 << 20).unwrap(), expected);
    for threads in [1, 3] {
        let (got, report) = learned::<K>(&storage, 64 << 20, threads).unwrap();
        assert_eq!(got, expected, "{threads} threads");
        assert_eq!(report.checksum, sorted.checksum);
        assert!(report.index_seconds > 0.0 && report.index_file_bytes > 0);
    }
}

#[test]
fn u64_keys_ratio_1_and_10() {
    for ratio in [1, 10] {
        let (l, r) = tables::<u64>(20_000, ratio, 7 + ratio as u64, |rng| {
            (rng.gen::<f64>().ln() * -1e9) as u64
        });
        check_both(&l, &r);
    }
}

#[test]
fn str16_keys() {
    let (l, r) = tables::<Str16>(10_000, 3, 11, |rng| {
        let mut k = [0u8; 16];
        rng.fill(&mut k[..]);
        k[0] = b'a' + k[0] % 4;
        k
    });
    check_both(&l, &r);
}

#[test]
fn empty_and_tiny_tables() {
    let storage = Storage::ram();
    write::<u64>(&storage, "l", 8, &[]);
    write::<u64>(&storage, "r", 4, &[(5, vec![1; 4])]);
    assert!(btree::<u64>(&storage, 16 << 20).unwrap().is_empty());
    assert!(learned::<u64>(&storage, 16 << 20, 2).unwrap().0.is_empty());
    assert!(
        run::<u64>(&storage, JoinAlgo::UnsortedLearned, ("r", "r"), 1, None)
            .unwrap()
            .0
            .len()
            == 1
    );
    write::<u64>(&storage, "l", 8, &[(5, vec![2; 8]), (u64::MAX, vec![3; 8])]);
    write::<u64>(
        &storage,
        "r",
        4,
        &[(u64::MAX, vec![4; 4]), (5, vec![1; 4]), (0, vec![0; 4])],
    );
    let expected = output_records(&vec![
        (5, record(&5u64, &[2; 8]), record(&5u64, &[1; 4])),
        (
            u64::MAX,
            record(&u64::MAX, &[3; 8]),
            record(&u64::MAX, &[4; 4]),
        ),
    ]);
    assert_eq!(btree::<u64>(&storage, 16 << 20).unwrap(), expected);
    assert_eq!(learned::<u64>(&storage, 16 << 20, 1).unwrap().0, expected);
}

/// Strings that share their first 8 bytes all have one model value, so they all land in one
/// bucket: with a small budget that bucket pair is far larger than memory and is joined in key
/// sub-ranges. Duplicate keys (which only the learned route accepts) ride along.
#[test]
fn skewed_buckets_larger_than_memory() {
    let (mut l, mut r) = tables::<Str16>(60_000, 1, 5, |rng| {
        let mut k = *b"same8byt________";
        rng.fill(&mut k[8..]);
        k
    });
    l.extend(l[..300].to_vec());
    r.extend(r[100..200].to_vec());
    let storage = Storage::ram();
    write(&storage, "l", 8, &l);
    write(&storage, "r", 4, &r);
    let expected = output_records(&reference(&l, &r));
    let (got, report) = learned::<Str16>(&storage, 3 << 20, 2).unwrap();
    assert_eq!(got, expected);
    // Every key is in one bucket pair of ~120k records, far above what 3 MiB holds: the pair
    // is re-read once per key sub-range, so the join reads its bucket files several times.
    assert!(
        report.blocks_read > 3 * report.index_file_bytes / 4096,
        "{report:?}"
    );
    assert!(matches!(
        btree::<Str16>(&storage, 16 << 20),
        Err(Error::DuplicateKey { .. })
    ));
}

#[test]
fn too_little_memory_is_a_typed_error() {
    let (l, r) = tables::<u64>(2000, 1, 3, |rng| rng.gen());
    let storage = Storage::ram();
    write(&storage, "l", 8, &l);
    write(&storage, "r", 4, &r);
    for result in [
        learned::<u64>(&storage, 10_000, 1).map(|_| ()),
        btree::<u64>(&storage, 10_000).map(|_| ()),
    ] {
        assert!(matches!(
            result,
            Err(Error::InvalidParameter { name: "memory", .. })
        ));
    }
}
