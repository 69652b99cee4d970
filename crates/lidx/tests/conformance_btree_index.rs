//! The static-index conformance suite on the B+-tree baseline (`BTreeIndex`), at the default
//! node size and at the smallest nodes (deep trees); its windows are exact (width 0).

mod common;

use lidx::mem::BTreeIndex;
use lidx::mem::BTreeParams;
use lidx::StaticIndex;

static_suite!(
    btree_index_default,
    |keys| BTreeIndex::build(keys, BTreeParams::default()),
    Some(0)
);
static_suite!(
    btree_index_tiny_nodes,
    |keys| BTreeIndex::build(keys, BTreeParams::with_slots(4, 4)),
    Some(0)
);

#[test]
fn shape_and_size_are_reported() {
    let keys: Vec<u64> = (0..10_000).collect();
    let index = BTreeIndex::build(&keys, BTreeParams::with_slots(16, 16)).unwrap();
    let shape = index.shape();
    assert_eq!(shape.segments, Some(625));
    assert_eq!(shape.height, Some(4));
    assert!(index.size_in_bytes() >= 10_000 * 16);
}

#[test]
fn bad_input_is_refused() {
    assert!(matches!(
        BTreeIndex::build(&[1.0, f64::NAN], BTreeParams::default()),
        Err(lidx::Error::InvalidKey { index: 1, .. })
    ));
    assert!(matches!(
        BTreeIndex::build(&[1u64], BTreeParams::with_slots(3, 16)),
        Err(lidx::Error::InvalidParameter {
            name: "leaf_slots",
            ..
        })
    ));
    assert!(matches!(
        BTreeIndex::build(&[1u64], BTreeParams::with_node_bytes(0)),
        Err(lidx::Error::InvalidParameter {
            name: "node_bytes",
            ..
        })
    ));
}
