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
//! took 53 s of wall time instead of 2.

use std::sync::Arc;

use lidx::disk::{DiskMap, Resident};
use lidx::io::{DeviceKind, IoStats, Storage};
use lidx::kv::{FsyncPolicy, HybridIndex, HybridOptions};
use lidx::raw::kv::hybrid::StaticModel;
use lidx::raw::kv::WalOptions;

use crate::error::{BenchError, Result};
use crate::kv_runner::StorageBase;
use crate::kv_store::{parse_model, MODEL_FORMS};
use crate::updatable_registry::{DiskMapFiles, UpdatableSpec, UpdateOptions};

/// Bytes of every payload: a tuple id.
const PAYLOAD: usize = 8;

/// One structure every index of a run is built as.
#[derive(Debug, Clone, PartialEq)]
pub enum TpccIndexSpec {
    /// An updatable disk map of the catalog.
    Map(UpdatableSpec),
    /// The typed hybrid index with this static model.
    Hybrid(StaticModel),
}

impl TpccIndexSpec {
    /// Every accepted form, for messages and help.
    pub fn accepted_forms() -> String {
        format!(
            "{}, or hybrid[:<model>] with <model> one of {MODEL_FORMS}",
            UpdatableSpec::accepted_forms()
        )
    }

    /// Parses one item: a catalog disk map (`btree`, `dpgm:eps=32`) or `hybrid[:<model>]`.
    pub fn parse(item: &str) -> Result<TpccIndexSpec> {
        let item = item.trim();
        let bad = || BenchError::BadSpec {
            what: "tpcc index",
            got: item.to_string(),
            expected: TpccIndexSpec::accepted_forms(),
        };
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

    /// The name of the records: the catalog's label, or `hybrid:<model>`.
    pub fn label(&self) -> String {
        match self {
            TpccIndexSpec::Map(spec) => spec.label(),
            TpccIndexSpec::Hybrid(model) => format!("hybrid:{}", model.name()),
        }
    }

    /// Builds one index in `storage` from sorted unique `keys`, entry `i` pointing at tuple
    /// `tids[i]`.
    fn build(&self, storage: Arc<Storage>, keys: &[u64], tids: &[u64]) -> Result<Box<dyn Index>> {
        let payload_of =
            |i: usize, _: &u64, out: &mut [u8]| out.copy_from_slice(&tids[i].to_le_bytes());
        Ok(match self {
            TpccIndexSpec::Map(spec) => {
                let options = UpdateOptions {
                    payload_size: PAYLOAD,
                    resident: Resident::AllInner,
                };
                let map = spec.build_with(&storage, "index", keys, &payload_of, &options)?;
                Box::new(MapIndex(map))
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
                Box::new(HybridTpcc(HybridIndex::create(
                    storage, keys, payload_of, options,
                )?))
            }
        })
    }
}

/// What a transaction asks of an index: point reads, inserts, deletes and ordered scans of
/// tuple ids by `u64` key.
pub(crate) trait Index: Send {
    /// The tuple id under `key`, if any.
    fn get(&self, key: u64) -> Result<Option<u64>>;
    /// Adds `key` pointing at `tid`.
    fn insert(&mut self, key: u64, tid: u64) -> Result<()>;
    /// Removes `key`.
    fn delete(&mut self, key: u64) -> Result<()>;
    /// Appends up to `limit` entries from the first key `>= start`, in key order.
    fn scan(
        &self,
        start: u64,
        limit: usize,
        keys: &mut Vec<u64>,
        tids: &mut Vec<u8>,
    ) -> Result<usize>;
    /// Bytes in memory.
    fn memory_bytes(&self) -> usize;
    /// Bytes of its files.
    fn disk_bytes(&self) -> u64;
    /// Merges completed so far (0 for structures that do not merge).
    fn merges(&self) -> u64;
    /// Bytes its write-ahead log wrote so far (0 for structures without one).
    fn log_bytes(&self) -> u64;
    /// Nanoseconds of merges so far and of writes stalled waiting for one (0 for structures
    /// that do not merge).
    fn merge_and_stall_ns(&self) -> (u64, u64);
    /// Waits for background merges, surfacing their errors.
    fn drain(&self) -> Result<()>;
}

struct MapIndex(Box<dyn DiskMap<u64>>);

impl Index for MapIndex {
    fn get(&self, key: u64) -> Result<Option<u64>> {
        let mut tid = [0u8; PAYLOAD];
        Ok(self.0.get(&key, &mut tid)?.then(|| u64::from_le_bytes(tid)))
    }

    fn insert(&mut self, key: u64, tid: u64) -> Result<()> {
        self.0.insert(key, &tid.to_le_bytes())?;
        Ok(())
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        self.0.delete(&key)?;
        Ok(())
    }

    fn scan(
        &self,
        start: u64,
        limit: usize,
        keys: &mut Vec<u64>,
        tids: &mut Vec<u8>,
    ) -> Result<usize> {
        Ok(self.0.scan(&start, limit, keys, tids)?)
    }

    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.0.disk_bytes()
    }

