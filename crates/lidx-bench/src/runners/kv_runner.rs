//! The checked runner of the YCSB read/write workloads ([`crate::ycsb`]) on updatable on-disk
//! stores ([`crate::kv_store`]): throughput, latency, blocks per read, memory, merges.
//!
//! Paper 002 §10 reports throughput of read-only, write-only and balanced workloads for its
//! hybrid indexes and a disk B+-tree at equal memory, and the memory-throughput curve of
//! Fig. 11. For each store and each of `runs` runs, [`KvBench::run_store`]:
//!
//! 1. builds a **fresh** store from the plan's initial keys on a fresh [`Storage`] (a new
//!    subdirectory of the device's directory that the run creates, `<run>.<random>`, and
//!    removes after it, never an existing one; or a new in-memory simulated device), untimed;
//! 2. runs the plan's streams, one thread each, every operation timed (wall clock and, as
//!    [`crate::disk_runner`] does, thread CPU time + the modeled device time of its requests),
//!    every read **checked** against [`payload_of`]: a wrong payload or a missing key fails the
//!    run with [`BenchError::WrongResult`];
//! 3. calls [`KvStore::wait_for_merges`] and times it separately: the **drain**. Throughput is
//!    given both without and with the drain (`ops / (timed + drain)`), so merge work a store
//!    pushed into the background is not hidden.
//!
//! Throughput is operations over elapsed time: wall time on real files; on simulated devices
//! also the modeled elapsed time ([`lidx::io::SimProfile::elapsed_ns`] of the run's requests
//! and the busiest thread's CPU + modeled time), the figure ratios use there. A writer blocked
//! on a merge (a write stall) spends no CPU and issues no request, so the modeled time adds the
//! run's stall time ([`crate::kv_store::MergeStats::stall_nanos`], summed over writers) divided
//! by the threads: stalls are never hidden by the model. The model gives each thread a core of
//! its own (each thread's time is its own CPU time plus its requests' modeled time) and does
//! not charge time spent waiting for a lock, which spends no CPU; so for a store whose writes
//! hold one exclusive lock ([`KvStore::serializes_writes`], the locked B+-tree) the modeled
//! time is at least the writes' modeled times summed over threads (a read-modify-write's put
//! among them), since no two of them overlap (a lower bound: its reads also wait for its
//! writes, which is not charged). Blocks are reported apart by what read or wrote them, from
//! the device's per-class counters over the timed part: blocks per read
//! are the index's blocks (inner nodes and leaves, [`lidx::io::IoClass::Inner`] and
//! [`lidx::io::IoClass::Leaf`]) over the reads, exact in the read-only workload; in mixed ones
//! the B+-tree's insert path reads through the same classes (the counters are not per
//! operation), so there it is an upper bound, while the hybrid's inserts read nothing. A
//! merge's sequential reads of the old static files ([`lidx::io::IoClass::Data`]) are
//! `merge_read_blocks_per_op`, and every block written (log, merges, B+-tree leaves) is
//! `write_blocks_per_op`. Each record is
//! the run with the median throughput, its latency percentiles over all runs.
//!
//! [`compare`] runs the equal-memory baseline (disk B+-tree, inner nodes resident) and the other
//! stores on the same plan and storage kind and fills their ratios to it; [`curve`] sweeps
//! memory budgets for Fig. 11. Latencies in the [`table`] are modeled on simulated devices, wall
//! otherwise.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use hdrhistogram::Histogram;
use lidx::disk::Resident;
use lidx::io::{DeviceKind, IoClass, IoStats, Storage};

use crate::byte_store::config_bytes;
use crate::disk_report::human_bytes;
use crate::disk_workload::{payload_of, payload_version, versioned_payload};
use crate::error::{BenchError, Result};
use crate::kv_store::{KvStore, MemoryBudget, StoreSpec};
use crate::memory_limit::{reset_resident_peak, resident, MemoryCgroup};
use crate::process_io::WriteAccount;
use crate::records::KvRecord;
use crate::report::Machine;
use crate::runner::Progress;
use crate::runners::core::{new_histogram, on_threads, ThreadRun};
use crate::store_keys::StoreKeys;
use crate::ycsb::{Op, YcsbPlan, YcsbWorkload};

/// Where each run's fresh store lives.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageBase {
    /// Directory under which each run gets a new subdirectory of its own (removed
    /// afterwards; nothing else in it is touched); `None` keeps a simulated device in memory.
    pub dir: Option<PathBuf>,
    /// The device kind.
    pub kind: DeviceKind,
    /// Block size in bytes.
    pub block_size: usize,
    /// LRU cache blocks, shared by a run's files (0 = none).
    pub cache_blocks: usize,
}

impl StorageBase {
    /// A fresh storage for the run `name`, in a new directory `<name>.<random>` this call
    /// creates (issue 30, class 1: the directory `<name>` was emptied first, whoever's it
    /// was). Stores that keep files outside the storage's devices (`needs_dir`: the hybrid's
    /// log and manifest) get a directory even on an in-memory simulated device, under the
    /// system's temporary directory.
    pub(crate) fn fresh(&self, name: &str, needs_dir: bool) -> Result<Arc<Storage>> {
        let parent = match &self.dir {
            Some(base) => Some(base.clone()),
            None if needs_dir => Some(std::env::temp_dir()),
            None => None,
        };
        let storage = match (parent, &self.kind) {
            (Some(parent), kind) => {
                let made = tempfile::Builder::new()
                    .prefix(&format!("{name}."))
                    .tempdir_in(&parent)
                    .map_err(|source| BenchError::Io {
                        path: parent.clone(),
                        source,
                    })?;
                Storage::new(&made.keep(), kind.clone(), self.block_size)?
            }
            (None, DeviceKind::Sim(profile)) => {
                Storage::in_memory(profile.clone(), self.block_size)?
            }
            (None, DeviceKind::File { .. } | DeviceKind::FileCached) => {
                return Err(BenchError::BadSpec {
                    what: "device",
                    got: "a file device without a directory".to_string(),
                    expected: "file:<dir>".to_string(),
                })
            }
        };
        // One cache for all of a run's files: a store of many files (the `lsm` engine's runs, a
        // table and the one a merge writes) gets the run's cache, not that much per file.
        Ok(Arc::new(storage.with_shared_cache(self.cache_blocks)))
    }

