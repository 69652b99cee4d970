//! LIPP (`lidx::mem::Lipp`) against `BTreeMap`: the shared seeded suite for every key type LIPP
//! takes (`u64`, `u32`, `i64`, `f64`), bulk-loaded and built by inserts, with the reference's
//! parameters and with eager rebuilds and shrinks; proptest operation sequences; bulk-load
//! refusals.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::{Lipp, LippParams};
use map_suite::{apply, key_tests, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

/// Rebuilds and shrinks at the smallest sizes, so the suite's few thousand keys see many.
fn eager() -> LippParams {
    LippParams {
        growth: 2,
        conflict_percent: 0,
        min_rebuild: 4,
        shrink: 2,
        ..LippParams::default()
    }
}

fn run_lipp_suite<K: MapKey + lidx::mem::LippKey>() {
    for (name, params) in [
        ("lipp", LippParams::default()),
        ("lipp-eager", eager()),
        (
            "lipp-thirds",
            LippParams {
                fmcd: false,
                ..eager()
            },
        ),
    ] {
        run_bulk_and_inserted::<K, _>(
            name,
            |pairs| Lipp::bulk_load(pairs, params),
            || Lipp::new(params),
        );
    }
}

key_tests!(run_lipp_suite; lipp_u64: u64, lipp_u32: u32, lipp_i64: i64, lipp_f64: f64);

#[test]
fn bulk_load_refuses_bad_input() {
    map_suite::check_bulk_refusals::<Lipp<u64, u64>, Lipp<f64, u64>>(
        &LippParams::default(),
        &LippParams::default(),
    );
    assert!(matches!(
        Lipp::<u64, u64>::bulk_load(
            vec![],
            LippParams {
                shrink: 1,
                ..LippParams::default()
            }
        ),
        Err(lidx::Error::InvalidParameter { name: "shrink", .. })
    ));
}

proptest! {
    #[test]
    fn lipp_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        shift in 0u32..49,
        eager_rebuilds in any::<bool>(),
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let params = if eager_rebuilds { eager() } else { LippParams::default() };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = Lipp::bulk_load(reference.iter().map(|(&k, &v)| (k, v)).collect(), params)
            .unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.iter().eq(reference.iter()));
    }
}
