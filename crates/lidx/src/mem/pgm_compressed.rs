//! `CprLeCo_PGM_D`: a PGM whose segments are compressed, first keys with LeCo, slopes with a
//! shared table and intercepts as small integers.
//!
//! Paper 002 §7 (G4) splits a PGM segment into its partitioning key, slope and intercept and
//! compresses each: the partitioning keys with LeCo ([`crate::model::leco`]); the slopes "as in
//! the compressed PGM" (any slope in a segment's admissible interval keeps its error, so a few
//! shared slopes serve every segment and each segment stores an index into the table); the
//! intercepts made increasing and stored compactly. Its `CprLeCo_PGM_D` applies this to the
//! bottom level of a PGM and searches the compressed keys.
//!
//! What we do, and why:
//!
//! * **Segments.** The optimal PLA ([`crate::model::opt_pla`]) of the data's CDF points at
//!   `eps_fit = eps - ceil(slope_slack / 2) - 1` (0 when that is negative). There are no upper
//!   levels: a lookup binary-searches the LeCo-compressed first keys
//!   ([`LecoArray::upper_bound`], about `2 log2(segments)` decodes). §7 argues the decoding
//!   cost is negligible beside a disk read; upper levels would cost memory for CPU time the
//!   disk hides.
//! * **Slopes.** Our optimal PLA does not report admissible slope intervals, so we make our
//!   own: a segment whose points span `dx` model units may take any slope within
//!   `slope_slack / dx` of its own, which moves no prediction of its points by more than
//!   `slope_slack` positions. Interval stabbing (sort by right end, stab at the first uncovered
//!   right end) picks the fewest shared slopes; each segment stores its slope's table index, a
//!   LeCo array with slope 0, i.e. plain bit packing.
//! * **Intercepts.** With its table slope `s`, a segment's intercept is re-fitted to the
//!   middle of the range of `rank - s * dx` over its points and rounded to an integer `b`. Its
//!   first point has `dx = 0`, so `|b - first_rank| <= eps_eff`: we store
//!   `b - first_rank + eps_eff` (at most `2 eps_eff`, LeCo-packed) and the first ranks (a
//!   smooth increasing sequence, LeCo-compressed). The first ranks also give each segment the
//!   clamp `next_pos` the PGM uses.
//! * **The error is measured, not assumed (the proof the windows hold).** The re-fitted error
//!   is at most `eps_fit + slope_slack / 2 + 1/2` in exact arithmetic. Rather than trust a bound
//!   that `f64` rounding could break, the builder evaluates the exact `f64` predictor `search`
//!   uses on every CDF point and stores `eps_eff`, the ceiling of the largest error (at most
//!   `eps` in practice). Windows are [`ApproxPos::for_key`] with `eps_eff`: every point is
//!   predicted within `eps_eff` by construction, and the predictor is non-decreasing within a
//!   segment (table slopes are `>= 0`) and clamped to the next segment's first rank, the two
//!   facts [`ApproxPos::from_prediction`] needs to cover absent keys, exactly as for
//!   [`crate::mem::Pgm`]. So the window contract holds for every key, at most
//!   `2 eps_eff + 2` wide.
//!
//! [`CprPgm::size_in_bytes`] compared with the plain [`crate::mem::Pgm`] at the same eps is
//! the figure §7 reports (bytes per model).

use std::marker::PhantomData;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::model::leco::{LecoArray, LecoParams};
use crate::model::opt_pla::OptPlaBuilder;
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::segment::Segment;

/// The largest `eps` or `slope_slack` accepted.
const MAX_EPS: usize = 1 << 32;

/// Parameters of a [`CprPgm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CprPgmParams {
    /// Target maximum error in positions (the window is at most `2 eps + 2` wide). Larger
    /// means fewer segments (less memory) but wider windows (more blocks per lookup on disk).
    pub eps: usize,
    /// Positions of error each segment may gain from sharing a slope; the PLA is fitted
    /// tighter by half of it so the total stays within `eps`. Larger means fewer distinct
    /// slopes (fewer bits per slope index) but more segments.
    pub slope_slack: usize,
}

impl Default for CprPgmParams {
    /// `eps = 64` as the PGM; `slope_slack = 8`, an eighth of eps: the PLA is fitted at
    /// eps 59, a few percent more segments, for slopes shared within 8 positions.
    fn default() -> Self {
        CprPgmParams {
            eps: 64,
            slope_slack: 8,
        }
    }
}

