//! Greedy "shrinking cone" piecewise-linear approximation, the segmentation of the FITing-tree
//! (paper 001 §II-B.1: a greedy algorithm in the style of the Feasible Space Window, `O(n)`
//! time and `O(1)` extra space, guaranteeing a maximum error per segment).
//!
//! A segment starts at a CDF point `(x0, y0)` and passes through it. Every later point
//! `(x, y)` narrows the cone of slopes `s` that keep `|y0 + s (x - x0) - y| <= eps`; a point
//! whose own slope falls outside the current cone starts the next segment. The segment's slope
//! is the middle of its final cone (clamped at zero so the model stays monotone, which the cone
//! allows whenever the middle is negative). Unlike the optimal PLA of PGM, the greedy cone is
//! pinned at the segment's first point, so it may produce more segments; it is simpler and
//! what FITing-tree specifies.
//!
//! What we add: the error bound holds exactly as [`LinearModel::predict`] evaluates it in
//! `f64`, not only in exact arithmetic. The cone is computed in `f64` too, so rounding could
//! push a point a hair past `eps`; after choosing the slope we re-evaluate every point of the
//! segment with `predict` and, if one fails, end the segment just before it (a prefix of a
//! feasible set stays feasible for the same line, and the first point is always exact), then
//! continue from the failing point. We fit the CDF points of [`crate::model::points`], so
//! duplicates and absent keys get correct windows.

use crate::error::Result;
use crate::key::{check_sorted, Key};
use crate::model::linear::LinearModel;
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::segment::Segment;

/// Segments of `keys` whose models predict every CDF point within `eps` positions.
///
/// Errors: [`crate::Error::OutOfOrder`] for unsorted keys, [`crate::Error::InvalidKey`] for NaN.
pub fn greedy_pla<K: Key>(keys: &[K], eps: usize) -> Result<Vec<Segment>> {
    check_sorted(keys)?;
    let points: Vec<CdfPoint> = cdf_points(keys).collect();
    let eps_f = eps as f64;
    let mut segments = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let origin = points[start];
        let (x0, y0) = (origin.x, origin.y as f64);
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut end = start + 1;
        while end < points.len() {
            let p = points[end];
            let dx = (p.x - x0) as f64;
            let dy = p.y as f64 - y0;
            let slope = dy / dx;
            if slope < lo || slope > hi {
                break;
            }
            lo = lo.max((dy - eps_f) / dx);
            hi = hi.min((dy + eps_f) / dx);
            end += 1;
        }
        let slope = if end == start + 1 {
            0.0
        } else {
            (lo / 2.0 + hi / 2.0).max(0.0)
        };
        let model = LinearModel {
            x0,
            slope,
            intercept: y0,
        };
        let fits = |p: &CdfPoint| (model.predict(p.x) - p.y as f64).abs() <= eps_f;
        end = start + points[start..end].iter().take_while(|p| fits(p)).count();
        segments.push(Segment {
            first_key: x0,
            first_rank: origin.y,
            model,
        });
        start = end;
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Checks the eps bound on every CDF point with the segment that covers it.
    fn assert_within(keys: &[u64], eps: usize) {
        let segs = greedy_pla(keys, eps).unwrap();
        let points: Vec<CdfPoint> = cdf_points(keys).collect();
        assert_eq!(segs.is_empty(), points.is_empty());
        for pair in segs.windows(2) {
            assert!(pair[0].first_key < pair[1].first_key);
        }
        for p in &points {
            let i = segs.partition_point(|s| s.first_key <= p.x) - 1;
            let s = &segs[i];
            assert!(s.model.slope >= 0.0);
            let pred = s.model.predict(p.x);
            assert!(
                (pred - p.y as f64).abs() <= eps as f64,
                "point {p:?}: predicted {pred} (eps {eps}, segment {s:?})"
            );
        }
    }

    #[test]
    fn lines_need_one_segment() {
        let keys: Vec<u64> = (0..1000).map(|i| 10 + 7 * i).collect();
        assert_eq!(greedy_pla(&keys, 0).unwrap().len(), 1);
        assert_within(&keys, 0);
        assert!(greedy_pla::<u64>(&[], 4).unwrap().is_empty());
    }

    #[test]
    fn curves_need_more_segments_at_small_eps() {
        let keys: Vec<u64> = (0..2000u64).map(|i| i * i * i).collect();
        let few = greedy_pla(&keys, 64).unwrap().len();
        let many = greedy_pla(&keys, 2).unwrap().len();
        assert!(many > few, "{many} <= {few}");
        assert_within(&keys, 2);
        assert_within(&keys, 64);
    }

    #[test]
    fn unsorted_input_is_refused() {
        assert!(matches!(
            greedy_pla(&[3u64, 1], 4),
            Err(crate::Error::OutOfOrder { index: 1, .. })
        ));
    }

    proptest! {
        #[test]
        fn error_is_bounded_in_f64(
            raw in proptest::collection::vec(any::<u64>(), 0..400),
            small in proptest::collection::vec(0u64..64, 0..400),
            near_max in proptest::collection::vec(0u64..5000, 0..400),
            eps in 0usize..20,
        ) {
            let mut raw = raw;
            raw.sort_unstable();
            assert_within(&raw, eps);
            let mut small = small;
            small.sort_unstable();
            assert_within(&small, eps);
            let mut high: Vec<u64> = near_max.iter().map(|d| u64::MAX - d).collect();
            high.sort_unstable();
            assert_within(&high, eps);
            let mut mixed: Vec<u64> = small.iter().copied().chain(high.iter().copied()).collect();
            mixed.sort_unstable();
            assert_within(&mixed, eps);
        }
    }
}
