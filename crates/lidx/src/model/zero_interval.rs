//! Disk-based zero intervals (paper 002 §6.1, guideline G3): page-aware model errors, and
//! expected I/O pages per lookup (eq. 4) as the knob that sets `eps`.
//!
//! # What the paper says
//!
//! On disk a lookup reads whole pages, so a prediction anywhere in the key's own page costs the
//! same as an exact one. Eq. 5 counts the error of a prediction `ŷ` for a key at rank `y` as 0
//! inside the page's zero interval `[z_l, z_r] = [⌊y/P⌋ P, (⌊y/P⌋ + 1) P - 1]` and as the
//! distance to it outside, so the tolerable predictions become `[z_l - eps, z_r + eps]` instead of
//! `[y - eps, y + eps]`: a band `P - 1` wider, and fewer models at the same `eps` (Table 3: 43-55%
//! fewer at 1.5 expected pages). Lookups fetch the pages of `[ŷ - eps, ŷ + eps]`, and §6.1 proves
//! the key's page is among them; the expected pages per lookup stay about `1 + 2 eps / P`.
//!
//! # The exact intervals we fit
//!
//! A lookup floors the (clamped) model output to `pos` and takes the window of whole pages
//! `[⌊(pos - eps)/P⌋ P, (⌊(pos + eps)/P⌋ + 1) P)`, cut at `len` ([`page_window`]). It holds a
//! rank `y` of page `p = ⌊y/P⌋` exactly when `p P - eps <= pos <= (p + 1) P - 1 + eps`, which is
//! eq. 5's interval, and `pos` lies in it whenever the real prediction does (its ends are
//! integers). So the fitters require, for every CDF point `(x, y)` ([`crate::model::points`]):
//!
//! ```text
//! p P - eps  <=  model(x)  <=  p P + 2 ⌊(P - 1)/2⌋ + eps,      p = ⌊y / P⌋
//! ```
//!
//! This is a band of half-width `h = eps + ⌊(P - 1)/2⌋` around the page's centre
//! `c(y) = p P + ⌊(P - 1)/2⌋` (`center`, [`half_width`]): the optimal PLA
//! ([`crate::model::opt_pla`]) is reused unchanged, with its exact `f64` guarantee, on the
//! points `(x, c(y))` with the ordinary error `h`. The spline corridor ([`crate::model::spline`])
//! must keep knots on the true points, so it takes each point with its own asymmetric band
//! (`page_band`, [`SplineBuilder::add_point_within`]): eq. 5's interval exactly. For odd `P`
//! (255 records of 16 bytes in a 4 KiB block) the centred band is eq. 5's interval exactly; for
//! even `P` the PLA gives up the last position on the right (`P - 2` instead of `P - 1`). Centres, and both ends
//! of the bands, are non-decreasing in `y`, as the fitters need.
//!
//! Absent keys: the window grows with `pos`, and between two consecutive CDF points the lower
//! bound is the right point's rank, at most one more than the left point's; so a key between
//! them (same segment, monotone model) gets a window whose start is at most the right point's
//! and whose end is past the left point's rank, hence `lo <= lower_bound <= hi`. Across a segment
//! boundary the PGM clamps the prediction to the next segment's first (true) rank, which keeps
//! the start in place. The property tests below check both on random data.
//!
//! # Expected pages (eq. 4)
//!
//! [`expected_pages`] is eq. 4, `1 + (R_i - G) / P`, for the windows lidx's static learned index
//! actually reads with an ordinary model: `R_i = 2 eps + 2` items at item level
//! ([`crate::ApproxPos::from_prediction`]); at group size `G > 1` the window is `2 eps + 3` groups
//! aligned on groups, which eq. 4 counts as `R_i = (2 eps + 3) G`. [`zero_expected_pages`] is the
//! same count for the page window above: `2 eps + 1` positions whose pages are read, so
//! `1 + 2 eps / P`. Both assume the prediction is uniformly placed within a page, as the paper
//! does; their inverses give the largest `eps` within a budget of pages, the user-facing knob.
//!
//! What we do differently: the paper leaves the handling of absent keys, of even `P` and of
//! floating-point error open; the above fixes all three.

