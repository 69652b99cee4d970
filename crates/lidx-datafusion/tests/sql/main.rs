//! lidx-datafusion's SQL tests, one file per concern, linked as one test binary: each binary
//! that links DataFusion is about 370 MB in a debug build, so four binaries cost CI's disk
//! and its two cores four links (`docs/results/datafusion.md`, "What it costs CI").

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod index_join;
mod plans;
mod sql_answers;
