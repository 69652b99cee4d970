//! ALEX's data node: a gapped array of keys and values with a bitmap of occupied slots, placed
//! by a linear model and searched by exponential search from the model's prediction (paper 003
//! §2-3 on ALEX's node layout; paper 001 §II-A, "Gap" insertion: "ALEX ... reserves gaps in the
//! array so that most inserts land in a free slot near the predicted position").
//!
//! Layout and invariants (those of the reference implementation):
//!
//! * `keys`, `values` and `bitmap` have one slot per position; a set bit marks a key.
//! * A gap holds a copy of the next key to its right, or `K::MAX` when no key follows, so
//!   `keys` is sorted and a search never reads the bitmap. The last slot holding a given key
//!   is then the key itself (or a trailing gap when the key is `K::MAX`, the one case where
//!   a lookup checks the bitmap).
//! * Gap values hold `V::default()`: this is why [`super::Alex`] asks `V: Default` (a safe
//!   layout without `MaybeUninit`; the reference leaves them uninitialised).
//!
//! Inserts go where the model predicts, or to the nearest gap in the run they fall in; when
//! the slot is taken, entries shift towards the closest gap. At `max_density` the node grows
//! to `min_density`, keeping its model scaled (or retrained when it holds under 50 keys, or on
//! request); below `min_density` after a removal it shrinks to `max_density`. Whether it grows,
//! or is instead retrained or split, is for [`super::update`] to decide from the counters kept
//! here: an insert at `max_density` hands the key back with the reason ([`Full`]).
//!
//! The FITing-tree's `Gap` strategy runs this node as a segment without that policy
//! ([`DataNode::gapped`], [`DataNode::insert_into_gap`], [`DataNode::take`]): a fixed
//! capacity, full when no gap is left.

use std::cmp::Ordering;
use std::mem::size_of;

use super::cost::{self, NodeCost, NODE_LOOKUP_WEIGHT, SEARCH_ITERATION_WEIGHT, SHIFT_WEIGHT};
use super::layout::{Layout, Slots};
use super::model::{self, LinearModel, ModelBuilder};
use super::params::Derived;
use crate::key::Key;

/// No neighbour in the leaf chain.
pub(crate) const NIL: u32 = u32::MAX;
/// Nodes under this many keys are retrained on every resize.
const RETRAIN_BELOW: usize = 50;
/// A node is append-mostly when this share of its inserts landed past its ends.
const APPEND_MOSTLY: f64 = 0.9;
/// Shifts per insert above which a node is split whatever its expected cost.
pub(crate) const CATASTROPHIC_SHIFTS: f64 = 100.0;

/// Why an insert did not happen and the node must change first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// Measured cost is well above the expected one: retrain or split.
    CostDeviation,
    /// Shifts per insert are catastrophic: split.
    Catastrophic,
    /// The node cannot grow past the largest node size: split.
    AtMaxSize,
    /// The node is at `max_density` and may grow: expand it to `min_density`, model scaled.
    Expand,
}

/// The panic of a slot past a node's end, out of line: formatted in place, its arguments were
/// stored on the stack on every lookup.
#[cold]
#[inline(never)]
fn slot_out_of_range(slot: usize, capacity: usize) -> ! {
    panic!("slot {slot} of {capacity}")
}

/// One data node. See the module docs.
///
/// A lookup reads `model`, `keys` and `values` only: declared first in C layout and aligned
/// to a cache line, they share one line (56 bytes), so a lookup misses once on the node's
/// header, not on two or three lines as with the compiler's field order and a 232-byte
/// stride (perf: the header's miss was a tenth of a lookup, 10M lognormal keys). The node is
/// 256 bytes for `u64 -> u64` (the reference's 208); the cost model charges that per node, so
/// the tree has fewer, larger data nodes than the reference's (1,174 against 1,303 on 10M
/// lognormal keys). Shrunk to 192 bytes, it had 1,391, and in side-by-side rounds looked up
/// slower in four of four and inserted slower in three of four.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct DataNode<K, V> {
    pub(crate) model: LinearModel,
    pub(crate) keys: Box<[K]>,
    pub(crate) values: Box<[V]>,
    bitmap: Box<[u64]>,
    pub(crate) num_keys: usize,
    expansion_threshold: usize,
    contraction_threshold: usize,
    /// Expected cost when last built or retrained, and its expected shifts per insert.
    pub(crate) expected: NodeCost,
    shifts: u64,
    search_iterations: u64,
    inserts: u64,
    min_key: Option<K>,
    max_key: Option<K>,
    inserts_past_right: u64,
    inserts_past_left: u64,
    /// log2 of the number of parent slots pointing here.
    pub(crate) duplication: u8,
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

