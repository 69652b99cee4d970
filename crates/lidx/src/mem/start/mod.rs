//! START building blocks (paper 004, *START - Self-Tuning Adaptive Radix Tree*) that do not
//! depend on ART's node layout.
//!
//! * [`rewired`]: the rewired virtual child array behind Node64K and Node16M (§III-A): tagged
//!   slots whose sparse pages share physical memfd pages, with a plain fallback.
//! * [`multinode`]: MultiNode4 (§III-B), four keys of up to four key bytes in one cache line.
//! * [`cache_control`]: cache flushing, serialized time stamps and medians for the measured cost
//!   model (§IV-A, Table I).
//!
//! Children are opaque `u64` words (0 = no child); the tree chooses their tagging.

pub mod cache_control;
pub mod cost_model;
pub mod index;
pub mod multinode;
#[doc(hidden)]
pub mod nodes;
pub mod optimizer;
pub mod rewired;
pub mod stats;
mod tree;

pub use cost_model::{calibrate, CostModel};
pub use multinode::MultiNode4;
pub use optimizer::{Strategy, TuneReport};
pub use rewired::{PageStats, RewiredArray, RewiredParams};
pub use stats::NodeMix;
pub use tree::{Start, StartParams};
