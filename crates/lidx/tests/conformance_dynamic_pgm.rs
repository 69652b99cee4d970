//! The dynamic PGM against `BTreeMap`: the shared seeded suite for `u64`, `f64` and `i64` keys
//! at first levels small enough that the suite's maps merge many times (and, with `base = 1`,
//! at every insert) and with PGMs from levels of 1 or 40 entries, proptest operation sequences, and the typed refusals of bad input.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::{DynamicPgm, DynamicPgmParams};
use lidx::OrderedMap;
use map_suite::{apply, check_bulk_refusals, key_tests, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

fn params() -> Vec<DynamicPgmParams> {
    vec![
        DynamicPgmParams::new(2, 1, 1).with_min_indexed(1),
        DynamicPgmParams::new(4, 2, 7).with_min_indexed(40),
        DynamicPgmParams::default(),
    ]
}

fn run<K: MapKey>() {
    for p in params() {
        let name = format!("dpgm{p:?}");
        run_bulk_and_inserted::<K, _>(
            &name,
            |pairs| DynamicPgm::bulk_load(pairs, p),
            || DynamicPgm::new(p),
        );
    }
}

key_tests!(run; dpgm_u64: u64, dpgm_f64: f64, dpgm_i64: i64);

#[test]
fn bad_input_is_refused() {
    let p = DynamicPgmParams::default();
    check_bulk_refusals::<DynamicPgm<u64, u64>, DynamicPgm<f64, u64>>(&p, &p);
    let mut map = DynamicPgm::<f64, u64>::new(p).unwrap();
    assert!(matches!(
        map.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert!(map.is_empty());
    assert_eq!(map.remove(&1.0), None);
    assert!(matches!(
        DynamicPgm::<u64, u64>::new(DynamicPgmParams::new(4, 2, 0)),
        Err(lidx::Error::InvalidParameter { name: "base", .. })
    ));
}

proptest! {
    #[test]
    fn dpgm_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        base in 1usize..12,
        eps in 0usize..6,
        min_indexed in 0usize..64,
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << 40 };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = DynamicPgm::bulk_load(
            reference.iter().map(|(&k, &v)| (k, v)).collect(),
            DynamicPgmParams::new(eps, 1, base).with_min_indexed(min_indexed),
        ).unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.range(..).eq(reference.iter()));
    }
}
