//! The `lsm` engine's life: open and recovery (its runs named by the manifest, the log
//! replayed into a memtable), its two threads (flushes, on the staged engines' merge thread,
//! and compactions, here) and closing.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::disk::byte_table::ByteTableKind;
use crate::error::{Error, Result};
use crate::kv::store::check::open_owned;
use crate::kv::store::dir::{FileIdentity, WAL_DIR};
use crate::kv::store::memtable::MemTable;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::{CreateOptions, Engine, LsmSpec, StoreOptions, MAX_VALUE_BYTES};
use crate::kv::store::staged::{apply_record, commit, Staged};
use crate::kv::wal::{Record, Seq};

use super::levels::{
    is_run_name, memtable_limit, move_runs, plan_levels, retire, run_bytes, spec_of, write_run,
    written_bytes, Inner, Levels, RunFile,
};
use super::values::{is_segment_name, plan_values, Segment};
use super::MIN_LSM_BUDGET;

/// The compaction thread's state and what it has done.
#[derive(Default)]
pub(crate) struct Compactor {
    state: Mutex<CompactState>,
    cond: Condvar,
    /// Bytes of runs and value log segments written by flushes and compactions since open.
    pub(crate) written: AtomicU64,
    /// Of those, by compactions.
    pub(crate) compacted: AtomicU64,
    /// Bytes of runs compactions moved to the next level without rewriting them.
    pub(crate) moved: AtomicU64,
}

#[derive(Default)]
struct CompactState {
    pending: bool,
    running: bool,
    shutdown: bool,
}

impl Compactor {
    /// Counts a flush's `written` bytes and wakes the compaction thread.
    pub(crate) fn flushed(&self, written: u64) {
        self.written.fetch_add(written, Ordering::Relaxed);
        self.state.lock().pending = true;
        self.cond.notify_all();
    }

    /// Before a flush: while level 0 holds three times `l0` runs, waits for compactions (the
    /// flush thread's stall, which writers feel once the next memtable is full).
    pub(crate) fn wait_for_room(&self, inner: &Inner, spec: &LsmSpec) -> Result<()> {
        loop {
            let l0 = inner.current().files.levels.first().map_or(0, Vec::len);
            if l0 < 3 * spec.l0 {
                return Ok(());
            }
            if let Some(e) = &inner.merge.lock().error {
                return Err(e.clone());
            }
            let mut st = self.state.lock();
            if st.shutdown {
                return Ok(());
            }
            st.pending = true;
            self.cond.notify_all();
            self.cond.wait_for(&mut st, Duration::from_millis(50));
        }
    }

    /// Waits until no compaction runs or is due.
    fn wait_idle(&self, inner: &Inner) -> Result<()> {
        let spec = spec_of(inner);
        loop {
            if let Some(e) = &inner.merge.lock().error {
                return Err(e.clone());
            }
            let mut st = self.state.lock();
            let version = inner.current();
            let files = &version.files;
            let memtable = memtable_limit(inner, files);
            let due = files.next_job(&spec, memtable).is_some()
                || files
                    .collection_job(&files.stale_values(), run_bytes(memtable))
                    .is_some();
            if st.shutdown || (!st.pending && !st.running && !due) {
                return Ok(());
            }
            if due {
                st.pending = true;
                self.cond.notify_all();
            }
            self.cond.wait_for(&mut st, Duration::from_millis(50));
        }
    }

    fn compact_loop(inner: Arc<Inner>) {
        let c = &inner.shared;
        loop {
            {
                let mut st = c.state.lock();
                while !st.pending && !st.shutdown {
                    c.cond.wait(&mut st);
                }
                if st.shutdown {
                    return;
                }
                st.pending = false;
                st.running = true;
            }
            let result = run_jobs(&inner);
            c.state.lock().running = false;
            c.cond.notify_all();
            if let Err(e) = result {
                inner.fail_merges(e);
                return;
            }
        }
    }
}

