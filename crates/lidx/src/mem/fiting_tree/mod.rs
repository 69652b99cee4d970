//! The updatable FITing-tree.

mod stats;

pub use stats::RetrainStats;
