//! The updatable FITing-tree (paper 001 §II-B.1 and §IV-D; paper 003 §2): greedy segments of
//! error `eps` under a B+-tree, assembled from an insertion strategy — [`Inplace`] (free slots
//! at both ends of a segment), [`Buffer`] (a sorted delta buffer per segment) or [`Gap`]
//! (ALEX's gapped array, paper 001's third strategy) — and counting
//! its retrains ([`RetrainStats`]). `map` says how segments are found and re-segmented,
//! `strategy` what a strategy is.

mod buffer;
mod gap;
mod inplace;
mod map;
mod params;
mod range;
mod strategy;

pub use crate::mem::retrain_stats::RetrainStats;
pub use buffer::{Buffer, BufferCursor};
pub use gap::Gap;
pub use inplace::Inplace;
pub use map::FitingMap;
pub use params::FitingMapParams;
pub use range::Range;
pub use strategy::{Insert, InsertStrategy};

/// The FITing-tree inserting in place.
pub type FitingInplace<K, V> = FitingMap<K, V, Inplace<K, V>>;

/// The FITing-tree inserting into per-segment delta buffers.
pub type FitingBuffer<K, V> = FitingMap<K, V, Buffer<K, V>>;

/// The FITing-tree with gapped-array segments (ALEX's data node).
pub type FitingGap<K, V> = FitingMap<K, V, Gap<K, V>>;
