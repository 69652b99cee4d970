//! The record of kind `start-mixed/1`: `lidx start bench --out`, paper 004 Fig. 8
//! ([`crate::start_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One tree's run of the read-mostly workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedRecord {
    /// `start-mixed/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::start_mixed")]
    pub schema: String,
    /// The command line that wrote the record.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// `art`, `start` (dynamic programming) or `start-greedy`.
    pub tree: String,
    /// Distinct keys.
    pub keys: u64,
    /// Keys built on.
    pub built: u64,
    /// Keys inserted after the build (latest-skewed sample).
    pub inserted: u64,
    /// Timed lookups per round.
    pub lookups: u64,
    /// Lookup rounds (medians are reported).
    pub runs: u64,
    /// Build (and, for START, tuning) time, s.
    pub build_s: f64,
    /// Mean time of one insert, ns.
    pub insert_ns: f64,
    /// Mean time of one lookup, ns (median round).
    pub lookup_ns: f64,
    /// Mean time of one operation, inserts and lookups together, ns (median round).
    pub mixed_op_ns: f64,
    /// Operations per second, inserts and lookups together (median round).
    pub mixed_ops_per_s: f64,
    /// ART's time per operation over this tree's, the median of the per-round ratios (1 for
    /// ART).
    pub speedup_vs_art: f64,
    /// The per-round ratios, space-separated.
    pub rounds: String,
    /// Bytes per key after the inserts.
    pub bytes_per_key: f64,
    /// Inner nodes per kind after the inserts.
    pub node_mix: String,
}
