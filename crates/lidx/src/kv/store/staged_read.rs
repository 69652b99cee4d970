//! Reads of a staged engine (`hybrid`, `lsm`): point lookups, snapshots and range iterators
//! over its dynamic stages and its files.
//!
//! A read looks at the dynamic stage, then the frozen one, then the files, newest first
//! ([`Files::get`]); the first that has the key decides (a tombstone hides older ones). A
//! snapshot pins one [`Version`] of the stages and files and a sequence number: the files it
//! pinned stay open (a merged file is removed only when its last reader lets go), and the
//! dynamic stages keep the versions it needs (see `memtable`), so it reads the same answers
//! while writes and merges go on. A range iterator is a merge of one cursor per stage and per
//! file ([`Files::cursors`]), forward or backward.

use std::ops::Bound;
use std::sync::Arc;

use crate::disk::byte_table::TableCursor;
use crate::error::Result;
use crate::kv::store::engine::{EngineRange, EngineSnapshot, Entry, KeyRange};
use crate::kv::store::memtable::Found;
use crate::kv::wal::Seq;

use super::staged::{Files, Stage, Staged, Version};

/// The cursors a [`FileCursor`] reads after its own, each made when the one before it ends.
pub(crate) type Then = Box<dyn Iterator<Item = (TableCursor, String)> + Send + Sync>;

/// A cursor over one of an engine's files, for a range.
pub(crate) struct FileCursor {
    pub(crate) cursor: TableCursor,
    /// The cursors (with their files' names) read after `cursor`, made as the scan reaches
    /// them: the other runs of an `lsm` partitioned level, in the scan's order.
    pub(crate) then: Then,
    /// True when the file's values carry a tag byte (an `lsm` run): a tombstone yields a
    /// `None` value.
    pub(crate) tagged: bool,
    /// The file's name, for errors.
    pub(crate) name: String,
    /// What turns a tagged value that refers elsewhere (an `lsm` run's reference to its value
    /// log) into the value; `None` when the file holds its values.
    pub(crate) values: Option<Arc<dyn Resolve>>,
}

impl FileCursor {
    /// The next record of the cursor, then of those after it.
    fn next_record(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        loop {
            if let Some(record) = self.cursor.next_record()? {
                return Ok(Some(record));
            }
            match self.then.next() {
                Some((cursor, name)) => (self.cursor, self.name) = (cursor, name),
                None => return Ok(None),
            }
        }
    }
}

/// Reads the value a file's tagged record stands for, wherever it is (see `lsm/values.rs`).
pub(crate) trait Resolve: Send + Sync {
    /// The value of `key` that its tagged record `tagged` in the file `file` stands for,
    /// `None` for a tombstone; errors name the file at fault.
    fn resolve(&self, file: &str, key: &[u8], tagged: Vec<u8>) -> Result<Option<Vec<u8>>>;
}

/// `e` naming the file `name` when it is about a record's tag ([`untag`]'s errors name no
/// file).
pub(crate) fn named(e: crate::Error, name: &str) -> crate::Error {
    match e {
        crate::Error::Corrupt { block, what, .. } => crate::Error::Corrupt {
            file: name.to_string(),
            block,
            what,
        },
        other => other,
    }
}

/// A value read from a file as a read returns it: a tagged value's tag decides between the
/// value and a tombstone (`None`); an untagged one is the value.
pub(crate) fn file_value(value: Vec<u8>, tagged: bool) -> Result<Option<Vec<u8>>> {
    if tagged {
        untag(value)
    } else {
        Ok(Some(value))
    }
}

/// The value a tagged record holds, `None` for a tombstone ([`PUT`], [`TOMBSTONE`]);
/// [`crate::Error::Corrupt`] for another tag.
pub(crate) fn untag(mut value: Vec<u8>) -> Result<Option<Vec<u8>>> {
    match value.first() {
        Some(&PUT) => {
            value.remove(0);
            Ok(Some(value))
        }
        Some(&TOMBSTONE) if value.len() == 1 => Ok(None),
        _ => Err(crate::Error::Corrupt {
            file: "a run".to_string(),
            block: None,
            what: format!(
                "a record tagged {:?}, not a put or a tombstone",
                value.first()
            ),
        }),
    }
}

/// The tag of a put in an `lsm` run: the value follows.
pub(crate) const PUT: u8 = 0;
/// The tag of a tombstone in an `lsm` run, the whole value.
pub(crate) const TOMBSTONE: u8 = 1;
// Tag 2 is a reference to a value in the value log (`lsm/values.rs`).

