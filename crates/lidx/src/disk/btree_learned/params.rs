//! Build parameters of the learned-inner B+-tree.
//!
//! The leaves are the disk B+-tree's, so its two leaf parameters (payload size, fill factor)
//! mean the same here. The third trades memory for maintenance: how many leaves splits may add
//! to the in-memory split list before the model is learned again (paper 003 §7.2 P2: SMOs
//! should be cheap and rare; a retrain is our only costly one).

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};

/// Parameters of [`super::BTreeLearned::build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BTreeLearnedParams {
    /// Bytes of payload stored with every key (default 8).
    pub payload_size: usize,
    /// Fraction of each leaf's capacity the bulk load fills, in `(0, 1]` (default 1.0, as the
    /// disk B+-tree). Lower values leave room for inserts without splits, at the cost of
    /// `1 / fill_factor` times the leaves (and the model's directory).
    pub fill_factor: f64,
    /// Maximum error, in entries, of the model that cuts the leaves (default 16). A leaf is cut
    /// to hold `C = floor(capacity * fill_factor) - 2 eps - 1` entries on average and at most
    /// `C + 2 eps + 1`: larger means fewer model segments (less memory) but emptier leaves
    /// (more leaves per scan, more blocks on disk); smaller the reverse.
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
            eps: 16,
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

    /// Entries the model puts in a leaf on average, `C` of [`Self::eps`]'s docs, for leaves of
    /// `capacity` entries; [`Error::InvalidParameter`] when it is not positive.
    pub fn leaf_target(&self, capacity: usize) -> Result<usize> {
        let filled = ((capacity as f64 * self.fill_factor) as usize).min(capacity);
        filled
            .checked_sub(2 * self.eps + 1)
            .filter(|&c| c >= 1)
            .ok_or_else(|| Error::InvalidParameter {
                name: "eps",
                value: format!("{} with {filled} entries a leaf", self.eps),
                expected: "2 eps + 2 at most the entries a leaf is filled with",
            })
    }
}