use crate::error::{Error, Result};
use crate::index::ApproxPos;
use crate::key::Key;
use crate::model::opt_pla::OptPlaBuilder;
use crate::model::points::CdfPoint;
use crate::model::segment::Segment;
use crate::model::spline::SplineBuilder;

/// The largest `eps` or records per block accepted, so that `h` stays within the fitters' range.
pub(crate) const MAX_ZERO_PARAM: usize = 1 << 31;

/// Checks `eps` and `per_block` for a page-aware fit: `1 <= per_block <= 2^31`, `eps <= 2^31`.
pub fn validate(eps: usize, per_block: usize) -> Result<()> {
    if !(1..=MAX_ZERO_PARAM).contains(&per_block) {
        return Err(Error::InvalidParameter {
            name: "per_block",
            value: per_block.to_string(),
            expected: "from 1 to 2^31 records per block",
        });
    }
    if eps > MAX_ZERO_PARAM {
        return Err(Error::InvalidParameter {
            name: "eps",
            value: eps.to_string(),
            expected: "at most 2^31",
        });
    }
    Ok(())
}

/// The centre of the page-aware band of rank `y`: `⌊y/P⌋ P + ⌊(P - 1)/2⌋` (see module docs).
#[inline]
fn center(y: usize, per_block: usize) -> usize {
    y / per_block * per_block + (per_block - 1) / 2
}

/// The half-width of every page-aware band: `eps + ⌊(P - 1)/2⌋`.
#[inline]
pub(crate) fn half_width(eps: usize, per_block: usize) -> usize {
    eps + (per_block - 1) / 2
}

/// The window of whole pages a lookup reads for floored prediction `pos`:
/// `[⌊(pos - eps)/P⌋ P, (⌊(pos_hi + eps)/P⌋ + 1) P)` cut at `len`, where `pos_hi` is `pos`
/// except for keys whose model value is shared (see [`window_for_key`]). Always
/// `lo <= pos <= hi <= len` once `pos` is clamped to `len`, which this does.
#[inline]
pub(crate) fn page_window(
    pos: usize,
    pos_hi: usize,
    eps: usize,
    per_block: usize,
    len: usize,
) -> ApproxPos {
    let pos = pos.min(len);
    let lo = pos.saturating_sub(eps) / per_block * per_block;
    let last_page = pos_hi.max(pos).saturating_add(eps) / per_block;
    let hi = last_page
        .saturating_add(1)
        .saturating_mul(per_block)
        .min(len);
    ApproxPos { pos, lo, hi }
}

/// The page window for `key` from a predictor over model-space keys fitted to page-aware bands
/// (`eps`, `per_block`), as [`ApproxPos::for_key`] does for ordinary bands: for key types whose
/// model map is not injective the window also covers the prediction for `v + 1` (or reaches
/// `len` when `v` is the largest model value). An empty index (`len == 0`) gets the empty
/// window without asking `predict`.
#[inline]
pub(crate) fn window_for_key<K: Key>(
    key: K,
    eps: usize,
    per_block: usize,
    len: usize,
    predict: impl Fn(u64) -> f64,
) -> ApproxPos {
    if len == 0 {
        return ApproxPos::default();
    }
    let v = key.to_model();
    // `as` saturates: negative and NaN predictions become 0, huge ones usize::MAX.
    let pos = predict(v) as usize;
    let pos_hi = if K::MODEL_INJECTIVE {
        pos
    } else {
        v.checked_add(1)
            .map_or(usize::MAX, |next| predict(next) as usize)
    };
    page_window(pos, pos_hi, eps, per_block, len)
}

/// Streaming page-aware optimal PLA: the segments of [`OptPlaBuilder`] over the points
/// `(x, center(y))` with error [`half_width`], each segment's `first_rank` set back to the true
/// rank of its first point (the PGM clamps predictions to it).
#[derive(Debug, Clone)]
pub(crate) struct ZeroPlaBuilder {
    inner: OptPlaBuilder,
    per_block: usize,
    first_rank: usize,
}

impl ZeroPlaBuilder {
    /// A builder for error `eps` outside the page and `per_block` records per page; the
    /// parameters must pass [`validate`].
    pub(crate) fn new(eps: usize, per_block: usize) -> Self {
        ZeroPlaBuilder {
            inner: OptPlaBuilder::new(half_width(eps, per_block)),
            per_block,
            first_rank: 0,
        }
    }

