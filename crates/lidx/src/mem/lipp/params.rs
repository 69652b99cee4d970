//! [`LippParams`]: when LIPP fits with FMCD and when it rebuilds a subtree.
//!
//! Defaults are the reference implementation's: FMCD on; a subtree is rebuilt once it holds
//! four times the entries it was built with (and at least 64), if at least a tenth of the
//! inserts since its build met a `DATA` slot; nodes built from more than a million entries
//! are never rebuilt by inserts. The reference has no removal; `shrink` is ours (see
//! `remove.rs`).

use crate::error::{Error, Result};

/// LIPP's tuning parameters. See the module docs for the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LippParams {
    /// Fit nodes with FMCD (true) or the middle-thirds line only (false): FMCD gives fewer
    /// conflicts, so shallower trees, for one more pass over the keys at build.
    pub fmcd: bool,
    /// A subtree is rebuilt when it holds `growth` times the entries it was built with:
    /// larger is fewer rebuilds and deeper trees between them. At least 2.
    pub growth: usize,
    /// ... and at least `conflict_percent`% of its inserts since then made a child (0 to 100):
    /// larger rebuilds only subtrees whose model fits the new keys badly.
    pub conflict_percent: usize,
    /// ... and it holds at least this many entries.
    pub min_rebuild: usize,
    /// Nodes built from more entries than this are never rebuilt by inserts (a rebuild of
    /// the root would stall one insert for the whole build time).
    pub fixed_size: usize,
    /// A subtree is rebuilt smaller when removes leave it fewer than `1/shrink` of the entries
    /// it was built with (and it was built with at least `min_rebuild`): smaller returns the
    /// empty slots' memory sooner, at more rebuilds. At least 2.
    pub shrink: usize,
}

impl Default for LippParams {
    fn default() -> Self {
        LippParams {
            fmcd: true,
            growth: 4,
            conflict_percent: 10,
            min_rebuild: 64,
            fixed_size: 1_000_000,
            shrink: 4,
        }
    }
}

impl LippParams {
    /// [`Error::InvalidParameter`] for a value outside its range.
    pub fn validate(&self) -> Result<()> {
        let bad = |name, value: usize, expected| {
            Err(Error::InvalidParameter {
                name,
                value: value.to_string(),
                expected,
            })
        };
        if self.growth < 2 {
            return bad("growth", self.growth, "at least 2");
        }
        if self.conflict_percent > 100 {
            return bad("conflict_percent", self.conflict_percent, "0 to 100");
        }
        if self.shrink < 2 {
            return bad("shrink", self.shrink, "at least 2");
        }
        Ok(())
    }

    /// True when a node with these statistics should be rebuilt after an insert.
    pub(crate) fn grown(
        &self,
        size: usize,
        build_size: usize,
        inserts: u32,
        conflicts: u32,
    ) -> bool {
        build_size <= self.fixed_size
            && size >= self.min_rebuild
            && size >= build_size.saturating_mul(self.growth)
            && u64::from(conflicts) * 100 >= u64::from(inserts) * self.conflict_percent as u64
    }

    /// True when a node with these statistics should be rebuilt after a remove.
    pub(crate) fn shrunk(&self, size: usize, build_size: usize) -> bool {
        build_size >= self.min_rebuild && size.saturating_mul(self.shrink) < build_size
    }
}
