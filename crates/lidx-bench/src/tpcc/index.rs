//! The eleven on-disk indexes of a TPC-C database (paper 002 §10.6: a primary-key index per
//! table and two secondary ones) and the structures they can be, by `--index` name.
//!
//! A spec ([`TpccIndexSpec`]) is an updatable disk map of the catalog
//! ([`lidx::catalog::DiskMapSpec`]: `btree`, `alex`, `lipp`, `dfiting`, `dpgm`,
//! `btree-learned`, paper 003's structures with the disk B+-tree) or `hybrid[:<model>]`, the
//! typed hybrid index of paper 002 §9 (`lidx::kv::HybridIndex`, the bench's `adapter:hybrid`)
//! with a static model as `lidx ycsb --hybrid-model` spells it (default the LeCo zone map,
//! hybrid-LeCo-disk; `hybrid:cpr-pgm` is hybrid-PGM-disk). Every index of a run is the same
//! structure, each in a storage (directory, device, counters) of its own, bulk loaded from the
//! initial population's sorted keys; every payload is the 8-byte tuple id. Inner nodes and
//! models stay in memory (the B+-tree's `Resident::AllInner`, paper 002 §10's equal-memory
//! setting). The hybrid keeps its default merge trigger (ratio 178, §9.1) and its write-ahead
//! log without fsync, as `lidx ycsb` runs it (the B+-tree writes each changed node without an
//! fsync either); with its default fsync per group commit, 4,000 transactions of a test
//! took 53 s of wall time instead of 2. `kv:<engine>` makes each index a `lidx::kv::Store`
//! of that engine (any `lidx kv create --engine` accepts): key the `u64` key big-endian (byte
//! order is key order), value the tuple id, its block files on the index's storage (the
//! store's log and manifest in that storage's directory), loaded by write batches in key
//! order and compacted, without fsync ([`FsyncPolicy::Never`]) as the hybrid runs, with the
//! store's default memory budget and page cache, or with `--kv-memory`
//! ([`super::run::KvMemory`]) a share of one budget for all eleven ([`kv_shares`]: 8 KiB each,
//! the rest by their loaded entries) and no page cache. Its
//! record's memory and disk bytes are the store's ([`lidx::kv::StoreStats`]: memory, block
//! files and log), its merges the store's; a store counts no log bytes written, so its
//! log bytes per transaction are 0. `store:<engine>` is no index structure: it names the
//! second mode, every tuple and index in one store of that engine ([`super::store`]).

use std::sync::Arc;

use lidx::disk::{DiskMap, Resident};
use lidx::io::{IoStats, Storage};
use lidx::kv::{
    Engine, FsyncPolicy, HybridIndex, HybridOptions, LogKeys, Store, StoreOptions, WriteBatch,
};
use lidx::raw::kv::hybrid::StaticModel;
use lidx::raw::kv::WalOptions;

use super::run::kv_shares;
use super::store::{create_store, LOAD_BATCH};
use crate::error::{BenchError, Result};
use crate::kv_runner::StorageBase;
use crate::kv_store::{parse_model, MODEL_FORMS};
use crate::updatable_registry::{DiskMapFiles, UpdatableSpec, UpdateOptions};

/// Bytes of every payload: a tuple id.
const PAYLOAD: usize = 8;

/// The prefix of an `--index` item that puts the tuples in a store: `store:<engine>`.
pub const STORE_PREFIX: &str = "store:";

/// The prefix of an `--index` item that makes every index a store: `kv:<engine>`.
pub const KV_PREFIX: &str = "kv:";

/// One structure every index of a run is built as, or the store that holds every tuple and
/// index (the second mode, `super::store`).
#[derive(Debug, Clone, PartialEq)]
pub enum TpccIndexSpec {
    /// An updatable disk map of the catalog.
    Map(UpdatableSpec),
    /// The typed hybrid index with this static model.
    Hybrid(StaticModel),
    /// Every index a store of this engine.
    Kv(Engine),
    /// Tuples and indexes in one store of this engine.
    Store(Engine),
}

impl TpccIndexSpec {
    /// Every accepted form, for messages and help.
    pub fn accepted_forms() -> String {
        format!(
            "{}, hybrid[:<model>] with <model> one of {MODEL_FORMS}, {KV_PREFIX}<engine> (each \
             index a store), or {STORE_PREFIX}<engine> (tuples and indexes in one store; a \
             log engine as log:trie:<map>) with <engine> one of {}",
            UpdatableSpec::accepted_forms(),
            Engine::forms()
        )
    }

