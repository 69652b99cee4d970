//! [`Buffer`]: the FITing-tree's delta insert strategy (paper 001 §II-B.1, "Buffer", the
//! buffer-based offsite insertion; paper 003 §2, *Delta Insert Strategy*).
//!
//! A segment is its sorted entries as last retrained (the base) plus a sorted delta buffer of
//! at most `reserve` new keys. A new key goes into the buffer; when the buffer is full, the
//! next new key makes the map merge base and buffer and re-segment them (a retrain). An insert
//! of a key the segment already holds updates it where it is, base or buffer, so no key is in
//! both and the buffer holds only new keys.
//!
//! Deletes, which the papers do not describe for this strategy: a key in the buffer is removed
//! from it; a key in the base is marked with a tombstone in its slot (`None`), so the base and
//! its model stay as trained. Lookups read a tombstone as absent, an insert of the key revives
//! the slot, and the next retrain drops it. The tombstone takes no buffer room, so removals
//! never trigger a retrain.

use std::ops::Bound;

use crate::key::Key;
use crate::mem::fiting_tree::strategy::{
    model_lower_bound, start_position, Insert, InsertStrategy,
};
use crate::model::linear::LinearModel;
use crate::search;

/// A segment with a sorted delta buffer. See the module docs.
pub struct Buffer<K, V> {
    keys: Vec<K>,
    /// Parallel to `keys`; `None` is a tombstone.
    values: Vec<Option<V>>,
    /// Entries of the base that are not tombstones.
    live: usize,
    model: LinearModel,
    /// The model's error bound; the base never moves, so it stays `eps`.
    eps: usize,
    delta_keys: Vec<K>,
    delta_values: Vec<V>,
    reserve: usize,
}

impl<K: Key, V> Buffer<K, V> {
    /// The base position of `key`, if the base has a slot (live or tombstone) for it.
    #[inline]
    fn in_base(&self, key: &K) -> Option<usize> {
        let at = model_lower_bound(&self.model, &self.keys, key, self.eps);
        (at < self.keys.len() && self.keys[at].key_cmp(key).is_eq()).then_some(at)
    }

    /// `Ok(position)` of `key` in the buffer, or `Err(where it would go)`.
    #[inline]
    fn in_delta(&self, key: &K) -> Result<usize, usize> {
        let at = search::branchless_binary(&self.delta_keys, *key);
        if at < self.delta_keys.len() && self.delta_keys[at].key_cmp(key).is_eq() {
            Ok(at)
        } else {
            Err(at)
        }
    }

    /// Keys in the delta buffer.
    pub fn buffered(&self) -> usize {
        self.delta_keys.len()
    }
}

/// A [`Buffer`] cursor: the next base position and the next buffer position.
#[derive(Debug, Clone, Copy)]
pub struct BufferCursor {
    base: usize,
    delta: usize,
}

impl<K: Key, V> InsertStrategy<K, V> for Buffer<K, V> {
    type Cursor = BufferCursor;