impl CprPgmParams {
    /// Target error `eps` with the default slack (8, or `eps / 4` when that is smaller).
    pub fn with_eps(eps: usize) -> Self {
        CprPgmParams {
            eps,
            slope_slack: (eps / 4).min(8),
        }
    }

    fn validate(&self) -> Result<()> {
        for (name, v) in [("eps", self.eps), ("slope_slack", self.slope_slack)] {
            if v > MAX_EPS {
                return Err(Error::InvalidParameter {
                    name,
                    value: v.to_string(),
                    expected: "at most 2^32",
                });
            }
        }
        Ok(())
    }

    /// The error the PLA is fitted with.
    fn eps_fit(&self) -> usize {
        self.eps.saturating_sub(self.slope_slack.div_ceil(2) + 1)
    }
}

/// The compressed PGM over `n` sorted keys (see the module docs).
#[derive(Debug, Clone)]
pub struct CprPgm<K> {
    n: usize,
    /// Error every window is built with (measured at build time).
    eps: usize,
    /// First model-space key of every segment.
    keys: LecoArray,
    /// First rank of every segment.
    ranks: LecoArray,
    /// `intercept - first_rank + eps`, per segment.
    intercepts: LecoArray,
    /// Index into `slopes`, per segment.
    slope_ids: LecoArray,
    /// The shared slopes, ascending.
    slopes: Vec<f64>,
    _key: PhantomData<fn() -> K>,
}

/// The points of each segment, in order: calls `f(segment index, point)`.
fn for_each_point<K: Key>(keys: &[K], segments: &[Segment], mut f: impl FnMut(usize, CdfPoint)) {
    let mut i = 0;
    for p in cdf_points(keys) {
        while i + 1 < segments.len() && segments[i + 1].first_key <= p.x {
            i += 1;
        }
        f(i, p);
    }
}

/// The fewest shared slopes such that every interval holds one; returns the table and each
/// interval's index into it.
fn stab(intervals: &[(f64, f64)]) -> (Vec<f64>, Vec<u64>) {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by(|&a, &b| intervals[a].1.total_cmp(&intervals[b].1));
    let mut table: Vec<f64> = Vec::new();
    let mut ids = vec![0u64; intervals.len()];
    for i in order {
        let (lo, hi) = intervals[i];
        if table.last().is_none_or(|&s| s < lo) {
            table.push(if hi.is_finite() { hi } else { lo });
        }
        ids[i] = (table.len() - 1) as u64;
    }
    (table, ids)
}

