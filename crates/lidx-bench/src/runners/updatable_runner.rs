//! The checked runner for updatable on-disk indexes under paper 003's six workloads (§5.2,
//! §6): lookup, scan, write-only, read-heavy, write-heavy, balanced
//! ([`crate::update_workload`]).
//!
//! Each of `runs` runs builds the index afresh from the plan's bulk-loaded keys (timed: paper
//! 003 Figure 7's bulk-load time, with the index's size after it), runs the operations one
//! after another on one thread (paper 003's indexes take one writer), then flushes it and
//! removes its file. For every operation it:
//!
//! - **checks the answer**: a lookup must find its key (present by the plan: bulk loaded or
//!   inserted earlier in the run) with [`crate::disk_workload::payload_of`] its payload; a scan
//!   must return the entries of the sorted truth from the start key's lower bound on; an insert
//!   of a held-out key must report the key new. After the operations (untimed, its I/O not
//!   counted) the index must hold exactly [`OpPlan::final_keys`], read back by scans in
//!   chunks. The first wrong answer fails the run with [`BenchError::WrongResult`].
//! - **times it** as the read-only [`crate::disk_runner`] does (`ThreadRun::time`): wall time,
//!   and on simulated devices the thread's CPU time plus the modeled device time. p99 and
//!   standard deviation come from the histograms of every operation of every run (Figure 12).
//! - **counts its I/O**: the storage's [`IoStats`] over the operations (the bulk load, the
//!   final flush and the check excluded), per operation, split by [`IoClass`] into inner and
//!   leaf blocks, read and written (Table 4).
//!
//! The index's own [`lidx::disk::DiskMap::write_breakdown`] over the operations, divided by
//! the inserts, is Figure 6's split of a write into search, insertion, structural modification
//! and maintenance (wall time plus modeled device time, [`lidx::disk::PhaseClock`]). Storage
//! after the writes is [`lidx::disk::DiskIndex::storage_bytes`] after the flush (Figure 10).
//! Throughput is operations over elapsed time: wall time on real devices; on simulated ones,
//! [`lidx::io::SimProfile::elapsed_ns`] of the run's requests and its serial time.

use std::time::Instant;

use lidx::disk::{DiskMap, Resident, WriteBreakdown};
use lidx::io::{DeviceKind, IoClass, IoStats, Storage};

use crate::disk_registry::resident_text;
use crate::disk_runner::check_scan;
use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};
use crate::records::DiskUpdateRecord;
use crate::report::Machine;
use crate::runner::Progress;
use crate::runners::core::{check_get, new_histogram, ThreadRun};
use crate::updatable_registry::{DiskMapFiles, UpdatableSpec, UpdateOptions};
use crate::updatable_report::add_btree_ratios;
use crate::update_workload::{Op, OpPlan, UpdateWorkload};

/// Items per scan of the final check.
const CHECK_CHUNK: usize = 4096;

/// Operations between two progress updates.
const PROGRESS_STEP: usize = 4096;

/// What to run on each updatable index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpdateBenchConfig {
    /// One of paper 003's six workloads.
    pub workload: UpdateWorkload,
    /// Operations per run (at least 1).
    pub queries: usize,
    /// Runs, each on a freshly built index (at least 1).
    pub runs: usize,
    /// Seed of the plan.
    pub seed: u64,
    /// Fraction of the keys bulk loaded before a write workload
    /// ([`crate::update_workload::BULK_FRACTION`] by default).
    pub bulk_fraction: f64,
}

/// The plan, drawn once per dataset, and the runs of each index on it.
pub struct UpdateBench<'a> {
    dataset: &'a str,
    plan: OpPlan,
    config: UpdateBenchConfig,
}

/// One run's figures.
struct RunFigures {
    build_s: f64,
    wall_us: f64,
    modeled_us: f64,
    wall_ops_per_s: f64,
    modeled_ops_per_s: f64,
}

/// What every run of an index measured, summed or kept per run.
struct Totals {
    io: IoStats,
    breakdown: WriteBreakdown,
    figures: Vec<RunFigures>,
    index_bytes: u64,
    memory_bytes: u64,
    storage: lidx::disk::StorageBytes,
}

