//! Options and counters of the [`HybridIndex`](super::HybridIndex).
//!
//! Paper 002 §9.1 names the two knobs: the merge trigger (a constant budget for the dynamic
//! stage, or a ratio to the static stage, R = 178 by default in §9.1 so that the dynamic stage
//! plus the static models never exceed the B+-tree's inner nodes) and the merge concurrency.
//! Here the static stage's model ([`StaticModel`]), its page fetching (G1) and the write-ahead
//! log's fsync policy are chosen too, and one memory budget can bound the whole index.

use crate::disk::static_learned::Fetch;
use crate::error::{Error, Result};
use crate::kv::{WalOptions, WalStats};

/// Paper 002 §9.1's default merge ratio: the dynamic stage may hold `static_len / 178` entries.
pub const DEFAULT_MERGE_RATIO: f64 = 178.0;

/// Entries the dynamic stage may always hold under [`MergeTrigger::Ratio`], however small the
/// static stage: without a floor an empty static stage would merge on every write.
pub const MIN_RATIO_ENTRIES: usize = 1024;

/// The model of the static stage's files (paper 002 §9: hybrid-PGM-disk uses a PGM,
/// hybrid-LeCo-disk the LeCo zone map).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StaticModel {
    /// The PGM-index with error `eps` (items): `1 + (2 eps + 1) / P` blocks per lookup on
    /// average (paper 002 eq. 4, `P` records per block); larger eps, less memory.
    Pgm {
        /// Maximum error in items, at least 1.
        eps: usize,
    },
    /// The PGM-index with disk-based zero intervals (G3, §6.1), its eps derived from the
    /// expected blocks read per lookup (`pages >= 1`): fewer segments than `Pgm` at equal I/O.
    PgmZero {
        /// Expected blocks read per lookup.
        pages: f64,
    },
    /// The compressed PGM (`CprLeCo_PGM_D`, G4, §7) with error `eps`.
    CprPgm {
        /// Maximum error in items, at least 1.
        eps: usize,
    },
    /// `LeCo-Zonemap-D` (G5, §8.2): the rough LeCo-compressed zone map, exactly one block per
    /// lookup of a present key, the fewest I/Os of all.
    LecoZoneMap,
    /// Whichever of `CprPgm` and `LecoZoneMap` is smaller at `pages` expected blocks per
    /// lookup ([`crate::mem::smallest::build_smallest`]), decided again at every merge.
    Auto {
        /// Expected blocks read per lookup.
        pages: f64,
    },
}

impl Default for StaticModel {
    /// [`StaticModel::LecoZoneMap`]: one block per lookup, the best read path (the disk
    /// B+-tree's I/O) with a model a few bytes per block.
    fn default() -> Self {
        StaticModel::LecoZoneMap
    }
}

impl StaticModel {
    fn check(self) -> Result<()> {
        match self {
            StaticModel::Pgm { eps } | StaticModel::CprPgm { eps } if eps == 0 => {
                Err(Error::InvalidParameter {
                    name: "model eps",
                    value: "0".to_string(),
                    expected: "an error of at least 1 item",
                })
            }
            StaticModel::PgmZero { pages } | StaticModel::Auto { pages }
                if !(pages >= 1.0 && pages.is_finite()) =>
            {
                Err(Error::InvalidParameter {
                    name: "model pages",
                    value: pages.to_string(),
                    expected: "a finite number of expected blocks per lookup, at least 1",
                })
            }
            _ => Ok(()),
        }
    }

    /// Short name for reports: `pgm:<eps>`, `pgm-zero:<pages>`, `cpr-pgm:<eps>`,
    /// `leco-zonemap`, `auto:<pages>`.
    pub fn name(self) -> String {
        match self {
            StaticModel::Pgm { eps } => format!("pgm:{eps}"),
            StaticModel::PgmZero { pages } => format!("pgm-zero:{pages}"),
            StaticModel::CprPgm { eps } => format!("cpr-pgm:{eps}"),
            StaticModel::LecoZoneMap => "leco-zonemap".to_string(),
            StaticModel::Auto { pages } => format!("auto:{pages}"),
        }
    }
}

/// When the dynamic stage is frozen and merged into the static stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MergeTrigger {
    /// The dynamic stage may grow to `static_len / R` entries (at least
    /// [`MIN_RATIO_ENTRIES`]): the amortized merge cost stays constant as the index grows
    /// (paper 002 §9.1). Larger R: less memory, more merges. R must be finite and > 0.
    Ratio(f64),
    /// The dynamic stage may grow to this many entries (at least 1). Larger: more memory,
    /// fewer merges.
    Constant(usize),
}

impl Default for MergeTrigger {
    /// `Ratio(178)`, paper 002 §9.1's default.
    fn default() -> Self {
        MergeTrigger::Ratio(DEFAULT_MERGE_RATIO)
    }
}

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
        match self.trigger {
            MergeTrigger::Ratio(r) if !(r > 0.0 && r.is_finite()) => {
                return Err(Error::InvalidParameter {
                    name: "trigger ratio",
                    value: r.to_string(),
                    expected: "a finite ratio above 0",
                })
            }
            MergeTrigger::Constant(0) => {
                return Err(Error::InvalidParameter {
                    name: "trigger entries",
                    value: "0".to_string(),
                    expected: "at least 1 entry",
                })
            }
            _ => {}
        }
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
        match self.trigger {
            MergeTrigger::Ratio(r) => ((static_len as f64 / r) as usize).max(MIN_RATIO_ENTRIES),
            MergeTrigger::Constant(n) => n,
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
