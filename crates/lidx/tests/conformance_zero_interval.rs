//! The static-index conformance suite on the page-aware indexes of paper 002 G3 (PGM-Disk and
//! RadixSpline-Disk): pages of one record to pages wider than the data, errors from 0 to large.
//! A window covers the pages of `[pos - eps, pos + eps]`: at most `(⌊2 eps / P⌋ + 2) P` wide.

mod common;

use lidx::mem::{PgmZero, PgmZeroParams};
use lidx::mem::{RadixSplineZero, RadixSplineZeroParams};

/// The widest page window for error `eps` and `per_block` records per page.
const fn width(eps: usize, per_block: usize) -> usize {
    (2 * eps / per_block + 2) * per_block
}

static_suite!(
    pgm_zero_page_1,
    |keys| PgmZero::build(keys, PgmZeroParams::new(2, 1, 1)),
    Some(width(2, 1))
);
static_suite!(
    pgm_zero_eps_0,
    |keys| PgmZero::build(keys, PgmZeroParams::new(0, 8, 2)),
    Some(width(0, 8))
);
static_suite!(
    pgm_zero_even_page,
    |keys| PgmZero::build(keys, PgmZeroParams::new(3, 16, 4)),
    Some(width(3, 16))
);
static_suite!(
    pgm_zero_default,
    |keys| PgmZero::build(keys, PgmZeroParams::default()),
    Some(width(63, 255))
);
static_suite!(
    rs_zero_page_1,
    |keys| RadixSplineZero::build(keys, RadixSplineZeroParams::new(2, 1, 4)),
    Some(width(2, 1))
);
static_suite!(
    rs_zero_eps_0,
    |keys| RadixSplineZero::build(keys, RadixSplineZeroParams::new(0, 2, 0)),
    Some(width(0, 2))
);
static_suite!(
    rs_zero_odd_page,
    |keys| RadixSplineZero::build(keys, RadixSplineZeroParams::new(5, 7, 8)),
    Some(width(5, 7))
);
static_suite!(
    rs_zero_default,
    |keys| RadixSplineZero::build(keys, RadixSplineZeroParams::default()),
    Some(width(63, 255))
);

#[test]
fn bad_input_is_refused() {
    let err = PgmZero::build(&[1u64, 2], PgmZeroParams::new(4, 0, 4)).unwrap_err();
    assert!(matches!(
        err,
        lidx::Error::InvalidParameter {
            name: "per_block",
            ..
        }
    ));
    let err =
        RadixSplineZero::build(&[1.0, f64::NAN], RadixSplineZeroParams::default()).unwrap_err();
    assert!(matches!(err, lidx::Error::InvalidKey { index: 1, .. }));
}
