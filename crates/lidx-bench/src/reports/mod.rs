//! Reports: the in-memory benchmark's records and tables ([`report`]), the on-disk ones
//! ([`disk_report`]), those of updatable on-disk indexes ([`updatable_report`]), and the SVG
//! plots ([`plot`]).

pub mod disk_report;
pub mod plot;
pub mod report;
pub mod updatable_report;
