//! The static-index conformance suite on the LeCo-compressed indexes of paper 002 G4-G5: the
//! compressed PGM, the exact and rough LeCo zone maps, and the smallest-of-both builder.

mod common;

use lidx::mem::ZoneMapParams;
use lidx::mem::{build_smallest, SmallestParams};
use lidx::mem::{CprPgm, CprPgmParams};
use lidx::mem::{LecoZoneMap, RoughLecoZoneMap};

static_suite!(
    cpr_pgm_0,
    |keys| CprPgm::build(keys, CprPgmParams::with_eps(0)),
    None
);
static_suite!(
    cpr_pgm_16,
    |keys| CprPgm::build(keys, CprPgmParams::with_eps(16)),
    Some(2 * 16 + 2)
);
static_suite!(
    cpr_pgm_64,
    |keys| CprPgm::build(keys, CprPgmParams::default()),
    Some(2 * 64 + 2)
);
static_suite!(
    leco_zone_map_1,
    |keys| LecoZoneMap::build(keys, ZoneMapParams::new(1)),
    Some(1)
);
static_suite!(
    leco_zone_map_7,
    |keys| LecoZoneMap::build(keys, ZoneMapParams::new(7)),
    Some(7)
);
static_suite!(
    rough_leco_zone_map_1,
    |keys| RoughLecoZoneMap::build(keys, ZoneMapParams::new(1)),
    Some(1)
);
static_suite!(
    rough_leco_zone_map_255,
    |keys| RoughLecoZoneMap::build(keys, ZoneMapParams::default()),
    Some(255)
);
static_suite!(
    smallest_1_5_pages,
    |keys| build_smallest(keys, SmallestParams::default()),
    Some(255)
);
static_suite!(
    smallest_of_blocks_of_8,
    |keys| build_smallest(
        keys,
        SmallestParams {
            per_block: 8,
            expected_pages: 3.0
        }
    ),
    Some(2 * 7 + 2)
);
