//! lidx-bench: datasets, workloads, the checked benchmark runner and its reports.
//!
//! Nothing in the `lidx` library depends on this crate; the `lidx` command line is a thin layer
//! over it.

pub mod count;
pub mod dataset;
pub mod disk_registry;
pub mod disk_report;
pub mod disk_runner;
pub mod disk_workload;
pub mod error;
pub mod generate;
pub mod gre;
pub mod keyfile;
pub mod kv_runner;
pub mod kv_store;
pub mod plot;
pub mod registry;
pub mod report;
pub mod runner;
pub mod sosd;
pub mod stats;
pub mod string_runner;
pub mod words;
pub mod workload;
pub mod ycsb;

pub use error::{BenchError, Result};
