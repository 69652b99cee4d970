//! The error-bounded linear spline of RadixSpline: knots on the CDF such that linear
//! interpolation between consecutive knots is within `max_error` of every CDF point.
//!
//! Paper 000 §2.2 describes RadixSpline as "a linear spline model to model the CDF" with a radix
//! table on top; the spline is built in one pass by the greedy spline corridor (GreedySplineCorridor
//! of Neumann and Michel, used by the RadixSpline paper): from the last knot, keep the range of
//! slopes that pass within `max_error` of every point seen since; when the slope to the newest
//! point leaves that range, the previous point becomes a knot. Knots are CDF points, the first
//! and last points are always knots, and the pass is O(n) with O(1) memory.
//!
//! What we do differently, and why:
//!
//! * The corridor is kept in exact integer arithmetic (`i128` slopes, ranks in 2^-8 units) with
//!   the error band shrunk by a margin of 2^-8 ranks (more for ranks beyond 2^36), exactly as
//!   in [`crate::model::opt_pla`], so the bound holds for the `f64` interpolation of
//!   [`interpolate`] that queries evaluate, not just for exact arithmetic. The reference code
//!   compares `f64` slopes and can be off by rounding.
//! * `max_error = 0` makes every CDF point a knot (no interpolation can be trusted to be exact
//!   in `f64`), so the spline is the CDF itself.
//!
//! Points must have strictly increasing `x` and non-decreasing `y` (CDF points do).

use crate::model::points::CdfPoint;

/// Bits of fixed-point precision below one rank in the corridor's slopes.
const Y_SCALE_BITS: u32 = 8;

/// Ranks above `2^MARGIN_SHIFT` get a margin proportional to the rank.
const MARGIN_SHIFT: u32 = 36;

/// The interpolation between knots `a` and `b` at `x` (`a.x <= x <= b.x`) that every user of
/// the spline must evaluate: the error bound is proven for exactly this `f64` expression. It is
/// exact at both knots and non-decreasing in `x`.
#[inline(always)]
pub(crate) fn interpolate(a: CdfPoint, b: CdfPoint, x: u64) -> f64 {
    if x >= b.x {
        return b.y as f64;
    }
    let dx = b.x - a.x;
    let slope = (b.y - a.y) as f64 / dx as f64;
    a.y as f64 + x.saturating_sub(a.x) as f64 * slope
}

/// The knots of the greedy spline corridor over `points` with error `max_error`.
pub fn spline_points(points: impl Iterator<Item = CdfPoint>, max_error: usize) -> Vec<CdfPoint> {
    let mut builder = SplineBuilder::new(max_error);
    let mut knots = Vec::new();
    for p in points {
        knots.extend(builder.add_point(p));
    }
    knots.extend(builder.finish());
    knots
}

/// A slope `dy / dx` with `dx > 0`, `dy` in 2^-8 ranks.
#[derive(Debug, Clone, Copy)]
struct Slope {
    dx: i128,
    dy: i128,
}

impl Slope {
    #[inline(always)]
    fn lt(self, other: Slope) -> bool {
        self.dy * other.dx < other.dy * self.dx
    }
}

/// Streaming greedy spline corridor: [`add_point`](Self::add_point) returns each knot as soon
/// as it is known, [`finish`](Self::finish) the last one.
#[derive(Debug, Clone)]
pub(crate) struct SplineBuilder {
    max_error: usize,
    /// The last knot.
    base: Option<CdfPoint>,
    /// The last point added, if it is not the base.
    prev: Option<CdfPoint>,
    /// Slopes from the base allowed by every point since: `[lower, upper]`.
    lower: Slope,
    upper: Slope,
}

impl SplineBuilder {
    /// A builder for interpolation error at most `max_error` (in ranks).
    pub(crate) fn new(max_error: usize) -> Self {
        let flat = Slope { dx: 1, dy: 0 };
        SplineBuilder {
            max_error,
            base: None,
            prev: None,
            lower: flat,
            upper: flat,
        }
    }

    /// Adds the next point; returns a knot when one is decided.
    #[inline]
    pub(crate) fn add_point(&mut self, p: CdfPoint) -> Option<CdfPoint> {
        if self.max_error == 0 && self.base.is_some() {
            debug_assert!(p.x > self.base.map_or(0, |b| b.x), "x must increase");
            self.base = Some(p);
            return Some(p);
        }
        self.add_point_within(p, self.max_error, self.max_error)
    }

    /// Adds the next point with its own band `[p.y - below, p.y + above]` instead of
    /// `max_error` either way (the page-aware fit of [`crate::model::zero_interval`]);
    /// `below + above` must be at least 1, and both ends of the bands non-decreasing along the
    /// stream. Returns a knot when one is decided.
    #[inline]
    pub(crate) fn add_point_within(
        &mut self,
        p: CdfPoint,
        below: usize,
        above: usize,
    ) -> Option<CdfPoint> {
        let Some(base) = self.base else {
            self.base = Some(p);
            return Some(p);
        };
        debug_assert!(below + above >= 1, "a band of width 0 needs max_error = 0");
        debug_assert!(p.x > self.prev.unwrap_or(base).x, "x must increase");
        let Some(prev) = self.prev else {
            self.restart(base, p, below, above);
            return None;
        };
        let (to_point, to_top, to_bottom) = self.slopes(base, p, below, above);
        if to_point.lt(self.lower) || self.upper.lt(to_point) {
            self.base = Some(prev);
            self.restart(prev, p, below, above);
            return Some(prev);
        }
        if to_top.lt(self.upper) {
            self.upper = to_top;
        }
        if self.lower.lt(to_bottom) {
            self.lower = to_bottom;
        }
        self.prev = Some(p);
        None
    }

