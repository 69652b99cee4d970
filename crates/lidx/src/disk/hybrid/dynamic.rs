//! The dynamic stage: an in-memory ordered map that takes every write (paper 002 §9.1, after
//! the hybrid-index framework of Zhang et al. SIGMOD 2016).
//!
//! The paper's dynamic stage is a B+-tree holding the newly inserted key-value pairs. Ours
//! holds `Option<payload>` per key, `None` being a tombstone: a delete must hide the key in the
//! static stage until the next merge drops both. The map itself is pluggable
//! ([`DynamicMap`]): lidx's in-memory [`BTree`] by default, or `std`'s `BTreeMap`
//! ([`StdMap`]). Payloads do not live in the map: it maps a key to a [`Slot`], the index of
//! its payload in one arena of fixed-size payloads, so the map's entries stay small and of
//! one size whatever the payload size, and an update overwrites its payload in place.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::map::OrderedMap;
use crate::mem::btree::{BTree, BTreeParams};

/// Where an entry's payload is in its stage's arena; `TOMBSTONE` for a delete.
pub(crate) type Slot = u32;

/// The slot of a tombstone.
pub(crate) const TOMBSTONE: Slot = Slot::MAX;

/// The ordered map of a dynamic stage: keys to `Slot`s.
pub trait DynamicMap<K: Key>: Send + Sync + 'static {
    /// An empty map.
    fn empty() -> Self
    where
        Self: Sized;

    /// Stores `slot` under `key`, returning the slot it replaces. `InvalidKey` for a NaN.
    fn put(&mut self, key: K, slot: Slot) -> Result<Option<Slot>>;

    /// The slot stored under `key`.
    fn slot(&self, key: &K) -> Option<Slot>;

    /// Appends to `out`, in key order, at most `max` entries whose keys are within `from`
    /// (`Included(k)`: `>= k`, `Excluded(k)`: `> k`, `Unbounded`: all).
    fn collect(&self, from: Bound<K>, max: usize, out: &mut Vec<(K, Slot)>);

    /// Number of entries.
    fn len(&self) -> usize;

    /// True when empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the map holds in memory.
    fn size_in_bytes(&self) -> usize;
}

impl<K: Key> DynamicMap<K> for BTree<K, Slot> {
    fn empty() -> Self {
        BTree::new(BTreeParams::default()).expect("the default node size is valid")
    }

    fn put(&mut self, key: K, slot: Slot) -> Result<Option<Slot>> {
        OrderedMap::insert(self, key, slot)
    }

    fn slot(&self, key: &K) -> Option<Slot> {
        OrderedMap::get(self, key).copied()
    }

    fn collect(&self, from: Bound<K>, max: usize, out: &mut Vec<(K, Slot)>) {
        let range = OrderedMap::range(self, (from, Bound::Unbounded));
        out.extend(range.take(max).map(|(k, s)| (*k, *s)));
    }

    fn len(&self) -> usize {
        OrderedMap::len(self)
    }

    fn size_in_bytes(&self) -> usize {
        OrderedMap::size_in_bytes(self)
    }
}

/// A key ordered by [`Key::key_cmp`], so that `std`'s `BTreeMap` can hold any [`Key`] (an
/// `f64` is not `Ord`; NaN is refused before it gets here).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrdKey<K>(pub K);

impl<K: Key> PartialEq for OrdKey<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0.key_cmp(&other.0) == Ordering::Equal
    }
}

impl<K: Key> Eq for OrdKey<K> {}

impl<K: Key> PartialOrd for OrdKey<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Key> Ord for OrdKey<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key_cmp(&other.0)
    }
}

/// `std::collections::BTreeMap` as a dynamic stage. Its memory is estimated, not measured:
/// `std` does not expose its nodes; we count nodes of 11 entries two-thirds full (the
/// average fill of random inserts) plus one parent pointer and lengths per node.
#[derive(Debug, Default)]
pub struct StdMap<K>(BTreeMap<OrdKey<K>, Slot>);

impl<K: Key> DynamicMap<K> for StdMap<K> {
    fn empty() -> Self {
        StdMap(BTreeMap::new())
    }

