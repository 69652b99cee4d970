//! [`Inplace`]: the FITing-tree's in-place insert strategy (paper 001 §II-B.1, "Inplace";
//! paper 003 §2: empty slots at the beginning and end of each segment).
//!
//! A segment's entries sit contiguously in a slot array with free slots at both ends: `reserve`
//! slots in all, half before and half after the entries when the segment is (re)built. An
//! insert finds its position by the model and a gallop, then shifts the entries on the shorter
//! side of it one slot toward that side's free slots, provided that side has one, else the
//! other way (paper 001 §IV-D: "all the keys between the current position and the first or
//! last key ... are moved one unit in the direction of the buffer"). With no free slot left at
//! either end the segment is full and the map re-segments it. A remove closes its hole by
//! shifting the shorter side back, returning the slot to that end.
//!
//! The paper reserves `eps` slots at each end; we make the reserve its own parameter (paper 001
//! §IV-D, Fig. 18 (a), varies it from 128 to 1024) and split it between the ends, so that the
//! in-place and buffer strategies compare at equal reserved space.

use std::ops::Bound;

use crate::key::Key;
use crate::mem::fiting_tree::strategy::{
    model_lower_bound, start_position, Insert, InsertStrategy,
};
use crate::model::linear::LinearModel;

/// A segment with free slots at both ends. See the module docs.
pub struct Inplace<K, V> {
    /// Slots; only `lo..hi` hold entries.
    keys: Vec<K>,
    /// Parallel to `keys`: `Some` exactly in `lo..hi`.
    values: Vec<Option<V>>,
    lo: usize,
    hi: usize,
    model: LinearModel,
    /// Bound on the model's error now: `eps`, plus one per insert or remove since the build.
    err: usize,
}

impl<K: Key, V> Inplace<K, V> {
    fn live(&self) -> &[K] {
        &self.keys[self.lo..self.hi]
    }

    /// Free slots before and after the entries.
    pub fn free_slots(&self) -> (usize, usize) {
        (self.lo, self.keys.len() - self.hi)
    }
}

impl<K: Key, V> InsertStrategy<K, V> for Inplace<K, V> {
    type Cursor = usize;