impl<K: Key, V: Default> DataNode<K, V> {
    /// A node holding `n` entries in increasing key order, placed by `model` (already scaled
    /// to `capacity` slots, `capacity > n`, or 1 when empty).
    pub(crate) fn lay_out(
        n: usize,
        entries: impl IntoIterator<Item = (K, V)>,
        model: LinearModel,
        capacity: usize,
        d: &Derived,
    ) -> Self {
        debug_assert!(capacity > n || (n == 0 && capacity > 0));
        let mut node = Self::place_all(n, entries, model, capacity);
        node.set_thresholds(d);
        node
    }

    /// A node holding `n` entries in increasing key order in exactly `capacity` slots
    /// (`capacity >= n`, at least 1), placed by `model` (already scaled to `capacity`), that
    /// never grows or shrinks by itself: [`DataNode::insert_into_gap`] refuses a new key once
    /// every slot is taken. The FITing-tree's `Gap` strategy is built on it.
    pub(crate) fn gapped(
        n: usize,
        entries: impl IntoIterator<Item = (K, V)>,
        model: LinearModel,
        capacity: usize,
    ) -> Self {
        let mut node = Self::place_all(n, entries, model, capacity);
        node.expansion_threshold = capacity;
        node.contraction_threshold = 0;
        node
    }

    /// Places `n` entries (increasing keys) by `model` into `capacity >= n` slots, each at its
    /// predicted slot or the first free one after the previous entry, keeping room for the
    /// rest; no thresholds set.
    fn place_all(
        n: usize,
        entries: impl IntoIterator<Item = (K, V)>,
        model: LinearModel,
        capacity: usize,
    ) -> Self {
        let mut layout = Layout::new(n, model, capacity);
        for (key, value) in entries {
            layout.push(key, value);
        }
        Self::from_slots(model, layout.finish(), n)
    }

    /// A node over laid-out slots, which hold `num_keys` keys, and its model. No expected cost
    /// yet, thresholds and measured counters at zero, linked to no neighbour.
    #[inline]
    fn from_slots(model: LinearModel, slots: Slots<K, V>, num_keys: usize) -> Self {
        DataNode {
            model,
            keys: slots.keys,
            values: slots.values,
            bitmap: slots.bitmap,
            num_keys,
            expansion_threshold: 0,
            contraction_threshold: 0,
            expected: NodeCost::default(),
            shifts: 0,
            search_iterations: 0,
            inserts: 0,
            min_key: slots.first,
            max_key: slots.last,
            inserts_past_right: 0,
            inserts_past_left: 0,
            duplication: 0,
            prev: NIL,
            next: NIL,
        }
    }

    /// A node built from sorted `keys` at `density`, its model fitted on them (`model` when
    /// given, already fitted on ranks), with the expected cost computed.
    pub(crate) fn build(
        keys: &[K],
        values: impl IntoIterator<Item = V>,
        fitted: Option<LinearModel>,
        density: f64,
        d: &Derived,
    ) -> Self {
        let n = keys.len();
        let mut model = fitted.unwrap_or_else(|| model::fit(n, |i| keys[i].to_model()));
        let capacity = cost::capacity_for(n, density);
        if n > 0 {
            model.scale(capacity as f64 / n as f64);
        }
        Self::lay_out(n, keys.iter().copied().zip(values), model, capacity, d)
    }

    /// A node over `keys` (with their `values`) at `min_density`, its model fitted on them,
    /// with its expected cost: what a split makes of each half, in memory ([`super::Alex`])
    /// and on disk ([`crate::disk::alex`]).
    pub(crate) fn fresh(
        keys: &[K],
        values: impl IntoIterator<Item = V>,
        duplication: u8,
        d: &Derived,
    ) -> Self {
        let fitted = model::fit(keys.len(), |i| keys[i].to_model());
        let mut node = Self::build(keys, values, Some(fitted), d.min_density, d);
        node.expected = cost::expected_cost(
            keys.len(),
            |i| keys[i].to_model(),
            &fitted,
            d.min_density,
            d.insert_fraction,
        );
        node.duplication = duplication;
        node
    }

    /// A node from its parts as stored elsewhere (an on-disk data node read back whole,
    /// [`crate::disk::alex`]): slot keys with gaps holding the next key, slot values, the
    /// bitmap of occupied slots, its model (scaled to the slots) and expected cost. The
    /// measured counters start at zero.
    pub(crate) fn from_parts(
        model: LinearModel,
        keys: Box<[K]>,
        values: Box<[V]>,
        bitmap: Box<[u64]>,
        expected: NodeCost,
        d: &Derived,
    ) -> Self {
        let num_keys = bitmap.iter().map(|w| w.count_ones() as usize).sum();
        let first = occupied_slots(&bitmap).next().map(|i| keys[i]);
        let last = occupied_slots(&bitmap).last().map(|i| keys[i]);
        let slots = Slots {
            keys,
            values,
            bitmap,
            first,
            last,
        };
        let mut node = Self::from_slots(model, slots, num_keys);
        node.expected = expected;
        node.set_thresholds(d);
        node
    }

