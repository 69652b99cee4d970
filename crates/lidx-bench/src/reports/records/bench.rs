//! The record of kind `bench/1`: `lidx bench` and `lidx bench --workload insert`, one record per
//! index and run setting ([`crate::report`] lists every field with its unit).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One benchmark result. [`crate::report`]'s module docs list every field with its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// `bench/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::bench")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Keys in the dataset.
    pub n: u64,
    /// Canonical workload.
    pub workload: String,
    /// Index name.
    pub index: String,
    /// Canonical index spec.
    pub label: String,
    /// Parameters alone.
    pub params: String,
    /// Build wall time, seconds.
    pub build_s: f64,
    /// Keys built per second.
    pub build_keys_per_s: f64,
    /// Index memory, bytes.
    pub bytes: u64,
    /// Index memory per key, bytes.
    pub bytes_per_key: f64,
    /// Median over runs of the mean lookup time, ns.
    pub mean_ns: f64,
    /// Fastest run's mean, ns.
    pub mean_ns_min: f64,
    /// Slowest run's mean, ns.
    pub mean_ns_max: f64,
    /// Median sampled latency, ns.
    pub p50_ns: u64,
    /// 99th percentile sampled latency, ns.
    pub p99_ns: u64,
    /// 99.9th percentile sampled latency, ns.
    pub p999_ns: u64,
    /// Sampling stride of the percentiles.
    pub sample_every: u64,
    /// Whether large allocations were on transparent huge pages.
    pub huge_pages: bool,
    /// Mean log2 of the window width.
    pub mean_log2_window: f64,
    /// Bottom-level models, where they apply.
    pub segments: Option<u64>,
    /// Levels above the data, where they apply.
    pub height: Option<u64>,
    /// Speedup over `sorted` in the same benchmark.
    pub speedup_vs_binary: Option<f64>,
    /// Timed loops.
    pub runs: u64,
    /// Lookups per loop.
    pub queries: u64,
    /// Seed of data and workload.
    pub seed: u64,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
    /// What one timed operation is: `lower_bound` (a static index: window and last-mile
    /// search), `get` (an updatable map's point lookup) or `insert`; empty when read from a
    /// file written before the field existed. Last, so CSV files keep their earlier columns.
    #[serde(default)]
    pub operation: String,
}
