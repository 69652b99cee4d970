//! [`SortedRuns`]: a compact dynamic stage for memory-bound hybrid indexes.
//!
//! Paper 002 §9.1 puts a B+-tree in the dynamic stage. Under a memory budget (§9.2: the budget
//! covers the dynamic stage and the models), what matters is how many entries fit: every
//! merge rewrites the whole static stage, so the merge cost per insert is the static size over
//! the dynamic stage's capacity. A B+-tree filled by random inserts runs about 70% full, its
//! arena grows by doubling, and its slots pad a `u64` key and a `u32` slot to 16 bytes: about
//! 48 bytes per entry as measured by `memory_bytes` on 10M lognormal keys. This map holds its
//! entries in two sorted struct-of-arrays runs, keys beside slots (12 bytes per `u64` entry,
//! capacities sized exactly):
//!
//! - the main run, holding almost everything;
//! - a small sorted buffer of at most `max(512, sqrt(n))` entries that takes new keys by
//!   insertion (a shift of at most that many entries). When full it is merged into the main
//!   run, which is rebuilt at its exact new size: `O(n / buffer)` moves per insert, amortized,
//!   which is about 60 at 30K entries and 1000 at 1M.
//!
//! Lookups binary-search both runs; an update of a present key overwrites its slot in place.
//! During a merge of the buffer, the old and the new main run exist together for a moment
//! (transient, not counted by `size_in_bytes`).

use std::ops::Bound;

use crate::error::{Error, Result};
use crate::key::Key;

use super::dynamic::{DynamicMap, Slot};

/// Smallest capacity of the insertion buffer.
const MIN_BUFFER: usize = 512;

/// Two sorted runs of keys and slots (module docs).
#[derive(Debug, Default)]
pub struct SortedRuns<K> {
    keys: Vec<K>,
    slots: Vec<Slot>,
    buffer_keys: Vec<K>,
    buffer_slots: Vec<Slot>,
}

/// Position of `key` in `keys` (sorted): `Ok` when present, `Err` with its insertion point.
fn find<K: Key>(keys: &[K], key: &K) -> std::result::Result<usize, usize> {
    keys.binary_search_by(|k| k.key_cmp(key))
}

impl<K: Key> SortedRuns<K> {
    fn buffer_capacity(&self) -> usize {
        MIN_BUFFER.max(self.keys.len().isqrt())
    }

    /// Merges the buffer into the main run, rebuilt at its exact size.
    fn merge_buffer(&mut self) {
        let n = self.keys.len() + self.buffer_keys.len();
        let mut keys = Vec::with_capacity(n);
        let mut slots = Vec::with_capacity(n);
        let (mut i, mut j) = (0, 0);
        while i < self.keys.len() || j < self.buffer_keys.len() {
            let take_main = j == self.buffer_keys.len()
                || (i < self.keys.len() && self.keys[i].key_lt(&self.buffer_keys[j]));
            if take_main {
                keys.push(self.keys[i]);
                slots.push(self.slots[i]);
                i += 1;
            } else {
                keys.push(self.buffer_keys[j]);
                slots.push(self.buffer_slots[j]);
                j += 1;
            }
        }
        self.keys = keys;
        self.slots = slots;
        self.buffer_keys.clear();
        self.buffer_slots.clear();
    }

    /// The first position in `keys` within `from`.
    fn start(keys: &[K], from: &Bound<K>) -> usize {
        match from {
            Bound::Included(k) => keys.partition_point(|x| x.key_lt(k)),
            Bound::Excluded(k) => keys.partition_point(|x| !k.key_lt(x)),
            Bound::Unbounded => 0,
        }
    }
}

impl<K: Key> DynamicMap<K> for SortedRuns<K> {
    fn empty() -> Self {
        SortedRuns {
            keys: Vec::new(),
            slots: Vec::new(),
            buffer_keys: Vec::new(),
            buffer_slots: Vec::new(),
        }
    }

