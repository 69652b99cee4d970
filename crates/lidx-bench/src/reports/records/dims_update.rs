//! The record of kind `dims-update/1`: `lidx dims insert` and `lidx dims retrain`
//! ([`crate::insert_dimension`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One subject at one checkpoint of its inserts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DimsUpdateRecord {
    /// `dims-update/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::update")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Distinct keys (bulk-loaded plus inserted).
    pub n: u64,
    /// Keys bulk-loaded.
    pub loaded: u64,
    /// Keys inserted up to this checkpoint.
    pub inserted: u64,
    /// `buffer`, `inplace`, `gap`, `dpgm` or `alex`.
    pub strategy: String,
    /// The map as `lidx bench --index` spells it.
    pub index: String,
    /// Reserved space: slots per segment, the dynamic PGM's first level; none for ALEX.
    pub reserve: Option<u64>,
    /// Mean time of one insert so far, retraining included, ns (median over the runs).
    pub insert_ns: f64,
    /// Time of the inserts so far, retraining included, s (median over the runs).
    pub insert_s: f64,
    /// Retrains so far.
    pub retrains: u64,
    /// Time of the retrains so far, s (median over the runs).
    pub retrain_s: f64,
    /// Mean time of one retrain, us.
    pub retrain_avg_us: f64,
    /// Bytes of the map after all inserts.
    pub bytes: u64,
    /// Timed runs.
    pub runs: u64,
    /// Seed of the split and the insert order.
    pub seed: u64,
    /// CPU model.
    pub cpu: String,
}