    fn build(keys: Vec<K>, values: Vec<V>, model: LinearModel, eps: usize, reserve: usize) -> Self {
        Buffer {
            live: keys.len(),
            keys,
            values: values.into_iter().map(Some).collect(),
            model,
            eps,
            delta_keys: Vec::with_capacity(reserve),
            delta_values: Vec::with_capacity(reserve),
            reserve,
        }
    }

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        match self.in_base(key) {
            Some(at) => self.values[at].as_ref(),
            None => self.in_delta(key).ok().map(|at| &self.delta_values[at]),
        }
    }

    fn insert(&mut self, key: K, value: V) -> Insert<V> {
        if let Some(at) = self.in_base(&key) {
            return match self.values[at].replace(value) {
                Some(old) => Insert::Replaced(old),
                None => {
                    self.live += 1;
                    Insert::Added
                }
            };
        }
        match self.in_delta(&key) {
            Ok(at) => Insert::Replaced(std::mem::replace(&mut self.delta_values[at], value)),
            Err(_) if self.delta_keys.len() >= self.reserve => Insert::Full(value),
            Err(at) => {
                self.delta_keys.insert(at, key);
                self.delta_values.insert(at, value);
                Insert::Added
            }
        }
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        if let Some(at) = self.in_base(key) {
            let old = self.values[at].take()?;
            self.live -= 1;
            return Some(old);
        }
        let at = self.in_delta(key).ok()?;
        self.delta_keys.remove(at);
        Some(self.delta_values.remove(at))
    }

    fn len(&self) -> usize {
        self.live + self.delta_keys.len()
    }

    fn into_sorted(self) -> (Vec<K>, Vec<V>) {
        let n = self.live + self.delta_keys.len();
        let (mut keys, mut values) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut base = self
            .keys
            .into_iter()
            .zip(self.values)
            .filter_map(|(k, v)| Some((k, v?)))
            .peekable();
        let mut delta = self
            .delta_keys
            .into_iter()
            .zip(self.delta_values)
            .peekable();
        loop {
            let from_base = match (base.peek(), delta.peek()) {
                (Some(b), Some(d)) => b.0.key_lt(&d.0),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (k, v) = if from_base { base.next() } else { delta.next() }.expect("peeked");
            keys.push(k);
            values.push(v);
        }
        (keys, values)
    }

    fn heap_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<K>()
            + self.values.capacity() * std::mem::size_of::<Option<V>>()
            + self.delta_keys.capacity() * std::mem::size_of::<K>()
            + self.delta_values.capacity() * std::mem::size_of::<V>()
    }

    fn seek(&self, start: Bound<&K>) -> BufferCursor {
        let delta = match start {
            Bound::Unbounded => 0,
            Bound::Included(k) => self.in_delta(k).unwrap_or_else(|at| at),
            Bound::Excluded(k) => self.in_delta(k).map_or_else(|at| at, |at| at + 1),
        };
        BufferCursor {
            base: start_position(&self.model, &self.keys, start, self.eps),
            delta,
        }
    }

    #[inline]
    fn next<'a>(&'a self, cursor: &mut BufferCursor) -> Option<(&'a K, &'a V)> {
        while cursor.base < self.keys.len() && self.values[cursor.base].is_none() {
            cursor.base += 1;
        }
        let base = self.keys.get(cursor.base);
        let delta = self.delta_keys.get(cursor.delta);
        let from_base = match (base, delta) {
            (Some(b), Some(d)) => b.key_lt(d),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if from_base {
            let at = cursor.base;
            cursor.base += 1;
            Some((&self.keys[at], self.values[at].as_ref()?))
        } else {
            let at = cursor.delta;
            cursor.delta += 1;
            Some((&self.delta_keys[at], &self.delta_values[at]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Base and buffer stay disjoint and sorted, the buffer within its reserve, and the
        /// merged view equals the reference.
        #[test]
        fn base_and_buffer_stay_disjoint(
            initial in proptest::collection::btree_set(0u32..500, 0..40),
            ops in proptest::collection::vec((any::<bool>(), 0u32..500), 0..120),
            reserve in 0usize..9,
        ) {
            let keys: Vec<u32> = initial.iter().copied().collect();
            let model = LinearModel { x0: 0, slope: 0.1, intercept: 0.0 };
            let mut seg = Buffer::build(keys.clone(), keys.clone(), model, 0, reserve);
            let mut want: std::collections::BTreeMap<u32, u32> = keys.iter().map(|k| (*k, *k)).collect();
            for (insert, k) in ops {
                if insert {
                    match seg.insert(k, k + 1) {
                        Insert::Replaced(old) => prop_assert_eq!(Some(old), want.insert(k, k + 1)),
                        Insert::Added => prop_assert_eq!(want.insert(k, k + 1), None),
                        Insert::Full(_) => prop_assert!(seg.buffered() == reserve && !want.contains_key(&k)),
                    }
                } else {
                    prop_assert_eq!(seg.remove(&k), want.remove(&k));
                }
                prop_assert!(seg.delta_keys.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(seg.delta_keys.iter().all(|k| seg.in_base(k).is_none()));
                prop_assert_eq!(seg.len(), want.len());
                let mut c = seg.seek(Bound::Unbounded);
                let got: Vec<(u32, u32)> =
                    std::iter::from_fn(|| seg.next(&mut c).map(|(k, v)| (*k, *v))).collect();
                prop_assert_eq!(got, want.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
            }
        }
    }
}
