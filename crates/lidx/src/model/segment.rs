//! A segment of a piecewise-linear approximation, the output of every PLA algorithm.

use crate::model::linear::LinearModel;

/// One piece of a piecewise-linear CDF approximation. It covers the CDF points whose model-space
/// key is at least `first_key` and below the next segment's `first_key`; `model.x0 == first_key`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Segment {
    /// Smallest model-space key the segment covers.
    pub first_key: u64,
    /// Rank of the first CDF point it covers.
    pub first_rank: usize,
    /// The line it predicts with.
    pub model: LinearModel,
}

impl Segment {
    /// Bytes a segment takes in memory.
    pub const BYTES: usize = std::mem::size_of::<Self>();
}