    /// The last knot, unless the last point added was already one.
    pub(crate) fn finish(self) -> Option<CdfPoint> {
        self.prev
    }

    fn restart(&mut self, base: CdfPoint, p: CdfPoint, below: usize, above: usize) {
        let (_, to_top, to_bottom) = self.slopes(base, p, below, above);
        self.upper = to_top;
        self.lower = to_bottom;
        self.prev = Some(p);
    }

    /// Slopes from `base` to `p` and to the top and bottom of its margin-reduced band. A side
    /// of width 0 is reduced past the point (the band then lies strictly on the other side).
    #[inline(always)]
    fn slopes(
        &self,
        base: CdfPoint,
        p: CdfPoint,
        below: usize,
        above: usize,
    ) -> (Slope, Slope, Slope) {
        let scale = 1i128 << Y_SCALE_BITS;
        let magnitude = p.y.saturating_add(above.max(below)).saturating_add(1);
        let margin = 1 + (magnitude >> MARGIN_SHIFT) as i128;
        let up = above as i128 * scale - margin;
        let down = below as i128 * scale - margin;
        let dx = i128::from(p.x - base.x);
        let dy = (p.y as i128 - base.y as i128) * scale;
        (
            Slope { dx, dy },
            Slope { dx, dy: dy + up },
            Slope { dx, dy: dy - down },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::points::cdf_points;
    use proptest::prelude::*;

    /// Every point is within `max_error` of the interpolation between the knots around it.
    fn assert_bounded(points: &[CdfPoint], knots: &[CdfPoint], max_error: usize) {
        assert_eq!(knots.is_empty(), points.is_empty());
        if points.is_empty() {
            return;
        }
        assert_eq!(knots.first(), points.first());
        assert_eq!(knots.last(), points.last());
        assert!(knots.windows(2).all(|w| w[0].x < w[1].x));
        for p in points {
            let i = knots.partition_point(|k| k.x < p.x);
            let pred = interpolate(knots[i.saturating_sub(1)], knots[i], p.x);
            assert!(
                (pred - p.y as f64).abs() <= max_error as f64,
                "{p:?} predicted {pred} (max_error {max_error})"
            );
        }
        // Knots are exact through the segment on either side.
        for w in knots.windows(2) {
            assert_eq!(interpolate(w[0], w[1], w[1].x), w[1].y as f64);
            assert_eq!(interpolate(w[0], w[1], w[0].x), w[0].y as f64);
        }
    }

    #[test]
    fn a_line_needs_two_knots() {
        let keys: Vec<u64> = (0..10_000).map(|i| 5 + 3 * i).collect();
        let knots = spline_points(cdf_points(&keys), 4);
        assert_eq!(knots.len(), 2);
    }

    #[test]
    fn zero_error_keeps_every_point() {
        let keys = [1u64, 2, 3, 10, 11];
        assert_eq!(spline_points(cdf_points(&keys), 0).len(), 5);
        assert!(spline_points(cdf_points::<u64>(&[]), 3).is_empty());
        assert_eq!(spline_points(cdf_points(&[7u64]), 3).len(), 1);
    }

    #[test]
    fn a_corner_is_a_knot() {
        let mut keys: Vec<u64> = (0..1000).collect();
        keys.extend((1..1000).map(|i| 999 + 100 * i));
        let knots = spline_points(cdf_points(&keys), 2);
        let points: Vec<CdfPoint> = cdf_points(&keys).collect();
        assert_bounded(&points, &knots, 2);
        assert_eq!(knots.len(), 3);
        assert_eq!(knots[1], CdfPoint { x: 999, y: 999 });
    }

    fn sorted_keys() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            proptest::collection::vec(any::<u64>(), 0..400),
            proptest::collection::vec(0u64..300, 0..400),
            proptest::collection::vec((u64::MAX - 5000)..=u64::MAX, 0..400),
        ]
        .prop_map(|mut v| {
            v.sort_unstable();
            v
        })
    }

    proptest! {
        #[test]
        fn interpolation_is_within_max_error(keys in sorted_keys(), max_error in 0usize..70) {
            let points: Vec<CdfPoint> = cdf_points(&keys).collect();
            let knots = spline_points(points.iter().copied(), max_error);
            assert_bounded(&points, &knots, max_error);
        }

        #[test]
        fn huge_ranks_keep_the_bound(
            gaps in proptest::collection::vec((1u64..1 << 40, 0usize..1 << 20), 1..300),
            base in 0usize..1 << 43,
            max_error in 1usize..40,
        ) {
            let points = crate::model::points::huge_rank_points(&gaps, base);
            let knots = spline_points(points.iter().copied(), max_error);
            assert_bounded(&points, &knots, max_error);
        }
    }
}
