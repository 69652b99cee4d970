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
    AnyStaticLearned, Granularity, StaticLearnedParams, StaticLearnedWriter,
};
use crate::disk::DiskIndex;
use crate::error::Result;
use crate::io::Storage;
use crate::key::Key;
use crate::mem::leco_zone_map::RoughLecoZoneMap;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::mem::pgm_compressed::{CprPgm, CprPgmParams};
use crate::mem::pgm_zero::{PgmZero, PgmZeroParams};
use crate::mem::smallest::{build_smallest, Smallest, SmallestParams};
use crate::mem::zone_map::ZoneMapParams;
use crate::model::zero_interval::zero_eps_for_expected_pages;

use super::options::{StageOptions, StaticModel};

/// Names of the static files of generation `generation`, one per part.
pub(crate) fn static_file_name(generation: u64, part: usize) -> String {
    format!("static-{generation:010}-{part:04}.sli")
}

/// True for names [`static_file_name`] makes.
pub(crate) fn is_static_file(name: &str) -> bool {
    name.starts_with("static-") && name.ends_with(".sli")
}

/// A static file of the hybrid: whatever model it holds ([`AnyStaticLearned`]); a merge
/// builds the models [`StaticModel`] names.
pub(crate) type AnyStatic<K> = AnyStaticLearned<K>;

/// Building the hybrid's static files.
pub(crate) trait HybridFile<K: Key>: Sized {
    /// The parameters of the static files `options` asks for (item granularity).
    fn params(options: &StageOptions) -> StaticLearnedParams;
    /// Completes a file whose records are all written: fits the model `options.model` asks
    /// for on the writer's keys, then writes it and the header.
    fn finish(writer: StaticLearnedWriter<K>, options: &StageOptions) -> Result<Self>;
}

impl<K: Key> HybridFile<K> for AnyStatic<K> {
    /// The parameters of the static files `options` asks for (item granularity).
    fn params(options: &StageOptions) -> StaticLearnedParams {
        StaticLearnedParams {
            payload_size: options.payload_size,
            granularity: Granularity::Item,
            fetch: options.fetch,
            model_params: format!("hybrid:{}", options.model.name()),
        }
    }

    /// Completes a file whose records are all written: fits the model `options.model` asks
    /// for on the writer's keys, then writes it and the header.
    fn finish(writer: StaticLearnedWriter<K>, options: &StageOptions) -> Result<Self> {
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
}

/// Data blocks read per request by a merge (1 MiB with 4 KiB blocks).
pub(crate) const MERGE_READ_BLOCKS: usize = 256;

/// One file of the static stage.
pub(crate) struct StaticPart<K: Key> {
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
    pub(crate) fn new(
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
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

impl<K: Key> Drop for StaticPart<K> {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            // A file left behind (the removal failed) is not named by the manifest, so the next
            // open removes it.
            let _ = self.storage.remove(&self.name);
        }
    }
}

/// The static stage: parts in key order, the first keys strictly increasing.
pub(crate) struct StaticSet<K: Key> {
    /// The parts.
    pub parts: Vec<Arc<StaticPart<K>>>,
    len: usize,
}

impl<K: Key> StaticSet<K> {
    /// A stage of `parts` (in key order).
    pub(crate) fn new(parts: Vec<Arc<StaticPart<K>>>) -> Self {
        let len = parts.iter().map(|p| p.index.len() as usize).sum();
        StaticSet { parts, len }
    }

    /// Records in all parts.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The part that would hold `key`: the last whose first key is `<= key` (0 when none).
    pub(crate) fn route(&self, key: &K) -> usize {
        self.parts
            .partition_point(|p| !key.key_lt(&p.first))
            .saturating_sub(1)
    }

    /// Point lookup.
    pub(crate) fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        match self.parts.get(self.route(key)) {
            Some(p) => p.index.get(key, payload),
            None => Ok(false),
        }
    }

    /// Bytes of the models.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.parts.iter().map(|p| p.index.memory_bytes()).sum()
    }

    /// Bytes of the files.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.index.disk_bytes()).sum()
    }
}
