//! [`KeyMap`]: an updatable map from `u64` keys to `u64` values behind one object-safe trait,
//! so that a map can be chosen by name at run time ([`crate::mem::MapSpec`]).
//!
//! Paper 001 §III runs every index the same way: a volatile index from an 8-byte key to the
//! offset of its record. The store's `log` engine and the benchmarks hold their index as a
//! `Box<dyn KeyMap>`; every [`OrderedMap<u64, u64>`] is one through the blanket impl, so an index
//! is written once, generically, and reached by name.

use crate::error::Result;
use crate::map::OrderedMap;

/// An updatable ordered map from `u64` to `u64`, object-safe. See the module docs.
pub trait KeyMap: Send + Sync {
    /// The value stored under `key`.
    fn get(&self, key: u64) -> Option<u64>;

    /// Stores `value` under `key`, returning the value it replaces (an update, not an error).
    fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>>;

    /// Removes `key`, returning its value (`None`: it was absent, nothing changed).
    fn remove(&mut self, key: u64) -> Option<u64>;

    /// The first entry whose key is `>= key`.
    fn lower_bound(&self, key: u64) -> Option<(u64, u64)>;

    /// Appends to `out` the entries with keys `>= from`, in key order, at most `limit` of them.
    fn scan(&self, from: u64, limit: usize, out: &mut Vec<(u64, u64)>);

    /// Number of entries.
    fn len(&self) -> usize;

    /// True when the map holds no entry.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the map holds in memory.
    fn size_in_bytes(&self) -> usize;

    /// False for a map without key order (the hash baseline): its `lower_bound` and `scan` are
    /// still correct but cost a pass over every entry, so callers that need order (scans, the
    /// lookups of absent keys) refuse such a map up front instead of timing that pass.
    fn ordered(&self) -> bool {
        true
    }
}

impl<M: OrderedMap<u64, u64> + Send + Sync> KeyMap for M {
    #[inline]
    fn get(&self, key: u64) -> Option<u64> {
        OrderedMap::get(self, &key).copied()
    }

    fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>> {
        OrderedMap::insert(self, key, value)
    }

    fn remove(&mut self, key: u64) -> Option<u64> {
        OrderedMap::remove(self, &key)
    }

    #[inline]
    fn lower_bound(&self, key: u64) -> Option<(u64, u64)> {
        OrderedMap::lower_bound(self, &key).map(|(k, v)| (*k, *v))
    }

    fn scan(&self, from: u64, limit: usize, out: &mut Vec<(u64, u64)>) {
        out.extend(
            OrderedMap::range(self, from..)
                .take(limit)
                .map(|(k, v)| (*k, *v)),
        );
    }

    fn len(&self) -> usize {
        OrderedMap::len(self)
    }

    fn size_in_bytes(&self) -> usize {
        OrderedMap::size_in_bytes(self)
    }
}
