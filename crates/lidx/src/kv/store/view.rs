//! What readers hold: [`Snapshot`] (a consistent view) and [`Range`] (an iterator), the same
//! types whatever engine serves the store: each holds its engine's view or iterator behind
//! [`EngineSnapshot`] and [`EngineRange`].

use std::ops::RangeBounds;

use crate::error::Result;
use crate::kv::wal::Seq;

use super::engine::{EngineRange, EngineSnapshot, Entry, KeyRange};

/// A consistent read view of a store ([`crate::kv::Store::snapshot`]): every read
/// through it sees the store as it was when it was taken, while writes and merges go on. It
/// keeps what it reads alive (stages and tables, or blocks); drop it when done.
pub struct Snapshot {
    of: Box<dyn EngineSnapshot>,
}

impl Snapshot {
    /// The view `of` an engine.
    pub(crate) fn new(of: Box<dyn EngineSnapshot>) -> Snapshot {
        Snapshot { of }
    }

    /// The value of `key` when the snapshot was taken.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.of.get(key)
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
        let bounds = KeyRange::new(bounds.start_bound(), bounds.end_bound());
        Range {
            of: self.of.range(bounds, forward),
        }
    }

    /// The sequence number of the last write it sees.
    pub fn seq(&self) -> Seq {
        self.of.seq()
    }
}

/// A range of a store's entries in key order (or reverse key order), read from one snapshot.
/// Yields `Result`s: a damaged block ends the iteration with its error.
pub struct Range {
    of: Box<dyn EngineRange>,
}

impl Range {
    /// The next entry, `None` after the last.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        self.of.next_entry()
    }
}

impl Iterator for Range {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}
