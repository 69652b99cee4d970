//! [`FitingMapParams`]: the segments' error, the room each segment reserves for inserts, and
//! the node sizes of the B+-tree over the segments.

use crate::error::{Error, Result};
use crate::mem::btree::BTreeParams;

/// The largest reserve accepted: a segment's room is allocated when it is built.
const MAX_RESERVE: usize = 1 << 24;

/// Parameters of a [`crate::mem::FitingMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitingMapParams {
    /// Maximum error of a segment's model when it is (re)trained, in positions. Larger means
    /// fewer, longer segments (a smaller tree, costlier retrains) but longer searches inside a
    /// segment. Default 64 (paper 003 §5's setting); up to 2^32.
    pub eps: usize,
    /// Room each segment reserves for new keys: free slots split between its two ends (in
    /// place) or the delta buffer's capacity (buffer). Larger means fewer retrains but more
    /// keys moved per insert (paper 001 §IV-D) and more memory. Default 256 (paper 003 §5's
    /// buffer size); 0 to 2^24 (0: every new key retrains its segment).
    pub reserve: usize,
    /// Node sizes of the B+-tree over the segments.
    pub tree: BTreeParams,
}

impl Default for FitingMapParams {
    fn default() -> Self {
        FitingMapParams {
            eps: 64,
            reserve: 256,
            tree: BTreeParams::default(),
        }
    }
}

impl FitingMapParams {
    /// Default tree nodes with the given `eps` and `reserve`.
    pub fn new(eps: usize, reserve: usize) -> Self {
        FitingMapParams {
            eps,
            reserve,
            tree: BTreeParams::default(),
        }
    }

    /// `InvalidParameter` for an `eps` or `reserve` beyond its limit.
    pub(crate) fn validate(&self) -> Result<()> {
        crate::mem::pgm::check_eps(self.eps)?;
        if self.reserve > MAX_RESERVE {
            return Err(Error::InvalidParameter {
                name: "reserve",
                value: self.reserve.to_string(),
                expected: "at most 2^24 slots per segment, such as 256",
            });
        }
        Ok(())
    }
}
