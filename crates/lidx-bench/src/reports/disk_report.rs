//! Reports of on-disk benchmarks: the [`DiskRecord`] schema and its terminal table.
//!
//! Records go to JSON lines or CSV through [`crate::report::write_records`], like the in-memory
//! [`crate::report::BenchRecord`]s. Times are microseconds, sizes bytes; `modeled_*` fields are
//! present only on simulated devices. Block counts are what reached the device (cache misses),
//! per operation; `inner` and `leaf` split them as paper 003 Table 4 does (a learned index's
//! data blocks count as leaf blocks).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
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

/// The terminal table of the key columns, one row per record.
pub fn table(records: &[DiskRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "memory",
        "disk",
        "free",
        "blocks/op",
        "inner",
        "leaf",
        "req/op",
        "wall us",
        "wall p99",
        "model us",
        "model p99",
        "Kops/s",
    ]);
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in records {
        let ops = r.modeled_ops_per_s.unwrap_or(r.wall_ops_per_s);
        table.add_row(vec![
            r.index.clone(),
            human_bytes(r.memory_bytes),
            human_bytes(r.disk_bytes),
            r.free_bytes.map_or("-".to_string(), human_bytes),
            format!("{:.3}", r.blocks_per_op),
            format!("{:.3}", r.inner_blocks_per_op),
            format!("{:.3}", r.leaf_blocks_per_op),
            format!("{:.3}", r.requests_per_op),
            format!("{:.1}", r.wall_us),
            format!("{:.1}", r.wall_p99_us),
            opt(r.modeled_us, 1),
            opt(r.modeled_p99_us, 1),
            format!("{:.2}", ops / 1e3),
        ]);
    }
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}

/// `1234567` -> `1.2 MB` (powers of 1000).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} KB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.2} GB", b / 1e9),
    }
}
