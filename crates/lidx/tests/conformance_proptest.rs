//! Every static index on proptest-generated inputs: random sorted keys drawn from a few
//! shapes (clustered duplicates, extremes, small and full-range values) and random small
//! parameters, checked by the shared conformance suite against `partition_point`.

mod common;

use common::{check_static_index, TestKey};
use lidx::mem::BTreeIndex;
use lidx::mem::BTreeParams;
use lidx::mem::SortedArray;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{FitingParams, FitingTree};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::Str16;
use proptest::prelude::*;

/// Seeds mixing full-range values, a narrow band (many duplicates) and the extremes.
fn seeds() -> impl Strategy<Value = Vec<u64>> {
    let value = prop_oneof![
        4 => any::<u64>(),
        4 => (0u64..64).prop_map(|v| v << 40),
        1 => Just(0u64),
        1 => Just(u64::MAX),
    ];
    proptest::collection::vec(value, 0..400)
}

fn sorted<K: TestKey>(seeds: &[u64]) -> Vec<K> {
    let mut keys: Vec<K> = seeds.iter().map(|&s| K::from_seed(s)).collect();
    keys.sort_by(|a, b| a.key_cmp(b));
    keys
}

/// Builds every index on `keys` with parameters derived from `eps` and `small`, and checks each.
fn check_all<K: TestKey>(keys: &[K], eps: usize, small: usize) {
    let every = small + 1;
    check_static_index("sorted", keys, &SortedArray::build(keys).unwrap(), None);
    let pgm = Pgm::build(keys, PgmParams::new(eps, small.max(1))).unwrap();
    check_static_index("pgm", keys, &pgm, Some(2 * eps + 2));
    let spgm = SampledPgm::build(keys, SampledPgmParams::new(every, eps)).unwrap();
    check_static_index("spgm", keys, &spgm, None);
    let rs = RadixSpline::build(keys, RadixSplineParams::new(small % 12, eps)).unwrap();
    check_static_index("rs", keys, &rs, Some(2 * eps + 2));
    let rmi = Rmi::build(keys, RmiParams::new(every)).unwrap();
    check_static_index("rmi", keys, &rmi, None);
    let tree = BTreeParams::with_slots(4 + small % 13, 4 + small % 7);
    check_static_index(
        "btree",
        keys,
        &BTreeIndex::build(keys, tree).unwrap(),
        Some(0),
    );
    let model = BTreeModel::build(keys, BTreeModelParams::with_every(every)).unwrap();
    check_static_index("btree-model", keys, &model, Some(every));
    let fiting = FitingTree::build(keys, FitingParams::with_eps(eps)).unwrap();
    check_static_index("fiting", keys, &fiting, Some(2 * eps + 2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_index_on_random_u64_keys(s in seeds(), eps in 0usize..40, small in 0usize..20) {
        check_all::<u64>(&sorted(&s), eps, small);
    }

    #[test]
    fn every_index_on_random_f64_keys(s in seeds(), eps in 0usize..40, small in 0usize..20) {
        check_all::<f64>(&sorted(&s), eps, small);
    }

    #[test]
    fn every_index_on_random_string_keys(s in seeds(), eps in 0usize..40, small in 0usize..20) {
        check_all::<Str16>(&sorted(&s), eps, small);
    }
}
