//! [`KvStore`]: what the YCSB runner ([`crate::kv_runner`]) needs of an updatable on-disk
//! index, and its implementations: stores through the library's one store API
//! ([`lidx::kv::Store`], every engine by name: `hybrid`, `btree`), and two adapters
//! over the fixed-key structures the store's engines generalize, the disk B+-tree
//! (`adapter:btree`) and the typed hybrid index (`adapter:hybrid`), kept to measure what the
//! general API costs against them; and any updatable disk map of the catalog as a store
//! (`disk:<map>`, e.g. `disk:film:mem=10Mi`, paper 002 §10.5's FILM), behind a reader-writer
//! lock as the B+-tree adapter is ([`LockedMap`]).
//!
//! Through the API ([`StoreApi`]), a `u64` key is its 8 big-endian bytes (so byte order is
//! key order), a key of any other type is a rank into the dataset's order-preserving byte keys
//! ([`crate::store_keys`]), and the payload is the value; memory is [`lidx::kv::StoreStats`]'s
//! minus the page cache (as the adapters, whose `memory_bytes` never counts the storage's
//! cache either), disk bytes are the block files and the log.
//!
//! Paper 002 §10 compares its hybrid indexes with a disk B+-tree whose inner nodes stay in
//! memory (paper 003's "hybrid case"); that B+-tree's memory is the "equal memory" reference
//! the hybrid's budget is stated against. [`LockedBTree`] is that baseline:
//! [`DiskBTree`] takes `&mut self` to insert, so it sits behind a reader-writer lock (reads
//! share it, inserts hold it exclusively), the usual way a single-writer B+-tree is shared.
//! The hybrid index ([`lidx::kv::HybridIndex`]) is concurrent itself and needs no wrapper.
//!
//! [`StoreSpec`] names what to build (parsed from the command line) and builds it on a fresh
//! [`Storage`] from the initial keys, every payload [`crate::disk_workload::payload_of`] of
//! its key.
//!
//! The hybrid's write-ahead log is opened with [`FsyncPolicy::Never`] unless asked otherwise:
//! the B+-tree writes each changed node with one `pwrite` and no `fsync` per insert, so an
//! acknowledged insert of either survives a process crash and neither survives a power loss;
//! `--fsync always` measures the hybrid with per-write durability instead.

use std::sync::Arc;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{Fetch, Granularity};
use lidx::io::Storage;
use lidx::kv::HybridOptions;
use lidx::kv::{
    CreateOptions, Engine, KeyFormat, LogKeys, LogSpec, Store, StoreOptions, WriteBatch,
    MIN_MEMORY_BUDGET,
};
use lidx::kv::{FsyncPolicy, HybridIndex};
use lidx::raw::kv::hybrid::StaticModel;
use lidx::raw::kv::hybrid::{DynamicMap, SortedRuns};
use lidx::raw::kv::WalOptions;
use lidx::Key;
use parking_lot::RwLock;

use lidx::disk::DiskMap;

use crate::byte_store::{ByteStore, LidxStore, PeerEngine, PeerOptions};
use crate::disk_registry::{DiskIndexSpec, DiskModel, ZeroEps};
use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};
use crate::registry::IndexSpec;
use crate::store_keys::StoreKeys;
use crate::updatable_registry::{DiskMapFiles, UpdatableSpec, UpdateOptions};

/// Merge figures of a store that merges in the background (zero for others).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Merges completed.
    pub merges: u64,
    /// Time spent merging, summed over merges, in ns.
    pub merge_nanos: u64,
    /// Writes that had to wait for a merge (the dynamic stage was full).
    pub write_stalls: u64,
    /// Time writers spent waiting for merges, summed over writers, in ns.
    pub stall_nanos: u64,
}

impl MergeStats {
    /// What happened since `before` (a build's merges are not the run's).
    pub fn since(&self, before: &MergeStats) -> MergeStats {
        MergeStats {
            merges: self.merges.saturating_sub(before.merges),
            merge_nanos: self.merge_nanos.saturating_sub(before.merge_nanos),
            write_stalls: self.write_stalls.saturating_sub(before.write_stalls),
            stall_nanos: self.stall_nanos.saturating_sub(before.stall_nanos),
        }
    }
}

/// An updatable on-disk key-value index, shared by the benchmark's threads.
pub trait KvStore<K: Key>: Send + Sync {
    /// Copies `key`'s payload into `payload` (exactly [`KvStore::payload_size`] bytes) and
    /// returns true, or returns false when the key is absent.
    fn get(&self, key: &K, payload: &mut [u8]) -> lidx::Result<bool>;
    /// Inserts `key` with `payload`, or replaces its payload.
    fn put(&self, key: K, payload: &[u8]) -> lidx::Result<()>;
    /// Bytes of payload per key.
    fn payload_size(&self) -> usize;
    /// Bytes held in memory (inner nodes, models, dynamic stages), exact.
    fn memory_bytes(&self) -> usize;
    /// Bytes of the store's files.
    fn disk_bytes(&self) -> u64;
    /// One line for reports.
    fn describe(&self) -> String;
    /// The settings it was opened with, one line, where the store says
    /// ([`ByteStore::config`]); empty otherwise (the runner describes lidx's own).
    fn config(&self) -> String {
        String::new()
    }
    /// Merges and write stalls so far.
    fn merge_stats(&self) -> MergeStats {
        MergeStats::default()
    }
    /// Whether its writes hold one exclusive lock, so that no two writes overlap (the locked
    /// B+-tree): on a simulated device the run's modeled time is then at least the sum of the
    /// writes' modeled times ([`crate::kv_runner`]).
    fn serializes_writes(&self) -> bool {
        false
    }
    /// Blocks until no background work is running or pending; surfaces its errors.
    fn wait_for_merges(&self) -> lidx::Result<()> {
        Ok(())
    }
    /// Puts into `out` (cleared first) the first `len` entries at or after `start`, ascending,
    /// and returns true; false when this store has no ordered scan (the typed adapters).
    fn scan(&self, _start: &K, _len: usize, _out: &mut Vec<(K, Vec<u8>)>) -> lidx::Result<bool> {
        Ok(false)
    }
}

