//! [`GroupModels`]: the few linear models a group uses to predict a key's position in its
//! array (XIndex §3.1; paper 001 §II-B4: "the group nodes of XIndex contain several linear
//! models", fitted by least squares, LSA).
//!
//! The array is cut into `count` equal parts, each fitted by least squares over
//! `(to_model(key), position)`. The paper splits a model when a group's error exceeds the bound
//! and merges two when it falls below `bound / tolerance`, one step per background round; we fit
//! at every (re)build and keep the smallest `count` (1 to [`MAX_MODELS`]) whose mean error is
//! within the bound, which is where those steps settle. A group still above the bound with
//! `MAX_MODELS` models is split by the index (`index.rs`). Errors are measured, not guaranteed
//! (paper 001 §IV-A: LSA has no maximum error), so lookups search outward from the prediction.

use crate::key::Key;
use crate::model::linear::LinearModel;

/// Most models per group (the paper's `max_model_n`).
pub(crate) const MAX_MODELS: usize = 4;

/// A group's models. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct GroupModels<K> {
    firsts: [K; MAX_MODELS],
    starts: [usize; MAX_MODELS + 1],
    lines: [LinearModel; MAX_MODELS],
    count: usize,
    /// Mean absolute error of the predictions over the array, in positions.
    pub(crate) mean_error: f64,
}

impl<K: Key> GroupModels<K> {
    /// Fits `keys` (sorted) with the fewest models whose mean error is at most `error_bound`.
    pub(crate) fn fit(keys: &[K], error_bound: f64) -> Self {
        let mut best = Self::fit_parts(keys, 1);
        for count in 2..=MAX_MODELS.min(keys.len()) {
            if best.mean_error <= error_bound {
                break;
            }
            best = Self::fit_parts(keys, count);
        }
        best
    }

    fn fit_parts(keys: &[K], count: usize) -> Self {
        let n = keys.len();
        let mut models = GroupModels {
            firsts: [K::MIN; MAX_MODELS],
            starts: [n; MAX_MODELS + 1],
            lines: [LinearModel::default(); MAX_MODELS],
            count,
            mean_error: 0.0,
        };
        for part in 0..count {
            let (start, end) = (part * n / count, (part + 1) * n / count);
            models.starts[part] = start;
            if let Some(first) = keys.get(start) {
                models.firsts[part] = *first;
            }
            models.lines[part] = LinearModel::fit_least_squares(
                keys[start..end]
                    .iter()
                    .enumerate()
                    .map(move |(i, k)| (k.to_model(), (start + i) as f64)),
            );
        }
        if n > 0 {
            let total: f64 = keys
                .iter()
                .enumerate()
                .map(|(pos, k)| (models.predict(k) as f64 - pos as f64).abs())
                .sum();
            models.mean_error = total / n as f64;
        }
        models
    }

    /// Models in use.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Predicted position of `key`, inside its model's part of the array.
    #[inline]
    pub(crate) fn predict(&self, key: &K) -> usize {
        let mut part = 0;
        for (i, first) in self.firsts[1..self.count].iter().enumerate() {
            if key.key_lt(first) {
                break;
            }
            part = i + 1;
        }
        let (lo, hi) = (self.starts[part], self.starts[part + 1]);
        let guess = self.lines[part].predict(key.to_model()).max(0.0) as usize;
        guess.clamp(lo, hi.saturating_sub(1).max(lo))
    }

    pub(crate) fn size_in_bytes() -> usize {
        std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_keys_need_one_exact_model() {
        let keys: Vec<u64> = (0..1000).map(|i| i * 7).collect();
        let m = GroupModels::fit(&keys, 1.0);
        assert_eq!(m.count(), 1);
        assert!(m.mean_error < 0.01, "{}", m.mean_error);
        for (pos, k) in keys.iter().enumerate() {
            assert_eq!(m.predict(k), pos);
        }
    }

    #[test]
    fn a_kink_takes_more_models_and_predictions_stay_in_range() {
        let keys: Vec<u64> = (0..500u64)
            .chain((0..500).map(|i| 1_000_000 + i * 1000))
            .collect();
        let one = GroupModels::fit(&keys, f64::INFINITY);
        let fitted = GroupModels::fit(&keys, 2.0);
        assert_eq!(one.count(), 1);
        assert!(fitted.count() > 1);
        assert!(fitted.mean_error < one.mean_error);
        for k in [0u64, 499, 500, 999_999, u64::MAX] {
            assert!(fitted.predict(&k) < keys.len());
        }
        let empty = GroupModels::<u64>::fit(&[], 32.0);
        assert_eq!(empty.predict(&5), 0);
    }
}
