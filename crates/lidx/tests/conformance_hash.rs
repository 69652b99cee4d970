//! The hash baseline (`lidx::mem::HashKeyMap`, a `KeyMap` without key order) against
//! `BTreeMap`: seeded and proptest operation sequences of inserts, updates, removes, gets,
//! lower bounds and scans (correct, by a full pass), and the bulk load's refusals.

use std::collections::BTreeMap;

use lidx::mem::HashKeyMap;
use lidx::mem::KeyMap;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Remove(u64),
    Get(u64),
    LowerBound(u64),
    Scan(u64, usize),
}

fn check(map: &mut HashKeyMap, reference: &mut BTreeMap<u64, u64>, op: Op) {
    match op {
        Op::Insert(k, v) => assert_eq!(map.insert(k, v).unwrap(), reference.insert(k, v)),
        Op::Remove(k) => assert_eq!(map.remove(k), reference.remove(&k)),
        Op::Get(k) => assert_eq!(map.get(k), reference.get(&k).copied()),
        Op::LowerBound(k) => assert_eq!(
            map.lower_bound(k),
            reference.range(k..).next().map(|(k, v)| (*k, *v))
        ),
        Op::Scan(k, limit) => {
            let mut out = vec![(7, 7)];
            map.scan(k, limit, &mut out);
            let want: Vec<(u64, u64)> = std::iter::once((7, 7))
                .chain(reference.range(k..).take(limit).map(|(k, v)| (*k, *v)))
                .collect();
            assert_eq!(out, want, "scan {k} {limit}");
        }
    }
    assert_eq!(map.len(), reference.len());
}

fn key_op(key: u64, kind: u8, value: u64, limit: usize) -> Op {
    match kind % 5 {
        0 => Op::Insert(key, value),
        1 => Op::Remove(key),
        2 => Op::Get(key),
        3 => Op::LowerBound(key),
        _ => Op::Scan(key, limit),
    }
}

#[test]
fn seeded_operations_match_btreemap() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x4a5);
    let mut initial: Vec<u64> = (0..500).map(|_| rng.gen_range(0..5000)).collect();
    initial.extend([0, u64::MAX]);
    initial.sort_unstable();
    initial.dedup();
    let entries: Vec<(u64, u64)> = initial.iter().map(|&k| (k, k / 2)).collect();
    let mut reference: BTreeMap<u64, u64> = entries.iter().copied().collect();
    let mut map = HashKeyMap::load_sorted(entries).unwrap();
    assert!(!map.ordered());
    for step in 0..5000u64 {
        let key = if rng.gen_bool(0.05) {
            u64::MAX - rng.gen_range(0..2)
        } else {
            rng.gen_range(0..5200)
        };
        let op = key_op(key, rng.gen(), step, rng.gen_range(0..40));
        check(&mut map, &mut reference, op);
    }
    assert!(map.size_in_bytes() >= map.len() * 16);
}

#[test]
fn bulk_load_refuses_bad_input() {
    assert!(matches!(
        HashKeyMap::load_sorted(vec![(1, 0), (3, 0), (2, 0)]),
        Err(lidx::Error::OutOfOrder { index: 2, .. })
    ));
    assert!(matches!(
        HashKeyMap::load_sorted(vec![(1, 0), (1, 0)]),
        Err(lidx::Error::DuplicateKey { index: 1, .. })
    ));
    let mut empty = HashKeyMap::load_sorted(Vec::new()).unwrap();
    assert_eq!(empty.remove(5), None);
    assert_eq!(empty.lower_bound(0), None);
}

proptest! {
    #[test]
    fn operations_match_btreemap(
        ops in proptest::collection::vec((any::<u8>(), 0u64..300, any::<u64>(), 0usize..20), 0..300),
    ) {
        let mut map = HashKeyMap::new();
        let mut reference = BTreeMap::new();
        for (kind, key, value, limit) in ops {
            check(&mut map, &mut reference, key_op(key, kind, value, limit));
        }
    }
}
