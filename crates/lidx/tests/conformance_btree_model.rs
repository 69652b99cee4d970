//! The static-index conformance suite on the B+-tree-as-model (`BTreeModel`, paper 000 §5.2),
//! with strides from 1 (every key sampled) to 256; windows are at most `every - 1` wide.

mod common;

use lidx::mem::BTreeParams;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::StaticIndex;

static_suite!(
    btree_model_every_1,
    |keys| BTreeModel::build(keys, BTreeModelParams::with_every(1)),
    Some(0)
);
static_suite!(
    btree_model_every_7,
    |keys| BTreeModel::build(
        keys,
        BTreeModelParams {
            every: 7,
            tree: BTreeParams::with_slots(4, 4)
        }
    ),
    Some(6)
);
static_suite!(
    btree_model_every_256,
    |keys| BTreeModel::build(keys, BTreeModelParams::default()),
    Some(255)
);

#[test]
fn shape_counts_samples() {
    let keys: Vec<u64> = (0..1000).collect();
    let model = BTreeModel::build(&keys, BTreeModelParams::with_every(100)).unwrap();
    assert_eq!(model.shape().segments, Some(10));
    assert_eq!(model.shape().height, Some(1));
}

#[test]
fn bad_input_is_refused() {
    assert!(matches!(
        BTreeModel::build(&[1u64, 2], BTreeModelParams::with_every(0)),
        Err(lidx::Error::InvalidParameter { name: "every", .. })
    ));
    assert!(matches!(
        BTreeModel::build(&[f64::NAN], BTreeModelParams::default()),
        Err(lidx::Error::InvalidKey { index: 0, .. })
    ));
}
