//! What a join is asked to do: the algorithm ([`JoinAlgo`], with its CLI names) and the
//! settings ([`JoinParams`]).

use super::inlj::InljIndex;
use crate::error::{Error, Result};

/// A join algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinAlgo {
    /// Merge of two sorted tables.
    SortMerge,
    /// In-memory hash table on the smaller table.
    Hash,
    /// Partitioned (Grace) hash join under a memory budget.
    GraceHash,
    /// Indexed nested-loop join with an index over the larger table.
    Inlj(InljIndex),
    /// Unsorted tables: a B+-tree (key -> position) per table by inserts, scan + probe.
    UnsortedBTree,
    /// Unsorted tables: learned partitioning into buckets, bucket pairs sorted and joined.
    UnsortedLearned,
}

impl JoinAlgo {
    /// Every algorithm, in the order of the CLI's help.
    pub const ALL: [JoinAlgo; 10] = [
        JoinAlgo::SortMerge,
        JoinAlgo::Hash,
        JoinAlgo::GraceHash,
        JoinAlgo::Inlj(InljIndex::BTree),
        JoinAlgo::Inlj(InljIndex::Pgm),
        JoinAlgo::Inlj(InljIndex::SampledPgm),
        JoinAlgo::Inlj(InljIndex::RadixSpline),
        JoinAlgo::Inlj(InljIndex::Rmi),
        JoinAlgo::UnsortedBTree,
        JoinAlgo::UnsortedLearned,
    ];

    /// The CLI name: `sort-merge`, `hash`, `grace-hash`, `inlj-btree`, `inlj-pgm`,
    /// `inlj-sampled-pgm`, `inlj-rs`, `inlj-rmi`.
    pub fn name(self) -> &'static str {
        match self {
            JoinAlgo::SortMerge => "sort-merge",
            JoinAlgo::Hash => "hash",
            JoinAlgo::GraceHash => "grace-hash",
            JoinAlgo::Inlj(InljIndex::BTree) => "inlj-btree",
            JoinAlgo::Inlj(InljIndex::Pgm) => "inlj-pgm",
            JoinAlgo::Inlj(InljIndex::SampledPgm) => "inlj-sampled-pgm",
            JoinAlgo::Inlj(InljIndex::RadixSpline) => "inlj-rs",
            JoinAlgo::Inlj(InljIndex::Rmi) => "inlj-rmi",
            JoinAlgo::UnsortedBTree => "unsorted-btree",
            JoinAlgo::UnsortedLearned => "unsorted-learned",
        }
    }

    /// Parses a CLI name (see [`JoinAlgo::name`]).
    pub fn parse(name: &str) -> Result<JoinAlgo> {
        JoinAlgo::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| Error::InvalidParameter {
                name: "algo",
                value: name.to_string(),
                expected: "one of sort-merge, hash, grace-hash, inlj-btree, inlj-pgm, \
                           inlj-sampled-pgm, inlj-rs, inlj-rmi, unsorted-btree, unsorted-learned",
            })
    }

    /// True when the algorithm writes its output in key order (for sorted inputs).
    pub fn output_sorted(self) -> bool {
        !matches!(self, JoinAlgo::GraceHash)
    }
}

/// How to run a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinParams {
    /// The algorithm.
    pub algo: JoinAlgo,
    /// Worker threads (at least 1). More threads overlap more I/O and CPU (§6.4).
    pub threads: usize,
    /// Memory budget in bytes for the hash joins (`None`: unlimited).
    pub memory: Option<u64>,
    /// INLJ window in records (§6.5; `None`: each index's paper setting, see `super::inlj`).
    /// Wider windows mean smaller indexes and larger reads per lookup.
    pub window: Option<usize>,
}

impl Default for JoinParams {
    /// Sort-merge, one thread, no budget, the papers' windows.
    fn default() -> Self {
        JoinParams {
            algo: JoinAlgo::SortMerge,
            threads: 1,
            memory: None,
            window: None,
        }
    }
}
