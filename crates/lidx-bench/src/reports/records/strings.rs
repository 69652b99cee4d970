//! The record of kind `bench-strings/1`: `lidx bench` on text or `str16` keys
//! ([`crate::string_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// What one index measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StringRecord {
    /// `bench-strings/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::strings")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// The dataset's name.
    pub dataset: String,
    /// Keys.
    pub n: u64,
    /// The index label.
    pub index: String,
    /// Build seconds.
    pub build_s: f64,
    /// Bytes of the index (0 for binary search).
    pub bytes: u64,
    /// Mean window width over the queries.
    pub mean_window: f64,
    /// Largest window width.
    pub max_window: u64,
    /// Median over runs of the mean ns per lookup, back to back.
    pub mean_ns: f64,
    /// `mean_ns` of `sorted` over this one, when `sorted` ran.
    pub speedup_vs_binary: Option<f64>,
}
