//! [`StoreStats`]: what a store holds and has done, the same figures whatever engine serves
//! it (each engine fills in those it has; [`super::engine::Base::stats`] the shared ones, and
//! [`Work`] the counts of an engine's merges or checkpoints and of the writes that waited).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What a store holds and has done since it was opened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreStats {
    /// The engine's name.
    pub engine: &'static str,
    /// Keys in the dynamic stages (live and frozen), tombstones included (`hybrid`; 0 for
    /// `btree`, which has none).
    pub dynamic_keys: usize,
    /// Bytes of memory of the dynamic stages.
    pub dynamic_bytes: usize,
    /// Records on disk: in the table (`hybrid`) or the tree (`btree`).
    pub table_records: u64,
    /// Key bytes of those records.
    pub table_key_bytes: u64,
    /// Value bytes of those records.
    pub table_value_bytes: u64,
    /// Bytes of memory of what locates records on disk: the table's model and separators
    /// (`hybrid`), the inner nodes (`btree`).
    pub model_bytes: usize,
    /// Bytes of the page cache over the store's block files.
    pub cache_bytes: usize,
    /// Bytes of memory of the record cache ([`super::StoreOptions::row_cache_bytes`]): the
    /// records it holds, each counted with its overhead, and its fixed part (a few KiB).
    pub row_cache_bytes: usize,
    /// Records in the record cache.
    pub row_cache_records: usize,
    /// All memory above: dynamic stages, model or inner nodes, cache, record cache.
    pub memory_bytes: usize,
    /// Bytes of the block files: the table (`hybrid`), the page file and the checkpoint
    /// image (`btree`); the checkpoint of the map (`log`).
    pub table_disk_bytes: u64,
    /// Bytes of the block files that are free for reuse (`btree`: blocks of replaced leaves
    /// and runs, reused by later writes; the file does not shrink). 0 for `hybrid`, whose
    /// merges write the table anew.
    pub free_disk_bytes: u64,
    /// Bytes of the write-ahead log.
    pub log_disk_bytes: u64,
    /// `log`: bytes of the log's live records, as the collector estimates them (each
    /// segment's bytes times the share of its operations that are their keys' newest);
    /// `log_disk_bytes / log_live_bytes` is the log's space amplification. 0 for the other
    /// engines.
    pub log_live_bytes: u64,
    /// `log`: bytes of records the collector rewrote at the head of the log since open.
    pub log_relocated_bytes: u64,
    /// `lsm`: sorted runs on disk, and the levels they are in (0 for the other engines).
    pub lsm_runs: usize,
    /// `lsm`: levels holding runs (level 0 counts when it holds any).
    pub lsm_levels: usize,
    /// `lsm`: bytes of memory of the runs' key filters held (in `model_bytes` too).
    pub filter_bytes: usize,
    /// `lsm`: runs whose key filter stays on disk, not in memory, because the filters held
    /// with the models would pass half the memory budget (the deepest runs' go first; a get
    /// of a key such a run lacks reads one of its blocks).
    pub shed_filter_runs: usize,
    /// `lsm`: bytes of runs and value log segments written since open, by flushes and by
    /// compactions; with the log's bytes, what the engine wrote for what was put (write
    /// amplification).
    pub lsm_written_bytes: u64,
    /// `lsm`: of those, bytes written by compactions.
    pub compaction_bytes: u64,
    /// `lsm`: bytes of runs compactions moved to the next level without rewriting them
    /// (a run that overlaps nothing there: a trivial move), since open.
    pub moved_bytes: u64,
    /// `lsm` with a value log: its segments, and their bytes on disk (in `table_disk_bytes`
    /// too).
    pub value_log_segments: usize,
    /// Bytes of the value log's segments on disk.
    pub value_log_bytes: u64,
    /// Bytes of values the runs refer to in the value log (a version a merge has not yet
    /// dropped counted): with `value_log_bytes`, the value log's space amplification.
    pub value_log_live_bytes: u64,
    /// Merges (`hybrid`), checkpoints (`btree`) or collector passes with their checkpoint
    /// (`log`) completed since open.
    pub merges: u64,
    /// Seconds spent in them.
    pub merge_seconds: f64,
    /// Writes that waited for a merge or a checkpoint.
    pub write_stalls: u64,
    /// Seconds writers waited.
    pub stall_seconds: f64,
    /// Log records replayed at open.
    pub recovered_records: u64,
    /// Seconds the open took to recover: read the files, replay the log, and (`log`) rebuild
    /// the map from it (paper 001 Fig. 16's recovery time).
    pub recovery_seconds: f64,
}

/// An engine's merges (`hybrid`) or checkpoints (`btree`) and the writes that waited for
/// them, counted as they happen.
#[derive(Default)]
pub(crate) struct Work {
    done: AtomicU64,
    nanos: AtomicU64,
    stalls: AtomicU64,
    stall_nanos: AtomicU64,
}

impl Work {
    /// One merge or checkpoint, started at `start`, completed.
    pub(crate) fn done(&self, start: Instant) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// One write waited, from `start` until now.
    pub(crate) fn stalled(&self, start: Instant) {
        self.stalls.fetch_add(1, Ordering::Relaxed);
        self.stall_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// `stats` with these counts.
    pub(crate) fn stats(&self, stats: StoreStats) -> StoreStats {
        StoreStats {
            merges: self.done.load(Ordering::Relaxed),
            merge_seconds: self.nanos.load(Ordering::Relaxed) as f64 / 1e9,
            write_stalls: self.stalls.load(Ordering::Relaxed),
            stall_seconds: self.stall_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            ..stats
        }
    }
}
