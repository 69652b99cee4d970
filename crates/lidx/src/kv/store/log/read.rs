//! The `log` engine's snapshots and ranges: a sequence number, and each key's `prev` chain
//! followed back to the newest record at or before it ([`super::record`]).
//!
//! A range reads the map in key order a chunk at a time (its read lock held only for the
//! chunk), so writers go on between chunks; keys a writer adds after the snapshot have no
//! record at or before it and are skipped. A descending range collects its keys and their
//! places first: the maps have no reverse scan.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crate::error::Result;
use crate::kv::store::engine::{EngineRange, EngineSnapshot, Entry, KeyRange};
use crate::kv::wal::Seq;

use super::record::NO_LOC;
use super::segment::with_op;
use super::state::LogInner;

/// Keys a range reads from the map at first: short scans (YCSB E's 1 to 100 items) should not
/// read and copy more keys than they use.
const FIRST_CHUNK: usize = 16;
/// Keys a range reads from the map at a time at most; each chunk doubles up to it.
const CHUNK: usize = 256;

/// A snapshot's registration ([`LogInner::register`]), shared by the snapshot and its ranges:
/// dropped with the last of them.
struct Pin {
    inner: Arc<LogInner>,
    seq: Seq,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.inner.unregister(self.seq);
    }
}

/// A consistent view of a `log` store.
pub(crate) struct LogSnapshot {
    pin: Arc<Pin>,
}

/// The value of `key` at `seq`, from the map's `place` for it.
fn value_at(inner: &LogInner, key: &[u8], mut place: u64, seq: Seq) -> Result<Option<Vec<u8>>> {
    let segments = inner.segments.read();
    loop {
        let step = with_op(
            &segments,
            Some(&inner.retired),
            inner.keys,
            place,
            key,
            |op| {
                if op.seq <= seq {
                    Ok(op.value.map(<[u8]>::to_vec))
                } else {
                    Err(op.prev)
                }
            },
        )?;
        match step {
            Ok(value) => return Ok(value),
            Err(NO_LOC) => return Ok(None),
            Err(prev) => place = prev,
        }
    }
}

impl LogSnapshot {
    pub(crate) fn new(inner: &Arc<LogInner>) -> LogSnapshot {
        LogSnapshot {
            pin: Arc::new(Pin {
                seq: inner.register(),
                inner: Arc::clone(inner),
            }),
        }
    }
}

impl EngineSnapshot for LogSnapshot {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let inner = &self.pin.inner;
        let place = inner.map.read().get(key);
        match place {
            Some(place) => value_at(inner, key, place, self.pin.seq),
            None => Ok(None),
        }
    }

    fn range(&self, bounds: KeyRange, forward: bool) -> Box<dyn EngineRange> {
        // Keys are never empty, so the empty key is below them all.
        let next = match bounds.start {
            Bound::Included(k) => Some(k),
            Bound::Excluded(k) => Some(successor(&k)),
            Bound::Unbounded => Some(Vec::new()),
        };
        let hi = bounds.end;
        let mut range = LogRange {
            pin: Arc::clone(&self.pin),
            next,
            hi,
            chunk: FIRST_CHUNK,
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
        Box::new(range)
    }

    fn seq(&self) -> Seq {
        self.pin.seq
    }
}

/// A `log` store's range, read at a snapshot.
pub(crate) struct LogRange {
    pin: Arc<Pin>,
    /// The smallest key left to read from the map; `None` once past the end.
    next: Option<Vec<u8>>,
    /// The range's upper bound.
    hi: Bound<Vec<u8>>,
    /// Keys the next chunk reads.
    chunk: usize,
    /// Keys read from the map and their places, not yet resolved.
    places: VecDeque<(Vec<u8>, u64)>,
}

/// The smallest byte string greater than `key`.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

impl LogRange {
    /// The next chunk of the map's entries in the range, `None` after the last.
    fn read_chunk(&mut self) -> Option<Vec<(Vec<u8>, u64)>> {
        let from = self.next.take()?;
        let limit = self.chunk;
        self.chunk = (limit * 2).min(CHUNK);
        let mut chunk = Vec::with_capacity(limit);
        self.pin.inner.map.read().scan(&from, limit, &mut chunk);
        let full = chunk.len() == limit;
        let within = |k: &[u8]| match &self.hi {
            Bound::Included(hi) => k <= &hi[..],
            Bound::Excluded(hi) => k < &hi[..],
            Bound::Unbounded => true,
        };
        let end = chunk.partition_point(|(k, _)| within(k));
        self.next = match chunk.last() {
            Some((k, _)) if full && end == chunk.len() => Some(successor(k)),
            _ => None,
        };
        chunk.truncate(end);
        Some(chunk)
    }
}

impl EngineRange for LogRange {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            while let Some((key, place)) = self.places.pop_front() {
                if let Some(value) = value_at(&self.pin.inner, &key, place, self.pin.seq)? {
                    return Ok(Some((key, value)));
                }
            }
            match self.read_chunk() {
                Some(chunk) => self.places = chunk.into(),
                None => return Ok(None),
            }
        }
    }
}
