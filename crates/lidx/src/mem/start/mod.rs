//! START, the self-tuning adaptive radix tree (paper 004): ART with multilevel nodes placed by
//! a cost model and an optimizer.
//!
//! * [`Start`] (`tree.rs`): the map, an [`crate::mem::art::Art`] plus tuning; `retune()`.
//! * [`nodes`]: MultiNode4 and the rewired Node64K/Node16M as ART node kinds, `promote` and
//!   `demote` between them and ART's nodes.
//! * [`cost_model`]: Table I measured on this machine (`calibrate`), saved and loaded as text.
//! * [`optimizer`]: the dynamic program of §IV-B and the greedy variant, then the bulk
//!   transformation.
//! * [`stats`]: the node mix; [`index`]: ART and START as exact static indexes for benchmarks.
//! * [`arena`]: the huge-page block a tuned tree's nodes and leaves are moved into.
//! * Building blocks that do not depend on ART's node layout: [`rewired`] (the tagged slot array
//!   whose sparse pages share memfd pages, with a plain fallback), [`multinode`] (MultiNode4's
//!   cache line), [`cache_control`] (flushes, serialized time stamps, medians). Their children
//!   are opaque `u64` words (0 = no child); `nodes` stores `NodeRef` words in them.

pub mod arena;
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
