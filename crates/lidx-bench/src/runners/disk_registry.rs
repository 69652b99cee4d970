//! The on-disk index registry: `--index` specs of `lidx build` and `lidx bench --on-disk`,
//! built into files and reopened as `Box<dyn DiskIndex<u64>>`.
//!
//! ```text
//! btree                       the disk B+-tree (paper 003 §4), bulk loaded full
//! btree:fill=70               ... with 70% full nodes
//! pgm:eps=64                  a static learned index: records in blocks, PGM in memory
//! pgm:eps=4:gran=16           ... the model over every 16th key (mini-pages, paper 002 G2)
//! rs:err=32:gran=page         ... a RadixSpline over the first key of every block
//! zonemap                     the zone map (min key per block)
//! pgm-zero:pages=1.5          PGM-Disk (paper 002 G3, zero intervals), eps from expected pages
//! pgm-zero:eps=63:eps_rec=8   ... with eps given
//! rs-zero:pages=1.2:bits=18   RadixSpline-Disk (zero intervals)
//! cpr-pgm:eps=64              CprLeCo_PGM_D: the LeCo-compressed PGM (paper 002 G4)
//! leco-zonemap                the zone map with LeCo-compressed minimums (paper 002 G5)
//! leco-zonemap-rough          LeCo-Zonemap-D: rough separators, same answers
//! auto:pages=1.5              the smaller of cpr-pgm and leco-zonemap-rough at 1.5 expected
//!                             blocks per lookup (paper 002 eq. 4 gives the PGM's eps)
//! ```
//!
//! Every name and parameter is the catalog's ([`DiskMapSpec`] for the B+-tree, [`DiskModel`]
//! for the models, with the `gran=` suffix); this registry only builds and opens them.
//! The zero-interval models are fitted to the file's records per block and predict items
//! (`gran=item` only); `pages=` is their expected blocks per lookup (paper 002 eq. 4), from which
//! [`resolve_zero_eps`] derives `eps` once the records per block are known.
//!
//! Any learned index of the in-memory registry (`pgm`, `spgm`, `rs`, `rmi`, `btree-model`,
//! `fiting`) takes the same parameters as there, plus `gran=item|page|<g>` (default `item`).
//! Runtime choices are not part of a spec: the B+-tree's memory-resident levels
//! ([`Resident`]) and the learned indexes' fetching strategy ([`Fetch`]) are given when the
//! file is opened, so one file serves every setting.
//!
//! Every entry's payload is [`payload_of`] its key, so answers can be checked.

use lidx::disk::DiskIndex;
use lidx::disk::{AnyStaticLearned, Fetch, Granularity, StaticLearned, StaticLearnedParams};
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::Storage;
use lidx::mem::Persist;
use lidx::mem::{build_smallest, Smallest, SmallestParams};
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{CprPgm, CprPgmParams};
use lidx::mem::{FitingParams, FitingTree};
use lidx::mem::{LecoZoneMap, RoughLecoZoneMap};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{PgmZero, PgmZeroParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{RadixSplineZero, RadixSplineZeroParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::mem::{ZoneMap, ZoneMapParams};
use lidx::raw::model::zero_interval::zero_eps_for_expected_pages;

use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};
use crate::registry::IndexSpec;
pub use lidx::catalog::DiskModelSpec as DiskModel;
use lidx::catalog::{granularity_text, parse_list, BadSpec, DiskMapSpec};
pub use lidx::spec::ZeroEps;

/// The accepted forms, for error messages and help, from the catalog
/// ([`DiskModel::disk_index_forms`]).
pub fn disk_index_forms() -> String {
    DiskModel::disk_index_forms()
}

/// The error of a zero-interval model for `per_block` records per block: given, or derived
/// from the expected blocks per lookup (paper 002 eq. 4).
pub fn resolve_zero_eps(eps: ZeroEps, per_block: usize) -> lidx::Result<usize> {
    match eps {
        ZeroEps::Eps(e) => Ok(e),
        ZeroEps::Pages(pages) => zero_eps_for_expected_pages(pages.get(), per_block),
    }
}

/// One on-disk index of an `--index` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskIndexSpec {
    /// The disk B+-tree.
    BTree {
        /// Bulk-load fill, percent of each node's capacity (1..=100).
        fill: u32,
    },
    /// A static learned index (records in blocks, model in memory).
    Learned {
        /// The model.
        model: DiskModel,
        /// What a model point stands for.
        granularity: Granularity,
    },
}

