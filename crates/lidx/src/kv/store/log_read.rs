//! The `log` engine's snapshots and ranges: a sequence number, and each key's `prev` chain
//! followed back to the newest record at or before it ([`super::log_record`]).
//!
//! A range reads the map in key order a chunk at a time (its read lock held only for the
//! chunk), so writers go on between chunks; keys a writer adds after the snapshot have no
//! record at or before it and are skipped. A descending range collects its keys' places first
//! (16 bytes a key): the maps have no reverse scan.

use std::collections::VecDeque;
use std::ops::RangeBounds;
use std::sync::Arc;

use crate::error::Result;
use crate::kv::wal::Seq;

use super::log::{op_at, LogInner};
use super::log_record::{key_of, lower_u64, upper_u64, NO_LOC};
use super::view::Entry;

/// Keys a range reads from the map at a time.
const CHUNK: usize = 256;

/// A consistent view of a `log` store.
pub(crate) struct LogSnapshot {
    pub(crate) inner: Arc<LogInner>,
    pub(crate) seq: Seq,
}

/// The value of `key` at `seq`, from the map's `place` for it.
fn value_at(inner: &LogInner, key: u64, mut place: u64, seq: Seq) -> Result<Option<Vec<u8>>> {
    let segments = inner.segments.read();
    loop {
        let op = op_at(&segments, place, key)?;
        if op.seq <= seq {
            return Ok(op.value.map(<[u8]>::to_vec));
        }
        if op.prev == NO_LOC {
            return Ok(None);
        }
        place = op.prev;
    }
}

impl LogSnapshot {
    pub(crate) fn new(inner: &Arc<LogInner>) -> LogSnapshot {
        LogSnapshot {
            seq: inner.snapshot_seq(),
            inner: Arc::clone(inner),
        }
    }

    /// The value of `key` at the snapshot.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Ok(key) = key_of(key) else {
            return Ok(None);
        };
        let place = self.inner.map.read().get(key);
        match place {
            Some(place) => value_at(&self.inner, key, place, self.seq),
            None => Ok(None),
        }
    }

    /// The entries within `bounds` at the snapshot.
    pub(crate) fn range<'k>(&self, bounds: impl RangeBounds<&'k [u8]>, forward: bool) -> LogRange {
        let lo = lower_u64(bounds.start_bound().cloned());
        let hi = upper_u64(bounds.end_bound().cloned());
        let (next, hi) = match (lo, hi) {
            (Some(lo), Some(hi)) if lo <= hi => (Some(lo), hi),
            _ => (None, 0),
        };
        let mut range = LogRange {
            inner: Arc::clone(&self.inner),
            seq: self.seq,
            next,
            hi,
            places: VecDeque::new(),
        };
        if !forward {
            let mut all = Vec::new();
            while let Some(chunk) = range.read_chunk() {
                all.extend(chunk);
            }
            all.reverse();
            range.places = all.into();
        }
        range
    }
}

/// A `log` store's range, read at a snapshot.
pub(crate) struct LogRange {
    inner: Arc<LogInner>,
    seq: Seq,
    /// The next key to read from the map; `None` once past the end.
    next: Option<u64>,
    /// The last key in the range.
    hi: u64,
    /// Keys read from the map and their places, not yet resolved.
    places: VecDeque<(u64, u64)>,
}

impl LogRange {
    /// The next chunk of the map's entries in the range, `None` after the last.
    fn read_chunk(&mut self) -> Option<Vec<(u64, u64)>> {
        let from = self.next?;
        let mut chunk = Vec::with_capacity(CHUNK);
        self.inner.map.read().scan(from, CHUNK, &mut chunk);
        let last = chunk.last().map(|&(k, _)| k);
        let full = chunk.len() == CHUNK;
        chunk.retain(|&(k, _)| k <= self.hi);
        self.next = match last {
            Some(k) if full && k < self.hi => Some(k + 1),
            _ => None,
        };
        Some(chunk)
    }

    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            while let Some((key, place)) = self.places.pop_front() {
                if let Some(value) = value_at(&self.inner, key, place, self.seq)? {
                    return Ok(Some((key.to_be_bytes().to_vec(), value)));
                }
            }
            match self.read_chunk() {
                Some(chunk) => self.places = chunk.into(),
                None => return Ok(None),
            }
        }
    }
}
