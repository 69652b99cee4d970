//! TPC-C with the tuples in one durable `lidx::kv::Store` (issue 34's second mode, the
//! setting a user of lidx runs): every tuple and both secondary indexes in one store, chosen
//! by the `--index` item `store:<engine>` (any engine `lidx kv create --engine` accepts,
//! parsed by [`Engine::parse`]).
//!
//! **Keys**: one byte, the table's tag (its [`Table`] slot), then its packed `u64` key
//! (`super::keys`) big-endian, so every table is one contiguous key range in key order. A
//! tuple's value is its row's bytes ([`Row::encode`]); a secondary entry's value is empty,
//! its key ending in the primary key's columns ([`super::keys::customer_of_name`],
//! [`super::keys::order_of_customer`]).
//!
//! **Transactions**: a transaction's writes wait in a pending list (its own reads see them)
//! and go to the store as one [`WriteBatch`] when it commits, so they land atomically and a
//! rolled-back New-Order, which writes nothing before its invalid item, writes nothing.
//! **Durability**: the store's defaults ([`StoreOptions::default`]: `fdatasync` before a
//! batch is acknowledged, 64 MiB memory budget) and its default 8 MiB page cache, as a user
//! who opens a store gets them; `--fsync` chooses another policy. The store is created in a
//! fresh directory of the run's device (its block files on the run's storage, so its blocks
//! are counted as the first mode's are; the log and manifest are files of that directory,
//! whose bytes are not in the block counters), bulk loaded by batches of 4,096 puts in key
//! order and compacted, then closed and reopened before the transactions: the store a user
//! opens, not the one their load left.

use std::path::PathBuf;
use std::sync::Arc;

use lidx::io::{IoStats, Storage};
use lidx::kv::{CreateOptions, Engine, FsyncPolicy, KeyFormat, Store, StoreOptions, WriteBatch};

use super::index::Table;
use super::keys;
use super::load::Entries;
use super::schema::Tables;
use super::tuples::{encode_at, Row};
use crate::error::{BenchError, Result};
use crate::kv_runner::StorageBase;

/// A store key: the table's tag and its `u64` key big-endian.
type Key = [u8; 9];

/// Puts per batch of the load.
pub(crate) const LOAD_BATCH: usize = 4096;

fn key_of(table: Table, key: u64) -> Key {
    let mut k = [0u8; 9];
    k[0] = table as u8;
    k[1..].copy_from_slice(&key.to_be_bytes());
    k
}

/// The `u64` key of a store key of `table`'s range, `None` for another table's or a key of
/// another length.
fn key_from(table: Table, bytes: &[u8]) -> Option<u64> {
    match bytes.split_first() {
        Some((&tag, rest)) if tag == table as u8 => Some(u64::from_be_bytes(rest.try_into().ok()?)),
        _ => None,
    }
}

/// The primary key an entry of `table` under `key` locates: a secondary entry's is in its
/// key, a tuple's is its key.
fn primary_of(table: Table, key: u64) -> u64 {
    match table {
        Table::CustomerName => keys::customer_of_name(key),
        Table::OrderCustomer => keys::order_of_customer(key),
        _ => key,
    }
}

/// Creates a store of `engine` with `options` in the directory of `storage` (one
/// [`StorageBase::fresh`] made with a directory), its block files on `storage` so that their
/// I/O is counted; a `log` store has no block files: its records are its log, in the
/// directory. Returns the store and its directory.
pub(crate) fn create_store(
    engine: Engine,
    storage: &Arc<Storage>,
    options: &StoreOptions,
) -> Result<(Store, PathBuf)> {
    let dir = storage
        .dir()
        .ok_or_else(|| BenchError::BadSpec {
            what: "tpcc store",
            got: "storage without a directory".to_string(),
            expected: "a directory for the store's log and manifest".to_string(),
        })?
        .to_path_buf();
    let create = CreateOptions {
        engine,
        block_size: storage.block_size(),
        key_format: KeyFormat::Bytes,
        ..CreateOptions::default()
    };
    let store = match engine {
        Engine::Log(_) => Store::create(&dir, &create, options)?,
        _ => Store::create_on(&dir, Arc::clone(storage), &create, options)?,
    };
    Ok((store, dir))
}

/// One TPC-C database's store and the writes of the transaction running on it.
pub(crate) struct StoreTuples {
    /// `None` only while [`StoreTuples::reopen`] closes and opens it.
    store: Option<Store>,
    storage: Arc<Storage>,
    dir: PathBuf,
    engine: Engine,
    options: StoreOptions,
    base: StorageBase,
    /// The running transaction's writes, in order, one per key: a value or a delete.
    pending: Vec<(Key, Option<Vec<u8>>)>,
    /// Bytes of the write batches committed since the store was created.
    batch_bytes: u64,
    /// The run's label, for errors.
    label: String,
}