    /// Parses one item: a catalog disk map (`btree`, `dpgm:eps=32`), `hybrid[:<model>]`,
    /// `kv:<engine>` or `store:<engine>` (the store's own parser, as `lidx kv create
    /// --engine` reads it).
    pub fn parse(item: &str) -> Result<TpccIndexSpec> {
        let item = item.trim();
        let bad = || BenchError::BadSpec {
            what: "tpcc index",
            got: item.to_string(),
            expected: TpccIndexSpec::accepted_forms(),
        };
        if let Some(engine) = item.strip_prefix(KV_PREFIX) {
            return Engine::parse(engine).map(TpccIndexSpec::Kv).ok_or_else(bad);
        }
        if let Some(engine) = item.strip_prefix(STORE_PREFIX) {
            // The store's keys are a table tag and an 8-byte key: a `log` store of 8-byte
            // keys cannot hold them (`log:trie:<map>` can).
            return match Engine::parse(engine) {
                Some(Engine::Log(spec)) if spec.keys == LogKeys::U64 => Err(bad()),
                Some(engine) => Ok(TpccIndexSpec::Store(engine)),
                None => Err(bad()),
            };
        }
        if item == "hybrid" {
            return Ok(TpccIndexSpec::Hybrid(StaticModel::default()));
        }
        if let Some(model) = item.strip_prefix("hybrid:") {
            return parse_model(model)
                .map(TpccIndexSpec::Hybrid)
                .map_err(|_| bad());
        }
        UpdatableSpec::parse(item)
            .map(TpccIndexSpec::Map)
            .map_err(|_| bad())
    }

    /// Parses a comma-separated list of at least one item.
    pub fn parse_list(list: &str) -> Result<Vec<TpccIndexSpec>> {
        let specs = list
            .split(',')
            .filter(|item| !item.trim().is_empty())
            .map(TpccIndexSpec::parse)
            .collect::<Result<Vec<_>>>()?;
        if specs.is_empty() {
            return Err(BenchError::BadSpec {
                what: "tpcc index list",
                got: list.to_string(),
                expected: TpccIndexSpec::accepted_forms(),
            });
        }
        Ok(specs)
    }

    /// The name of the records: the catalog's label, `hybrid:<model>`, `kv:<engine>` or
    /// `store:<engine>`.
    pub fn label(&self) -> String {
        match self {
            TpccIndexSpec::Map(spec) => spec.label(),
            TpccIndexSpec::Hybrid(model) => format!("hybrid:{}", model.name()),
            TpccIndexSpec::Kv(engine) => format!("{KV_PREFIX}{}", engine.label()),
            TpccIndexSpec::Store(engine) => format!("{STORE_PREFIX}{}", engine.label()),
        }
    }

    /// Builds `table`'s index in `storage` (its files named after the table, so that an error
    /// names the index) from sorted unique `keys`, entry `i` pointing at tuple `tids[i]`; a
    /// store with `Some(budget)` takes that memory budget and no page cache.
    fn build(
        &self,
        table: Table,
        storage: Arc<Storage>,
        keys: &[u64],
        tids: &[u64],
        budget: Option<usize>,
    ) -> Result<Index> {
        let payload_of =
            |i: usize, _: &u64, out: &mut [u8]| out.copy_from_slice(&tids[i].to_le_bytes());
        Ok(match self {
            TpccIndexSpec::Map(spec) => {
                let options = UpdateOptions {
                    payload_size: PAYLOAD,
                    resident: Resident::AllInner,
                };
                let map = spec.build_with(&storage, table.name(), keys, &payload_of, &options)?;
                Index::Map(map)
            }
            TpccIndexSpec::Hybrid(model) => {
                let options = HybridOptions {
                    payload_size: PAYLOAD,
                    model: *model,
                    wal: WalOptions {
                        fsync: FsyncPolicy::Never,
                        ..WalOptions::default()
                    },
                    ..HybridOptions::default()
                };
                Index::Hybrid(HybridIndex::create(storage, keys, payload_of, options)?)
            }
            TpccIndexSpec::Kv(engine) => {
                let defaults = StoreOptions::default();
                let options = StoreOptions {
                    fsync: FsyncPolicy::Never,
                    memory_budget: budget.unwrap_or(defaults.memory_budget),
                    cache_bytes: budget.map_or(defaults.cache_bytes, |_| 0),
                    ..defaults
                };
                let (store, _) = create_store(*engine, &storage, &options)?;
                let mut batch = WriteBatch::new();
                for (key, tid) in keys.iter().zip(tids) {
                    batch.put(&key.to_be_bytes(), &tid.to_le_bytes())?;
                    if batch.len() == LOAD_BATCH {
                        store.write(&batch)?;
                        batch = WriteBatch::new();
                    }
                }
                store.write(&batch)?;
                store.compact()?;
                Index::Kv(store)
            }
            TpccIndexSpec::Store(_) => {
                return Err(BenchError::BadSpec {
                    what: "tpcc index",
                    got: self.label(),
                    expected: "an index structure (a store holds the tuples and the indexes \
                               together, not one index)"
                        .to_string(),
                })
            }
        })
    }
}

