//! The static-index conformance suite on RadixSpline, table sizes from none to large, errors from
//! exact to the SOSD range.

mod common;

use lidx::mem::{RadixSpline, RadixSplineParams};

static_suite!(
    rs_bits_0,
    |keys| RadixSpline::build(keys, RadixSplineParams::new(0, 4)),
    Some(2 * 4 + 2)
);
static_suite!(
    rs_bits_1_err_0,
    |keys| RadixSpline::build(keys, RadixSplineParams::new(1, 0)),
    Some(2)
);
static_suite!(
    rs_bits_8_err_1,
    |keys| RadixSpline::build(keys, RadixSplineParams::new(8, 1)),
    Some(4)
);
static_suite!(
    rs_default,
    |keys| RadixSpline::build(keys, RadixSplineParams::default()),
    Some(2 * 32 + 2)
);
static_suite!(
    rs_bits_20_err_64,
    |keys| RadixSpline::build(keys, RadixSplineParams::new(20, 64)),
    Some(2 * 64 + 2)
);

#[test]
fn bad_parameters_are_refused() {
    let err = RadixSpline::build(&[1u64, 2], RadixSplineParams::new(31, 4)).unwrap_err();
    assert!(matches!(
        err,
        lidx::Error::InvalidParameter {
            name: "radix_bits",
            ..
        }
    ));
    let err = RadixSpline::build(&[1.0, f64::NAN], RadixSplineParams::default()).unwrap_err();
    assert!(matches!(err, lidx::Error::InvalidKey { index: 1, .. }));
}
