//! The static-index conformance suite on the sampled PGM, from no sampling to the paper's setting.

mod common;

use lidx::mem::{SampledPgm, SampledPgmParams};

static_suite!(
    sampled_every_1,
    |keys| SampledPgm::build(keys, SampledPgmParams::new(1, 4)),
    Some(2 * 4 + 2)
);
static_suite!(
    sampled_every_7_eps_0,
    |keys| SampledPgm::build(keys, SampledPgmParams::new(7, 0)),
    Some(3 * 7)
);
static_suite!(
    sampled_default,
    |keys| SampledPgm::build(keys, SampledPgmParams::default()),
    Some((2 * 2 + 3) * 128)
);

#[test]
fn bad_parameters_are_refused() {
    let err = SampledPgm::build(&[1u64, 2], SampledPgmParams::new(0, 2)).unwrap_err();
    assert!(matches!(
        err,
        lidx::Error::InvalidParameter { name: "every", .. }
    ));
    let err = SampledPgm::build(&[1u64, 2], SampledPgmParams::new(4, 1 << 40)).unwrap_err();
    assert!(matches!(
        err,
        lidx::Error::InvalidParameter { name: "eps", .. }
    ));
    let err = SampledPgm::build(&[1u64, 9, 2], SampledPgmParams::new(2, 2)).unwrap_err();
    assert!(
        matches!(err, lidx::Error::OutOfOrder { index: 2, .. }),
        "{err}"
    );
}
