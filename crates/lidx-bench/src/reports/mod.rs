//! Reports: every kind of record, one file each, with the schema that reads them back
//! ([`records`]); the terminal tables of the in-memory benchmark ([`report`]), the on-disk one
//! ([`disk_report`]) and the updatable on-disk one ([`updatable_report`]); the SVG plots
//! ([`plot`]); and `lidx report`'s page: its charts ([`charts`]) and the HTML page ([`page`]).

pub mod charts;
pub mod disk_report;
pub mod findings;
pub mod page;
pub mod plot;
pub mod records;
pub mod report;
pub mod updatable_report;
