//! The record of kind `disk-updatable`: `lidx bench --on-disk` with the updatable runner, paper 003
//! ([`crate::updatable_runner`]; no `schema` field yet, known by its fields).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One updatable index under one workload. Times in microseconds, sizes in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskUpdateRecord {
    /// Dataset name.
    pub dataset: String,
    /// Canonical workload.
    pub workload: String,
    /// Index label (structure, parameters, resident choice).
    pub index: String,
    /// Device, as the storage describes it.
    pub device: String,
    /// Block size.
    pub block_size: u64,
    /// LRU cache blocks per file (0 = none).
    pub cache_blocks: u64,
    /// Keys bulk loaded.
    pub bulk_keys: u64,
    /// Entries after the operations.
    pub final_keys: u64,
    /// Operations per run.
    pub ops: u64,
    /// Inserts among them.
    pub inserts: u64,
    /// Runs (each on a freshly built index); figures are medians or over all runs.
    pub runs: u64,
    /// Seed of the workload.
    pub seed: u64,
    /// Bulk-load wall time in seconds, median over runs (Fig. 7).
    pub build_s: f64,
    /// Bytes of the index's files after the bulk load (Fig. 7).
    pub index_bytes: u64,
    /// Bytes the index keeps in memory after the bulk load, cache excluded.
    pub memory_bytes: u64,
    /// Bytes of the files after the operations (Fig. 10).
    pub storage_bytes: u64,
    /// Bytes of blocks holding the index after the operations.
    pub used_bytes: u64,
    /// Bytes of blocks freed and reused before the files grow, after the operations.
    pub free_bytes: u64,
    /// Blocks read per operation (cache misses only).
    pub read_blocks_per_op: f64,
    /// Inner-node blocks read per operation (Table 4).
    pub inner_read_per_op: f64,
    /// Leaf / data blocks read per operation (Table 4).
    pub leaf_read_per_op: f64,
    /// Blocks written per operation.
    pub write_blocks_per_op: f64,
    /// Inner-node blocks written per operation.
    pub inner_write_per_op: f64,
    /// Leaf / data blocks written per operation.
    pub leaf_write_per_op: f64,
    /// Read requests per operation.
    pub read_requests_per_op: f64,
    /// Write requests per operation.
    pub write_requests_per_op: f64,
    /// Cache hits / (hits + misses), when a cache is used.
    pub cache_hit_ratio: Option<f64>,
    /// Mean wall time per operation, median over runs.
    pub wall_us: f64,
    /// 99th percentile wall time of an operation.
    pub wall_p99_us: f64,
    /// Standard deviation of an operation's wall time.
    pub wall_stddev_us: f64,
    /// Operations per second of wall time (median run).
    pub wall_ops_per_s: f64,
    /// Simulated devices: mean modeled time per operation, median over runs.
    pub modeled_us: Option<f64>,
    /// Simulated devices: 99th percentile modeled time.
    pub modeled_p99_us: Option<f64>,
    /// Simulated devices: standard deviation of the modeled time.
    pub modeled_stddev_us: Option<f64>,
    /// Simulated devices: operations per second of modeled elapsed time (median run).
    pub modeled_ops_per_s: Option<f64>,
    /// Write workloads: search time per write (Fig. 6).
    pub search_us: Option<f64>,
    /// Write workloads: insertion time per write.
    pub insert_us: Option<f64>,
    /// Write workloads: structural modification time per write.
    pub smo_us: Option<f64>,
    /// Write workloads: maintenance time per write.
    pub maintenance_us: Option<f64>,
    /// Throughput over the B+-tree's (modeled on simulated devices, wall otherwise).
    pub throughput_vs_btree: Option<f64>,
    /// Blocks read per operation over the B+-tree's.
    pub read_blocks_vs_btree: Option<f64>,
    /// Blocks written per operation over the B+-tree's.
    pub write_blocks_vs_btree: Option<f64>,
    /// p99 latency (modeled on simulated devices) over the B+-tree's.
    pub p99_vs_btree: Option<f64>,
    /// Bulk-load time over the B+-tree's.
    pub build_vs_btree: Option<f64>,
    /// Index size after the bulk load over the B+-tree's.
    pub index_bytes_vs_btree: Option<f64>,
    /// Storage after the operations over the B+-tree's.
    pub storage_vs_btree: Option<f64>,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
}

impl DiskUpdateRecord {
    /// Throughput: modeled on simulated devices, wall otherwise.
    pub fn ops_per_s(&self) -> f64 {
        self.modeled_ops_per_s.unwrap_or(self.wall_ops_per_s)
    }

    /// p99 latency: modeled on simulated devices, wall otherwise.
    pub fn p99_us(&self) -> f64 {
        self.modeled_p99_us.unwrap_or(self.wall_p99_us)
    }
}
