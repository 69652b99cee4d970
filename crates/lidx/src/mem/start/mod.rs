//! START, the self-tuning adaptive radix tree (paper 004): ART with multilevel nodes placed by
//! a cost model and an optimizer.
//!
//! * [`Start`] (`tree.rs`): the map, an [`crate::mem::Art`] plus tuning; `retune()`.
//! * [`CostModel`] (`cost_model.rs`): Table I measured on this machine ([`calibrate`]), saved
//!   and loaded as text.
//! * [`Strategy`] (`optimizer.rs`): the dynamic program of §IV-B and the greedy variant, then
//!   the bulk transformation.
//! * [`NodeMix`] (`stats.rs`): the node mix; [`RadixIndex`] (`index.rs`): ART and START as
//!   exact static indexes for benchmarks.
//!
//! Layers: START builds on ART and ART never imports START. The multilevel node kinds
//! (MultiNode4, the rewired Node64K/Node16M, `promote`/`demote`) and their building blocks
//! (rewired memory, MultiNode4's cache line, the huge-page arena, cache control) live in
//! [`crate::mem::art`] with the other node kinds, since ART's node dispatch handles them all;
//! this module decides where they go. Their children are opaque `u64` words (0 = no child);
//! `art::multilevel` stores `NodeRef` words in them.
pub(crate) mod cost_model;
mod index;
mod optimizer;
mod stats;
mod tree;

pub use crate::mem::art::multinode::MultiNode4;
pub use crate::mem::art::node::NodeKind;
pub use crate::mem::art::rewired::Iter as RewiredIter;
pub use crate::mem::art::rewired::{PageStats, RewiredArray, RewiredParams};
pub use cost_model::{CacheState, CostModel, NodeCost};
pub use index::RadixIndex;
pub use optimizer::{Strategy, TuneReport};
pub use stats::NodeMix;
pub use tree::{Start, StartParams};
