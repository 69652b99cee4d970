//! The index registry: `--index` spec strings, parsed into typed [`IndexSpec`]s and built into
//! `Box<dyn StaticIndex<u64>>`.
//!
//! A list is comma-separated; each item is a name followed by `:param=value` pairs in any order,
//! every parameter optional (its default applies):
//!
//! ```text
//! pgm:eps=64,rs:bits=18:err=32,rmi:leaves=1M,btree,sorted,spgm:every=128:eps=2,btree-model:every=256,fiting:eps=64
//! ```
//!
//! Numbers take an optional suffix: `K`, `M`, `G` (powers of 1000) or `Ki`, `Mi`, `Gi` (powers
//! of 1024), so `leaves=1M` is 1 000 000 and `leaves=64Ki` is 65 536. An unknown name, an
//! unknown or repeated parameter, or a value that does not parse is a [`BenchError::BadSpec`]
//! whose message lists every accepted form with its defaults.
//!
//! The same index may appear several times with different parameters (`pgm:eps=16,pgm:eps=64`).
//! Reports name each by its [`IndexSpec::label`], the canonical spelling with every parameter
//! written out (`rs` becomes `rs:bits=18:err=32`).
//!
//! # Adding an index
//!
//! One row in the `lidx::param_specs!` table below (variant, name, parameters with types and
//! defaults, docs) gives the enum variant, its parsing, its label and its help line; one arm in
//! [`IndexSpec::build`] builds it.

use lidx::mem::BTreeIndex;
use lidx::mem::BTreeParams;
use lidx::mem::SortedArray;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{CostModel, RadixIndex, StartParams, Strategy};
use lidx::mem::{FitingParams, FitingTree};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::StaticIndex;

pub use crate::count::{parse_count, show_count};
use crate::error::{BenchError, Result};
use crate::map_index::MapIndex;

/// The indexes `lidx bench` runs when `--index` is not given.
pub const DEFAULT_INDEXES: &str = "sorted,pgm:eps=64,rs,rmi,btree";

lidx::param_specs! {
    /// One index of an `--index` list, with its parameters. See the module docs.
    pub enum IndexSpec {
        /// Binary search over the whole array: the baseline every speedup is measured against.
        Sorted = "sorted" {},
        /// PGM-index (paper 001): optimal piecewise linear segments with error `eps`, recursively.
        Pgm = "pgm" {
            /// Maximum error in positions: smaller is faster lookups and more segments (memory).
            eps: usize = 64,
            /// Error of the upper levels: smaller is more upper segments and shorter level scans.
            eps_rec: usize = 8,
        },
        /// RadixSpline (Kipf et al., the learned index paper 000 §2.2 evaluates): a spline with error `err` and a radix table on its points.
        Rs = "rs" {
            /// Radix table bits: more bits is a larger table and a narrower spline search.
            bits: u32 = 18,
            /// Spline error in positions: smaller is faster lookups and more spline points.
            err: usize = 32,
        },
        /// Two-stage recursive model index (RMI): a root model choosing one of `leaves` linear
        /// models.
        Rmi = "rmi" {
            /// Second-stage models: more is smaller errors and more memory (the library's default,
            /// 2^20, is measured in `lidx::mem::Rmi`).
            leaves: usize = 1048576,
        },
        /// B+-tree over the sorted keys (the classic structure learned indexes must beat).
        Btree = "btree" {
            /// Key-position slots per leaf (16 bytes each): larger is fewer, bigger leaves.
            leaf: usize = 16,
            /// Separators per inner node: larger is fewer levels and longer in-node searches.
            inner: usize = 15,
        },
        /// Sampled PGM: a PGM over every `every`-th key with error `eps` on the sample.
        Spgm = "spgm" {
            /// Sampling stride: larger is a smaller index and wider windows.
            every: usize = 128,
            /// Error on the sample: smaller is more segments and narrower windows.
            eps: usize = 2,
        },
        /// B+-tree over every `every`-th key, used as a model: the window is one stride.
        BtreeModel = "btree-model" {
            /// Sampling stride: larger is a smaller tree and wider windows.
            every: usize = 256,
        },
        /// FITing-tree: greedy segments with error `eps` in a B+-tree.
        Fiting = "fiting" {
            /// Maximum error in positions: smaller is faster lookups and more segments.
            eps: usize = 64,
        },
        /// Adaptive radix tree (paper 004's baseline) over the distinct keys, exact answers.
        Art = "art" {},
        /// START (paper 004): ART tuned by the dynamic program with the cost model of
        /// `$LIDX_START_COST_MODEL` (written by `lidx start calibrate`), else the paper's Table I.
        Start = "start" {
            /// Space budget of a multilevel node, in times the ART nodes it replaces: larger is
            /// more multilevel nodes (shallower, more memory).
            budget: usize = 1,
            /// 1: the tuned tree's leaves and ART nodes move into a huge-page arena (no page walk
            /// per level, up to one huge page more memory); 0: they stay on the global allocator.
            arena: usize = 1,
        },
        /// START tuned by the greedy bottom-up variant instead of the dynamic program.
        StartGreedy = "start-greedy" {
            /// As for `start`.
            budget: usize = 1,
            /// As for `start`.
            arena: usize = 1,
        },
    }
    extra
    /// An updatable map (`lidx::mem::MapSpec`) used as a static index: each distinct key maps to
    /// its first position, found by `get` (present) or `lower_bound` (absent).
    Map(lidx::mem::MapSpec)
}

