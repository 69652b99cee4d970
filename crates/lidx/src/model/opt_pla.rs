//! (to be written) Optimal streaming PLA.

use crate::error::Result;
use crate::key::Key;
use crate::model::points::CdfPoint;
use crate::model::segment::Segment;

/// Optimal PLA of sorted `keys` with maximum error `eps`.
pub fn optimal_pla<K: Key>(keys: &[K], eps: usize) -> Result<Vec<Segment>> {
    let _ = (keys, eps);
    todo!()
}

/// Optimal PLA of a stream of CDF points (strictly increasing `x`) with maximum error `eps`.
pub fn optimal_pla_points(points: impl Iterator<Item = CdfPoint>, eps: usize) -> Vec<Segment> {
    let _ = (points, eps);
    todo!()
}
