//! LIPP's structural invariants after bulk loads and random operations, rebuilds and shrinks
//! included: every key sits below the slot its node predicts, every child holds at least two
//! entries, every node's `size` is its entry count, a scan is in key order. The map's
//! behaviour against `BTreeMap` is in `tests/conformance_lipp.rs`.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::node::Node;
use super::slots::SlotRef;
use super::{Lipp, LippKey, LippParams};
use crate::{Error, OrderedMap};

/// Checks every invariant below `node` and returns its entry count.
fn check_node<K: LippKey, V>(node: &Node<K, V>, is_root: bool) -> usize {
    let slots = node.len();
    let mut count = 0;
    for (i, slot) in node.iter().enumerate() {
        match slot {
            SlotRef::Null => {}
            SlotRef::Data(k, _) => {
                assert_eq!(
                    node.model.predict(k.to_model(), slots),
                    i,
                    "{k:?} misplaced"
                );
                count += 1;
            }
            SlotRef::Node(child) => {
                let below = check_node(child, false);
                assert!(below >= 2, "a child of {below} entries");
                let mut keys = Vec::new();
                collect_keys(child, &mut keys);
                for k in keys {
                    assert_eq!(
                        node.model.predict(k.to_model(), slots),
                        i,
                        "{k:?} misplaced"
                    );
                }
                count += below;
            }
        }
    }
    assert_eq!(node.size, count, "size");
    assert!(is_root || count >= 2);
    count
}

fn collect_keys<K: Copy, V>(node: &Node<K, V>, out: &mut Vec<K>) {
    for slot in node.iter() {
        match slot {
            SlotRef::Null => {}
            SlotRef::Data(k, _) => out.push(*k),
            SlotRef::Node(c) => collect_keys(c, out),
        }
    }
}

fn check<K: LippKey, V>(map: &Lipp<K, V>) {
    check_node(map.root(), true);
    let keys: Vec<K> = map.iter().map(|(k, _)| *k).collect();
    assert!(keys.windows(2).all(|w| w[0].key_cmp(&w[1]).is_lt()));
    assert_eq!(keys.len(), map.len());
}

fn eager() -> LippParams {
    LippParams {
        min_rebuild: 4,
        growth: 2,
        conflict_percent: 0,
        ..LippParams::default()
    }
}

#[test]
fn sequential_inserts_rebuild_and_stay_shallow() {
    let mut map = Lipp::new(LippParams::default()).unwrap();
    for k in 0..5000u64 {
        assert_eq!(map.insert(k * 3, k).unwrap(), None);
    }
    check(&map);
    fn depth<K, V>(n: &Node<K, V>) -> usize {
        1 + n.children().map(depth).max().unwrap_or(0)
    }
    assert!(depth(map.root()) < 16, "depth {}", depth(map.root()));
    assert_eq!(map.insert(30, 7).unwrap(), Some(10));
}

#[test]
fn removes_shrink_a_bulk_loaded_map() {
    let entries: Vec<(u64, u64)> = (0..20_000).map(|k| (k * k, k)).collect();
    let mut map = Lipp::bulk_load(entries, LippParams::default()).unwrap();
    let full = map.size_in_bytes();
    for k in 0..19_900u64 {
        assert_eq!(map.remove(&(k * k)), Some(k));
    }
    check(&map);
    assert!(
        map.size_in_bytes() * 20 < full,
        "{} of {full}",
        map.size_in_bytes()
    );
    assert_eq!(map.remove(&4), None);
}

#[test]
fn keys_that_round_together_in_f64_still_separate() {
    let base = 1u64 << 62;
    let entries: Vec<(u64, u64)> = [0, 1, 2, 3, 1 << 61, base, base + 1, base + 2, u64::MAX]
        .iter()
        .map(|&k| (k, k))
        .collect();
    let map = Lipp::bulk_load(entries.clone(), LippParams::default()).unwrap();
    check(&map);
    for (k, v) in entries {
        assert_eq!(map.get(&k), Some(&v));
    }
}