    fn merges(&self) -> u64 {
        0
    }

    fn log_bytes(&self) -> u64 {
        0
    }

    fn merge_and_stall_ns(&self) -> (u64, u64) {
        (0, 0)
    }

    fn drain(&self) -> Result<()> {
        Ok(())
    }
}

struct HybridTpcc(HybridIndex<u64>);

impl Index for HybridTpcc {
    fn get(&self, key: u64) -> Result<Option<u64>> {
        let mut tid = [0u8; PAYLOAD];
        Ok(self.0.get(&key, &mut tid)?.then(|| u64::from_le_bytes(tid)))
    }

    fn insert(&mut self, key: u64, tid: u64) -> Result<()> {
        Ok(self.0.put(key, &tid.to_le_bytes())?)
    }

    fn delete(&mut self, key: u64) -> Result<()> {
        Ok(self.0.delete(&key)?)
    }

    fn scan(
        &self,
        start: u64,
        limit: usize,
        keys: &mut Vec<u64>,
        tids: &mut Vec<u8>,
    ) -> Result<usize> {
        Ok(self.0.scan(&start, limit, keys, tids)?)
    }

    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.0.disk_bytes()
    }

    fn merges(&self) -> u64 {
        self.0.stats().merges
    }

    fn log_bytes(&self) -> u64 {
        self.0.stats().wal.bytes
    }

    fn merge_and_stall_ns(&self) -> (u64, u64) {
        let stats = self.0.stats();
        (stats.merge_nanos, stats.stall_nanos)
    }

    fn drain(&self) -> Result<()> {
        Ok(self.0.wait_for_merges()?)
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
    indexes: Vec<Box<dyn Index>>,
    storages: Vec<Arc<Storage>>,
    base: StorageBase,
}

impl IndexSet {
    /// Builds `spec` for every table from its `(key, tuple id)` entries (any order; keys
    /// unique), each in a fresh storage under `base`.
    pub(crate) fn build(
        spec: &TpccIndexSpec,
        base: &StorageBase,
        mut entries: Vec<Vec<(u64, u64)>>,
    ) -> Result<IndexSet> {
        let mut set = IndexSet {
            indexes: Vec::with_capacity(Table::ALL.len()),
            storages: Vec::with_capacity(Table::ALL.len()),
            base: base.clone(),
        };
        let needs_dir = matches!(spec, TpccIndexSpec::Hybrid(_));
        for (table, entries) in Table::ALL.iter().zip(entries.iter_mut()) {
            entries.sort_unstable();
            let (keys, tids): (Vec<u64>, Vec<u64>) = std::mem::take(entries).into_iter().unzip();
            let storage = base.fresh(&format!("tpcc.{}", table.name()), needs_dir)?;
            set.storages.push(Arc::clone(&storage));
            set.indexes.push(spec.build(storage, &keys, &tids)?);
        }
        Ok(set)
    }

    /// The index of `table`.
    pub(crate) fn of(&self, table: Table) -> &dyn Index {
        self.indexes[table as usize].as_ref()
    }

    /// The index of `table`, to write.
    pub(crate) fn of_mut(&mut self, table: Table) -> &mut dyn Index {
        self.indexes[table as usize].as_mut()
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

    /// Merges over every index.
    pub(crate) fn merges(&self) -> u64 {
        self.indexes.iter().map(|i| i.merges()).sum()
    }

    /// Bytes of write-ahead log over every index.
    pub(crate) fn log_bytes(&self) -> u64 {
        self.indexes.iter().map(|i| i.log_bytes()).sum()
    }

    /// Nanoseconds of merges and of stalled writes over every index.
    pub(crate) fn merge_and_stall_ns(&self) -> (u64, u64) {
        self.indexes.iter().fold((0, 0), |(m, s), i| {
            let (merge, stall) = i.merge_and_stall_ns();
            (m + merge, s + stall)
        })
    }

    /// Waits for every index's background merges.
    pub(crate) fn drain(&self) -> Result<()> {
        self.indexes.iter().try_for_each(|i| i.drain())
    }

    /// The device kind of every storage.
    pub(crate) fn kind(&self) -> &DeviceKind {
        &self.base.kind
    }

    /// Block size of every storage.
    pub(crate) fn block_size(&self) -> usize {
        self.base.block_size
    }

    /// Closes every index and removes the directories [`IndexSet::build`] made.
    pub(crate) fn remove(&mut self) -> Result<()> {
        self.indexes.clear();
        for storage in std::mem::take(&mut self.storages) {
            self.base.clean(&storage)?;
        }
        Ok(())
    }
}

/// Up to `limit` entries of `index` with keys in `lo..hi`, in key order, as (key, tuple id),
/// into `out` (cleared first): scans in batches that grow from 16 entries, so a short range
/// reads little past its end.
pub(crate) fn range(
    index: &dyn Index,
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
        let got = index.scan(start, want, &mut keys, &mut tids)?;
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