impl<K: Key> CprPgm<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Returns `OutOfOrder` or
    /// `InvalidKey` for bad keys, `InvalidParameter` for an eps or slack above 2^32.
    pub fn build(keys: &[K], params: CprPgmParams) -> Result<Self> {
        params.validate()?;
        check_sorted(keys)?;
        let mut builder = OptPlaBuilder::new(params.eps_fit());
        let mut segments = Vec::new();
        for p in cdf_points(keys) {
            segments.extend(builder.add_point(p));
        }
        segments.extend(builder.finish());
        let m = segments.len();

        let mut span = vec![0u64; m];
        for_each_point(keys, &segments, |i, p| {
            span[i] = p.x - segments[i].first_key;
        });
        let slack = params.slope_slack as f64;
        let intervals: Vec<(f64, f64)> = segments
            .iter()
            .zip(&span)
            .map(|(s, &dx)| {
                if dx == 0 {
                    (0.0, f64::INFINITY)
                } else {
                    let t = slack / dx as f64;
                    ((s.model.slope - t).max(0.0), s.model.slope + t)
                }
            })
            .collect();
        let (slopes, slope_ids) = stab(&intervals);

        // Re-fit each intercept to the middle of rank - s * dx, then measure the error.
        let mut range = vec![(f64::INFINITY, f64::NEG_INFINITY); m];
        for_each_point(keys, &segments, |i, p| {
            let s = slopes[slope_ids[i] as usize];
            let u = p.y as f64 - s * (p.x - segments[i].first_key) as f64;
            range[i] = (range[i].0.min(u), range[i].1.max(u));
        });
        let intercepts: Vec<i64> = range
            .iter()
            .map(|&(lo, hi)| ((lo + hi) / 2.0).round() as i64)
            .collect();
        let mut err = 0f64;
        for_each_point(keys, &segments, |i, p| {
            let s = slopes[slope_ids[i] as usize];
            let pred = intercepts[i] as f64 + s * (p.x - segments[i].first_key) as f64;
            err = err.max((pred - p.y as f64).abs());
        });
        let eps = err.ceil() as usize;
        if eps > MAX_EPS {
            return Err(Error::InvalidParameter {
                name: "eps",
                value: eps.to_string(),
                expected: "a fit whose measured error stays below 2^32",
            });
        }
        let leco = LecoParams::default();
        let first_keys: Vec<u64> = segments.iter().map(|s| s.first_key).collect();
        let ranks: Vec<u64> = segments.iter().map(|s| s.first_rank as u64).collect();
        let deltas: Vec<u64> = intercepts
            .iter()
            .zip(&ranks)
            .map(|(&b, &r)| (b - r as i64 + eps as i64) as u64)
            .collect();
        Ok(CprPgm {
            n: keys.len(),
            eps,
            keys: LecoArray::build(&first_keys, leco)?,
            ranks: LecoArray::build(&ranks, leco)?,
            intercepts: LecoArray::build(&deltas, leco)?,
            slope_ids: LecoArray::build(&slope_ids, leco)?,
            slopes,
            _key: PhantomData,
        })
    }

    /// The error windows are built with: measured at build time, `<= eps` of the parameters
    /// except through `f64` rounding or for `eps` below `slope_slack / 2 + 1`.
    pub fn eps(&self) -> usize {
        self.eps
    }

    /// Number of segments.
    pub fn segment_count(&self) -> usize {
        self.keys.len()
    }

    /// Number of distinct shared slopes.
    pub fn slope_count(&self) -> usize {
        self.slopes.len()
    }

    /// Bytes held: the four LeCo arrays and the slope table.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - 4 * std::mem::size_of::<LecoArray>()
            + self.keys.size_in_bytes()
            + self.ranks.size_in_bytes()
            + self.intercepts.size_in_bytes()
            + self.slope_ids.size_in_bytes()
            + self.slopes.capacity() * std::mem::size_of::<f64>()
    }

    /// Prediction of segment `i` for model-space `x >= ` its first key, before clamping.
    #[inline]
    fn predict(&self, i: usize, first_key: u64, x: u64) -> f64 {
        let b = self.ranks.get(i) as i64 + self.intercepts.get(i) as i64 - self.eps as i64;
        let s = self.slopes[self.slope_ids.get(i) as usize];
        b as f64 + s * x.saturating_sub(first_key) as f64
    }
}

impl<K: Key> StaticIndex<K> for CprPgm<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let m = self.keys.len();
        if m == 0 {
            return ApproxPos::default();
        }
        let v = key.to_model();
        let i = self.keys.upper_bound(v).saturating_sub(1);
        let first_key = self.keys.get(i);
        let (next_key, next_pos) = if i + 1 < m {
            (Some(self.keys.get(i + 1)), self.ranks.get(i + 1) as usize)
        } else {
            (None, self.n)
        };
        ApproxPos::for_key(key, self.eps, self.n, |x| {
            if x != v && next_key.is_some_and(|next| x >= next) {
                // Only v + 1 for non-injective keys: it is the next segment's first key.
                return next_pos as f64;
            }
            self.predict(i, first_key, x).min(next_pos as f64)
        })
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        CprPgm::size_in_bytes(self)
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.segment_count()),
            height: Some(1),
        }
    }
}

