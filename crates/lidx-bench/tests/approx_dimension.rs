//! The approximation dimension (paper 001 Fig. 17a-b): every algorithm at every setting finds
//! every queried key in its leaf, Opt-PLA keeps its bound, and the gaps change the error.

use lidx_bench::approx_dimension;
use lidx_bench::dataset::Dataset;
use lidx_bench::runner::Silent;

#[test]
fn every_algorithm_finds_its_keys_and_reports_its_leaves() {
    let mut keys: Vec<u64> = (0..20_000u64)
        .map(|i| (i * i) ^ ((i << 20) % 9_999_991))
        .collect();
    keys.sort_unstable();
    let data = Dataset {
        name: "t".to_string(),
        keys,
        notes: Vec::new(),
    };
    let records =
        approx_dimension::run(&data, &[16, 256], &[2, 32], 5000, 2, 7, &mut Silent).unwrap();
    assert_eq!(records.len(), 6);
    for r in &records {
        assert!(
            r.leaves > 0 && r.lookup_ns > 0.0 && r.avg_error.is_finite(),
            "{r:?}"
        );
        if r.algorithm == "opt-pla" {
            assert!(r.max_error <= r.param, "{r:?}");
        }
    }
    let by = |a: &str, p: u64| {
        records
            .iter()
            .find(|r| r.algorithm == a && r.param == p)
            .unwrap()
    };
    assert_eq!(by("lsa", 16).leaves, by("lsa-gap", 16).leaves);
    assert!(by("lsa", 16).leaves > by("lsa", 256).leaves);
    assert!(
        by("lsa-gap", 256).bytes > by("lsa", 256).bytes,
        "the gaps take slots"
    );
    assert!(approx_dimension::run(&data, &[16], &[2], 0, 1, 7, &mut Silent).is_err());
}
