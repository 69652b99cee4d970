//! The record of kind `dims-structure/1`: `lidx dims structure` ([`crate::structure_dimension`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One structure over one set of leaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructureRecord {
    /// `dims-structure/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::structure")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Distinct keys.
    pub n: u64,
    /// `rmi`, `ats`, `btree` or `lrs`.
    pub structure: String,
    /// The leaves' Opt-PLA error.
    pub eps: u64,
    /// Leaves routed to.
    pub leaves: u64,
    /// Median root-to-leaf time, ns.
    pub lookup_ns: f64,
    /// Bytes of the structure.
    pub bytes: u64,
    /// Queries per timed loop.
    pub queries: u64,
    /// Timed loops.
    pub runs: u64,
    /// CPU model.
    pub cpu: String,
}