    fn build(keys: Vec<K>, values: Vec<V>, model: LinearModel, eps: usize, reserve: usize) -> Self {
        let before = reserve / 2;
        let after = reserve - before;
        let n = keys.len();
        let mut slots = Vec::with_capacity(n + reserve);
        slots.resize(before, K::MIN);
        slots.extend(keys);
        slots.resize(n + reserve, K::MAX);
        let mut vals = Vec::with_capacity(n + reserve);
        vals.resize_with(before, || None);
        vals.extend(values.into_iter().map(Some));
        vals.resize_with(n + reserve, || None);
        debug_assert_eq!(slots.len(), before + n + after);
        Inplace {
            keys: slots,
            values: vals,
            lo: before,
            hi: before + n,
            model,
            err: eps,
        }
    }

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let at = model_lower_bound(&self.model, self.live(), key, self.err);
        let slot = self.lo + at;
        if slot < self.hi && self.keys[slot].key_cmp(key).is_eq() {
            self.values[slot].as_ref()
        } else {
            None
        }
    }

    fn insert(&mut self, key: K, value: V) -> Insert<V> {
        let n = self.hi - self.lo;
        let at = model_lower_bound(&self.model, self.live(), &key, self.err);
        let slot = self.lo + at;
        if at < n && self.keys[slot].key_cmp(&key).is_eq() {
            let old = self.values[slot].replace(value).expect("entries are live");
            return Insert::Replaced(old);
        }
        let (left_free, right_free) = self.free_slots();
        if left_free > 0 && (right_free == 0 || at < n - at) {
            // Entries lo..slot move one slot left; the new one goes just before slot.
            self.keys.copy_within(self.lo..slot, self.lo - 1);
            self.values[self.lo - 1..slot].rotate_left(1);
            self.lo -= 1;
            self.keys[slot - 1] = key;
            self.values[slot - 1] = Some(value);
        } else if right_free > 0 {
            // Entries slot..hi move one slot right.
            self.keys.copy_within(slot..self.hi, slot + 1);
            self.values[slot..=self.hi].rotate_right(1);
            self.hi += 1;
            self.keys[slot] = key;
            self.values[slot] = Some(value);
        } else {
            return Insert::Full(value);
        }
        self.err += 1;
        Insert::Added
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let n = self.hi - self.lo;
        let at = model_lower_bound(&self.model, self.live(), key, self.err);
        let slot = self.lo + at;
        if at == n || !self.keys[slot].key_cmp(key).is_eq() {
            return None;
        }
        let old = self.values[slot].take();
        if at < n - 1 - at {
            // Entries lo..slot move one slot right, freeing slot lo.
            self.keys.copy_within(self.lo..slot, self.lo + 1);
            self.values[self.lo..=slot].rotate_right(1);
            self.lo += 1;
        } else {
            // Entries slot+1..hi move one slot left, freeing slot hi - 1.
            self.keys.copy_within(slot + 1..self.hi, slot);
            self.values[slot..self.hi].rotate_left(1);
            self.hi -= 1;
        }
        self.err += 1;
        old
    }

    fn len(&self) -> usize {
        self.hi - self.lo
    }

    fn into_sorted(self) -> (Vec<K>, Vec<V>) {
        let (lo, hi) = (self.lo, self.hi);
        let keys = self.keys[lo..hi].to_vec();
        let values = self
            .values
            .into_iter()
            .skip(lo)
            .take(hi - lo)
            .map(|v| v.expect("entries are live"))
            .collect();
        (keys, values)
    }

    fn heap_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<K>()
            + self.values.capacity() * std::mem::size_of::<Option<V>>()
    }

    fn seek(&self, start: Bound<&K>) -> usize {
        self.lo + start_position(&self.model, self.live(), start, self.err)
    }

    #[inline]
    fn next<'a>(&'a self, cursor: &mut usize) -> Option<(&'a K, &'a V)> {
        let at = *cursor;
        if at >= self.hi {
            return None;
        }
        *cursor += 1;
        Some((&self.keys[at], self.values[at].as_ref()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(seg: &Inplace<u32, u32>, want: &std::collections::BTreeMap<u32, u32>) {
        assert!(seg.keys[seg.lo..seg.hi].windows(2).all(|w| w[0] < w[1]));
        assert!(seg
            .values
            .iter()
            .enumerate()
            .all(|(i, v)| v.is_some() == (seg.lo..seg.hi).contains(&i)));
        let mut c = seg.seek(Bound::Unbounded);
        let got: Vec<(u32, u32)> =
            std::iter::from_fn(|| seg.next(&mut c).map(|(k, v)| (*k, *v))).collect();
        assert_eq!(got, want.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
    }

    proptest! {
        /// Slots outside `lo..hi` stay empty, entries sorted, and an insert is refused exactly
        /// when both ends are used up.
        #[test]
        fn shifts_keep_slots_consistent(
            initial in proptest::collection::btree_set(0u32..500, 0..40),
            ops in proptest::collection::vec((any::<bool>(), 0u32..500), 0..120),
            reserve in 0usize..9,
        ) {
            let keys: Vec<u32> = initial.iter().copied().collect();
            let model = LinearModel { x0: 0, slope: 0.1, intercept: 0.0 };
            let mut seg = Inplace::build(keys.clone(), keys.clone(), model, 0, reserve);
            let mut want: std::collections::BTreeMap<u32, u32> = keys.iter().map(|k| (*k, *k)).collect();
            for (insert, k) in ops {
                if insert {
                    let full = seg.free_slots() == (0, 0);
                    match seg.insert(k, k + 1) {
                        Insert::Replaced(old) => prop_assert_eq!(Some(old), want.insert(k, k + 1)),
                        Insert::Added => prop_assert_eq!(want.insert(k, k + 1), None),
                        Insert::Full(v) => {
                            prop_assert!(full && !want.contains_key(&k));
                            prop_assert_eq!(v, k + 1);
                        }
                    }
                } else {
                    prop_assert_eq!(seg.remove(&k), want.remove(&k));
                }
                check(&seg, &want);
            }
        }
    }
}
