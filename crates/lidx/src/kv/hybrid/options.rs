//! Options and counters of the [`HybridIndex`](super::HybridIndex): the stages' options
//! (`crate::disk::hybrid`: model, fetching, merge trigger and threads), the write-ahead log's
//! fsync policy, and one memory budget that can bound the whole index.

use crate::disk::hybrid::{MergeTrigger, StageOptions, StaticModel};
use crate::disk::static_learned::Fetch;
use crate::error::{Error, Result};
use crate::kv::{WalOptions, WalStats};

/// Options of [`HybridIndex`](super::HybridIndex)'s `create` and `open`.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridOptions {
    /// Bytes of every payload (default [`crate::disk::DEFAULT_PAYLOAD_SIZE`]); fixed when the
    /// index is created, `open` refuses another value.
    pub payload_size: usize,
    /// The static stage's model, used by `create` and by every merge.
    pub model: StaticModel,
    /// How lookups read the static stage's blocks (G1); all-at-once by default.
    pub fetch: Fetch,
    /// When to merge.
    pub trigger: MergeTrigger,
    /// One memory budget in bytes for the dynamic stage plus the static stage's models: when
    /// set, the dynamic stage is merged as soon as it holds more than the budget minus the
    /// models (or the trigger fires, whichever comes first). `None`: only the trigger counts.
    /// While a merge runs, its frozen stage is held besides the new dynamic stage, so the peak
    /// is up to twice the dynamic share (plus one growth step of a stage's payload arena).
    pub memory_budget: Option<usize>,
    /// Threads that build the new static files of a merge (at least 1): the merged records are
    /// split into this many key ranges of equal counts, one static file each.
    pub merge_threads: usize,
    /// The write-ahead log's options (fsync policy).
    pub wal: WalOptions,
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions {
            payload_size: crate::disk::DEFAULT_PAYLOAD_SIZE,
            model: StaticModel::default(),
            fetch: Fetch::default(),
            trigger: MergeTrigger::default(),
            memory_budget: None,
            merge_threads: 1,
            wal: WalOptions::default(),
        }
    }
}

impl HybridOptions {
    pub(super) fn check(&self) -> Result<()> {
        self.model.check()?;
        self.trigger.check()?;
        if self.merge_threads == 0 || self.merge_threads > 1024 {
            return Err(Error::InvalidParameter {
                name: "merge_threads",
                value: self.merge_threads.to_string(),
                expected: "1 to 1024 threads",
            });
        }
        if self.payload_size > u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: self.payload_size.to_string(),
                expected: "at most 2^32 - 1 bytes",
            });
        }
        Ok(())
    }

    /// Entries the dynamic stage may hold over a static stage of `static_len` entries.
    pub(super) fn max_entries(&self, static_len: usize) -> usize {
        self.trigger.max_entries(static_len)
    }

    /// What the stages' merges write the static files with.
    pub(super) fn stage(&self) -> StageOptions {
        StageOptions {
            payload_size: self.payload_size,
            model: self.model,
            fetch: self.fetch,
            merge_threads: self.merge_threads,
        }
    }
}

/// Counters and sizes of a [`HybridIndex`](super::HybridIndex).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HybridStats {
    /// Merges completed since open.
    pub merges: u64,
    /// Time spent in completed merges, in nanoseconds (background time, not writers').
    pub merge_nanos: u64,
    /// Entries (tombstones included) in the dynamic stage.
    pub dynamic_len: usize,
    /// Entries in the frozen dynamic stage being merged (0 when no merge runs).
    pub frozen_len: usize,
    /// Records in the static stage.
    pub static_len: usize,
    /// Static files (parts of the static stage).
    pub static_files: usize,
    /// Writes that waited because the dynamic stage was full while a merge still ran.
    pub write_stalls: u64,
    /// Time writers spent stalled, in nanoseconds.
    pub stall_nanos: u64,
    /// Bytes of the dynamic and frozen stages.
    pub dynamic_bytes: usize,
    /// Bytes of the static stage's models (what it keeps in memory).
    pub static_memory_bytes: usize,
    /// The write-ahead log's counters (zero when opened read-only).
    pub wal: WalStats,
}