impl<'a> UpdateBench<'a> {
    /// Draws the plan from `keys` (the dataset `dataset`'s sorted distinct keys).
    pub fn prepare(dataset: &'a str, keys: &[u64], config: UpdateBenchConfig) -> Result<Self> {
        let plan = config.workload.plan(
            keys,
            config.queries.max(1),
            config.bulk_fraction,
            config.seed,
        )?;
        Ok(UpdateBench {
            dataset,
            plan,
            config,
        })
    }

    /// The plan every index runs.
    pub fn plan(&self) -> &OpPlan {
        &self.plan
    }

    /// Runs the workload on every index of `specs` at every `residents` choice, in that order
    /// (`<label>:resident=<choice>`), each built with `payload_size`-byte payloads in
    /// `storage`, and fills the records' ratios to the B+-tree ([`add_btree_ratios`]): the
    /// whole of `lidx bench --on-disk`'s updatable run once its storage is ready.
    pub fn run_specs(
        &self,
        specs: &[UpdatableSpec],
        residents: &[Resident],
        payload_size: usize,
        storage: &Storage,
        progress: &mut dyn Progress,
    ) -> Result<Vec<DiskUpdateRecord>> {
        let mut records = Vec::new();
        for spec in specs {
            for &resident in residents {
                let label = format!("{}:resident={}", spec.label(), resident_text(resident));
                let options = UpdateOptions {
                    payload_size,
                    resident,
                };
                records.push(self.run_spec(&label, spec, &options, storage, progress)?);
            }
        }
        add_btree_ratios(&mut records);
        Ok(records)
    }

    /// Runs the workload on the index of `spec`, built with `options` in `storage`, labelled
    /// `label`.
    pub fn run_spec(
        &self,
        label: &str,
        spec: &UpdatableSpec,
        options: &UpdateOptions,
        storage: &Storage,
        progress: &mut dyn Progress,
    ) -> Result<DiskUpdateRecord> {
        let name = spec.file_name();
        self.run_index(
            label,
            storage,
            &name,
            |keys| spec.build(storage, keys, options),
            progress,
        )
    }

    /// Runs the workload on indexes that `build` makes from the sorted bulk-load keys in
    /// `storage` under the file `name` (with the files named after it, removed before each build
    /// and after each run: [`Storage::files_of`]), checking
    /// every answer (module docs).
    pub fn run_index(
        &self,
        label: &str,
        storage: &Storage,
        name: &str,
        build: impl Fn(&[u64]) -> Result<Box<dyn DiskMap<u64>>>,
        progress: &mut dyn Progress,
    ) -> Result<DiskUpdateRecord> {
        let runs = self.config.runs.max(1);
        let ops = self.plan.ops.len() as u64;
        let mut wall = new_histogram();
        let mut modeled = new_histogram();
        let mut totals = Totals {
            io: IoStats::default(),
            breakdown: WriteBreakdown::default(),
            figures: Vec::with_capacity(runs),
            index_bytes: 0,
            memory_bytes: 0,
            storage: Default::default(),
        };
        progress.begin(&format!("{label}: {runs} runs"), ops * runs as u64);
        for _ in 0..runs {
            remove_index(storage, name)?;
            let started = Instant::now();
            let mut index = build(&self.plan.bulk)?;
            let build_s = started.elapsed().as_secs_f64();
            self.check_len(label, index.len(), self.plan.bulk.len(), "bulk load")?;
            totals.index_bytes = index.disk_bytes();
            totals.memory_bytes = index.memory_bytes() as u64;

            let before = storage.stats();
            let written_before = index.write_breakdown();
            let started = Instant::now();
            let run = self.run_ops(label, index.as_mut(), progress)?;
            let elapsed_ns = started.elapsed().as_nanos() as u64;
            let io = storage.stats() - before;
            totals.breakdown = add(
                totals.breakdown,
                minus(index.write_breakdown(), written_before),
            );
            totals.io = totals.io + io;
            wall.add(&run.wall).expect("same histogram bounds");
            modeled.add(&run.modeled).expect("same histogram bounds");

            index.flush()?;
            totals.storage = index.storage_bytes();
            self.check_final(label, index.as_ref())?;
            drop(index);
            remove_index(storage, name)?;

            let modeled_elapsed = match storage.kind() {
                DeviceKind::Sim(profile) => profile.elapsed_ns(&io, run.modeled_ns),
                DeviceKind::File { .. } | DeviceKind::FileCached => elapsed_ns,
            };
            totals.figures.push(RunFigures {
                build_s,
                wall_us: run.wall_ns as f64 / ops as f64 / 1e3,
                modeled_us: run.modeled_ns as f64 / ops as f64 / 1e3,
                wall_ops_per_s: ops as f64 / (elapsed_ns.max(1) as f64 / 1e9),
                modeled_ops_per_s: ops as f64 / (modeled_elapsed.max(1) as f64 / 1e9),
            });
        }
        progress.end();
        Ok(self.record(label, storage, &totals, &wall, &modeled))
    }