/// How to open an index file: the runtime choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenChoice {
    /// B+-tree levels kept in memory.
    pub resident: Resident,
    /// Learned indexes' fetching strategy.
    pub fetch: Fetch,
}

impl DiskIndexSpec {
    /// Parses one item such as `pgm:eps=64:gran=page` or `btree:fill=70`, by the catalog's
    /// tables ([`DiskMapSpec`], [`DiskModel`]).
    pub fn parse(item: &str) -> Result<DiskIndexSpec> {
        Ok(Self::parse_item(item)?)
    }

    fn parse_item(item: &str) -> std::result::Result<DiskIndexSpec, BadSpec> {
        if let Some(DiskMapSpec::BTree { fill }) = DiskMapSpec::parse_item(item) {
            return Ok(DiskIndexSpec::BTree { fill });
        }
        let (model, granularity) = DiskModel::parse_with_granularity(item)
            .ok_or_else(|| BadSpec::new("on-disk index", item, disk_index_forms()))?;
        Ok(DiskIndexSpec::Learned { model, granularity })
    }

    /// Parses a comma-separated list (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<DiskIndexSpec>> {
        Ok(parse_list(
            list,
            "on-disk index list",
            &disk_index_forms(),
            DiskIndexSpec::parse_item,
        )?)
    }

    /// The canonical spelling, every parameter written out.
    pub fn label(&self) -> String {
        match self {
            DiskIndexSpec::BTree { fill } => DiskMapSpec::BTree { fill: *fill }.label(),
            DiskIndexSpec::Learned { model, granularity } => model.label_at(*granularity),
        }
    }

    /// The file name the index is built in: its label made file-name friendly.
    pub fn file_name(&self) -> String {
        format!("{}.lidx", self.label().replace(':', "."))
    }

    /// True for the B+-tree (the runtime choice that applies is [`Resident`]).
    pub fn is_btree(&self) -> bool {
        matches!(self, DiskIndexSpec::BTree { .. })
    }

    /// Builds the index in `storage` from the sorted unique `keys`, with payloads of
    /// `payload_size` bytes ([`lidx::disk::DEFAULT_PAYLOAD_SIZE`] is paper 002's 8).
    pub fn build(&self, storage: &Storage, keys: &[u64], payload_size: usize) -> Result<()> {
        let name = self.file_name();
        let payload = |_: usize, k: &u64, out: &mut [u8]| payload_of(*k, out);
        match *self {
            DiskIndexSpec::BTree { fill } => {
                let params = DiskBTreeParams {
                    fill_factor: f64::from(fill) / 100.0,
                    payload_size,
                    ..DiskBTreeParams::default()
                };
                DiskBTree::build(storage, &name, keys, payload, params)?.flush()?;
            }
            DiskIndexSpec::Learned { model, granularity } => {
                let params = StaticLearnedParams {
                    granularity,
                    payload_size,
                    model_params: model.label(),
                    ..StaticLearnedParams::default()
                };
                let per_block = params.records_per_block::<u64>(storage.block_size());
                let group = granularity.group(per_block);
                let zone = ZoneMapParams::new((per_block / group).max(1));
                match model {
                    DiskModel::ZoneMap {} => {
                        learned(storage, &name, keys, params, |k| ZoneMap::build(k, zone))?
                    }
                    DiskModel::PgmZero { eps, eps_rec } => {
                        let eps = resolve_zero_eps(eps, per_block)?;
                        let zero = PgmZeroParams::new(eps, per_block, eps_rec);
                        learned(storage, &name, keys, params, |k| PgmZero::build(k, zero))?
                    }
                    DiskModel::RsZero { eps, bits } => {
                        let eps = resolve_zero_eps(eps, per_block)?;
                        let zero = RadixSplineZeroParams::new(eps, per_block, bits);
                        learned(storage, &name, keys, params, |k| {
                            RadixSplineZero::build(k, zero)
                        })?
                    }
                    DiskModel::CprPgm { eps } => learned(storage, &name, keys, params, |k| {
                        CprPgm::build(k, CprPgmParams::with_eps(eps))
                    })?,
                    DiskModel::LecoZoneMap {} => learned(storage, &name, keys, params, |k| {
                        LecoZoneMap::build(k, zone)
                    })?,
                    DiskModel::LecoZoneMapRough {} => learned(storage, &name, keys, params, |k| {
                        RoughLecoZoneMap::build(k, zone)
                    })?,
                    DiskModel::Auto { pages } => {
                        let firsts: Vec<u64>;
                        let model_keys = if group == 1 {
                            keys
                        } else {
                            firsts = keys.iter().step_by(group).copied().collect();
                            &firsts
                        };
                        let choice = SmallestParams {
                            per_block: zone.per_block,
                            expected_pages: pages.get(),
                        };
                        match build_smallest(model_keys, choice)? {
                            Smallest::Pgm(pgm) => {
                                learned(storage, &name, keys, params, |_| Ok(*pgm))?
                            }
                            Smallest::ZoneMap(zone) => {
                                learned(storage, &name, keys, params, |_| Ok(zone))?
                            }
                        }
                    }
                    DiskModel::Learned(spec) => match spec {
                        IndexSpec::Pgm { eps, eps_rec } => {
                            learned(storage, &name, keys, params, |k| {
                                Pgm::build(k, PgmParams::new(eps, eps_rec))
                            })?
                        }
                        IndexSpec::Spgm { every, eps } => {
                            learned(storage, &name, keys, params, |k| {
                                SampledPgm::build(k, SampledPgmParams::new(every, eps))
                            })?
                        }
                        IndexSpec::Rs { bits, err } => {
                            learned(storage, &name, keys, params, |k| {
                                RadixSpline::build(k, RadixSplineParams::new(bits as usize, err))
                            })?
                        }
                        IndexSpec::Rmi { leaves } => learned(storage, &name, keys, params, |k| {
                            Rmi::build(k, RmiParams::new(leaves))
                        })?,
                        IndexSpec::BtreeModel { every } => {
                            learned(storage, &name, keys, params, |k| {
                                BTreeModel::build(k, BTreeModelParams::with_every(every))
                            })?
                        }
                        IndexSpec::Fiting { eps } => learned(storage, &name, keys, params, |k| {
                            FitingTree::build(k, FitingParams::with_eps(eps))
                        })?,
                        other => {
                            return Err(BenchError::BadSpec {
                                what: "on-disk index",
                                got: other.label(),
                                expected: disk_index_forms(),
                            })
                        }
                    },
                }
            }
        }
        Ok(())
    }
}

