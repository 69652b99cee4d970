//! The FITing-tree with gapped-array segments (`Gap`, ALEX's data node) against `BTreeMap`: the
//! shared seeded suite for `u64`, `f64` and `i64` keys at reserves small enough that segments
//! run out of gaps often (0: every new key re-segments), proptest operation sequences, and the
//! typed refusals of bad input.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::fiting_tree::{FitingGap, FitingMapParams};
use lidx::OrderedMap;
use map_suite::{apply, check_bulk_refusals, op, run_map_suite, MapKey};
use proptest::prelude::*;

fn run<K: MapKey + lidx::mem::alex::AlexKey>() {
    for p in [
        FitingMapParams::new(0, 0),
        FitingMapParams::new(2, 3),
        FitingMapParams::new(8, 16),
        FitingMapParams::default(),
    ] {
        let name = format!("fiting-gap(eps {}, reserve {})", p.eps, p.reserve);
        run_map_suite::<K, _>(&name, |pairs| FitingGap::<K, u64>::bulk_load(pairs, p));
        run_map_suite::<K, _>(&format!("{name}-inserted"), |pairs| {
            let mut t = FitingGap::<K, u64>::new(p)?;
            for (k, v) in pairs {
                t.insert(k, v)?;
            }
            Ok(t)
        });
    }
}

#[test]
fn gap_u64() {
    run::<u64>();
}

#[test]
fn gap_f64() {
    run::<f64>();
}

#[test]
fn gap_i64() {
    run::<i64>();
}

#[test]
fn bad_input_is_refused() {
    let p = FitingMapParams::default();
    check_bulk_refusals::<FitingGap<u64, u64>, FitingGap<f64, u64>>(&p, &p);
    let mut map = FitingGap::<f64, u64>::new(p).unwrap();
    assert!(matches!(
        map.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert!(map.is_empty());
    assert_eq!(map.remove(&1.0), None);
    assert!(matches!(
        FitingGap::<u64, u64>::new(FitingMapParams::new(4, 1 << 25)),
        Err(lidx::Error::InvalidParameter {
            name: "reserve",
            ..
        })
    ));
}

#[test]
fn each_segment_takes_reserve_new_keys_between_retrains() {
    // One segment (a line) with 4 gaps: four new keys fit, the fifth retrains it.
    let entries: Vec<(u64, u64)> = (0..100).map(|k| (k * 10, k)).collect();
    let mut map = FitingGap::<u64, u64>::bulk_load(entries, FitingMapParams::new(4, 4)).unwrap();
    assert_eq!(map.segment_count(), 1);
    for k in 0..4 {
        map.insert(k * 10 + 5, 0).unwrap();
    }
    assert_eq!(map.stats().count, 0);
    map.insert(45, 0).unwrap();
    assert_eq!(map.stats().count, 1);
    assert_eq!(
        map.insert(5, 1).unwrap(),
        Some(0),
        "an update never retrains"
    );
    assert_eq!(map.stats().count, 1);
}

proptest! {
    #[test]
    fn fiting_gap_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        eps in 0usize..6,
        reserve in 0usize..10,
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << 40 };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = FitingGap::<u64, u64>::bulk_load(
            reference.iter().map(|(&k, &v)| (k, v)).collect(),
            FitingMapParams::new(eps, reserve),
        )
        .unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.range(..).eq(reference.iter()));
    }
}
