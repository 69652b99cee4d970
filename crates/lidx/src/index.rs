//! The contract every static (approximate) index keeps: [`ApproxPos`] windows and [`StaticIndex`].
//!
//! A static index is built from sorted keys it does not own and answers `search(k)` with a
//! half-open window `[lo, hi)` of positions in those keys. The contract, for every key `k`,
//! present in the data or not:
//!
//! ```text
//! lo <= lower_bound(k) <= hi <= len
//! ```
//!
//! so a last-mile search over `keys[lo..hi]` finds the first key `>= k` if the window holds it,
//! and otherwise the answer is `hi`. That is paper 000 §5.2's index API ("return a search
//! window whose size is bounded") made precise for absent keys, which the paper leaves open.
//!
//! Layers: this module builds on [`crate::key`] and the slice searches of [`crate::search`];
//! `model` and `mem` build on it.

use crate::key::Key;
use crate::search::{self, LastMile};

/// `lower_bound(key)` over all of `keys`, searching only `window` as `method` does.
/// The window must satisfy the [`ApproxPos`] contract for `key`.
#[inline]
pub fn lower_bound_in<K: Key>(keys: &[K], key: K, window: ApproxPos, method: LastMile) -> usize {
    let hint = window.pos.clamp(window.lo, window.hi) - window.lo;
    window.lo + method.lower_bound(&keys[window.lo..window.hi], key, hint)
}

/// A predicted position and the half-open window `[lo, hi)` around it that an index guarantees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ApproxPos {
    /// The model's best guess of `lower_bound(k)`, inside `[lo, hi]`.
    pub pos: usize,
    /// First position of the window.
    pub lo: usize,
    /// One past the last position of the window; `lower_bound(k) <= hi`.
    pub hi: usize,
}

impl ApproxPos {
    /// The window of width 0 at `pos` (`lo == pos == hi`), from an index that stores every
    /// distinct key and so knows the lower bound exactly.
    #[inline(always)]
    pub fn exact(pos: usize) -> Self {
        ApproxPos {
            pos,
            lo: pos,
            hi: pos,
        }
    }

    /// The window of an eps-bounded model: `pred` is the model's output for a key whose segment
    /// guarantees `|pred - rank| <= eps` on every data point. Flooring `pred` and reaching
    /// `eps + 1` either way covers both present keys and absent keys that fall between two data
    /// points (whose lower bound is one past the left point's rank), with room for `f64`
    /// rounding; the window is at most `2 * eps + 2` wide.
    #[inline(always)]
    pub fn from_prediction(pred: f64, eps: usize, len: usize) -> Self {
        // Negative and NaN predictions become 0, huge ones `len` (clamped on the float: fewer
        // instructions than a saturating conversion and an integer clamp).
        Self::around(crate::model::linear::position_of(pred, len), eps, len)
    }

    /// The window of [`ApproxPos::from_prediction`] once its prediction is a position
    /// `pos <= len`.
    #[inline(always)]
    pub(crate) fn around(pos: usize, eps: usize, len: usize) -> Self {
        debug_assert!(pos <= len, "position {pos} of {len}");
        ApproxPos {
            pos,
            lo: pos.saturating_sub(eps + 1),
            hi: (pos + eps + 1).min(len),
        }
    }

    /// The window for `key` from an eps-bounded predictor over model-space keys (see
    /// `crate::model::points`). For key types whose model map is not injective (16-byte
    /// strings), keys sharing the model value `v` may have their lower bound anywhere from the
    /// first rank of `v` to the first rank after it, so the window also covers the prediction
    /// for `v + 1` (or reaches `len` when `v` is the largest model value).
    #[inline(always)]
    pub fn for_key<K: Key>(key: K, eps: usize, len: usize, predict: impl Fn(u64) -> f64) -> Self {
        let v = key.to_model();
        let window = Self::from_prediction(predict(v), eps, len);
        if K::MODEL_INJECTIVE {
            return window;
        }
        let hi = match v.checked_add(1) {
            Some(next) => Self::from_prediction(predict(next), eps, len).hi,
            None => len,
        };
        ApproxPos {
            hi: window.hi.max(hi),
            ..window
        }
    }

