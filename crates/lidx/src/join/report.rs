//! [`JoinReport`]: what a join measured, one JSON line of `lidx join`, and the I/O counters it
//! is measured with.

use super::table::TableKey;
use crate::io::{IoStats, Storage};

/// What a join measured. Durations in seconds.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JoinReport {
    /// Algorithm name ([`super::JoinAlgo::name`]).
    pub algo: String,
    /// Key type (`u64`, `str16`).
    pub key_type: String,
    /// Records of the left and right tables.
    pub left_count: u64,
    /// Records of the right table.
    pub right_count: u64,
    /// Threads used.
    pub threads: usize,
    /// INLJ window setting, if given.
    pub window: Option<usize>,
    /// Memory budget, if given.
    pub memory: Option<u64>,
    /// Time of the join itself: from the index in memory (or the start, without one) to the
    /// output table written.
    pub join_seconds: f64,
    /// Time to build (and save) or load the index; 0 without one.
    pub index_seconds: f64,
    /// True when the index was loaded from its saved file.
    pub index_loaded: bool,
    /// Where the index came from: `loaded`, `built` (no saved file), or `rebuilt: <why>` when a
    /// saved file was there but not for these records or settings (`rebuilt: stale`: the table
    /// was re-created; see `super::table_index`); `None` without an index.
    pub index: Option<String>,
    /// Bytes the index keeps in memory (0 without one).
    pub index_bytes: u64,
    /// Bytes of the saved index file (0 without one).
    pub index_file_bytes: u64,
    /// Blocks read during the join (index build or load excluded).
    pub blocks_read: u64,
    /// Bytes read during the join.
    pub bytes_read: u64,
    /// Read requests during the join.
    pub read_requests: u64,
    /// Blocks written during the join (the output, thread parts and partitions).
    pub blocks_written: u64,
    /// Bytes written during the join.
    pub bytes_written: u64,
    /// Output records.
    pub output_count: u64,
    /// Order-independent checksum of the output records (`super::output`); `None` for a
    /// `super::baseline`, which joins nothing (see `read_checksum`).
    pub checksum: Option<u64>,
    /// A baseline's sum of the keys it read, only there so the reads cannot be optimized away;
    /// no join's checksum is comparable to it. `None` (and absent from the JSON) for joins.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub read_checksum: Option<u64>,
    /// True when the output is in key order.
    pub output_sorted: bool,
}

impl JoinReport {
    /// The report of `algo` over tables of `(left, right)` records of `K` that took
    /// `join_seconds`, read and wrote `io` and output `output_count` records: one thread, no
    /// window, budget or index, no checksum yet, output in key order. The callers set what
    /// differs.
    pub(super) fn measured<K: TableKey>(
        algo: &str,
        (left_count, right_count): (u64, u64),
        join_seconds: f64,
        io: IoStats,
        output_count: u64,
    ) -> JoinReport {
        JoinReport {
            algo: algo.to_string(),
            key_type: K::NAME.to_string(),
            left_count,
            right_count,
            threads: 1,
            window: None,
            memory: None,
            join_seconds,
            index_seconds: 0.0,
            index_loaded: false,
            index: None,
            index_bytes: 0,
            index_file_bytes: 0,
            blocks_read: io.read_blocks,
            bytes_read: io.read_bytes,
            read_requests: io.read_requests,
            blocks_written: io.write_blocks,
            bytes_written: io.write_bytes,
            output_count,
            checksum: None,
            read_checksum: None,
            output_sorted: true,
        }
    }
}

/// Summed counters of the distinct storages among `storages`.
pub(super) fn stats_of(storages: &[&Storage]) -> IoStats {
    let mut sum = IoStats::default();
    for (i, s) in storages.iter().enumerate() {
        if !storages[..i].iter().any(|t| std::ptr::eq(*t, *s)) {
            sum = sum + s.stats();
        }
    }
    sum
}
