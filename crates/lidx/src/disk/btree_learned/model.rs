//! The learned inner part: a piecewise-linear model that maps a key to its leaf's slot
//! exactly, with no search.
//!
//! Paper 003 Table 5's hybrid design indexes the leaves' maximum keys with a learned index
//! (FITing-tree, PGM, ALEX or LIPP); its lookups still search an error window of that index's
//! entries, which is why it fetches 3.0 to 4.8 blocks (with inner nodes on disk). On disk the
//! window is what costs (§7.1 S2: no learned model guarantees that the searched items share a
//! block). We remove the window: a key's slot is `floor(prediction / width)`, clamped (below),
//! and every key of a leaf gets the leaf's slot, so no separator needs to be in memory.
//!
//! Two ways to get there:
//!
//! * **Leaves cut by the model** ([`LeafModel::learn_ranks`], the bulk load and the retrain).
//!   The optimal PLA ([`crate::model::opt_pla`]) of the keys' ranks with error `eps` predicts
//!   every rank within `eps`; leaf `j` is *defined* as the keys predicted in `[jC, (j+1)C)`
//!   (`width = C`). Such keys have ranks in `[jC - eps, (j+1)C + eps]`, so a leaf holds at most
//!   `C + 2 eps + 1` entries: `C` is the leaf capacity times the fill factor minus that margin.
//!   This is paper 002's page-aligned ("zero interval") idea (G3) turned into the leaf layout:
//!   leaves sized by the model rather than the model fitted to leaves sized by count. Memory is
//!   the PLA's segments; larger `eps` means fewer segments and emptier leaves.
//! * **A model fitted to given leaves** ([`LeafModel::learn_ranges`], used by crash recovery,
//!   which must not move entries). Each non-empty leaf `j` gives the points `(min_j, 3j + 1)`
//!   and `(max_j, 3j + 1)` with `eps = 1` (`width = 3`), so every key of the leaf predicts in
//!   `[3j, 3j + 2]`. Leaves cut by count on real data are not linear at leaf granularity, so
//!   this costs up to a segment per leaf; the next retrain cuts the leaves by the model again.
//!
//! A key goes to the segment with the last first key at or below it, and the slot is clamped
//! to `[first slot of the segment, first slot of the next]`, so a segment extrapolated past its
//! last point cannot overtake the next one: with non-negative slopes (the builder clamps them)
//! the slot never decreases as the key grows. That monotonicity is what keeps leaves in key
//! order when inserts land between the keys the model was fitted to. Keys must map to model
//! space injectively ([`Key::MODEL_INJECTIVE`]).
//!
//! Memory: 32 bytes per segment (line, first slot). On random keys at `eps = 16` a segment
//! covers about a thousand keys, five leaves: about 6 bytes per leaf, where the B+-tree's inner
//! nodes take about 16.

use crate::key::Key;
use crate::model::linear::LinearModel;
use crate::model::opt_pla::OptPlaBuilder;
use crate::model::points::CdfPoint;

/// Model units per slot of [`LeafModel::learn_ranges`]: a leaf's points are fitted at
/// `RANGE_WIDTH * j + 1` with error 1.
pub const RANGE_WIDTH: usize = 3;

/// One segment: its line and the slot of its first point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSegment {
    /// The line, on model-space keys, from `model.x0`.
    pub model: LinearModel,
    /// Slot of the first leaf the segment fits.
    pub first_slot: u64,
}

/// The model over the leaves' key ranges: segments by first key, and the number of slots.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeafModel {
    /// Segments, first keys strictly ascending, first slots non-decreasing.
    pub segments: Vec<ModelSegment>,
    /// Slots the model addresses.
    pub slots: u64,
    /// Model units per slot (positive).
    pub width: f64,
}

