//! The record of kind `zero-intervals`: `lidx stats --zero-interval --json`, a record per row
//! (`lidx repro 002-table3`; no `schema` field, known by its fields).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One row of paper 002 Table 3 as `lidx stats --zero-interval --json` computes it (its
/// `rows`, each with the answer's dataset and records per block): the models a learned index
/// needs at an expected number of I/O pages per lookup, without and with disk-based zero
/// intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZeroIntervalRecord {
    /// Dataset name.
    pub dataset: String,
    /// Records per block.
    pub per_block: u64,
    /// Expected I/O pages per lookup asked for.
    pub pages: f64,
    /// `PGM` or `RadixSpline`.
    pub model: String,
    /// Error of the plain model at those pages.
    pub eps_plain: u64,
    /// Error of the zero-interval model at those pages.
    pub eps_zero: u64,
    /// Expected pages of the plain model.
    pub expected_pages_plain: f64,
    /// Expected pages of the zero-interval model.
    pub expected_pages_zero: f64,
    /// Models (segments, spline points) without zero intervals.
    pub models_plain: u64,
    /// Models with zero intervals.
    pub models_zero: u64,
    /// Models saved, percent.
    pub saving_percent: f64,
}
