//! What the `hybrid` and `lsm` engines share: a dynamic stage in memory (a [`MemTable`]) over
//! immutable files on disk, written through the log. Writes, their visibility to readers,
//! the freeze of a full stage and the merge thread that folds a frozen stage into the files
//! are written here once ([`Staged`]); an engine says what its files are and how a frozen
//! stage goes into them ([`Files`]).
//!
//! A write is logged, applied to the dynamic stage and published in sequence order, so a
//! writer reads its own write and a snapshot never sees a later write without an earlier one.
//! A full stage is frozen (the log rotated at the same point) and handed to the merge thread;
//! when the next stage fills before that merge is done, writers wait (a write stall). The
//! merge commits the manifest, swaps in the new files and drops the log segments it covers.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::disk::byte_table::ByteTable;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::wal::{Record, Seq, Wal};

use super::batch::{check_sizes, decode_ops, BatchOp};
use super::engine::{Base, KeyRange};
use super::memtable::MemTable;
use super::open::Recovered;
use super::readers::Readers;
use super::staged_read::FileCursor;
use super::stats::Work;

/// A byte table file of an engine (the hybrid's table, an `lsm` run), shared by the versions
/// and readers that hold it; removed from disk once a merge has replaced it ([`retire`]) and
/// its last reader lets go.
///
/// [`retire`]: TableFile::retire
pub(crate) struct TableFile {
    pub(crate) table: Arc<ByteTable>,
    pub(crate) name: String,
    storage: Arc<Storage>,
    retired: AtomicBool,
}

impl TableFile {
    /// The open `table`, the file `name` of `storage`.
    pub(crate) fn new(table: ByteTable, name: String, storage: &Arc<Storage>) -> TableFile {
        TableFile {
            table: Arc::new(table),
            name,
            storage: Arc::clone(storage),
            retired: AtomicBool::new(false),
        }
    }

    /// The same open table under the file's other name `name` (given by
    /// [`Storage::link`]), not retired.
    pub(crate) fn renamed(&self, name: String) -> TableFile {
        TableFile {
            table: Arc::clone(&self.table),
            name,
            storage: Arc::clone(&self.storage),
            retired: AtomicBool::new(false),
        }
    }

    /// Marks the file replaced: it goes when its last reader lets go.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

impl Drop for TableFile {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            let _ = self.storage.remove(&self.name);
        }
    }
}

/// A dynamic stage, shared by the versions and readers that hold it.
pub(crate) type Stage = Arc<RwLock<MemTable>>;

/// One consistent set of stages and files, as a reader sees them.
pub(crate) struct Version<F> {
    pub(crate) mem: Stage,
    pub(crate) frozen: Option<Stage>,
    /// Last sequence number in the frozen stage.
    pub(crate) frozen_seq: Seq,
    /// The engine's files under the stages.
    pub(crate) files: F,
}

/// What an engine keeps on disk under its dynamic stage, and how a frozen stage goes there.
pub(crate) trait Files: Clone + Send + Sync + Sized + 'static {
    /// What the engine keeps beside its versions for the life of the store (the `lsm`
    /// engine's compaction thread's state).
    type Shared: Default + Send + Sync;

    /// True when the dynamic stage of `version` is full and must be frozen.
    fn full(inner: &Staged<Self>, version: &Version<Self>) -> bool;

    /// Folds the frozen stage of the current version into the files, commits the manifest
    /// and publishes the new version ([`Staged::publish_files`]); runs on the merge thread.
    fn merge(inner: &Staged<Self>) -> Result<()>;

    /// The value of `key` in the files (`None`: absent or deleted), newest file first.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// One cursor per file over the keys within `bounds`, newest file first.
    fn cursors(&self, bounds: &KeyRange, forward: bool) -> Vec<FileCursor>;
}

#[derive(Default)]
pub(crate) struct MergeState {
    pending: bool,
    running: bool,
    shutdown: bool,
    /// The error a merge met, kept: every later write and `close` returns it.
    pub(crate) error: Option<Error>,
}