    /// Adds the next CDF point; returns the finished segment when `p` does not fit it.
    #[inline]
    pub(crate) fn add_point(&mut self, p: CdfPoint) -> Option<Segment> {
        let centred = CdfPoint {
            x: p.x,
            y: center(p.y, self.per_block),
        };
        let done = self.inner.add_point(centred).map(|s| Segment {
            first_rank: self.first_rank,
            ..s
        });
        if done.is_some() {
            self.first_rank = p.y;
        }
        done
    }

    /// The last segment, if any point was added since the last one was handed out.
    pub(crate) fn finish(self) -> Option<Segment> {
        let first_rank = self.first_rank;
        self.inner.finish().map(|s| Segment { first_rank, ..s })
    }
}

/// The page-aware optimal PLA of a stream of CDF points (see `ZeroPlaBuilder`).
pub fn zero_pla_points(
    points: impl Iterator<Item = CdfPoint>,
    eps: usize,
    per_block: usize,
) -> Vec<Segment> {
    let mut builder = ZeroPlaBuilder::new(eps, per_block);
    let mut out = Vec::new();
    for p in points {
        out.extend(builder.add_point(p));
    }
    out.extend(builder.finish());
    out
}

/// The knots of the page-aware spline of a stream of CDF points: the greedy spline corridor
/// where each point `(x, y)` keeps its own rank (knots are CDF points, interpolation is exact at
/// them) and gets the band `page_band` of its rank. Unlike the PLA, the spline cannot use
/// the centred points: its knots lie on the points it fits, and centres form a staircase whose
/// every step would be a knot.
pub fn zero_spline_points(
    points: impl Iterator<Item = CdfPoint>,
    eps: usize,
    per_block: usize,
) -> Vec<CdfPoint> {
    let exact = half_width(eps, per_block) == 0;
    let mut builder = SplineBuilder::new(if exact { 0 } else { eps });
    let mut knots = Vec::new();
    for p in points {
        let knot = if exact {
            builder.add_point(p)
        } else {
            let (below, above) = page_band(p.y, eps, per_block);
            builder.add_point_within(p, below, above)
        };
        knots.extend(knot);
    }
    knots.extend(builder.finish());
    knots
}

/// The page-aware band of rank `y` as distances below and above it, eq. 5's interval exactly:
/// `(y - p P + eps, (p + 1) P - 1 - y + eps)` for `p = ⌊y/P⌋` (for odd `P` the same interval
/// as `center(y) ± half_width`, one position wider on the right for even `P`).
#[inline]
fn page_band(y: usize, eps: usize, per_block: usize) -> (usize, usize) {
    let offset = y % per_block;
    (offset + eps, per_block - 1 - offset + eps)
}

fn check_pages_args(pages: f64, per_block: usize, group: usize) -> Result<()> {
    if !(pages.is_finite() && pages >= 1.0) {
        return Err(Error::InvalidParameter {
            name: "pages",
            value: pages.to_string(),
            expected: "a finite number of pages, at least 1",
        });
    }
    if per_block == 0 || group == 0 {
        return Err(Error::InvalidParameter {
            name: if per_block == 0 {
                "per_block"
            } else {
                "granularity"
            },
            value: "0".to_string(),
            expected: "at least 1",
        });
    }
    Ok(())
}

/// Paper 002 eq. 4 for an ordinary eps-bounded model in lidx's static learned index: expected
/// blocks read all-at-once per lookup with `per_block` records per block and `group` records
/// per model point (1 at item level). See the module docs for the window widths counted.
pub fn expected_pages(eps: usize, per_block: usize, group: usize) -> f64 {
    let items = if group <= 1 {
        2.0 * eps as f64 + 1.0
    } else {
        (2.0 * eps as f64 + 2.0) * group as f64
    };
    1.0 + items / per_block.max(1) as f64
}

