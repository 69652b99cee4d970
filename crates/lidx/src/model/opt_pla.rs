//! Optimal streaming piecewise-linear approximation (PLA) with a guaranteed maximum error.
//!
//! Paper 001 §IV-A calls this **Opt-PLA**, the approximation the PGM-index uses: the user fixes
//! the maximum error `eps`, points are streamed in key order, and each segment takes as many
//! points as one straight line can cover within `eps`, which yields the fewest segments. We
//! implement the convex-hull method (O'Rourke's algorithm, as adapted by the PGM-index): every
//! point `(x, y)` becomes a vertical band `[y - eps, y + eps]`; the builder keeps the lower hull
//! of the band tops, the upper hull of the band bottoms, and the two extreme feasible lines (the
//! "rectangle"). A point whose band leaves the wedge between the extreme lines ends the segment.
//! Each point is pushed on a hull at most once, so the whole pass is O(n).
//!
//! What we do differently, and why:
//!
//! * **Exact integer hull.** Coordinates are relative to the segment's first point, `x` as `u64`
//!   and `y` (scaled by 2^8) as `i64`, which holds for ranks below 2^54; every orientation test is
//!   an exact cross product of 64 x 64 -> 128-bit products (one widening multiply each: PGM
//!   builds on 50M lognormal keys went from about 38 to 58M keys/s against full `i128` products). PGM's reference code uses floating point or
//!   plain `int64` products, which can overflow for keys near `u64::MAX`.
//! * **The guarantee holds for the `f64` model actually evaluated.** A segment's line is rounded
//!   to `f64` and [`LinearModel::predict`] rounds again, so an exact fit at `eps` could be off by
//!   a hair. The hull therefore uses the band `y +- (eps - m)` with a margin `m` of `2^-8` items
//!   (growing as `2^-44 * y` for ranks beyond 2^36), which dominates every rounding error by a
//!   factor of at least 32. The segment count is optimal for `eps - m`, i.e. for all practical
//!   purposes for `eps`, and `|model.predict(x) - y| <= eps` holds exactly in `f64` for every
//!   covered point, for ranks below 2^44 (the margin would exceed one item beyond that).
//! * **The output line** is the average of the two extreme feasible lines (both feasible, so
//!   their average is too), evaluated at the segment's first key, rather than PGM's line through
//!   the intersection of the extreme lines, whose computation cancels catastrophically when they
//!   are nearly parallel. Its slope is clamped at zero (a flat line is always feasible for
//!   non-decreasing ranks) so that models stay monotone.
//! * **`eps = 0`** is supported: a segment then keeps a point only if the `f64` model fixed by its
//!   first two points (the rounded slope or a neighbouring `f64`) predicts it exactly. This is greedy rather than optimal, since a point that
//!   is collinear in exact arithmetic but not in `f64` starts a new segment.
//!
//! Points must have strictly increasing `x` and non-decreasing `y` (CDF points do).

use crate::error::Result;
use crate::key::{check_sorted, Key};
use crate::model::linear::LinearModel;
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::segment::Segment;

/// Bits of fixed-point precision below one rank in the hull's `y` coordinates.
const Y_SCALE_BITS: u32 = 8;

/// Ranks above `2^MARGIN_SHIFT` get a margin proportional to the rank (see module docs).
const MARGIN_SHIFT: u32 = 36;

/// Optimal PLA of sorted `keys` with maximum error `eps`: fits [`cdf_points`] of the keys.
///
/// Returns [`crate::Error::OutOfOrder`] or [`crate::Error::InvalidKey`] for bad input.
pub fn optimal_pla<K: Key>(keys: &[K], eps: usize) -> Result<Vec<Segment>> {
    check_sorted(keys)?;
    Ok(optimal_pla_points(cdf_points(keys), eps))
}

