//! The static-index conformance suite on the PGM-index, over bottom and upper-level errors from
//! tiny (more levels, more segments) to the defaults.

mod common;

use lidx::mem::{Pgm, PgmParams};
use lidx::StaticIndex;

static_suite!(
    pgm_eps_0,
    |keys| Pgm::build(keys, PgmParams::new(0, 1)),
    Some(2)
);
static_suite!(
    pgm_eps_1,
    |keys| Pgm::build(keys, PgmParams::new(1, 1)),
    Some(4)
);
static_suite!(
    pgm_eps_4,
    |keys| Pgm::build(keys, PgmParams::new(4, 2)),
    Some(10)
);
static_suite!(
    pgm_eps_16,
    |keys| Pgm::build(keys, PgmParams::new(16, 4)),
    Some(34)
);
static_suite!(
    pgm_eps_64_rec_16,
    |keys| Pgm::build(keys, PgmParams::new(64, 16)),
    Some(130)
);
static_suite!(
    pgm_default,
    |keys| Pgm::build(keys, PgmParams::default()),
    Some(130)
);

#[test]
fn bottom_level_is_within_eps_of_every_key() {
    let mut keys: Vec<u64> = (0..30_000u64)
        .map(|i| {
            let x = (i ^ 0x5555).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 8
        })
        .collect();
    keys.sort_unstable();
    for eps in [1, 3, 8] {
        let pgm = Pgm::build(&keys, PgmParams::new(eps, 1)).unwrap();
        let segments = pgm.segments();
        let mut s = 0;
        for (rank, k) in keys.iter().enumerate() {
            while s + 1 < segments.len() && segments[s + 1].first_key <= *k {
                s += 1;
            }
            let err = (segments[s].model.predict(*k) - rank as f64).abs();
            assert!(err <= eps as f64, "rank {rank}: error {err} > {eps}");
        }
        assert!(pgm.height() > 1, "eps {eps}: {:?}", pgm.shape());
    }
}

#[test]
fn bad_parameters_are_refused() {
    let err = Pgm::build(&[1u64, 2], PgmParams::new(1 << 40, 4)).unwrap_err();
    assert!(
        matches!(err, lidx::Error::InvalidParameter { name: "eps", .. }),
        "{err}"
    );
    let err = Pgm::build(&[1.0, f64::NAN], PgmParams::default()).unwrap_err();
    assert!(matches!(err, lidx::Error::InvalidKey { index: 1, .. }));
}