/// The largest `eps` whose [`expected_pages`] is at most `pages` (0 when even `eps = 0` reads
/// more). More pages buy a larger `eps`: fewer models, more blocks read per lookup. Errors:
/// `InvalidParameter` for `pages` below 1 or not finite, or a `per_block` or `group` of 0.
pub fn eps_for_expected_pages(pages: f64, per_block: usize, group: usize) -> Result<usize> {
    check_pages_args(pages, per_block, group)?;
    Ok(largest_within(pages, |eps| {
        expected_pages(eps, per_block, group)
    }))
}

/// Expected blocks read per lookup by a page-aware model with error `eps` outside the page
/// (the page window of `page_window`): `1 + 2 eps / P`.
pub fn zero_expected_pages(eps: usize, per_block: usize) -> f64 {
    1.0 + 2.0 * eps as f64 / per_block.max(1) as f64
}

/// The largest `eps` whose [`zero_expected_pages`] is at most `pages`. Errors as
/// [`eps_for_expected_pages`].
pub fn zero_eps_for_expected_pages(pages: f64, per_block: usize) -> Result<usize> {
    check_pages_args(pages, per_block, 1)?;
    Ok(largest_within(pages, |eps| {
        zero_expected_pages(eps, per_block)
    }))
}

/// The largest `eps <= 2^31` with `cost(eps) <= pages` for a non-decreasing `cost`, 0 if none.
fn largest_within(pages: f64, cost: impl Fn(usize) -> f64) -> usize {
    let (mut lo, mut hi) = (0usize, MAX_ZERO_PARAM);
    if cost(hi) <= pages {
        return hi;
    }
    // Invariant: cost(hi) > pages; lo is 0 or has cost(lo) <= pages.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cost(mid) <= pages {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::points::cdf_points;
    use crate::model::spline::interpolate;
    use proptest::prelude::*;

    #[test]
    fn bands_are_eq_5_intervals() {
        // Odd P: exactly [pP - eps, (p+1)P - 1 + eps].
        for y in [0i64, 100, 254, 255, 600] {
            let (c, h) = (center(y as usize, 255) as i64, half_width(8, 255) as i64);
            let p = y / 255;
            assert_eq!((c - h, c + h), (p * 255 - 8, (p + 1) * 255 - 1 + 8));
        }
        // Even P: one position short on the right.
        let (c, h) = (center(9, 4), half_width(3, 4));
        assert_eq!((c - h, c + h), (8 - 3, 8 + 4 - 2 + 3));
        assert_eq!(page_band(9, 3, 4), (1 + 3, 3 - 1 + 3));
        assert_eq!(page_band(300, 8, 255), (45 + 8, 254 - 45 + 8));
    }

    #[test]
    fn page_windows_are_whole_pages() {
        let w = page_window(300, 300, 10, 255, 10_000);
        assert_eq!((w.lo, w.pos, w.hi), (255, 300, 510));
        let w = page_window(250, 250, 10, 255, 10_000);
        assert_eq!((w.lo, w.hi), (0, 510));
        let w = page_window(5_000, 5_000, 10, 255, 400);
        assert_eq!((w.lo, w.pos, w.hi), (255, 400, 400));
        let w = page_window(usize::MAX, usize::MAX, 10, 255, 400);
        assert!(w.lo <= w.pos && w.pos <= w.hi && w.hi == 400);
    }

    #[test]
    fn expected_pages_matches_eq_4_and_inverts() {
        // PGM eps = 64 at item level over 255 records per block: 1 + 129/255 (measured 1.506).
        assert!((expected_pages(64, 255, 1) - (1.0 + 129.0 / 255.0)).abs() < 1e-12);
        assert_eq!(eps_for_expected_pages(1.5, 255, 1).unwrap(), 63);
        assert_eq!(zero_eps_for_expected_pages(1.5, 255).unwrap(), 63);
        assert_eq!(eps_for_expected_pages(1.0, 255, 1).unwrap(), 0);
        assert_eq!(eps_for_expected_pages(2.0, 255, 16).unwrap(), 6);
        for pages in [1.01, 1.2, 1.5, 2.0, 3.0] {
            let eps = zero_eps_for_expected_pages(pages, 255).unwrap();
            assert!(zero_expected_pages(eps, 255) <= pages);
            assert!(zero_expected_pages(eps + 1, 255) > pages);
            let eps = eps_for_expected_pages(pages, 255, 1).unwrap();
            assert!(expected_pages(eps, 255, 1) <= pages || eps == 0);
            assert!(expected_pages(eps + 1, 255, 1) > pages);
        }
        for bad in [0.5, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                eps_for_expected_pages(bad, 255, 1),
                Err(Error::InvalidParameter { name: "pages", .. })
            ));
        }
        assert!(zero_eps_for_expected_pages(1.5, 0).is_err());
        assert!(validate(1, 0).is_err() && validate(usize::MAX, 4).is_err());
    }

    #[test]
    fn zero_intervals_need_fewer_segments() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut keys: Vec<u64> = (0..20_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state >> 20
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let plain = crate::model::opt_pla::optimal_pla(&keys, 16).unwrap().len();
        let zero = zero_pla_points(cdf_points(&keys), 16, 64).len();
        assert!(zero * 10 <= plain * 8, "zero {zero} plain {plain}");
    }

    fn sorted_keys() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            proptest::collection::vec(any::<u64>(), 0..600),
            proptest::collection::vec(0u64..500, 0..600),
            proptest::collection::vec(any::<u64>().prop_map(|v| v >> 44 << 40), 0..600),
        ]
        .prop_map(|mut v| {
            v.sort_unstable();
            v
        })
    }

    /// Probes: every key, its neighbours, and the extremes.
    fn probes(keys: &[u64]) -> Vec<u64> {
        let mut out = vec![0, 1, u64::MAX - 1, u64::MAX];
        for &k in keys {
            out.extend([k.wrapping_sub(1), k, k.wrapping_add(1)]);
        }
        out
    }

    fn check_window(keys: &[u64], probe: u64, w: ApproxPos, per_block: usize) {
        let lb = keys.partition_point(|&k| k < probe);
        assert!(
            w.lo <= lb && lb <= w.hi && w.hi <= keys.len() && w.lo <= w.pos && w.pos <= w.hi,
            "probe {probe}: lower bound {lb} outside {w:?} (len {})",
            keys.len()
        );
        assert_eq!(w.lo % per_block, 0, "{w:?}");
        assert!(
            w.hi.is_multiple_of(per_block) || w.hi == keys.len(),
            "{w:?}"
        );
    }

    proptest! {
        /// The page-aware PLA, evaluated as the PGM does (bottom segment, clamped to the next
        /// segment's first rank), gives page windows holding every lower bound.
        #[test]
        fn pla_windows_hold_every_lower_bound(
            keys in sorted_keys(),
            eps in 0usize..20,
            per_block in 1usize..40,
        ) {
            let segments = zero_pla_points(cdf_points(&keys), eps, per_block);
            let n = keys.len();
            prop_assert_eq!(segments.first().map(|s| s.first_rank), (n > 0).then_some(0));
            for probe in probes(&keys) {
                if n == 0 {
                    break;
                }
                let i = segments.partition_point(|s| s.first_key <= probe).saturating_sub(1);
                let next = segments.get(i + 1).map_or(n, |s| s.first_rank);
                let pred = segments[i].model.predict(probe).min(next as f64);
                let w = page_window(pred as usize, pred as usize, eps, per_block, n);
                check_window(&keys, probe, w, per_block);
            }
        }

        /// The page-aware spline, interpolated as RadixSpline does, gives page windows holding
        /// every lower bound.
        #[test]
        fn spline_windows_hold_every_lower_bound(
            keys in sorted_keys(),
            eps in 0usize..20,
            per_block in 1usize..40,
        ) {
            let knots = zero_spline_points(cdf_points(&keys), eps, per_block);
            let n = keys.len();
            for probe in probes(&keys) {
                if n == 0 {
                    break;
                }
                let last = knots[knots.len() - 1];
                let pred = if probe <= knots[0].x {
                    knots[0].y as f64
                } else if probe > last.x {
                    n as f64
                } else {
                    let i = knots.partition_point(|k| k.x < probe);
                    interpolate(knots[i - 1], knots[i], probe)
                };
                let w = page_window(pred as usize, pred as usize, eps, per_block, n);
                check_window(&keys, probe, w, per_block);
            }
        }
    }
}
