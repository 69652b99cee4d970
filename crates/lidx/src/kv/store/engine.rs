//! The hybrid engine's state and its life: create, open and recovery, writes, the freeze
//! and the merge thread.
//!
//! The order of a merge and what a crash at each step leaves is the one of
//! [`crate::kv::hybrid`] (freeze and rotate the log, write the new table, commit the manifest,
//! swap the version, retire the old table, drop the merged log segments); here the stages hold
//! byte keys and values, the static stage is one [`ByteTable`], and every write is one log
//! record (a [`WriteBatch`](super::WriteBatch) is one `Batch` record), so a batch is recovered
//! whole or not at all.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::disk::byte_table::{ByteTable, ByteTableParams, ByteTableWriter};
use crate::disk::hybrid::MIN_RATIO_ENTRIES;
use crate::error::{Error, Result};
use crate::io::{DeviceKind, Storage};
use crate::kv::hybrid::recovery::{check_coverage, require_wal};
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::wal::{replay, Record, Seq, Wal, WalOptions};

use super::batch::{decode_ops, BatchOp};
use super::dir::{lock, read_identity, write_identity};
use super::memtable::MemTable;
use super::options::{CreateOptions, StoreOptions};

/// Name of the log directory inside a store.
pub(crate) const WAL_DIR: &str = "wal";

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
struct MergeState {
    pending: bool,
    running: bool,
    shutdown: bool,
    error: Option<Error>,
}

/// Sequence numbers written to the log but not yet applied to the dynamic stage.
struct Visibility {
    visible: Seq,
    applied: BTreeSet<Seq>,
    failed: Option<Error>,
}

pub(crate) struct Inner {
    pub(crate) dir: PathBuf,
    pub(crate) identity: CreateOptions,
    pub(crate) options: StoreOptions,
    pub(crate) storage: Arc<Storage>,
    wal: Option<Wal>,
    version: RwLock<Arc<Version>>,
    /// Writers hold it shared from log append to publication; a freeze holds it exclusive.
    gate: RwLock<()>,
    vis: Mutex<Visibility>,
    vis_cond: Condvar,
    /// Live snapshots: sequence number and count.
    snapshots: Mutex<std::collections::BTreeMap<Seq, usize>>,
    manifest: Mutex<Option<ManifestStore>>,
    next_generation: AtomicU64,
    merge: Mutex<MergeState>,
    merge_cond: Condvar,
    pub(crate) merges: AtomicU64,
    pub(crate) merge_nanos: AtomicU64,
    pub(crate) write_stalls: AtomicU64,
    pub(crate) stall_nanos: AtomicU64,
    pub(crate) recovered_records: u64,
}

/// An open hybrid engine: its state, merge thread and lock.
pub(crate) struct Engine {
    pub(crate) inner: Arc<Inner>,
    worker: Option<JoinHandle<()>>,
    _lock: File,
}

fn storage_for(dir: &Path, identity: &CreateOptions, options: &StoreOptions) -> Result<Storage> {
    let kind = DeviceKind::File {
        direct: options.direct_io,
    };
    Ok(Storage::new(dir, kind, identity.block_size)?
        .with_cache_blocks(options.cache_bytes / identity.block_size))
}

fn check_storage(storage: &Storage, identity: &CreateOptions) -> Result<()> {
    if storage.block_size() != identity.block_size {
        return Err(Error::InvalidParameter {
            name: "storage block size",
            value: storage.block_size().to_string(),
            expected: "the store's block size",
        });
    }
    Ok(())
}

fn encode_meta(next_generation: u64) -> Vec<u8> {
    next_generation.to_le_bytes().to_vec()
}

fn decode_meta(file: &str, meta: &[u8]) -> Result<u64> {
    let b: [u8; 8] = meta.try_into().map_err(|_| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: format!("store meta of {} bytes, 8 expected", meta.len()),
    })?;
    Ok(u64::from_le_bytes(b))
}

impl Engine {
    /// Creates a store in `dir` (missing or empty).
    pub(crate) fn create(
        dir: &Path,
        identity: &CreateOptions,
        options: &StoreOptions,
        storage: Option<Arc<Storage>>,
    ) -> Result<Engine> {
        super::dir::check_create(identity)?;
        if options.read_only {
            return Err(Error::ReadOnly {
                op: "create a store",
            });
        }
        write_identity(dir, identity)?;
        let lock_file = lock(dir, true)?;
        // The log exists before the manifest, so a store with a manifest always has a log.
        drop(Wal::open(
            &dir.join(WAL_DIR),
            WalOptions::default(),
            |_, _| Ok(()),
        )?);
        ManifestStore::create(
            dir,
            &Manifest {
                meta: encode_meta(1),
                ..Manifest::default()
            },
        )?;
        drop(lock_file);
        Engine::open(dir, options, storage)
    }

