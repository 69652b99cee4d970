//! Options of the hybrid index's stages: the static stage's model, the merge trigger and what
//! a merge needs to write the static files.
//!
//! Paper 002 §9.1 names the two knobs: the merge trigger (a constant budget for the dynamic
//! stage, or a ratio to the static stage, R = 178 by default in §9.1 so that the dynamic stage
//! plus the static models never exceed the B+-tree's inner nodes) and the merge concurrency.
//! Here the static stage's model ([`StaticModel`]) and its page fetching (G1) are chosen too.
//! The durable index's own options (the log's fsync policy, a memory budget) are
//! [`crate::kv::HybridOptions`].

use crate::disk::static_learned::Fetch;
use crate::error::{Error, Result};

/// Paper 002 §9.1's default merge ratio: the dynamic stage may hold `static_len / 178` entries.
pub(super) const DEFAULT_MERGE_RATIO: f64 = 178.0;

/// Entries the dynamic stage may always hold under [`MergeTrigger::Ratio`], however small the
/// static stage: without a floor an empty static stage would merge on every write.
pub(super) const MIN_RATIO_ENTRIES: usize = 1024;

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
    /// Refuses an eps of 0 and a page budget below 1 or not finite.
    pub fn check(self) -> Result<()> {
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
    /// `MIN_RATIO_ENTRIES`): the amortized merge cost stays constant as the index grows
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

impl MergeTrigger {
    /// Refuses a ratio that is not finite and above 0, and a constant of 0 entries.
    pub fn check(self) -> Result<()> {
        match self {
            MergeTrigger::Ratio(r) if !(r > 0.0 && r.is_finite()) => Err(Error::InvalidParameter {
                name: "trigger ratio",
                value: r.to_string(),
                expected: "a finite ratio above 0",
            }),
            MergeTrigger::Constant(0) => Err(Error::InvalidParameter {
                name: "trigger entries",
                value: "0".to_string(),
                expected: "at least 1 entry",
            }),
            _ => Ok(()),
        }
    }

    /// Entries the dynamic stage may hold over a static stage of `static_len` entries.
    pub fn max_entries(self, static_len: usize) -> usize {
        match self {
            MergeTrigger::Ratio(r) => ((static_len as f64 / r) as usize).max(MIN_RATIO_ENTRIES),
            MergeTrigger::Constant(n) => n,
        }
    }
}

/// What the static stage's files are written with: the part of the durable index's options
/// that a merge reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageOptions {
    /// Bytes of every payload.
    pub payload_size: usize,
    /// The static files' model.
    pub model: StaticModel,
    /// How lookups read the static files' blocks (G1).
    pub fetch: Fetch,
    /// Static files a merge writes (at least 1), split by key range into equal counts.
    pub merge_threads: usize,
}