/// Sequence numbers written to the log but not yet applied to the dynamic stage.
struct Visibility {
    visible: Seq,
    applied: BTreeSet<Seq>,
    failed: Option<Error>,
}

/// An engine's staged state: see the module docs.
pub(crate) struct Staged<F: Files> {
    /// Directory, identity, options, log; the store's id is written into every file.
    pub(crate) base: Base,
    pub(crate) storage: Arc<Storage>,
    version: RwLock<Arc<Version<F>>>,
    /// Writers hold it shared from log append to publication; a freeze holds it exclusive.
    gate: RwLock<()>,
    vis: Mutex<Visibility>,
    vis_cond: Condvar,
    /// `vis.visible`, readable without the lock (plain reads check it first).
    visible_now: AtomicU64,
    /// Live snapshots and ranges.
    pub(crate) readers: Readers,
    /// The manifest, to commit to (`None` when read-only). An engine with more than one
    /// thread changing its files (`lsm`: flushes and compactions) holds it from reading the
    /// current version to publishing the new one; the hybrid's merge thread is its only one.
    pub(crate) manifest: Mutex<Option<ManifestStore>>,
    pub(crate) next_generation: AtomicU64,
    pub(crate) merge: Mutex<MergeState>,
    merge_cond: Condvar,
    /// Set once background work failed (`merge.error` holds why): writes check it first.
    failed: AtomicBool,
    /// Merges, and writes that waited for one.
    pub(crate) work: Work,
    /// The engine's own state beside its versions.
    pub(crate) shared: F::Shared,
}

/// Applies one logged record to `mem` at sequence number `seq`, keeping the versions readers
/// at `keep` or later need; `log` names the log in errors.
pub(crate) fn apply_record(
    mem: &mut MemTable,
    log: &str,
    seq: Seq,
    record: Record<'_>,
    keep: Seq,
) -> Result<()> {
    let bad = |what: String| Error::Corrupt {
        file: log.to_string(),
        block: None,
        what: format!("record {seq}: {what}"),
    };
    match record {
        Record::Put { key, value } => {
            check_sizes(key, Some(value)).map_err(|e| bad(e.to_string()))?;
            mem.apply(seq, key, Some(value), keep);
        }
        Record::Delete { key } => {
            check_sizes(key, None).map_err(|e| bad(e.to_string()))?;
            mem.apply(seq, key, None, keep);
        }
        Record::Batch { ops } => {
            let ops: Vec<BatchOp<'_>> = decode_ops(log, ops).collect::<Result<_>>()?;
            for op in ops {
                match op {
                    BatchOp::Put(k, v) => mem.apply(seq, k, Some(v), keep),
                    BatchOp::Delete(k) => mem.apply(seq, k, None, keep),
                }
            }
        }
    }
    Ok(())
}

/// Commits `manifest` to the store's manifest writer `slot` (held locked by whoever changes
/// the files): the commit point of a change to the files. [`Error::ReadOnly`] without one.
pub(crate) fn commit(slot: &mut Option<ManifestStore>, manifest: &Manifest) -> Result<()> {
    let store = slot.as_mut().ok_or(Error::ReadOnly { op: "merge" })?;
    store.commit(manifest).map(|_| ())
}

impl<F: Files> Staged<F> {
    /// The state of an open engine: the replayed dynamic stage `mem` over `files`.
    pub(crate) fn new(r: Recovered, mem: MemTable, files: F) -> Arc<Staged<F>> {
        Arc::new(Staged {
            storage: r.storage,
            version: RwLock::new(Arc::new(Version {
                mem: Arc::new(RwLock::new(mem)),
                frozen: None,
                frozen_seq: 0,
                files,
            })),
            gate: RwLock::new(()),
            vis: Mutex::new(Visibility {
                visible: r.last,
                applied: BTreeSet::new(),
                failed: None,
            }),
            vis_cond: Condvar::new(),
            visible_now: AtomicU64::new(r.last),
            readers: Readers::default(),
            manifest: Mutex::new(r.manifest),
            next_generation: AtomicU64::new(r.next_generation),
            merge: Mutex::new(MergeState::default()),
            merge_cond: Condvar::new(),
            failed: AtomicBool::new(false),
            work: Work::default(),
            shared: F::Shared::default(),
            base: r.base.recovered(),
        })
    }