/// The cost model the `start` entries tune with: the file named by `LIDX_START_COST_MODEL`,
/// else the paper's Table I.
fn start_params(budget: usize, arena: usize, strategy: Strategy) -> Result<StartParams> {
    let model = match std::env::var_os("LIDX_START_COST_MODEL") {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| BenchError::BadSpec {
                what: "LIDX_START_COST_MODEL",
                got: format!("{}: {e}", path.to_string_lossy()),
                expected: "a file written by `lidx start calibrate`".to_string(),
            })?;
            CostModel::parse(&text)?
        }
        None => CostModel::default(),
    };
    Ok(StartParams {
        model,
        strategy,
        budget_factor: budget as f64,
        huge_arena: arena != 0,
        ..StartParams::default()
    })
}

impl IndexSpec {
    /// Parses one item such as `rs:bits=18:err=32`.
    pub fn parse(item: &str) -> Result<Self> {
        let bad = || BenchError::BadSpec {
            what: "index",
            got: item.to_string(),
            expected: accepted_forms(),
        };
        let (name, pairs) = lidx::spec::split_item(item).ok_or_else(bad)?;
        IndexSpec::from_parts(name, &pairs).ok_or_else(bad)
    }

    /// Parses a comma-separated list; it must name at least one index.
    pub fn parse_list(list: &str) -> Result<Vec<Self>> {
        let specs = list
            .split(',')
            .filter(|item| !item.trim().is_empty())
            .map(IndexSpec::parse)
            .collect::<Result<Vec<_>>>()?;
        if specs.is_empty() {
            return Err(BenchError::BadSpec {
                what: "index list",
                got: list.to_string(),
                expected: format!("a comma-separated list of {}", accepted_forms()),
            });
        }
        Ok(specs)
    }

    /// The parameters alone in plain digits for machine reading, `bits=18:err=32` (empty when
    /// there are none).
    pub fn params_text(&self) -> String {
        self.params()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(":")
    }

    /// True for the binary-search baseline that speedups are measured against.
    pub fn is_baseline(&self) -> bool {
        matches!(self, IndexSpec::Sorted {})
    }

    /// Builds the index on `keys` (sorted). A library refusal (unsorted keys, a bad parameter)
    /// is [`BenchError::Index`].
    pub fn build(&self, keys: &[u64]) -> Result<Box<dyn StaticIndex<u64>>> {
        Ok(match *self {
            IndexSpec::Sorted {} => Box::new(SortedArray::build(keys)?),
            IndexSpec::Pgm { eps, eps_rec } => {
                Box::new(Pgm::build(keys, PgmParams::new(eps, eps_rec))?)
            }
            IndexSpec::Rs { bits, err } => Box::new(RadixSpline::build(
                keys,
                RadixSplineParams::new(bits as usize, err),
            )?),
            IndexSpec::Rmi { leaves } => Box::new(Rmi::build(keys, RmiParams::new(leaves))?),
            IndexSpec::Spgm { every, eps } => {
                Box::new(SampledPgm::build(keys, SampledPgmParams::new(every, eps))?)
            }
            IndexSpec::Btree { leaf, inner } => Box::new(BTreeIndex::build(
                keys,
                BTreeParams::with_slots(leaf, inner),
            )?),
            IndexSpec::BtreeModel { every } => Box::new(BTreeModel::build(
                keys,
                BTreeModelParams::with_every(every),
            )?),
            IndexSpec::Fiting { eps } => {
                Box::new(FitingTree::build(keys, FitingParams::with_eps(eps))?)
            }
            IndexSpec::Art {} => Box::new(RadixIndex::art(keys)?),
            IndexSpec::Start { budget, arena } => Box::new(RadixIndex::start(
                keys,
                start_params(budget, arena, Strategy::DynamicProgramming)?,
            )?),
            IndexSpec::StartGreedy { budget, arena } => Box::new(RadixIndex::start(
                keys,
                start_params(budget, arena, Strategy::Greedy)?,
            )?),
            IndexSpec::Map(spec) => Box::new(MapIndex::build(&spec, keys)?),
        })
    }
}

/// Every accepted form, comma-separated, for error messages and help text.
pub fn accepted_forms() -> String {
    format!(
        "one of {} (numbers accept K/M/G and Ki/Mi/Gi suffixes)",
        IndexSpec::forms().join(", ")
    )
}
