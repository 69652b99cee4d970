//! Build parameters of the learned-inner B+-tree.
//!
//! The leaves are the disk B+-tree's, so its two leaf parameters (payload size, fill factor)
//! mean the same here. The third trades memory for maintenance: how many leaves splits may add
//! to the in-memory split list before the model is learned again (paper 003 §7.2 P2: SMOs
//! should be cheap and rare; a retrain is our only costly one).

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};

/// Largest [`BTreeLearnedParams::eps`], in entries.
pub(super) const MAX_EPS: usize = 1 << 24;

/// Parameters of [`super::BTreeLearned::build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BTreeLearnedParams {
    /// Bytes of payload stored with every key (default 8).
    pub payload_size: usize,
    /// Fraction of each leaf's capacity the bulk load fills, in `(0, 1]` (default 1.0, as the
    /// disk B+-tree). Lower values leave room for inserts without splits, at the cost of
    /// `1 / fill_factor` times the leaves (and the model's directory).
    pub fill_factor: f64,
    /// Maximum error, in entries, of the model over the leaves' first keys (default 1024, about
    /// four leaves; at most `MAX_EPS`). The leaves are full whatever it is (they are cut by
    /// count, and per-boundary corrections make the routing exact, `super::model`): larger
    /// means fewer model segments (less memory) and a wider binary search over the corrections
    /// in memory; it never changes the blocks a lookup reads.
    pub eps: usize,
    /// Split leaves the split list may hold, as a fraction of the model's slots, before the
    /// next split retrains the model over every leaf (reading each once). Larger means rarer
    /// retrains (fewer blocks per insert) and more memory between them (16 bytes per split
    /// leaf with `u64` keys, against 4 bytes per leaf once learned). Default 1.0; positive.
    pub retrain_ratio: f64,
}

impl Default for BTreeLearnedParams {
    fn default() -> Self {
        BTreeLearnedParams {
            payload_size: DEFAULT_PAYLOAD_SIZE,
            fill_factor: 1.0,
            eps: 1024,
            retrain_ratio: 1.0,
        }
    }
}

impl BTreeLearnedParams {
    /// [`Error::InvalidParameter`] for a fill factor outside `(0, 1]` or a retrain ratio that
    /// is not a positive number.
    pub fn check(&self) -> Result<()> {
        if !(self.fill_factor > 0.0 && self.fill_factor <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "fill_factor",
                value: self.fill_factor.to_string(),
                expected: "a fraction in (0, 1]",
            });
        }
        if self.retrain_ratio.is_nan() || self.retrain_ratio <= 0.0 {
            return Err(Error::InvalidParameter {
                name: "retrain_ratio",
                value: self.retrain_ratio.to_string(),
                expected: "a positive number (infinity: never retrain)",
            });
        }
        Ok(())
    }

    /// Entries the bulk load and the retrain put in a leaf, `capacity * fill_factor` (at least
    /// 1), for leaves of `capacity` entries; [`Error::InvalidParameter`] when `eps` is more
    /// than `MAX_EPS`.
    pub fn leaf_target(&self, capacity: usize) -> Result<usize> {
        if self.eps > MAX_EPS {
            return Err(Error::InvalidParameter {
                name: "eps",
                value: self.eps.to_string(),
                expected: "at most 2^24 entries",
            });
        }
        Ok(((capacity as f64 * self.fill_factor) as usize).clamp(1, capacity.max(1)))
    }
}