    /// The bitmap of occupied slots, 64 a word.
    pub(crate) fn bitmap(&self) -> &[u64] {
        &self.bitmap
    }

    /// Keys at which an insert finds the node full.
    pub(crate) fn expansion_threshold(&self) -> usize {
        self.expansion_threshold
    }

    /// Keys under which a removal shrinks the node.
    pub(crate) fn contraction_threshold(&self) -> usize {
        self.contraction_threshold
    }

    fn set_thresholds(&mut self, d: &Derived) {
        let capacity = self.capacity();
        self.expansion_threshold = ((capacity as f64 * d.max_density) as usize)
            .max(self.num_keys + 1)
            .min(capacity);
        self.contraction_threshold = (capacity as f64 * d.min_density) as usize;
    }

    #[inline(always)]
    pub(crate) fn capacity(&self) -> usize {
        self.keys.len()
    }

    #[inline(always)]
    pub(crate) fn is_occupied(&self, i: usize) -> bool {
        self.bitmap[i / 64] >> (i % 64) & 1 == 1
    }

    /// The keys held, in increasing order.
    pub(crate) fn occupied_keys(&self) -> impl Iterator<Item = K> + '_ {
        occupied_slots(&self.bitmap).map(|i| self.keys[i])
    }

    /// The first occupied slot at or after `from`.
    pub(crate) fn next_occupied(&self, from: usize) -> Option<usize> {
        if from >= self.capacity() {
            return None;
        }
        let mut word = from / 64;
        let mut bits = self.bitmap[word] & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                return (i < self.capacity()).then_some(i);
            }
            word += 1;
            if word == self.bitmap.len() {
                return None;
            }
            bits = self.bitmap[word];
        }
    }

    /// The free slot nearest to `pos` (`pos <= capacity`); the node always has one.
    fn closest_gap(&self, pos: usize) -> usize {
        let capacity = self.capacity();
        let right = (pos < capacity).then(|| {
            let mut word = pos / 64;
            let mut free = !self.bitmap[word] & (u64::MAX << (pos % 64));
            while free == 0 && word + 1 < self.bitmap.len() {
                word += 1;
                free = !self.bitmap[word];
            }
            let i = word * 64 + free.trailing_zeros() as usize;
            i.min(capacity)
        });
        let right = right.filter(|&i| i < capacity);
        let limit = right.map_or(usize::MAX, |r| r - pos);
        let left = (pos > 0).then(|| {
            let mut word = (pos - 1) / 64;
            let shift = 63 - (pos - 1) % 64;
            let mut free = (!self.bitmap[word]) << shift >> shift;
            while free == 0 && word > 0 && (pos - word * 64) <= limit {
                word -= 1;
                free = !self.bitmap[word];
            }
            (free != 0).then(|| word * 64 + 63 - free.leading_zeros() as usize)
        });
        match (left.flatten(), right) {
            (Some(l), Some(r)) => {
                if pos - l < r - pos {
                    l
                } else {
                    r
                }
            }
            (Some(l), None) => l,
            (None, Some(r)) => r,
            (None, None) => unreachable!("a data node always keeps a free slot"),
        }
    }

    /// The model's slot for `key`.
    #[inline(always)]
    fn predict(&self, key: &K) -> usize {
        self.model.slot(key.to_model(), self.capacity())
    }

    /// The first slot whose key is `> key` (`capacity` when none), searching exponentially
    /// outwards from `from` (a slot, `< capacity`), and the number of doublings it took.
    ///
    /// Every read is unchecked, and the bracket is bisected without a branch: a `get` is a
    /// lookup's dependent chain of misses, and the fewer instructions each lookup takes, the
    /// more lookups the core keeps in flight (callgrind, 1M lognormal keys, with the other
    /// changes of session 53: 169 instructions a `get` before, 130 after).
    #[inline(always)]
    fn upper_bound_from(&self, from: usize, key: &K) -> (usize, u32) {
        let keys = &self.keys[..];
        let n = keys.len();
        if from >= n {
            slot_out_of_range(from, n);
        }
        let mut bound = 1;
        let mut iterations = 0;
        // SAFETY: from < n, checked above.
        let (lo, hi) = if key.key_lt(unsafe { keys.get_unchecked(from) }) {
            // SAFETY: bound <= from, so from - bound is in 0..from.
            while bound <= from && key.key_lt(unsafe { keys.get_unchecked(from - bound) }) {
                bound *= 2;
                iterations += 1;
            }
            (from - bound.min(from), from - bound / 2)
        } else {
            let size = n - from;
            // SAFETY: bound < size = n - from, so from + bound < n.
            while bound < size && !key.key_lt(unsafe { keys.get_unchecked(from + bound) }) {
                bound *= 2;
                iterations += 1;
            }
            (from + bound / 2 + 1, from + bound.min(size))
        };
        // The answer is in lo..=hi, with lo <= hi <= n. Bisect: keys before `base` are <= key,
        // and the answer is at most base + len.
        let (mut base, mut len) = (lo, hi.saturating_sub(lo));
        if len == 0 {
            return (lo, iterations);
        }
        while len > 1 {
            let half = len / 2;
            // SAFETY: base + half < base + len <= hi <= n (the loop keeps base + len <= hi).
            let probe = unsafe { keys.get_unchecked(base + half) };
            base = std::hint::select_unpredictable(!key.key_lt(probe), base + half, base);
            len -= half;
        }
        // SAFETY: len == 1, so base < base + 1 <= hi <= n.
        let last = unsafe { keys.get_unchecked(base) };
        (base + usize::from(!key.key_lt(last)), iterations)
    }

    /// The first slot whose key is `>= key` (`capacity` when none), searching exponentially
    /// outwards from `from`.
    #[inline(always)]
    fn lower_bound_from(&self, from: usize, key: &K) -> usize {
        let keys = &self.keys[..];
        let mut bound = 1;
        let (lo, hi) = if !keys[from].key_lt(key) {
            while bound <= from && !keys[from - bound].key_lt(key) {
                bound *= 2;
            }
            (from - bound.min(from), from - bound / 2)
        } else {
            let size = keys.len() - from;
            while bound < size && keys[from + bound].key_lt(key) {
                bound *= 2;
            }
            (from + bound / 2 + 1, from + bound.min(size))
        };
        lo + keys[lo..hi].partition_point(|k| k.key_lt(key))
    }

    /// The slot holding `key`.
    #[inline(always)]
    pub(crate) fn find(&self, key: &K) -> Option<usize> {
        let from = self.predict(key);
        self.prefetch_value(from);
        let (upper, _) = self.upper_bound_from(from, key);
        self.holding(upper, key)
    }

    /// Prefetches the value slot at `slot`, where the key most likely is: its cache miss then
    /// overlaps the key's instead of following the search.
    #[inline(always)]
    fn prefetch_value(&self, slot: usize) {
        crate::search::prefetch(self.values.as_ptr().wrapping_add(slot));
    }

    /// The slot holding `key`, given `upper`, the first slot whose key is `> key`: the slot
    /// before it, unless `key` is `K::MAX`, which trailing gaps also hold.
    #[inline(always)]
    fn holding(&self, upper: usize, key: &K) -> Option<usize> {
        let at = upper.checked_sub(1)?;
        if self.keys.get(at)?.key_cmp(key) != Ordering::Equal {
            return None;
        }
        if key.key_lt(&K::MAX) {
            return Some(at);
        }
        let last = (0..=at).rev().find(|&i| self.is_occupied(i))?;
        (self.keys[last].key_cmp(key) == Ordering::Equal).then_some(last)
    }

    /// The first occupied slot whose key is `>= key` (`> key` when `exclusive`).
    pub(crate) fn seek(&self, key: &K, exclusive: bool) -> Option<usize> {
        if self.num_keys == 0 {
            return None;
        }
        let from = self.predict(key);
        let pos = if exclusive {
            self.upper_bound_from(from, key).0
        } else {
            self.lower_bound_from(from, key)
        };
        self.next_occupied(pos)
    }

    /// Inserts or updates `key`. `Ok(Some(old))` for an update, `Ok(None)` for a new key, and
    /// `Err` (with the value handed back) when the node must be expanded, retrained or split
    /// first ([`DataNode::expand`] for [`Full::Expand`]).
    pub(crate) fn insert(&mut self, key: K, value: V, d: &Derived) -> Result<Option<V>, (Full, V)> {
        let predicted = self.predict(&key);
        // The insert writes the value and reads the bitmap near the prediction: their misses
        // overlap the key's.
        self.prefetch_value(predicted);
        crate::search::prefetch(self.bitmap.as_ptr().wrapping_add(predicted / 64));
        let (upper, iterations) = self.upper_bound_from(predicted, &key);
        if let Some(at) = self.holding(upper, &key) {
            return Ok(Some(std::mem::replace(&mut self.values[at], value)));
        }
        if self.inserts.is_multiple_of(64) && self.catastrophic() {
            return Err((Full::Catastrophic, value));
        }
        if self.num_keys >= self.expansion_threshold {
            let full = if self.significant_cost_deviation() {
                Full::CostDeviation
            } else if self.catastrophic() {
                Full::Catastrophic
            } else if self.num_keys as f64 > d.max_data_slots as f64 * d.min_density {
                Full::AtMaxSize
            } else {
                Full::Expand
            };
            return Err((full, value));
        }
        self.put(predicted, upper, iterations, key, value);
        Ok(None)
    }

    /// Grows the node to `min_density`, its model scaled; an append-mostly node keeps its
    /// keys in place and leaves the new room on the side it grows to.
    pub(crate) fn expand(&mut self, d: &Derived) {
        let (keep_left, keep_right) = (self.append_mostly_right(), self.append_mostly_left());
        self.resize(d.min_density, false, keep_left, keep_right, d);
    }

    /// Inserts or updates `key` with none of ALEX's policy (no cost checks, no growth):
    /// `Ok(Some(old))` for an update, `Ok(None)` for a new key, `Err(value)` when the key is
    /// new and no slot is free. For nodes made by [`DataNode::gapped`].
    pub(crate) fn insert_into_gap(&mut self, key: K, value: V) -> Result<Option<V>, V> {
        let predicted = self.predict(&key);
        let (upper, iterations) = self.upper_bound_from(predicted, &key);
        if let Some(at) = self.holding(upper, &key) {
            return Ok(Some(std::mem::replace(&mut self.values[at], value)));
        }
        if self.num_keys >= self.capacity() {
            return Err(value);
        }
        self.put(predicted, upper, iterations, key, value);
        Ok(None)
    }

    /// Stores the new `key` (absent, a free slot left) near the model's `predicted` slot,
    /// given `upper`, the first slot whose key is `> key`, found in `iterations` doublings.
    fn put(&mut self, predicted: usize, upper: usize, iterations: u32, key: K, value: V) {
        self.search_iterations += u64::from(iterations);
        let pos = if predicted <= upper || upper == self.capacity() || self.is_occupied(upper) {
            upper
        } else {
            let next = self.next_occupied(upper).unwrap_or(self.capacity());
            predicted.min(next - 1)
        };
        if pos < self.capacity() && !self.is_occupied(pos) {
            self.place(pos, key, value);
        } else {
            self.insert_with_shifts(pos, key, value);
        }
        self.num_keys += 1;
        self.inserts += 1;
        if self.max_key.is_none_or(|m| m.key_lt(&key)) {
            self.max_key = Some(key);
            self.inserts_past_right += 1;
        }
        if self.min_key.is_none_or(|m| key.key_lt(&m)) {
            self.min_key = Some(key);
            self.inserts_past_left += 1;
        }
    }

    /// Puts `key` into the free slot `pos` and refreshes the gaps before it.
    fn place(&mut self, pos: usize, key: K, value: V) {
        self.keys[pos] = key;
        self.values[pos] = value;
        self.bitmap[pos / 64] |= 1 << (pos % 64);
        self.refill_gaps_before(pos);
    }

    /// Gaps just before `pos` take the key at `pos` (the next key to their right).
    fn refill_gaps_before(&mut self, pos: usize) {
        let key = self.keys[pos];
        let mut j = pos;
        while j > 0 && !self.is_occupied(j - 1) {
            j -= 1;
            self.keys[j] = key;
        }
    }

    /// Inserts `key` so that it ends just before the entry now at `pos` (`pos` may be the
    /// capacity), moving entries one slot towards the closest gap.
    fn insert_with_shifts(&mut self, pos: usize, key: K, value: V) {
        let gap = self.closest_gap(pos);
        self.bitmap[gap / 64] |= 1 << (gap % 64);
        if gap >= pos {
            shift_right(&mut self.keys[pos..=gap], &mut self.values[pos..=gap]);
            self.shifts += (gap - pos) as u64;
            self.keys[pos] = key;
            self.values[pos] = value;
            self.refill_gaps_before(pos);
        } else {
            shift_left(&mut self.keys[gap..pos], &mut self.values[gap..pos]);
            self.shifts += (pos - gap - 1) as u64;
            self.keys[pos - 1] = key;
            self.values[pos - 1] = value;
            self.refill_gaps_before(gap);
        }
    }

    /// Removes `key`, shrinking the node when it falls under `min_density`.
    pub(crate) fn remove(&mut self, key: &K, d: &Derived) -> Option<V> {
        let value = self.take(key)?;
        if self.num_keys < self.contraction_threshold {
            self.resize(d.max_density, false, false, false, d);
        }
        Some(value)
    }

    /// Removes `key`, leaving a gap in its slot; the node keeps its size.
    pub(crate) fn take(&mut self, key: &K) -> Option<V> {
        let pos = self.find(key)?;
        let value = std::mem::take(&mut self.values[pos]);
        self.bitmap[pos / 64] &= !(1 << (pos % 64));
        let next = self.keys.get(pos + 1).copied().unwrap_or(K::MAX);
        self.keys[pos] = next;
        self.refill_gaps_before(pos);
        self.num_keys -= 1;
        Some(value)
    }

    /// Takes every entry out, in key order, leaving the node empty.
    pub(crate) fn drain(&mut self) -> (Vec<K>, Vec<V>) {
        let mut keys = Vec::with_capacity(self.num_keys);
        let mut values = Vec::with_capacity(self.num_keys);
        for i in occupied_slots(&self.bitmap) {
            keys.push(self.keys[i]);
            values.push(std::mem::take(&mut self.values[i]));
        }
        self.bitmap.fill(0);
        self.num_keys = 0;
        (keys, values)
    }

    /// Rebuilds the node at `density`. Its model is kept and scaled to the new capacity, or
    /// refitted when `retrain` or when it holds few keys; an append-mostly node keeps its
    /// keys where they are and leaves the new room on the side it grows to. Entries move
    /// straight from the old slots to the new ones.
    pub(crate) fn resize(
        &mut self,
        density: f64,
        retrain: bool,
        keep_left: bool,
        keep_right: bool,
        d: &Derived,
    ) {
        if self.num_keys == 0 {
            return;
        }
        let (old_capacity, n) = (self.capacity(), self.num_keys);
        let capacity = cost::capacity_for(n, density);
        let old_keys = std::mem::take(&mut self.keys);
        let old_values = std::mem::take(&mut self.values);
        let old_bitmap = std::mem::take(&mut self.bitmap);
        let mut model = self.model;
        if n < RETRAIN_BELOW || retrain {
            let mut builder = ModelBuilder::default();
            for (rank, i) in occupied_slots(&old_bitmap).enumerate() {
                builder.add(old_keys[i].to_model(), rank as f64);
            }
            model = builder.build();
            if keep_left {
                model.scale(old_capacity as f64 / n as f64);
            } else if keep_right {
                model.scale(old_capacity as f64 / n as f64);
                model.b += (capacity - old_capacity.min(capacity)) as f64;
            } else {
                model.scale(capacity as f64 / n as f64);
            }
        } else if keep_right {
            model.b += capacity as f64 - old_capacity as f64;
        } else if !keep_left {
            model.scale(capacity as f64 / old_capacity as f64);
        }
        let mut layout = Layout::new(n, model, capacity);
        layout.move_from(&old_keys, old_values, &old_bitmap);
        let slots = layout.finish();
        self.model = model;
        self.keys = slots.keys;
        self.values = slots.values;
        self.bitmap = slots.bitmap;
        self.num_keys = n;
        self.set_thresholds(d);
    }

    fn append_mostly_right(&self) -> bool {
        self.inserts > 0 && self.inserts_past_right as f64 / self.inserts as f64 > APPEND_MOSTLY
    }

    fn append_mostly_left(&self) -> bool {
        self.inserts > 0 && self.inserts_past_left as f64 / self.inserts as f64 > APPEND_MOSTLY
    }

    pub(crate) fn shifts_per_insert(&self) -> f64 {
        if self.inserts == 0 {
            0.0
        } else {
            self.shifts as f64 / self.inserts as f64
        }
    }

    /// Measured cost per operation. Lookups (`&self`) are not counted, so every counted
    /// operation is an insert; the reference counts both.
    pub(crate) fn empirical_cost(&self) -> f64 {
        if self.inserts == 0 {
            return 0.0;
        }
        SEARCH_ITERATION_WEIGHT * self.search_iterations as f64 / self.inserts as f64
            + SHIFT_WEIGHT * self.shifts_per_insert()
    }

    fn significant_cost_deviation(&self) -> bool {
        let measured = self.empirical_cost();
        self.model.a != 0.0 && measured > NODE_LOOKUP_WEIGHT && measured > 1.5 * self.expected.cost
    }

    fn catastrophic(&self) -> bool {
        (self.model.a != 0.0 && self.shifts_per_insert() > CATASTROPHIC_SHIFTS)
            || self.expected.shifts > CATASTROPHIC_SHIFTS
    }

    /// Forgets the measured counters (after a retrain).
    pub(crate) fn reset_counters(&mut self) {
        self.shifts = 0;
        self.search_iterations = 0;
        self.inserts = 0;
        self.inserts_past_left = 0;
        self.inserts_past_right = 0;
    }

    /// Bytes of this node: its slots, bitmap and header.
    pub(crate) fn size_in_bytes(&self) -> usize {
        size_of::<Self>()
            + self.capacity() * (size_of::<K>() + size_of::<V>())
            + self.bitmap.len() * 8
    }

    /// Checks the layout invariants (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut count = 0;
        for i in 0..self.capacity() {
            if i + 1 < self.capacity() {
                assert!(!self.keys[i + 1].key_lt(&self.keys[i]), "sorted at {i}");
            }
            if self.is_occupied(i) {
                count += 1;
            } else {
                let want = self.next_occupied(i).map_or(K::MAX, |j| self.keys[j]);
                assert_eq!(self.keys[i].key_cmp(&want), Ordering::Equal, "gap {i}");
            }
        }
        assert_eq!(count, self.num_keys);
        assert!(self.num_keys <= self.capacity());
    }
}

