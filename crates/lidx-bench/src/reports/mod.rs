//! Reports: the in-memory benchmark's records and tables ([`report`]), the on-disk ones
//! ([`disk_report`]), those of updatable on-disk indexes ([`updatable_report`]), and the SVG
//! plots ([`plot`]).
//! ([`disk_report`]), the SVG plots ([`plot`]), and `lidx report`'s page: reading result files
//! of every kind ([`records`]), its charts ([`charts`]) and the HTML page ([`page`]).

pub mod charts;
pub mod disk_report;
pub mod findings;
pub mod page;
pub mod plot;
pub mod records;
pub mod report;
pub mod updatable_report;
