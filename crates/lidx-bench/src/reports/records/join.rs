//! The record of kind `join/1`: `lidx join`'s JSON line.
//!
//! One file per kind of record: the fields a file of that kind holds; how a file is read
//! and which version of a kind this build knows is [`super`]'s.

use serde::{Deserialize, Serialize};

/// What `lidx join` prints: the library's [`lidx::join::JoinReport`] and where its tables
/// were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JoinRecord {
    /// `join/<version>`.
    #[serde(default = "crate::records::default_schema::join")]
    pub schema: String,
    /// The command line that wrote the record.
    #[serde(default)]
    pub command: String,
    /// The join's figures.
    #[serde(flatten)]
    pub report: lidx::join::JoinReport,
    /// The left table.
    pub left: String,
    /// The right table.
    pub right: String,
    /// The output table.
    pub out: String,
    /// The device, as the storage describes it.
    pub device: String,
}
