//! [`HashKeyMap`]: the hash-table baseline of paper 001 (its CCEH line, §III: point lookups
//! only), `hashbrown`'s `HashMap` with its default `foldhash` hasher, implementing
//! [`KeyMap`] directly (not `OrderedMap`: it has no key order), registered in `MapSpec` as
//! `hash`.
//!
//! [`KeyMap::ordered`] is false: `lower_bound` and `scan` are correct but pass over every
//! entry, so callers that need order refuse the map up front. The bulk load refuses unsorted
//! or repeated keys like every other map's, although a hash table would not need the order.

use hashbrown::HashMap;

use crate::error::Result;
use crate::key::check_next;
use crate::mem::key_map::KeyMap;

/// A hash map from `u64` to `u64`. See the module docs.
#[derive(Debug, Default, Clone)]
pub struct HashKeyMap {
    map: HashMap<u64, u64>,
}

impl HashKeyMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map holding `entries`, which must be in strictly increasing key order
    /// ([`crate::Error::OutOfOrder`], [`crate::Error::DuplicateKey`] otherwise).
    pub fn load_sorted(entries: Vec<(u64, u64)>) -> Result<Self> {
        for (i, (k, _)) in entries.iter().enumerate() {
            check_next(i, i.checked_sub(1).map(|p| &entries[p].0), k, true)?;
        }
        Ok(HashKeyMap {
            map: entries.into_iter().collect(),
        })
    }
}

impl KeyMap for HashKeyMap {
    #[inline]
    fn get(&self, key: u64) -> Option<u64> {
        self.map.get(&key).copied()
    }

    fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>> {
        Ok(self.map.insert(key, value))
    }

    fn remove(&mut self, key: u64) -> Option<u64> {
        self.map.remove(&key)
    }

    /// A pass over every entry.
    fn lower_bound(&self, key: u64) -> Option<(u64, u64)> {
        self.map
            .iter()
            .filter(|(k, _)| **k >= key)
            .min_by_key(|(k, _)| **k)
            .map(|(k, v)| (*k, *v))
    }

    /// A pass over every entry, then a sort of those at or after `from`.
    fn scan(&self, from: u64, limit: usize, out: &mut Vec<(u64, u64)>) {
        let mut found: Vec<(u64, u64)> = self
            .map
            .iter()
            .filter(|(k, _)| **k >= from)
            .map(|(k, v)| (*k, *v))
            .collect();
        if found.len() > limit {
            found.select_nth_unstable(limit);
            found.truncate(limit);
        }
        found.sort_unstable();
        out.extend(found);
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    /// Buckets (key, value) and their control bytes.
    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.map.capacity() * (16 + 1)
    }

    fn ordered(&self) -> bool {
        false
    }
}
