//! The checked runner for on-disk indexes: I/O per operation, wall and modeled time.
//!
//! For one index already built (or reopened) on a [`Storage`], [`DiskBench::run_index`] runs
//! the workload's queries `runs` times, on `threads` threads that split the queries, and for
//! every operation:
//!
//! - **checks the answer**: a lookup must find the key with the payload
//!   [`crate::disk_workload::payload_of`] derives from it; a scan must return
//!   exactly the keys (and payloads) of the sorted dataset from the start key's lower bound on.
//!   The first wrong answer fails the run with [`BenchError::WrongResult`].
//! - **times it**: wall time with [`Instant`] (I/O dominated, so a clock read per operation
//!   costs nothing that matters), and, on simulated devices, the modeled device time of the
//!   requests it issued ([`lidx::raw::io::sim::thread_modeled_ns`]). An operation's modeled latency
//!   is the CPU time its thread spent on it (`CLOCK_THREAD_CPUTIME_ID`: the index's work, the
//!   simulated device's memory copies and checksums included, time spent descheduled on a
//!   busy machine excluded) plus its modeled device time, so modeled figures repeat on a noisy
//!   machine and with more threads than cores.
//!
//! Storage comes from the index after the runs ([`lidx::disk::DiskIndex::storage_bytes`]:
//! allocated, used and free bytes), so a workload that writes reports what its writes left
//! (paper 003 §6.3, Figure 10).
//!
//! Block counts come from the devices: the storage's [`IoStats`] before and after each run,
//! divided by the operations, split by [`IoClass`] into inner and leaf blocks as paper 003
//! Table 4 does. Throughput is operations over elapsed time: wall time on real devices; on
//! simulated ones, [`lidx::io::SimProfile::elapsed_ns`] of the run's requests with the busiest
//! thread's serial time (CPU + modeled device time), which applies the profile's parallelism and
//! bandwidth limits. Each figure is the median over runs.
//!
//! The runs, the I/O accounting and the record are `measure`, generic over what a query is:
//! a `u64` key here, the rank of a byte-string key in [`crate::byte_disk_runner`], which
//! checks its answers the same way.

use std::time::Instant;

use lidx::disk::DiskIndex;
use lidx::io::{DeviceKind, IoClass, IoStats, Storage};

use crate::dataset::Dataset;
use crate::disk_workload::{payload_of, DiskWorkload};
use crate::error::{BenchError, Result};
use crate::records::DiskRecord;
use crate::report::Machine;
use crate::runner::Progress;
use crate::runners::core::{check_get, new_histogram, on_threads, ThreadRun};

/// What to run on each on-disk index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskBenchConfig {
    /// Lookups or scans.
    pub workload: DiskWorkload,
    /// Operations per run (at least 1).
    pub queries: usize,
    /// Runs; figures are medians over runs (at least 1).
    pub runs: usize,
    /// Threads splitting each run's operations (at least 1).
    pub threads: usize,
    /// Seed of the workload.
    pub seed: u64,
}

/// Queries and their true answers, prepared once per dataset.
pub struct DiskBench<'a> {
    keys: &'a [u64],
    dataset: &'a Dataset,
    queries: Vec<u64>,
    config: DiskBenchConfig,
}

/// One run's figures.
struct RunFigures {
    wall_us: f64,
    modeled_us: f64,
    wall_ops_per_s: f64,
    modeled_ops_per_s: f64,
}

impl<'a> DiskBench<'a> {
    /// Draws the queries from `keys` (the dataset's sorted unique keys, as indexed).
    pub fn prepare(dataset: &'a Dataset, keys: &'a [u64], config: DiskBenchConfig) -> Result<Self> {
        let queries = config
            .workload
            .generate(keys, config.queries.max(1), config.seed)?;
        Ok(DiskBench {
            keys,
            dataset,
            queries,
            config,
        })
    }

