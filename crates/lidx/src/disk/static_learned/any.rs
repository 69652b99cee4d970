//! [`AnyStaticLearned`]: a static learned file opened as whatever model it holds. The one
//! place that maps a file's recorded model kind to a model type: the hybrid index's static
//! stage, the benchmarks and the tools all open files through it.

use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::Key;
use crate::mem::btree_model::BTreeModel;
use crate::mem::fiting::FitingTree;
use crate::mem::leco_zone_map::{LecoZoneMap, RoughLecoZoneMap};
use crate::mem::persist::Persist;
use crate::mem::pgm::Pgm;
use crate::mem::pgm_compressed::CprPgm;
use crate::mem::pgm_zero::PgmZero;
use crate::mem::radix_spline::RadixSpline;
use crate::mem::radix_spline_zero::RadixSplineZero;
use crate::mem::rmi::Rmi;
use crate::mem::sampled_pgm::SampledPgm;
use crate::mem::zone_map::ZoneMap;

use super::{read_kind, Fetch, StaticLearned, StaticLearnedParams};

/// A static learned file with any model lidx saves (see `docs/format.md`, "Model encodings").
pub enum AnyStaticLearned<K: Key> {
    /// PGM-index (kind 1).
    Pgm(StaticLearned<K, Pgm<K>>),
    /// Sampled PGM (kind 2).
    SampledPgm(StaticLearned<K, SampledPgm<K>>),
    /// RadixSpline (kind 3).
    RadixSpline(StaticLearned<K, RadixSpline<K>>),
    /// Two-stage RMI (kind 4).
    Rmi(StaticLearned<K, Rmi>),
    /// B+-tree as a model (kind 5).
    BTreeModel(StaticLearned<K, BTreeModel<K>>),
    /// FITing-tree (kind 6).
    Fiting(StaticLearned<K, FitingTree<K>>),
    /// Zone map (kind 7).
    ZoneMap(StaticLearned<K, ZoneMap<K>>),
    /// PGM with zero intervals (kind 8).
    PgmZero(StaticLearned<K, PgmZero<K>>),
    /// RadixSpline with zero intervals (kind 9).
    RadixSplineZero(StaticLearned<K, RadixSplineZero<K>>),
    /// Compressed PGM (kind 10).
    CprPgm(StaticLearned<K, CprPgm<K>>),
    /// Exact LeCo zone map (kind 13).
    Leco(StaticLearned<K, LecoZoneMap<K>>),
    /// Rough LeCo zone map (kind 14).
    RoughLeco(StaticLearned<K, RoughLecoZoneMap<K>>),
}

/// Runs `$e` with `$s` bound to the file, whatever its model.
macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            AnyStaticLearned::Pgm($s) => $e,
            AnyStaticLearned::SampledPgm($s) => $e,
            AnyStaticLearned::RadixSpline($s) => $e,
            AnyStaticLearned::Rmi($s) => $e,
            AnyStaticLearned::BTreeModel($s) => $e,
            AnyStaticLearned::Fiting($s) => $e,
            AnyStaticLearned::ZoneMap($s) => $e,
            AnyStaticLearned::PgmZero($s) => $e,
            AnyStaticLearned::RadixSplineZero($s) => $e,
            AnyStaticLearned::CprPgm($s) => $e,
            AnyStaticLearned::Leco($s) => $e,
            AnyStaticLearned::RoughLeco($s) => $e,
        }
    };
}

fn kind<K: Key, M: Persist<K>>() -> u32 {
    M::KIND
}