    /// Runs the plan's operations on `index`, timing and checking each.
    fn run_ops(
        &self,
        label: &str,
        index: &mut dyn DiskMap<u64>,
        progress: &mut dyn Progress,
    ) -> Result<ThreadRun> {
        let size = index.payload_size();
        let (mut got, mut want) = (vec![0u8; size], vec![0u8; size]);
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let len = match self.config.workload {
            UpdateWorkload::Read(crate::disk_workload::DiskWorkload::Scan { len }) => len,
            _ => 0,
        };
        let mut run = ThreadRun::new();
        for (i, op) in self.plan.ops.iter().enumerate() {
            match *op {
                Op::Get(key) => {
                    let found = run.time(|| Ok(index.get(&key, &mut got)?))?;
                    check_get(label, key, found, &got, &mut want)?;
                }
                Op::Scan(key) => {
                    keys.clear();
                    payloads.clear();
                    run.time(|| Ok(index.scan(&key, len, &mut keys, &mut payloads)?))?;
                    let truth = self.plan.final_keys();
                    check_scan(label, truth, key, len, size, &keys, &payloads)?;
                }
                Op::Insert(key) => {
                    payload_of(key, &mut want);
                    let replaced = run.time(|| Ok(index.insert(key, &want)?))?;
                    if replaced {
                        return Err(BenchError::WrongResult {
                            index: label.to_string(),
                            op: "insert",
                            key,
                            what: "a key absent until now was reported present".to_string(),
                        });
                    }
                }
            }
            if (i + 1) % PROGRESS_STEP == 0 {
                progress.advance(PROGRESS_STEP as u64);
            }
        }
        progress.advance((self.plan.ops.len() % PROGRESS_STEP) as u64);
        Ok(run)
    }

    /// The index must hold exactly the plan's final keys, each with its payload.
    fn check_final(&self, label: &str, index: &dyn DiskMap<u64>) -> Result<()> {
        let truth = self.plan.final_keys();
        self.check_len(label, index.len(), truth.len(), "the operations")?;
        let size = index.payload_size();
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let mut start = 0u64;
        let mut seen = 0;
        loop {
            keys.clear();
            payloads.clear();
            let got = index.scan(&start, CHECK_CHUNK, &mut keys, &mut payloads)?;
            check_scan(label, truth, start, CHECK_CHUNK, size, &keys, &payloads)?;
            seen += got;
            match keys.last() {
                Some(&last) if got == CHECK_CHUNK && last < u64::MAX => start = last + 1,
                _ => break,
            }
        }
        self.check_len(label, seen as u64, truth.len(), "the operations (scanned)")
    }

    fn check_len(&self, label: &str, len: u64, want: usize, after: &str) -> Result<()> {
        if len == want as u64 {
            return Ok(());
        }
        Err(BenchError::WrongResult {
            index: label.to_string(),
            op: "len",
            key: 0,
            what: format!("{len} entries after {after}, expected {want}"),
        })
    }