/// One index: what a transaction asks of it (point reads, inserts, deletes and ordered scans
/// of tuple ids by `u64` key) and what the record reports, whatever the structure.
pub(crate) enum Index {
    /// A catalog disk map.
    Map(Box<dyn DiskMap<u64>>),
    /// The typed hybrid index.
    Hybrid(HybridIndex<u64>),
    /// A store: keys big-endian, tuple ids as values.
    Kv(Store),
}

impl Index {
    /// The tuple id under `key`, if any.
    pub(crate) fn get(&self, key: u64) -> Result<Option<u64>> {
        let mut tid = [0u8; PAYLOAD];
        let found = match self {
            Index::Map(map) => map.get(&key, &mut tid)?,
            Index::Hybrid(index) => index.get(&key, &mut tid)?,
            Index::Kv(store) => {
                return store
                    .get(&key.to_be_bytes())?
                    .map(|value| kv_tid(store, "get", key, &value))
                    .transpose()
            }
        };
        Ok(found.then(|| u64::from_le_bytes(tid)))
    }

    /// Adds `key` pointing at `tid`.
    pub(crate) fn insert(&mut self, key: u64, tid: u64) -> Result<()> {
        let tid = tid.to_le_bytes();
        match self {
            Index::Map(map) => {
                map.insert(key, &tid)?;
            }
            Index::Hybrid(index) => index.put(key, &tid)?,
            Index::Kv(store) => store.put(&key.to_be_bytes(), &tid)?,
        }
        Ok(())
    }

    /// Removes `key`.
    pub(crate) fn delete(&mut self, key: u64) -> Result<()> {
        match self {
            Index::Map(map) => {
                map.delete(&key)?;
            }
            Index::Hybrid(index) => index.delete(&key)?,
            Index::Kv(store) => store.delete(&key.to_be_bytes())?,
        }
        Ok(())
    }

    /// Appends up to `limit` entries from the first key `>= start`, in key order: keys to
    /// `keys`, tuple ids (8 bytes each) to `tids`; returns how many. A store stops before
    /// `hi` (a bounded range lets it skip the runs that end before `start` or begin at `hi`
    /// or after, and stop its merge there); a map or the hybrid may return keys from `hi`
    /// on, which [`range`] drops.
    pub(crate) fn scan(
        &self,
        start: u64,
        hi: u64,
        limit: usize,
        keys: &mut Vec<u64>,
        tids: &mut Vec<u8>,
    ) -> Result<usize> {
        Ok(match self {
            Index::Map(map) => map.scan(&start, limit, keys, tids)?,
            Index::Hybrid(index) => index.scan(&start, limit, keys, tids)?,
            Index::Kv(store) => {
                let (lo, hi) = (start.to_be_bytes(), hi.to_be_bytes());
                let mut range = store.range(&lo[..]..&hi[..]);
                let mut got = 0;
                while got < limit {
                    let Some((key, value)) = range.next_entry()? else {
                        break;
                    };
                    let key = <[u8; 8]>::try_from(&key[..])
                        .map(u64::from_be_bytes)
                        .map_err(|_| kv_wrong(store, "scan", start, "a key", key.len()))?;
                    keys.push(key);
                    tids.extend_from_slice(&kv_tid(store, "scan", key, &value)?.to_le_bytes());
                    got += 1;
                }
                got
            }
        })
    }