/// Runs every compaction that is due, one at a time, until none is or the store closes.
fn run_jobs(inner: &Inner) -> Result<()> {
    let spec = spec_of(inner);
    loop {
        if inner.shared.state.lock().shutdown {
            return Ok(());
        }
        let version = inner.current();
        let levels = &version.files;
        let memtable = memtable_limit(inner, levels);
        // A merge that is due; else a run rewritten in its place to collect the value log.
        // Flushes only add to level 0, so nothing can appear below the inputs meanwhile.
        let plan = match levels.next_job(&spec, memtable) {
            Some(job) => levels.plan(job, run_bytes(memtable)),
            None => match levels.collection_job(&levels.stale_values(), run_bytes(memtable)) {
                Some(plan) => plan,
                None => return Ok(()),
            },
        };
        let collect = levels.to_collect(inner.base.options.log_segment_bytes, &plan.inputs);
        let cut = (levels.partitioned && plan.into > 0).then(|| run_bytes(memtable));
        drop(version);
        let start = Instant::now();
        let moved = move_runs(inner, &plan)?;
        let (output, segments) = match plan.inputs.is_empty() {
            true => (Vec::new(), Vec::new()),
            false => write_run(inner, &plan, cut, collect)?,
        };
        let written = written_bytes(&output, &segments);
        let dead = {
            let mut manifest = inner.manifest.lock();
            let current = inner.current();
            let removed = plan.removed();
            let added = output.into_iter().chain(moved).collect();
            let (levels, dead) = current
                .files
                .replace(&removed, added, current.files.flushed_seq)
                .settle_values(segments);
            let next = inner.next_generation.load(Ordering::Relaxed);
            commit(&mut manifest, &levels.manifest(inner.base.store, next))?;
            levels.shed_filters(inner.base.options.memory_budget);
            inner.publish_files(Arc::new(levels), false)?;
            dead
        };
        retire(&plan.inputs, &dead);
        // A moved run's old name goes; the file stays under its new one. A name left by a
        // failed unlink is harmless (the manifest does not hold it) and goes at the next open.
        for m in &plan.moves {
            let _ = inner.storage.unlink(&m.run.name);
        }
        let c = &inner.shared;
        c.written.fetch_add(written, Ordering::Relaxed);
        c.compacted.fetch_add(written, Ordering::Relaxed);
        c.moved.fetch_add(
            plan.moves.iter().map(|m| m.run.table.disk_bytes()).sum(),
            Ordering::Relaxed,
        );
        inner.work.done(start);
        c.cond.notify_all();
    }
}

/// An open `lsm` engine: its state, flush thread and compaction thread.
pub(crate) struct LsmEngine {
    pub(super) inner: Arc<Inner>,
    flusher: Option<JoinHandle<()>>,
    compactor: Option<JoinHandle<()>>,
}

impl LsmEngine {
    /// Waits for the compaction running (a level rewritten whole), then stops both threads;
    /// a frozen memtable not flushed yet stays in the log and is replayed at the next open.
    pub(super) fn stop(&mut self) {
        let c = &self.inner.shared;
        c.state.lock().shutdown = true;
        c.cond.notify_all();
        if let Some(h) = self.compactor.take() {
            let _ = h.join();
        }
        self.inner.stop_merges(self.flusher.take());
    }

    /// Flushes what the memtable holds and waits for the compactions it makes due.
    pub(super) fn compact(&self) -> Result<()> {
        self.inner.compact()?;
        self.wait_compactions()
    }

    /// Waits for flushes and compactions.
    pub(super) fn wait_for_work(&self) -> Result<()> {
        self.inner.wait_merges()?;
        self.wait_compactions()
    }

    /// Waits until no compaction runs or is due (at once when read-only: none ever runs).
    fn wait_compactions(&self) -> Result<()> {
        match self.compactor {
            Some(_) => self.inner.shared.wait_idle(&self.inner),
            None => Ok(()),
        }
    }
}

impl Drop for LsmEngine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// [`Error::InvalidParameter`] for a writer's budget below two memtables.
fn check_budget(options: &StoreOptions) -> Result<()> {
    if options.memory_budget < MIN_LSM_BUDGET && !options.read_only {
        return Err(Error::InvalidParameter {
            name: "memory budget",
            value: options.memory_budget.to_string(),
            expected: "at least 8 KiB for an lsm store (two memtables of 4 KiB)",
        });
    }
    Ok(())
}

/// [`Error::InvalidParameter`] for a shape out of the catalog's ranges (an [`LsmSpec`] built
/// by hand: the catalog's parser checks its own): levels 2 to 64 apart, 1 to 64 runs at
/// level 0, 0 to 64 filter bits a record, 1 to 64 runs a level below, a value log for values
/// of 0 (none) to 16 MiB, the longest value a store takes.
fn check_spec(spec: LsmSpec) -> Result<()> {
    let bad = |name, value: usize, expected| {
        Err(Error::InvalidParameter {
            name,
            value: value.to_string(),
            expected,
        })
    };
    if !(2..=64).contains(&spec.ratio) {
        return bad("lsm ratio", spec.ratio, "from 2 to 64");
    }
    if !(1..=64).contains(&spec.l0) {
        return bad("lsm l0", spec.l0, "from 1 to 64");
    }
    if spec.bits > 64 {
        return bad("lsm bits", spec.bits, "from 0 to 64");
    }
    if !(1..=64).contains(&spec.runs) {
        return bad("lsm runs", spec.runs, "from 1 (leveled) to 64");
    }
    if spec.vmin > MAX_VALUE_BYTES {
        return bad("lsm vmin", spec.vmin, "from 0 (no value log) to 16 MiB");
    }
    Ok(())
}

