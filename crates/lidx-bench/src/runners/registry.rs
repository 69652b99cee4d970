//! The static-index registry: `--index` specs, parsed by the catalog into typed [`IndexSpec`]s
//! ([`lidx::catalog`]), built here into `Box<dyn StaticIndex<u64>>` ([`BuildIndex`]).
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
//! unknown or repeated parameter, or a value that does not parse is a
//! [`lidx::catalog::BadSpec`] (a [`BenchError::BadSpec`] here) whose message lists every
//! accepted form with its defaults.
//!
//! The same index may appear several times with different parameters (`pgm:eps=16,pgm:eps=64`).
//! Reports name each by its [`IndexSpec::label`], the canonical spelling with every parameter
//! written out (`rs` becomes `rs:bits=18:err=32`).
//!
//! # Adding an index
//!
//! One row in the catalog's table ([`lidx::catalog::IndexSpec`]: variant, name, parameters with
//! types and defaults, docs) gives the enum variant, its parsing, its label and its help line;
//! one arm in [`BuildIndex::build`] builds it.

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

pub use lidx::catalog::IndexSpec;

pub use crate::count::{parse_count, show_count};
use crate::error::{BenchError, Result};
use crate::map_index::MapIndex;

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

/// Builds a parsed [`IndexSpec`]: the static-index role of the catalog.
pub trait BuildIndex {
    /// Builds the index on `keys` (sorted). A library refusal (unsorted keys, a bad parameter)
    /// is [`BenchError::Index`].
    fn build(&self, keys: &[u64]) -> Result<Box<dyn StaticIndex<u64>>>;
}

impl BuildIndex for IndexSpec {
    fn build(&self, keys: &[u64]) -> Result<Box<dyn StaticIndex<u64>>> {
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