    fn put(&mut self, key: K, slot: Slot) -> Result<Option<Slot>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        Ok(self.0.insert(OrdKey(key), slot))
    }

    fn slot(&self, key: &K) -> Option<Slot> {
        self.0.get(&OrdKey(*key)).copied()
    }

    fn collect(&self, from: Bound<K>, max: usize, out: &mut Vec<(K, Slot)>) {
        let from = match from {
            Bound::Included(k) => Bound::Included(OrdKey(k)),
            Bound::Excluded(k) => Bound::Excluded(OrdKey(k)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let range = self.0.range((from, Bound::Unbounded));
        out.extend(range.take(max).map(|(k, s)| (k.0, *s)));
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn size_in_bytes(&self) -> usize {
        const CAPACITY: usize = 11;
        let node = 16 + CAPACITY * (std::mem::size_of::<K>() + std::mem::size_of::<Slot>());
        let nodes = (self.0.len() * 3).div_ceil(2 * CAPACITY);
        std::mem::size_of::<Self>() + nodes * node
    }
}

/// One dynamic stage: a map of slots and the arena of payloads they point into.
pub(crate) struct Stage<K, D> {
    map: D,
    arena: Vec<u8>,
    payload_size: usize,
    /// Slots handed out (the arena holds `slots * payload_size` bytes).
    slots: usize,
    live: usize,
    tombstones: usize,
    _key: std::marker::PhantomData<fn() -> K>,
}

/// A stage entry's value: a payload, or `None` for a tombstone.
pub(crate) type Entry<'a> = Option<&'a [u8]>;

impl<K: Key, D: DynamicMap<K>> Stage<K, D> {
    /// An empty stage of `payload_size`-byte payloads.
    pub(crate) fn new(payload_size: usize) -> Self {
        Stage {
            map: D::empty(),
            arena: Vec::new(),
            payload_size,
            slots: 0,
            live: 0,
            tombstones: 0,
            _key: std::marker::PhantomData,
        }
    }

    /// Stores `value` (a payload of `payload_size` bytes, or `None` for a tombstone) under
    /// `key`. `InvalidKey` for a NaN; the stage is unchanged on error.
    pub(crate) fn apply(&mut self, key: K, value: Entry<'_>) -> Result<()> {
        let old = self.map.slot(&key);
        match (old, value) {
            (Some(s), Some(p)) if s != TOMBSTONE => {
                let at = s as usize * self.payload_size;
                self.arena[at..at + self.payload_size].copy_from_slice(p);
            }
            (Some(s), None) if s == TOMBSTONE => {}
            (_, Some(p)) => {
                let slot = self.slots as Slot;
                self.map.put(key, slot)?;
                if self.arena.len() + p.len() > self.arena.capacity() {
                    // Grow by a quarter, not by doubling: under a memory budget the unused
                    // capacity counts, and the arena is most of a compact stage's bytes.
                    let grow = (self.arena.capacity() / 4).max(64 * p.len());
                    self.arena.reserve_exact(grow);
                }
                self.arena.extend_from_slice(p);
                self.slots += 1;
                self.live += 1;
                if old.is_some() {
                    self.tombstones -= 1;
                }
            }
            (_, None) => {
                self.map.put(key, TOMBSTONE)?;
                self.tombstones += 1;
                if old.is_some() {
                    self.live -= 1;
                }
            }
        }
        Ok(())
    }

    /// The value of `key`: `None` when the stage does not know it, `Some(None)` for a
    /// tombstone.
    pub(crate) fn get(&self, key: &K) -> Option<Entry<'_>> {
        self.map.slot(key).map(|s| self.payload(s))
    }

    fn payload(&self, slot: Slot) -> Entry<'_> {
        (slot != TOMBSTONE).then(|| {
            let at = slot as usize * self.payload_size;
            &self.arena[at..at + self.payload_size]
        })
    }

    /// Appends at most `max` entries from `from` on to `keys`, `present` and `payloads` (one
    /// `payload_size` chunk per entry, zeros for a tombstone).
    pub(crate) fn collect(
        &self,
        from: Bound<K>,
        max: usize,
        keys: &mut Vec<K>,
        present: &mut Vec<bool>,
        payloads: &mut Vec<u8>,
    ) {
        let mut entries = Vec::with_capacity(max.min(self.map.len()));
        self.map.collect(from, max, &mut entries);
        for (k, s) in entries {
            keys.push(k);
            match self.payload(s) {
                Some(p) => {
                    present.push(true);
                    payloads.extend_from_slice(p);
                }
                None => {
                    present.push(false);
                    payloads.resize(payloads.len() + self.payload_size, 0);
                }
            }
        }
    }

    /// Every entry in key order, for a merge.
    pub(crate) fn entries(&self) -> Vec<(K, Slot)> {
        let mut out = Vec::with_capacity(self.map.len());
        self.map.collect(Bound::Unbounded, usize::MAX, &mut out);
        out
    }

    /// The payload of a slot [`Stage::entries`] returned (`None` for a tombstone).
    pub(crate) fn entry(&self, slot: Slot) -> Entry<'_> {
        self.payload(slot)
    }

    /// Entries, tombstones included.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the stage holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Keys with a payload.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Tombstones.
    pub(crate) fn tombstones(&self) -> usize {
        self.tombstones
    }

    /// True when no more slots can be handed out (4 billion payloads): the stage must be
    /// frozen whatever the trigger says.
    pub(crate) fn slots_exhausted(&self) -> bool {
        self.slots >= (TOMBSTONE - 1) as usize
    }

    /// Bytes held: the map, the arena's capacity and the stage itself.
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.map.size_in_bytes() + self.arena.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<D: DynamicMap<u64>>() {
        let mut s = Stage::<u64, D>::new(2);
        s.apply(5, Some(&[1, 2])).unwrap();
        s.apply(3, None).unwrap();
        s.apply(5, Some(&[3, 4])).unwrap();
        s.apply(7, Some(&[9, 9])).unwrap();
        s.apply(7, None).unwrap();
        s.apply(3, Some(&[6, 6])).unwrap();
        assert_eq!(s.get(&5), Some(Some(&[3u8, 4][..])));
        assert_eq!(s.get(&7), Some(None));
        assert_eq!(s.get(&3), Some(Some(&[6u8, 6][..])));
        assert_eq!(s.get(&4), None);
        assert_eq!((s.len(), s.live(), s.tombstones()), (3, 2, 1));
        let (mut k, mut p, mut v) = (Vec::new(), Vec::new(), Vec::new());
        s.collect(Bound::Excluded(3), 10, &mut k, &mut p, &mut v);
        assert_eq!(k, vec![5, 7]);
        assert_eq!(p, vec![true, false]);
        assert_eq!(v, vec![3, 4, 0, 0]);
        assert!(s.memory_bytes() > 0);
    }

    #[test]
    fn stage_over_both_maps() {
        check::<BTree<u64, Slot>>();
        check::<StdMap<u64>>();
        let mut s = Stage::<f64, StdMap<f64>>::new(0);
        assert!(matches!(
            s.apply(f64::NAN, None),
            Err(Error::InvalidKey { .. })
        ));
        assert!(s.is_empty());
    }
}
