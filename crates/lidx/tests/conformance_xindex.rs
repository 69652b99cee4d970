//! XIndex (`lidx::mem::XIndexMap`) against `BTreeMap`: the shared seeded suite and proptest
//! operation sequences through the single-threaded view `XIndexMap`, for `u64`, `f64` and
//! `i64` keys, with parameters small enough that every run splits, compacts and merges groups;
//! bad input refused with typed errors.

use std::collections::BTreeMap;

mod map_suite;

use lidx::mem::{XIndex, XIndexMap, XIndexParams};
use lidx::{BulkLoad, OrderedMap};
use map_suite::{apply, check_bulk_refusals, key_tests, op, run_bulk_and_inserted, MapKey};
use proptest::prelude::*;

fn params() -> Vec<XIndexParams> {
    vec![
        XIndexParams {
            group_size: 4,
            error_bound: 1,
            buffer_size: 2,
            root_error_bound: 1,
        },
        XIndexParams {
            group_size: 16,
            error_bound: 4,
            buffer_size: 8,
            root_error_bound: 2,
        },
        XIndexParams::default(),
    ]
}

fn run_xindex_suite<K: MapKey>() {
    for p in params() {
        let name = format!("xindex{p:?}");
        run_bulk_and_inserted::<K, _>(
            &name,
            |pairs| XIndexMap::load_sorted(pairs, &p),
            || XIndexMap::new(p),
        );
    }
}

key_tests!(run_xindex_suite; xindex_u64: u64, xindex_f64: f64, xindex_i64: i64);

#[test]
fn bad_input_is_refused() {
    check_bulk_refusals::<XIndexMap<u64, u64>, XIndexMap<f64, u64>>(
        &XIndexParams::default(),
        &XIndexParams::default(),
    );
    let index = XIndex::<f64, u64>::new(XIndexParams::default()).unwrap();
    assert!(matches!(
        index.insert(f64::NAN, 1),
        Err(lidx::Error::InvalidKey { .. })
    ));
    assert_eq!(index.remove(&1.0), None);
    assert!(index.is_empty());
    assert!(matches!(
        XIndexMap::<u64, u64>::load_sorted(
            vec![],
            &XIndexParams {
                buffer_size: 0,
                ..XIndexParams::default()
            }
        ),
        Err(lidx::Error::InvalidParameter {
            name: "buffer_size",
            ..
        })
    ));
}

proptest! {
    #[test]
    fn xindex_matches_btreemap(
        initial in proptest::collection::btree_map(any::<u16>(), any::<u64>(), 0..200),
        ops in proptest::collection::vec(op(), 0..400),
        shift in 0u32..49,
        small in 1usize..6,
    ) {
        let key = |k: u16| if k == u16::MAX { u64::MAX } else { u64::from(k) << shift };
        let mut reference: BTreeMap<u64, u64> =
            initial.iter().map(|(&k, &v)| (key(k), v)).collect();
        let p = XIndexParams {
            group_size: small * 2,
            error_bound: small,
            buffer_size: small,
            root_error_bound: small,
        };
        let mut t = XIndexMap::load_sorted(reference.iter().map(|(&k, &v)| (k, v)).collect(), &p)
            .unwrap();
        for op in ops {
            apply(&mut t, &mut reference, &key, op, true)?;
        }
        prop_assert!(t.range(..).eq(reference.iter()));
    }
}