    /// Opens the store in `dir`, recovering it (see the module docs).
    /// `storage`, when given, serves the table files instead of files in `dir` opened by
    /// the options (benchmarks on simulated devices); its block size must be the store's.
    pub(crate) fn open(
        dir: &Path,
        options: &StoreOptions,
        storage: Option<Arc<Storage>>,
    ) -> Result<Engine> {
        check_options(options)?;
        let identity = read_identity(dir)?;
        let lock_file = lock(dir, !options.read_only)?;
        let storage = match storage {
            Some(s) => {
                check_storage(&s, &identity)?;
                s
            }
            None => Arc::new(storage_for(dir, &identity, options)?),
        };
        let (store, manifest) = ManifestStore::open(dir)?;
        let file = dir.display().to_string();
        let next_generation = decode_meta(&file, &manifest.meta)?;
        if manifest.static_files.len() > 1 {
            return Err(Error::Corrupt {
                file,
                block: None,
                what: format!(
                    "the manifest names {} tables, a store has one",
                    manifest.static_files.len()
                ),
            });
        }
        let table = match manifest.static_files.first() {
            Some(name) => Some(Arc::new(TableFile {
                table: Arc::new(ByteTable::open(&storage, name)?),
                name: name.clone(),
                storage: Arc::clone(&storage),
                retired: AtomicBool::new(false),
            })),
            None => None,
        };
        if !options.read_only {
            remove_leftovers(dir, &manifest.static_files)?;
        }
        let wal_dir = dir.join(WAL_DIR);
        require_wal(&wal_dir)?;
        let mut mem = MemTable::default();
        let static_seq = manifest.static_seq;
        let log_name = wal_dir.display().to_string();
        let mut recovered = 0u64;
        let apply = |seq: Seq, record: Record<'_>| -> Result<()> {
            if seq <= static_seq {
                return Ok(());
            }
            recovered += 1;
            apply_record(&mut mem, &log_name, seq, record, seq)
        };
        let (wal, report) = if options.read_only {
            (None, replay(&wal_dir, apply)?)
        } else {
            let wal_options = WalOptions {
                fsync: options.fsync,
            };
            let (wal, report) = Wal::open(&wal_dir, wal_options, apply)?;
            (Some(wal), report)
        };
        check_coverage(&wal_dir, &report, static_seq)?;
        let last = report.next_seq - 1;
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            identity,
            options: *options,
            storage,
            wal,
            version: RwLock::new(Arc::new(Version {
                mem: Arc::new(RwLock::new(mem)),
                frozen: None,
                frozen_seq: 0,
                table,
            })),
            gate: RwLock::new(()),
            vis: Mutex::new(Visibility {
                visible: last,
                applied: BTreeSet::new(),
                failed: None,
            }),
            vis_cond: Condvar::new(),
            snapshots: Mutex::new(Default::default()),
            manifest: Mutex::new((!options.read_only).then_some(store)),
            next_generation: AtomicU64::new(next_generation),
            merge: Mutex::new(MergeState::default()),
            merge_cond: Condvar::new(),
            merges: AtomicU64::new(0),
            merge_nanos: AtomicU64::new(0),
            write_stalls: AtomicU64::new(0),
            stall_nanos: AtomicU64::new(0),
            recovered_records: recovered,
        });
        let worker = if options.read_only {
            None
        } else {
            let inner = Arc::clone(&inner);
            Some(std::thread::spawn(move || inner.merge_loop()))
        };
        Ok(Engine {
            inner,
            worker,
            _lock: lock_file,
        })
    }

    /// Waits for a running merge, stops the merge thread and syncs the log.
    pub(crate) fn close(mut self) -> Result<()> {
        self.stop_worker();
        if let Some(wal) = &self.inner.wal {
            wal.sync()?;
        }
        match self.inner.merge.lock().error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn stop_worker(&mut self) {
        self.inner.merge.lock().shutdown = true;
        self.inner.merge_cond.notify_all();
        if let Some(h) = self.worker.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Engine {
    /// Stops the merge thread after the merge it is running; a frozen stage not merged yet
    /// stays in the log and is replayed at the next open.
    fn drop(&mut self) {
        self.stop_worker();
    }
}

fn check_options(options: &StoreOptions) -> Result<()> {
    if options.memory_budget < 4096 {
        return Err(Error::InvalidParameter {
            name: "memory budget",
            value: options.memory_budget.to_string(),
            expected: "at least 4096 bytes",
        });
    }
    if let Some(r) = options.merge_ratio.filter(|r| r.is_nan() || *r < 1.0) {
        return Err(Error::InvalidParameter {
            name: "merge ratio",
            value: r.to_string(),
            expected: "a number of at least 1",
        });
    }
    Ok(())
}

/// Removes table files the manifest does not name: leftovers of an interrupted merge.
fn remove_leftovers(dir: &Path, live: &[String]) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_table_name(&name) && !live.contains(&name) {
            std::fs::remove_file(entry.path())
                .map_err(|e| Error::io(entry.path().display().to_string(), "remove", &e))?;
        }
    }
    Ok(())
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
            super::batch::check_sizes(key, Some(value)).map_err(|e| bad(e.to_string()))?;
            mem.apply(seq, key, Some(value), keep);
        }
        Record::Delete { key } => {
            super::batch::check_sizes(key, None).map_err(|e| bad(e.to_string()))?;
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
    /// registered as a snapshot until [`Inner::release`].
    pub(crate) fn take_snapshot(&self) -> (Arc<Version>, Seq) {
        let mut snaps = self.snapshots.lock();
        let version = self.version.read();
        let seq = self.vis.lock().visible;
        *snaps.entry(seq).or_insert(0) += 1;
        (Arc::clone(&version), seq)
    }

    /// Registers one more holder of snapshot `seq`.
    pub(crate) fn retain(&self, seq: Seq) {
        *self.snapshots.lock().entry(seq).or_insert(0) += 1;
    }

    /// Lets go of a snapshot [`Inner::take_snapshot`] or [`Inner::retain`] registered.
    pub(crate) fn release(&self, seq: Seq) {
        let mut snaps = self.snapshots.lock();
        if let Some(n) = snaps.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&seq);
            }
        }
    }

    pub(crate) fn wal_handle(&self) -> Option<&Wal> {
        self.wal.as_ref()
    }

    /// Bytes of the log's segments on disk.
    pub(crate) fn log_bytes(&self) -> u64 {
        crate::kv::wal::list_segments(&self.dir.join(WAL_DIR))
            .map(|s| {
                s.iter()
                    .map(|(_, p)| std::fs::metadata(p).map_or(0, |m| m.len()))
                    .sum()
            })
            .unwrap_or(0)
    }

    fn wal(&self) -> Result<&Wal> {
        self.wal.as_ref().ok_or(Error::ReadOnly { op: "write" })
    }

    /// Bytes and keys of the dynamic stage that trigger a freeze.
    fn full(&self, version: &Version) -> bool {
        let mem = version.mem.read();
        if mem.len() == 0 {
            return false;
        }
        let records = version.table.as_ref().map_or(0, |t| t.table.len());
        let by_ratio = self
            .options
            .merge_ratio
            .map(|r| ((records as f64 / r) as usize).max(MIN_RATIO_ENTRIES));
        mem.memory_bytes() >= self.options.memory_budget || by_ratio.is_some_and(|n| mem.len() >= n)
    }

    /// Logs `record` and applies it: the write path of put, delete and batches.
    pub(crate) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.wal()?;
        self.make_room()?;
        let _gate = self.gate.read();
        let seq = wal.append(&[record]).inspect_err(|e| self.fail(e))?;
        let keep = {
            let snaps = self.snapshots.lock();
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
                self.write_stalls.fetch_add(1, Ordering::Relaxed);
                self.stall_nanos
                    .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
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
    pub(crate) fn compact(&self) -> Result<()> {
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
                Ok(()) => {
                    self.merges.fetch_add(1, Ordering::Relaxed);
                    self.merge_nanos
                        .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                }
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
            model: self.identity.model,
        };
        let mut writer = ByteTableWriter::create(&self.storage, &name, params)?;
        {
            let frozen = frozen.read();
            let mut new = frozen.newest_entries(Seq::MAX).peekable();
            let mut old = version.table.as_ref().map(|t| {
                t.table
                    .cursor(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded, true)
            });
            let mut old_head = match &mut old {
                Some(c) => c.next_record()?,
                None => None,
            };
            loop {
                let take_new = match (new.peek(), &old_head) {
                    (None, None) => break,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (Some((k, _)), Some((ok, _))) => *k <= ok.as_slice(),
                };
                if take_new {
                    let (k, v) = new.next().expect("peeked");
                    if old_head.as_ref().is_some_and(|(ok, _)| ok.as_slice() == k) {
                        old_head = old.as_mut().map_or(Ok(None), |c| c.next_record())?;
                    }
                    if let Some(v) = v {
                        writer.add(k, v)?;
                    }
                } else {
                    let (k, v) = old_head.take().expect("checked");
                    writer.add(&k, &v)?;
                    old_head = old.as_mut().map_or(Ok(None), |c| c.next_record())?;
                }
            }
        }
        let empty = writer.records() == 0;
        let table = writer.finish()?;
        let new_file = if empty {
            drop(table);
            self.storage.remove(&name)?;
            None
        } else {
            Some(Arc::new(TableFile {
                table: Arc::new(table),
                name: name.clone(),
                storage: Arc::clone(&self.storage),
                retired: AtomicBool::new(false),
            }))
        };
        // The commit point.
        {
            let mut manifest = self.manifest.lock();
            let store = manifest.as_mut().ok_or(Error::ReadOnly { op: "merge" })?;
            store.commit(&Manifest {
                static_files: new_file.iter().map(|f| f.name.clone()).collect(),
                wal_segments: Vec::new(),
                static_seq: frozen_seq,
                meta: encode_meta(generation + 1),
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
