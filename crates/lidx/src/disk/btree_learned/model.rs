//! The learned inner part: a piecewise-linear model over the leaves' first keys, corrected per
//! leaf boundary, that maps a key to its leaf's slot exactly, with no search on disk.
//!
//! Paper 003 Table 5's hybrid design indexes the leaves' maximum keys with a learned index
//! (FITing-tree, PGM, ALEX or LIPP); its lookups still search an error window of that index's
//! entries, which is why it fetches 3.0 to 4.8 blocks (with inner nodes on disk). On disk the
//! window is what costs (§7.1 S2: no learned model guarantees that the searched items share a
//! block). We keep the window in memory and make it exact:
//!
//! * **Leaves cut by count.** The bulk load and the retrain fill every leaf like the B+-tree's
//!   bulk load (`capacity * fill` entries, spread evenly), so scans read the B+-tree's leaves.
//! * **A model of the boundaries.** The optimal PLA (`crate::model::opt_pla`) of the points
//!   `(first key of leaf j, j * U)`, `U` = [`UNITS`] model units per slot, with error `eps`
//!   entries converted to units (at most [`MAX_EPS_UNITS`]): paper 002's idea of fitting the model to pages rather than to entries (G3), with one
//!   point per leaf, so a segment covers many leaves. The prediction `P` is made monotone across
//!   segments by clamping each segment to `[lo_i, lo_{i+1}]` (`lo` the running maximum of the
//!   segments' starts); the fitted points stay within `eps` (`U` need not exceed `eps`: a point
//!   of an earlier segment lies at least `U` below, see the tests).
//! * **Exact corrections.** For each boundary `j >= 1` the model stores `g_j = floor(P(b_j))`
//!   of the leaf's first key `b_j`, as a 4-byte offset from `j * U` (it is within `eps + 1`).
//!   Since `P` is monotone, a key `k` with `floor(P(k)) > g_j` is above `b_j` and one with
//!   `floor(P(k)) < g_j` is below: the slot of `k` is the last boundary `k` *passes*, found by
//!   a binary search over the few boundaries within `eps` of `P(k)`. Where the last key of
//!   the leaf before has the same `floor(P)` as `b_j` (a *tie*: rare, `U` units per leaf make
//!   `P` fine-grained), `b_j` itself is kept (model space, 12 bytes) and compared exactly.
//!
//! A key of a slot stays in that slot's leaves whatever is inserted later: the slot is a
//! function of the key alone, monotone, so leaves stay in key order (splits add leaves to a
//! slot through the split list, `super::meta`). Keys must map to model space injectively
//! ([`Key::MODEL_INJECTIVE`]).
//!
//! Crash recovery fits the same model to leaves as they are ([`LeafModel::learn_ranges`]): an
//! empty leaf's boundary copies the next non-empty leaf's (it passes exactly when that one
//! does, so no key is routed to it unless it is first), and empty leaves at the end are never
//! passed.
//!
//! Memory: 4 bytes a leaf, 32 bytes a segment and 12 a tie, against the B+-tree's inner nodes'
//! 16 bytes a leaf (a key and a child per leaf).

use crate::disk::bptree::pack::{node_starts, Cut};
use crate::key::Key;
use crate::model::linear::LinearModel;
use crate::model::opt_pla::OptPlaBuilder;
use crate::model::points::CdfPoint;

/// Model units per slot: fine enough that two neighbouring keys rarely share `floor(P)` (a
/// tie needs a gap under `1 / 2^24` of a leaf's key range; with `2^16`, zipf-gap keys tied at
/// half the boundaries).
pub(crate) const UNITS: u64 = 1 << 24;

/// Offset of a boundary that no key passes (an empty leaf at the end, after recovery).
pub(crate) const NEVER: i32 = i32::MAX;

/// Largest `eps` in model units: keeps every offset inside an `i32`.
pub(crate) const MAX_EPS_UNITS: u64 = 1 << 30;

