//! The record of kind `start-nodes/1`: `lidx start calibrate --json`, paper 004 Table I
//! ([`crate::start_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One node kind's costs (a row of Table I), measured and the paper's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeCostRecord {
    /// `start-nodes/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::start_nodes")]
    pub schema: String,
    /// The command line that wrote the record.
    #[serde(default)]
    pub command: String,
    /// The node kind (`Node4`, ..., `Rewired16M`, `MultiNode4`).
    pub node: String,
    /// ART levels the node spans (`1`, `2`, `3`, `2-4`).
    pub levels: String,
    /// ns per traversal with the node in L1.
    pub cached_ns: f64,
    /// ns with only its first cache line in L1.
    pub header_cached_ns: f64,
    /// ns with the node flushed from every cache.
    pub uncached_ns: f64,
    /// The paper's Table I (Intel i9-7900X), for comparison.
    pub paper_cached_ns: f64,
    /// The paper's header-cached figure.
    pub paper_header_cached_ns: f64,
    /// The paper's uncached figure.
    pub paper_uncached_ns: f64,
    /// Timed lookups per kind and cache state (the median is kept).
    pub runs: u64,
    /// ns of a TLB miss measured here (0 where it was not measured).
    pub page_walk_ns: f64,
    /// Last-level cache bytes the optimizer assumes.
    pub cache_bytes: u64,
}
