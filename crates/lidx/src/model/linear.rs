//! A linear model `y = intercept + slope * (x - x0)` over model-space keys, and its fits.
//!
//! `x - x0` is computed in integer arithmetic and saturates at zero, so keys below `x0` predict
//! `intercept`: the model is non-decreasing over the whole `u64` domain whenever `slope >= 0`,
//! which every window guarantee in `mem` relies on. All fits here clamp the slope at zero.

/// `x as f64`, cheaper on the common path: below 2^63 a signed conversion is one
/// instruction, where the unsigned one is a sequence of six without AVX-512. Learned indexes
/// evaluate a model per node on their lookup's dependent chain (callgrind: model evaluation
/// was a fifth of an ALEX data node resize).
///
/// Both paths convert signed: written as `x as f64` in the large case, LLVM folds the pair
/// back into the six-instruction unsigned sequence (seen in the disassembly of ALEX's and
/// LIPP's `get`); a call there instead made every register live across it a saved one.
#[inline(always)]
pub(crate) fn u64_to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(signed) => signed as f64,
        // Halved with the lowest bit kept as a sticky bit, the value rounds as the exact
        // one would (round to nearest even), and doubling is exact.
        Err(_) => ((x >> 1 | x & 1) as i64) as f64 * 2.0,
    }
}

/// A prediction as a slot in `[0, slots)` (`slots > 0`), non-decreasing in `prediction`;
/// negative predictions and NaN give 0, predictions past the last slot the last slot.
///
/// The clamp runs on the float ([`clamp_to`]): five instructions where
/// `(prediction as i64).clamp(0, slots - 1)`, with its saturating conversion, NaN test and
/// clamp assertion, took about twelve on every node of a lookup's descent (ALEX and LIPP
/// `get`, callgrind).
#[inline(always)]
pub(crate) fn slot_of(prediction: f64, slots: usize) -> usize {
    debug_assert!(slots > 0, "a node has at least one slot");
    // Exact: slot counts are far below 2^53. With no slot (a caller's bug) the last slot is
    // usize::MAX, which a checked caller refuses; ALEX's unchecked descent relies on its inner
    // nodes having children (`InnerNode::child_unchecked`).
    clamp_to(prediction, (slots.wrapping_sub(1) as i64) as f64)
}

/// A prediction as a position in `[0, max]`, non-decreasing in `prediction`: negative
/// predictions and NaN give 0, larger ones `max`. Exact up to `max = 2^53` (a length of keys
/// in memory always is); past it, as for a length read from a damaged file, the answer still
/// lies in `[0, max]` (from 2^63 on, whatever the prediction).
#[inline(always)]
pub(crate) fn position_of(prediction: f64, max: usize) -> usize {
    clamp_to(prediction, (max as i64) as f64).min(max)
}

/// `prediction` clamped into `[0, last]` and truncated. `last` is a whole number below 2^63
/// (a slot or a position), or -1 for "no slot", which gives usize::MAX (no checked caller
/// accepts it; other negative values, from `position_of` past 2^63, give at least 2^63). On x86-64
/// `maxsd` returns its second operand when either is NaN, so NaN becomes 0, and after `minsd`
/// the truncation cannot overflow.
#[inline(always)]
fn clamp_to(prediction: f64, last: f64) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cvttsd_si64, _mm_max_sd, _mm_min_sd, _mm_set_sd, _mm_setzero_pd,
        };
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            let clamped = _mm_min_sd(
                _mm_max_sd(_mm_set_sd(prediction), _mm_setzero_pd()),
                _mm_set_sd(last),
            );
            _mm_cvttsd_si64(clamped) as usize
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if last < 0.0 {
            return usize::MAX;
        }
        (prediction as i64).clamp(0, last as i64) as usize
    }
}

/// `y = intercept + slope * (x - x0)`, with `x < x0` treated as `x0`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinearModel {
    /// Origin of the model on the key axis (model space).
    pub x0: u64,
    /// Positions per unit of model-space key; never negative.
    pub slope: f64,
    /// Prediction at `x0`.
    pub intercept: f64,
}

impl LinearModel {
    /// Bytes a model takes in memory.
    pub const BYTES: usize = std::mem::size_of::<Self>();

    /// Prediction for model-space key `x`.
    #[inline(always)]
    pub fn predict(&self, x: u64) -> f64 {
        self.intercept + self.slope * u64_to_f64(x.saturating_sub(self.x0))
    }

    /// The line through `(x0, y0)` and `(x1, y1)`; flat when `x1 <= x0`.
    pub fn through(x0: u64, y0: f64, x1: u64, y1: f64) -> Self {
        let slope = if x1 > x0 {
            ((y1 - y0) / (x1 - x0) as f64).max(0.0)
        } else {
            0.0
        };
        LinearModel {
            x0,
            slope,
            intercept: y0,
        }
    }