#[test]
fn bad_parameters_and_nan_are_refused() {
    for bad in [
        LippParams {
            growth: 1,
            ..LippParams::default()
        },
        LippParams {
            shrink: 0,
            ..LippParams::default()
        },
        LippParams {
            conflict_percent: 101,
            ..LippParams::default()
        },
    ] {
        assert!(matches!(
            Lipp::<u64, u64>::new(bad),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let mut map = Lipp::<f64, u8>::new(LippParams::default()).unwrap();
    assert!(matches!(
        map.insert(f64::NAN, 1),
        Err(Error::InvalidKey { .. })
    ));
    assert_eq!(map.remove(&f64::NAN), None);
    assert!(map.is_empty());
}

proptest! {
    #[test]
    fn invariants_hold_under_random_operations(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u32>(), 0..300),
        ops in proptest::collection::vec((0u8..3, any::<u16>()), 0..600),
        shift in 0u32..49,
        fmcd in any::<bool>(),
    ) {
        let key = |k: u16| u64::from(k) << shift;
        let params = LippParams { fmcd, ..eager() };
        let mut reference: BTreeMap<u64, u32> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut map = Lipp::bulk_load(reference.iter().map(|(&k, &v)| (k, v)).collect(), params)
            .unwrap();
        check(&map);
        for (i, (op, k)) in ops.into_iter().enumerate() {
            let k = key(k);
            if op == 0 {
                prop_assert_eq!(map.remove(&k), reference.remove(&k));
            } else {
                prop_assert_eq!(map.insert(k, i as u32).unwrap(), reference.insert(k, i as u32));
            }
            if i % 50 == 0 {
                check(&map);
            }
        }
        check(&map);
        prop_assert!(map.iter().map(|(k, v)| (*k, *v)).eq(reference.into_iter()));
    }
}

#[test]
fn a_u64_slot_costs_17_bytes() {
    let map = Lipp::bulk_load(vec![(1u64, 1u64), (2, 2)], LippParams::default()).unwrap();
    let slots = map.shape().slots;
    assert_eq!(slots, 8);
    assert_eq!(
        map.size_in_bytes(),
        std::mem::size_of::<Lipp<u64, u64>>()
            + std::mem::size_of::<super::node::Header>()
            + slots * 17
    );
}

#[test]
#[should_panic(expected = "is set while it holds")]
fn setting_an_occupied_slot_panics_rather_than_leaking_its_entry() {
    let mut node: Node<u64, u64> = Node::two((1, 10), 1, (2, 20), 2);
    let pos = node.model.predict(1, node.len());
    node.set(pos, super::slots::Slot::Data(3, 30));
}

/// The statistics of every node on `m`'s path from `node` down: (size, inserts, conflicts).
fn path_stats<K, V>(node: &Node<K, V>, m: u64) -> Vec<(usize, u32, u32)> {
    let mut stats = vec![(node.size, node.inserts, node.conflicts)];
    if let SlotRef::Node(child) = node.get(node.model.predict(m, node.len())) {
        stats.extend(path_stats(child, m));
    }
    stats
}

#[test]
fn an_insert_counts_on_its_path_only_and_an_update_counts_nothing() {
    let mut map = Lipp::new(LippParams::default()).unwrap();
    map.insert(10u64, 1u64).unwrap();
    // 20 meets 10 in the root's one slot: the root counts a conflict, the new child nothing.
    map.insert(20, 2).unwrap();
    assert_eq!(path_stats(map.root(), 10), [(2, 2, 1), (2, 0, 0)]);
    // 11 meets 10 in the child (two keys 10 apart over 8 slots): every node on the path
    // counts it and its conflict, the new grandchild starts at zero.
    map.insert(11, 3).unwrap();
    assert_eq!(
        path_stats(map.root(), 11),
        [(3, 3, 2), (3, 1, 1), (2, 0, 0)]
    );
    // 30 lands in a free slot of the child: counted, no conflict.
    map.insert(30, 4).unwrap();
    assert_eq!(path_stats(map.root(), 30), [(4, 4, 2), (4, 2, 1)]);
    // An update changes no statistic anywhere.
    assert_eq!(map.insert(11, 5).unwrap(), Some(3));
    assert_eq!(
        path_stats(map.root(), 11),
        [(4, 4, 2), (4, 2, 1), (2, 0, 0)]
    );
    check(&map);
}
