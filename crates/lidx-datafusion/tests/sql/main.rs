//! lidx-datafusion's SQL tests, one file per concern, linked as one test binary: a binary
//! that links DataFusion took 376 MB in a debug build, so four of them cost CI's disk and its
//! two cores four links (`docs/results/datafusion.md`, "What CI builds and keeps on disk").

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod index_join;
mod plans;
mod sql_answers;
