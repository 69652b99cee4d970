//! The static-index conformance suite on the FITing-tree (greedy segments + B+-tree), at
//! several eps; windows are at most `2 * eps + 2` wide.

mod common;

use lidx::mem::BTreeParams;
use lidx::mem::{FitingParams, FitingTree};
use lidx::StaticIndex;

static_suite!(
    fiting_eps_0,
    |keys| FitingTree::build(keys, FitingParams::with_eps(0)),
    Some(2)
);
static_suite!(
    fiting_eps_4_tiny_nodes,
    |keys| FitingTree::build(
        keys,
        FitingParams {
            eps: 4,
            tree: BTreeParams::with_slots(4, 4)
        }
    ),
    Some(2 * 4 + 2)
);
static_suite!(
    fiting_eps_64,
    |keys| FitingTree::build(keys, FitingParams::default()),
    Some(2 * 64 + 2)
);

#[test]
fn larger_eps_gives_fewer_segments() {
    let keys: Vec<u64> = (0..5000u64).map(|i| i * i).collect();
    let small = FitingTree::build(&keys, FitingParams::with_eps(2)).unwrap();
    let large = FitingTree::build(&keys, FitingParams::with_eps(64)).unwrap();
    let (s, l) = (
        small.shape().segments.unwrap(),
        large.shape().segments.unwrap(),
    );
    assert!(l < s, "{l} >= {s}");
    assert!(large.size_in_bytes() < small.size_in_bytes());
}

#[test]
fn bad_input_is_refused() {
    assert!(matches!(
        FitingTree::build(&[2.0, f64::NAN], FitingParams::default()),
        Err(lidx::Error::InvalidKey { index: 1, .. })
    ));
    assert!(matches!(
        FitingTree::build(
            &[1u64],
            FitingParams {
                eps: 8,
                tree: BTreeParams::with_slots(16, 70_000)
            }
        ),
        Err(lidx::Error::InvalidParameter { .. })
    ));
}
