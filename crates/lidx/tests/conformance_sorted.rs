//! The static-index conformance suite on the sorted-array baseline (and on the suite itself).

mod common;

use lidx::mem::SortedArray;

static_suite!(sorted, SortedArray::build, None);

#[test]
fn nan_is_refused() {
    let err = SortedArray::build(&[1.0, f64::NAN]).unwrap_err();
    assert!(matches!(err, lidx::Error::InvalidKey { index: 1, .. }));
}
