//! The ordered-map conformance suite: every [`OrderedMap`] implementation, at several node
//! sizes and for every key type, is run against a reference with the same seeds: bulk load,
//! then random inserts, removes, gets, ranges and lower bounds, with extreme keys (0 and MAX),
//! an empty map and a single key; plus proptest operation sequences against `BTreeMap`.
//!
//! The reference is `std::collections::BTreeMap` keyed by the key's order: `Key::to_model` for
//! injective key types (so `f64` works without `Ord`), the bytes themselves for `Str16`.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::NodeCost;
use lidx::mem::{Art, ArtKey};
use lidx::mem::{BTree, BTreeParams};
use lidx::mem::{CostModel, Start, StartParams, Strategy as Tuning};
use lidx::{OrderedMap, Str16};
use map_suite::{apply, key_tests, op, run_bulk_and_inserted, run_map_suite, MapKey};
use proptest::prelude::*;

fn node_params() -> Vec<BTreeParams> {
    vec![
        BTreeParams::with_slots(4, 4),
        BTreeParams::with_slots(5, 7),
        BTreeParams::with_slots(16, 9),
        BTreeParams::default(),
    ]
}

fn run_btree_suite<K: MapKey>() {
    for params in node_params() {
        let name = format!("btree{:?}", params.slots::<K, u64>().unwrap());
        run_bulk_and_inserted::<K, _>(
            &name,
            |pairs| BTree::bulk_load(pairs, params),
            || BTree::new(params),
        );
    }
}

key_tests!(run_btree_suite; btree_u64: u64, btree_u32: u32, btree_i64: i64, btree_f64: f64, btree_str16: Str16);

fn run_art_suite<K: MapKey + ArtKey>() {
    run_bulk_and_inserted::<K, _>("art", |pairs| Art::bulk_load(pairs), || Ok(Art::new()));
}

/// START tuned to make multilevel nodes wherever the key bytes allow: multilevel kinds cost
/// nothing, ART's kinds a lot, and no space limit.
fn eager_start(strategy: Tuning, flat_nodes: bool) -> StartParams {
    let mut model = CostModel::default();
    for (i, c) in model.costs.iter_mut().enumerate() {
        let v = if i < 4 { 100.0 } else { 0.0 };
        *c = NodeCost {
            cached: v,
            header_cached: v,
            uncached: v,
        };
    }
    StartParams {
        model,
        strategy,
        budget_factor: 1e12,
        flat_nodes,
        huge_arena: true,
    }
}

fn run_start_suite<K: MapKey + ArtKey>() {
    run_map_suite::<K, _>("start", |pairs| {
        Start::bulk_load(pairs, StartParams::default())
    });
    run_map_suite::<K, _>("start-heap", |pairs| {
        let params = StartParams {
            huge_arena: false,
            ..StartParams::default()
        };
        Start::bulk_load(pairs, params)
    });
    for (strategy, flat) in [
        (Tuning::DynamicProgramming, false),
        (Tuning::Greedy, false),
        (Tuning::DynamicProgramming, true),
    ] {
        run_map_suite::<K, _>("start-eager", |pairs| {
            let t = Start::bulk_load(pairs, eager_start(strategy, flat))?;
            if t.len() > 100 {
                let mix = t.node_mix();
                assert!(mix.counts[4..].iter().sum::<usize>() > 0, "{mix}");
            }
            Ok(t)
        });
    }
}

key_tests!(run_start_suite; start_u64: u64, start_u32: u32, start_i64: i64, start_f64: f64, start_str16: Str16);

key_tests!(run_art_suite; art_u64: u64, art_u32: u32, art_i64: i64, art_f64: f64, art_str16: Str16);

