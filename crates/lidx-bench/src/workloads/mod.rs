//! Workloads: in-memory lookups ([`workload`]), on-disk lookups and scans
//! ([`disk_workload`]), paper 003's six workloads on updatable on-disk indexes
//! ([`update_workload`]), and paper 002's YCSB-derived plans ([`ycsb`]).

pub mod disk_workload;
pub mod update_workload;
pub mod workload;
pub mod ycsb;