    /// Least-squares fit of the points (two passes over a cloneable iterator). `x0` is the first
    /// point's `x`; the fit is computed on centred values for numerical stability. An empty input
    /// gives the zero model, a single distinct `x` a flat line through the mean.
    pub fn fit_least_squares<I>(points: I) -> Self
    where
        I: Iterator<Item = (u64, f64)> + Clone,
    {
        let mut n = 0usize;
        let mut x0 = 0u64;
        let (mut sum_x, mut sum_y) = (0.0f64, 0.0f64);
        for (x, y) in points.clone() {
            if n == 0 {
                x0 = x;
            }
            n += 1;
            sum_x += x.saturating_sub(x0) as f64;
            sum_y += y;
        }
        if n == 0 {
            return LinearModel::default();
        }
        let (mean_x, mean_y) = (sum_x / n as f64, sum_y / n as f64);
        let (mut cov, mut var) = (0.0f64, 0.0f64);
        for (x, y) in points {
            let dx = x.saturating_sub(x0) as f64 - mean_x;
            cov += dx * (y - mean_y);
            var += dx * dx;
        }
        let slope = if var > 0.0 { (cov / var).max(0.0) } else { 0.0 };
        LinearModel {
            x0,
            slope,
            intercept: mean_y - slope * mean_x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_an_exact_line() {
        let pts: Vec<(u64, f64)> = (0..100).map(|i| (1000 + 3 * i, i as f64)).collect();
        let m = LinearModel::fit_least_squares(pts.iter().copied());
        assert_eq!(m.x0, 1000);
        for (x, y) in pts {
            assert!((m.predict(x) - y).abs() < 1e-9);
        }
        assert!(
            (m.predict(0) - m.intercept).abs() < 1e-12,
            "saturates below x0"
        );
    }

    #[test]
    fn fast_conversions_agree_with_the_plain_ones() {
        for x in [
            0,
            1,
            12345,
            (1 << 53) + 1,
            i64::MAX as u64,
            1 << 63,
            u64::MAX,
        ] {
            assert_eq!(u64_to_f64(x), x as f64, "{x}");
        }
        // Above 2^63 a double's step is 2048: values on and around the halfway points.
        for step in 0..4096u64 {
            for x in [
                (1 << 63) + step,
                u64::MAX - step,
                (3 << 62) + 1024 * step + 1,
            ] {
                assert_eq!(u64_to_f64(x), x as f64, "{x}");
            }
        }
        for (p, want) in [
            (-3.5, 0),
            (f64::NAN, 0),
            (0.9, 0),
            (6.99, 6),
            (7.0, 7),
            (1e300, 9),
            (-0.0, 0),
            (f64::INFINITY, 9),
            (f64::NEG_INFINITY, 0),
            (9.3e18, 9),
        ] {
            assert_eq!(slot_of(p, 10), want, "{p}");
        }
        assert_eq!(slot_of(5.0, 1), 0);
        let big = 1usize << 53;
        assert_eq!(position_of(1e30, big), big);
        for max in [(1usize << 60) + 1, usize::MAX] {
            for p in [1e30, 1e18, -1.0, f64::NAN] {
                assert!(position_of(p, max) <= max, "{p} up to {max}");
            }
        }
        assert_eq!(position_of(f64::INFINITY, big - 1), big - 1);
        assert_eq!(position_of(f64::NAN, big), 0);
        // The float clamp answers as the saturating conversion and integer clamp did.
        let plain = |p: f64, slots: usize| (p as i64).clamp(0, slots as i64 - 1) as usize;
        for i in -20_000i32..20_000 {
            for p in [f64::from(i) * 0.137, f64::from(i).powi(5)] {
                for slots in [1, 2, 3, 1000, 1 << 20, 123_456_789] {
                    assert_eq!(slot_of(p, slots), plain(p, slots), "{p} of {slots}");
                    let max = slots - 1;
                    assert_eq!(position_of(p, max), plain(p, slots), "{p} up to {max}");
                }
            }
        }
    }

    #[test]
    fn degenerate_fits() {
        assert_eq!(
            LinearModel::fit_least_squares(std::iter::empty()),
            LinearModel::default()
        );
        let m = LinearModel::fit_least_squares([(5, 1.0), (5, 3.0)].into_iter());
        assert_eq!((m.slope, m.intercept), (0.0, 2.0));
        let m = LinearModel::through(10, 1.0, 20, 0.0);
        assert_eq!(m.slope, 0.0, "slopes are clamped to stay monotone");
        let m = LinearModel::through(0, 0.0, u64::MAX, 1.0);
        assert!(m.predict(u64::MAX) > 0.99);
    }
}
