//! The record of kind `tpcc/1`: `lidx tpcc` ([`crate::tpcc`]), one per index structure.
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

fn memory() -> String {
    "memory".to_string()
}

/// One index structure's TPC-C run (paper 002 §10.6, Table 8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccRecord {
    /// `tpcc/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::tpcc")]
    pub schema: String,
    /// The command line that wrote the record.
    #[serde(default)]
    pub command: String,
    /// The structure of every index, as `--index` names it.
    pub index: String,
    /// Warehouses loaded.
    pub warehouses: u64,
    /// The populations' divisor (1: the spec's; larger only in tests).
    pub scale: u64,
    /// Transactions run.
    pub transactions: u64,
    /// Seed of the load and of the transactions.
    pub seed: u64,
    /// The device, as `--device` names it.
    pub device: String,
    /// Block size in bytes.
    pub block_size: u64,
    /// What holds the tuples: `memory` (the first mode: tuples in memory, every index on
    /// disk; what records without this field ran) or `store` (the second mode: tuples and
    /// indexes in one store, `index` is `store:<engine>`).
    #[serde(default = "memory")]
    pub tuples: String,
    /// `store`: when the store acknowledged a commit (`always`: after `fdatasync`, the
    /// store's default; `never`; `every:<ms>`). Empty for `memory`.
    #[serde(default)]
    pub fsync: String,
    /// `kv:` runs with `--kv-memory`: the memory budget the eleven stores shared, in bytes
    /// (none had a page cache); 0 when each store kept its defaults (a 64 MiB budget and an
    /// 8 MiB page cache) or the run is no `kv:` run.
    #[serde(default)]
    pub kv_memory: u64,
    /// `modeled` (a simulated device: thread CPU time plus the device model's time of the
    /// requests) or `wall` (a file device: wall clock).
    pub timing: String,
    /// Transactions per second over the timed transactions (drain of merges excluded).
    pub tps: f64,
    /// New-Order transactions per minute of the same time (tpmC-style; the rolled-back ones
    /// are among them, and counted apart in `rollbacks`).
    pub new_order_per_min: f64,
    /// Each type's transactions per second of its own time: New-Order.
    pub tps_new_order: f64,
    /// Payment.
    pub tps_payment: f64,
    /// Order-Status.
    pub tps_order_status: f64,
    /// Delivery.
    pub tps_delivery: f64,
    /// Stock-Level.
    pub tps_stock_level: f64,
    /// Transactions of each type, in the order New-Order, Payment, Order-Status, Delivery,
    /// Stock-Level, `/`-separated.
    pub mix: String,
    /// New-Orders rolled back by an unused item.
    pub rollbacks: u64,
    /// Bytes the eleven indexes keep in memory at the end (inner nodes, models, dynamic
    /// stages); `store`: the store's memory (dynamic stages, models or inner nodes, filters,
    /// page cache), the tuples being in the store.
    pub memory_bytes: u64,
    /// Bytes of their files at the end; `store`: of its block files and log, tuples
    /// included.
    pub disk_bytes: u64,
    /// `memory_bytes + disk_bytes`: Table 8's index space (`store`: the store's whole space,
    /// tuples included).
    pub index_bytes: u64,
    /// Blocks read from the devices per transaction (merges included).
    pub blocks_read_per_txn: f64,
    /// Blocks written to the devices per transaction (merges included).
    pub blocks_written_per_txn: f64,
    /// Bytes the hybrid indexes' write-ahead logs wrote per transaction (a file beside the
    /// block device, not in `blocks_written_per_txn`; 0 for structures without a log);
    /// `store`: bytes of the write batches committed per transaction (what its log appends,
    /// record headers aside; the log too is beside the block device).
    pub log_bytes_per_txn: f64,
    /// Merges of hybrid indexes during the run (`store`: the store's merges, checkpoints or
    /// compactions, [`lidx::kv::StoreStats::merges`]).
    pub merges: u64,
    /// Seconds to generate the tuples.
    pub load_s: f64,
    /// Seconds to bulk load the indexes.
    pub build_s: f64,
    /// Wall seconds of the transactions.
    pub run_s: f64,
    /// Wall seconds waiting for the merges the run left running.
    pub drain_s: f64,
    /// Seconds the hybrid indexes' background merges took (their thread's, beside the
    /// transactions'), over the run and the drain.
    pub merge_s: f64,
    /// Seconds writes waited for a merge (in `tps`'s time on either timing).
    pub stall_s: f64,
    /// Wall seconds of the consistency checks (all passed, or there is no record).
    pub check_s: f64,
    /// `store`: wall seconds to close the store and open it again after the checks (which
    /// then ran again and passed); 0 for `memory`.
    #[serde(default)]
    pub reopen_s: f64,
    /// Digest of what the transactions read, equal for every index of a run.
    pub digest: String,
    /// `tps` over the first index's.
    pub tps_vs_first: f64,
    /// `index_bytes` over the first index's.
    pub space_vs_first: f64,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
}
