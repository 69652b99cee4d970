//! [`XIndexParams`]: XIndex's knobs (XIndex §5 "configuration"; the defaults are the paper's
//! `group_error_bound = 32`, `buffer_size_bound = 256` and `root_error_bound = 32`).

use crate::error::{Error, Result};

/// XIndex's parameters. Every one must be at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XIndexParams {
    /// Records per group at bulk load; a group splits when its array and buffer pass four times
    /// this. Larger is fewer groups (a smaller root) and longer compactions.
    pub group_size: usize,
    /// Mean prediction error (positions) a group's models may have before a model or the group
    /// is split. Smaller is faster last-mile searches and more models and groups.
    pub error_bound: usize,
    /// Records a group's buffer takes before it is merged into the array (and removed records
    /// an array keeps before it is compacted). Larger is fewer, longer compactions and slower
    /// lookups of inserted keys.
    pub buffer_size: usize,
    /// Mean error (groups) of the root's RMI before it gets more second-stage models.
    pub root_error_bound: usize,
}

impl Default for XIndexParams {
    fn default() -> Self {
        XIndexParams {
            group_size: 1024,
            error_bound: 32,
            buffer_size: 256,
            root_error_bound: 32,
        }
    }
}

impl XIndexParams {
    /// [`Error::InvalidParameter`] for a zero.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("group_size", self.group_size),
            ("error_bound", self.error_bound),
            ("buffer_size", self.buffer_size),
            ("root_error_bound", self.root_error_bound),
        ] {
            if value == 0 {
                return Err(Error::InvalidParameter {
                    name,
                    value: "0".into(),
                    expected: "at least 1",
                });
            }
        }
        Ok(())
    }

    /// Records (array and buffer) past which a group splits.
    pub(crate) fn max_group(&self) -> usize {
        self.group_size.saturating_mul(4)
    }
}