/// Runs up to this long are moved an element at a time, longer ones by `rotate_*` (memory
/// moves): most shifts move a few slots (8.1 a new key on 10M lognormal keys, against the
/// reference's 8.5), where the library rotation's calls to `memmove` cost more than the moves
/// (perf: a tenth of insert time with every run rotated). Keys and values move in one loop, as
/// in the reference (session 54: rotating the keys and then the values by swaps of neighbours
/// was 2% slower, timer not yet checked for huge pages). 8 against 16: faster in eight of eight
/// alternated pairs on 10M lognormal keys (median 4.62 against 4.54 M inserts/s) and two of
/// two on 50M; 4 was slower than both, and 0 (every run rotated) between them (session 55,
/// Intel Xeon VM, `docs/results/cpp-references.md`).
const SHORT_ROTATION: usize = 8;

/// Moves every entry of `keys` and `values` (equal lengths) but the last one slot right, over
/// the last (a gap), keys and values in one loop so that the misses on both arrays' lines
/// overlap; long runs move by `rotate_right`.
#[inline(always)]
fn shift_right<K: Copy, V: Default>(keys: &mut [K], values: &mut [V]) {
    debug_assert_eq!(keys.len(), values.len());
    let n = keys.len();
    let values = &mut values[..n];
    if n <= SHORT_ROTATION {
        for i in (1..n).rev() {
            keys[i] = keys[i - 1];
            values[i] = std::mem::take(&mut values[i - 1]);
        }
    } else {
        keys.rotate_right(1);
        values.rotate_right(1);
    }
}

