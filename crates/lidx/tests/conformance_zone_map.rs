//! The static-index conformance suite on the zone map, from one key per block (every key a
//! minimum) to the default 4 KiB block of 255 records.

mod common;

use lidx::mem::{ZoneMap, ZoneMapParams};

static_suite!(
    zone_map_1,
    |keys| ZoneMap::build(keys, ZoneMapParams::new(1)),
    Some(1)
);
static_suite!(
    zone_map_7,
    |keys| ZoneMap::build(keys, ZoneMapParams::new(7)),
    Some(7)
);
static_suite!(
    zone_map_default,
    |keys| ZoneMap::build(keys, ZoneMapParams::default()),
    Some(255)
);

#[test]
fn bad_parameters_are_refused() {
    let err = ZoneMap::build(&[1u64, 2], ZoneMapParams::new(0)).unwrap_err();
    assert!(
        matches!(
            err,
            lidx::Error::InvalidParameter {
                name: "per_block",
                ..
            }
        ),
        "{err}"
    );
    let err = ZoneMap::build(&[1.0, f64::NAN], ZoneMapParams::default()).unwrap_err();
    assert!(matches!(err, lidx::Error::InvalidKey { index: 1, .. }));
}