#[test]
fn bulk_load_refuses_bad_input() {
    let p = BTreeParams::default();
    assert!(matches!(
        BTree::bulk_load([(1u64, 0u8), (3, 0), (2, 0)], p),
        Err(lidx::Error::OutOfOrder { index: 2, .. })
    ));
    assert!(matches!(
        BTree::bulk_load([(1u64, 0u8), (1, 0)], p),
        Err(lidx::Error::DuplicateKey { index: 1, .. })
    ));
    assert!(matches!(
        BTree::bulk_load([(1.0, 0u8), (f64::NAN, 0)], p),
        Err(lidx::Error::InvalidKey { index: 1, .. })
    ));
    assert!(matches!(
        BTree::<u64, u8>::new(BTreeParams::with_slots(4, 70_000)),
        Err(lidx::Error::InvalidParameter {
            name: "inner_slots",
            ..
        })
    ));
    assert!(matches!(
        BTree::<u64, u8>::new(BTreeParams::with_node_bytes(0)),
        Err(lidx::Error::InvalidParameter {
            name: "node_bytes",
            ..
        })
    ));
}

#[test]
fn default_nodes_are_about_256_bytes() {
    let t = BTree::<u64, u64>::new(BTreeParams::default()).unwrap();
    assert_eq!(t.slots(), (16, 15));
    let t = BTree::<Str16, u64>::new(BTreeParams::with_node_bytes(1024)).unwrap();
    assert_eq!(t.slots(), (42, 50));
}

proptest! {
    #[test]
    fn btree_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        leaf in 4usize..9,
        inner in 4usize..9,
    ) {
        // Keys spread over the u64 range, 0 and near-MAX included.
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << 48 };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = BTree::bulk_load(
            reference.iter().map(|(&k, &v)| (k, v)),
            BTreeParams::with_slots(leaf, inner),
        ).unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, false)?;
        }
        prop_assert!(t.iter().eq(reference.iter()));
    }

    #[test]
    fn start_matches_btreemap_across_retunes(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..300),
        shift in 0u32..49,
        retune_every in 1usize..60,
        greedy in any::<bool>(),
        flat in any::<bool>(),
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let strategy = if greedy { Tuning::Greedy } else { Tuning::DynamicProgramming };
        let mut t = Start::bulk_load(reference.iter().map(|(&k, &v)| (k, v)), eager_start(strategy, flat))
            .unwrap();
        for (i, op) in ops.into_iter().enumerate() {
            if i % retune_every == 0 {
                t.retune().unwrap();
            }
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.iter().eq(reference.iter()));
    }

    #[test]
    fn art_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        shift in 0u32..49,
    ) {
        // `shift` moves the varying bytes through the key, from the lowest byte up to the
        // top two; 0 and near-MAX included.
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = Art::bulk_load(reference.iter().map(|(&k, &v)| (k, v))).unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.iter().eq(reference.iter()));
    }
}

#[test]
fn bulk_loads_refuse_bad_input_through_the_trait() {
    use lidx::mem::Art;
    map_suite::check_bulk_refusals::<BTree<u64, u64>, BTree<f64, u64>>(
        &BTreeParams::default(),
        &BTreeParams::default(),
    );
    map_suite::check_bulk_refusals::<Art<u64, u64>, Art<f64, u64>>(&(), &());
}

#[test]
fn map_specs_build_every_map_by_name() {
    use lidx::mem::MapSpec;
    for form in MapSpec::forms() {
        let name = form.split('[').next().unwrap();
        let spec = MapSpec::parse(name).unwrap();
        assert_eq!(MapSpec::parse(&spec.label()).unwrap(), spec);
        let mut map = spec.build(vec![(1, 10), (5, 50)]).unwrap();
        assert_eq!(map.insert(3, 30).unwrap(), None);
        assert_eq!(map.insert(3, 31).unwrap(), Some(30));
        assert_eq!(map.get(3), Some(31));
        assert_eq!(map.lower_bound(4), Some((5, 50)));
        let mut out = Vec::new();
        map.scan(2, 5, &mut out);
        assert_eq!(out, [(3, 31), (5, 50)]);
        assert_eq!(map.remove(1), Some(10));
        assert_eq!(map.remove(1), None);
        assert_eq!(map.len(), 2);
        assert!(matches!(
            spec.build(vec![(2, 0), (1, 0)]),
            Err(lidx::Error::OutOfOrder { .. })
        ));
        assert!(spec.build_empty().unwrap().is_empty());
    }
    assert!(matches!(
        MapSpec::parse("alexx"),
        Err(lidx::Error::InvalidParameter { .. })
    ));
}
