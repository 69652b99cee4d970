//! The static stage: an ordered list of static learned files, each covering a key range.
//!
//! Paper 002 §9.1 rebuilds one static learned index per merge, "the key range is partitioned
//! equally according to the number of threads so that each thread works on a single partition
//! independently". We keep those partitions as separate files ([`StaticPart`]): a merge with
//! `t` threads writes `t` files, and the static stage routes a key to the last part whose first
//! key is not above it. Parts are reference counted: a reader holding an old version keeps its
//! files open, and the file of a part that a merge replaced is removed when the last reference
//! goes ([`StaticPart::retire`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::disk::static_learned::{
    read_kind, Fetch, Granularity, StaticLearned, StaticLearnedParams, StaticLearnedWriter,
};
use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::Key;
use crate::mem::leco_zone_map::{LecoZoneMap, RoughLecoZoneMap};
use crate::mem::persist::Persist;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::mem::pgm_compressed::{CprPgm, CprPgmParams};
use crate::mem::pgm_zero::{PgmZero, PgmZeroParams};
use crate::mem::smallest::{build_smallest, Smallest, SmallestParams};
use crate::mem::zone_map::ZoneMapParams;
use crate::model::zero_interval::zero_eps_for_expected_pages;

use super::options::{StageOptions, StaticModel};

/// Names of the static files of generation `generation`, one per part.
pub fn static_file_name(generation: u64, part: usize) -> String {
    format!("static-{generation:010}-{part:04}.sli")
}

/// True for names [`static_file_name`] makes.
pub fn is_static_file(name: &str) -> bool {
    name.starts_with("static-") && name.ends_with(".sli")
}

/// A static learned file with any of the models the hybrid index builds.
pub enum AnyStatic<K> {
    /// PGM.
    Pgm(StaticLearned<K, Pgm<K>>),
    /// PGM with zero intervals.
    PgmZero(StaticLearned<K, PgmZero<K>>),
    /// Compressed PGM.
    CprPgm(StaticLearned<K, CprPgm<K>>),
    /// Exact LeCo zone map (opened, never built here).
    Leco(StaticLearned<K, LecoZoneMap<K>>),
    /// Rough LeCo zone map.
    RoughLeco(StaticLearned<K, RoughLecoZoneMap<K>>),
}

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            AnyStatic::Pgm($s) => $e,
            AnyStatic::PgmZero($s) => $e,
            AnyStatic::CprPgm($s) => $e,
            AnyStatic::Leco($s) => $e,
            AnyStatic::RoughLeco($s) => $e,
        }
    };
}

fn kind<K: Key, M: Persist<K>>() -> u32 {
    M::KIND
}

impl<K: Key> AnyStatic<K> {
    /// Opens the static learned file `name`, whatever its model kind among those above.
    pub fn open(storage: &Storage, name: &str, fetch: Fetch) -> Result<Self> {
        let k = read_kind(storage, name)?;
        let f = Some(fetch);
        Ok(if k == kind::<K, Pgm<K>>() {
            AnyStatic::Pgm(StaticLearned::open(storage, name, f)?)
        } else if k == kind::<K, PgmZero<K>>() {
            AnyStatic::PgmZero(StaticLearned::open(storage, name, f)?)
        } else if k == kind::<K, CprPgm<K>>() {
            AnyStatic::CprPgm(StaticLearned::open(storage, name, f)?)
        } else if k == kind::<K, LecoZoneMap<K>>() {
            AnyStatic::Leco(StaticLearned::open(storage, name, f)?)
        } else if k == kind::<K, RoughLecoZoneMap<K>>() {
            AnyStatic::RoughLeco(StaticLearned::open(storage, name, f)?)
        } else {
            return Err(Error::Corrupt {
                file: name.to_string(),
                block: Some(0),
                what: format!("model kind {k} is not one a hybrid index builds"),
            });
        })
    }

    /// The parameters of the static files `options` asks for (item granularity).
    pub fn params(options: &StageOptions) -> StaticLearnedParams {
        StaticLearnedParams {
            payload_size: options.payload_size,
            granularity: Granularity::Item,
            fetch: options.fetch,
        }
    }

    /// Completes a file whose records are all written: fits the model `options.model` asks
    /// for on the writer's keys, then writes it and the header.
    pub fn finish(writer: StaticLearnedWriter<K>, options: &StageOptions) -> Result<Self> {
        let per_block = writer.per_block().max(1);
        let keys = writer.model_keys();
        let zone = ZoneMapParams::new(per_block);
        Ok(match options.model {
            StaticModel::Pgm { eps } => {
                let p = PgmParams::new(eps, PgmParams::default().eps_recursive);
                let model = Pgm::build(keys, p)?;
                AnyStatic::Pgm(writer.finish(model)?)
            }
            StaticModel::PgmZero { pages } => {
                let eps = zero_eps_for_expected_pages(pages, per_block)?;
                let p = PgmZeroParams::new(eps, per_block, PgmParams::default().eps_recursive);
                let model = PgmZero::build(keys, p)?;
                AnyStatic::PgmZero(writer.finish(model)?)
            }
            StaticModel::CprPgm { eps } => {
                let model = CprPgm::build(keys, CprPgmParams::with_eps(eps))?;
                AnyStatic::CprPgm(writer.finish(model)?)
            }
            StaticModel::LecoZoneMap => {
                let model = RoughLecoZoneMap::build(keys, zone)?;
                AnyStatic::RoughLeco(writer.finish(model)?)
            }
            StaticModel::Auto { pages } => {
                let sp = SmallestParams {
                    per_block,
                    expected_pages: pages,
                };
                match build_smallest(keys, sp)? {
                    Smallest::Pgm(m) => AnyStatic::CprPgm(writer.finish(*m)?),
                    Smallest::ZoneMap(m) => AnyStatic::RoughLeco(writer.finish(m)?),
                }
            }
        })
    }

