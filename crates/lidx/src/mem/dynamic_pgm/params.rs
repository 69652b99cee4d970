//! [`DynamicPgmParams`]: the errors of each level's PGM and the size of the first level.

use crate::error::{Error, Result};
use crate::mem::pgm::PgmParams;

/// The largest first level accepted: it is a sorted array searched and shifted directly.
const MAX_BASE: usize = 1 << 24;

/// Parameters of a [`crate::mem::dynamic_pgm::DynamicPgm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicPgmParams {
    /// Error of the PGM built on each level (and of its upper levels, `eps_recursive`): larger
    /// means smaller models but wider windows to search in every level a lookup visits.
    pub pgm: PgmParams,
    /// Capacity of the first level, the insert buffer, a sorted array searched directly; level
    /// `i >= 1` holds at most `base * 2^i` entries. Larger means fewer merges and levels but a
    /// longer shift per insert into the buffer. Default 256; 1 to 2^24.
    pub base: usize,
}

impl Default for DynamicPgmParams {
    /// PGM's defaults (eps 64, eps_recursive 8) and a first level of 256 entries (4 KiB of
    /// `u64` pairs).
    fn default() -> Self {
        DynamicPgmParams {
            pgm: PgmParams::default(),
            base: 256,
        }
    }
}

impl DynamicPgmParams {
    /// Parameters with the given errors and first-level size.
    pub fn new(eps: usize, eps_recursive: usize, base: usize) -> Self {
        DynamicPgmParams {
            pgm: PgmParams::new(eps, eps_recursive),
            base,
        }
    }

    /// `InvalidParameter` for a first level of 0 or above 2^24 entries, or bad PGM errors.
    pub(crate) fn validate(&self) -> Result<()> {
        if !(1..=MAX_BASE).contains(&self.base) {
            return Err(Error::InvalidParameter {
                name: "base",
                value: self.base.to_string(),
                expected: "a first-level size from 1 to 2^24 entries, such as 256",
            });
        }
        self.pgm.validate()
    }
}