impl StoreTuples {
    /// Creates a store of `engine` with `fsync` in a fresh directory under `base`, loads
    /// every tuple of `t` and every entry of `entries` (per [`Table`] slot, `(key, tuple
    /// id)`), compacts it, and reopens it.
    pub(crate) fn create(
        engine: Engine,
        fsync: FsyncPolicy,
        base: &StorageBase,
        t: &Tables,
        mut entries: Entries,
        label: &str,
    ) -> Result<StoreTuples> {
        let defaults = StoreOptions::default();
        // The storage carries the store's page cache: the store's default size.
        let base = StorageBase {
            cache_blocks: defaults.cache_bytes / base.block_size,
            ..base.clone()
        };
        let storage = base.fresh("tpcc.store", true)?;
        let options = StoreOptions { fsync, ..defaults };
        let (store, dir) = create_store(engine, &storage, &options)?;
        let mut s = StoreTuples {
            store: Some(store),
            storage,
            dir,
            engine,
            options,
            base,
            pending: Vec::new(),
            batch_bytes: 0,
            label: label.to_string(),
        };
        let loaded = s.load(t, &mut entries);
        let reopened = loaded.and_then(|()| s.reopen());
        if let Err(e) = reopened {
            // The store was made for this run: remove it, then say why it failed (the load's
            // error, which says what to do, even when the removal fails too).
            let _ = s.remove();
            return Err(e);
        }
        Ok(s)
    }

    /// Writes every table's entries in key order, then compacts.
    fn load(&mut self, t: &Tables, entries: &mut Entries) -> Result<()> {
        let store = self.store()?;
        let mut batch = WriteBatch::new();
        let mut value = Vec::new();
        for (&table, entries) in Table::ALL.iter().zip(entries.iter_mut()) {
            entries.sort_unstable();
            for &(key, tid) in entries.iter() {
                value.clear();
                let is_tuple = encode_at(t, table, tid, &mut value).is_some();
                if !is_tuple && !matches!(table, Table::CustomerName | Table::OrderCustomer) {
                    return Err(BenchError::WrongResult {
                        index: self.label.clone(),
                        op: "load",
                        key,
                        what: format!("{} entry of a tuple the load did not make", table.name()),
                    });
                }
                batch.put(&key_of(table, key), &value)?;
                if batch.len() == LOAD_BATCH {
                    store.write(&batch)?;
                    batch = WriteBatch::new();
                }
            }
        }
        if !batch.is_empty() {
            store.write(&batch)?;
        }
        Ok(store.compact()?)
    }

    fn store(&self) -> Result<&Store> {
        self.store.as_ref().ok_or_else(|| BenchError::BadSpec {
            what: "tpcc store",
            got: format!("{}: a store a failed reopen closed", self.label),
            expected: "an open store".to_string(),
        })
    }

    /// Closes the store and opens it again: everything committed must be there.
    pub(crate) fn reopen(&mut self) -> Result<()> {
        if let Some(store) = self.store.take() {
            store.close()?;
        }
        // The store a user opens starts with an empty cache; the storage's would still hold
        // the blocks the load wrote.
        self.storage.drop_cached_blocks();
        self.store = Some(match self.engine {
            Engine::Log(_) => Store::open(&self.dir, &self.options)?,
            _ => Store::open_on(&self.dir, Arc::clone(&self.storage), &self.options)?,
        });
        Ok(())
    }

    /// The tuple of `R`'s table under `key`, the transaction's pending writes first.
    pub(crate) fn get<R: Row>(&self, key: u64) -> Result<Option<R>> {
        let k = key_of(R::TABLE, key);
        let bytes = match self.pending.iter().find(|(p, _)| *p == k) {
            Some((_, value)) => value.clone(),
            None => self.store()?.get(&k)?,
        };
        bytes.map(|b| self.decode::<R>(key, &b)).transpose()
    }

    fn decode<R: Row>(&self, key: u64, bytes: &[u8]) -> Result<R> {
        R::decode(bytes).ok_or_else(|| BenchError::WrongResult {
            index: self.label.clone(),
            op: "get",
            key,
            what: format!(
                "{} bytes that are no {} tuple",
                bytes.len(),
                R::TABLE.name()
            ),
        })
    }

    fn stage(&mut self, k: Key, value: Option<Vec<u8>>) {
        match self.pending.iter_mut().find(|(p, _)| *p == k) {
            Some(slot) => slot.1 = value,
            None => self.pending.push((k, value)),
        }
    }

    /// Writes `row` under `key` of its table when the transaction commits.
    pub(crate) fn put<R: Row>(&mut self, key: u64, row: &R) {
        let mut value = Vec::new();
        row.encode(&mut value);
        self.stage(key_of(R::TABLE, key), Some(value));
    }