    /// Starts the merge thread, unless the store is read-only.
    pub(crate) fn start_merges(self: &Arc<Self>) -> Option<JoinHandle<()>> {
        if self.base.options.read_only {
            return None;
        }
        let inner = Arc::clone(self);
        Some(std::thread::spawn(move || inner.merge_loop()))
    }

    /// Stops the merge thread after the merge it is running; a frozen stage not merged yet
    /// stays in the log and is replayed at the next open.
    pub(crate) fn stop_merges(&self, worker: Option<JoinHandle<()>>) {
        self.merge.lock().shutdown = true;
        self.merge_cond.notify_all();
        if let Some(h) = worker {
            let _ = h.join();
        }
    }

    /// The stages a reader sees now.
    pub(crate) fn current(&self) -> Arc<Version<F>> {
        Arc::clone(&self.version.read())
    }

    /// Keys (tombstones included) and bytes of memory of `version`'s dynamic stages, live
    /// and frozen.
    pub(crate) fn dynamic_size(version: &Version<F>) -> (usize, usize) {
        std::iter::once(&version.mem)
            .chain(&version.frozen)
            .map(|stage| {
                let s = stage.read();
                (s.len(), s.memory_bytes())
            })
            .fold((0, 0), |(k, b), (k2, b2)| (k + k2, b + b2))
    }

    /// The current stages and the sequence number everything in them up to is visible at,
    /// registered as a reader until released.
    pub(crate) fn take_snapshot(&self) -> (Arc<Version<F>>, Seq) {
        let mut snaps = self.readers.lock();
        let version = self.version.read();
        let seq = self.vis.lock().visible;
        *snaps.entry(seq).or_insert(0) += 1;
        (Arc::clone(&version), seq)
    }

    fn wal(&self) -> Result<&Wal> {
        self.base.wal()
    }