/// Optimal PLA of a stream of CDF points (strictly increasing `x`, non-decreasing `y`) with
/// maximum error `eps`.
pub fn optimal_pla_points(points: impl Iterator<Item = CdfPoint>, eps: usize) -> Vec<Segment> {
    let mut builder = OptPlaBuilder::new(eps);
    let mut out = Vec::new();
    for p in points {
        if let Some(segment) = builder.add_point(p) {
            out.push(segment);
        }
    }
    out.extend(builder.finish());
    out
}

/// A hull point: `x` relative to the segment's first key, `y` in 2^-8 ranks relative to the
/// segment's first rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Pt {
    x: u64,
    y: i64,
}

/// The slope from `a` to `b`; `b` must lie right of `a`, so the denominator is positive.
#[derive(Debug, Clone, Copy)]
struct Slope {
    dx: u64,
    dy: i64,
}

impl Slope {
    #[inline(always)]
    fn between(a: Pt, b: Pt) -> Self {
        debug_assert!(b.x > a.x);
        Slope {
            dx: b.x - a.x,
            dy: b.y - a.y,
        }
    }

    #[inline(always)]
    fn lt(self, other: Slope) -> bool {
        // 64 x 64 -> 128-bit products: exact, and one widening multiply each.
        i128::from(self.dy) * i128::from(other.dx) < i128::from(other.dy) * i128::from(self.dx)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.dy as f64 / self.dx as f64 / f64::from(1u32 << Y_SCALE_BITS)
    }
}

/// `(b - a) x (c - a)`: positive when `a -> b -> c` turns counter-clockwise.
#[inline(always)]
fn cross(a: Pt, b: Pt, c: Pt) -> i128 {
    i128::from(b.x - a.x) * i128::from(c.y - a.y) - i128::from(b.y - a.y) * i128::from(c.x - a.x)
}

/// Streaming optimal PLA: feed CDF points in order with [`add_point`](Self::add_point), which
/// hands back each segment as soon as a point no longer fits it, then call
/// [`finish`](Self::finish) for the last one. Memory is the current segment's hulls only.
#[derive(Debug, Clone)]
pub(crate) struct OptPlaBuilder {
    eps: usize,
    /// Points in the current segment.
    count: usize,
    first_x: u64,
    first_y: usize,
    last_x: u64,
    /// Extreme lines: min slope `rect[0] -> rect[2]`, max slope `rect[1] -> rect[3]`.
    rect: [Pt; 4],
    /// Lower convex hull of the band tops.
    upper: Vec<Pt>,
    upper_start: usize,
    /// Upper convex hull of the band bottoms.
    lower: Vec<Pt>,
    lower_start: usize,
    /// For `eps == 0`: the model fixed by the first two points.
    exact: LinearModel,
}

impl OptPlaBuilder {
    /// A builder for maximum error `eps` (in ranks).
    pub(crate) fn new(eps: usize) -> Self {
        OptPlaBuilder {
            eps,
            count: 0,
            first_x: 0,
            first_y: 0,
            last_x: 0,
            rect: [Pt::default(); 4],
            upper: Vec::new(),
            upper_start: 0,
            lower: Vec::new(),
            lower_start: 0,
            exact: LinearModel::default(),
        }
    }

    /// Adds the next point. Returns the finished segment when `p` does not fit the current one
    /// (and then starts a new segment with `p`).
    #[inline]
    pub(crate) fn add_point(&mut self, p: CdfPoint) -> Option<Segment> {
        debug_assert!(self.count == 0 || p.x > self.last_x, "x must increase");
        let fits = match self.count {
            0 => {
                self.start(p);
                return None;
            }
            _ if self.eps == 0 => self.extend_exact(p),
            _ => self.extend(p),
        };
        if fits {
            self.count += 1;
            self.last_x = p.x;
            return None;
        }
        let done = self.segment();
        self.start(p);
        Some(done)
    }

    /// The last segment, if any point was added since the last segment was handed out.
    pub(crate) fn finish(self) -> Option<Segment> {
        (self.count > 0).then(|| self.segment())
    }