    fn record(
        &self,
        label: &str,
        storage: &Storage,
        totals: &Totals,
        wall: &hdrhistogram::Histogram<u64>,
        modeled: &hdrhistogram::Histogram<u64>,
    ) -> DiskUpdateRecord {
        let runs = totals.figures.len();
        let total_ops = (self.plan.ops.len() * runs) as f64;
        let io = &totals.io;
        let per_op = |v: u64| v as f64 / total_ops;
        let median = |f: fn(&RunFigures) -> f64| {
            let mut v: Vec<f64> = totals.figures.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let simulated = matches!(storage.kind(), DeviceKind::Sim(_));
        let inserts = self.plan.inserts();
        let per_write = |ns: u64| (inserts > 0).then(|| ns as f64 / (inserts * runs) as f64 / 1e3);
        let cached = io.cache_hits + io.cache_misses;
        let us = |ns: f64| ns / 1e3;
        let machine = Machine::detect();
        DiskUpdateRecord {
            dataset: self.dataset.to_string(),
            workload: self.config.workload.label(),
            index: label.to_string(),
            device: storage.describe(),
            block_size: storage.block_size() as u64,
            cache_blocks: storage.cache_blocks() as u64,
            bulk_keys: self.plan.bulk.len() as u64,
            final_keys: self.plan.final_keys().len() as u64,
            ops: self.plan.ops.len() as u64,
            inserts: inserts as u64,
            runs: runs as u64,
            seed: self.config.seed,
            build_s: median(|f| f.build_s),
            index_bytes: totals.index_bytes,
            memory_bytes: totals.memory_bytes,
            storage_bytes: totals.storage.allocated,
            used_bytes: totals.storage.used,
            free_bytes: totals.storage.free,
            read_blocks_per_op: per_op(io.read_blocks),
            inner_read_per_op: per_op(io.blocks_read(IoClass::Inner)),
            leaf_read_per_op: per_op(io.blocks_read(IoClass::Leaf)),
            write_blocks_per_op: per_op(io.write_blocks),
            inner_write_per_op: per_op(io.blocks_written(IoClass::Inner)),
            leaf_write_per_op: per_op(io.blocks_written(IoClass::Leaf)),
            read_requests_per_op: per_op(io.read_requests),
            write_requests_per_op: per_op(io.write_requests),
            cache_hit_ratio: (cached > 0).then(|| io.cache_hits as f64 / cached as f64),
            wall_us: median(|f| f.wall_us),
            wall_p99_us: us(wall.value_at_quantile(0.99) as f64),
            wall_stddev_us: us(wall.stdev()),
            wall_ops_per_s: median(|f| f.wall_ops_per_s),
            modeled_us: simulated.then(|| median(|f| f.modeled_us)),
            modeled_p99_us: simulated.then(|| us(modeled.value_at_quantile(0.99) as f64)),
            modeled_stddev_us: simulated.then(|| us(modeled.stdev())),
            modeled_ops_per_s: simulated.then(|| median(|f| f.modeled_ops_per_s)),
            search_us: per_write(totals.breakdown.search_ns),
            insert_us: per_write(totals.breakdown.insert_ns),
            smo_us: per_write(totals.breakdown.smo_ns),
            maintenance_us: per_write(totals.breakdown.maintenance_ns),
            throughput_vs_btree: None,
            read_blocks_vs_btree: None,
            write_blocks_vs_btree: None,
            p99_vs_btree: None,
            build_vs_btree: None,
            index_bytes_vs_btree: None,
            storage_vs_btree: None,
            cpu: machine.cpu,
            cores: machine.cores,
            lidx_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

fn add(a: WriteBreakdown, b: WriteBreakdown) -> WriteBreakdown {
    WriteBreakdown {
        search_ns: a.search_ns + b.search_ns,
        insert_ns: a.insert_ns + b.insert_ns,
        smo_ns: a.smo_ns + b.smo_ns,
        maintenance_ns: a.maintenance_ns + b.maintenance_ns,
    }
}

fn minus(a: WriteBreakdown, b: WriteBreakdown) -> WriteBreakdown {
    WriteBreakdown {
        search_ns: a.search_ns.saturating_sub(b.search_ns),
        insert_ns: a.insert_ns.saturating_sub(b.insert_ns),
        smo_ns: a.smo_ns.saturating_sub(b.smo_ns),
        maintenance_ns: a.maintenance_ns.saturating_sub(b.maintenance_ns),
    }
}

/// Removes the index stored under `name`: its file and every file named after it.
fn remove_index(storage: &Storage, name: &str) -> Result<()> {
    for file in storage.files_of(name)? {
        storage.remove(&file)?;
    }
    Ok(())
}