    /// Adds the secondary index `index`'s entry `key` when the transaction commits.
    pub(crate) fn link(&mut self, index: Table, key: u64) {
        self.stage(key_of(index, key), Some(Vec::new()));
    }

    /// Deletes `key` of `table` when the transaction commits.
    pub(crate) fn delete(&mut self, table: Table, key: u64) {
        self.stage(key_of(table, key), None);
    }

    /// Drops the transaction's pending writes: a transaction that rolls back writes nothing.
    pub(crate) fn abort(&mut self) {
        self.pending.clear();
    }

    /// A digest of every entry the store holds, in key order: equal before a close and after
    /// the reopen when nothing acknowledged was lost (the consistency conditions alone hold
    /// in any state whole transactions reach, the loaded one included).
    pub(crate) fn fingerprint(&self) -> Result<u64> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for entry in self.store()?.range(..) {
            let (k, v) = entry?;
            std::hash::Hash::hash(&(k, v), &mut hasher);
        }
        Ok(std::hash::Hasher::finish(&hasher))
    }

    /// Writes the transaction's writes as one batch.
    pub(crate) fn commit(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut batch = WriteBatch::new();
        for (k, value) in self.pending.drain(..) {
            match value {
                Some(v) => batch.put(&k, &v)?,
                None => batch.delete(&k)?,
            };
        }
        self.batch_bytes += batch.encoded_bytes() as u64;
        Ok(self.store()?.write(&batch)?)
    }

    /// Calls `each` with up to `limit` committed entries of `table` with keys in `lo..hi`,
    /// in key order, as (key, value).
    fn scan(
        &self,
        table: Table,
        (lo, hi): (u64, u64),
        limit: usize,
        mut each: impl FnMut(u64, Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        if lo >= hi {
            return Ok(());
        }
        let (lo_k, hi_k) = (key_of(table, lo), key_of(table, hi));
        let mut range = self.store()?.range(&lo_k[..]..&hi_k[..]);
        for _ in 0..limit {
            let Some((k, value)) = range.next_entry()? else {
                break;
            };
            let key = key_from(table, &k).ok_or_else(|| BenchError::WrongResult {
                index: self.label.clone(),
                op: "scan",
                key: lo,
                what: format!("a key of {} bytes in {}'s range", k.len(), table.name()),
            })?;
            each(key, value)?;
        }
        Ok(())
    }

    /// Up to `limit` entries of `table` with keys in `bounds` (half-open) as (key, primary
    /// key), into `out` (cleared first).
    pub(crate) fn range(
        &self,
        table: Table,
        bounds: (u64, u64),
        limit: usize,
        out: &mut Vec<(u64, u64)>,
    ) -> Result<()> {
        out.clear();
        self.scan(table, bounds, limit, |key, _| {
            out.push((key, primary_of(table, key)));
            Ok(())
        })
    }

    /// Up to `limit` tuples of `R`'s table with keys in `bounds` (half-open) as (key, key,
    /// row), into `out`.
    pub(crate) fn rows<R: Row>(
        &self,
        bounds: (u64, u64),
        limit: usize,
        out: &mut Vec<(u64, u64, R)>,
    ) -> Result<()> {
        self.scan(R::TABLE, bounds, limit, |key, value| {
            out.push((key, key, self.decode::<R>(key, &value)?));
            Ok(())
        })
    }

    /// The I/O of the store's block files so far.
    pub(crate) fn io(&self) -> IoStats {
        self.storage.stats()
    }

    /// Bytes of memory and of files (block files and log) of the store.
    pub(crate) fn space(&self) -> Result<(u64, u64)> {
        let stats = self.store()?.stats();
        Ok((
            stats.memory_bytes as u64,
            stats.table_disk_bytes + stats.log_disk_bytes,
        ))
    }

    /// Merges (or checkpoints, or compactions), nanoseconds of them, nanoseconds writes
    /// stalled, and bytes of committed write batches, since the store was opened (the bytes
    /// since it was created).
    pub(crate) fn counters(&self) -> Result<[u64; 4]> {
        let stats = self.store()?.stats();
        Ok([
            stats.merges,
            (stats.merge_seconds * 1e9) as u64,
            (stats.stall_seconds * 1e9) as u64,
            self.batch_bytes,
        ])
    }

    /// Waits for the store's background merges.
    pub(crate) fn drain(&self) -> Result<()> {
        Ok(self.store()?.wait_for_merges()?)
    }

    /// The base of the store's storage.
    pub(crate) fn base(&self) -> &StorageBase {
        &self.base
    }

    /// Closes the store and removes the directory [`StoreTuples::create`] made.
    pub(crate) fn remove(&mut self) -> Result<()> {
        let closed = self.store.take().map_or(Ok(()), Store::close);
        self.base.clean(&self.storage)?;
        Ok(closed?)
    }
}
