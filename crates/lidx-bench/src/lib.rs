//! lidx-bench: datasets, workloads, the checked benchmark runners and their reports.
//!
//! Nothing in the `lidx` library depends on this crate; the `lidx` command line is a thin layer
//! over it. The folders are the four parts ([`datasets`], [`workloads`], [`runners`],
//! [`reports`]), the papers' experiments by name ([`repro`], for `lidx repro`) and the store's
//! crash-test harness ([`torture`], for `lidx kv torture`); each module of the four parts is
//! also re-exported at the crate root (`lidx_bench::dataset`, `lidx_bench::runner`, ...), the
//! paths the command line and the tests use.

pub mod datasets;
pub mod error;
pub mod reports;
pub mod repro;
pub mod runners;
pub mod torture;
pub mod tpcc;
pub mod workloads;

pub use datasets::{count, dataset, generate, gre, keyfile, sosd, stats, user_keys, words};
pub use error::{BenchError, Result};
pub use reports::{charts, disk_report, findings, page, plot, records, report, updatable_report};
pub use runners::{
    approx_dimension, byte_disk_registry, byte_disk_runner, byte_store, disk_registry, disk_runner,
    insert_dimension, kv_child, kv_runner, kv_store, map_index, map_runner, memory_limit,
    process_io, recovery_runner, registry, route, runner, start_runner, store_keys, string_runner,
    structure_dimension, updatable_registry, updatable_runner,
};
pub use workloads::{disk_workload, update_workload, workload, ycsb};