    /// Logs `record` and applies it: the write path of put, delete and batches.
    pub(crate) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.wal()?;
        if self.failed.load(Ordering::Acquire) {
            if let Some(e) = &self.merge.lock().error {
                return Err(e.clone());
            }
        }
        self.make_room()?;
        let _gate = self.gate.read();
        let seq = wal.append(&[record]).inspect_err(|e| self.fail(e))?;
        let keep = {
            let snaps = self.readers.lock();
            let visible = self.vis.lock().visible;
            snaps.keys().next().map_or(visible, |&s| s.min(visible))
        };
        let version = self.current();
        {
            let mut mem = version.mem.write();
            apply_record(&mut mem, "write", seq, record, keep)?;
        }
        self.publish(seq)
    }

    fn fail(&self, e: &Error) {
        let mut vis = self.vis.lock();
        vis.failed.get_or_insert_with(|| e.clone());
        self.vis_cond.notify_all();
    }

    /// Waits until `seq` is visible (its writer and every earlier one published), or the
    /// store failed.
    pub(crate) fn wait_visible(&self, seq: Seq) -> Result<()> {
        if self.visible_now.load(Ordering::Acquire) >= seq {
            return Ok(());
        }
        let mut vis = self.vis.lock();
        while vis.visible < seq {
            if let Some(e) = &vis.failed {
                return Err(e.clone());
            }
            self.vis_cond.wait(&mut vis);
        }
        Ok(())
    }

    /// Marks `seq` applied and waits until every write before it is too, so a writer reads
    /// its own write and a snapshot never sees a later write without an earlier one.
    fn publish(&self, seq: Seq) -> Result<()> {
        let mut vis = self.vis.lock();
        vis.applied.insert(seq);
        while vis.applied.first() == Some(&(vis.visible + 1)) {
            let next = vis.visible + 1;
            vis.applied.remove(&next);
            vis.visible = next;
        }
        self.visible_now.store(vis.visible, Ordering::Release);
        self.vis_cond.notify_all();
        while vis.visible < seq {
            if let Some(e) = &vis.failed {
                return Err(e.clone());
            }
            self.vis_cond.wait(&mut vis);
        }
        Ok(())
    }

    /// Freezes a full dynamic stage for the merge thread; when the previous merge still runs
    /// and the new stage is full too, waits for it (a write stall).
    fn make_room(&self) -> Result<()> {
        loop {
            let version = self.current();
            if !F::full(self, &version) {
                return Ok(());
            }
            if version.frozen.is_none() {
                self.freeze()?;
                return Ok(());
            }
            let start = Instant::now();
            let mut st = self.merge.lock();
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if self.current().frozen.is_some() {
                self.merge_cond.wait(&mut st);
                self.work.stalled(start);
            }
        }
    }

    /// Freezes the dynamic stage (if it holds anything and none is frozen) and wakes the
    /// merge thread. Returns true when it froze.
    pub(crate) fn freeze(&self) -> Result<bool> {
        let _gate = self.gate.write();
        let mut slot = self.version.write();
        if slot.frozen.is_some() || slot.mem.read().len() == 0 {
            return Ok(false);
        }
        let frozen_seq = self.wal()?.rotate()? - 1;
        *slot = Arc::new(Version {
            mem: Arc::new(RwLock::new(MemTable::default())),
            frozen: Some(Arc::clone(&slot.mem)),
            frozen_seq,
            files: slot.files.clone(),
        });
        drop(slot);
        self.merge.lock().pending = true;
        self.merge_cond.notify_all();
        Ok(true)
    }

    /// Freezes what the dynamic stage holds and waits until it is merged (and any merge
    /// before it): `compact`.
    pub(crate) fn compact(&self) -> Result<()> {
        self.wal()?;
        loop {
            self.wait_merges()?;
            if !self.freeze()? {
                return self.wait_merges();
            }
        }
    }

    /// Waits until no merge runs or is pending and no stage is frozen.
    pub(crate) fn wait_merges(&self) -> Result<()> {
        let mut st = self.merge.lock();
        loop {
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if !st.pending && !st.running && self.current().frozen.is_none() {
                return Ok(());
            }
            self.merge_cond.wait(&mut st);
        }
    }

    /// The end of a close, once the engine's threads are stopped: syncs the log and returns
    /// the error background work met, if any.
    pub(crate) fn closed(&self) -> Result<()> {
        self.base.sync()?;
        match self.merge.lock().error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keeps `e`, met by background work other than the merge thread's (the `lsm` engine's
    /// compactions): every later write and `close` returns it, as a merge's error.
    pub(crate) fn fail_merges(&self, e: Error) {
        self.merge.lock().error.get_or_insert(e);
        self.failed.store(true, Ordering::Release);
        self.merge_cond.notify_all();
    }

    fn merge_loop(self: Arc<Self>) {
        loop {
            {
                let mut st = self.merge.lock();
                while !st.pending && !st.shutdown {
                    self.merge_cond.wait(&mut st);
                }
                if st.shutdown {
                    return;
                }
                st.pending = false;
                st.running = true;
            }
            let start = Instant::now();
            let result = F::merge(&self);
            let mut st = self.merge.lock();
            st.running = false;
            match result {
                Ok(()) => self.work.done(start),
                Err(e) => {
                    st.error.get_or_insert(e);
                    self.failed.store(true, Ordering::Release);
                }
            }
            self.merge_cond.notify_all();
        }
    }

    /// Publishes `files` as the files under the stages; with `merged`, the frozen stage is
    /// in them now and goes, and the log up to it is dropped.
    pub(crate) fn publish_files(&self, files: F, merged: bool) -> Result<()> {
        let frozen_seq = {
            let mut slot = self.version.write();
            let frozen_seq = slot.frozen_seq;
            *slot = Arc::new(Version {
                mem: Arc::clone(&slot.mem),
                frozen: if merged { None } else { slot.frozen.clone() },
                frozen_seq: if merged { 0 } else { slot.frozen_seq },
                files,
            });
            frozen_seq
        };
        if merged {
            self.wal()?.remove_up_to(frozen_seq)?;
        }
        Ok(())
    }
}