/// One segment: its line and the floor of its predictions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSegment {
    /// The line, on model-space keys, from `model.x0`.
    pub model: LinearModel,
    /// Smallest prediction of the segment (non-decreasing over the segments); the next
    /// segment's is its largest.
    pub lo: f64,
}

/// A boundary whose first key is compared exactly: the leaf before holds a key of the same
/// `floor(P)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tie {
    /// The boundary's slot.
    pub slot: u64,
    /// The first key of the slot, model space.
    pub first: u64,
}

/// The model over the leaves (module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeafModel {
    /// Segments, first keys strictly ascending, `lo` non-decreasing.
    pub segments: Vec<ModelSegment>,
    /// Slots the model addresses.
    pub slots: u64,
    /// `g_j - j * UNITS` for the boundaries `j = 1..slots` (index `j - 1`), [`NEVER`] for a
    /// boundary no key passes (only at the end).
    pub offsets: Vec<i32>,
    /// Boundaries compared exactly, by slot.
    pub ties: Vec<Tie>,
    /// Largest `|offset|` of a passable boundary: the search window.
    pub max_dev: u64,
    /// Boundaries before the first [`NEVER`] one, plus one: the slots a key can reach.
    pub reachable: u64,
}

impl LeafModel {
    /// Cuts sorted unique `keys` into `ceil(n / target)` leaves spread evenly (as the disk
    /// B+-trees' bulk load, [`crate::disk::bptree::pack`]) and fits the model to them with
    /// error `eps` entries; returns the model and the first key index of each slot (`slots + 1`
    /// entries, the last `keys.len()`).
    pub fn learn_ranks<K: Key>(keys: &[K], eps: usize, target: usize) -> (LeafModel, Vec<usize>) {
        let target = target.max(1);
        let starts = node_starts(keys.len(), target, Cut::Even);
        let slots = starts.len() as u64 - 1;
        let ranges = starts
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(j, w)| (j as u64, keys[w[0]], keys[w[1] - 1]));
        (
            LeafModel::learn_ranges(slots, ranges, eps_units(eps, target)),
            starts,
        )
    }

    /// Fits the model of `slots` slots to the non-empty ones, `(slot, min key, max key)` in
    /// slot order with keys ascending across slots, with error `eps_units` model units (at
    /// most [`MAX_EPS_UNITS`]).
    pub fn learn_ranges<K: Key>(
        slots: u64,
        ranges: impl Iterator<Item = (u64, K, K)>,
        eps_units: u64,
    ) -> LeafModel {
        let slots = slots.max(1);
        let leaves: Vec<(u64, u64, u64)> = ranges
            .map(|(j, lo, hi)| (j, lo.to_model(), hi.to_model()))
            .collect();
        let mut builder = OptPlaBuilder::new(eps_units.min(MAX_EPS_UNITS) as usize);
        let mut raw = Vec::new();
        for &(j, first, _) in leaves.iter().filter(|l| l.0 > 0) {
            let y = (j * UNITS) as usize;
            raw.extend(builder.add_point(CdfPoint { x: first, y }));
        }
        raw.extend(builder.finish());
        let mut segments: Vec<ModelSegment> = Vec::with_capacity(raw.len());
        for seg in raw {
            let lo = segments.last().map_or(f64::NEG_INFINITY, |s| s.lo);
            segments.push(ModelSegment {
                model: seg.model,
                lo: lo.max(seg.model.intercept),
            });
        }
        let mut model = LeafModel {
            segments,
            slots,
            offsets: vec![NEVER; slots as usize - 1],
            ties: Vec::new(),
            max_dev: 0,
            reachable: 1,
        };
        // Each boundary from the next non-empty leaf at or after it; ties against the last
        // key of the non-empty leaf before it.
        let mut next = leaves.iter().filter(|l| l.0 > 0).peekable();
        let mut before: Option<u64> = None;
        let mut leaf = leaves.iter().peekable();
        for j in 1..slots {
            while let Some(&&(s, _, hi)) = leaf.peek() {
                if s >= j {
                    break;
                }
                before = Some(hi);
                leaf.next();
            }
            while next.peek().is_some_and(|l| l.0 < j) {
                next.next();
            }
            let Some(&&(_, first, _)) = next.peek() else {
                break;
            };
            let g = model.floor_prediction(first);
            let offset = g - (j * UNITS) as i64;
            model.offsets[j as usize - 1] =
                offset.clamp(i64::from(-NEVER), i64::from(NEVER) - 1) as i32;
            if before.is_some_and(|b| model.floor_prediction(b) == g) {
                model.ties.push(Tie { slot: j, first });
            }
        }
        model.ties.shrink_to_fit();
        model.finish_offsets();
        model
    }

    /// Sets [`Self::max_dev`] and [`Self::reachable`] from the offsets.
    pub fn finish_offsets(&mut self) {
        let reachable = self.offsets.iter().take_while(|&&o| o != NEVER).count();
        self.max_dev = self.offsets[..reachable]
            .iter()
            .map(|&o| u64::from(o.unsigned_abs()))
            .max()
            .unwrap_or(0);
        self.reachable = reachable as u64 + 1;
    }

    /// `floor(P(x))`, monotone in `x`.
    #[inline]
    fn floor_prediction(&self, x: u64) -> i64 {
        let s = self
            .segments
            .partition_point(|g| g.model.x0 <= x)
            .saturating_sub(1);
        let Some(seg) = self.segments.get(s) else {
            return 0;
        };
        let hi = self.segments.get(s + 1).map_or(f64::INFINITY, |n| n.lo);
        let p = seg.model.predict(x).clamp(seg.lo, hi.max(seg.lo));
        p.floor() as i64
    }

    /// True when a key of model-space `x` and `floor(P) = f` is at or above boundary `j`.
    #[inline]
    fn passes(&self, j: u64, f: i64, x: u64) -> bool {
        if j == 0 {
            return true;
        }
        let offset = self.offsets[j as usize - 1];
        if offset == NEVER {
            return false;
        }
        let g = (j * UNITS) as i64 + i64::from(offset);
        if g != f {
            return g < f;
        }
        match self.ties.binary_search_by_key(&j, |t| t.slot) {
            Ok(i) => x >= self.ties[i].first,
            Err(_) => true,
        }
    }

    /// The slot of `key`.
    #[inline]
    pub fn slot_of<K: Key>(&self, key: &K) -> u64 {
        let x = key.to_model();
        let f = self.floor_prediction(x);
        let (units, dev) = (UNITS as i64, self.max_dev as i64);
        let last = self.reachable as i64 - 1;
        // Saturating: a key far past the fitted ones can predict beyond `i64`.
        let mut lo = (f.saturating_sub(dev).div_euclid(units) - 1).clamp(0, last) as u64;
        let mut hi = (f.saturating_add(dev).div_euclid(units)).clamp(lo as i64, last) as u64;
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.passes(mid, f, x) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.segments.capacity() * std::mem::size_of::<ModelSegment>()
            + self.offsets.capacity() * 4
            + self.ties.capacity() * 12
    }
}