    fn start(&mut self, p: CdfPoint) {
        self.count = 1;
        self.first_x = p.x;
        self.first_y = p.y;
        self.last_x = p.x;
        self.exact = LinearModel {
            x0: p.x,
            slope: 0.0,
            intercept: p.y as f64,
        };
        if self.eps == 0 {
            return;
        }
        let (top, bottom) = self.band(p);
        self.rect = [top, bottom, bottom, top];
        self.upper.clear();
        self.lower.clear();
        self.upper.push(top);
        self.lower.push(bottom);
        self.upper_start = 0;
        self.lower_start = 0;
    }

    /// Top and bottom of the (margin-reduced) band of `p`, in hull coordinates.
    #[inline(always)]
    fn band(&self, p: CdfPoint) -> (Pt, Pt) {
        let scale = 1i64 << Y_SCALE_BITS;
        let magnitude =
            p.y.max(self.first_y)
                .saturating_add(self.eps)
                .saturating_add(1);
        let margin = 1 + (magnitude >> MARGIN_SHIFT) as i64;
        let half = (self.eps as i64 * scale - margin).max(0);
        let x = p.x - self.first_x;
        let y = (p.y - self.first_y) as i64 * scale;
        (Pt { x, y: y + half }, Pt { x, y: y - half })
    }

    /// `eps == 0`: keep `p` only if the `f64` model predicts it exactly.
    fn extend_exact(&mut self, p: CdfPoint) -> bool {
        if self.count == 1 {
            // The rounded quotient dy / dx can miss y by one ulp; a neighbouring slope hits it.
            let model = LinearModel::through(self.first_x, self.first_y as f64, p.x, p.y as f64);
            let bits = model.slope.to_bits();
            let candidates = [bits, bits.wrapping_add(1), bits.wrapping_sub(1)];
            let hit = candidates
                .into_iter()
                .map(|b| LinearModel {
                    slope: f64::from_bits(b),
                    ..model
                })
                .find(|m| m.slope >= 0.0 && m.predict(p.x) == p.y as f64);
            let Some(model) = hit else {
                return false;
            };
            self.exact = model;
            return true;
        }
        self.exact.predict(p.x) == p.y as f64
    }

    /// Tries to add `p` to the current segment; false when no line covers it and the others.
    #[inline(always)]
    fn extend(&mut self, p: CdfPoint) -> bool {
        let (top, bottom) = self.band(p);
        if self.count == 1 {
            self.rect[2] = bottom;
            self.rect[3] = top;
            self.upper.push(top);
            self.lower.push(bottom);
            return true;
        }
        let [r0, r1, r2, r3] = self.rect;
        let min_slope = Slope::between(r0, r2);
        let max_slope = Slope::between(r1, r3);
        if Slope::between(r2, top).lt(min_slope) || max_slope.lt(Slope::between(r3, bottom)) {
            return false;
        }
        let mut top_pushed = false;
        if Slope::between(r1, top).lt(max_slope) {
            // The top constrains the max-slope line: pivot it on the lower hull.
            let mut best = self.lower_start;
            let mut best_slope = Slope::between(self.lower[best], top);
            for i in self.lower_start + 1..self.lower.len() {
                let s = Slope::between(self.lower[i], top);
                if best_slope.lt(s) {
                    break;
                }
                best = i;
                best_slope = s;
            }
            self.rect[1] = self.lower[best];
            self.rect[3] = top;
            self.lower_start = best;
            let mut end = self.upper.len();
            while end >= self.upper_start + 2
                && cross(self.upper[end - 2], self.upper[end - 1], top) <= 0
            {
                end -= 1;
            }
            self.upper.truncate(end);
            self.upper.push(top);
            top_pushed = true;
        }
        if min_slope.lt(Slope::between(r0, bottom)) {
            // The bottom constrains the min-slope line: pivot it on the upper hull.
            let mut best = self.upper_start;
            let mut best_slope = Slope::between(self.upper[best], bottom);
            // The top just pushed sits above `bottom`, a vertical slope that never wins.
            let candidates = self.upper.len() - usize::from(top_pushed);
            for i in self.upper_start + 1..candidates {
                let s = Slope::between(self.upper[i], bottom);
                if s.lt(best_slope) {
                    break;
                }
                best = i;
                best_slope = s;
            }
            self.rect[0] = self.upper[best];
            self.rect[2] = bottom;
            self.upper_start = best;
            let mut end = self.lower.len();
            while end >= self.lower_start + 2
                && cross(self.lower[end - 2], self.lower[end - 1], bottom) >= 0
            {
                end -= 1;
            }
            self.lower.truncate(end);
            self.lower.push(bottom);
        }
        true
    }

