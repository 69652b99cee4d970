//! The skip-list baseline (`lidx::mem::SkipListMap`, crossbeam's `SkipMap`) against `BTreeMap`:
//! the shared seeded suite for `u64`, `f64` and `i64` keys, proptest operation sequences, and
//! bad input refused with typed errors.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::SkipListMap;
use lidx::{BulkLoad, OrderedMap};
use map_suite::{apply, check_bulk_refusals, key_tests, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

fn run_skiplist_suite<K: MapKey>() {
    run_bulk_and_inserted::<K, _>(
        "skiplist",
        |pairs| SkipListMap::load_sorted(pairs, &()),
        || Ok(SkipListMap::new()),
    );
}

key_tests!(run_skiplist_suite; skiplist_u64: u64, skiplist_f64: f64, skiplist_i64: i64);

#[test]
fn bad_input_is_refused() {
    check_bulk_refusals::<SkipListMap<u64, u64>, SkipListMap<f64, u64>>(&(), &());
    let mut t = SkipListMap::<f64, u64>::new();
    assert!(matches!(
        t.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert_eq!(t.remove(&1.0), None);
    assert!(t.is_empty());
}

proptest! {
    #[test]
    fn skiplist_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        shift in 0u32..49,
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let mut t = SkipListMap::load_sorted(reference.iter().map(|(&k, &v)| (k, v)).collect(), &())
            .unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.range(..).eq(reference.iter()));
    }
}