    /// Removes the directory [`StorageBase::fresh`] made for a run.
    pub(crate) fn clean(&self, storage: &Storage) -> Result<()> {
        if let Some(dir) = storage.dir() {
            remove_dir(dir)?;
        }
        Ok(())
    }
}

fn remove_dir(dir: &std::path::Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(BenchError::Io {
            path: dir.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// The start of the names of the memory cgroups process `pid`'s runs enter
/// (`lidx-ycsb-<pid>-<run>`), so that a parent finds those of a child killed inside them
/// ([`crate::memory_limit::reap_cgroups`]).
pub fn cgroup_prefix(pid: u32) -> String {
    format!("lidx-ycsb-{pid}-")
}

/// What to run on each store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvBenchConfig {
    /// Operations per run, all threads together.
    pub ops: usize,
    /// Threads, each with its own stream.
    pub threads: usize,
    /// Runs (fresh store each); the record is the median run.
    pub runs: usize,
    /// Seed of the plan.
    pub seed: u64,
    /// Bytes of payload per key.
    pub payload_size: usize,
    /// Each run (build, timed part, drain) in a memory cgroup of this many bytes
    /// ([`MemoryCgroup`]): the engines' heaps and the page cache they fault in together.
    pub memory_limit: Option<u64>,
}

/// Builds a store on a fresh storage from the initial keys.
pub type BuildFn<'f> = dyn Fn(Arc<Storage>, &[u64]) -> Result<Box<dyn KvStore<u64>>> + 'f;

/// One workload's plan, ready to run on stores.
pub struct KvBench<'a> {
    dataset: &'a str,
    key_bytes: Arc<StoreKeys>,
    plan: YcsbPlan,
    base: &'a StorageBase,
    config: KvBenchConfig,
}

/// One run's measurements.
struct RunFigures {
    primary: f64,
    wall: f64,
    wall_drain: f64,
    modeled: Option<f64>,
    primary_drain: f64,
    io: IoStats,
    reads: u64,
    build_s: f64,
    drain_s: f64,
    memory: u64,
    memory_end: u64,
    disk: u64,
    describe: String,
    config: String,
    merges: crate::kv_store::MergeStats,
    rss_peak: Option<u64>,
    cgroup_peak: Option<u64>,
    load_written: Option<u64>,
    run_written: Option<u64>,
}

impl<'a> KvBench<'a> {
    /// Generates `workload`'s plan over the sorted unique `keys`, which stores through the API
    /// write as `key_bytes` makes them.
    pub fn new(
        dataset: &'a str,
        keys: &[u64],
        key_bytes: Arc<StoreKeys>,
        workload: YcsbWorkload,
        base: &'a StorageBase,
        config: KvBenchConfig,
    ) -> Result<Self> {
        let plan = YcsbPlan::generate(workload, keys, config.ops, config.threads, config.seed)?;
        Ok(KvBench {
            dataset,
            key_bytes,
            plan,
            base,
            config,
        })
    }

    /// The plan.
    pub fn plan(&self) -> &YcsbPlan {
        &self.plan
    }

    /// Builds and runs `spec` (its budget already in bytes, see [`StoreSpec::resolve`]).
    pub fn run_spec(&self, spec: &StoreSpec, progress: &mut dyn Progress) -> Result<KvRecord> {
        self.run_spec_within(spec, None, progress)
    }

    /// [`Self::run_spec`], skipping the store when, built, it leaves less than
    /// [`MIN_WRITE_ROOM`] of `budget` ([`Self::run_curve_point`]).
    fn run_spec_within(
        &self,
        spec: &StoreSpec,
        budget: Option<u64>,
        progress: &mut dyn Progress,
    ) -> Result<KvRecord> {
        let size = self.config.payload_size;
        self.check(spec)?;
        let spec = &self.sized(spec);
        let build =
            |storage: Arc<Storage>, keys: &[u64]| spec.build(storage, keys, &self.key_bytes, size);
        let mut record =
            self.run_store_within(&spec.label(), spec.needs_dir(), &build, budget, progress)?;
        record.memory_budget = spec.memory_budget();
        if record.config.is_empty() && record.skipped.is_none() {
            record.config = self.lidx_config(spec);
        }
        Ok(record)
    }

    /// `spec` as it runs on this plan: a peer sized from the run's memory limit for the
    /// workload ([`StoreSpec::for_run`]).
    fn sized(&self, spec: &StoreSpec) -> StoreSpec {
        spec.for_run(self.config.memory_limit, self.plan.workload)
    }

    /// The label of `spec`'s records on this plan.
    pub fn label_of(&self, spec: &StoreSpec) -> String {
        self.sized(spec).label()
    }

    /// The configuration line of one of lidx's stores (a peer's is its own,
    /// [`crate::byte_store::ByteStore::config`]): its budget and the run's cache.
    fn lidx_config(&self, spec: &StoreSpec) -> String {
        let (blocks, block) = (self.base.cache_blocks, self.base.block_size as u64);
        let cache = if blocks == 0 {
            "cache=none".to_string()
        } else {
            format!(
                "cache={blocks}x{}={} shared by the store's files (O_DIRECT)",
                config_bytes(block),
                config_bytes(blocks as u64 * block)
            )
        };
        let budget = spec
            .memory_budget()
            .map_or("budget=default".to_string(), |b| {
                format!("budget={}", config_bytes(b))
            });
        let line = match spec {
            StoreSpec::Store(s) if matches!(s.engine, lidx::kv::Engine::Log(_)) => {
                "map on the heap (no budget), records read through the mapped log (OS page \
                 cache)"
                    .to_string()
            }
            StoreSpec::BTree { .. } => format!("inner nodes resident {cache}"),
            StoreSpec::Map(_) => format!("memory as its parameters set it, no budget {cache}"),
            _ => format!("{budget} {cache}"),
        };
        match spec {
            StoreSpec::Store(s) if s.row_cache_bytes > 0 => format!(
                "{line} row_cache={}",
                config_bytes(s.row_cache_bytes as u64)
            ),
            _ => line,
        }
    }

    /// Refuses `spec` on this plan before anything runs: keys it does not take, or a workload
    /// with scans on a store without an ordered scan.
    pub fn check(&self, spec: &StoreSpec) -> Result<()> {
        spec.check_keys(self.dataset, &self.key_bytes)?;
        let unordered_log = matches!(
            spec,
            StoreSpec::Store(s) if matches!(
                s.engine,
                lidx::kv::Engine::Log(lidx::kv::LogSpec {
                    map: lidx::mem::MapSpec::Hash {},
                    ..
                })
            )
        );
        if self.plan.workload.scans() && (spec.is_adapter() || unordered_log) {
            return Err(BenchError::BadSpec {
                what: "store for a workload with scans",
                got: spec.label(),
                expected: "a store through the API (hybrid, btree, log:<map>) over an ordered \
                           map: the typed adapters have no ordered scan, and log:hash scans by a \
                           pass over every key"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// [`Self::run_spec`] for a point of [`curve`]'s budget sweep: under a workload that writes,
    /// a budget that leaves the dynamic stage less than [`MIN_WRITE_ROOM`] beside what the store
    /// holds built makes it merge every few writes, each merge rewriting the whole table
    /// (002-fig11's 25% and 50% points on small data: 43 minutes and more for 20K inserts), so
    /// such a point is a skipped record saying why. A budget given to [`compare`] runs as given.
    fn run_curve_point(&self, spec: &StoreSpec, progress: &mut dyn Progress) -> Result<KvRecord> {
        // Only a hybrid's budget bounds a dynamic stage that merges when full.
        let hybrid = match spec {
            StoreSpec::Hybrid(_) => true,
            StoreSpec::Store(s) => s.engine == lidx::kv::Engine::Hybrid,
            _ => false,
        };
        let room_for_writes = spec
            .memory_budget()
            .filter(|_| hybrid && self.plan.workload.writes());
        self.run_spec_within(spec, room_for_writes, progress)
    }

    /// Runs the plan `runs` times on stores `build` makes (on a storage with a directory when
    /// `needs_dir`), checking every read.
    pub fn run_store(
        &self,
        label: &str,
        needs_dir: bool,
        build: &BuildFn<'_>,
        progress: &mut dyn Progress,
    ) -> Result<KvRecord> {
        self.run_store_within(label, needs_dir, build, None, progress)
    }

    /// [`Self::run_store`], skipping the store (a record saying why) when, built, it leaves
    /// less than [`MIN_WRITE_ROOM`] of `budget` for its writes.
    fn run_store_within(
        &self,
        label: &str,
        needs_dir: bool,
        build: &BuildFn<'_>,
        budget: Option<u64>,
        progress: &mut dyn Progress,
    ) -> Result<KvRecord> {
        let runs = self.config.runs.max(1);
        let ops = self.plan.ops() as u64;
        let mut wall_all = new_histogram();
        let mut modeled_all = new_histogram();
        let mut figures = Vec::with_capacity(runs);
        let mut device = String::new();
        let workload = self.plan.workload.label();
        progress.begin(&format!("{workload} {label}"), ops * runs as u64);
        for run in 0..runs {
            let name = format!("ycsb-{workload}-{}-{run}", sanitize(label));
            let storage = self.base.fresh(&name, needs_dir)?;
            let rss_before = reset_resident_peak().then(resident).flatten();
            let cgroup = self
                .config
                .memory_limit
                .map(|limit| {
                    let name = format!("{}{run}", cgroup_prefix(std::process::id()));
                    MemoryCgroup::enter(&name, limit)
                })
                .transpose()?;
            let built = Instant::now();
            let written_before = WriteAccount::now();
            let store = build(Arc::clone(&storage), &self.plan.init)?;
            let build_s = built.elapsed().as_secs_f64();
            let written_built = WriteAccount::now();
            let memory = store.memory_bytes() as u64;
            if let Some(budget) = budget.filter(|&b| memory + MIN_WRITE_ROOM > b) {
                drop(store);
                self.base.clean(&storage)?;
                progress.end();
                let why = format!(
                    "its budget of {} leaves under 16 KiB for writes beside the {} it holds \
                     built, so it would merge every few writes; give it a budget of at least {}",
                    human_bytes(budget),
                    human_bytes(memory),
                    human_bytes(memory + MIN_WRITE_ROOM)
                );
                let _ = writeln!(std::io::stderr(), "skipped {label} on {workload}: {why}");
                return Ok(self.skipped(label, why));
            }
            let merges_before = store.merge_stats();
            let (threads, io, elapsed_ns) = self.timed(label, store.as_ref(), &storage)?;
            let stall_ns =
                store.merge_stats().since(&merges_before).stall_nanos / threads.len() as u64;
            let drain_started = Instant::now();
            store.wait_for_merges()?;
            let drain_ns = drain_started.elapsed().as_nanos() as u64;
            let written_end = WriteAccount::now();
            // A simulated device's bytes are its own (a file-backed one writes its file back
            // only at sync), not what the process sends to storage: no figure there.
            let real = storage.kind().is_file();
            let since = |a: Option<WriteAccount>, b: Option<WriteAccount>| {
                a.zip(b).filter(|_| real).and_then(|(a, b)| a.until(b))
            };
            let rss_peak = rss_before
                .zip(resident())
                .map(|((before, _), (_, peak))| peak.saturating_sub(before));
            let cgroup_peak = cgroup.as_ref().and_then(MemoryCgroup::peak_bytes);

            let mut busiest = 0;
            let mut reads = 0;
            let mut serialized = 0;
            for t in &threads {
                busiest = busiest.max(t.modeled_ns);
                if store.serializes_writes() {
                    serialized += t.write_modeled_ns;
                }
                reads += t.reads;
                wall_all.add(&t.wall).expect("same histogram bounds");
                modeled_all.add(&t.modeled).expect("same histogram bounds");
            }
            let per_s = |ns: u64| ops as f64 / (ns.max(1) as f64 / 1e9);
            let modeled_ns = match storage.kind() {
                DeviceKind::Sim(profile) => {
                    Some(profile.elapsed_ns(&io, busiest.max(serialized)) + stall_ns)
                }
                DeviceKind::File { .. } | DeviceKind::FileCached => None,
            };
            let primary_ns = modeled_ns.unwrap_or(elapsed_ns);
            figures.push(RunFigures {
                primary: per_s(primary_ns),
                primary_drain: per_s(primary_ns + drain_ns),
                wall: per_s(elapsed_ns),
                wall_drain: per_s(elapsed_ns + drain_ns),
                modeled: modeled_ns.map(per_s),
                io,
                reads,
                build_s,
                drain_s: drain_ns as f64 / 1e9,
                memory,
                memory_end: store.memory_bytes() as u64,
                disk: store.disk_bytes(),
                describe: store.describe(),
                config: store.config(),
                merges: store.merge_stats().since(&merges_before),
                rss_peak,
                cgroup_peak,
                load_written: since(written_before, written_built),
                run_written: since(written_built, written_end),
            });
            drop(store);
            device = storage.describe();
            self.base.clean(&storage)?;
            drop(cgroup);
            progress.advance(ops);
        }
        progress.end();

        figures.sort_by(|a, b| a.primary.total_cmp(&b.primary));
        let m = &figures[figures.len() / 2];
        let simulated = matches!(self.base.kind, DeviceKind::Sim(_));
        let pct = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e3;
        let machine = Machine::detect();
        let ops_f = ops.max(1) as f64;
        Ok(KvRecord {
            schema: crate::records::RecordKind::Ycsb.schema(),
            command: crate::records::command_line(),
            dataset: self.dataset.to_string(),
            n_init: self.plan.init.len() as u64,
            workload: workload.to_string(),
            store: label.to_string(),
            describe: m.describe.clone(),
            device,
            block_size: self.base.block_size as u64,
            threads: self.plan.streams.len() as u64,
            ops,
            reads: m.reads,
            inserts: ops - m.reads,
            runs: runs as u64,
            memory_budget: None,
            memory_bytes: m.memory,
            memory_end_bytes: m.memory_end,
            disk_bytes: m.disk,
            build_s: m.build_s,
            ops_per_s: m.primary,
            ops_per_s_incl_drain: m.primary_drain,
            wall_ops_per_s: m.wall,
            wall_ops_per_s_incl_drain: m.wall_drain,
            modeled_ops_per_s: m.modeled,
            wall_p50_us: pct(&wall_all, 0.5),
            wall_p99_us: pct(&wall_all, 0.99),
            wall_p999_us: pct(&wall_all, 0.999),
            modeled_p50_us: simulated.then(|| pct(&modeled_all, 0.5)),
            modeled_p99_us: simulated.then(|| pct(&modeled_all, 0.99)),
            modeled_p999_us: simulated.then(|| pct(&modeled_all, 0.999)),
            blocks_per_read: (m.reads > 0).then(|| {
                let index = m.io.class_read_blocks[IoClass::Inner as usize]
                    + m.io.class_read_blocks[IoClass::Leaf as usize];
                index as f64 / m.reads as f64
            }),
            read_blocks_per_op: m.io.read_blocks as f64 / ops_f,
            merge_read_blocks_per_op: m.io.class_read_blocks[IoClass::Data as usize] as f64 / ops_f,
            write_blocks_per_op: m.io.write_blocks as f64 / ops_f,
            merges: m.merges.merges,
            merge_s: m.merges.merge_nanos as f64 / 1e9,
            write_stalls: m.merges.write_stalls,
            drain_s: m.drain_s,
            speedup_vs_btree: None,
            memory_vs_btree: None,
            seed: self.config.seed,
            cpu: machine.cpu,
            cores: machine.cores,
            lidx_version: env!("CARGO_PKG_VERSION").to_string(),
            load_records_per_s: self.plan.init.len() as f64 / m.build_s.max(1e-9),
            disk_bytes_per_record: m.disk as f64 / self.records_at_end().max(1) as f64,
            rss_peak_bytes: m.rss_peak,
            memory_limit: self.config.memory_limit,
            cgroup_peak_bytes: m.cgroup_peak,
            skipped: None,
            config: m.config.clone(),
            load_written_bytes: m.load_written,
            load_put_bytes: self.put_bytes(self.plan.init.iter().copied()),
            run_written_bytes: m.run_written,
            run_put_bytes: self.put_bytes(self.plan.streams.iter().flatten().filter_map(|op| {
                match *op {
                    Op::Insert(k) | Op::Update(k, _) | Op::ReadModifyWrite(k, _) => Some(k),
                    Op::Read(_) | Op::Scan(..) => None,
                }
            })),
        })
    }

    /// Bytes of keys and values a put of each of `keys` writes.
    fn put_bytes(&self, keys: impl IntoIterator<Item = u64>) -> u64 {
        keys.into_iter()
            .map(|k| (self.key_bytes.with(k, <[u8]>::len) + self.config.payload_size) as u64)
            .sum()
    }

    /// Records a store holds after the plan: the initial keys and the new keys inserted.
    fn records_at_end(&self) -> u64 {
        let inserted = self.plan.streams.iter().flatten();
        let inserted = inserted.filter(|op| matches!(op, Op::Insert(_))).count();
        (self.plan.init.len() + inserted) as u64
    }

    /// The record of a store whose run failed (`failed: <why>`, [`KvRecord::failure`]).
    pub fn failed(&self, label: &str, why: &str) -> KvRecord {
        self.skipped(label, format!("{}{why}", KvRecord::FAILED))
    }

    /// The record of a store that could not run: `why`, and what the plan was.
    pub fn skipped(&self, label: &str, why: String) -> KvRecord {
        KvRecord {
            dataset: self.dataset.to_string(),
            n_init: self.plan.init.len() as u64,
            workload: self.plan.workload.label().to_string(),
            store: label.to_string(),
            block_size: self.base.block_size as u64,
            threads: self.plan.streams.len() as u64,
            ops: self.plan.ops() as u64,
            runs: self.config.runs as u64,
            seed: self.config.seed,
            memory_limit: self.config.memory_limit,
            lidx_version: env!("CARGO_PKG_VERSION").to_string(),
            skipped: Some(why),
            ..KvRecord::default()
        }
    }

    /// The timed part: every stream on its own thread. Returns the threads' measurements, the
    /// storage's I/O and the elapsed wall time.
    fn timed(
        &self,
        label: &str,
        store: &dyn KvStore<u64>,
        storage: &Storage,
    ) -> Result<(Vec<ThreadRun>, IoStats, u64)> {
        let before = storage.stats();
        let started = Instant::now();
        let modeled = matches!(storage.kind(), DeviceKind::Sim(_));
        let results = on_threads(self.plan.streams.iter(), |stream| {
            run_stream(label, store, stream, modeled)
        });
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        let io = storage.stats() - before;
        Ok((results?, io, elapsed_ns))
    }
}

/// Runs one stream on this thread, checking every read: a value must be one its key was
/// given ([`payload_version`]), a scan must start at its (present) start key and go up.
/// `modeled`: the run reports modeled time (a simulated device), so each operation's thread
/// CPU time is measured too.
fn run_stream(
    label: &str,
    store: &dyn KvStore<u64>,
    stream: &[Op],
    modeled: bool,
) -> Result<ThreadRun> {
    let size = store.payload_size();
    let (mut got, mut want) = (vec![0u8; size], vec![0u8; size]);
    let mut entries = Vec::new();
    let mut run = if modeled {
        ThreadRun::new()
    } else {
        ThreadRun::wall_only()
    };
    for &op in stream {
        match op {
            Op::Insert(key) => {
                payload_of(key, &mut want);
                let before = run.modeled_ns;
                run.time(|| Ok(store.put(key, &want)?))?;
                run.write_modeled_ns += run.modeled_ns - before;
            }
            Op::Read(key) => {
                run.reads += 1;
                let found = run.time(|| Ok(store.get(&key, &mut got)?))?;
                check_value(label, "get", key, found, &got)?;
            }
            Op::Update(key, version) => {
                versioned_payload(key, version, &mut want);
                let before = run.modeled_ns;
                run.time(|| Ok(store.put(key, &want)?))?;
                run.write_modeled_ns += run.modeled_ns - before;
            }
            Op::ReadModifyWrite(key, version) => {
                run.reads += 1;
                // One operation, timed whole; for a store that serializes its writes the
                // put is also one of them (two more clock reads, about 0.5 us each, so only
                // there).
                let clock = store.serializes_writes().then(|| run.modeled_clock());
                let mut put_ns = 0;
                let found = run.time(|| {
                    let found = store.get(&key, &mut got)?;
                    versioned_payload(key, version, &mut want);
                    match &clock {
                        Some(clock) => {
                            let before = clock();
                            store.put(key, &want)?;
                            put_ns = clock().saturating_sub(before);
                        }
                        None => store.put(key, &want)?,
                    }
                    Ok(found)
                })?;
                run.write_modeled_ns += put_ns;
                check_value(label, "read-modify-write", key, found, &got)?;
            }
            Op::Scan(key, len) => {
                run.reads += 1;
                let scanned = run.time(|| Ok(store.scan(&key, len as usize, &mut entries)?))?;
                check_scan(label, key, len as usize, scanned, &entries)?;
            }
        }
    }
    Ok(run)
}

/// Checks that a read of `key` found a value the key was given.
fn check_value(label: &str, op: &'static str, key: u64, found: bool, got: &[u8]) -> Result<()> {
    if found && payload_version(key, got).is_some() {
        return Ok(());
    }
    Err(BenchError::WrongResult {
        index: label.to_string(),
        op,
        key,
        what: if found {
            format!("payload {got:?} is no version of the key's")
        } else {
            "the key was not found".to_string()
        },
    })
}

/// Checks a scan of at most `len` entries from the present key `start`.
fn check_scan(
    label: &str,
    start: u64,
    len: usize,
    scanned: bool,
    entries: &[(u64, Vec<u8>)],
) -> Result<()> {
    let wrong = |what: String| BenchError::WrongResult {
        index: label.to_string(),
        op: "scan",
        key: start,
        what,
    };
    if !scanned {
        return Err(wrong("the store has no ordered scan".to_string()));
    }
    if entries.first().map(|e| e.0) != Some(start) || entries.len() > len {
        return Err(wrong(format!(
            "{} entries from {:?}, expected up to {len} from the start key",
            entries.len(),
            entries.first().map(|e| e.0)
        )));
    }
    if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(wrong("the keys do not go up".to_string()));
    }
    for (key, value) in entries {
        check_value(label, "scan", *key, true, value)?;
    }
    Ok(())
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Fills `speedup_vs_btree` and `memory_vs_btree` of every record from the record of the
/// store labelled `reference` on the same workload.
pub fn fill_ratios(records: &mut [KvRecord], reference: &str) {
    let bases: Vec<(String, f64, u64)> = records
        .iter()
        .filter(|r| r.store == reference && r.skipped.is_none())
        .map(|r| (r.workload.clone(), r.ops_per_s, r.memory_bytes))
        .collect();
    for r in records.iter_mut().filter(|r| r.skipped.is_none()) {
        if let Some((_, ops, memory)) = bases.iter().find(|(w, _, _)| *w == r.workload) {
            r.speedup_vs_btree = Some(r.ops_per_s / ops);
            r.memory_vs_btree = Some(r.memory_bytes as f64 / (*memory).max(1) as f64);
        }
    }
}

/// What [`compare`] and [`curve`] run on: the dataset's sorted unique keys, where stores
/// live, and the run parameters.
#[derive(Debug, Clone, Copy)]
pub struct KvSetup<'a> {
    /// Dataset name for reports.
    pub dataset: &'a str,
    /// Sorted unique keys: the dataset's own `u64` keys, or ranks into `key_bytes`.
    pub keys: &'a [u64],
    /// What each key is as a store's byte key ([`StoreKeys`]).
    pub key_bytes: &'a Arc<StoreKeys>,
    /// Where each run's store lives.
    pub base: &'a StorageBase,
    /// Run parameters.
    pub config: KvBenchConfig,
}

impl<'a> KvSetup<'a> {
    fn bench(&self, workload: YcsbWorkload) -> Result<KvBench<'a>> {
        KvBench::new(
            self.dataset,
            self.keys,
            Arc::clone(self.key_bytes),
            workload,
            self.base,
            self.config,
        )
    }
}

/// Where [`compare`] runs one store on one workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAt {
    /// The workload's index in [`compare`]'s list.
    pub workload: usize,
    /// The store's index in [`compare`]'s list (0: the reference).
    pub store: usize,
    /// The reference's memory at the start and at the end of its run on this workload, which
    /// the store's relative budget was resolved against ([`StoreSpec::resolve`]); zeros for
    /// the reference itself.
    pub reference: (u64, u64),
}

/// How [`compare`] runs one store on one workload: in this process ([`InProcess`]) or in a
/// child process of its own (`lidx ycsb`'s, [`crate::kv_child`]), so that a store killed by
/// its memory cgroup or crashing takes only its own record down.
pub trait RunOne {
    /// Runs `spec` (its budget resolved: [`StoreSpec::resolve`]) on `bench`'s plan; the store
    /// is the one `at` names. A store that cannot run is a skipped record, one whose run
    /// failed may be a failed one ([`KvBench::failed`]).
    fn run_one(
        &mut self,
        bench: &KvBench<'_>,
        at: RunAt,
        spec: &StoreSpec,
        progress: &mut dyn Progress,
    ) -> Result<KvRecord>;
}

/// Runs each store in this process: a peer that cannot be created is a skipped record, any
/// other failure ends [`compare`].
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcess;

impl RunOne for InProcess {
    fn run_one(
        &mut self,
        bench: &KvBench<'_>,
        _: RunAt,
        spec: &StoreSpec,
        progress: &mut dyn Progress,
    ) -> Result<KvRecord> {
        run_here(bench, spec, progress)
    }
}

/// Runs `spec` on `bench` in this process; a peer that cannot be created is a skipped
/// record saying why.
pub fn run_here(
    bench: &KvBench<'_>,
    spec: &StoreSpec,
    progress: &mut dyn Progress,
) -> Result<KvRecord> {
    match bench.run_spec(spec, progress) {
        Err(BenchError::PeerUnavailable { engine, why }) => {
            progress.end();
            let _ = writeln!(std::io::stderr(), "skipped peer {engine}: {why}");
            Ok(bench.skipped(&bench.label_of(spec), why))
        }
        other => other,
    }
}

/// Runs `stores` on each workload in this process ([`compare_with`] and [`InProcess`]).
pub fn compare(
    setup: &KvSetup<'_>,
    workloads: &[YcsbWorkload],
    stores: &[StoreSpec],
    progress: &mut dyn Progress,
) -> Result<Vec<KvRecord>> {
    compare_with(setup, workloads, stores, &mut InProcess, progress)
}

/// Runs `stores` on each workload, the first one (the reference) first, each through
/// `runner`: percentage and `btree-peak` budgets of the others are resolved against its
/// memory at the start and the end of its run, and every record's ratios are to it. The
/// reference itself cannot take a relative budget ([`BenchError::BadSpec`]); with no stores,
/// the equal-memory B+-tree adapter ([`StoreSpec::baseline`]) runs alone. Every store is
/// checked against every workload's plan before the first runs ([`KvBench::check`]). When the
/// reference's run failed, a store with a relative budget is a skipped record saying so.
pub fn compare_with(
    setup: &KvSetup<'_>,
    workloads: &[YcsbWorkload],
    stores: &[StoreSpec],
    runner: &mut dyn RunOne,
    progress: &mut dyn Progress,
) -> Result<Vec<KvRecord>> {
    let baseline = [StoreSpec::baseline()];
    let stores = if stores.is_empty() {
        &baseline[..]
    } else {
        stores
    };
    let reference = &stores[0];
    for spec in stores {
        spec.check_keys(setup.dataset, setup.key_bytes)?;
    }
    if reference.relative_budget() {
        return Err(BenchError::BadSpec {
            what: "memory budget of the reference store",
            got: reference.label(),
            expected: "bytes: the first store is the reference others' percentages are of; \
                       put a store without a budget (btree, adapter:btree) first"
                .to_string(),
        });
    }
    let mut benches = Vec::with_capacity(workloads.len());
    for &workload in workloads {
        let bench = setup.bench(workload)?;
        for spec in stores {
            bench.check(spec)?;
        }
        benches.push(bench);
    }
    let mut records = Vec::new();
    // The label does not change with the workload (a peer's memory limit is in it, not what
    // it makes of the workload).
    let reference_label = benches
        .first()
        .map_or_else(|| reference.label(), |b| b.label_of(reference));
    for (w, bench) in benches.iter().enumerate() {
        let at = |store, reference| RunAt {
            workload: w,
            store,
            reference,
        };
        let first = runner.run_one(bench, at(0, (0, 0)), reference, progress)?;
        let memory = first
            .skipped
            .is_none()
            .then_some((first.memory_bytes, first.memory_end_bytes));
        records.push(first);
        for (s, spec) in stores.iter().enumerate().skip(1) {
            let record = match memory {
                None if spec.relative_budget() => bench.skipped(
                    &bench.label_of(spec),
                    "its budget is a share of the reference's memory, and the reference did \
                     not run"
                        .to_string(),
                ),
                _ => {
                    let (start, end) = memory.unwrap_or((0, 0));
                    let resolved = spec.resolve(start, end);
                    runner.run_one(bench, at(s, (start, end)), &resolved, progress)?
                }
            };
            records.push(record);
        }
    }
    fill_ratios(&mut records, &reference_label);
    Ok(records)
}

/// The least room a budget of [`curve`] must leave a hybrid's dynamic stage for a workload that
/// writes (a point that leaves less is a skipped record): 16 KiB, about 1,300 entries of the most compact stage
/// (sorted runs, 12 bytes an entry, whose insertion buffer alone takes 6 KiB), so a merge comes
/// every few hundred writes at most (at 17 KB of room, 002-fig11's 200% point merged every 530).
pub const MIN_WRITE_ROOM: u64 = 16 * 1024;

/// Paper 002 Fig. 11: on each workload, the B+-tree with 0, 1, ... resident levels (up to all
/// inner nodes) and `hybrid` at each of `budgets` (percentages of the all-inner B+-tree's
/// memory). Ratios filled.
pub fn curve(
    setup: &KvSetup<'_>,
    workloads: &[YcsbWorkload],
    hybrid: &StoreSpec,
    budgets: &[MemoryBudget],
    progress: &mut dyn Progress,
) -> Result<Vec<KvRecord>> {
    StoreSpec::baseline().check_keys(setup.dataset, setup.key_bytes)?;
    let mut records = Vec::new();
    for &workload in workloads {
        let bench = setup.bench(workload)?;
        let baseline = bench.run_spec(&StoreSpec::baseline(), progress)?;
        let (btree_memory, btree_peak) = (baseline.memory_bytes, baseline.memory_end_bytes);
        for levels in 0.. {
            let spec = StoreSpec::BTree {
                resident: Resident::TopLevels(levels),
                fill_factor: 1.0,
            };
            let record = bench.run_spec(&spec, progress)?;
            let all = record.memory_bytes >= btree_memory;
            if !all {
                records.push(record);
            }
            if all || levels >= 16 {
                break;
            }
        }
        records.push(baseline);
        for &budget in budgets {
            let spec = hybrid.with_budget(budget).resolve(btree_memory, btree_peak);
            records.push(bench.run_curve_point(&spec, progress)?);
        }
    }
    fill_ratios(&mut records, &StoreSpec::baseline().label());
    Ok(records)
}

/// The terminal table: one row per record, ratios to the reference beside (the first store of
/// [`compare`], the all-inner B+-tree of [`curve`]).
pub fn table(records: &[KvRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "workload",
        "store",
        "memory",
        "mem/ref",
        "disk",
        "Kops/s",
        "+drain",
        "x ref",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "blocks/read",
        "merge blk/op",
        "written blk/op",
        "merges",
        "stalls",
        "load Krec/s",
        "disk B/rec",
        "RSS peak",
        "write amp",
    ]);
    let ratio = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    for r in records {
        if let Some(why) = &r.skipped {
            let why = match r.failure() {
                Some(_) => why.clone(),
                None => format!("skipped: {why}"),
            };
            table.add_row(vec![r.workload.clone(), r.store.clone(), why]);
            continue;
        }
        let (p50, p99, p999) = match (r.modeled_p50_us, r.modeled_p99_us, r.modeled_p999_us) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => (r.wall_p50_us, r.wall_p99_us, r.wall_p999_us),
        };
        table.add_row(vec![
            r.workload.clone(),
            r.store.clone(),
            human_bytes(r.memory_bytes),
            ratio(r.memory_vs_btree),
            human_bytes(r.disk_bytes),
            format!("{:.2}", r.ops_per_s / 1e3),
            format!("{:.2}", r.ops_per_s_incl_drain / 1e3),
            ratio(r.speedup_vs_btree),
            format!("{p50:.1}"),
            format!("{p99:.1}"),
            format!("{p999:.1}"),
            r.blocks_per_read
                .map_or("-".to_string(), |b| format!("{b:.3}")),
            format!("{:.3}", r.merge_read_blocks_per_op),
            format!("{:.3}", r.write_blocks_per_op),
            r.merges.to_string(),
            r.write_stalls.to_string(),
            format!("{:.1}", r.load_records_per_s / 1e3),
            format!("{:.0}", r.disk_bytes_per_record),
            r.rss_peak_bytes.map_or("-".to_string(), human_bytes),
            write_amps(r),
        ]);
    }
    for column in table.column_iter_mut().skip(2) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}

