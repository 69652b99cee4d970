//! The record of kind `disk/1`: `lidx bench --on-disk` ([`crate::disk_runner`],
//! [`crate::byte_disk_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One on-disk benchmark result. Times in microseconds, sizes in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskRecord {
    /// `disk/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::disk")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Entries in the index.
    pub n: u64,
    /// Canonical workload.
    pub workload: String,
    /// Index label (structure, parameters, fetch strategy).
    pub index: String,
    /// Device, as the storage describes it.
    pub device: String,
    /// Block size.
    pub block_size: u64,
    /// LRU cache blocks per file (0 = none).
    pub cache_blocks: u64,
    /// Bytes the index keeps in memory (models, resident nodes), cache excluded.
    pub memory_bytes: u64,
    /// Bytes of its files (allocated), after the workload.
    pub disk_bytes: u64,
    /// Bytes of the blocks that hold the index after the workload (paper 003 §6.3, Figure 10:
    /// storage after writes), when the index reports it.
    #[serde(default)]
    pub used_bytes: Option<u64>,
    /// Bytes of blocks the index freed and reuses before its files grow, after the workload,
    /// when the index reports it.
    #[serde(default)]
    pub free_bytes: Option<u64>,
    /// Build wall time in seconds (0 when reopened).
    pub build_s: f64,
    /// Blocks read per operation from the device (cache misses only).
    pub blocks_per_op: f64,
    /// Inner-node blocks read per operation.
    pub inner_blocks_per_op: f64,
    /// Leaf / data blocks read per operation.
    pub leaf_blocks_per_op: f64,
    /// Read requests per operation.
    pub requests_per_op: f64,
    /// Cache hits / (hits + misses), when a cache is used.
    pub cache_hit_ratio: Option<f64>,
    /// Median over runs of the mean wall time per operation.
    pub wall_us: f64,
    /// Median wall time of an operation.
    pub wall_p50_us: f64,
    /// 99th percentile wall time.
    pub wall_p99_us: f64,
    /// Operations per second of wall time (median run).
    pub wall_ops_per_s: f64,
    /// Simulated devices: median over runs of the mean modeled time per operation.
    pub modeled_us: Option<f64>,
    /// Simulated devices: 99th percentile modeled time.
    pub modeled_p99_us: Option<f64>,
    /// Simulated devices: operations per second of modeled elapsed time (median run).
    pub modeled_ops_per_s: Option<f64>,
    /// Operations per run.
    pub queries: u64,
    /// Runs.
    pub runs: u64,
    /// Threads.
    pub threads: u64,
    /// Seed of the workload.
    pub seed: u64,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
}
