//! Scan cursors: a dynamic stage and the static stage read in batches from a start key, for
//! [`HybridIndex::scan`](super::HybridIndex::scan)'s merge of the three stages.

use std::ops::Bound;

use parking_lot::RwLock;

use crate::disk::hybrid::dynamic::{DynamicMap, Stage};
use crate::disk::hybrid::static_set::StaticSet;
use crate::disk::DiskIndex;
use crate::error::Result;
use crate::key::Key;

/// Reads a dynamic stage in batches, from a start key on.
pub(super) struct MemCursor<'a, K: Key, D: DynamicMap<K>> {
    stage: &'a RwLock<Stage<K, D>>,
    from: Bound<K>,
    batch: usize,
    keys: Vec<K>,
    present: Vec<bool>,
    payloads: Vec<u8>,
    pub(super) pos: usize,
    done: bool,
}

impl<'a, K: Key, D: DynamicMap<K>> MemCursor<'a, K, D> {
    pub(super) fn new(stage: &'a RwLock<Stage<K, D>>, start: K, batch: usize) -> Self {
        MemCursor {
            stage,
            from: Bound::Included(start),
            batch,
            keys: Vec::new(),
            present: Vec::new(),
            payloads: Vec::new(),
            pos: 0,
            done: false,
        }
    }

    pub(super) fn fill(&mut self, _ps: usize) {
        if self.pos < self.keys.len() || self.done {
            return;
        }
        self.keys.clear();
        self.present.clear();
        self.payloads.clear();
        self.pos = 0;
        self.stage.read().collect(
            self.from,
            self.batch,
            &mut self.keys,
            &mut self.present,
            &mut self.payloads,
        );
        if self.keys.len() < self.batch {
            self.done = true;
        }
        if let Some(last) = self.keys.last() {
            self.from = Bound::Excluded(*last);
        }
    }

    pub(super) fn head(&self) -> Option<K> {
        self.keys.get(self.pos).copied()
    }

    pub(super) fn value(&self, ps: usize) -> Option<&[u8]> {
        self.present[self.pos].then(|| &self.payloads[self.pos * ps..(self.pos + 1) * ps])
    }
}

/// Reads the static stage in batches, part after part, from a start key on.
pub(super) struct StaticCursor<'a, K: Key> {
    set: &'a StaticSet<K>,
    part: usize,
    /// Where the next batch of the current part starts, and whether that key itself was
    /// already returned.
    from: Option<(K, bool)>,
    batch: usize,
    keys: Vec<K>,
    payloads: Vec<u8>,
    pub(super) pos: usize,
}

impl<'a, K: Key> StaticCursor<'a, K> {
    pub(super) fn new(set: &'a StaticSet<K>, start: K, batch: usize) -> Self {
        StaticCursor {
            set,
            part: set.route(&start),
            from: Some((start, false)),
            batch,
            keys: Vec::new(),
            payloads: Vec::new(),
            pos: 0,
        }
    }

    pub(super) fn fill(&mut self) -> Result<()> {
        while self.pos >= self.keys.len() && self.part < self.set.parts.len() {
            self.keys.clear();
            self.payloads.clear();
            self.pos = 0;
            let (start, seen) = self.from.unwrap_or((K::MIN, false));
            let want = self.batch + usize::from(seen);
            let index = &self.set.parts[self.part].index;
            let got = index.scan(&start, want, &mut self.keys, &mut self.payloads)?;
            if seen && self.keys.first().is_some_and(|k| !start.key_lt(k)) {
                self.pos = 1;
            }
            if got < want {
                self.part += 1;
                self.from = None;
            } else if let Some(last) = self.keys.last() {
                self.from = Some((*last, true));
            }
        }
        Ok(())
    }

    pub(super) fn head(&self) -> Option<K> {
        self.keys.get(self.pos).copied()
    }

    pub(super) fn value(&self, ps: usize) -> &[u8] {
        &self.payloads[self.pos * ps..(self.pos + 1) * ps]
    }
}
