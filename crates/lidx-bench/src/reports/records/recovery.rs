//! The record of kind `recovery/1`: `lidx recovery` ([`crate::recovery_runner`]).
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// One map's recovery and space figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryRecord {
    /// `recovery/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::recovery")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Dataset name.
    pub dataset: String,
    /// Distinct keys loaded.
    pub n: u64,
    /// The map, as `log:<map>` spells it.
    pub map: String,
    /// Bytes of value per key.
    pub payload_size: u64,
    /// Seconds to load the store (batches through the API).
    pub load_s: f64,
    /// Median seconds of a reopening: checkpoint read (if any), log replay and map rebuild.
    pub recovery_s: f64,
    /// Fastest reopening.
    pub recovery_s_min: f64,
    /// Slowest reopening.
    pub recovery_s_max: f64,
    /// Records recovered per second (median reopening).
    pub records_per_s: f64,
    /// The map's structure alone, bytes.
    pub index_bytes: u64,
    /// Structure and keys, bytes.
    pub index_keys_bytes: u64,
    /// Structure, keys and values, bytes.
    pub index_keys_values_bytes: u64,
    /// The store's log on disk, bytes (after the updates, when there were any).
    pub log_bytes: u64,
    /// Rounds of updates after the load, each a new value for every key (0: none, paper
    /// 001's setting).
    #[serde(default)]
    pub updates: u64,
    /// The collector's space ratio (`None`: off, every record kept).
    #[serde(default)]
    pub log_space_ratio: Option<f64>,
    /// Seconds the updates took, the collector's work included.
    #[serde(default)]
    pub update_s: f64,
    /// Bytes of the log's live records after the updates, as the store estimates them.
    #[serde(default)]
    pub log_live_bytes: u64,
    /// Bytes of the keys and values the store holds: `n * (8 + payload_size)`.
    #[serde(default)]
    pub user_bytes: u64,
    /// Bytes the collector rewrote at the head of the log during the updates.
    #[serde(default)]
    pub relocated_bytes: u64,
    /// Bytes of the checkpoint a reopening reads (0: none, the whole log is replayed).
    #[serde(default)]
    pub checkpoint_bytes: u64,
    /// Log records the median reopening replayed after the checkpoint.
    #[serde(default)]
    pub replayed_records: u64,
    /// Reopenings timed.
    pub runs: u64,
    /// CPU model.
    pub cpu: String,
    /// CPUs available.
    pub cores: u64,
    /// lidx-bench version.
    pub lidx_version: String,
}