/// Moves every entry of `keys` and `values` but the first one slot left, over the first (a
/// gap). See [`shift_right`].
#[inline(always)]
fn shift_left<K: Copy, V: Default>(keys: &mut [K], values: &mut [V]) {
    debug_assert_eq!(keys.len(), values.len());
    let n = keys.len();
    let values = &mut values[..n];
    if n <= SHORT_ROTATION {
        for i in 1..n {
            keys[i - 1] = keys[i];
            values[i - 1] = std::mem::take(&mut values[i]);
        }
    } else {
        keys.rotate_left(1);
        values.rotate_left(1);
    }
}

/// The set bits of `bitmap`, in increasing order.
fn occupied_slots(bitmap: &[u64]) -> OccupiedSlots<'_> {
    OccupiedSlots {
        bitmap,
        word: 0,
        bits: bitmap.first().copied().unwrap_or(0),
    }
}

/// The iterator of [`occupied_slots`]: the word it is in and that word's bits not yet taken.
/// A plain loop over the words: a `flat_map` of per-word iterators made every resize about 8%
/// slower when resizes read the old node through it (the expansions' total over 5M inserts
/// into 10M lognormal keys: 183-191 ms against 167-175, session 55 in
/// `docs/results/cpp-references.md`; resizes now loop over the words themselves, `layout`).
struct OccupiedSlots<'a> {
    bitmap: &'a [u64],
    word: usize,
    bits: u64,
}

