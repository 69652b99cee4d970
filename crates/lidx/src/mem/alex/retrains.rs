//! [`AlexRetrains`]: how often ALEX reshaped a data node while it was updated, and how long that
//! took, by kind — the retraining dimension of paper 001 §IV-E (Fig. 18 (b): retraining count,
//! average and total time; Table I names ALEX's strategy "Expand + retrain").
//!
//! Paper 001 does not say which of ALEX's node changes it counts as a retrain. We count all
//! four, each timed from the decision to the node being ready for the insert that caused it:
//!
//! * **expansions**: a data node at `max_density` grows to `min_density` and re-places its
//!   keys by its scaled model (no model fitted);
//! * **retrains**: a data node whose measured cost deviates is rebuilt with a refitted model
//!   (its cost beat a split), and a node of fewer than two keys is refitted as it grows;
//! * **splits**: a data node is cut in two, sideways or down (two models fitted), or, when
//!   all its keys route to one half of its slots, keeps that half and leaves the other to
//!   an empty node (repeatedly, until its keys straddle a cut);
//! * **widenings**: the root's key domain is doubled for keys appended past it, a new data
//!   node taking the keys that route there (`widen`).
//!
//! [`AlexRetrains::total`] sums them: the count Fig. 18 (b) compares with the FITing-tree's
//! re-segmentations and the dynamic PGM's merges.

use crate::mem::retrain_stats::RetrainStats;

/// ALEX's node reshapes since the bulk load, by kind. See the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlexRetrains {
    /// Data nodes grown with their model scaled.
    pub expansions: RetrainStats,
    /// Data nodes rebuilt with a refitted model.
    pub retrains: RetrainStats,
    /// Data nodes split (sideways or down).
    pub splits: RetrainStats,
    /// The root widened for appended keys.
    pub widenings: RetrainStats,
}

impl AlexRetrains {
    /// All four kinds together.
    pub fn total(&self) -> RetrainStats {
        let kinds = [self.expansions, self.retrains, self.splits, self.widenings];
        RetrainStats {
            count: kinds.iter().map(|k| k.count).sum(),
            total: kinds.iter().map(|k| k.total).sum(),
        }
    }
}