    fn put(&mut self, key: K, slot: Slot) -> Result<Option<Slot>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        if let Ok(i) = find(&self.keys, &key) {
            return Ok(Some(std::mem::replace(&mut self.slots[i], slot)));
        }
        match find(&self.buffer_keys, &key) {
            Ok(i) => Ok(Some(std::mem::replace(&mut self.buffer_slots[i], slot))),
            Err(i) => {
                if self.buffer_keys.capacity() == 0 {
                    let capacity = self.buffer_capacity();
                    self.buffer_keys.reserve_exact(capacity);
                    self.buffer_slots.reserve_exact(capacity);
                }
                self.buffer_keys.insert(i, key);
                self.buffer_slots.insert(i, slot);
                if self.buffer_keys.len() >= self.buffer_capacity() {
                    self.merge_buffer();
                }
                Ok(None)
            }
        }
    }

    fn slot(&self, key: &K) -> Option<Slot> {
        if let Ok(i) = find(&self.keys, key) {
            return Some(self.slots[i]);
        }
        find(&self.buffer_keys, key)
            .ok()
            .map(|i| self.buffer_slots[i])
    }

    fn collect(&self, from: Bound<K>, max: usize, out: &mut Vec<(K, Slot)>) {
        let mut i = Self::start(&self.keys, &from);
        let mut j = Self::start(&self.buffer_keys, &from);
        let mut taken = 0;
        while taken < max && (i < self.keys.len() || j < self.buffer_keys.len()) {
            let take_main = j == self.buffer_keys.len()
                || (i < self.keys.len() && self.keys[i].key_lt(&self.buffer_keys[j]));
            if take_main {
                out.push((self.keys[i], self.slots[i]));
                i += 1;
            } else {
                out.push((self.buffer_keys[j], self.buffer_slots[j]));
                j += 1;
            }
            taken += 1;
        }
    }

    fn len(&self) -> usize {
        self.keys.len() + self.buffer_keys.len()
    }

    fn size_in_bytes(&self) -> usize {
        let per_entry = std::mem::size_of::<K>() + std::mem::size_of::<Slot>();
        std::mem::size_of::<Self>()
            + (self.keys.capacity().max(self.slots.capacity())
                + self
                    .buffer_keys
                    .capacity()
                    .max(self.buffer_slots.capacity()))
                * per_entry
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn behaves_like_a_btreemap(ops in proptest::collection::vec((0u64..3000, 0u32..100), 0..3000),
                                   from in 0u64..3000, max in 0usize..200) {
            let mut runs = SortedRuns::<u64>::empty();
            let mut reference = BTreeMap::new();
            for (k, s) in &ops {
                prop_assert_eq!(runs.put(*k, *s).unwrap(), reference.insert(*k, *s));
            }
            prop_assert_eq!(runs.len(), reference.len());
            for k in 0..3000u64 {
                prop_assert_eq!(runs.slot(&k), reference.get(&k).copied());
            }
            for bound in [Bound::Included(from), Bound::Excluded(from), Bound::Unbounded] {
                let mut got = Vec::new();
                runs.collect(bound, max, &mut got);
                let want: Vec<(u64, u32)> = reference
                    .range((bound, Bound::Unbounded))
                    .take(max)
                    .map(|(k, s)| (*k, *s))
                    .collect();
                prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn twelve_bytes_per_u64_entry_once_merged() {
        let mut runs = SortedRuns::<u64>::empty();
        for k in 0..100_000u64 {
            runs.put(k.wrapping_mul(0x9E37_79B9_7F4A_7C15), k as u32)
                .unwrap();
        }
        let per_entry = runs.size_in_bytes() as f64 / runs.len() as f64;
        assert!(per_entry < 12.5, "{per_entry} bytes per entry");
        assert!(matches!(
            SortedRuns::<f64>::empty().put(f64::NAN, 1),
            Err(Error::InvalidKey { .. })
        ));
    }
}
