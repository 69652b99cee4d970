//! Reports of updatable on-disk indexes under paper 003's six workloads: the [`UpdateRecord`]
//! schema, the ratios to the B+-tree of the same run, and the terminal table.
//!
//! One record per index and workload, with what paper 003 reports of it: blocks read and
//! written per operation split into inner and leaf (Table 4), requests, time and throughput
//! (Figs. 3, 5), where a write's time goes (Fig. 6, per write), bulk-load time and index size
//! (Fig. 7), storage after the writes (Fig. 10), p99 and standard deviation of the latency
//! (Fig. 12). Records go to JSON lines or CSV through [`crate::report::write_records`]; times
//! are microseconds, sizes bytes, `modeled_*` present only on simulated devices, the write
//! breakdown only when the workload writes. Every `*_vs_btree` figure is the index's over the
//! B+-tree's of the same run and workload ([`add_btree_ratios`]), absent when no B+-tree ran.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde::{Deserialize, Serialize};

use crate::disk_report::human_bytes;

/// One updatable index under one workload. Times in microseconds, sizes in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateRecord {
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

impl UpdateRecord {
    /// Throughput: modeled on simulated devices, wall otherwise.
    pub fn ops_per_s(&self) -> f64 {
        self.modeled_ops_per_s.unwrap_or(self.wall_ops_per_s)
    }

    /// p99 latency: modeled on simulated devices, wall otherwise.
    pub fn p99_us(&self) -> f64 {
        self.modeled_p99_us.unwrap_or(self.wall_p99_us)
    }
}

/// Fills every record's `*_vs_btree` ratios against the B+-tree record of the same dataset,
/// workload and device: the first whose index starts with `btree:` and has the same
/// resident choice (the label's `:resident=` part), else the first B+-tree record. Records
/// without a B+-tree beside them keep `None`. A ratio whose denominator is 0 is `None`.
pub fn add_btree_ratios(records: &mut [UpdateRecord]) {
    let resident = |label: &str| label.rsplit_once(":resident=").map(|(_, r)| r.to_string());
    let same_run = |a: &UpdateRecord, b: &UpdateRecord| {
        (&a.dataset, &a.workload, &a.device) == (&b.dataset, &b.workload, &b.device)
    };
    let baselines: Vec<Option<UpdateRecord>> = records
        .iter()
        .map(|r| {
            let trees = || {
                records
                    .iter()
                    .filter(|b| b.index.starts_with("btree:") && same_run(r, b))
            };
            trees()
                .find(|b| resident(&b.index) == resident(&r.index))
                .or_else(|| trees().next())
                .cloned()
        })
        .collect();
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    for (r, base) in records.iter_mut().zip(baselines) {
        let Some(b) = base else { continue };
        r.throughput_vs_btree = ratio(r.ops_per_s(), b.ops_per_s());
        r.read_blocks_vs_btree = ratio(r.read_blocks_per_op, b.read_blocks_per_op);
        r.write_blocks_vs_btree = ratio(r.write_blocks_per_op, b.write_blocks_per_op);
        r.p99_vs_btree = ratio(r.p99_us(), b.p99_us());
        r.build_vs_btree = ratio(r.build_s, b.build_s);
        r.index_bytes_vs_btree = ratio(r.index_bytes as f64, b.index_bytes as f64);
        r.storage_vs_btree = ratio(r.storage_bytes as f64, b.storage_bytes as f64);
    }
}

/// The terminal table of the key columns, one row per record.
pub fn table(records: &[UpdateRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "workload",
        "read/op in+leaf",
        "write/op in+leaf",
        "Kops/s",
        "vs btree",
        "p99 us",
        "sd us",
        "search/ins/smo/maint us",
        "build s",
        "size",
        "after writes",
    ]);
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in records {
        let breakdown = match (r.search_us, r.insert_us, r.smo_us, r.maintenance_us) {
            (Some(s), Some(i), Some(m), Some(t)) => format!("{s:.1}/{i:.1}/{m:.1}/{t:.1}"),
            _ => "-".to_string(),
        };
        table.add_row(vec![
            r.index.clone(),
            r.workload.clone(),
            format!("{:.2}+{:.2}", r.inner_read_per_op, r.leaf_read_per_op),
            format!("{:.2}+{:.2}", r.inner_write_per_op, r.leaf_write_per_op),
            format!("{:.2}", r.ops_per_s() / 1e3),
            opt(r.throughput_vs_btree, 2),
            format!("{:.1}", r.p99_us()),
            format!("{:.1}", r.modeled_stddev_us.unwrap_or(r.wall_stddev_us)),
            breakdown,
            format!("{:.2}", r.build_s),
            human_bytes(r.index_bytes),
            human_bytes(r.storage_bytes),
        ]);
    }
    for column in table.column_iter_mut().skip(2) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}
