//! What readers hold: [`Snapshot`] (a consistent view) and [`Range`] (an iterator), the same
//! types whatever engine serves the store.

use std::collections::BTreeMap;
use std::ops::RangeBounds;

use parking_lot::{Mutex, MutexGuard};

use crate::error::Result;
use crate::kv::wal::Seq;

use super::btree::{BTreeRange, BTreeSnapshot};
use super::hybrid_read::{HybridRange, HybridSnapshot};
use super::log_read::{LogRange, LogSnapshot};

/// A key and its value, as range iterators yield them.
pub type Entry = (Vec<u8>, Vec<u8>);

pub(crate) enum SnapshotOf {
    Hybrid(HybridSnapshot),
    BTree(BTreeSnapshot),
    Log(LogSnapshot),
}

/// A consistent read view of a store ([`crate::kv::store::Store::snapshot`]): every read
/// through it sees the store as it was when it was taken, while writes and merges go on. It
/// keeps what it reads alive (stages and tables, or blocks); drop it when done.
pub struct Snapshot {
    pub(crate) of: SnapshotOf,
}

impl Snapshot {
    /// The value of `key` when the snapshot was taken.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match &self.of {
            SnapshotOf::Hybrid(s) => s.get(key),
            SnapshotOf::BTree(s) => s.get(key),
            SnapshotOf::Log(s) => s.get(key),
        }
    }

    /// The entries within `bounds`, ascending.
    pub fn range<'k>(&self, bounds: impl RangeBounds<&'k [u8]>) -> Range {
        self.range_in(bounds, true)
    }

    /// The entries within `bounds`, descending.
    pub fn range_rev<'k>(&self, bounds: impl RangeBounds<&'k [u8]>) -> Range {
        self.range_in(bounds, false)
    }

    fn range_in<'k>(&self, bounds: impl RangeBounds<&'k [u8]>, forward: bool) -> Range {
        Range {
            of: match &self.of {
                SnapshotOf::Hybrid(s) => RangeOf::Hybrid(s.range(bounds, forward)),
                SnapshotOf::BTree(s) => RangeOf::BTree(s.range(bounds, forward)),
                SnapshotOf::Log(s) => RangeOf::Log(s.range(bounds, forward)),
            },
        }
    }

    /// The sequence number of the last write it sees.
    pub fn seq(&self) -> Seq {
        match &self.of {
            SnapshotOf::Hybrid(s) => s.seq,
            SnapshotOf::BTree(s) => s.seq,
            SnapshotOf::Log(s) => s.seq,
        }
    }
}

enum RangeOf {
    Hybrid(HybridRange),
    BTree(BTreeRange),
    Log(LogRange),
}

/// A range of a store's entries in key order (or reverse key order), read from one snapshot.
/// Yields `Result`s: a damaged block ends the iteration with its error.
pub struct Range {
    of: RangeOf,
}

impl Range {
    /// The next entry, `None` after the last.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        match &mut self.of {
            RangeOf::Hybrid(r) => r.next_entry(),
            RangeOf::BTree(r) => r.next_entry(),
            RangeOf::Log(r) => r.next_entry(),
        }
    }
}

impl Iterator for Range {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// The sequence numbers that live snapshots and ranges read at, with how many hold each: what
/// an engine may not discard yet (older versions of a key, retired blocks).
#[derive(Default)]
pub(crate) struct Readers(Mutex<BTreeMap<Seq, usize>>);

impl Readers {
    /// The registry itself, for an engine that registers under a lock of its own order.
    pub(crate) fn lock(&self) -> MutexGuard<'_, BTreeMap<Seq, usize>> {
        self.0.lock()
    }

    /// Registers one more reader at `seq`.
    pub(crate) fn retain(&self, seq: Seq) {
        *self.0.lock().entry(seq).or_insert(0) += 1;
    }

    /// Lets go of a reader [`Readers::retain`] registered.
    pub(crate) fn release(&self, seq: Seq) {
        let mut readers = self.0.lock();
        if let Some(n) = readers.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                readers.remove(&seq);
            }
        }
    }

    /// The oldest sequence number a reader reads at, `last` when none is older.
    pub(crate) fn oldest(&self, last: Seq) -> Seq {
        self.0.lock().keys().next().map_or(last, |&s| s.min(last))
    }
}