    /// The window covering every position, `[0, len)`, with the guess in the middle.
    pub fn everything(len: usize) -> Self {
        ApproxPos {
            pos: len / 2,
            lo: 0,
            hi: len,
        }
    }

    /// Number of positions in the window.
    #[inline]
    pub fn width(&self) -> usize {
        self.hi - self.lo
    }
}

/// Structural figures an index reports where they apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shape {
    /// Number of models (segments, spline points, leaves) in the bottom level.
    pub segments: Option<usize>,
    /// Number of levels searched above the data, the bottom level included.
    pub height: Option<usize>,
}

/// An index over sorted keys it does not own. See the module docs for the window contract.
pub trait StaticIndex<K: Key>: Send + Sync {
    /// The window that holds `lower_bound(key)`.
    fn search(&self, key: K) -> ApproxPos;

    /// Number of keys the index was built on.
    fn len(&self) -> usize;

    /// True when built on no keys.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the index keeps in memory, the keys themselves excluded.
    fn size_in_bytes(&self) -> usize;

    /// Segment count and height, where the index has them.
    fn shape(&self) -> Shape {
        Shape::default()
    }

    /// Exact `lower_bound(key)` over `keys`, which must be the keys the index was built on:
    /// the window, its cache lines prefetched when it is short, then a branchless binary search
    /// inside it.
    #[inline]
    fn lower_bound(&self, keys: &[K], key: K) -> usize {
        debug_assert_eq!(keys.len(), self.len());
        let w = self.search(key);
        let window = &keys[w.lo..w.hi];
        search::prefetch_window(window);
        w.lo + search::branchless_lower_bound(window, key)
    }
}

impl<K: Key, I: StaticIndex<K> + ?Sized> StaticIndex<K> for Box<I> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        (**self).search(key)
    }
    #[inline]
    fn lower_bound(&self, keys: &[K], key: K) -> usize {
        (**self).lower_bound(keys, key)
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn size_in_bytes(&self) -> usize {
        (**self).size_in_bytes()
    }
    fn shape(&self) -> Shape {
        (**self).shape()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_window_is_clamped_and_bounded() {
        let w = ApproxPos::from_prediction(10.7, 4, 100);
        assert_eq!(
            w,
            ApproxPos {
                pos: 10,
                lo: 5,
                hi: 15
            }
        );
        assert!(w.width() <= 2 * 4 + 2);
        let w = ApproxPos::from_prediction(-3.0, 4, 100);
        assert_eq!((w.lo, w.hi), (0, 5));
        let w = ApproxPos::from_prediction(1e30, 4, 100);
        assert_eq!((w.pos, w.lo, w.hi), (100, 95, 100));
        let w = ApproxPos::from_prediction(f64::NAN, 4, 0);
        assert_eq!(w, ApproxPos::default());
    }

    #[test]
    fn every_last_mile_finds_the_lower_bound_in_a_window() {
        let keys: Vec<u64> = (0..100u64).map(|i| i * 3).collect();
        for key in [0, 1, 30, 31, 150, 297, 298, u64::MAX] {
            let expect = keys.partition_point(|&k| k < key);
            let window = ApproxPos {
                pos: expect.saturating_sub(2),
                lo: expect.saturating_sub(5),
                hi: (expect + 4).min(keys.len()),
            };
            for method in [
                LastMile::Binary,
                LastMile::Linear,
                LastMile::Exponential,
                LastMile::Interpolation,
            ] {
                assert_eq!(lower_bound_in(&keys, key, window, method), expect);
                let all = ApproxPos::everything(keys.len());
                assert_eq!(lower_bound_in(&keys, key, all, method), expect);
            }
        }
    }
}
