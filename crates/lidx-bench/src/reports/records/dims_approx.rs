//! The record of kind `dims-approx/1`: `lidx dims approx` ([`crate::approx_dimension`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One algorithm at one setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApproxRecord {
    /// `dims-approx/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::approx")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Distinct keys.
    pub n: u64,
    /// `lsa`, `opt-pla` or `lsa-gap`.
    pub algorithm: String,
    /// The setting: partition size (`lsa`, `lsa-gap`) or maximum error (`opt-pla`).
    pub param: u64,
    /// Leaves (segments).
    pub leaves: u64,
    /// Mean |prediction - position| over every key.
    pub avg_error: f64,
    /// Largest |prediction - position|.
    pub max_error: u64,
    /// Median time of a lookup inside its leaf, ns.
    pub lookup_ns: f64,
    /// Bytes of the leaves' models, plus the gapped arrays' extra slots (`lsa-gap`).
    pub bytes: u64,
    /// Queries per timed loop.
    pub queries: u64,
    /// Timed loops.
    pub runs: u64,
    /// CPU model.
    pub cpu: String,
}
