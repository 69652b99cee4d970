//! The one private trait every store engine implements ([`StoreEngine`], with its read view
//! [`EngineSnapshot`] and range [`EngineRange`]), and what every engine keeps of its open
//! ([`Base`]).
//!
//! The model is lsm-tree's `AbstractTree`: [`crate::kv::Store`], its
//! [`crate::kv::Snapshot`] and [`crate::kv::Range`] hold their engine behind these
//! traits, so each of their methods is written once and costs one virtual call, and another
//! engine is one more folder beside `hybrid/`, `btree/` and `log/` that implements them, not
//! one more arm in every method. How an engine's files are opened and its log replayed is the
//! other half, written once in `open` ([`super::open::Recover`]).

use std::ops::Bound;
use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::kv::wal::{Dropped, Record, Seq, Wal};

use super::dir::log_bytes;
use super::options::{CreateOptions, StoreOptions};
use super::stats::StoreStats;

/// A key and its value, as range iterators yield them.
pub type Entry = (Vec<u8>, Vec<u8>);

/// An open engine: what [`crate::kv::Store`] calls. Writes arrive checked (sizes) and
/// as one log record each.
pub(crate) trait StoreEngine: Send + Sync {
    /// What every engine keeps of its open: directory, identity, log, recovery figures.
    fn base(&self) -> &Base;

    /// The value of `key` now, `None` when absent.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Logs `record` and applies it; returns once it is acknowledged.
    fn write(&self, record: Record<'_>) -> Result<()>;

    /// A read view of the store as it is now, registered until dropped.
    fn snapshot(&self) -> Box<dyn EngineSnapshot>;

    /// Folds everything written so far into the engine's files and waits for it.
    fn compact(&self) -> Result<()>;

    /// Waits for background work (none unless the engine has a merge thread).
    fn wait_for_merges(&self) -> Result<()> {
        Ok(())
    }

    /// Memory, disk bytes, merges and stalls now.
    fn stats(&self) -> StoreStats;

    /// Finishes the engine's work, syncs the log and closes it, returning any error met.
    fn close(self: Box<Self>) -> Result<()>;
}

/// An engine's consistent read view.
pub(crate) trait EngineSnapshot: Send + Sync {
    /// The value of `key` when the view was taken.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The entries within `bounds`, ascending when `forward`.
    fn range(&self, bounds: KeyRange, forward: bool) -> Box<dyn EngineRange>;

    /// The sequence number of the last write the view sees.
    fn seq(&self) -> Seq;
}

/// An engine's range iterator, from one view.
pub(crate) trait EngineRange: Send + Sync {
    /// The next entry, `None` after the last.
    fn next_entry(&mut self) -> Result<Option<Entry>>;
}

/// The bounds of a range of keys, owned (an engine's range outlives its caller's keys).
#[derive(Clone, Debug)]
pub(crate) struct KeyRange {
    pub(crate) start: Bound<Vec<u8>>,
    pub(crate) end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// The bounds a caller gave, copied.
    pub(crate) fn new(start: Bound<&&[u8]>, end: Bound<&&[u8]>) -> KeyRange {
        let owned = |b: Bound<&&[u8]>| b.map(|k| k.to_vec());
        KeyRange {
            start: owned(start),
            end: owned(end),
        }
    }

    /// True when no key is inside (the start above the end): such a range yields nothing
    /// rather than panicking in a map.
    pub(crate) fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
            _ => false,
        }
    }

    /// True when some key from `first` to `last` (inclusive) may be inside.
    pub(crate) fn meets(&self, first: &[u8], last: &[u8]) -> bool {
        self.reached_by(last) && self.not_passed_by(first)
    }

    /// True when a span ending at `last` (inclusive) reaches the start of the range.
    pub(crate) fn reached_by(&self, last: &[u8]) -> bool {
        match &self.start {
            Bound::Included(s) => last >= s.as_slice(),
            Bound::Excluded(s) => last > s.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// True when a span starting at `first` starts before the end of the range.
    pub(crate) fn not_passed_by(&self, first: &[u8]) -> bool {
        match &self.end {
            Bound::Included(e) => first <= e.as_slice(),
            Bound::Excluded(e) => first < e.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// True when `k` is inside.
    pub(crate) fn contains(&self, k: &[u8]) -> bool {
        let above = match &self.start {
            Bound::Included(s) => k >= s.as_slice(),
            Bound::Excluded(s) => k > s.as_slice(),
            Bound::Unbounded => true,
        };
        let below = match &self.end {
            Bound::Included(e) => k <= e.as_slice(),
            Bound::Excluded(e) => k < e.as_slice(),
            Bound::Unbounded => true,
        };
        above && below
    }
}

/// What every engine keeps of the open protocol ([`super::open::open`]).
pub(crate) struct Base {
    pub(crate) dir: PathBuf,
    pub(crate) identity: CreateOptions,
    /// The store's id, written into every file the store owns.
    pub(crate) store: u128,
    pub(crate) options: StoreOptions,
    /// The log's writer; `None` when read-only.
    pub(crate) wal: Option<Wal>,
    /// What opening cut of a damaged log.
    pub(crate) dropped: Option<Dropped>,
    /// Log records replayed at open.
    pub(crate) recovered_records: u64,
    /// Seconds the open took, up to [`Base::recovered`].
    pub(crate) recovery_seconds: f64,
    pub(crate) opened_at: Instant,
}

impl Base {
    /// This base with the open's time taken now: an engine calls it once its state is
    /// rebuilt.
    pub(crate) fn recovered(mut self) -> Base {
        self.recovery_seconds = self.opened_at.elapsed().as_secs_f64();
        self
    }

    /// The log's writer, [`Error::ReadOnly`] when the store was opened read-only.
    pub(crate) fn wal(&self) -> Result<&Wal> {
        self.wal.as_ref().ok_or(Error::ReadOnly { op: "write" })
    }

    /// Makes every acknowledged write durable (nothing to do when read-only).
    pub(crate) fn sync(&self) -> Result<()> {
        match &self.wal {
            Some(wal) => wal.sync().map(|_| ()),
            None => Ok(()),
        }
    }

    /// The figures every engine reports the same way: its name, the log's bytes and what the
    /// open recovered; an engine adds its own.
    pub(crate) fn stats(&self) -> StoreStats {
        StoreStats {
            engine: self.identity.engine.name(),
            log_disk_bytes: log_bytes(&self.dir),
            recovered_records: self.recovered_records,
            recovery_seconds: self.recovery_seconds,
            ..StoreStats::default()
        }
    }
}