    /// Runs the workload on `index` (stored in `storage`), checking every answer.
    pub fn run_index(
        &self,
        label: &str,
        index: &dyn DiskIndex<u64>,
        storage: &Storage,
        build_s: f64,
        progress: &mut dyn Progress,
    ) -> Result<DiskRecord> {
        let facts = (index.len(), index.memory_bytes(), index.disk_bytes());
        let measured = Measured::new(&self.dataset.name, label, facts, build_s);
        let mut record = measure(
            &measured,
            &self.config,
            &self.queries,
            storage,
            progress,
            |part| self.run_part(label, index, part),
        )?;
        // After the runs: what the workload's writes (if any) left in the files.
        let after = index.storage_bytes();
        record.disk_bytes = after.allocated;
        record.used_bytes = Some(after.used);
        record.free_bytes = Some(after.free);
        Ok(record)
    }

    /// Runs `part` of the queries on this thread, checking each answer.
    fn run_part(&self, label: &str, index: &dyn DiskIndex<u64>, part: &[u64]) -> Result<ThreadRun> {
        let size = index.payload_size();
        let (mut got, mut want) = (vec![0u8; size], vec![0u8; size]);
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        let mut run = ThreadRun::new();
        for &key in part {
            match self.config.workload {
                DiskWorkload::Lookup(_) => {
                    let found = run.time(|| Ok(index.get(&key, &mut got)?))?;
                    check_get(label, key, found, &got, &mut want)?;
                }
                DiskWorkload::Scan { len } => {
                    keys.clear();
                    payloads.clear();
                    run.time(|| Ok(index.scan(&key, len, &mut keys, &mut payloads)?))?;
                    check_scan(label, self.keys, key, len, size, &keys, &payloads)?;
                }
            }
        }
        Ok(run)
    }
}

/// Checks a scan of `limit` items from `start` that returned `keys` and `payloads` (`size`
/// bytes each): they must be the entries of the sorted `truth` from `start`'s lower bound on,
/// with [`payload_of`] their keys. `WrongResult` otherwise. What every checked scan runs.
pub(crate) fn check_scan(
    label: &str,
    truth: &[u64],
    start: u64,
    limit: usize,
    size: usize,
    keys: &[u64],
    payloads: &[u8],
) -> Result<()> {
    let from = truth.partition_point(|&k| k < start);
    let expected = &truth[from..(from + limit).min(truth.len())];
    let wrong = |what: String| BenchError::WrongResult {
        index: label.to_string(),
        op: "scan",
        key: start,
        what,
    };
    if keys != expected {
        return Err(wrong(format!(
            "returned {} keys starting {:?}, expected {} starting {:?}",
            keys.len(),
            keys.first(),
            expected.len(),
            expected.first()
        )));
    }
    if payloads.len() != keys.len() * size {
        return Err(wrong(format!(
            "{} payload bytes for {} keys",
            payloads.len(),
            keys.len()
        )));
    }
    let mut want = vec![0u8; size];
    for (i, (&key, got)) in keys.iter().zip(payloads.chunks_exact(size)).enumerate() {
        payload_of(key, &mut want);
        if got != want {
            return Err(wrong(format!("payload of item {i} (key {key}) is wrong")));
        }
    }
    Ok(())
}

/// What a record says about the index measured, besides the figures.
pub(crate) struct Measured<'a> {
    /// Dataset name.
    pub dataset: &'a str,
    /// Index label.
    pub label: &'a str,
    /// Entries in the index.
    pub len: u64,
    /// Bytes the index keeps in memory.
    pub memory_bytes: usize,
    /// Bytes of its files.
    pub disk_bytes: u64,
    /// Build wall time in seconds (0 when reopened).
    pub build_s: f64,
}

impl<'a> Measured<'a> {
    /// The index `label` of `dataset`, with `(len, memory_bytes, disk_bytes)` as `facts`.
    pub fn new(dataset: &'a str, label: &'a str, facts: (u64, usize, u64), build_s: f64) -> Self {
        let (len, memory_bytes, disk_bytes) = facts;
        Measured {
            dataset,
            label,
            len,
            memory_bytes,
            disk_bytes,
            build_s,
        }
    }
}