impl<K: Key> AnyStaticLearned<K> {
    /// Opens the static learned file `name` as the model its header records; `fetch`
    /// overrides the strategy recorded at build time. Errors: those of
    /// [`StaticLearned::open`], and `Corrupt` for a model kind no lidx model has (a file
    /// written by another version: rebuild it).
    pub fn open(storage: &Storage, name: &str, fetch: Option<Fetch>) -> Result<Self> {
        use AnyStaticLearned as A;
        let k = read_kind(storage, name)?;
        let f = fetch;
        Ok(match k {
            k if k == kind::<K, Pgm<K>>() => A::Pgm(StaticLearned::open(storage, name, f)?),
            k if k == kind::<K, SampledPgm<K>>() => {
                A::SampledPgm(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, RadixSpline<K>>() => {
                A::RadixSpline(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, Rmi>() => A::Rmi(StaticLearned::open(storage, name, f)?),
            k if k == kind::<K, BTreeModel<K>>() => {
                A::BTreeModel(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, FitingTree<K>>() => {
                A::Fiting(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, ZoneMap<K>>() => A::ZoneMap(StaticLearned::open(storage, name, f)?),
            k if k == kind::<K, PgmZero<K>>() => A::PgmZero(StaticLearned::open(storage, name, f)?),
            k if k == kind::<K, RadixSplineZero<K>>() => {
                A::RadixSplineZero(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, CprPgm<K>>() => A::CprPgm(StaticLearned::open(storage, name, f)?),
            k if k == kind::<K, LecoZoneMap<K>>() => {
                A::Leco(StaticLearned::open(storage, name, f)?)
            }
            k if k == kind::<K, RoughLecoZoneMap<K>>() => {
                A::RoughLeco(StaticLearned::open(storage, name, f)?)
            }
            other => {
                return Err(Error::Corrupt {
                    file: name.to_string(),
                    block: Some(0),
                    what: format!(
                        "model kind {other} is not one this lidx reads (kinds 11 and 12 were \
                         retired); rebuild the file"
                    ),
                })
            }
        })
    }

    /// The build parameters the file records ([`StaticLearned::params`]).
    pub fn params(&self) -> &StaticLearnedParams {
        each!(self, s => s.params())
    }

    /// The fetch strategy lookups use.
    pub fn fetch(&self) -> Fetch {
        each!(self, s => s.fetch())
    }

    /// Every record in key order, read sequentially `blocks` blocks per request.
    pub fn for_each_record(
        &self,
        blocks: usize,
        f: impl FnMut(&K, &[u8]) -> Result<()>,
    ) -> Result<()> {
        each!(self, s => s.for_each_record(blocks, f))
    }

    /// Reads and checks every record and the model's window of each key (see
    /// [`StaticLearned::verify`]); returns the records read.
    pub fn verify(&self) -> Result<u64> {
        each!(self, s => s.verify())
    }

    /// The model's short name, as `--index` specs spell it (`pgm`, `rs`, `leco-zonemap`...).
    pub fn model_name(&self) -> &'static str {
        use AnyStaticLearned as A;
        match self {
            A::Pgm(_) => "pgm",
            A::SampledPgm(_) => "spgm",
            A::RadixSpline(_) => "rs",
            A::Rmi(_) => "rmi",
            A::BTreeModel(_) => "btree-model",
            A::Fiting(_) => "fiting",
            A::ZoneMap(_) => "zonemap",
            A::PgmZero(_) => "pgm-zero",
            A::RadixSplineZero(_) => "rs-zero",
            A::CprPgm(_) => "cpr-pgm",
            A::Leco(_) => "leco-zonemap-exact",
            A::RoughLeco(_) => "leco-zonemap",
        }
    }
}

impl<K: Key> DiskIndex<K> for AnyStaticLearned<K> {
    fn len(&self) -> u64 {
        each!(self, s => s.len())
    }

    fn keys_fingerprint(&self) -> u64 {
        each!(self, s => s.keys_fingerprint())
    }

    fn payload_size(&self) -> usize {
        each!(self, s => s.payload_size())
    }

    fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        each!(self, s => s.get(key, payload))
    }

    fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        each!(self, s => s.scan(start, limit, keys, payloads))
    }

    fn memory_bytes(&self) -> usize {
        each!(self, s => s.memory_bytes())
    }

    fn disk_bytes(&self) -> u64 {
        each!(self, s => s.disk_bytes())
    }

    fn describe(&self) -> String {
        each!(self, s => s.describe())
    }
}