    /// The `f64` model of the current segment (see module docs for the choice of line).
    fn segment(&self) -> Segment {
        let model = if self.eps == 0 || self.count == 1 {
            self.exact
        } else {
            let unit = f64::from(1u32 << Y_SCALE_BITS);
            let [r0, r1, r2, r3] = self.rect;
            let s_min = Slope::between(r0, r2).to_f64();
            let s_max = Slope::between(r1, r3).to_f64();
            // Each extreme line's value at the segment's first key, in ranks from first_y.
            let at_origin = |p: Pt, slope: f64| p.y as f64 / unit - slope * p.x as f64;
            let (slope, rel) = if s_min + s_max >= 0.0 {
                (
                    0.5 * (s_min + s_max),
                    0.5 * (at_origin(r0, s_min) + at_origin(r1, s_max)),
                )
            } else {
                // The flat line at the min-slope line's value at the last key is feasible.
                let last = (self.last_x - self.first_x) as f64;
                (0.0, r0.y as f64 / unit + s_min * (last - r0.x as f64))
            };
            LinearModel {
                x0: self.first_x,
                slope,
                intercept: self.first_y as f64 + rel,
            }
        };
        Segment {
            first_key: self.first_x,
            first_rank: self.first_y,
            model,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Checks that `segments` cover `points` in order with `f64` error at most `eps`.
    fn assert_covers(points: &[CdfPoint], segments: &[Segment], eps: usize) {
        assert_eq!(segments.is_empty(), points.is_empty());
        let mut s = 0;
        for p in points {
            while s + 1 < segments.len() && segments[s + 1].first_key <= p.x {
                s += 1;
            }
            let seg = &segments[s];
            assert!(seg.first_key <= p.x);
            assert_eq!(seg.model.x0, seg.first_key);
            assert!(seg.model.slope >= 0.0, "{seg:?}");
            let pred = seg.model.predict(p.x);
            assert!(
                (pred - p.y as f64).abs() <= eps as f64,
                "point {p:?} predicted {pred} by {seg:?} (eps {eps})"
            );
        }
        for pair in segments.windows(2) {
            assert!(pair[0].first_key < pair[1].first_key);
            assert!(pair[0].first_rank <= pair[1].first_rank);
        }
        if let (Some(first), Some(p)) = (segments.first(), points.first()) {
            assert_eq!((first.first_key, first.first_rank), (p.x, p.y));
        }
    }

    fn fit(keys: &[u64], eps: usize) -> Vec<Segment> {
        let segments = optimal_pla(keys, eps).unwrap();
        let points: Vec<CdfPoint> = cdf_points(keys).collect();
        assert_covers(&points, &segments, eps);
        segments
    }

    #[test]
    fn a_line_is_one_segment() {
        let keys: Vec<u64> = (0..10_000).map(|i| 7 + 13 * i).collect();
        for eps in [0, 1, 8, 64] {
            assert_eq!(fit(&keys, eps).len(), 1, "eps {eps}");
        }
    }

    #[test]
    fn corners_split_where_they_must() {
        // Slope 1 then slope 1/100: one corner, so two segments for a small eps.
        let mut keys: Vec<u64> = (0..1000).collect();
        keys.extend((1..1000).map(|i| 999 + 100 * i));
        assert_eq!(fit(&keys, 4).len(), 2);
        // An eps of half the ranks fits anything with a flat line.
        assert_eq!(fit(&keys[..1050], 600).len(), 1);
    }

    #[test]
    fn matches_brute_force_segment_counts() {
        // For small inputs, the greedy "longest feasible prefix" is optimal; check feasibility of
        // a prefix by brute force over lines through pairs of band corners.
        let mut keys: Vec<u64> = (0..60u64).map(|i| i * i * 3 + (i % 7) * 40).collect();
        keys.sort_unstable();
        for eps in 1..6 {
            let segments = fit(&keys, eps);
            let points: Vec<CdfPoint> = cdf_points(&keys[..]).collect();
            let mut start = 0;
            let mut count = 0;
            while start < points.len() {
                let mut end = start + 1;
                while end < points.len() && feasible(&points[start..=end], eps as f64 - 1.0 / 256.0)
                {
                    end += 1;
                }
                count += 1;
                start = end;
            }
            assert_eq!(segments.len(), count, "eps {eps}");
        }
    }

    /// Whether one line is within `eps` of all points: some optimal line touches two band
    /// corners, so try every pair.
    fn feasible(points: &[CdfPoint], eps: f64) -> bool {
        let corners: Vec<(f64, f64)> = points
            .iter()
            .flat_map(|p| {
                [
                    (p.x as f64, p.y as f64 - eps),
                    (p.x as f64, p.y as f64 + eps),
                ]
            })
            .collect();
        corners.iter().enumerate().any(|(i, a)| {
            corners[i + 1..].iter().any(|b| {
                if a.0 == b.0 {
                    return false;
                }
                let s = (b.1 - a.1) / (b.0 - a.0);
                points.iter().all(|p| {
                    let y = a.1 + s * (p.x as f64 - a.0);
                    (y - p.y as f64).abs() <= eps + 1e-9
                })
            })
        }) || points.len() == 1
    }

    #[test]
    fn empty_and_single() {
        assert!(fit(&[], 3).is_empty());
        let s = fit(&[u64::MAX], 0);
        assert_eq!(s[0].model.predict(u64::MAX), 0.0);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            optimal_pla(&[3u64, 1], 4),
            Err(crate::Error::OutOfOrder { index: 1, .. })
        ));
        assert!(matches!(
            optimal_pla(&[1.0, f64::NAN], 4),
            Err(crate::Error::InvalidKey { index: 1, .. })
        ));
    }