    /// Bytes in memory.
    fn memory_bytes(&self) -> usize {
        match self {
            Index::Map(map) => map.memory_bytes(),
            Index::Hybrid(index) => index.memory_bytes(),
            Index::Kv(store) => store.stats().memory_bytes,
        }
    }

    /// Bytes of its files.
    fn disk_bytes(&self) -> u64 {
        match self {
            Index::Map(map) => map.disk_bytes(),
            Index::Hybrid(index) => index.disk_bytes(),
            Index::Kv(store) => {
                let stats = store.stats();
                stats.table_disk_bytes + stats.log_disk_bytes
            }
        }
    }

    /// The hybrid's or the store's counters: merges, nanoseconds of merges, of writes
    /// stalled waiting for one, and bytes its write-ahead log wrote (the hybrid's; a store
    /// counts none); zero for structures that neither merge nor log.
    fn merge_counters(&self) -> [u64; 4] {
        match self {
            Index::Map(_) => [0; 4],
            Index::Hybrid(index) => {
                let stats = index.stats();
                [
                    stats.merges,
                    stats.merge_nanos,
                    stats.stall_nanos,
                    stats.wal.bytes,
                ]
            }
            Index::Kv(store) => {
                let stats = store.stats();
                [
                    stats.merges,
                    (stats.merge_seconds * 1e9) as u64,
                    (stats.stall_seconds * 1e9) as u64,
                    0,
                ]
            }
        }
    }

    /// Waits for background merges, surfacing their errors.
    fn drain(&self) -> Result<()> {
        match self {
            Index::Map(_) => Ok(()),
            Index::Hybrid(index) => Ok(index.wait_for_merges()?),
            Index::Kv(store) => Ok(store.wait_for_merges()?),
        }
    }

    /// Closes it, returning any error a store meets finishing its work.
    fn close(self) -> Result<()> {
        match self {
            Index::Kv(store) => Ok(store.close()?),
            Index::Map(_) | Index::Hybrid(_) => Ok(()),
        }
    }
}

/// The tuple id of a store index's `value` under `key`, an error if it is no 8 bytes.
fn kv_tid(store: &Store, op: &'static str, key: u64, value: &[u8]) -> Result<u64> {
    <[u8; PAYLOAD]>::try_from(value)
        .map(u64::from_le_bytes)
        .map_err(|_| kv_wrong(store, op, key, "a tuple id", value.len()))
}

/// The error of a store index that returned `len` bytes where `what` belongs.
fn kv_wrong(store: &Store, op: &'static str, key: u64, what: &str, len: usize) -> BenchError {
    BenchError::WrongResult {
        index: format!("{KV_PREFIX}{}", store.identity().engine.label()),
        op,
        key,
        what: format!("{len} bytes for {what} of 8"),
    }
}

/// The eleven indexes, by what they index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Warehouse,
    District,
    Customer,
    /// CUSTOMER by (w, d, last name, first name).
    CustomerName,
    History,
    NewOrder,
    Order,
    /// ORDER by (w, d, customer, order).
    OrderCustomer,
    OrderLine,
    Item,
    Stock,
}

impl Table {
    /// Every index, in the order of [`IndexSet`]'s slots.
    pub(crate) const ALL: [Table; 11] = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::CustomerName,
        Table::History,
        Table::NewOrder,
        Table::Order,
        Table::OrderCustomer,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ];

    /// The index's name in messages and file names.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::CustomerName => "customer-by-name",
            Table::History => "history",
            Table::NewOrder => "new-order",
            Table::Order => "order",
            Table::OrderCustomer => "order-by-customer",
            Table::OrderLine => "order-line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }
}

/// Every index of a database with its storage.
pub(crate) struct IndexSet {
    indexes: Vec<Index>,
    storages: Vec<Arc<Storage>>,
    base: StorageBase,
}