/// The disk B+-tree behind a reader-writer lock: reads shared, inserts exclusive.
pub struct LockedBTree<K: Key> {
    tree: RwLock<DiskBTree<K>>,
}

impl<K: Key> LockedBTree<K> {
    /// Wraps an open, writable tree.
    pub fn new(tree: DiskBTree<K>) -> Self {
        LockedBTree {
            tree: RwLock::new(tree),
        }
    }
}

impl<K: Key> KvStore<K> for LockedBTree<K> {
    fn get(&self, key: &K, payload: &mut [u8]) -> lidx::Result<bool> {
        self.tree.read().get(key, payload)
    }

    fn put(&self, key: K, payload: &[u8]) -> lidx::Result<()> {
        self.tree.write().insert(key, payload).map(|_| ())
    }

    fn serializes_writes(&self) -> bool {
        true
    }

    fn payload_size(&self) -> usize {
        self.tree.read().payload_size()
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<DiskBTree<K>>()
            + self.tree.read().memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.tree.read().disk_bytes()
    }

    fn describe(&self) -> String {
        self.tree.read().describe()
    }
}

/// An updatable disk map of the catalog ([`UpdatableSpec`]) behind a reader-writer lock, as
/// [`LockedBTree`]: reads share it, writes hold it exclusively.
pub struct LockedMap {
    map: RwLock<Box<dyn DiskMap<u64>>>,
}

impl KvStore<u64> for LockedMap {
    fn get(&self, key: &u64, payload: &mut [u8]) -> lidx::Result<bool> {
        self.map.read().get(key, payload)
    }

    fn put(&self, key: u64, payload: &[u8]) -> lidx::Result<()> {
        self.map.write().insert(key, payload).map(|_| ())
    }

    fn serializes_writes(&self) -> bool {
        true
    }

    fn payload_size(&self) -> usize {
        self.map.read().payload_size()
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.map.read().memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.map.read().disk_bytes()
    }

    fn describe(&self) -> String {
        self.map.read().describe()
    }
}

/// The hybrid index with its payload size (the index does not report it).
pub struct HybridStore<K: Key, D: DynamicMap<K>> {
    index: HybridIndex<K, D>,
    payload_size: usize,
}

impl<K: Key, D: DynamicMap<K>> KvStore<K> for HybridStore<K, D> {
    fn get(&self, key: &K, payload: &mut [u8]) -> lidx::Result<bool> {
        self.index.get(key, payload)
    }

    fn put(&self, key: K, payload: &[u8]) -> lidx::Result<()> {
        self.index.put(key, payload)
    }

    fn payload_size(&self) -> usize {
        self.payload_size
    }

    fn memory_bytes(&self) -> usize {
        self.index.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.index.disk_bytes()
    }

    fn describe(&self) -> String {
        self.index.describe()
    }

    fn merge_stats(&self) -> MergeStats {
        let stats = self.index.stats();
        MergeStats {
            merges: stats.merges,
            merge_nanos: stats.merge_nanos,
            write_stalls: stats.write_stalls,
            stall_nanos: stats.stall_nanos,
        }
    }

    fn wait_for_merges(&self) -> lidx::Result<()> {
        self.index.wait_for_merges()
    }
}

/// A store of the [`ByteStore`] shape (lidx's [`Store`] or a peer), the runner's keys made
/// bytes by [`StoreKeys`].
pub struct StoreApi {
    store: Box<dyn ByteStore>,
    keys: Arc<StoreKeys>,
    payload_size: usize,
}

impl StoreApi {
    /// `store`, its keys made by `keys`, its values `payload_size` bytes.
    pub fn new(store: Box<dyn ByteStore>, keys: Arc<StoreKeys>, payload_size: usize) -> StoreApi {
        StoreApi {
            store,
            keys,
            payload_size,
        }
    }

    fn foreign_key(&self) -> lidx::Error {
        lidx::Error::Corrupt {
            file: self.store.dir().display().to_string(),
            block: None,
            what: "a scan returned a key the benchmark never wrote".to_string(),
        }
    }
}

impl KvStore<u64> for StoreApi {
    fn get(&self, key: &u64, payload: &mut [u8]) -> lidx::Result<bool> {
        match self.keys.with(*key, |k| self.store.get(k))? {
            Some(v) if v.len() == payload.len() => {
                payload.copy_from_slice(&v);
                Ok(true)
            }
            Some(v) => Err(lidx::Error::Corrupt {
                file: self.store.dir().display().to_string(),
                block: None,
                what: format!(
                    "{}: a {}-byte value where {} bytes were written",
                    self.keys.name(*key),
                    v.len(),
                    payload.len()
                ),
            }),
            None => Ok(false),
        }
    }

    fn put(&self, key: u64, payload: &[u8]) -> lidx::Result<()> {
        self.keys.with(key, |k| self.store.put(k, payload))
    }

    fn scan(&self, start: &u64, len: usize, out: &mut Vec<(u64, Vec<u8>)>) -> lidx::Result<bool> {
        out.clear();
        let mut entries = Vec::with_capacity(len);
        self.keys
            .with(*start, |k| self.store.scan(k, len, &mut entries))?;
        for (key, value) in entries {
            let key = match &*self.keys {
                StoreKeys::U64 => key.as_slice().try_into().ok().map(u64::from_be_bytes),
                StoreKeys::Ranked(ranked) => ranked.rank_of(&key),
            };
            out.push((key.ok_or_else(|| self.foreign_key())?, value));
        }
        Ok(true)
    }

    fn payload_size(&self) -> usize {
        self.payload_size
    }

    fn memory_bytes(&self) -> usize {
        usize::try_from(self.store.stats().memory_bytes).unwrap_or(usize::MAX)
    }

    fn disk_bytes(&self) -> u64 {
        self.store.stats().disk_bytes
    }

    fn describe(&self) -> String {
        self.store.stats().describe
    }

    fn config(&self) -> String {
        self.store.config()
    }

    fn merge_stats(&self) -> MergeStats {
        self.store.stats().merges
    }