/// The value of `key` in `version` at sequence number `at`.
pub(crate) fn get_at<F: Files>(
    version: &Version<F>,
    key: &[u8],
    at: Seq,
) -> Result<Option<Vec<u8>>> {
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

/// The value of `key` at `at` in the frozen stage and the files: what a read takes when the
/// dynamic stage has no version of the key.
fn below_dynamic<F: Files>(version: &Version<F>, key: &[u8], at: Seq) -> Result<Option<Vec<u8>>> {
    if let Some(frozen) = &version.frozen {
        match frozen.read().get(key, at) {
            Found::Absent => {}
            found => return Ok(owned_value(found)),
        }
    }
    version.files.get(key)
}

/// The value of `key` now ([`crate::kv::Store::get`]): the dynamic stage's newest
/// version once its sequence number is visible, else the frozen stage's or the table's (all
/// visible: a freeze waits for the writes in progress). A plain read takes the newest version
/// rather than reading at the visible sequence number because it registers no snapshot, so a
/// merge of the stage's runs may drop older versions under it; and it waits for that version
/// to be visible because a version applied but not yet published (its writer waiting for an
/// earlier one) would otherwise be seen by this read and then not by a snapshot taken after
/// it, as if the write had gone back.
pub(crate) fn get_latest<F: Files>(inner: &Staged<F>, key: &[u8]) -> Result<Option<Vec<u8>>> {
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
    File(Box<FileCursor>),
}

struct Source {
    cursor: Cursor,
    /// The next entry (`None` value: a tombstone); `None` when exhausted.
    head: Option<(Vec<u8>, Option<Vec<u8>>)>,
    loaded: bool,
}

/// A range of a staged engine's entries, merged from its stages and files, read from one
/// snapshot.
pub(crate) struct StagedRange<F: Files> {
    inner: Arc<Staged<F>>,
    /// The version read: its files stay on disk (a replaced run or table is removed when its
    /// last reader lets go) while the range reads them.
    _version: Arc<Version<F>>,
    seq: Seq,
    forward: bool,
    bounds: KeyRange,
    sources: Vec<Source>,
    done: bool,
}

impl<F: Files> StagedRange<F> {
    fn new(
        inner: &Arc<Staged<F>>,
        version: &Arc<Version<F>>,
        seq: Seq,
        bounds: KeyRange,
        forward: bool,
    ) -> StagedRange<F> {
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
        sources.extend(
            version
                .files
                .cursors(&bounds, forward)
                .into_iter()
                .map(|c| Source {
                    cursor: Cursor::File(Box::new(c)),
                    head: None,
                    loaded: false,
                }),
        );
        StagedRange {
            inner: Arc::clone(inner),
            _version: Arc::clone(version),
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
            Cursor::File(c) => match c.next_record()? {
                Some((k, v)) => {
                    let value = match &c.values {
                        Some(values) => values.resolve(&c.name, &k, v)?,
                        None => file_value(v, c.tagged).map_err(|e| named(e, &c.name))?,
                    };
                    Some((k, value))
                }
                None => None,
            },
        };
        s.loaded = true;
        Ok(())
    }
}

impl<F: Files> EngineRange for StagedRange<F> {
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

impl<F: Files> Drop for StagedRange<F> {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}

/// A staged engine's read view: pinned stages and files and a sequence number.
pub(crate) struct StagedSnapshot<F: Files> {
    pub(crate) inner: Arc<Staged<F>>,
    pub(crate) version: Arc<Version<F>>,
    pub(crate) seq: Seq,
}

impl<F: Files> StagedSnapshot<F> {
    /// A view of `inner` as it is now, registered until dropped.
    pub(crate) fn take(inner: &Arc<Staged<F>>) -> StagedSnapshot<F> {
        let (version, seq) = inner.take_snapshot();
        StagedSnapshot {
            inner: Arc::clone(inner),
            version,
            seq,
        }
    }
}

impl<F: Files> EngineSnapshot for StagedSnapshot<F> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_at(&self.version, key, self.seq)
    }

    fn range(&self, bounds: KeyRange, forward: bool) -> Box<dyn EngineRange> {
        Box::new(StagedRange::new(
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

impl<F: Files> Drop for StagedSnapshot<F> {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}
