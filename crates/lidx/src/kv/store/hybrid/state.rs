//! The hybrid engine's state and its life: create, open and recovery, writes, the freeze
//! and the merge thread. Its reads are in `read`.
//!
//! The order of a merge and what a crash at each step leaves is the one of
//! [`crate::kv::hybrid`] (freeze and rotate the log, write the new table, commit the manifest,
//! swap the version, retire the old table, drop the merged log segments); here the stages hold
//! byte keys and values, the static stage is one [`ByteTable`], and every write is one log
//! record (a [`WriteBatch`](super::WriteBatch) is one `Batch` record), so a batch is recovered
//! whole or not at all.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::disk::byte_table::{ByteTable, ByteTableParams, ByteTableWriter};
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::cmp_bytes;
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::store::batch::{check_sizes, decode_ops, BatchOp};
use crate::kv::store::dir::{check_file, encode_meta, identify, StoreMeta, WAL_DIR};
use crate::kv::store::engine::Base;
use crate::kv::store::memtable::MemTable;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::{StoreOptions, MIN_RATIO_ENTRIES};
use crate::kv::store::readers::Readers;
use crate::kv::store::stats::Work;
use crate::kv::wal::{Record, Seq, Wal};

/// The name of table generation `g`.
pub(crate) fn table_name(g: u64) -> String {
    format!("table-{g:010}.lbt")
}

fn is_table_name(name: &str) -> bool {
    name.starts_with("table-") && name.ends_with(".lbt")
}

/// A table file of the static stage; removed from disk when a merge has replaced it and its
/// last reader lets go.
pub(crate) struct TableFile {
    pub(crate) table: Arc<ByteTable>,
    pub(crate) name: String,
    storage: Arc<Storage>,
    retired: AtomicBool,
}

impl Drop for TableFile {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            let _ = self.storage.remove(&self.name);
        }
    }
}

pub(crate) type Stage = Arc<RwLock<MemTable>>;

/// One consistent set of stages, as a reader sees them.
pub(crate) struct Version {
    pub(crate) mem: Stage,
    pub(crate) frozen: Option<Stage>,
    /// Last sequence number in the frozen stage.
    pub(crate) frozen_seq: Seq,
    pub(crate) table: Option<Arc<TableFile>>,
}

#[derive(Default)]
pub(super) struct MergeState {
    pending: bool,
    running: bool,
    shutdown: bool,
    /// The error a merge met, kept: every later write and `close` returns it.
    pub(super) error: Option<Error>,
}

/// Sequence numbers written to the log but not yet applied to the dynamic stage.
struct Visibility {
    visible: Seq,
    applied: BTreeSet<Seq>,
    failed: Option<Error>,
}

pub(crate) struct Inner {
    /// Directory, identity, options, log; the store's id is written into every table.
    pub(super) base: Base,
    pub(super) storage: Arc<Storage>,
    version: RwLock<Arc<Version>>,
    /// Writers hold it shared from log append to publication; a freeze holds it exclusive.
    gate: RwLock<()>,
    vis: Mutex<Visibility>,
    vis_cond: Condvar,
    /// `vis.visible`, readable without the lock (plain reads check it first).
    visible_now: AtomicU64,
    /// Live snapshots and ranges.
    pub(crate) readers: Readers,
    manifest: Mutex<Option<ManifestStore>>,
    next_generation: AtomicU64,
    pub(super) merge: Mutex<MergeState>,
    merge_cond: Condvar,
    /// Merges, and writes that waited for one.
    pub(super) work: Work,
}

/// An open hybrid engine: its state and merge thread.
pub(crate) struct HybridEngine {
    pub(super) inner: Arc<Inner>,
    worker: Option<JoinHandle<()>>,
}

/// What the hybrid engine's log is replayed into: the dynamic stage, over the table.
pub(crate) struct Replay {
    mem: MemTable,
    table: Option<Arc<TableFile>>,
    log_name: String,
}

impl Recover for HybridEngine {
    const FILES: &'static str = "tables";
    const LEFTOVERS: Option<fn(&str) -> bool> = Some(is_table_name);
    type Replay = Replay;

    fn load(dir: &Path, _: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        let storage = &opened.storage;
        let table = match &opened.file {
            Some((name, recorded)) => {
                let table = ByteTable::open(storage, name)?;
                check_file(storage, name, recorded, table.header().owner, opened.store)?;
                Some(Arc::new(TableFile {
                    table: Arc::new(table),
                    name: name.clone(),
                    storage: Arc::clone(storage),
                    retired: AtomicBool::new(false),
                }))
            }
            None => None,
        };
        let replay = Replay {
            mem: MemTable::default(),
            table,
            log_name: dir.join(WAL_DIR).display().to_string(),
        };
        Ok((replay, opened.manifest.static_seq))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        apply_record(&mut state.mem, &state.log_name, seq, record, seq)
    }