    fn wait_for_merges(&self) -> lidx::Result<()> {
        self.store.wait_for_merges()
    }
}

/// A store through the API: its engine and options.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreApiSpec {
    /// The engine.
    pub engine: Engine,
    /// Memory budget as given (see [`StoreOptions::memory_budget`]); `None` keeps the
    /// store's default.
    pub budget: Option<MemoryBudget>,
    /// The budget in bytes, once resolved against the reference ([`StoreSpec::resolve`]).
    pub budget_bytes: Option<u64>,
    /// The log's fsync policy.
    pub fsync: FsyncPolicy,
    /// Bytes of the store's record cache ([`StoreOptions::row_cache_bytes`]; 0: none).
    pub row_cache_bytes: usize,
}

/// Keys written per batch while a store through the API is built.
const BUILD_BATCH: usize = 4096;

/// The bench's own `--store` names: the typed adapters, which are no lidx structure (the
/// catalog names lidx's engines; the peers name themselves, [`PeerEngine::name`]).
pub const ADAPTER_BTREE: &str = "adapter:btree";
/// See [`ADAPTER_BTREE`].
pub const ADAPTER_HYBRID: &str = "adapter:hybrid";
/// The prefix of an updatable disk map run as a store: `disk:film:mem=10Mi`.
pub const DISK_MAP_PREFIX: &str = "disk:";

/// Accepted names in `--store` lists: the store's engines as the catalog lists them
/// ([`lidx::catalog::EngineSpec`]), then the adapters.
pub fn store_forms() -> String {
    format!(
        "{} (through the store API), {ADAPTER_HYBRID} (the typed hybrid index), \
         {ADAPTER_BTREE} (the fixed-key disk B+-tree, inner nodes resident) or \
         {DISK_MAP_PREFIX}<map> (an updatable disk map: {})",
        Engine::forms(),
        UpdatableSpec::accepted_forms()
    )
}

/// Accepted spellings of the hybrid's static model: the on-disk registry's spellings
/// ([`crate::disk_registry`]) of the models a hybrid merge builds.
pub const MODEL_FORMS: &str = "cpr-pgm[:eps=<n>], pgm[:eps=<n>], pgm-zero:pages=<x>, \
                               leco-zonemap-rough (also spelled leco-zonemap, the hybrid's \
                               default) or auto[:pages=<x>]";

/// Parses one of [`MODEL_FORMS`] with the on-disk registry's parser, so a model is spelled
/// the same in `--hybrid-model` as in `--index`. The one difference: the hybrid builds only
/// the rough LeCo zone map, and `leco-zonemap` has always named it here.
pub fn parse_model(spec: &str) -> Result<StaticModel> {
    let bad = || BenchError::BadSpec {
        what: "hybrid model",
        got: spec.to_string(),
        expected: MODEL_FORMS.to_string(),
    };
    if spec.trim() == "leco-zonemap" {
        return Ok(StaticModel::LecoZoneMap);
    }
    let DiskIndexSpec::Learned {
        model,
        granularity: Granularity::Item,
    } = DiskIndexSpec::parse(spec).map_err(|_| bad())?
    else {
        return Err(bad());
    };
    Ok(match model {
        DiskModel::Learned(IndexSpec::Pgm { eps, .. }) if eps > 0 => StaticModel::Pgm { eps },
        DiskModel::PgmZero {
            eps: ZeroEps::Pages(pages),
            ..
        } => StaticModel::PgmZero { pages: pages.get() },
        DiskModel::CprPgm { eps } if eps > 0 => StaticModel::CprPgm { eps },
        DiskModel::LecoZoneMapRough {} => StaticModel::LecoZoneMap,
        DiskModel::Auto { pages } => StaticModel::Auto { pages: pages.get() },
        _ => return Err(bad()),
    })
}

/// Accepted spellings of the log's fsync policy.
pub const FSYNC_FORMS: &str = "never, always or every:<ms>";

/// Parses one of [`FSYNC_FORMS`].
pub fn parse_fsync(spec: &str) -> Result<FsyncPolicy> {
    match spec.trim() {
        "never" => Ok(FsyncPolicy::Never),
        "always" => Ok(FsyncPolicy::Always),
        other => match other.strip_prefix("every:").map(str::parse::<u64>) {
            Some(Ok(ms)) if ms > 0 => Ok(FsyncPolicy::EveryMs(ms)),
            _ => Err(BenchError::BadSpec {
                what: "fsync policy",
                got: spec.to_string(),
                expected: FSYNC_FORMS.to_string(),
            }),
        },
    }
}

/// The spelling of `policy` in [`FSYNC_FORMS`].
pub(crate) fn fsync_label(policy: FsyncPolicy) -> String {
    match policy {
        FsyncPolicy::Never => "never".to_string(),
        FsyncPolicy::Always => "always".to_string(),
        FsyncPolicy::EveryMs(ms) => format!("every:{ms}"),
    }
}

/// The hybrid index's choices.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridSpec {
    /// Static model; `None` keeps [`HybridOptions`]'s default.
    pub model: Option<StaticModel>,
    /// Leaf fetching of the static stage.
    pub fetch: Fetch,
    /// Memory budget as given.
    pub budget: Option<MemoryBudget>,
    /// The budget in bytes, once resolved against the B+-tree ([`StoreSpec::resolve`]).
    pub budget_bytes: Option<u64>,
    /// The log's fsync policy.
    pub fsync: FsyncPolicy,
    /// The dynamic stage's map.
    pub dynamic: DynamicKind,
}

/// The hybrid's dynamic stage map ([`lidx::disk::DynamicMap`]), named by the catalog.
pub use lidx::catalog::DynamicStageSpec as DynamicKind;

/// The hybrid's memory budget: bytes, or a percentage of the equal-memory B+-tree's memory
/// in the same run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryBudget {
    /// Bytes (dynamic stage + static models).
    Bytes(u64),
    /// Percent of the all-inner B+-tree's memory.
    Percent(f64),
    /// What the B+-tree held at the end of its run of the same workload in the same
    /// invocation: its peak, as inserts only grow its inner nodes. "Equal memory" over the whole
    /// run rather than at its start, where the bulk-loaded B+-tree is at its smallest.
    BTreePeak,
}