impl LeafModel {
    /// The model that cuts sorted unique `keys` into leaves of about `width` keys (at most
    /// `width + 2 eps + 1`), and the first key index of each slot (`slots + 1` entries, the last
    /// `keys.len()`).
    pub fn learn_ranks<K: Key>(keys: &[K], eps: usize, width: usize) -> (LeafModel, Vec<usize>) {
        let mut builder = OptPlaBuilder::new(eps);
        let mut raw = Vec::new();
        for p in crate::model::points::cdf_points(keys) {
            raw.extend(builder.add_point(p));
        }
        raw.extend(builder.finish());
        let mut model = LeafModel {
            segments: Vec::with_capacity(raw.len()),
            slots: u64::MAX,
            width: width as f64,
        };
        for seg in raw {
            let first = model.segments.last().map_or(0, |s| s.first_slot);
            let at = (seg.model.predict(seg.model.x0) / model.width).max(0.0) as u64;
            model.segments.push(ModelSegment {
                model: seg.model,
                first_slot: at.max(first),
            });
        }
        let mut starts = vec![0usize];
        let mut current = 0u64;
        for (i, k) in keys.iter().enumerate() {
            let slot = model.slot_of(k);
            while current < slot {
                starts.push(i);
                current += 1;
            }
        }
        starts.push(keys.len());
        model.slots = starts.len() as u64 - 1;
        (model, starts)
    }

    /// Learns the model of `slots` slots from the non-empty ones: `(slot, min key, max key)`
    /// in slot order, keys ascending across slots.
    pub fn learn_ranges<K: Key>(
        slots: u64,
        ranges: impl Iterator<Item = (u64, K, K)>,
    ) -> LeafModel {
        let mut builder = OptPlaBuilder::new(1);
        let mut segments = Vec::new();
        let mut push = |seg: crate::model::segment::Segment| {
            segments.push(ModelSegment {
                model: seg.model,
                first_slot: (seg.first_rank / RANGE_WIDTH) as u64,
            })
        };
        for (slot, min, max) in ranges {
            let y = RANGE_WIDTH * slot as usize + 1;
            let (lo, hi) = (min.to_model(), max.to_model());
            if let Some(seg) = builder.add_point(CdfPoint { x: lo, y }) {
                push(seg);
            }
            if hi > lo {
                if let Some(seg) = builder.add_point(CdfPoint { x: hi, y }) {
                    push(seg);
                }
            }
        }
        if let Some(seg) = builder.finish() {
            push(seg);
        }
        LeafModel {
            segments,
            slots,
            width: RANGE_WIDTH as f64,
        }
    }

    /// The slot of `key`.
    #[inline]
    pub fn slot_of<K: Key>(&self, key: &K) -> u64 {
        let x = key.to_model();
        let s = self
            .segments
            .partition_point(|g| g.model.x0 <= x)
            .saturating_sub(1);
        let Some(seg) = self.segments.get(s) else {
            return 0;
        };
        let hi = self
            .segments
            .get(s + 1)
            .map_or(self.slots.saturating_sub(1), |n| n.first_slot);
        let p = seg.model.predict(x) / self.width;
        let raw = if p > 0.0 { p as u64 } else { 0 };
        raw.clamp(seg.first_slot, hi.max(seg.first_slot))
    }

    /// Heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.segments.capacity() * std::mem::size_of::<ModelSegment>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_keys(n: usize) -> Vec<u64> {
        let mut state = 7u64;
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
    fn ranges_map_every_key_to_its_leaf() {
        let keys = random_keys(20_000);
        let leaves: Vec<&[u64]> = keys.chunks(50).collect();
        let model = LeafModel::learn_ranges(
            leaves.len() as u64,
            leaves
                .iter()
                .enumerate()
                .map(|(j, l)| (j as u64, l[0], *l.last().unwrap())),
        );
        for (j, leaf) in leaves.iter().enumerate() {
            for k in leaf.iter() {
                assert_eq!(model.slot_of(k), j as u64, "key {k}");
            }
        }
        assert_monotone(&model);
        assert_eq!(LeafModel::default().slot_of(&5u64), 0);
    }

    #[test]
    fn ranks_cut_leaves_of_bounded_size() {
        let keys = random_keys(100_000);
        let (eps, width) = (16, 200);
        let (model, starts) = LeafModel::learn_ranks(&keys, eps, width);
        assert_eq!(starts.len() as u64, model.slots + 1);
        assert!(
            model.segments.len() * 4 < model.slots as usize,
            "{}",
            model.segments.len()
        );
        for j in 0..model.slots as usize {
            assert!(starts[j + 1] - starts[j] <= width + 2 * eps + 1);
            for k in &keys[starts[j]..starts[j + 1]] {
                assert_eq!(model.slot_of(k), j as u64);
            }
        }
        assert_monotone(&model);
        let (empty, starts) = LeafModel::learn_ranks::<u64>(&[], eps, width);
        assert_eq!((empty.slots, starts), (1, vec![0, 0]));
    }
}