fn learned<M: Persist<u64>>(
    storage: &Storage,
    name: &str,
    keys: &[u64],
    params: StaticLearnedParams,
    build_model: impl FnOnce(&[u64]) -> lidx::Result<M>,
) -> Result<()> {
    let payload = |_: usize, k: &u64, out: &mut [u8]| payload_of(*k, out);
    let index = StaticLearned::build(storage, name, keys, payload, params, build_model)?;
    drop(index);
    Ok(())
}

/// Opens the index file `name` of `storage`, whatever it holds (a B+-tree, or a static learned
/// index with any model: [`AnyStaticLearned`]), read-only, with the runtime `choice`. Nothing
/// is checked against a spec: [`DiskIndexSpec::open`] is the open of a file asked for by name.
pub fn open(storage: &Storage, name: &str, choice: OpenChoice) -> Result<Box<dyn DiskIndex<u64>>> {
    Ok(open_recorded(storage, name, choice)?.0)
}

/// The numeric index file `name`, opened as what its magic says it is, and the spec label its
/// header records.
fn open_recorded(
    storage: &Storage,
    name: &str,
    choice: OpenChoice,
) -> Result<(Box<dyn DiskIndex<u64>>, String)> {
    match AnyStaticLearned::<u64>::open(storage, name, Some(choice.fetch)) {
        Ok(index) => {
            let label = learned_label(index.params());
            Ok((Box::new(index), label))
        }
        Err(lidx::Error::BadMagic { .. }) => {
            let tree = DiskBTree::<u64>::open(storage, name, choice.resident, false)?;
            let label = btree_label(&tree.params());
            Ok((Box::new(tree), label))
        }
        Err(e) => Err(e.into()),
    }
}

/// The spec label of a disk B+-tree built with `params` (`btree:fill=70`); a fill factor that
/// is no whole percent is written out (`btree:fill=70.5`), so it matches no spec.
pub fn btree_label(params: &DiskBTreeParams) -> String {
    let percent = params.fill_factor * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("btree:fill={}", percent.round())
    } else {
        format!("btree:fill={percent}")
    }
}

