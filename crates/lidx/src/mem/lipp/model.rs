//! The linear model of a LIPP node and how it is fitted.
//!
//! A node of `slots` slots maps a key to slot `min(slots - 1, floor(slope * (m - base) +
//! intercept))`, where `m` is the key's model image ([`crate::Key::to_model`]) and `base` the
//! image of the node's smallest key at build time; an image below `base` counts as `base`.
//! Subtracting `base` in integer arithmetic before converting to `f64` keeps the precision of
//! `u64` keys above 2^53 within a node (the reference computes `a * key + b` in `long double`
//! on the raw key). The map is non-decreasing in the key (`slope >= 0`, and rounding,
//! saturation and the clamp are all monotone), which is what makes an in-order walk of the
//! slots the key order.
//!
//! Fitting, for `n >= 3` sorted distinct images into `n * (gap + 1)` slots (the gap count
//! as the reference: 1 from a million keys, 2 from 100 000, else 5; paper 003 §6 (O11) quotes
//! the same sizes):
//!
//! * **FMCD** (LIPP paper, Algorithm 1, "fastest minimum conflict degree"): grow a candidate
//!   conflict degree `D` from 1; the model spreads `keys[D] ..= keys[n-1-D]` over the `L - 2`
//!   inner slots, so a slot is `U = (keys[n-1-D] - keys[D]) / (L - 2)` wide; one forward scan
//!   looks for `D + 1` consecutive keys closer than `U` and raises `D` (narrowing `U`) when it
//!   finds them. When `3 D > n` FMCD gives up. Like the reference we add `1e-6` to `U` so that
//!   `slope = 1 / U` stays strictly below the bound the derivation requires.
//! * **Middle thirds** (the reference's fallback, and the whole fit when FMCD is off): the line
//!   through the midpoints of the keys around the first and second third, aimed at the centres
//!   of their slots.
//! * **Spread** (ours): the line from the first key to slot 0 to the last key to the last
//!   slot. We use it when the other fit puts the first and the last key into one slot (it can
//!   when differences above 2^53 round together); the reference would recurse forever there.
//!   With it every node splits its keys over at least two slots, so every child holds fewer
//!   keys than its parent and a build always ends.
//!
//! Only key types whose model image is injective can have precise positions: two keys with
//! one image would share every slot at every depth. [`LippKey`] names them.

use crate::key::Key;
use crate::model::linear::{slot_of, u64_to_f64};

/// A key type LIPP can hold: its model image is injective ([`Key::MODEL_INJECTIVE`]), so two
/// keys always fall into different slots of a fine enough model. `u64`, `u32`, `i64` and
/// `f64`; not `Str16`, whose image is its first 8 bytes.
pub trait LippKey: Key {}

impl LippKey for u64 {}
impl LippKey for u32 {}
impl LippKey for i64 {}
impl LippKey for f64 {}

/// Conflicts FMCD tolerates before giving up, as a share of the keys: `3 D <= n`.
const FMCD_GIVE_UP: usize = 3;

/// Slots per key in a node built from `n` keys: the key's own slot and its gap.
pub(crate) fn slots_per_key(n: usize) -> usize {
    if n >= 1_000_000 {
        2
    } else if n >= 100_000 {
        3
    } else {
        6
    }
}

/// A node's key-to-slot map. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LinearModel {
    pub(crate) base: u64,
    pub(crate) slope: f64,
    pub(crate) intercept: f64,
}

impl LinearModel {
    /// The model of a node with one slot: everything goes to slot 0.
    pub(crate) const FLAT: LinearModel = LinearModel {
        base: 0,
        slope: 0.0,
        intercept: 0.0,
    };

    /// The slot of model image `m` among `slots` (at least one).
    #[inline(always)]
    pub(crate) fn predict(&self, m: u64, slots: usize) -> usize {
        let x = u64_to_f64(m.saturating_sub(self.base));
        slot_of(self.slope * x + self.intercept, slots)
    }

    /// The model of a node built for two keys `a < b` in `slots` slots: `a` at a third, `b`
    /// at two thirds, gaps on both sides for later inserts.
    pub(crate) fn two(a: u64, b: u64, slots: usize) -> LinearModel {
        let (first, second) = ((slots / 3) as f64, (slots * 2 / 3) as f64);
        LinearModel {
            base: a,
            slope: (second - first) / (b - a) as f64,
            intercept: first,
        }
    }

