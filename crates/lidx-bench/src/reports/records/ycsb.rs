//! The record of kind `ycsb/1`: `lidx ycsb` ([`crate::kv_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One store on one workload. Times in microseconds, sizes in bytes, throughput in ops/s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KvRecord {
    /// `ycsb/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::ycsb")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Keys loaded before the run (75% of the unique keys).
    pub n_init: u64,
    /// Workload label.
    pub workload: String,
    /// Store label.
    pub store: String,
    /// What the store says it is.
    pub describe: String,
    /// Device, as the storage describes it.
    pub device: String,
    /// Block size.
    pub block_size: u64,
    /// Threads.
    pub threads: u64,
    /// Operations per run.
    pub ops: u64,
    /// Reads per run.
    pub reads: u64,
    /// Inserts per run.
    pub inserts: u64,
    /// Runs.
    pub runs: u64,
    /// Memory budget given to the store, when it takes one.
    pub memory_budget: Option<u64>,
    /// Memory after the build, before the run.
    pub memory_bytes: u64,
    /// Memory after the run and the drain.
    pub memory_end_bytes: u64,
    /// File bytes after the run and the drain.
    pub disk_bytes: u64,
    /// Build wall time (median run), seconds.
    pub build_s: f64,
    /// The throughput ratios use: modeled on simulated devices, wall on files.
    pub ops_per_s: f64,
    /// Same, counting the drain.
    pub ops_per_s_incl_drain: f64,
    /// Operations per second of wall time.
    pub wall_ops_per_s: f64,
    /// Operations per second of wall time plus the drain.
    pub wall_ops_per_s_incl_drain: f64,
    /// Simulated devices: operations per second of modeled elapsed time.
    pub modeled_ops_per_s: Option<f64>,
    /// Wall latency percentiles.
    pub wall_p50_us: f64,
    /// 99th percentile wall latency.
    pub wall_p99_us: f64,
    /// 99.9th percentile wall latency.
    pub wall_p999_us: f64,
    /// Simulated devices: modeled latency (CPU + device) percentiles.
    pub modeled_p50_us: Option<f64>,
    /// 99th percentile modeled latency.
    pub modeled_p99_us: Option<f64>,
    /// 99.9th percentile modeled latency.
    pub modeled_p999_us: Option<f64>,
    /// Index blocks (inner nodes and leaves) read during the timed part per read (None
    /// without reads); merges' reads are not in it.
    pub blocks_per_read: Option<f64>,
    /// Blocks read per operation, whatever read them.
    pub read_blocks_per_op: f64,
    /// Blocks merges read (the old static files, streamed) per operation.
    pub merge_read_blocks_per_op: f64,
    /// Blocks written per operation.
    pub write_blocks_per_op: f64,
    /// Merges completed (run + drain).
    pub merges: u64,
    /// Seconds spent merging.
    pub merge_s: f64,
    /// Writes that waited for a merge.
    pub write_stalls: u64,
    /// Wall seconds of the drain.
    pub drain_s: f64,
    /// `ops_per_s` over the equal-memory B+-tree's in the same run.
    pub speedup_vs_btree: Option<f64>,
    /// `memory_bytes` over the equal-memory B+-tree's.
    pub memory_vs_btree: Option<f64>,
    /// Seed of the plan.
    pub seed: u64,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
    /// Records loaded per second of the build (load and compaction; median run).
    #[serde(default)]
    pub load_records_per_s: f64,
    /// File bytes after the run and the drain per record then held.
    #[serde(default)]
    pub disk_bytes_per_record: f64,
    /// How much the process's resident set grew at its peak during the run (build, timed
    /// part, drain) over what it was before the build (`VmHWM` - `VmRSS`, median run).
    #[serde(default)]
    pub rss_peak_bytes: Option<u64>,
    /// The memory cgroup limit the run was held to (heap and page cache).
    #[serde(default)]
    pub memory_limit: Option<u64>,
    /// The most the run's cgroup was charged (heap and page cache), under `memory_limit`.
    #[serde(default)]
    pub cgroup_peak_bytes: Option<u64>,
    /// Set when the store could not run here (a peer not built in or failing to open), or
    /// its run failed (`failed: ...`: killed by the memory cgroup, a crash, an error; see
    /// [`KvRecord::failure`]): why. Nothing else in the record is measured then.
    #[serde(default)]
    pub skipped: Option<String>,
    /// The settings the store ran with, one line: a peer's as it was opened
    /// (`block_cache=100MiB write_buffer=10MiBx2 bloom=10 ...`), lidx's engines' budget and
    /// cache. Empty in records written before the field existed.
    #[serde(default)]
    pub config: String,
    /// Bytes the store wrote to storage while it was built (the load: log, flushes,
    /// merges), from the process's I/O account ([`crate::process_io`]); `None` where the
    /// kernel keeps none, on simulated devices, when the window's cancelled bytes exceed its
    /// written ones, and in records written before the field existed.
    #[serde(default)]
    pub load_written_bytes: Option<u64>,
    /// Bytes of keys and values the load put.
    #[serde(default)]
    pub load_put_bytes: u64,
    /// Bytes the store wrote to storage during the timed part and the drain.
    #[serde(default)]
    pub run_written_bytes: Option<u64>,
    /// Bytes of keys and values the timed part put (inserts, updates, read-modify-writes).
    #[serde(default)]
    pub run_put_bytes: u64,
}

impl KvRecord {
    /// What [`KvRecord::skipped`] starts with when the store's run failed rather than could
    /// not start.
    pub const FAILED: &'static str = "failed: ";

    /// Why the store's run failed (after [`KvRecord::FAILED`]), when it did.
    pub fn failure(&self) -> Option<&str> {
        self.skipped.as_deref()?.strip_prefix(Self::FAILED)
    }

    /// Write amplification of the load: bytes written to storage per byte of keys and values
    /// put.
    pub fn load_write_amp(&self) -> Option<f64> {
        amp(self.load_written_bytes, self.load_put_bytes)
    }

    /// Write amplification of the timed part and its drain.
    pub fn run_write_amp(&self) -> Option<f64> {
        amp(self.run_written_bytes, self.run_put_bytes)
    }
}

/// `written / put`, when both are known and something was put.
fn amp(written: Option<u64>, put: u64) -> Option<f64> {
    written.filter(|_| put > 0).map(|w| w as f64 / put as f64)
}