    /// Records held.
    pub fn len(&self) -> usize {
        each!(self, s => DiskIndex::len(s) as usize)
    }

    /// True when the file holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes kept in memory (the model and the handle).
    pub fn memory_bytes(&self) -> usize {
        each!(self, s => DiskIndex::memory_bytes(s))
    }

    /// Size of the file.
    pub fn disk_bytes(&self) -> u64 {
        each!(self, s => DiskIndex::disk_bytes(s))
    }

    /// Point lookup.
    pub fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        each!(self, s => s.get_with(key, payload, s.fetch()))
    }

    /// Up to `limit` records from the first key `>= start`.
    pub fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        each!(self, s => s.scan_with(start, limit, keys, payloads, s.fetch()))
    }

    /// Every record in key order, read sequentially.
    pub fn for_each_record(&self, f: impl FnMut(&K, &[u8]) -> Result<()>) -> Result<()> {
        each!(self, s => s.for_each_record(MERGE_READ_BLOCKS, f))
    }

    /// The model's name, for reports.
    pub fn model_name(&self) -> &'static str {
        match self {
            AnyStatic::Pgm(_) => "pgm",
            AnyStatic::PgmZero(_) => "pgm-zero",
            AnyStatic::CprPgm(_) => "cpr-pgm",
            AnyStatic::Leco(_) => "leco-zonemap-exact",
            AnyStatic::RoughLeco(_) => "leco-zonemap",
        }
    }
}

/// Data blocks read per request by a merge (1 MiB with 4 KiB blocks).
const MERGE_READ_BLOCKS: usize = 256;

/// One file of the static stage.
pub struct StaticPart<K> {
    /// The file's name in the storage.
    pub name: String,
    /// Its smallest key.
    pub first: K,
    /// The file.
    pub index: AnyStatic<K>,
    storage: Arc<Storage>,
    retired: AtomicBool,
}

impl<K: Key> StaticPart<K> {
    /// Wraps an opened or built file whose smallest key is `first` (read from the file when
    /// `None`); `None` for an empty file (the static stage holds no empty part).
    pub fn new(
        storage: Arc<Storage>,
        name: String,
        index: AnyStatic<K>,
        mut first: Option<K>,
    ) -> Result<Option<Self>> {
        if first.is_none() && !index.is_empty() {
            let (mut k, mut p) = (Vec::with_capacity(1), Vec::new());
            index.scan(&K::MIN, 1, &mut k, &mut p)?;
            first = k.first().copied();
        }
        let Some(first) = first else {
            return Ok(None);
        };
        Ok(Some(StaticPart {
            name,
            first,
            index,
            storage,
            retired: AtomicBool::new(false),
        }))
    }

    /// Marks the part as replaced by a merge: its file is removed when the last reference to
    /// the part goes.
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

impl<K> Drop for StaticPart<K> {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            // A file left behind (the removal failed) is not named by the manifest, so the next
            // open removes it.
            let _ = self.storage.remove(&self.name);
        }
    }
}

/// The static stage: parts in key order, the first keys strictly increasing.
pub struct StaticSet<K> {
    /// The parts.
    pub parts: Vec<Arc<StaticPart<K>>>,
    len: usize,
}

impl<K: Key> StaticSet<K> {
    /// A stage of `parts` (in key order).
    pub fn new(parts: Vec<Arc<StaticPart<K>>>) -> Self {
        let len = parts.iter().map(|p| p.index.len()).sum();
        StaticSet { parts, len }
    }

    /// Records in all parts.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no part holds a record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The part that would hold `key`: the last whose first key is `<= key` (0 when none).
    pub fn route(&self, key: &K) -> usize {
        self.parts
            .partition_point(|p| !key.key_lt(&p.first))
            .saturating_sub(1)
    }

    /// Point lookup.
    pub fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        match self.parts.get(self.route(key)) {
            Some(p) => p.index.get(key, payload),
            None => Ok(false),
        }
    }

    /// Bytes of the models.
    pub fn memory_bytes(&self) -> usize {
        self.parts.iter().map(|p| p.index.memory_bytes()).sum()
    }

    /// Bytes of the files.
    pub fn disk_bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.index.disk_bytes()).sum()
    }
}