    fn finish(state: Replay, r: Recovered) -> Result<HybridEngine> {
        let read_only = r.base.options.read_only;
        let inner = Arc::new(Inner {
            storage: r.storage,
            version: RwLock::new(Arc::new(Version {
                mem: Arc::new(RwLock::new(state.mem)),
                frozen: None,
                frozen_seq: 0,
                table: state.table,
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
            work: Work::default(),
            base: r.base.recovered(),
        });
        let worker = if read_only {
            None
        } else {
            let inner = Arc::clone(&inner);
            Some(std::thread::spawn(move || inner.merge_loop()))
        };
        Ok(HybridEngine { inner, worker })
    }
}

impl HybridEngine {
    pub(super) fn stop_worker(&mut self) {
        self.inner.merge.lock().shutdown = true;
        self.inner.merge_cond.notify_all();
        if let Some(h) = self.worker.take() {
            let _ = h.join();
        }
    }
}

impl Drop for HybridEngine {
    /// Stops the merge thread after the merge it is running; a frozen stage not merged yet
    /// stays in the log and is replayed at the next open.
    fn drop(&mut self) {
        self.stop_worker();
    }
}

/// Applies one logged record to `mem` at sequence number `seq`.
fn apply_record(
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

impl Inner {
    /// The stages a reader sees now.
    pub(crate) fn current(&self) -> Arc<Version> {
        Arc::clone(&self.version.read())
    }

    /// The current stages and the sequence number everything in them up to is visible at,
    /// registered as a reader until released.
    pub(crate) fn take_snapshot(&self) -> (Arc<Version>, Seq) {
        let mut snaps = self.readers.lock();
        let version = self.version.read();
        let seq = self.vis.lock().visible;
        *snaps.entry(seq).or_insert(0) += 1;
        (Arc::clone(&version), seq)
    }

    fn wal(&self) -> Result<&Wal> {
        self.base.wal()
    }

    /// Bytes and keys of the dynamic stage that trigger a freeze.
    fn full(&self, version: &Version) -> bool {
        let mem = version.mem.read();
        if mem.len() == 0 {
            return false;
        }
        let table = version.table.as_ref().map(|t| &t.table);
        let records = table.map_or(0, |t| t.len());
        let model = table.map_or(0, |t| t.memory_bytes());
        let by_ratio = self
            .base
            .options
            .merge_ratio
            .map(|r| ((records as f64 / r) as usize).max(MIN_RATIO_ENTRIES));
        mem.memory_bytes() + model >= self.base.options.memory_budget
            || by_ratio.is_some_and(|n| mem.len() >= n)
    }

    /// Logs `record` and applies it: the write path of put, delete and batches.
    pub(super) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.wal()?;
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
            if !self.full(&version) {
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
            table: slot.table.clone(),
        });
        drop(slot);
        self.merge.lock().pending = true;
        self.merge_cond.notify_all();
        Ok(true)
    }

    /// Freezes what the dynamic stage holds and waits until it is merged (and any merge
    /// before it): `compact`.
    pub(super) fn compact(&self) -> Result<()> {
        self.wal()?;
        loop {
            self.wait_merges()?;
            if !self.freeze()? {
                return self.wait_merges();
            }
        }
    }

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
            let result = self.merge_once();
            let mut st = self.merge.lock();
            st.running = false;
            match result {
                Ok(()) => self.work.done(start),
                Err(e) => {
                    st.error.get_or_insert(e);
                }
            }
            self.merge_cond.notify_all();
        }
    }

    /// Merges the frozen stage into a new table and publishes it.
    fn merge_once(&self) -> Result<()> {
        let version = self.current();
        let Some(frozen) = version.frozen.clone() else {
            return Ok(());
        };
        let frozen_seq = version.frozen_seq;
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let name = table_name(generation);
        let params = ByteTableParams {
            model: self.base.identity.model,
        };
        let owner = FileOwner {
            store: self.base.store,
            generation,
        };
        let mut writer = ByteTableWriter::create(&self.storage, &name, params)?.owned_by(owner);
        {
            // The old table's records drive the merge, borrowed from its stream: before each,
            // the new entries below it; then the record itself unless a new entry replaces it.
            let frozen = frozen.read();
            let mut new = frozen.newest_entries(Seq::MAX).peekable();
            if let Some(old) = &version.table {
                let mut old = old.table.merge_records();
                while let Some((ok, ov)) = old.next_record()? {
                    let mut replaced = false;
                    while let Some(&(k, v)) = new.peek() {
                        let order = cmp_bytes(k, ok);
                        if order.is_gt() {
                            break;
                        }
                        if let Some(v) = v {
                            writer.add(k, v)?;
                        }
                        new.next();
                        if order.is_eq() {
                            replaced = true;
                            break;
                        }
                    }
                    if !replaced {
                        writer.add(ok, ov)?;
                    }
                }
            }
            for (k, v) in new {
                if let Some(v) = v {
                    writer.add(k, v)?;
                }
            }
        }
        let empty = writer.records() == 0;
        let table = writer.finish()?;
        let (new_file, files) = if empty {
            drop(table);
            self.storage.remove(&name)?;
            (None, Vec::new())
        } else {
            let identity = identify(&self.storage, &name, generation)?;
            let file = Arc::new(TableFile {
                table: Arc::new(table),
                name: name.clone(),
                storage: Arc::clone(&self.storage),
                retired: AtomicBool::new(false),
            });
            (Some(file), vec![identity])
        };
        // The commit point.
        {
            let mut manifest = self.manifest.lock();
            let store = manifest.as_mut().ok_or(Error::ReadOnly { op: "merge" })?;
            store.commit(&Manifest {
                static_files: new_file.iter().map(|f| f.name.clone()).collect(),
                wal_segments: Vec::new(),
                static_seq: frozen_seq,
                meta: encode_meta(&StoreMeta {
                    next_generation: generation + 1,
                    store: self.base.store,
                    files,
                }),
            })?;
        }
        {
            let mut slot = self.version.write();
            *slot = Arc::new(Version {
                mem: Arc::clone(&slot.mem),
                frozen: None,
                frozen_seq: 0,
                table: new_file,
            });
        }
        if let Some(old) = &version.table {
            old.retired.store(true, Ordering::Release);
        }
        drop(version);
        self.wal()?.remove_up_to(frozen_seq)?;
        Ok(())
    }
}
