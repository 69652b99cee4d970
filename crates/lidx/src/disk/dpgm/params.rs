//! [`DiskPgmParams`]: what a [`super::DiskPgm`] is built with, all recorded in its manifest.

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};
use crate::mem::pgm::PgmParams;

/// The largest level 0 accepted: it is a sorted array in memory, searched and shifted directly.
pub(super) const MAX_BASE: usize = 1 << 20;

/// Parameters of [`super::DiskPgm::build`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskPgmParams {
    /// Bytes of payload per key (default 8).
    pub payload_size: usize,
    /// Error of every level's PGM, bottom level (`eps`) and upper levels (`eps_recursive`).
    /// Larger means smaller models in memory but wider windows, so more leaf blocks read per
    /// level a lookup visits (paper 003 §5.3 uses 64, the default).
    pub pgm: PgmParams,
    /// Capacity of level 0, the in-memory sorted array new writes go to; level `i >= 1` holds at
    /// most `base * 2^i` records. Larger means fewer merges and fewer levels (fewer files a
    /// lookup visits, paper 003 O10) but more memory and more writes lost by a crash between
    /// flushes. Default 256 (4 KiB of `u64` pairs, as the in-memory dynamic PGM); 1 to 2^20.
    pub base: usize,
}

impl Default for DiskPgmParams {
    fn default() -> Self {
        DiskPgmParams {
            payload_size: DEFAULT_PAYLOAD_SIZE,
            pgm: PgmParams::new(64, 8),
            base: 256,
        }
    }
}

impl DiskPgmParams {
    /// The defaults with error `eps` (upper levels 8).
    pub fn with_eps(eps: usize) -> Self {
        DiskPgmParams {
            pgm: PgmParams::new(eps, 8),
            ..Self::default()
        }
    }

    /// `InvalidParameter` for a bad error, a level 0 of 0 or above 2^20 records, or a
    /// payload above 64 KiB.
    pub fn check(&self) -> Result<()> {
        self.pgm.validate()?;
        if !(1..=MAX_BASE).contains(&self.base) {
            return Err(Error::InvalidParameter {
                name: "base",
                value: self.base.to_string(),
                expected: "a level-0 size from 1 to 2^20 records, such as 256",
            });
        }
        crate::disk::flagged_records::check_payload_size(self.payload_size)
    }

    /// The parameters text the level files record (`StaticLearnedParams::model_params`).
    pub(crate) fn model_params(&self) -> String {
        format!(
            "dpgm:eps={}:eps_rec={}",
            self.pgm.eps, self.pgm.eps_recursive
        )
    }
}
