//! The updatable FITing-tree, with each of its three insertion strategies (in place, delta
//! buffer, gapped array), against `BTreeMap`: the shared seeded suite for `u64`, `f64` and
//! `u32` keys at reserves small enough that the suite's maps retrain often (0: at every new
//! key), proptest operation sequences, and the typed refusals of bad input.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::{
    FitingBuffer, FitingBufferStrategy as Buffer, FitingGap, FitingGapStrategy as Gap,
    FitingInplace, FitingInplaceStrategy as Inplace, FitingMap, FitingMapParams, InsertStrategy,
};
use lidx::OrderedMap;
use map_suite::{apply, check_bulk_refusals, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

fn params() -> Vec<FitingMapParams> {
    vec![
        FitingMapParams::new(0, 0),
        FitingMapParams::new(2, 3),
        FitingMapParams::new(8, 16),
        FitingMapParams::default(),
    ]
}

fn run<K: MapKey, S: InsertStrategy<K, u64>>(strategy: &str) {
    for p in params() {
        let name = format!("fiting-{strategy}(eps {}, reserve {})", p.eps, p.reserve);
        run_bulk_and_inserted::<K, _>(
            &name,
            |pairs| FitingMap::<K, u64, S>::bulk_load(pairs, p),
            || FitingMap::<K, u64, S>::new(p),
        );
    }
}

#[test]
fn inplace_u64() {
    run::<u64, Inplace<u64, u64>>("inplace");
}

#[test]
fn inplace_f64() {
    run::<f64, Inplace<f64, u64>>("inplace");
}

#[test]
fn inplace_u32() {
    run::<u32, Inplace<u32, u64>>("inplace");
}

#[test]
fn buffer_u64() {
    run::<u64, Buffer<u64, u64>>("buffer");
}

#[test]
fn buffer_f64() {
    run::<f64, Buffer<f64, u64>>("buffer");
}

#[test]
fn buffer_u32() {
    run::<u32, Buffer<u32, u64>>("buffer");
}

#[test]
fn gap_u64() {
    run::<u64, Gap<u64, u64>>("gap");
}

#[test]
fn gap_f64() {
    run::<f64, Gap<f64, u64>>("gap");
}

#[test]
fn gap_u32() {
    run::<u32, Gap<u32, u64>>("gap");
}

#[test]
fn bad_input_is_refused() {
    let p = FitingMapParams::default();
    check_bulk_refusals::<FitingInplace<u64, u64>, FitingInplace<f64, u64>>(&p, &p);
    check_bulk_refusals::<FitingBuffer<u64, u64>, FitingBuffer<f64, u64>>(&p, &p);
    check_bulk_refusals::<FitingGap<u64, u64>, FitingGap<f64, u64>>(&p, &p);
    let mut map = FitingBuffer::<f64, u64>::new(p).unwrap();
    assert!(matches!(
        map.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert!(map.is_empty());
    assert_eq!(map.remove(&1.0), None);
    let mut map = FitingGap::<f64, u64>::new(p).unwrap();
    assert!(matches!(
        map.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert_eq!(map.remove(&1.0), None);
    assert!(matches!(
        FitingInplace::<u64, u64>::new(FitingMapParams::new(usize::MAX, 4)),
        Err(lidx::Error::InvalidParameter { name: "eps", .. })
    ));
}

fn matches_btreemap<S: InsertStrategy<u64, u64>>(
    initial: &BTreeMap<u16, u64>,
    ops: Vec<map_suite::Op>,
    params: FitingMapParams,
) -> Result<(), TestCaseError> {
    let key = |k: u16| {
        if k == u16::MAX {
            u64::MAX
        } else {
            u64::from(k) << 40
        }
    };
    let mut reference: BTreeMap<u64, u64> = initial.iter().map(|(&k, &v)| (key(k), v)).collect();
    let mut t = FitingMap::<u64, u64, S>::bulk_load(
        reference.iter().map(|(&k, &v)| (k, v)).collect(),
        params,
    )
    .unwrap();
    for op in ops {
        apply(&mut t, &mut reference, &key, op, true)?;
    }
    prop_assert!(t.range(..).eq(reference.iter()));
    Ok(())
}

proptest! {
    #[test]
    fn fiting_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        eps in 0usize..6,
        reserve in 0usize..10,
    ) {
        let params = FitingMapParams::new(eps, reserve);
        matches_btreemap::<Inplace<u64, u64>>(&initial, ops.clone(), params)?;
        matches_btreemap::<Buffer<u64, u64>>(&initial, ops.clone(), params)?;
        matches_btreemap::<Gap<u64, u64>>(&initial, ops, params)?;
    }
}