impl Iterator for OccupiedSlots<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.bitmap.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + bit)
    }
}

impl std::iter::FusedIterator for OccupiedSlots<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::alex::params::AlexParams;
    use proptest::prelude::*;

    fn derived() -> Derived {
        AlexParams::default().derive(16).unwrap()
    }

    proptest! {
        #[test]
        fn inserts_and_removes_keep_the_layout(
            start in proptest::collection::btree_set(0u64..5000, 0..60),
            ops in proptest::collection::vec((any::<bool>(), 0u64..5000), 0..300),
        ) {
            let d = derived();
            let keys: Vec<u64> = start.iter().copied().collect();
            let mut node = DataNode::build(&keys, keys.iter().map(|k| k * 2), None, 0.7, &d);
            let mut reference: std::collections::BTreeMap<u64, u64> =
                keys.iter().map(|&k| (k, k * 2)).collect();
            node.check();
            for (insert, k) in ops {
                if insert {
                    match node.insert(k, k + 1, &d) {
                        Ok(old) => prop_assert_eq!(old, reference.insert(k, k + 1)),
                        Err((_, v)) => {
                            node.resize(d.min_density, true, false, false, &d);
                            prop_assert_eq!(node.insert(k, v, &d).unwrap(), reference.insert(k, v));
                        }
                    }
                } else {
                    prop_assert_eq!(node.remove(&k, &d), reference.remove(&k));
                }
                node.check();
                prop_assert_eq!(node.find(&k).map(|i| node.values[i]), reference.get(&k).copied());
                let want = reference.range(k..).next().map(|e| *e.0);
                prop_assert_eq!(node.seek(&k, false).map(|i| node.keys[i]), want);
                let want = reference.range(k + 1..).next().map(|e| *e.0);
                prop_assert_eq!(node.seek(&k, true).map(|i| node.keys[i]), want);
            }
        }
    }

    #[test]
    fn the_lookup_fields_share_the_first_cache_line() {
        assert_eq!(size_of::<DataNode<u64, u64>>() % 64, 0);
        assert_eq!(std::mem::offset_of!(DataNode<u64, u64>, values) + 16, 56);
    }

    #[test]
    fn the_search_from_any_slot_agrees_with_a_partition_point() {
        let d = derived();
        // Duplicated gap keys, long runs both ways, and trailing K::MAX gaps.
        let keys: Vec<u64> = (0..300u64).map(|i| i * i / 7 + 3).collect();
        let node = DataNode::build(&keys, keys.iter().copied(), None, 0.5, &d);
        let slots = &node.keys[..];
        let mut probes: Vec<u64> = keys.iter().flat_map(|&k| [k - 1, k, k + 1]).collect();
        probes.extend([0, u64::MAX - 1, u64::MAX]);
        for from in 0..slots.len() {
            for &key in &probes {
                let want = slots.partition_point(|k| *k <= key);
                assert_eq!(
                    node.upper_bound_from(from, &key).0,
                    want,
                    "from {from} key {key}"
                );
            }
        }
        let full = DataNode::build(&[1u64, u64::MAX], [1u64, 2], None, 0.5, &d);
        for from in 0..full.capacity() {
            assert_eq!(full.upper_bound_from(from, &u64::MAX).0, full.capacity());
        }
    }

    #[test]
    fn the_largest_key_is_found_beside_trailing_gaps() {
        let d = derived();
        let keys = [1u64, 5, u64::MAX];
        let mut node = DataNode::build(&keys, [1u64, 2, 3], None, 0.5, &d);
        node.check();
        assert_eq!(node.find(&u64::MAX).map(|i| node.values[i]), Some(3));
        assert_eq!(node.remove(&u64::MAX, &d), Some(3));
        assert_eq!(node.find(&u64::MAX), None);
        node.check();
    }

    #[test]
    fn occupied_slots_are_the_set_bits_in_order() {
        let bitmaps: [&[u64]; 8] = [
            &[],
            &[0],
            &[0, 0],
            &[0, 1 << 63],
            &[0, 0, 5],
            &[u64::MAX],
            &[1 << 63, 0, 1],
            &[0b1011, u64::MAX, 0, 1 << 40],
        ];
        for bitmap in bitmaps {
            let want: Vec<usize> = (0..64 * bitmap.len())
                .filter(|&i| bitmap[i / 64] >> (i % 64) & 1 == 1)
                .collect();
            let mut slots = occupied_slots(bitmap);
            let got: Vec<usize> = slots.by_ref().collect();
            assert_eq!(got, want, "{bitmap:?}");
            assert_eq!(slots.next(), None);
            assert_eq!(slots.next(), None);
        }
    }

    /// Both sides of [`SHORT_ROTATION`], with values that own memory.
    #[test]
    fn shifts_move_every_entry_one_slot_at_any_length() {
        for n in 0..=2 * SHORT_ROTATION + 3 {
            let keys: Vec<u64> = (0..n as u64).collect();
            let values: Vec<String> = keys.iter().map(|k| format!("v{k}")).collect();

            let (mut k, mut v) = (keys.clone(), values.clone());
            shift_right(&mut k, &mut v);
            if n > 0 {
                assert_eq!(k[1..], keys[..n - 1], "keys right, n = {n}");
                assert_eq!(v[1..], values[..n - 1], "values right, n = {n}");
            }

            let (mut k, mut v) = (keys.clone(), values.clone());
            shift_left(&mut k, &mut v);
            if n > 0 {
                assert_eq!(k[..n - 1], keys[1..], "keys left, n = {n}");
                assert_eq!(v[..n - 1], values[1..], "values left, n = {n}");
            }
        }
    }
}
