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
//! The zero-interval models are fitted to the file's records per block and predict items
//! (`gran=item` only); `pages=` is their expected blocks per lookup (paper 002 eq. 4), from which
//! [`zero_eps_for_expected_pages`] derives `eps` once the records per block are known.
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
use lidx::catalog::DiskMapSpec;

/// The accepted forms, for error messages and help: the disk B+-tree's and the learned
/// models' from the catalog, the paper-002 models' from [`DiskIndexSpec::parse`].
pub fn disk_index_forms() -> String {
    format!(
        "{}, zonemap[:gran=...], pgm-zero:pages=<p>|eps=<e>[:eps_rec=<r>], \
         rs-zero:pages=<p>|eps=<e>[:bits=<b>], cpr-pgm[:eps=<n>], leco-zonemap, \
         leco-zonemap-rough, auto[:pages=<expected pages>], or a learned index of the in-memory \
         registry ({}) with its parameters and an optional :gran=item|page|<g>",
        DiskMapSpec::BTree { fill: 100 }.form(),
        IndexSpec::disk_model_names().join(", ")
    )
}

/// The error of a zero-interval model: given, or expected blocks per lookup (eq. 4, in
/// thousandths of a block so that specs stay comparable) to derive it from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroEps {
    /// `eps=<e>`.
    Eps(usize),
    /// `pages=<p>`, as `p * 1000` rounded.
    MilliPages(u32),
}

impl ZeroEps {
    fn parse(part: &str) -> Option<ZeroEps> {
        match part.split_once('=')? {
            ("eps", v) => v.parse().ok().map(ZeroEps::Eps),
            ("pages", v) => v
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && (1.0..=1e6).contains(p))
                .map(|p| ZeroEps::MilliPages((p * 1000.0).round() as u32)),
            _ => None,
        }
    }

    fn text(self) -> String {
        match self {
            ZeroEps::Eps(e) => format!("eps={e}"),
            ZeroEps::MilliPages(m) => format!("pages={}", f64::from(m) / 1000.0),
        }
    }

    /// The error for `per_block` records per block.
    pub fn resolve(self, per_block: usize) -> lidx::Result<usize> {
        match self {
            ZeroEps::Eps(e) => Ok(e),
            ZeroEps::MilliPages(m) => zero_eps_for_expected_pages(f64::from(m) / 1000.0, per_block),
        }
    }
}

/// The in-memory model of a static learned index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskModel {
    /// A learned model from the in-memory registry.
    Learned(IndexSpec),
    /// The zone map: the minimum key of every block.
    ZoneMap,
    /// PGM-Disk: the PGM with disk-based zero intervals (paper 002 G3).
    PgmZero {
        /// Error outside the key's page.
        eps: ZeroEps,
        /// Upper levels' error.
        eps_rec: usize,
    },
    /// RadixSpline-Disk: RadixSpline with disk-based zero intervals (paper 002 G3).
    RsZero {
        /// Error outside the key's page.
        eps: ZeroEps,
        /// Radix table bits.
        bits: usize,
    },
    /// `CprLeCo_PGM_D` with this target eps.
    CprPgm {
        /// Target maximum error.
        eps: usize,
    },
    /// The LeCo-compressed zone map, exact or with rough separators (`LeCo-Zonemap-D`).
    LecoZoneMap {
        /// Rough separators.
        rough: bool,
    },
    /// The smaller of `CprLeCo_PGM_D` and `LeCo-Zonemap-D` at an expected pages target.
    Smallest {
        /// Target expected blocks per lookup, in thousandths.
        millipages: u32,
    },
}

impl DiskModel {
    /// The model's part of a spec's label, every parameter written out (`pgm:eps=64:eps_rec=4`):
    /// what a static learned file records as its model's parameters.
    pub fn label(&self) -> String {
        match self {
            DiskModel::Learned(spec) => spec.label(),
            DiskModel::ZoneMap => "zonemap".to_string(),
            DiskModel::PgmZero { eps, eps_rec } => {
                format!("pgm-zero:{}:eps_rec={eps_rec}", eps.text())
            }
            DiskModel::RsZero { eps, bits } => format!("rs-zero:{}:bits={bits}", eps.text()),
            DiskModel::CprPgm { eps } => format!("cpr-pgm:eps={eps}"),
            DiskModel::LecoZoneMap { rough: false } => "leco-zonemap".to_string(),
            DiskModel::LecoZoneMap { rough: true } => "leco-zonemap-rough".to_string(),
            DiskModel::Smallest { millipages } => {
                format!("auto:pages={}", f64::from(*millipages) / 1000.0)
            }
        }
    }
}

