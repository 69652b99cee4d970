//! [`DynamicPgmParams`]: the errors of each level's PGM and the size of the first level.

use crate::error::{Error, Result};
use crate::mem::pgm::PgmParams;

/// The largest first level accepted: it is a sorted array searched and shifted directly.
const MAX_BASE: usize = 1 << 24;

/// Parameters of a [`crate::mem::DynamicPgm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicPgmParams {
    /// Error of the PGM built on each level (and of its upper levels, `eps_recursive`): larger
    /// means smaller models but wider windows to search in every level a lookup visits.
    pub pgm: PgmParams,
    /// Capacity of the first level, the insert buffer, a sorted array searched directly; level
    /// `i >= 1` holds at most `base * 2^i` entries. Larger means fewer merges and levels but a
    /// longer shift per insert into the buffer. Default 256; 1 to 2^24.
    pub base: usize,
    /// Levels of at least this many entries get a PGM; smaller ones are binary-searched.
    /// Smaller means faster lookups in the middle levels but a PGM build more per insert (every
    /// merge into an indexed level rebuilds its PGM). Default 2^18 (see the `Default` impl).
    pub min_indexed: usize,
}

impl Default for DynamicPgmParams {
    /// PGM's defaults (eps 64, eps_recursive 8), a first level of 256 entries (4 KiB of
    /// `u64` pairs), PGMs on levels of 2^18 entries and more. The PGM-index's
    /// `DynamicPGMIndex` indexes from 2^24 entries; 2^18 `u64` keys (2 MiB) is about where a
    /// binary search leaves the L2 cache. Measured on 10M lognormal keys (half bulk-loaded,
    /// half inserted, loaded machine): PGMs on every level made inserts 1.3x slower (6.2 vs
    /// 4.7 us; merges 6.9 vs 3.8 s in all) for no faster lookups after the inserts (4.8 us
    /// both); other thresholds were not tried.
    fn default() -> Self {
        DynamicPgmParams {
            pgm: PgmParams::default(),
            base: 256,
            min_indexed: 1 << 18,
        }
    }
}

impl DynamicPgmParams {
    /// Parameters with the given errors and first-level size.
    pub fn new(eps: usize, eps_recursive: usize, base: usize) -> Self {
        DynamicPgmParams {
            pgm: PgmParams::new(eps, eps_recursive),
            base,
            ..Self::default()
        }
    }

    /// These parameters with PGMs on levels of at least `min_indexed` entries.
    pub fn with_min_indexed(self, min_indexed: usize) -> Self {
        DynamicPgmParams {
            min_indexed,
            ..self
        }
    }

    /// The PGM parameters for a level of `len` entries, `None` when it gets no PGM.
    pub(crate) fn pgm_for(&self, len: usize) -> Option<PgmParams> {
        (len >= self.min_indexed).then_some(self.pgm)
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
