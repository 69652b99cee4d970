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
pub mod multinode;
pub mod rewired;

pub use multinode::MultiNode4;
pub use rewired::{PageStats, RewiredArray, RewiredParams};
