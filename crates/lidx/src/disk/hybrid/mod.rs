//! The stages of the hybrid index (paper 002 §9, guideline G6): an in-memory dynamic stage
//! that takes every write, and a static stage of disk-resident static learned files that a
//! merge rebuilds.
//!
//! These are the parts a hybrid index is made of, without durability: [`dynamic`] (the
//! pluggable in-memory map, [`DynamicMap`], and its payload arena), [`sorted_runs`] (a compact
//! dynamic map of two sorted runs), [`static_set`] (the static files, routed by first key, and
//! the one place that opens a hybrid static file of whatever model it holds), [`merge`] (the
//! streaming merge of a frozen dynamic stage into new static files) and `options` (model,
//! trigger, what a merge writes with). The durable index that composes them with a write-ahead
//! log and a manifest, versions and background merges is [`crate::kv::HybridIndex`]; see
//! [`crate::kv::hybrid`] for the whole design and how it differs from the paper.
pub(crate) mod dynamic;
pub(crate) mod merge;
mod options;
pub(crate) mod sorted_runs;
pub(crate) mod static_set;

pub use dynamic::{DynamicMap, StdMap};
pub use options::{MergeTrigger, StageOptions, StaticModel};
pub use sorted_runs::SortedRuns;
