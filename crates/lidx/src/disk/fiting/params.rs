//! [`DiskFitingParams`]: what a [`super::DiskFiting`] is built with.

use crate::disk::btree::Resident;
use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};

/// Largest delta buffer accepted, in records.
pub(super) const MAX_BUFFER: usize = 1 << 16;

/// Parameters of [`super::DiskFiting::build`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskFitingParams {
    /// Bytes of payload per key (default 8).
    pub payload_size: usize,
    /// Error bound of every segment's model, in records (default 64, paper 003 §5.3). Larger
    /// means fewer segments (a smaller inner part) but a wider window of data blocks to read per
    /// lookup (Table 2: `2 eps / B` blocks).
    pub eps: usize,
    /// Records each segment's delta buffer holds before the segment is resegmented (default
    /// 256, paper 003 §5.3). Larger means fewer resegmentations but more blocks per segment on
    /// disk and per buffer read.
    pub buffer: usize,
    /// Which levels of the inner B+-tree stay in memory: [`Resident::None`] is paper 003
    /// §6.1 (everything on disk), [`Resident::AllInner`] (the default) §6.2 (the inner part in
    /// memory, segments on disk). Chosen again at every open.
    pub resident: Resident,
}

impl Default for DiskFitingParams {
    fn default() -> Self {
        DiskFitingParams {
            payload_size: DEFAULT_PAYLOAD_SIZE,
            eps: 64,
            buffer: 256,
            resident: Resident::AllInner,
        }
    }
}

impl DiskFitingParams {
    /// The defaults with error bound `eps`.
    pub fn with_eps(eps: usize) -> Self {
        DiskFitingParams {
            eps,
            ..Self::default()
        }
    }

    /// `InvalidParameter` for an error above 2^32, a buffer of 0 or above 2^16 records, or a
    /// payload above 64 KiB.
    pub fn check(&self) -> Result<()> {
        crate::mem::pgm::check_eps(self.eps)?;
        if !(1..=MAX_BUFFER).contains(&self.buffer) {
            return Err(Error::InvalidParameter {
                name: "buffer",
                value: self.buffer.to_string(),
                expected: "a delta buffer of 1 to 65536 records, such as 256",
            });
        }
        crate::disk::flagged_records::check_payload_size(self.payload_size)
    }
}
