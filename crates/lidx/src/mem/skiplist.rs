//! [`SkipListMap`]: the skip-list baseline of paper 001 §III-A1 (the evaluated "Skiplist"), a
//! concurrent lock-free skip list from `crossbeam-skiplist` (`SkipMap`) behind
//! [`OrderedMap`] and [`BulkLoad`], registered in `MapSpec` as `skiplist`.
//!
//! Keys are ordered by [`Key::key_cmp`] through the [`ByKeyOrder`] newtype (an `f64` is not
//! `Ord`). The list itself is the crate's; this file only adapts it.
//!
//! `OrderedMap` returns references (`get -> Option<&V>`), while the crate hands out entries that
//! keep their node alive only while they exist. A node stays alive as long as it is linked in
//! the list, and only `insert` and `remove`, which take `&mut self`, unlink nodes; so a
//! reference into a linked node is valid for as long as the map is borrowed. That is the
//! `SAFETY` of the one `unsafe` block (`held`); the trait's shape requires it.

use std::cmp::Ordering;
use std::ops::{Bound, RangeBounds};

use crossbeam_skiplist::map::{Entry, Range};
use crossbeam_skiplist::SkipMap;

use crate::error::{Error, Result};
use crate::key::{check_next, Key};
use crate::map::{BulkLoad, OrderedMap};

/// A key ordered by [`Key::key_cmp`], so that any [`Key`] is `Ord`.
#[derive(Debug, Clone, Copy)]
pub struct ByKeyOrder<K>(pub K);

impl<K: Key> PartialEq for ByKeyOrder<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0.key_cmp(&other.0).is_eq()
    }
}

impl<K: Key> Eq for ByKeyOrder<K> {}

impl<K: Key> PartialOrd for ByKeyOrder<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Key> Ord for ByKeyOrder<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key_cmp(&other.0)
    }
}

/// `crossbeam-skiplist`'s `SkipMap` as an ordered map. See the module docs.
pub struct SkipListMap<K: Key, V> {
    list: SkipMap<ByKeyOrder<K>, V>,
}

impl<K: Key, V> std::fmt::Debug for SkipListMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkipListMap")
            .field("len", &self.list.len())
            .finish()
    }
}

/// The key and value of `entry`, for as long as the map is borrowed.
fn held<'a, K: Key, V>(entry: &Entry<'a, ByKeyOrder<K>, V>) -> (&'a K, &'a V) {
    // SAFETY: `entry` is a node linked in the list borrowed for `'a` (entries come from
    // `&'a self` lookups). Nodes are unlinked only by `insert` and `remove`, which need
    // `&mut self` and so cannot run during `'a`; a linked node is owned by the list and not
    // freed, so its key and value stay in place, unchanged, for `'a`.
    unsafe {
        (
            &*(&entry.key().0 as *const K),
            &*(entry.value() as *const V),
        )
    }
}

impl<K: Key, V: Clone + Send + 'static> SkipListMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        SkipListMap {
            list: SkipMap::new(),
        }
    }
}

impl<K: Key, V: Clone + Send + 'static> Default for SkipListMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bounds of a range, as the list's keys.
type Bounds<K> = (Bound<ByKeyOrder<K>>, Bound<ByKeyOrder<K>>);

/// The list's own range iterator over our bounds.
type ListRange<'a, K, V> = Range<'a, ByKeyOrder<K>, Bounds<K>, ByKeyOrder<K>, V>;

/// The iterator of [`SkipListMap::range`].
pub struct SkipListRange<'a, K: Key, V> {
    inner: Option<ListRange<'a, K, V>>,
}

impl<'a, K: Key, V: Send + 'static> Iterator for SkipListRange<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.as_mut()?.next().map(|e| held(&e))
    }
}

/// True when no key lies in `(start, end)`: start after end, or equal with one excluded.
fn inverted<K: Key>(start: &Bound<ByKeyOrder<K>>, end: &Bound<ByKeyOrder<K>>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => {
            s >= e
        }
        _ => false,
    }
}

impl<K: Key, V: Clone + Send + 'static> OrderedMap<K, V> for SkipListMap<K, V> {
    type Range<'a>
        = SkipListRange<'a, K, V>
    where
        Self: 'a,
        K: 'a,
        V: 'a;

    fn get(&self, key: &K) -> Option<&V> {
        self.list.get(&ByKeyOrder(*key)).map(|e| held(&e).1)
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        let key = ByKeyOrder(key);
        let previous = self.list.get(&key).map(|e| e.value().clone());
        self.list.insert(key, value);
        Ok(previous)
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        self.list
            .remove(&ByKeyOrder(*key))
            .map(|e| e.value().clone())
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Self::Range<'_> {
        let wrap = |b: Bound<&K>| b.map(|k| ByKeyOrder(*k));
        let bounds = (wrap(range.start_bound()), wrap(range.end_bound()));
        SkipListRange {
            inner: (!inverted(&bounds.0, &bounds.1)).then(|| self.list.range(bounds)),
        }
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        self.list
            .lower_bound(Bound::Included(&ByKeyOrder(*key)))
            .map(|e| held(&e))
    }

    fn len(&self) -> usize {
        self.list.len()
    }

    /// An estimate: key, value, and a node header of a reference count, a height and about
    /// 4/3 tower pointers (the crate does not report its allocation).
    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.list.len() * (K::SIZE + std::mem::size_of::<V>() + 24)
    }
}

impl<K: Key, V: Clone + Send + 'static> BulkLoad<K, V> for SkipListMap<K, V> {
    type Params = ();

    fn load_sorted(entries: Vec<(K, V)>, _: &()) -> Result<Self> {
        for (i, (k, _)) in entries.iter().enumerate() {
            check_next(i, i.checked_sub(1).map(|p| &entries[p].0), k, true)?;
        }
        let map = SkipListMap::new();
        for (k, v) in entries {
            map.list.insert(ByKeyOrder(k), v);
        }
        Ok(map)
    }
}
