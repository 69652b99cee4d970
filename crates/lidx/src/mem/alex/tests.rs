//! Structural invariants of [`Alex`] under bulk loads and random updates: every data node's
//! layout, the leaf chain in key order, child runs aligned to their duplication, and every key
//! reachable by routing.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::data_node;
use super::inner_node::LEAF;
use super::map::FIRST_LEAF;
use super::*;
use crate::error::Error;
use crate::map::OrderedMap;

/// Small nodes, so that a few thousand keys make a deep tree with many splits.
fn small() -> AlexParams {
    AlexParams {
        max_node_bytes: 4096,
        ..AlexParams::default()
    }
}

fn check<K: AlexKey, V: Default>(map: &Alex<K, V>) {
    // Child runs: aligned, of the child's duplication, each child in one run.
    let mut reached = vec![0usize; map.leaves.len()];
    let mut stack = vec![map.root];
    while let Some(node) = stack.pop() {
        if node & LEAF != 0 {
            reached[(node & !LEAF) as usize] += 1;
            continue;
        }
        let inner = &map.inners[node as usize];
        assert!(inner.children.len().is_power_of_two());
        let mut i = 0;
        while i < inner.children.len() {
            let child = inner.children[i];
            let run = 1usize << map.duplication_of(child);
            assert_eq!(i % run, 0, "run alignment");
            assert!(
                inner.children[i..i + run].iter().all(|&c| c == child),
                "run"
            );
            stack.push(child);
            i += run;
        }
    }
    assert!(
        reached.iter().all(|&r| r == 1),
        "every leaf in the tree once"
    );
    // The chain visits every leaf, in key order, and every key routes to its leaf.
    let (mut leaf, mut seen, mut count) = (FIRST_LEAF, 0, 0);
    let mut last: Option<K> = None;
    while leaf != data_node::NIL {
        let node = &map.leaves[leaf as usize];
        node.check();
        for i in (0..node.capacity()).filter(|&i| node.is_occupied(i)) {
            let k = node.keys[i];
            assert!(last.is_none_or(|l| l.key_lt(&k)), "chain order");
            assert_eq!(map.descend(k.to_model()).0, leaf, "routing of {k:?}");
            last = Some(k);
            count += 1;
        }
        if node.next != data_node::NIL {
            assert_eq!(map.leaves[node.next as usize].prev, leaf);
        }
        seen += 1;
        leaf = node.next;
    }
    assert_eq!(seen, map.leaves.len());
    assert_eq!(count, map.len());
}

#[test]
fn bulk_load_shapes_skewed_keys_into_a_tree() {
    let entries: Vec<(u64, u64)> = (0..20_000u64).map(|i| (i * i * i + i, i)).collect();
    let map = Alex::bulk_load(entries.clone(), small()).unwrap();
    check(&map);
    assert!(
        map.stats().inner_nodes > 0 && map.stats().data_nodes > 10,
        "{:?}",
        map.stats()
    );
    for (k, v) in &entries {
        assert_eq!(map.get(k), Some(v));
    }
}

#[test]
fn appends_past_the_loaded_range_widen_the_root() {
    let mut map = Alex::bulk_load((0..1000u64).map(|i| (i * 10, i)).collect(), small()).unwrap();
    let loaded_nodes = map.stats().data_nodes;
    assert_eq!(map.retrains(), AlexRetrains::default());
    for i in 1000..20_000u64 {
        assert_eq!(map.insert(i * 10, i).unwrap(), None);
    }
    for i in (0..1000u64).rev() {
        assert_eq!(map.insert(i * 10 + 5, i).unwrap(), None);
    }
    check(&map);
    assert_eq!(map.len(), 21_000);
    // The root widens for the appends: the tree stays as shallow as the bulk load made it
    // (before it did, the right edge deepened to 19 levels here).
    assert!(map.stats().depth <= 3, "{:?}", map.stats());
    // Every split and widening adds data nodes (empty halves add more); appends grow nodes
    // first.
    let retrains = map.retrains();
    let grown = map.stats().data_nodes - loaded_nodes;
    assert!(retrains.widenings.count > 0, "{retrains:?}");
    assert!(
        (retrains.splits.count + retrains.widenings.count) as usize <= grown,
        "{retrains:?}"
    );
    assert!(retrains.expansions.count > 0, "{retrains:?}");
    let total = retrains.total();
    assert_eq!(
        total.count,
        retrains.expansions.count
            + retrains.retrains.count
            + retrains.splits.count
            + retrains.widenings.count
    );
    assert!(total.total >= retrains.splits.total);
    assert_eq!(
        map.insert(5, 0).unwrap(),
        Some(0),
        "an update reshapes nothing"
    );
    assert_eq!(map.retrains(), retrains);
}