/// Parses `pgm-zero:...` and `rs-zero:...` (without `gran=`), `None` when `parts` is neither.
fn parse_zero(parts: &[&str]) -> Option<Option<DiskModel>> {
    let (&name, rest) = parts.split_first()?;
    if name != "pgm-zero" && name != "rs-zero" {
        return None;
    }
    let mut eps = None;
    let mut extra = None;
    for part in rest {
        if let Some(e) = ZeroEps::parse(part) {
            if eps.replace(e).is_some() {
                return Some(None);
            }
            continue;
        }
        let value = match (name, part.split_once('=')) {
            ("pgm-zero", Some(("eps_rec", v))) | ("rs-zero", Some(("bits", v))) => v.parse().ok(),
            _ => None,
        };
        match value {
            Some(v) if extra.is_none() => extra = Some(v),
            _ => return Some(None),
        }
    }
    let eps = eps.unwrap_or(ZeroEps::MilliPages(1500));
    Some(Some(if name == "pgm-zero" {
        DiskModel::PgmZero {
            eps,
            eps_rec: extra.unwrap_or(PgmParams::default().eps_recursive),
        }
    } else {
        DiskModel::RsZero {
            eps,
            bits: extra.unwrap_or(RadixSplineParams::default().radix_bits),
        }
    }))
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
    /// Parses one item such as `pgm:eps=64:gran=page` or `btree:fill=70`.
    pub fn parse(item: &str) -> Result<DiskIndexSpec> {
        let bad = || BenchError::BadSpec {
            what: "on-disk index",
            got: item.to_string(),
            expected: disk_index_forms(),
        };
        if let Some(DiskMapSpec::BTree { fill }) = DiskMapSpec::parse_item(item) {
            return Ok(DiskIndexSpec::BTree { fill });
        }
        let mut parts: Vec<&str> = item.trim().split(':').collect();
        let mut granularity = None;
        parts.retain(|part| match part.split_once('=') {
            Some(("gran", v)) => {
                granularity = Some(parse_granularity(v));
                false
            }
            _ => true,
        });
        match parts.first().copied() {
            Some("zonemap") if parts.len() == 1 => Ok(DiskIndexSpec::Learned {
                model: DiskModel::ZoneMap,
                granularity: granularity
                    .unwrap_or(Some(Granularity::Item))
                    .ok_or_else(bad)?,
            }),
            _ if parse_zero(&parts).is_some() => {
                let model = parse_zero(&parts).flatten().ok_or_else(bad)?;
                if !matches!(granularity, None | Some(Some(Granularity::Item))) {
                    return Err(bad());
                }
                Ok(DiskIndexSpec::Learned {
                    model,
                    granularity: Granularity::Item,
                })
            }
            Some(name @ ("cpr-pgm" | "leco-zonemap" | "leco-zonemap-rough" | "auto")) => {
                let value = |key: &str| {
                    parts[1..]
                        .iter()
                        .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
                };
                let known = |key: &str| parts[1..].iter().all(|p| p.starts_with(key));
                let model = match name {
                    "cpr-pgm" if known("eps=") => DiskModel::CprPgm {
                        eps: value("eps")
                            .map_or(Some(64), |v| v.parse().ok())
                            .ok_or_else(bad)?,
                    },
                    "auto" if known("pages=") => DiskModel::Smallest {
                        millipages: value("pages")
                            .map_or(Some(1.5), |v| v.parse::<f64>().ok())
                            .filter(|p| (1.0..=1000.0).contains(p))
                            .map(|p| (p * 1000.0).round() as u32)
                            .ok_or_else(bad)?,
                    },
                    "leco-zonemap" if parts.len() == 1 => DiskModel::LecoZoneMap { rough: false },
                    "leco-zonemap-rough" if parts.len() == 1 => {
                        DiskModel::LecoZoneMap { rough: true }
                    }
                    _ => return Err(bad()),
                };
                Ok(DiskIndexSpec::Learned {
                    model,
                    granularity: granularity
                        .unwrap_or(Some(Granularity::Item))
                        .ok_or_else(bad)?,
                })
            }
            _ => {
                let spec = IndexSpec::parse(&parts.join(":")).map_err(|_| bad())?;
                if !spec.is_disk_model() {
                    return Err(bad());
                }
                Ok(DiskIndexSpec::Learned {
                    model: DiskModel::Learned(spec),
                    granularity: granularity
                        .unwrap_or(Some(Granularity::Item))
                        .ok_or_else(bad)?,
                })
            }
        }
    }

    /// Parses a comma-separated list (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<DiskIndexSpec>> {
        parse_items(list, &disk_index_forms(), DiskIndexSpec::parse)
    }

    /// The canonical spelling, every parameter written out.
    pub fn label(&self) -> String {
        match self {
            DiskIndexSpec::BTree { fill } => DiskMapSpec::BTree { fill: *fill }.label(),
            DiskIndexSpec::Learned { model, granularity } => {
                format!("{}:gran={}", model.label(), granularity_text(*granularity))
            }
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
                    DiskModel::ZoneMap => {
                        learned(storage, &name, keys, params, |k| ZoneMap::build(k, zone))?
                    }
                    DiskModel::PgmZero { eps, eps_rec } => {
                        let zero = PgmZeroParams::new(eps.resolve(per_block)?, per_block, eps_rec);
                        learned(storage, &name, keys, params, |k| PgmZero::build(k, zero))?
                    }
                    DiskModel::RsZero { eps, bits } => {
                        let zero =
                            RadixSplineZeroParams::new(eps.resolve(per_block)?, per_block, bits);
                        learned(storage, &name, keys, params, |k| {
                            RadixSplineZero::build(k, zero)
                        })?
                    }
                    DiskModel::CprPgm { eps } => learned(storage, &name, keys, params, |k| {
                        CprPgm::build(k, CprPgmParams::with_eps(eps))
                    })?,
                    DiskModel::LecoZoneMap { rough: false } => {
                        learned(storage, &name, keys, params, |k| {
                            LecoZoneMap::build(k, zone)
                        })?
                    }
                    DiskModel::LecoZoneMap { rough: true } => {
                        learned(storage, &name, keys, params, |k| {
                            RoughLecoZoneMap::build(k, zone)
                        })?
                    }
                    DiskModel::Smallest { millipages } => {
                        let firsts: Vec<u64>;
                        let model_keys = if group == 1 {
                            keys
                        } else {
                            firsts = keys.iter().step_by(group).copied().collect();
                            &firsts
                        };
                        let choice = SmallestParams {
                            per_block: zone.per_block,
                            expected_pages: f64::from(millipages) / 1000.0,
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

/// Parses a comma-separated list of on-disk index specs of the `forms` that `parse` reads
/// (at least one item).
fn parse_items<T>(list: &str, forms: &str, parse: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    let specs = list
        .split(',')
        .filter(|item| !item.trim().is_empty())
        .map(parse)
        .collect::<Result<Vec<_>>>()?;
    if specs.is_empty() {
        return Err(BenchError::BadSpec {
            what: "on-disk index list",
            got: list.to_string(),
            expected: format!("a comma-separated list of {forms}"),
        });
    }
    Ok(specs)
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

fn parse_granularity(text: &str) -> Option<Granularity> {
    match text {
        "item" => Some(Granularity::Item),
        "page" => Some(Granularity::Page),
        g => g
            .parse::<usize>()
            .ok()
            .filter(|&g| g > 0)
            .map(Granularity::MiniPage),
    }
}

fn granularity_text(g: Granularity) -> String {
    match g {
        Granularity::Item => "item".to_string(),
        Granularity::Page => "page".to_string(),
        Granularity::MiniPage(g) => g.to_string(),
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