/// The table's write amplification cell: the load's, then the timed part's (with its drain)
/// where it put anything, `-` where the kernel keeps no account.
fn write_amps(r: &KvRecord) -> String {
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    match r.run_put_bytes {
        0 => show(r.load_write_amp()),
        _ => format!("{} / {}", show(r.load_write_amp()), show(r.run_write_amp())),
    }
}

/// The lines under the [`table`]: each store's configuration ([`KvRecord::config`]), once per
/// store and configuration with the workloads it ran them on.
pub fn config_lines(records: &[KvRecord]) -> String {
    let mut seen: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for r in records.iter().filter(|r| !r.config.is_empty()) {
        match seen
            .iter_mut()
            .find(|(store, config, _)| *store == r.store && *config == r.config)
        {
            Some((_, _, workloads)) => workloads.push(&r.workload),
            None => seen.push((&r.store, &r.config, vec![&r.workload])),
        }
    }
    let mut out = String::new();
    for (store, config, workloads) in seen {
        out.push_str(&format!(
            "config of {store} ({}): {config}\n",
            workloads.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use parking_lot::Mutex;

    use super::*;

    /// A store of 8-byte payloads in a `BTreeMap`; `.1`: whether it says its writes are
    /// serialized.
    struct MapStore(Mutex<BTreeMap<u64, Vec<u8>>>, bool);

    impl KvStore<u64> for MapStore {
        fn get(&self, key: &u64, payload: &mut [u8]) -> lidx::Result<bool> {
            Ok(match self.0.lock().get(key) {
                Some(v) => {
                    payload.copy_from_slice(v);
                    true
                }
                None => false,
            })
        }
        fn put(&self, key: u64, payload: &[u8]) -> lidx::Result<()> {
            self.0.lock().insert(key, payload.to_vec());
            Ok(())
        }
        fn payload_size(&self) -> usize {
            8
        }
        fn memory_bytes(&self) -> usize {
            0
        }
        fn disk_bytes(&self) -> u64 {
            0
        }
        fn describe(&self) -> String {
            "map".to_string()
        }
        fn serializes_writes(&self) -> bool {
            self.1
        }
    }

    /// A read-modify-write's put is a write for the serialized-write accounting: a store
    /// that serializes its writes serializes it too. Plain reads add nothing, and a store
    /// whose writes overlap is not clocked for it.
    #[test]
    fn a_read_modify_write_counts_its_put_as_a_write() {
        let store = MapStore(Mutex::new(BTreeMap::new()), true);
        let mut payload = [0u8; 8];
        for key in 0..100u64 {
            payload_of(key, &mut payload);
            store.put(key, &payload).unwrap();
        }
        let reads: Vec<Op> = (0..100u64).map(Op::Read).collect();
        let run = run_stream("map", &store, &reads, true).unwrap();
        assert_eq!(run.write_modeled_ns, 0);
        let rmw: Vec<Op> = (0..100u64).map(|k| Op::ReadModifyWrite(k, 1)).collect();
        let run = run_stream("map", &store, &rmw, true).unwrap();
        assert!(
            run.write_modeled_ns > 0 && run.write_modeled_ns < run.modeled_ns,
            "{} of {}",
            run.write_modeled_ns,
            run.modeled_ns
        );
        let run = run_stream("map", &store, &rmw, false).unwrap();
        assert_eq!(run.write_modeled_ns, 0, "no modeled time on files");
        let overlapping = MapStore(Mutex::new(store.0.lock().clone()), false);
        let run = run_stream("map", &overlapping, &rmw, true).unwrap();
        assert_eq!(run.write_modeled_ns, 0, "not a serializing store");
    }
}