#[test]
fn removes_shrink_nodes() {
    let mut map = Alex::bulk_load((0..5000u64).map(|i| (i, i)).collect(), small()).unwrap();
    let full = map.size_in_bytes();
    for i in (0..5000u64).filter(|i| i % 10 != 0) {
        assert_eq!(map.remove(&i), Some(i));
    }
    check(&map);
    assert!(
        map.size_in_bytes() < full / 2,
        "{} vs {full}",
        map.size_in_bytes()
    );
}

#[test]
fn bad_parameters_are_refused() {
    let bad = AlexParams {
        init_density_percent: 90,
        ..AlexParams::default()
    };
    assert!(matches!(
        Alex::<u64, u64>::new(bad),
        Err(Error::InvalidParameter { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_updates_keep_the_invariants(
        start in proptest::collection::btree_set(any::<u16>(), 0..400),
        ops in proptest::collection::vec((0u8..3, any::<u16>()), 0..1500),
    ) {
        let spread = |k: u16| u64::from(k) * u64::from(k) * 1_000_003;
        let entries: Vec<(u64, u64)> = start.iter().map(|&k| (spread(k), u64::from(k))).collect();
        let mut map = Alex::bulk_load(entries.clone(), small()).unwrap();
        let mut reference: BTreeMap<u64, u64> = entries.into_iter().collect();
        for (op, k) in ops {
            let key = spread(k);
            match op {
                0 | 1 => prop_assert_eq!(map.insert(key, u64::from(op)).unwrap(), reference.insert(key, u64::from(op))),
                _ => prop_assert_eq!(map.remove(&key), reference.remove(&key)),
            }
        }
        check(&map);
        prop_assert!(map.range(..).map(|(k, v)| (*k, *v)).eq(reference.into_iter()));
    }

    #[test]
    fn appends_and_far_keys_keep_the_invariants(
        start in proptest::collection::btree_set(0u64..100_000, 0..300),
        ops in proptest::collection::vec((0u8..5, 1u64..5_000), 0..3000),
    ) {
        // Runs of appends past the largest key (steps of 1 to 5000), far jumps (up to 5M past
        // it), random inserts among the keys and removes: the root widens and nodes split
        // into empty halves; answers stay the model's.
        let entries: Vec<(u64, u64)> = start.iter().map(|&k| (k, k)).collect();
        let mut map = Alex::bulk_load(entries.clone(), small()).unwrap();
        let mut reference: BTreeMap<u64, u64> = entries.into_iter().collect();
        let mut next = reference.keys().next_back().map_or(0, |k| k + 1);
        for (op, step) in ops {
            let key = match op {
                0 | 1 => { next += step; next }
                2 => { next += step * 1000; next }
                _ => step * 37,
            };
            match op {
                4 => prop_assert_eq!(map.remove(&key), reference.remove(&key)),
                _ => prop_assert_eq!(map.insert(key, step).unwrap(), reference.insert(key, step)),
            }
        }
        check(&map);
        prop_assert!(map.range(..).map(|(k, v)| (*k, *v)).eq(reference.into_iter()));
        for (k, v) in map.range(..).map(|(k, v)| (*k, *v)).collect::<Vec<_>>() {
            prop_assert_eq!(map.get(&k), Some(&v));
        }
    }
}

#[test]
fn sparse_appends_raise_the_root_and_stay_shallow() {
    // Appends ever further apart (i^2 * 10), small nodes: the root's domain doubles many
    // times, the root reaches its largest fanout (512 slots) and gets parents.
    let key = |i: u64| i * i * 10;
    let mut map = Alex::bulk_load((0..100u64).map(|i| (key(i), i)).collect(), small()).unwrap();
    for i in 100..50_000u64 {
        assert_eq!(map.insert(key(i), i).unwrap(), None);
    }
    check(&map);
    let stats = map.stats();
    assert!(map.retrains().widenings.count > 9, "{:?}", map.retrains());
    assert!(stats.depth >= 3 && stats.depth <= 6, "{stats:?}");
    for i in (0..50_000u64).step_by(7) {
        assert_eq!(map.get(&key(i)), Some(&i));
    }
}

#[test]
fn dense_appends_keep_the_default_tree_shallow_and_one_far_key_widens_nothing() {
    let mut map: Alex<u64, u64> = Alex::new(AlexParams::default()).unwrap();
    for i in 0..300_000u64 {
        assert_eq!(map.insert(i * 3, i).unwrap(), None);
    }
    assert!(map.stats().depth <= 2, "{:?}", map.stats());
    assert!(map.retrains().widenings.count > 0, "{:?}", map.retrains());
    let (widenings, slots) = (
        map.retrains().widenings,
        map.inners[map.root as usize].children.len(),
    );
    assert_eq!(map.insert(u64::MAX / 2, 0).unwrap(), None);
    for i in 300_000..300_010u64 {
        assert_eq!(map.insert(i * 3, i).unwrap(), None);
    }
    assert_eq!(
        map.retrains().widenings,
        widenings,
        "one far key is no reason to widen"
    );
    assert_eq!(map.inners[map.root as usize].children.len(), slots);
    check(&map);
    assert_eq!(map.get(&(u64::MAX / 2)), Some(&0));
}

/// Values that need a drop move out of an old node once, and the default values of its gaps are
/// dropped once (`layout`): every value alive, gap defaults included, is counted, so between
/// calls the count is the slots of all data nodes. A value read out twice would be dropped
/// twice (the count too low), a gap never dropped would leave it too high.
#[test]
fn owned_values_survive_resizes_and_splits_exactly_once() {
    use std::cell::Cell;
    use std::collections::BTreeSet;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    thread_local! {
        static LIVE: Cell<i64> = const { Cell::new(0) };
    }
    fn count(by: i64) {
        LIVE.with(|live| live.set(live.get() + by));
    }
    /// A value that counts itself: `true` when inserted, `false` when a default.
    struct Counted(bool);
    impl Counted {
        fn new(real: bool) -> Self {
            count(1);
            Counted(real)
        }
    }
    impl Default for Counted {
        fn default() -> Self {
            Counted::new(false)
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            count(-1);
        }
    }
    let live = || LIVE.with(Cell::get);
    let slots = |map: &Alex<u64, Counted>| -> i64 {
        map.leaves.iter().map(|leaf| leaf.capacity() as i64).sum()
    };

    let mut map: Alex<u64, Counted> = Alex::new(small()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let keys: Vec<u64> = (0..20_000).map(|_| rng.gen::<u64>() >> 20).collect();
    let mut held = BTreeSet::new();
    for &k in &keys {
        if map.insert(k, Counted::new(true)).unwrap().is_none() {
            held.insert(k);
        }
    }
    let r = map.retrains();
    assert!(r.expansions.count > 0 && r.splits.count > 0, "{r:?}");
    assert_eq!(live(), slots(&map));
    for &k in keys.iter().step_by(2) {
        if held.remove(&k) {
            assert!(map.remove(&k).unwrap().0);
        }
    }
    assert_eq!(live(), slots(&map));
    check(&map);
    for k in &held {
        assert!(map.get(k).is_some_and(|v| v.0), "{k}");
    }
    drop(map);
    assert_eq!(live(), 0);
}