/// The spec label of a static learned file built with `params`: its model's parameters as
/// [`DiskIndexSpec::build`] records them and its granularity (`pgm:eps=64:eps_rec=4:gran=item`).
/// A file whose builder recorded no model parameters says so, and matches no spec.
pub fn learned_label(params: &StaticLearnedParams) -> String {
    let model = if params.model_params.is_empty() {
        "a model of unrecorded parameters"
    } else {
        &params.model_params
    };
    format!("{model}:gran={}", granularity_text(params.granularity))
}

impl DiskIndexSpec {
    /// Opens this index's file ([`Self::file_name`]) in `storage` read-only with the runtime
    /// `choice`, after checking that the file is this index built with `payload_size`-byte
    /// payloads: what its header records (the B+-tree's fill factor; a learned file's model,
    /// its parameters and the granularity; the payload size) must be what was asked for. A
    /// file of other parameters under this name (two files swapped in a `--dir`) is
    /// [`lidx::Error::IndexMismatch`], never figures reported under the wrong label.
    pub fn open(
        &self,
        storage: &Storage,
        choice: OpenChoice,
        payload_size: usize,
    ) -> Result<Box<dyn DiskIndex<u64>>> {
        let name = self.file_name();
        let (index, label) = open_recorded(storage, &name, choice)?;
        let holds = (label, index.payload_size());
        if holds != (self.label(), payload_size) {
            return Err(lidx::Error::IndexMismatch {
                file: name,
                holds: format!("{} with {}-byte payloads", holds.0, holds.1),
                asked: format!("{} with {payload_size}-byte payloads", self.label()),
            }
            .into());
        }
        Ok(index)
    }

    /// The spec whose [`Self::file_name`] is `name`, `None` when no spec is named so. A label
    /// turns `:` into `.` and may itself hold dots (`pages=1.5`), so every reading of the
    /// name's dots is tried (names of more than 12 dots are no spec's).
    pub fn from_file_name(name: &str) -> Option<DiskIndexSpec> {
        let stem = name.strip_suffix(".lidx")?;
        let parts: Vec<&str> = stem.split('.').collect();
        let dots = parts.len() - 1;
        if dots > 12 {
            return None;
        }
        (0u32..1 << dots).find_map(|colons| {
            let mut text = parts[0].to_string();
            for (i, part) in parts[1..].iter().enumerate() {
                text.push(if colons >> i & 1 == 1 { ':' } else { '.' });
                text.push_str(part);
            }
            DiskIndexSpec::parse(&text)
                .ok()
                .filter(|spec| spec.file_name() == name)
        })
    }
}

impl DiskIndexSpec {
    /// The runtime choices this spec's file is opened with, each with the suffix its record's
    /// label takes: the B+-tree's once per `residents` choice (`:resident=inner`), a learned
    /// index's once per `fetches` strategy (`:fetch=all-at-once`).
    pub fn runtime_choices(
        &self,
        residents: &[Resident],
        fetches: &[Fetch],
    ) -> Vec<(OpenChoice, String)> {
        let open = OpenChoice::default();
        if self.is_btree() {
            let suffix = |r: Resident| format!(":resident={}", resident_text(r));
            let choice = |r| OpenChoice {
                resident: r,
                ..open
            };
            residents.iter().map(|&r| (choice(r), suffix(r))).collect()
        } else {
            let suffix = |f: Fetch| format!(":fetch={}", f.name());
            let choice = |f| OpenChoice { fetch: f, ..open };
            fetches.iter().map(|&f| (choice(f), suffix(f))).collect()
        }
    }
}

/// Parses `--resident`: `none`, `inner` (all inner levels) or a number of top levels.
pub fn parse_resident(text: &str) -> Result<Resident> {
    match text {
        "none" => Ok(Resident::None),
        "inner" => Ok(Resident::AllInner),
        k => k
            .parse::<u32>()
            .map(Resident::TopLevels)
            .map_err(|_| BenchError::BadSpec {
                what: "resident levels",
                got: text.to_string(),
                expected: "none, inner, or a number of top levels".to_string(),
            }),
    }
}

/// `none`, `inner` or the number, as [`parse_resident`] reads it.
pub fn resident_text(r: Resident) -> String {
    match r {
        Resident::None => "none".to_string(),
        Resident::AllInner => "inner".to_string(),
        Resident::TopLevels(k) => k.to_string(),
    }
}
