//! Runners: the checked benchmark of in-memory indexes ([`runner`], built by [`registry`]),
//! of byte-string indexes ([`string_runner`]), of on-disk indexes ([`disk_runner`], built and
//! opened by [`disk_registry`]; over byte-string keys [`byte_disk_runner`], built and opened by
//! [`byte_disk_registry`], on the same measurement), of updatable on-disk indexes under paper
//! 003's six workloads ([`updatable_runner`], built by [`updatable_registry`]) and of stores under YCSB ([`kv_runner`], each store in a child process of its own
//! ([`kv_child`]), over the adapters of [`kv_store`], every key type made bytes by [`store_keys`]), and START's node costs and read-mostly workload ([`start_runner`], paper 004); the on-disk and YCSB runners share `core` (thread runs, the checked get,
//! clocks and histograms). Which of them a `lidx bench` invocation runs is [`route`]'s
//! decision, by the catalog role of its indexes.

pub mod approx_dimension;
pub mod byte_disk_registry;
pub mod byte_disk_runner;
pub mod byte_store;
pub(crate) mod core;
pub mod disk_registry;
pub mod disk_runner;
pub mod insert_dimension;
pub mod kv_child;
pub mod kv_runner;
pub mod kv_store;
pub mod map_index;
pub mod map_runner;
pub mod memory_limit;
pub mod process_io;
pub mod recovery_runner;
pub mod registry;
pub mod route;
pub mod runner;
pub mod start_runner;
pub mod store_keys;
pub mod string_runner;
pub mod structure_dimension;
pub mod updatable_registry;
pub mod updatable_runner;
