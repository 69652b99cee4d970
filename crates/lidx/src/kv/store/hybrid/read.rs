//! The hybrid engine's reads: point lookups, snapshots and range iterators over its three
//! stages.
//!
//! A read looks at the dynamic stage, then the frozen one, then the table; the first stage
//! that has the key decides (a tombstone hides older stages). A snapshot pins one
//! [`Version`] of the stages and a sequence number: the stages it pinned stay open (a merged
//! table is removed only when its last reader lets go), and the dynamic stages keep the
//! versions it needs (see `memtable`), so it reads the same answers while writes and merges
//! go on. A range iterator is a merge of one cursor per stage, forward or backward.

use std::ops::Bound;
use std::sync::Arc;

use crate::disk::byte_table::TableCursor;
use crate::error::Result;
use crate::kv::store::engine::{EngineRange, EngineSnapshot, Entry, KeyRange};
use crate::kv::store::memtable::Found;
use crate::kv::wal::Seq;

use super::state::{Inner, Stage, Version};

/// The value of `key` in `version` at sequence number `at`.
pub(crate) fn get_at(version: &Version, key: &[u8], at: Seq) -> Result<Option<Vec<u8>>> {
    match version.mem.read().get(key, at) {
        Found::Absent => below_dynamic(version, key, at),
        found => Ok(owned_value(found)),
    }
}

/// A found version as the value a read returns (`None` for a tombstone).
fn owned_value(found: Found<'_>) -> Option<Vec<u8>> {
    match found {
        Found::Value(v) => Some(v.to_vec()),
        _ => None,
    }
}

/// The value of `key` at `at` in the frozen stage and the table: what a read takes when the
/// dynamic stage has no version of the key.
fn below_dynamic(version: &Version, key: &[u8], at: Seq) -> Result<Option<Vec<u8>>> {
    if let Some(frozen) = &version.frozen {
        match frozen.read().get(key, at) {
            Found::Absent => {}
            found => return Ok(owned_value(found)),
        }
    }
    match &version.table {
        Some(t) => t.table.get(key),
        None => Ok(None),
    }
}

/// The value of `key` now ([`crate::kv::Store::get`]): the dynamic stage's newest
/// version once its sequence number is visible, else the frozen stage's or the table's (all
/// visible: a freeze waits for the writes in progress). A plain read takes the newest version
/// rather than reading at the visible sequence number because it registers no snapshot, so a
/// merge of the stage's runs may drop older versions under it; and it waits for that version
/// to be visible because a version applied but not yet published (its writer waiting for an
/// earlier one) would otherwise be seen by this read and then not by a snapshot taken after
/// it, as if the write had gone back.
pub(crate) fn get_latest(inner: &Inner, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let version = inner.current();
    let newest = {
        let mem = version.mem.read();
        mem.newest_version(key)
            .map(|(found, seq)| (owned_value(found), seq))
    };
    if let Some((value, seq)) = newest {
        inner.wait_visible(seq)?;
        return Ok(value);
    }
    below_dynamic(&version, key, Seq::MAX)
}

enum Cursor {
    Mem { stage: Stage, after: Bound<Vec<u8>> },
    Table(TableCursor),
}

struct Source {
    cursor: Cursor,
    /// The next entry (`None` value: a tombstone); `None` when exhausted.
    head: Option<(Vec<u8>, Option<Vec<u8>>)>,
    loaded: bool,
}

/// A range of the hybrid engine's entries, merged from its stages, read from one snapshot.
pub(crate) struct HybridRange {
    inner: Arc<Inner>,
    seq: Seq,
    forward: bool,
    bounds: KeyRange,
    sources: Vec<Source>,
    done: bool,
}

impl HybridRange {
    fn new(
        inner: &Arc<Inner>,
        version: &Version,
        seq: Seq,
        bounds: KeyRange,
        forward: bool,
    ) -> HybridRange {
        inner.readers.retain(seq);
        let near = if forward {
            bounds.start.clone()
        } else {
            bounds.end.clone()
        };
        let mut sources: Vec<Source> = std::iter::once(&version.mem)
            .chain(&version.frozen)
            .map(|stage| Source {
                cursor: Cursor::Mem {
                    stage: Arc::clone(stage),
                    after: near.clone(),
                },
                head: None,
                loaded: false,
            })
            .collect();
        if let Some(t) = &version.table {
            sources.push(Source {
                cursor: Cursor::Table(t.table.cursor(
                    bounds.start.clone(),
                    bounds.end.clone(),
                    forward,
                )),
                head: None,
                loaded: false,
            });
        }
        HybridRange {
            inner: Arc::clone(inner),
            seq,
            forward,
            done: bounds.is_empty(),
            bounds,
            sources,
        }
    }

    fn load(&mut self, i: usize) -> Result<()> {
        let (seq, forward) = (self.seq, self.forward);
        let s = &mut self.sources[i];
        if s.loaded {
            return Ok(());
        }
        s.head = match &mut s.cursor {
            Cursor::Mem { stage, after } => {
                let next = stage.read().next_entry(after, forward, seq);
                match next {
                    Some((k, v)) if self.bounds.contains(&k) => {
                        *after = Bound::Excluded(k.clone());
                        Some((k, v))
                    }
                    _ => None,
                }
            }
            Cursor::Table(c) => c.next_record()?.map(|(k, v)| (k, Some(v))),
        };
        s.loaded = true;
        Ok(())
    }
}

impl EngineRange for HybridRange {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        while !self.done {
            for i in 0..self.sources.len() {
                if let Err(e) = self.load(i) {
                    self.done = true;
                    return Err(e);
                }
            }
            // The best key; among equal keys the first (newest) stage wins.
            let mut best: Option<usize> = None;
            for (i, s) in self.sources.iter().enumerate() {
                let Some((k, _)) = &s.head else { continue };
                let better = match best.and_then(|b| self.sources[b].head.as_ref()) {
                    None => true,
                    Some((bk, _)) => {
                        if self.forward {
                            k < bk
                        } else {
                            k > bk
                        }
                    }
                };
                if better {
                    best = Some(i);
                }
            }
            let Some(b) = best else {
                self.done = true;
                return Ok(None);
            };
            let (key, value) = self.sources[b].head.take().unwrap_or_default();
            self.sources[b].loaded = false;
            for s in &mut self.sources {
                if s.head.as_ref().is_some_and(|(k, _)| *k == key) {
                    s.head = None;
                    s.loaded = false;
                }
            }
            if let Some(v) = value {
                return Ok(Some((key, v)));
            }
        }
        Ok(None)
    }
}

impl Drop for HybridRange {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}

/// A hybrid engine's read view: pinned stages and a sequence number.
pub(crate) struct HybridSnapshot {
    pub(crate) inner: Arc<Inner>,
    pub(crate) version: Arc<Version>,
    pub(crate) seq: Seq,
}

impl EngineSnapshot for HybridSnapshot {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_at(&self.version, key, self.seq)
    }

    fn range(&self, bounds: KeyRange, forward: bool) -> Box<dyn EngineRange> {
        Box::new(HybridRange::new(
            &self.inner,
            &self.version,
            self.seq,
            bounds,
            forward,
        ))
    }

    fn seq(&self) -> Seq {
        self.seq
    }
}

impl Drop for HybridSnapshot {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}