/// Accepted spellings of a memory budget.
pub const BUDGET_FORMS: &str = "bytes (1000000, 500K, 2M), a percentage of the B+-tree's \
                                memory (10%), or `btree-peak` (the B+-tree's memory at the end \
                                of its run)";

impl MemoryBudget {
    /// Parses `<bytes>` (with K/M/G suffixes, powers of 1000), `<x>%` (x > 0) or
    /// `btree-peak`.
    pub fn parse(spec: &str) -> Result<MemoryBudget> {
        let bad = || BenchError::BadSpec {
            what: "memory budget",
            got: spec.to_string(),
            expected: BUDGET_FORMS.to_string(),
        };
        let spec_t = spec.trim();
        if spec_t == "btree-peak" {
            return Ok(MemoryBudget::BTreePeak);
        }
        if let Some(pct) = spec_t.strip_suffix('%') {
            let x: f64 = pct.parse().map_err(|_| bad())?;
            return if x.is_finite() && x > 0.0 {
                Ok(MemoryBudget::Percent(x))
            } else {
                Err(bad())
            };
        }
        match crate::count::parse_count(spec_t) {
            Some(n) if n > 0 => Ok(MemoryBudget::Bytes(n)),
            _ => Err(bad()),
        }
    }

    /// Parses a comma-separated list.
    pub fn parse_list(spec: &str) -> Result<Vec<MemoryBudget>> {
        spec.split(',').map(MemoryBudget::parse).collect()
    }

    /// Bytes, percentages taken of `btree_memory` (the B+-tree's memory at the start of its
    /// run), `BTreePeak` being `btree_peak` (at its end).
    pub fn bytes(self, btree_memory: u64, btree_peak: u64) -> u64 {
        match self {
            MemoryBudget::Bytes(n) => n,
            MemoryBudget::Percent(p) => (btree_memory as f64 * p / 100.0).round() as u64,
            MemoryBudget::BTreePeak => btree_peak,
        }
    }

    /// `2000000` or `10%`.
    pub fn label(self) -> String {
        match self {
            MemoryBudget::Bytes(n) => n.to_string(),
            MemoryBudget::Percent(p) => format!("{p}%"),
            MemoryBudget::BTreePeak => "btree-peak".to_string(),
        }
    }
}

/// What the runner builds on each fresh storage.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreSpec {
    /// The disk B+-tree with the `resident` top levels in memory.
    BTree {
        /// Levels kept in memory ([`Resident::AllInner`] is the equal-memory baseline).
        resident: Resident,
        /// Bulk-load fill factor in `(0, 1]`.
        fill_factor: f64,
    },
    /// The hybrid index (the typed adapter).
    Hybrid(HybridSpec),
    /// A store through the library's API.
    Store(StoreApiSpec),
    /// Another engine through the same store shape ([`ByteStore`]), from `lidx-peers`.
    Peer(PeerSpec),
    /// An updatable disk map of the catalog (`disk:<map>`), behind a lock ([`LockedMap`]);
    /// its memory is its own parameters' (FILM's `mem`), not the run's budget.
    Map(UpdatableSpec),
}

impl StoreSpec {
    /// The equal-memory baseline: every inner node resident, full leaves.
    pub fn baseline() -> StoreSpec {
        StoreSpec::BTree {
            resident: Resident::AllInner,
            fill_factor: 1.0,
        }
    }

    /// The hybrid with `model` (parsed by [`parse_model`]; `None` for its default), `fetch`,
    /// `budget`, the log's `fsync` policy and the `dynamic` stage map.
    pub fn hybrid(
        model: Option<&str>,
        fetch: Fetch,
        budget: Option<MemoryBudget>,
        fsync: FsyncPolicy,
        dynamic: DynamicKind,
    ) -> Result<StoreSpec> {
        Ok(StoreSpec::Hybrid(HybridSpec {
            model: model.map(parse_model).transpose()?,
            fetch,
            budget,
            budget_bytes: budget.and_then(|b| match b {
                MemoryBudget::Bytes(n) => Some(n),
                MemoryBudget::Percent(_) | MemoryBudget::BTreePeak => None,
            }),
            fsync,
            dynamic,
        }))
    }

    /// A store through the API with `engine`, `budget` and the log's `fsync` policy.
    pub fn store(engine: Engine, budget: Option<MemoryBudget>, fsync: FsyncPolicy) -> StoreSpec {
        StoreSpec::Store(StoreApiSpec {
            engine,
            budget,
            budget_bytes: budget.and_then(|b| match b {
                MemoryBudget::Bytes(n) => Some(n),
                MemoryBudget::Percent(_) | MemoryBudget::BTreePeak => None,
            }),
            fsync,
            row_cache_bytes: 0,
        })
    }

    /// The same store with a record cache of `bytes`: a lidx store through the API, or a
    /// peer (whose variants with one use it, [`PeerOptions::row_cache_bytes`]); the typed
    /// adapters have none.
    pub fn with_row_cache(&self, bytes: usize) -> StoreSpec {
        match self {
            StoreSpec::Store(s) => StoreSpec::Store(StoreApiSpec {
                row_cache_bytes: bytes,
                ..s.clone()
            }),
            StoreSpec::Peer(p) => StoreSpec::Peer(PeerSpec {
                row_cache_bytes: bytes as u64,
                ..p.clone()
            }),
            other => other.clone(),
        }
    }

