//! The [`OrderedMap`] trait: what every owned ordered map in lidx offers.
//!
//! The operations, named alike in every map of lidx: an ordered map owns key-value pairs and
//! answers `get`, `range` (an iterator in key order), `insert`, `remove`, `len` and
//! `size_in_bytes`. We add `lower_bound`, the first entry at or after a key, which is what a
//! join or a scan starts from. Keys are compared with [`Key::key_cmp`] (an `f64` is not `Ord`),
//! and ranges are given with the standard [`RangeBounds`], half-open (`a..b`) being the norm.
//!
//! One conformance suite (`tests/map_conformance.rs`) runs every implementation against
//! `std::collections::BTreeMap` with the same seeds.

use std::ops::RangeBounds;

use crate::key::Key;

/// An owned map from keys to values, iterated in key order.
///
/// Keys must be valid ([`Key::invalid_reason`] is `None`): builders and `insert` refuse a NaN
/// with [`crate::Error::InvalidKey`] and leave the map unchanged.
pub trait OrderedMap<K: Key, V> {
    /// Iterator returned by [`OrderedMap::range`]: entries in ascending key order.
    type Range<'a>: Iterator<Item = (&'a K, &'a V)>
    where
        Self: 'a,
        K: 'a,
        V: 'a;

    /// The value stored under `key`.
    fn get(&self, key: &K) -> Option<&V>;

    /// Stores `value` under `key`, returning the value it replaces; an invalid key (NaN) is
    /// [`crate::Error::InvalidKey`].
    fn insert(&mut self, key: K, value: V) -> crate::Result<Option<V>>;

    /// Removes `key`, returning its value.
    fn remove(&mut self, key: &K) -> Option<V>;

    /// The entries whose keys lie in `range`, in key order. A range whose start is after its
    /// end is empty.
    fn range<R: RangeBounds<K>>(&self, range: R) -> Self::Range<'_>;

    /// The first entry whose key is `>= key`.
    fn lower_bound(&self, key: &K) -> Option<(&K, &V)>;

    /// Number of entries.
    fn len(&self) -> usize;

    /// True when the map holds no entry.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the map holds in memory: nodes, keys and values (not what values point to).
    fn size_in_bytes(&self) -> usize;
}

/// A map built at once from entries in strictly increasing key order: what a bulk load is for
/// every updatable index (paper 001 §II: each is measured bulk-loaded, then updated).
///
/// Errors: [`crate::Error::OutOfOrder`] for a descent, [`crate::Error::DuplicateKey`] for a
/// repeated key, [`crate::Error::InvalidKey`] for a NaN, [`crate::Error::InvalidParameter`] for
/// bad `params`; nothing is built then.
pub trait BulkLoad<K: Key, V>: OrderedMap<K, V> + Sized {
    /// The map's tuning parameters.
    type Params: Clone + Default + std::fmt::Debug;

    /// Builds the map from `entries`.
    fn load_sorted(entries: Vec<(K, V)>, params: &Self::Params) -> crate::Result<Self>;
}
