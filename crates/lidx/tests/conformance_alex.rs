//! ALEX (`lidx::mem::Alex`) against `BTreeMap`: the shared seeded suite for every key type ALEX
//! takes (`u64`, `u32`, `i64`, `f64`), bulk-loaded and built by inserts, at the default node
//! size and at the smallest (many splits), plus proptest operation sequences and the bulk
//! load's refusals.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::{Alex, AlexKey, AlexParams};
use lidx::OrderedMap;
use map_suite::{apply, check_bulk_refusals, key_tests, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

fn params() -> Vec<AlexParams> {
    vec![
        AlexParams {
            max_node_bytes: 4096,
            ..AlexParams::default()
        },
        AlexParams::default(),
    ]
}

fn run_alex_suite<K: MapKey + AlexKey>() {
    for p in params() {
        let name = format!("alex{}", p.max_node_bytes);
        run_bulk_and_inserted::<K, _>(&name, |pairs| Alex::bulk_load(pairs, p), || Alex::new(p));
    }
}

key_tests!(run_alex_suite; alex_u64: u64, alex_u32: u32, alex_i64: i64, alex_f64: f64);

#[test]
fn alex_refuses_bad_bulk_loads() {
    check_bulk_refusals::<Alex<u64, u64>, Alex<f64, u64>>(
        &AlexParams::default(),
        &AlexParams::default(),
    );
    let mut t = Alex::<f64, u64>::new(AlexParams::default()).unwrap();
    assert!(matches!(
        t.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert!(t.is_empty());
}

proptest! {
    #[test]
    fn alex_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..300),
        ops in proptest::collection::vec(op(), 0..600),
        shift in 0u32..49,
    ) {
        // Keys from dense to spread over the u64 range, and u64::MAX itself.
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = Alex::bulk_load(
            reference.iter().map(|(&k, &v)| (k, v)).collect(),
            AlexParams { max_node_bytes: 4096, ..AlexParams::default() },
        ).unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.range(..).eq(reference.iter()));
    }
}