    /// Parses a `--store` list ([`store_forms`]): `hybrid` and `btree` become stores through
    /// the API with `fsync` (and `hybrid` with `budget`: the `btree` engine's budget is the log
    /// between its checkpoints, not memory, and keeps the store's default; a `log:<map>` store
    /// holds its whole map in memory and takes none), `adapter:hybrid` is
    /// `adapter_hybrid` (which carries its own options), `adapter:btree` the equal-memory
    /// [`StoreSpec::baseline`]; the name of one of `peers` is that peer with `budget`.
    pub fn parse_list(
        spec: &str,
        budget: Option<MemoryBudget>,
        fsync: FsyncPolicy,
        adapter_hybrid: &StoreSpec,
        peers: &[Arc<dyn PeerEngine>],
    ) -> Result<Vec<StoreSpec>> {
        spec.split(',')
            .map(|name| match name.trim() {
                ADAPTER_BTREE => Ok(StoreSpec::baseline()),
                ADAPTER_HYBRID => Ok(adapter_hybrid.clone()),
                other if other.starts_with(DISK_MAP_PREFIX) => {
                    UpdatableSpec::parse(&other[DISK_MAP_PREFIX.len()..])
                        .map(StoreSpec::Map)
                        .map_err(|e| BenchError::BadSpec {
                            what: "store",
                            got: other.to_string(),
                            expected: format!("{DISK_MAP_PREFIX}<map>: {e}"),
                        })
                }
                other if peers.iter().any(|p| p.name() == other) => {
                    let engine = peers.iter().find(|p| p.name() == other).cloned();
                    Ok(StoreSpec::Peer(PeerSpec {
                        engine: engine.expect("found above"),
                        budget,
                        budget_bytes: budget.and_then(|b| match b {
                            MemoryBudget::Bytes(n) => Some(n),
                            MemoryBudget::Percent(_) | MemoryBudget::BTreePeak => None,
                        }),
                        memory_limit: None,
                        point_reads: false,
                        writes: false,
                        row_cache_bytes: 0,
                    }))
                }
                other => match Engine::parse(other) {
                    Some(engine @ (Engine::BTree | Engine::Log(_))) => {
                        Ok(StoreSpec::store(engine, None, fsync))
                    }
                    Some(engine) => Ok(StoreSpec::store(engine, budget, fsync)),
                    None => Err(BenchError::BadSpec {
                        what: "store",
                        got: other.to_string(),
                        expected: format!(
                            "{}, or a peer: {}",
                            store_forms(),
                            peers
                                .iter()
                                .map(|p| p.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }),
                },
            })
            .collect()
    }

    /// True when its budget is a share of another store's memory (a percentage, or the
    /// B+-tree's peak), which a reference cannot have.
    pub fn relative_budget(&self) -> bool {
        let budget = match self {
            StoreSpec::BTree { .. } | StoreSpec::Map(_) => None,
            StoreSpec::Hybrid(h) => h.budget,
            StoreSpec::Store(s) => s.budget,
            StoreSpec::Peer(p) => p.budget,
        };
        matches!(
            budget,
            Some(MemoryBudget::Percent(_) | MemoryBudget::BTreePeak)
        )
    }

    /// The label in reports, e.g. `btree:resident=inner`,
    /// `hybrid:leco-zonemap,fetch=all-at-once,budget=10%,fsync=never` (the adapters) or
    /// `store:hybrid,budget=10%,fsync=never` (through the API).
    pub fn label(&self) -> String {
        match self {
            StoreSpec::Map(m) => format!("{DISK_MAP_PREFIX}{}", m.label()),
            StoreSpec::Peer(p) => match p.memory_limit {
                // Sized from the run's limit ([`StoreSpec::for_run`]), not from a budget.
                Some(limit) => format!("peer:{},limit={limit}", p.engine.name()),
                None => {
                    let budget = p.budget.map_or("default".to_string(), MemoryBudget::label);
                    format!("peer:{},budget={budget}", p.engine.name())
                }
            },
            StoreSpec::Store(s) => {
                let budget = s.budget.map_or("default".to_string(), MemoryBudget::label);
                format!(
                    "store:{},budget={budget},fsync={}",
                    s.engine.label(),
                    fsync_label(s.fsync)
                )
            }
            StoreSpec::Hybrid(h) => {
                let model = h
                    .model
                    .map_or_else(|| StaticModel::default().name(), StaticModel::name);
                let budget = h.budget.map_or("none".to_string(), MemoryBudget::label);
                format!(
                    "hybrid:{model},fetch={},budget={budget},fsync={},dynamic={}",
                    h.fetch.name(),
                    fsync_label(h.fsync),
                    h.dynamic.name()
                )
            }
            StoreSpec::BTree {
                resident,
                fill_factor,
            } => {
                let resident = match resident {
                    Resident::None => "none".to_string(),
                    Resident::AllInner => "inner".to_string(),
                    Resident::TopLevels(k) => k.to_string(),
                };
                if *fill_factor == 1.0 {
                    format!("btree:resident={resident}")
                } else {
                    format!("btree:resident={resident},fill={fill_factor}")
                }
            }
        }
    }

    /// The budget in bytes this store is built with, if it takes one.
    pub fn memory_budget(&self) -> Option<u64> {
        match self {
            StoreSpec::BTree { .. } | StoreSpec::Map(_) => None,
            StoreSpec::Hybrid(h) => h.budget_bytes,
            StoreSpec::Store(s) => s.budget_bytes,
            StoreSpec::Peer(p) => p.budget_bytes,
        }
    }

    /// True when the store keeps files of its own beside the storage's devices (a log and a
    /// manifest), so its storage needs a directory.
    pub fn needs_dir(&self) -> bool {
        matches!(
            self,
            StoreSpec::Hybrid(_) | StoreSpec::Store(_) | StoreSpec::Peer(_)
        )
    }

    /// The same store with its budget turned into bytes ([`MemoryBudget::bytes`]).
    pub fn resolve(&self, btree_memory: u64, btree_peak: u64) -> StoreSpec {
        match self {
            StoreSpec::Hybrid(h) => StoreSpec::Hybrid(HybridSpec {
                budget_bytes: h.budget.map(|b| b.bytes(btree_memory, btree_peak)),
                ..h.clone()
            }),
            StoreSpec::Store(s) => StoreSpec::Store(StoreApiSpec {
                budget_bytes: s.budget.map(|b| b.bytes(btree_memory, btree_peak)),
                ..s.clone()
            }),
            StoreSpec::Peer(p) => StoreSpec::Peer(PeerSpec {
                budget_bytes: p.budget.map(|b| b.bytes(btree_memory, btree_peak)),
                ..p.clone()
            }),
            other => other.clone(),
        }
    }

    /// The same store with `budget` (unresolved), when it takes one.
    pub fn with_budget(&self, budget: MemoryBudget) -> StoreSpec {
        match self {
            StoreSpec::Hybrid(h) => StoreSpec::Hybrid(HybridSpec {
                budget: Some(budget),
                budget_bytes: None,
                ..h.clone()
            }),
            StoreSpec::Store(s) => StoreSpec::Store(StoreApiSpec {
                budget: Some(budget),
                budget_bytes: None,
                ..s.clone()
            }),
            StoreSpec::Peer(p) => StoreSpec::Peer(PeerSpec {
                budget: Some(budget),
                budget_bytes: None,
                ..p.clone()
            }),
            other => other.clone(),
        }
    }

    /// The same store for a run of `workload` held to `memory_limit`: a peer sizes itself from
    /// the limit as its documentation recommends for the workload ([`PeerOptions::from_limit`];
    /// single-key operations only when the workload has no scans, the smaller share of the
    /// limit when it writes); every other store is as
    /// it was (its budget, when it takes one, is decided before: see `lidx ycsb`).
    pub fn for_run(&self, memory_limit: Option<u64>, workload: crate::ycsb::YcsbWorkload) -> Self {
        match self {
            StoreSpec::Peer(p) => StoreSpec::Peer(PeerSpec {
                memory_limit,
                point_reads: !workload.scans(),
                writes: workload.writes(),
                ..p.clone()
            }),
            other => other.clone(),
        }
    }

    /// True for the typed adapters (`adapter:btree`, `adapter:hybrid`), which index `u64`
    /// values, not the byte keys of [`StoreKeys`].
    pub fn is_adapter(&self) -> bool {
        !matches!(self, StoreSpec::Store(_) | StoreSpec::Peer(_))
    }

    /// Checks that this store takes `dataset`'s keys: every store through the API does; the
    /// typed adapters take `u64` keys only ([`BenchError::KeyType`], naming what to run
    /// instead).
    pub fn check_keys(&self, dataset: &str, keys: &StoreKeys) -> Result<()> {
        if *keys == StoreKeys::U64 {
            return Ok(());
        }
        if let StoreSpec::Peer(_) = self {
            return Ok(());
        }
        if let StoreSpec::Store(s) = self {
            let Engine::Log(LogSpec {
                keys: LogKeys::U64,
                map,
            }) = s.engine
            else {
                return Ok(());
            };
            return Err(BenchError::KeyType {
                dataset: dataset.to_string(),
                got: keys.type_name(),
                expected: format!(
                    "u64 keys: the log engine's keys are 8 bytes (paper 001's setting); \
                     --store log:trie:{} (the same map over keys of any length), btree or \
                     hybrid take every key type",
                    map.label()
                ),
            });
        }
        Err(BenchError::KeyType {
            dataset: dataset.to_string(),
            got: keys.type_name(),
            expected: format!(
                "{} indexes u64 keys (as do --curve's stores); the stores through the API take \
                 every key type: --store btree,hybrid",
                self.label()
            ),
        })
    }

    /// Builds the store in `storage` from the sorted unique `keys`, `payload_size`-byte
    /// payloads derived from each key; a store through the API writes each key as `key_bytes`
    /// makes it (the adapters take [`StoreKeys::U64`] only: [`StoreSpec::check_keys`]).
    pub fn build(
        &self,
        storage: Arc<Storage>,
        keys: &[u64],
        key_bytes: &Arc<StoreKeys>,
        payload_size: usize,
    ) -> Result<Box<dyn KvStore<u64>>> {
        self.check_keys("this dataset", key_bytes)?;
        let payloads = |_: usize, key: &u64, out: &mut [u8]| payload_of(*key, out);
        match *self {
            StoreSpec::BTree {
                resident,
                fill_factor,
            } => {
                let params = DiskBTreeParams {
                    payload_size,
                    fill_factor,
                    resident,
                };
                let tree = DiskBTree::build(&storage, "btree", keys, payloads, params)?;
                Ok(Box::new(LockedBTree::new(tree)))
            }
            StoreSpec::Hybrid(ref h) => {
                let defaults = HybridOptions::default();
                let options = HybridOptions {
                    payload_size,
                    model: h.model.unwrap_or(defaults.model),
                    fetch: h.fetch,
                    memory_budget: h
                        .budget_bytes
                        .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
                    wal: WalOptions {
                        fsync: h.fsync,
                        ..WalOptions::default()
                    },
                    ..defaults
                };
                Ok(match h.dynamic {
                    DynamicKind::BTree {} => Box::new(HybridStore {
                        index: HybridIndex::create(storage, keys, payloads, options)?,
                        payload_size,
                    }),
                    DynamicKind::SortedRuns {} => Box::new(HybridStore {
                        index: HybridIndex::<u64, SortedRuns<u64>>::create_with(
                            storage, keys, payloads, options,
                        )?,
                        payload_size,
                    }),
                })
            }
            StoreSpec::Peer(ref p) => Ok(Box::new(build_peer(
                p,
                &storage,
                keys,
                key_bytes,
                payload_size,
            )?)),
            StoreSpec::Store(ref s) => Ok(Box::new(build_store_api(
                s,
                storage,
                keys,
                key_bytes,
                payload_size,
            )?)),
            StoreSpec::Map(ref m) => {
                let options = UpdateOptions {
                    payload_size,
                    resident: Resident::AllInner,
                };
                let map = m.build_as(&storage, "map", keys, &options)?;
                Ok(Box::new(LockedMap {
                    map: RwLock::new(map),
                }))
            }
        }
    }
}

/// Creates a store through the API in `storage`'s directory (its block files on `storage`)
/// and loads `keys` in batches, then compacts it: a table (`hybrid`) or a checkpointed tree
/// (`btree`) holding every key, an empty log. The load runs with at least the store's default
/// budget and the store is reopened with the run's: loading 7.5M keys under a 1 MB budget
/// rewrote the table 270 times (90 s of build per run). An `lsm` store loads with the run's
/// budget: its merges rewrite a level, not the table.
fn build_store_api(
    spec: &StoreApiSpec,
    storage: Arc<Storage>,
    keys: &[u64],
    key_bytes: &Arc<StoreKeys>,
    payload_size: usize,
) -> Result<StoreApi> {
    let dir = storage
        .dir()
        .ok_or_else(|| BenchError::BadSpec {
            what: "store",
            got: "a store through the API on storage without a directory".to_string(),
            expected: "storage with a directory for the log and manifest".to_string(),
        })?
        .to_path_buf();
    let create = CreateOptions {
        engine: spec.engine,
        block_size: storage.block_size(),
        key_format: match **key_bytes {
            StoreKeys::U64 => KeyFormat::U64,
            StoreKeys::Ranked(_) => KeyFormat::Bytes,
        },
        ..CreateOptions::default()
    };
    let defaults = StoreOptions::default();
    let options = StoreOptions {
        fsync: spec.fsync,
        // A relative budget of a tiny reference can fall below what a store accepts.
        memory_budget: spec.budget_bytes.map_or(defaults.memory_budget, |b| {
            usize::try_from(b)
                .unwrap_or(usize::MAX)
                .max(MIN_MEMORY_BUDGET)
        }),
        // The storage carries the run's page cache.
        cache_bytes: 0,
        row_cache_bytes: spec.row_cache_bytes,
        ..defaults
    };
    // An `lsm` store loads within its budget: its merges are bounded by its levels (and a
    // load that took more would fail a run held to a memory limit the budget was sized for).
    let load = StoreOptions {
        memory_budget: match spec.engine {
            Engine::Lsm(_) => options.memory_budget,
            _ => options.memory_budget.max(defaults.memory_budget),
        },
        ..options
    };
    // A `log` store has no block files: its records are its log, in the directory.
    let is_log = matches!(spec.engine, Engine::Log(_));
    let store = if is_log {
        Store::create(&dir, &create, &load)?
    } else {
        Store::create_on(&dir, Arc::clone(&storage), &create, &load)?
    };
    let store = LidxStore(store);
    load_keys(&store, keys, key_bytes, payload_size)?;
    store.0.close()?;
    let store = if is_log {
        Store::open(&dir, &options)?
    } else {
        Store::open_on(&dir, storage, &options)?
    };
    Ok(StoreApi::new(
        Box::new(LidxStore(store)),
        Arc::clone(key_bytes),
        payload_size,
    ))
}

/// Writes `keys` into an empty `store` in batches of [`BUILD_BATCH`], each value
/// [`payload_of`] its key, then compacts it: the load every store through the shape gets.
fn load_keys(
    store: &dyn ByteStore,
    keys: &[u64],
    key_bytes: &StoreKeys,
    payload_size: usize,
) -> lidx::Result<()> {
    let mut payload = vec![0u8; payload_size];
    for chunk in keys.chunks(BUILD_BATCH) {
        let mut batch = WriteBatch::new();
        for &k in chunk {
            payload_of(k, &mut payload);
            key_bytes.with(k, |key| batch.put(key, &payload))?;
        }
        store.write(&batch)?;
    }
    store.compact()
}

/// Creates a peer in `storage`'s directory and loads `keys` as a store through the API is
/// loaded ([`load`]). A peer that cannot be created is [`BenchError::PeerUnavailable`], which
/// [`crate::kv_runner::compare`] reports as a skipped row.
fn build_peer(
    spec: &PeerSpec,
    storage: &Storage,
    keys: &[u64],
    key_bytes: &Arc<StoreKeys>,
    payload_size: usize,
) -> Result<StoreApi> {
    let dir = storage.dir().ok_or_else(|| BenchError::BadSpec {
        what: "store",
        got: format!("peer {} on storage without a directory", spec.engine.name()),
        expected: "storage with a directory".to_string(),
    })?;
    let options = PeerOptions {
        row_cache_bytes: spec.row_cache_bytes,
        ..match spec.memory_limit {
            Some(limit) => PeerOptions::from_limit(limit, spec.point_reads, spec.writes),
            None => PeerOptions::from_budget(spec.budget_bytes.unwrap_or(DEFAULT_PEER_BUDGET)),
        }
    };
    let store = spec
        .engine
        .create(&dir.join(spec.engine.name()), &options)
        .map_err(|e| BenchError::PeerUnavailable {
            engine: spec.engine.name().to_string(),
            why: e.to_string(),
        })?;
    load_keys(store.as_ref(), keys, key_bytes, payload_size)?;
    Ok(StoreApi::new(store, Arc::clone(key_bytes), payload_size))
}

/// A peer's budget when none is given: the lidx store's default budget.
pub const DEFAULT_PEER_BUDGET: u64 = 64 << 20;

/// A peer engine ([`PeerEngine`]) with its memory budget.
#[derive(Clone)]
pub struct PeerSpec {
    /// The engine.
    pub engine: Arc<dyn PeerEngine>,
    /// Memory budget as given; split into cache and write buffer by
    /// [`PeerOptions::from_budget`] when the run has no memory limit.
    pub budget: Option<MemoryBudget>,
    /// The budget in bytes, once resolved against the reference ([`StoreSpec::resolve`]).
    pub budget_bytes: Option<u64>,
    /// The memory limit of the run ([`StoreSpec::for_run`]): when set, the peer sizes itself
    /// from it ([`PeerOptions::from_limit`]) and the budget is not used.
    pub memory_limit: Option<u64>,
    /// The run's workload has single-key operations only ([`PeerOptions::point_reads`]).
    pub point_reads: bool,
    /// The run's workload writes ([`PeerOptions::writes`]).
    pub writes: bool,
    /// [`PeerOptions::row_cache_bytes`] (`lidx ycsb --row-cache`).
    pub row_cache_bytes: u64,
}

impl std::fmt::Debug for PeerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerSpec")
            .field("engine", &self.engine.name())
            .field("budget", &self.budget)
            .field("budget_bytes", &self.budget_bytes)
            .field("memory_limit", &self.memory_limit)
            .field("point_reads", &self.point_reads)
            .field("writes", &self.writes)
            .field("row_cache_bytes", &self.row_cache_bytes)
            .finish()
    }
}

