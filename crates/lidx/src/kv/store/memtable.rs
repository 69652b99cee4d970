//! The hybrid engine's dynamic stage over byte keys: a `BTreeMap` from key to its versions,
//! each tagged with the sequence number of the write that made it, so a snapshot reads the
//! newest version at or below its sequence number while writes go on.
//!
//! Paper 002 §9.1 uses a B+-tree of `u64` keys; ours maps byte strings, and keeps more than
//! one version of a key only while a snapshot may still need an older one: a write drops
//! every version older than the newest one at or below `keep` (the oldest live snapshot, or
//! what is visible now), so without snapshots each key holds one version.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::kv::wal::Seq;

/// A key's versions, oldest first; `None` is a tombstone (hides the key in older stages).
type Versions = Vec<(Seq, Option<Box<[u8]>>)>;

/// Bytes a key's entry costs beyond its key: map node share, the versions vector.
const ENTRY_OVERHEAD: usize = 64;
/// Bytes a version costs beyond its value.
const VERSION_OVERHEAD: usize = 32;

/// The dynamic stage; see the module docs.
#[derive(Default)]
pub(crate) struct MemTable {
    map: BTreeMap<Box<[u8]>, Versions>,
    bytes: usize,
}

/// What a stage says about a key at a sequence number.
pub(crate) enum Found<'a> {
    /// The stage has no version of the key at or below the sequence number.
    Absent,
    /// The key is deleted.
    Deleted,
    /// The key's value.
    Value(&'a [u8]),
}

impl MemTable {
    /// Keys held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes of memory, estimated from the keys, values and per-entry overheads.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes
    }

    /// Records a write of sequence number `seq`, dropping versions no reader needs (see the
    /// module docs).
    pub(crate) fn apply(&mut self, seq: Seq, key: &[u8], value: Option<&[u8]>, keep: Seq) {
        let cost = |v: &Option<Box<[u8]>>| VERSION_OVERHEAD + v.as_ref().map_or(0, |v| v.len());
        let versions = match self.map.get_mut(key) {
            Some(v) => v,
            None => {
                self.bytes += ENTRY_OVERHEAD + key.len();
                self.map.entry(key.into()).or_default()
            }
        };
        let new = (seq, value.map(Box::from));
        self.bytes += cost(&new.1);
        let at = versions.partition_point(|(s, _)| *s < seq);
        if versions.get(at).is_some_and(|(s, _)| *s == seq) {
            // A later operation on the same key in the same batch wins.
            let old = std::mem::replace(&mut versions[at], new);
            self.bytes -= cost(&old.1);
        } else {
            versions.insert(at, new);
        }
        // The newest version at or below `keep` stays; everything older goes.
        let newest_kept = versions
            .partition_point(|(s, _)| *s <= keep)
            .saturating_sub(1);
        if newest_kept > 0 {
            for (_, v) in versions.drain(..newest_kept) {
                self.bytes -= cost(&v);
            }
        }
    }

    /// The key's newest version at or below `at`.
    pub(crate) fn get(&self, key: &[u8], at: Seq) -> Found<'_> {
        self.map.get(key).map_or(Found::Absent, |v| newest(v, at))
    }

    /// The first key after `after` (from the start when `Unbounded`) in the given direction
    /// that has a version at or below `at`, with that version; `None` past the last.
    pub(crate) fn next_entry(
        &self,
        after: &Bound<Vec<u8>>,
        forward: bool,
        at: Seq,
    ) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        let bound = match after {
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let range: (Bound<&[u8]>, Bound<&[u8]>) = if forward {
            (bound, Bound::Unbounded)
        } else {
            (Bound::Unbounded, bound)
        };
        let mut it = self.map.range::<[u8], _>(range);
        let mut step = || if forward { it.next() } else { it.next_back() };
        while let Some((k, v)) = step() {
            match newest(v, at) {
                Found::Absent => continue,
                Found::Deleted => return Some((k.to_vec(), None)),
                Found::Value(v) => return Some((k.to_vec(), Some(v.to_vec()))),
            }
        }
        None
    }

    /// Every key's newest version at or below `at`, in key order (what a merge writes).
    pub(crate) fn newest_entries(&self, at: Seq) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.map
            .iter()
            .filter_map(move |(k, v)| match newest(v, at) {
                Found::Absent => None,
                Found::Deleted => Some((&k[..], None)),
                Found::Value(v) => Some((&k[..], Some(v))),
            })
    }
}

fn newest(versions: &Versions, at: Seq) -> Found<'_> {
    let i = versions.partition_point(|(s, _)| *s <= at);
    match i.checked_sub(1).map(|i| &versions[i].1) {
        None => Found::Absent,
        Some(None) => Found::Deleted,
        Some(Some(v)) => Found::Value(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(m: &MemTable, k: &[u8], at: Seq) -> Option<Option<Vec<u8>>> {
        match m.get(k, at) {
            Found::Absent => None,
            Found::Deleted => Some(None),
            Found::Value(v) => Some(Some(v.to_vec())),
        }
    }

    #[test]
    fn versions_serve_snapshots_and_are_dropped_when_unneeded() {
        let mut m = MemTable::default();
        m.apply(1, b"k", Some(b"one"), 0);
        m.apply(3, b"k", Some(b"three"), 1); // a snapshot at 1 or 2 still reads "one"
        m.apply(2, b"j", None, 1);
        assert_eq!(value(&m, b"k", 2), Some(Some(b"one".to_vec())));
        assert_eq!(value(&m, b"k", 3), Some(Some(b"three".to_vec())));
        assert_eq!(value(&m, b"k", 0), None);
        assert_eq!(value(&m, b"j", 5), Some(None));
        m.apply(2, b"j", Some(b"later in the batch"), 1);
        assert_eq!(
            value(&m, b"j", 5),
            Some(Some(b"later in the batch".to_vec()))
        );
        let before = m.memory_bytes();
        m.apply(4, b"k", Some(b"four"), 4); // nothing needs "one" or "three" now
        assert!(m.memory_bytes() < before + 10);
        assert_eq!(value(&m, b"k", 3), None);
        assert_eq!(
            m.next_entry(&Bound::Excluded(b"j".to_vec()), true, 9),
            Some((b"k".to_vec(), Some(b"four".to_vec())))
        );
        assert_eq!(
            m.next_entry(&Bound::Excluded(b"k".to_vec()), false, 9),
            Some((b"j".to_vec(), Some(b"later in the batch".to_vec())))
        );
        assert_eq!(m.next_entry(&Bound::Unbounded, true, 0), None);
    }
}