    /// The model for `keys` (at least three sorted distinct images) in `slots` slots: FMCD
    /// when `fmcd` and it succeeds, else middle thirds; spread when either puts every key
    /// into one slot.
    pub(crate) fn fit(keys: &[u64], slots: usize, fmcd: bool) -> LinearModel {
        debug_assert!(keys.len() >= 3);
        let fitted = fmcd
            .then(|| fit_fmcd(keys, slots))
            .flatten()
            .unwrap_or_else(|| fit_thirds(keys, slots));
        let splits = |m: &LinearModel| {
            m.slope.is_finite()
                && m.intercept.is_finite()
                && m.slope >= 0.0
                && m.predict(keys[0], slots) != m.predict(keys[keys.len() - 1], slots)
        };
        if splits(&fitted) {
            fitted
        } else {
            fit_spread(keys, slots)
        }
    }
}

/// FMCD (see the module docs); `None` when it gives up.
fn fit_fmcd(keys: &[u64], slots: usize) -> Option<LinearModel> {
    let n = keys.len();
    let inner = (slots - 2) as f64;
    let width = |d: usize| (keys[n - 1 - d] - keys[d]) as f64 / inner + 1e-6;
    let (mut i, mut d) = (0usize, 1usize);
    let mut width_d = width(d);
    while i < n - 1 - d {
        while i + d < n && (keys[i + d] - keys[i]) as f64 >= width_d {
            i += 1;
        }
        if i + d >= n {
            break;
        }
        d += 1;
        if FMCD_GIVE_UP * d > n {
            return None;
        }
        width_d = width(d);
    }
    let base = keys[0];
    let slope = 1.0 / width_d;
    let centre = (keys[d] - base) as f64 + (keys[n - 1 - d] - base) as f64;
    Some(LinearModel {
        base,
        slope,
        intercept: (slots as f64 - slope * centre) / 2.0,
    })
}

/// The middle-thirds line (see the module docs).
fn fit_thirds(keys: &[u64], slots: usize) -> LinearModel {
    let n = keys.len();
    let base = keys[0];
    let per_key = slots / n;
    let (p1, p2) = ((n - 1) / 3, (n - 1) * 2 / 3);
    let midpoint = |p: usize| ((keys[p] - base) as f64 + (keys[p + 1] - base) as f64) / 2.0;
    let target = |p: usize| (p * per_key + per_key / 2) as f64;
    let slope = (target(p2) - target(p1)) / (midpoint(p2) - midpoint(p1));
    LinearModel {
        base,
        slope,
        intercept: target(p1) - slope * midpoint(p1),
    }
}

/// The line from the first key at slot 0 to the last key at the last slot.
fn fit_spread(keys: &[u64], slots: usize) -> LinearModel {
    let base = keys[0];
    LinearModel {
        base,
        slope: (slots - 1) as f64 / (keys[keys.len() - 1] - base) as f64,
        intercept: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fmcd_places_evenly_spaced_keys_one_per_slot() {
        let keys: Vec<u64> = (0..1000).map(|i| i * 7 + 3).collect();
        let slots = keys.len() * slots_per_key(keys.len());
        let m = LinearModel::fit(&keys, slots, true);
        let pos: Vec<usize> = keys.iter().map(|&k| m.predict(k, slots)).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "a conflict");
    }

    #[test]
    fn two_keys_land_apart_even_at_the_extremes() {
        for (a, b) in [
            (0, 1),
            (0, u64::MAX),
            (u64::MAX - 1, u64::MAX),
            (1 << 60, (1 << 60) + 1),
        ] {
            let m = LinearModel::two(a, b, 8);
            assert!(m.predict(a, 8) < m.predict(b, 8), "{a} {b}");
        }
    }

    proptest! {
        #[test]
        fn every_fit_is_monotone_and_splits(
            mut keys in proptest::collection::btree_set(any::<u64>(), 3..200)
                .prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            fmcd in any::<bool>(),
            shift in 0u32..64,
        ) {
            for k in &mut keys {
                *k >>= shift;
            }
            keys.dedup();
            prop_assume!(keys.len() >= 3);
            let slots = keys.len() * slots_per_key(keys.len());
            let m = LinearModel::fit(&keys, slots, fmcd);
            let pos: Vec<usize> = keys.iter().map(|&k| m.predict(k, slots)).collect();
            prop_assert!(pos.windows(2).all(|w| w[0] <= w[1]));
            prop_assert!(pos[0] < pos[pos.len() - 1]);
            prop_assert!(pos[pos.len() - 1] < slots);
        }
    }
}