impl IndexSet {
    /// Builds `spec` for every table from its `(key, tuple id)` entries (any order; keys
    /// unique), each in a fresh storage under `base`; `kv:` stores share `kv_bytes` by their
    /// entries ([`kv_shares`]).
    pub(crate) fn build(
        spec: &TpccIndexSpec,
        base: &StorageBase,
        mut entries: Vec<Vec<(u64, u64)>>,
        kv_bytes: Option<u64>,
    ) -> Result<IndexSet> {
        let counts: Vec<usize> = entries.iter().map(Vec::len).collect();
        let shares = match (spec, kv_bytes) {
            (TpccIndexSpec::Kv(_), Some(bytes)) => {
                Some(kv_shares(bytes, &counts, "what the first structure held")?)
            }
            _ => None,
        };
        let mut set = IndexSet {
            indexes: Vec::with_capacity(Table::ALL.len()),
            storages: Vec::with_capacity(Table::ALL.len()),
            base: base.clone(),
        };
        let needs_dir = matches!(spec, TpccIndexSpec::Hybrid(_) | TpccIndexSpec::Kv(_));
        for (table, entries) in Table::ALL.iter().zip(entries.iter_mut()) {
            entries.sort_unstable();
            let (keys, tids): (Vec<u64>, Vec<u64>) = std::mem::take(entries).into_iter().unzip();
            let storage = base.fresh(&format!("tpcc.{}", table.name()), needs_dir)?;
            set.storages.push(Arc::clone(&storage));
            let budget = shares.as_ref().map(|s| s[*table as usize]);
            set.indexes
                .push(spec.build(*table, storage, &keys, &tids, budget)?);
        }
        Ok(set)
    }

    /// The index of `table`.
    pub(crate) fn of(&self, table: Table) -> &Index {
        &self.indexes[table as usize]
    }

    /// The index of `table`, to write.
    pub(crate) fn of_mut(&mut self, table: Table) -> &mut Index {
        &mut self.indexes[table as usize]
    }

    /// The I/O of every storage so far.
    pub(crate) fn io(&self) -> IoStats {
        self.storages
            .iter()
            .fold(IoStats::default(), |sum, s| sum + s.stats())
    }

    /// Bytes in memory over every index.
    pub(crate) fn memory_bytes(&self) -> u64 {
        self.indexes.iter().map(|i| i.memory_bytes() as u64).sum()
    }

    /// Bytes on disk over every index.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.indexes.iter().map(|i| i.disk_bytes()).sum()
    }

    /// Merges, nanoseconds of merges, of stalled writes, and bytes of write-ahead log, summed
    /// over every index.
    pub(crate) fn merge_counters(&self) -> [u64; 4] {
        self.indexes.iter().fold([0; 4], |mut sum, index| {
            for (s, c) in sum.iter_mut().zip(index.merge_counters()) {
                *s += c;
            }
            sum
        })
    }

    /// Waits for every index's background merges.
    pub(crate) fn drain(&self) -> Result<()> {
        self.indexes.iter().try_for_each(|i| i.drain())
    }

    /// Where every storage is.
    pub(crate) fn base(&self) -> &StorageBase {
        &self.base
    }

    /// Closes every index and removes the directories [`IndexSet::build`] made.
    pub(crate) fn remove(&mut self) -> Result<()> {
        let closed = self.indexes.drain(..).try_for_each(Index::close);
        for storage in std::mem::take(&mut self.storages) {
            self.base.clean(&storage)?;
        }
        closed
    }
}

/// Up to `limit` entries of `index` with keys in `lo..hi`, in key order, as (key, tuple id),
/// into `out` (cleared first): scans in batches that grow from 16 entries, so a short range
/// reads little past its end.
pub(crate) fn range(
    index: &Index,
    lo: u64,
    hi: u64,
    limit: usize,
    out: &mut Vec<(u64, u64)>,
) -> Result<()> {
    out.clear();
    let (mut keys, mut tids) = (Vec::new(), Vec::new());
    let mut start = lo;
    let mut batch = 16;
    while out.len() < limit && start < hi {
        keys.clear();
        tids.clear();
        let want = batch.min(limit - out.len());
        let got = index.scan(start, hi, want, &mut keys, &mut tids)?;
        for (key, tid) in keys.iter().zip(tids.chunks_exact(PAYLOAD)) {
            if *key >= hi {
                return Ok(());
            }
            let mut bytes = [0u8; PAYLOAD];
            bytes.copy_from_slice(tid);
            out.push((*key, u64::from_le_bytes(bytes)));
        }
        match keys.last() {
            Some(&last) if got == want && last < u64::MAX => start = last + 1,
            _ => return Ok(()),
        }
        batch = (batch * 4).min(1024);
    }
    Ok(())
}
