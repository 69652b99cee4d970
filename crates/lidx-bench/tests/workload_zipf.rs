//! Workloads are reproducible from their seed, choose existing keys, and zipf is skewed.

use std::collections::HashMap;

use lidx_bench::workload::{KeyChoice, Workload};
use lidx_bench::BenchError;

fn keys() -> Vec<u64> {
    (0..20_000u64).map(|i| i * 3 + 1).collect()
}

fn top_share(queries: &[u64], top: usize) -> f64 {
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for &q in queries {
        *counts.entry(q).or_default() += 1;
    }
    let mut counts: Vec<usize> = counts.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts.iter().take(top).sum::<usize>() as f64 / queries.len() as f64
}

#[test]
fn same_seed_same_queries_other_seed_other_queries() {
    let keys = keys();
    for spec in ["lookup", "lookup:zipf"] {
        let w = Workload::parse(spec).unwrap();
        let a = w.generate(&keys, 5_000, 11).unwrap();
        assert_eq!(a, w.generate(&keys, 5_000, 11).unwrap());
        assert_ne!(a, w.generate(&keys, 5_000, 12).unwrap());
        assert!(a.iter().all(|q| keys.binary_search(q).is_ok()));
    }
}

#[test]
fn zipf_is_skewed_and_its_hot_keys_are_scattered() {
    let keys = keys();
    let zipf = Workload::parse("lookup:zipf")
        .unwrap()
        .generate(&keys, 100_000, 5)
        .unwrap();
    let uniform = Workload::parse("lookup:uniform")
        .unwrap()
        .generate(&keys, 100_000, 5)
        .unwrap();
    // With theta 0.99 over 20 000 ranks the 10 hottest ranks draw about 27% of the queries;
    // uniform choice gives the 10 most frequent keys well under 1%.
    let (z, u) = (top_share(&zipf, 10), top_share(&uniform, 10));
    assert!(z > 0.2, "zipf top-10 share {z}");
    assert!(u < 0.01, "uniform top-10 share {u}");
    // Scrambling: the hottest key is not simply the smallest one.
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for &q in &zipf {
        *counts.entry(q).or_default() += 1;
    }
    let hottest = counts.iter().max_by_key(|(_, &c)| c).map(|(&k, _)| k);
    assert_ne!(hottest, Some(keys[0]));
}

#[test]
fn workload_specs_parse_and_label() {
    assert_eq!(
        Workload::parse("lookup").unwrap(),
        Workload::Lookup(KeyChoice::Uniform)
    );
    assert_eq!(
        Workload::parse("lookup:zipf").unwrap().label(),
        "lookup:zipf"
    );
    assert_eq!(
        Workload::parse("lookup:uniform").unwrap().label(),
        "lookup:uniform"
    );
    for bad in ["scan", "lookup:zipfian", ""] {
        assert!(matches!(
            Workload::parse(bad),
            Err(BenchError::BadSpec { .. })
        ));
    }
}

#[test]
fn duplicates_and_a_single_key_work() {
    let one = [9u64];
    let w = Workload::parse("lookup:zipf").unwrap();
    assert_eq!(w.generate(&one, 100, 1).unwrap(), vec![9; 100]);
    let dups = [1u64, 1, 1, 2];
    let q = Workload::parse("lookup")
        .unwrap()
        .generate(&dups, 1_000, 1)
        .unwrap();
    assert!(q.iter().all(|k| *k == 1 || *k == 2));
    assert!(matches!(
        w.generate(&[], 1, 1),
        Err(BenchError::NoKeys { .. })
    ));
}