/// Encoding (kind [`CprPgm::KIND`]): `n: u64, eps: u64, slopes: u64, slope: f64 x slopes`,
/// then four [`LecoArray`]s: first keys, first ranks, intercept deltas, slope indexes. `decode`
/// checks `n` and `eps` limits, finite non-negative slopes, four arrays of one length that is 0
/// exactly when `n` is, non-decreasing first keys, first ranks non-decreasing from 0 and at most
/// `n`, intercept deltas at most `2 eps`, slope indexes inside the table.
impl<K: Key> Persist<K> for CprPgm<K> {
    const KIND: u32 = 10;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.eps);
        out.usize(self.slopes.len());
        for &s in &self.slopes {
            out.f64(s);
        }
        for a in [&self.keys, &self.ranks, &self.intercepts, &self.slope_ids] {
            a.encode(out);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let n = input.usize_at_most(MAX_LEN, "key count")?;
        let eps = input.usize_at_most(MAX_EPS, "eps")?;
        let count = input.count(8, "slope count")?;
        let mut slopes = Vec::with_capacity(count);
        for _ in 0..count {
            let s = input.f64_finite("slope")?;
            if s < 0.0 {
                return Err(input.corrupt(format!("negative slope {s}")));
            }
            slopes.push(s);
        }
        let keys = LecoArray::decode(input)?;
        let ranks = LecoArray::decode(input)?;
        let intercepts = LecoArray::decode(input)?;
        let slope_ids = LecoArray::decode(input)?;
        let m = keys.len();
        if [ranks.len(), intercepts.len(), slope_ids.len()] != [m; 3] || (m == 0) != (n == 0) {
            return Err(input.corrupt(format!(
                "segment arrays of {m}, {}, {} and {} entries over {n} keys",
                ranks.len(),
                intercepts.len(),
                slope_ids.len()
            )));
        }
        if !keys.is_non_decreasing() {
            return Err(input.corrupt("segment first keys out of order"));
        }
        if m > 0 && (ranks.get(0) != 0 || !ranks.is_non_decreasing() || ranks.get(m - 1) > n as u64)
        {
            return Err(input.corrupt("segment first ranks not non-decreasing from 0 to n"));
        }
        if intercepts.iter().any(|d| d > 2 * eps as u64) {
            return Err(input.corrupt("intercept outside 2 eps of its first rank"));
        }
        if slope_ids.iter().any(|s| s >= slopes.len() as u64) {
            return Err(input.corrupt("slope index outside the table"));
        }
        Ok(CprPgm {
            n,
            eps,
            keys,
            ranks,
            intercepts,
            slope_ids,
            slopes,
            _key: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::pgm::{Pgm, PgmParams};

    /// Keys with pseudo-random gaps (xorshift), so the PLA needs many segments.
    fn lognormal_like(n: u64) -> Vec<u64> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut key = 1u64 << 40;
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                key += 1 + state % (1 + (i / 1000) * 50);
                key
            })
            .collect()
    }

    #[test]
    fn smaller_than_the_pgm_and_exact() {
        let keys = lognormal_like(200_000);
        let cpr = CprPgm::build(&keys, CprPgmParams::with_eps(16)).unwrap();
        let pgm = Pgm::build(&keys, PgmParams::new(16, 8)).unwrap();
        assert!(cpr.eps() <= 16, "eps {}", cpr.eps());
        assert!(cpr.segment_count() > 100, "{}", cpr.segment_count());
        assert!(
            cpr.size_in_bytes() < pgm.size_in_bytes(),
            "{} vs {}",
            cpr.size_in_bytes(),
            pgm.size_in_bytes()
        );
        for (i, k) in keys.iter().enumerate().step_by(13) {
            assert_eq!(cpr.lower_bound(&keys, *k), i);
            assert_eq!(
                cpr.lower_bound(&keys, k + 1),
                keys.partition_point(|x| *x <= *k)
            );
        }
    }

    #[test]
    fn round_trip_and_corruption() {
        let keys = lognormal_like(5_000);
        let cpr = CprPgm::build(&keys, CprPgmParams::with_eps(8)).unwrap();
        let mut e = Encoder::new();
        cpr.encode(&mut e);
        let bytes = e.into_bytes();
        let mut d = Decoder::new("m", &bytes);
        let back = CprPgm::<u64>::decode(&mut d).unwrap();
        d.finish().unwrap();
        for k in keys.iter().step_by(7) {
            assert_eq!(back.search(*k), cpr.search(*k));
        }
        for at in (0..bytes.len()).step_by(3) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5a;
            if let Ok(b) = CprPgm::<u64>::decode(&mut Decoder::new("m", &bad)) {
                for k in keys.iter().step_by(101) {
                    let w = b.search(*k);
                    assert!(w.lo <= w.pos && w.pos <= w.hi && w.hi <= b.len());
                }
            }
        }
    }

    #[test]
    fn huge_parameters_are_refused() {
        let err = CprPgm::build(&[1u64], CprPgmParams::with_eps(usize::MAX)).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "eps", .. }));
    }
}
