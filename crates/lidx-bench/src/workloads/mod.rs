//! Workloads: in-memory lookups ([`workload`]), on-disk lookups and scans
//! ([`disk_workload`]), and paper 002's YCSB-derived plans ([`ycsb`]).

pub mod disk_workload;
pub mod workload;
pub mod ycsb;