/// `eps` entries in model units for leaves of `target` entries (at most [`MAX_EPS_UNITS`]).
pub(crate) fn eps_units(eps: usize, target: usize) -> u64 {
    ((eps as u128 * u128::from(UNITS)).div_ceil(target.max(1) as u128))
        .min(u128::from(MAX_EPS_UNITS)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_keys(n: usize, seed: u64) -> Vec<u64> {
        let mut state = seed;
        let mut keys: Vec<u64> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 20) % (1 << 40)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn assert_monotone(model: &LeafModel) {
        let mut last = 0;
        for k in (0..1u64 << 40).step_by(1 << 25) {
            let s = model.slot_of(&k);
            assert!(s >= last && s < model.slots);
            last = s;
        }
    }

    #[test]
    fn full_leaves_and_every_key_in_its_slot() {
        for (eps, seed) in [(4, 1), (64, 2), (1024, 3), (100_000, 4)] {
            let keys = random_keys(60_000, seed);
            let target = 250;
            let (model, starts) = LeafModel::learn_ranks(&keys, eps, target);
            assert_eq!(starts.len() as u64, model.slots + 1);
            for j in 0..model.slots as usize {
                assert!((target - 1..=target).contains(&(starts[j + 1] - starts[j])));
                for k in &keys[starts[j]..starts[j + 1]] {
                    assert_eq!(model.slot_of(k), j as u64, "key {k}, eps {eps}");
                }
                // Keys between two leaves (absent ones) go to one of the two.
                if j > 0 {
                    let gap = keys[starts[j]] - 1;
                    assert!(model.slot_of(&gap) + 1 >= j as u64);
                }
            }
            assert!(model.max_dev <= eps_units(eps, target) + 1);
            assert_monotone(&model);
        }
        let (empty, starts) = LeafModel::learn_ranks::<u64>(&[], 16, 100);
        assert_eq!((empty.slots, starts), (1, vec![0, 0]));
        assert_eq!(empty.slot_of(&5u64), 0);
    }

    #[test]
    fn keys_far_outside_the_fitted_ones_go_to_the_end_slots() {
        // Dense keys make a steep model: u64::MAX predicts far beyond i64.
        let keys: Vec<u64> = (1_000..101_000u64).collect();
        let (model, _) = LeafModel::learn_ranks(&keys, 64, 250);
        assert_eq!(model.slot_of(&u64::MAX), model.slots - 1);
        assert_eq!(model.slot_of(&(u64::MAX / 3)), model.slots - 1);
        assert_eq!(model.slot_of(&0u64), 0);
        assert_monotone(&model);
    }

    #[test]
    fn lognormal_like_keys_take_few_segments() {
        // Keys dense at the start and sparse at the end, as lognormal data.
        let keys: Vec<u64> = (1..200_000u64).map(|i| i * i / 7 + i).collect();
        let (model, _) = LeafModel::learn_ranks(&keys, 1024, 254);
        assert!(
            model.segments.len() * 20 < model.slots as usize,
            "{} segments for {} slots",
            model.segments.len(),
            model.slots
        );
    }

    #[test]
    fn ties_are_resolved_exactly() {
        // Pairs of adjacent keys far from the rest make floor(P) collide at boundaries.
        let mut keys = Vec::new();
        for i in 0..5_000u64 {
            keys.push(i * 1_000_000_000_000);
            keys.push(i * 1_000_000_000_000 + 1);
        }
        let (model, starts) = LeafModel::learn_ranks(&keys, 1_000_000, 3);
        for j in 0..model.slots as usize {
            for k in &keys[starts[j]..starts[j + 1]] {
                assert_eq!(model.slot_of(k), j as u64, "key {k}");
            }
        }
        assert!(!model.ties.is_empty(), "the data was made to tie");
        assert_monotone(&model);
    }

    #[test]
    fn ranges_with_empty_leaves_route_to_the_non_empty_ones() {
        let keys = random_keys(20_000, 9);
        let leaves: Vec<&[u64]> = keys.chunks(50).collect();
        // Leaves 0, 3, 4 and the last three are empty (between the chunks).
        let mut ranges = Vec::new();
        let mut slot = 1u64;
        let mut owner = Vec::new();
        for (i, l) in leaves.iter().enumerate() {
            if i == 3 {
                slot += 2;
            }
            ranges.push((slot, l[0], *l.last().unwrap()));
            owner.push(slot);
            slot += 1;
        }
        let slots = slot + 3;
        let model = LeafModel::learn_ranges(slots, ranges.into_iter(), 5_000);
        for (l, s) in leaves.iter().zip(&owner) {
            for k in l.iter() {
                assert_eq!(model.slot_of(k), *s, "key {k}");
            }
        }
        assert_eq!(model.reachable, slots - 3);
        assert_monotone(&model);
    }
}
