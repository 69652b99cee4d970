//! The linear model every ALEX node holds: `slot = a * x + b`, where `x` is the key's model
//! image ([`crate::Key::to_model`]) minus the model's `base`, as an `f64`.
//!
//! ALEX (paper 001 §II-A, "ALEX ... uses linear regression models in every node") fits each
//! node's model by least squares on (key, rank) and, in a data node, scales it to the node's
//! capacity ("model-based insertion"). The reference code fits on the raw key converted to a
//! double. We subtract a per-model `base` (the node's first key at training time) in integer
//! arithmetic first, saturating at zero, so `u64` keys above 2^53 keep their precision inside
//! a node; the prediction stays monotone (never decreasing in the key), which is all that
//! routing and searching rely on.
//!
//! [`ModelBuilder`] accumulates sums of `x` measured from the first key added, which keeps the
//! normal equations well conditioned (the reference sums in `long double`).
//! [`fit_sampled`] trains on a progressively denser sample until the model stops moving, as the
//! reference's default "approximate model computation" does for bulk loading.

use crate::model::linear::{slot_of, u64_to_f64};

/// `slot = a * (key - base) + b`, with `key - base` saturating at zero.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LinearModel {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) base: u64,
}

impl LinearModel {
    /// The model's input for the model image `m` of a key.
    #[inline(always)]
    pub(crate) fn x(&self, m: u64) -> f64 {
        u64_to_f64(m.saturating_sub(self.base))
    }

    /// The unrounded prediction for model image `m`.
    #[inline(always)]
    pub(crate) fn predict(&self, m: u64) -> f64 {
        self.a * self.x(m) + self.b
    }

    /// The predicted slot, clamped into `[0, slots)`; `slots` must be positive. Monotone in `m`.
    #[inline(always)]
    pub(crate) fn slot(&self, m: u64, slots: usize) -> usize {
        slot_of(self.predict(m), slots)
    }

    /// Scales the output by `factor` (a node grown or shrunk to a new capacity).
    pub(crate) fn scale(&mut self, factor: f64) {
        self.a *= factor;
        self.b *= factor;
    }
}

/// Least squares of rank on key, fed one `(key image, rank)` at a time.
#[derive(Debug, Default)]
pub(crate) struct ModelBuilder {
    base: Option<u64>,
    count: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
    x_min: f64,
    x_max: f64,
    y_min: f64,
    y_max: f64,
}

impl ModelBuilder {
    pub(crate) fn add(&mut self, m: u64, y: f64) {
        let base = *self.base.get_or_insert(m);
        let x = m.saturating_sub(base) as f64;
        if self.count == 0.0 {
            (self.x_min, self.x_max, self.y_min, self.y_max) = (x, x, y, y);
        }
        self.count += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
        self.x_min = self.x_min.min(x);
        self.x_max = self.x_max.max(x);
        self.y_min = self.y_min.min(y);
        self.y_max = self.y_max.max(y);
    }

    /// The fitted model. Fewer than two points, or all on one key, give a flat model at the
    /// mean rank; a non-positive slope from rounding falls back to the line through the
    /// extreme points (as the reference does).
    pub(crate) fn build(&self) -> LinearModel {
        let base = self.base.unwrap_or(0);
        if self.count <= 1.0 {
            return LinearModel {
                a: 0.0,
                b: self.sy,
                base,
            };
        }
        let denominator = self.count * self.sxx - self.sx * self.sx;
        if denominator <= 0.0 || self.x_max == self.x_min {
            return LinearModel {
                a: 0.0,
                b: self.sy / self.count,
                base,
            };
        }
        let a = (self.count * self.sxy - self.sx * self.sy) / denominator;
        if a > 0.0 && a.is_finite() {
            let b = (self.sy - a * self.sx) / self.count;
            return LinearModel { a, b, base };
        }
        let a = (self.y_max - self.y_min) / (self.x_max - self.x_min);
        LinearModel {
            a,
            b: self.y_min - a * self.x_min,
            base,
        }
    }
}

/// Least squares of rank on key over `n` sorted keys given by `key_at`.
pub(crate) fn fit(n: usize, key_at: impl Fn(usize) -> u64) -> LinearModel {
    let mut builder = ModelBuilder::default();
    for i in 0..n {
        builder.add(key_at(i), i as f64);
    }
    builder.build()
}

/// Like [`fit`], on a sample: every `step`-th key, halving `step` until slope and intercept
/// change by under 1% (or the intercept by under half a slot). Small inputs are fitted whole.
pub(crate) fn fit_sampled(n: usize, key_at: impl Fn(usize) -> u64) -> LinearModel {
    const SMALLEST_SAMPLE: usize = 10;
    if n <= 2 * SMALLEST_SAMPLE {
        return fit(n, key_at);
    }
    let mut step = 1usize;
    while n / (step * 2) >= SMALLEST_SAMPLE {
        step *= 2;
    }
    let mut builder = ModelBuilder::default();
    // The first key always anchors `base`, so every sample shares it.
    let mut i = 0;
    while i < n {
        builder.add(key_at(i), i as f64);
        i += step;
    }
    let mut model = builder.build();
    while step > 1 {
        let half = step / 2;
        let mut i = half;
        while i < n {
            builder.add(key_at(i), i as f64);
            i += step;
        }
        step = half;
        let next = builder.build();
        let change_a = if model.a == 0.0 {
            f64::from(u8::from(next.a != 0.0))
        } else {
            ((next.a - model.a) / model.a).abs()
        };
        let change_b = (next.b - model.b).abs();
        let stable = change_a < 0.01 && (change_b < 0.5 || (change_b / model.b).abs() < 0.01);
        model = next;
        if stable {
            break;
        }
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_exactly() {
        let m = fit(100, |i| 1000 + 3 * i as u64);
        assert!((m.a - 1.0 / 3.0).abs() < 1e-12, "{m:?}");
        assert!(m.b.abs() < 1e-9);
        assert_eq!(m.slot(1000 + 30, 100), 10);
        let s = fit_sampled(100_000, |i| (1u64 << 60) + 7 * i as u64);
        assert!((s.a - 1.0 / 7.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.slot((1 << 60) + 7 * 500, 100_000), 500);
    }

    #[test]
    fn degenerate_inputs_give_flat_models() {
        assert_eq!(fit(0, |_| 0).a, 0.0);
        assert_eq!(fit(1, |_| 5).a, 0.0);
        let m = fit(4, |_| 5);
        assert_eq!((m.a, m.b), (0.0, 1.5));
    }

    #[test]
    fn slots_are_monotone_and_clamped() {
        let m = LinearModel {
            a: 1e-3,
            b: -5.0,
            base: 100,
        };
        let mut last = 0;
        for k in (0..20_000u64).step_by(7).chain([u64::MAX]) {
            let s = m.slot(k, 10);
            assert!(s >= last && s < 10);
            last = s;
        }
    }
}