impl PartialEq for PeerSpec {
    fn eq(&self, other: &PeerSpec) -> bool {
        self.engine.name() == other.engine.name()
            && self.budget == other.budget
            && self.budget_bytes == other.budget_bytes
            && self.memory_limit == other.memory_limit
            && self.point_reads == other.point_reads
            && self.writes == other.writes
            && self.row_cache_bytes == other.row_cache_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_models_are_spelled_as_the_disk_registry_spells_them() {
        let ok = [
            ("pgm:eps=32", StaticModel::Pgm { eps: 32 }),
            ("cpr-pgm:eps=16", StaticModel::CprPgm { eps: 16 }),
            ("pgm-zero:pages=1.5", StaticModel::PgmZero { pages: 1.5 }),
            ("auto:pages=1.3", StaticModel::Auto { pages: 1.3 }),
            ("leco-zonemap", StaticModel::LecoZoneMap),
            ("leco-zonemap-rough", StaticModel::LecoZoneMap),
        ];
        for (spec, want) in ok {
            assert_eq!(parse_model(spec).unwrap(), want, "{spec}");
        }
        for spec in [
            "pgm:eps=0",
            "rs",
            "zonemap",
            "pgm:gran=page",
            "pgm-zero:eps=8",
            "btree",
        ] {
            assert!(parse_model(spec).is_err(), "{spec}");
        }
    }

    /// A store built from the even keys below 10,000 finds 40, not 41, then 41 once put.
    fn reads_and_inserts(store: &dyn KvStore<u64>) {
        let (mut got, mut want) = ([0u8; 8], [0u8; 8]);
        assert!(store.get(&40, &mut got).unwrap());
        payload_of(40, &mut want);
        assert_eq!(got, want);
        assert!(!store.get(&41, &mut got).unwrap());
        payload_of(41, &mut want);
        store.put(41, &want).unwrap();
        assert!(store.get(&41, &mut got).unwrap());
        assert_eq!(got, want);
        assert!(store.memory_bytes() > 0 && store.disk_bytes() > 0);
    }

    #[test]
    fn the_locked_btree_reads_what_it_was_given_and_inserts() {
        let storage = Arc::new(Storage::ram());
        let keys: Vec<u64> = (0..5000).map(|i| i * 2).collect();
        let store = StoreSpec::baseline()
            .build(Arc::clone(&storage), &keys, &Arc::new(StoreKeys::U64), 8)
            .unwrap();
        reads_and_inserts(store.as_ref());
        assert_eq!(store.merge_stats(), MergeStats::default());
        assert_eq!(StoreSpec::baseline().label(), "btree:resident=inner");
    }

    #[test]
    fn store_lists_name_engines_and_adapters() {
        let adapter = StoreSpec::hybrid(
            None,
            Fetch::default(),
            Some(MemoryBudget::Percent(50.0)),
            FsyncPolicy::Never,
            DynamicKind::BTree {},
        )
        .unwrap();
        let budget = Some(MemoryBudget::Percent(50.0));
        let list = StoreSpec::parse_list(
            "btree, hybrid,adapter:btree,adapter:hybrid",
            budget,
            FsyncPolicy::Never,
            &adapter,
            &[],
        )
        .unwrap();
        assert_eq!(
            list[0],
            StoreSpec::store(Engine::BTree, None, FsyncPolicy::Never)
        );
        assert!(
            !list[0].relative_budget(),
            "the btree engine's budget is not memory"
        );
        assert_eq!(
            list[1],
            StoreSpec::store(Engine::Hybrid, budget, FsyncPolicy::Never)
        );
        assert!(list[1].relative_budget());
        assert_eq!(list[2], StoreSpec::baseline());
        assert_eq!(list[3], adapter);
        assert_eq!(list[1].label(), "store:hybrid,budget=50%,fsync=never");
        let log =
            StoreSpec::parse_list("log:alex,hybrid", budget, FsyncPolicy::Never, &adapter, &[])
                .unwrap();
        assert!(
            !log[0].relative_budget(),
            "a log store takes no budget, so it can be the reference"
        );
        assert_eq!(log[0].memory_budget(), None);
        assert!(log[1].relative_budget());
        let err = StoreSpec::parse_list("btree,leveldb", budget, FsyncPolicy::Never, &adapter, &[]);
        assert!(matches!(
            err,
            Err(BenchError::BadSpec { what: "store", .. })
        ));
    }

    #[test]
    fn a_store_through_the_api_reads_what_it_was_given_and_inserts() {
        let dir = tempfile::tempdir().unwrap();
        for engine in [Engine::Hybrid, Engine::BTree] {
            let storage = Arc::new(
                Storage::new(
                    &dir.path().join(engine.name()),
                    lidx::io::DeviceKind::File { direct: false },
                    4096,
                )
                .unwrap(),
            );
            let keys: Vec<u64> = (0..5000).map(|i| i * 2).collect();
            let store = StoreSpec::store(engine, None, FsyncPolicy::Never)
                .build(storage, &keys, &Arc::new(StoreKeys::U64), 8)
                .unwrap();
            reads_and_inserts(store.as_ref());
            let mut short = [0u8; 4];
            assert!(
                store.get(&41, &mut short).is_err(),
                "a value of another size"
            );
        }
    }

    #[test]
    fn budgets_resolve_against_the_btree_at_start_or_peak() {
        let parse = |s| MemoryBudget::parse(s).unwrap();
        assert_eq!(parse("10%").bytes(1000, 3000), 100);
        assert_eq!(parse("2K").bytes(1000, 3000), 2000);
        assert_eq!(parse("btree-peak").bytes(1000, 3000), 3000);
        assert_eq!(parse("btree-peak").label(), "btree-peak");
        assert!(MemoryBudget::parse("peak").is_err());
        assert!(MemoryBudget::parse("0%").is_err());
    }
}