/// What the `lsm` engine's log is replayed into: a memtable, over the runs.
pub(crate) struct Replay {
    mem: MemTable,
    levels: Levels,
    log_name: String,
}

impl Recover for LsmEngine {
    const FILES: &'static str = "runs";
    const MANY_FILES: bool = true;
    const SEALS_LOG_UNSYNCED: bool = true;
    const LEFTOVERS: Option<fn(&str) -> bool> =
        Some(|name| is_run_name(name) || is_segment_name(name));
    type Replay = Replay;

    fn check_new(identity: &CreateOptions, options: &StoreOptions) -> Result<()> {
        if let Engine::Lsm(spec) = identity.engine {
            check_spec(spec)?;
        }
        check_budget(options)
    }

    fn load(dir: &Path, options: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        check_budget(options)?;
        let storage = &opened.storage;
        let tiered = match opened.identity.engine {
            Engine::Lsm(spec) => spec.tiered(),
            _ => false,
        };
        let corrupt = |what: String| Error::Corrupt {
            file: dir.display().to_string(),
            block: None,
            what: format!("the manifest's runs: {what}"),
        };
        let (runs, segments) = plan_values(&opened.files, &opened.value_refs).map_err(corrupt)?;
        let named: Vec<(String, FileIdentity)> =
            runs.iter().map(|(n, id, _)| (n.clone(), *id)).collect();
        let placed = plan_levels(&named).map_err(corrupt)?;
        let mut levels: Vec<Vec<(u64, Arc<RunFile>)>> = Vec::new();
        // A new file never takes a live file's name.
        let mut open = |name: &str, recorded: &FileIdentity, kind| {
            opened.next_generation = opened.next_generation.max(recorded.generation + 1);
            open_owned(storage, name, recorded, opened.store, kind)
        };
        for ((name, recorded, refs), level) in runs.into_iter().zip(placed) {
            let table = open(&name, &recorded, ByteTableKind::Run)?;
            if levels.len() <= level {
                levels.resize_with(level + 1, Vec::new);
            }
            let run = RunFile::new(table, name, level, recorded, storage, refs, None)?;
            levels[level].push((recorded.generation, run));
        }
        let mut values = Vec::with_capacity(segments.len());
        for (name, recorded) in segments {
            let table = open(&name, &recorded, ByteTableKind::Values)?;
            values.push(Segment::new(table, name, recorded, storage));
        }
        values.sort_by_key(|s| s.generation);
        // Level 0 and tiered levels newest first; partitioned levels in key order.
        for (level, runs) in levels.iter_mut().enumerate() {
            match level > 0 && !tiered {
                true => runs.sort_by(|(_, a), (_, b)| a.first.cmp(&b.first)),
                false => runs.sort_by_key(|(g, _)| std::cmp::Reverse(*g)),
            }
        }
        let static_seq = opened.manifest.static_seq;
        let levels = Levels {
            levels: levels
                .into_iter()
                .map(|l| l.into_iter().map(|(_, r)| r).collect())
                .collect(),
            flushed_seq: static_seq,
            values,
            partitioned: !tiered,
            memory: AtomicUsize::default(),
        };
        levels.check_partitions().map_err(corrupt)?;
        levels.shed_filters(options.memory_budget);
        let replay = Replay {
            mem: MemTable::default(),
            levels,
            log_name: dir.join(WAL_DIR).display().to_string(),
        };
        Ok((replay, static_seq))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        apply_record(&mut state.mem, &state.log_name, seq, record, seq)
    }

    fn finish(state: Replay, r: Recovered) -> Result<LsmEngine> {
        let read_only = r.base.options.read_only;
        let inner = Staged::new(r, state.mem, Arc::new(state.levels));
        let flusher = inner.start_merges();
        let compactor = (!read_only).then(|| {
            let inner = Arc::clone(&inner);
            std::thread::spawn(move || Compactor::compact_loop(inner))
        });
        // A compaction due at the last close runs now.
        if !read_only {
            inner.shared.flushed(0);
        }
        Ok(LsmEngine {
            inner,
            flusher,
            compactor,
        })
    }
}
