//! A linear model `y = intercept + slope * (x - x0)` over model-space keys, and its fits.
//!
//! `x - x0` is computed in integer arithmetic and saturates at zero, so keys below `x0` predict
//! `intercept`: the model is non-decreasing over the whole `u64` domain whenever `slope >= 0`,
//! which every window guarantee in `mem` relies on. All fits here clamp the slope at zero.

/// `x as f64`, cheaper on the common path: below 2^63 a signed conversion is one
/// instruction, where the unsigned one is a sequence of six without AVX-512. Learned indexes
/// evaluate a model per node on their lookup's dependent chain (callgrind: model evaluation
/// was a fifth of an ALEX data node resize).
#[inline(always)]
pub(crate) fn u64_to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(signed) => signed as f64,
        Err(_) => x as f64,
    }
}

/// A prediction as a slot in `[0, slots)` (`slots > 0`), non-decreasing in `prediction`;
/// negative predictions and NaN give 0. `as i64` saturates like `as usize` but converts in
/// fewer instructions.
#[inline(always)]
pub(crate) fn slot_of(prediction: f64, slots: usize) -> usize {
    (prediction as i64).clamp(0, slots as i64 - 1) as usize
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
        for (p, want) in [
            (-3.5, 0),
            (f64::NAN, 0),
            (0.9, 0),
            (6.99, 6),
            (7.0, 7),
            (1e300, 9),
        ] {
            assert_eq!(slot_of(p, 10), want, "{p}");
        }
        assert_eq!(slot_of(5.0, 1), 0);
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