/// Runs `queries` `config.runs` times on `config.threads` threads (`run_part` runs and checks
/// one thread's share) and makes the record: the I/O of `storage` per operation, wall and
/// modeled times (module docs). What the runners over every key type share.
pub(crate) fn measure<Q: Sync>(
    measured: &Measured<'_>,
    config: &DiskBenchConfig,
    queries: &[Q],
    storage: &Storage,
    progress: &mut dyn Progress,
    run_part: impl Fn(&[Q]) -> Result<ThreadRun> + Sync,
) -> Result<DiskRecord> {
    let label = measured.label;
    let runs = config.runs.max(1);
    let threads = config.threads.max(1);
    let ops = queries.len() as u64;
    let mut figures = Vec::with_capacity(runs);
    let mut io_total = IoStats::default();
    let mut wall_all = new_histogram();
    let mut modeled_all = new_histogram();
    progress.begin(&format!("{label}: {} runs", runs), ops * runs as u64);
    for _ in 0..runs {
        let before = storage.stats();
        let started = Instant::now();
        let chunk = queries.len().div_ceil(threads).max(1);
        let results = on_threads(queries.chunks(chunk), &run_part);
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        let io = storage.stats() - before;
        io_total = io_total + io;
        let mut busiest = 0;
        let (mut wall_sum, mut modeled_sum) = (0u64, 0u64);
        for run in results? {
            busiest = busiest.max(run.modeled_ns);
            wall_sum += run.wall_ns;
            modeled_sum += run.modeled_ns;
            wall_all.add(&run.wall).expect("same histogram bounds");
            modeled_all
                .add(&run.modeled)
                .expect("same histogram bounds");
        }
        let modeled_elapsed = match storage.kind() {
            DeviceKind::Sim(profile) => profile.elapsed_ns(&io, busiest),
            DeviceKind::File { .. } | DeviceKind::FileCached => elapsed_ns,
        };
        figures.push(RunFigures {
            wall_us: wall_sum as f64 / ops as f64 / 1e3,
            modeled_us: modeled_sum as f64 / ops as f64 / 1e3,
            wall_ops_per_s: ops as f64 / (elapsed_ns.max(1) as f64 / 1e9),
            modeled_ops_per_s: ops as f64 / (modeled_elapsed.max(1) as f64 / 1e9),
        });
        progress.advance(ops);
    }
    progress.end();

    let total_ops = (ops * runs as u64) as f64;
    let per_op = |v: u64| v as f64 / total_ops;
    let simulated = matches!(storage.kind(), DeviceKind::Sim(_));
    let median = |f: fn(&RunFigures) -> f64| {
        let mut v: Vec<f64> = figures.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let machine = Machine::detect();
    let cached = io_total.cache_hits + io_total.cache_misses;
    Ok(DiskRecord {
        schema: crate::records::RecordKind::Disk.schema(),
        command: crate::records::command_line(),
        dataset: measured.dataset.to_string(),
        n: measured.len,
        workload: config.workload.label(),
        index: label.to_string(),
        device: storage.describe(),
        block_size: storage.block_size() as u64,
        cache_blocks: storage.cache_blocks() as u64,
        memory_bytes: measured.memory_bytes as u64,
        disk_bytes: measured.disk_bytes,
        used_bytes: None,
        free_bytes: None,
        build_s: measured.build_s,
        blocks_per_op: per_op(io_total.read_blocks),
        inner_blocks_per_op: per_op(io_total.blocks_read(IoClass::Inner)),
        leaf_blocks_per_op: per_op(io_total.blocks_read(IoClass::Leaf)),
        requests_per_op: per_op(io_total.read_requests),
        cache_hit_ratio: (cached > 0).then(|| io_total.cache_hits as f64 / cached as f64),
        wall_us: median(|f| f.wall_us),
        wall_p50_us: wall_all.value_at_quantile(0.5) as f64 / 1e3,
        wall_p99_us: wall_all.value_at_quantile(0.99) as f64 / 1e3,
        wall_ops_per_s: median(|f| f.wall_ops_per_s),
        modeled_us: simulated.then(|| median(|f| f.modeled_us)),
        modeled_p99_us: simulated.then(|| modeled_all.value_at_quantile(0.99) as f64 / 1e3),
        modeled_ops_per_s: simulated.then(|| median(|f| f.modeled_ops_per_s)),
        queries: ops,
        runs: runs as u64,
        threads: threads as u64,
        seed: config.seed,
        cpu: machine.cpu,
        cores: machine.cores,
        lidx_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}
