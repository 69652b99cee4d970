//! The static-index conformance suite on the two-layer RMI, from one leaf (a single line over
//! everything) to many more leaves than some datasets have keys (mostly empty leaves).

mod common;

use lidx::mem::{Rmi, RmiParams};
use lidx::{Error, StaticIndex};

static_suite!(rmi_1_leaf, |keys| Rmi::build(keys, RmiParams::new(1)), None);
static_suite!(
    rmi_2_leaves,
    |keys| Rmi::build(keys, RmiParams::new(2)),
    None
);
static_suite!(
    rmi_64_leaves,
    |keys| Rmi::build(keys, RmiParams::new(64)),
    None
);
static_suite!(
    rmi_4096_leaves,
    |keys| Rmi::build(keys, RmiParams::new(4096)),
    None
);

#[test]
fn zero_leaves_is_an_invalid_parameter() {
    let err = Rmi::build(&[1u64, 2, 3], RmiParams::new(0)).unwrap_err();
    assert!(
        matches!(err, Error::InvalidParameter { name: "leaves", .. }),
        "{err}"
    );
}

#[test]
fn nan_is_refused() {
    let err = Rmi::build(&[1.0, f64::NAN], RmiParams::default()).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { index: 1, .. }), "{err}");
}

#[test]
fn windows_shrink_with_more_leaves_on_smooth_data() {
    let keys: Vec<u64> = (0..20_000u64).map(|i| i * i).collect();
    let coarse = Rmi::build(&keys, RmiParams::new(1)).unwrap();
    let fine = Rmi::build(&keys, RmiParams::new(256)).unwrap();
    assert!(fine.max_window() * 10 < coarse.max_window());
    assert_eq!(StaticIndex::<u64>::shape(&fine).height, Some(2));
}
