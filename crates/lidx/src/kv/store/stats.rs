//! [`StoreStats`]: what a store holds and has done, the same figures whatever engine serves
//! it (each engine fills in those it has; [`super::engine::Base::stats`] the shared ones).

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
    /// All memory above: dynamic stages, model or inner nodes, cache.
    pub memory_bytes: usize,
    /// Bytes of the block files: the table (`hybrid`), the page file and the checkpoint
    /// image (`btree`).
    pub table_disk_bytes: u64,
    /// Bytes of the block files that are free for reuse (`btree`: blocks of replaced leaves
    /// and runs, reused by later writes; the file does not shrink). 0 for `hybrid`, whose
    /// merges write the table anew.
    pub free_disk_bytes: u64,
    /// Bytes of the write-ahead log.
    pub log_disk_bytes: u64,
    /// Merges (`hybrid`) or checkpoints (`btree`) completed since open.
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