    #[test]
    fn streaming_builder_matches_batch() {
        let keys: Vec<u64> = (0..5000u64).map(|i| i * i / 3 + i).collect();
        let mut builder = OptPlaBuilder::new(2);
        let mut streamed = Vec::new();
        for p in cdf_points(&keys) {
            streamed.extend(builder.add_point(p));
        }
        streamed.extend(builder.finish());
        assert_eq!(streamed, optimal_pla(&keys, 2).unwrap());
        assert!(streamed.len() > 1);
    }

    fn sorted_keys() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            proptest::collection::vec(any::<u64>(), 0..400),
            proptest::collection::vec(0u64..300, 0..400),
            proptest::collection::vec((u64::MAX - 5000)..=u64::MAX, 0..400),
            proptest::collection::vec(any::<u64>().prop_map(|v| v >> 40 << 40), 0..400),
        ]
        .prop_map(|mut v| {
            v.sort_unstable();
            v
        })
    }

    proptest! {
        #[test]
        fn every_point_is_within_eps(keys in sorted_keys(), eps in prop_oneof![0usize..3, 3usize..80]) {
            fit(&keys, eps);
        }

        #[test]
        fn huge_ranks_keep_the_bound(
            gaps in proptest::collection::vec((1u64..1 << 40, 0usize..1 << 20), 1..300),
            base in 0usize..1 << 43,
            eps in 0usize..40,
        ) {
            let points = crate::model::points::huge_rank_points(&gaps, base);
            let segments = optimal_pla_points(points.iter().copied(), eps);
            assert_covers(&points, &segments, eps);
        }
    }
}
