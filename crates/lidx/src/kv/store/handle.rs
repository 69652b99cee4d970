//! [`Store`]: the handle an embedder holds, the same whatever engine serves the store. It
//! holds its engine behind [`StoreEngine`] and the store's lock, and [`Store::start`] is the
//! one place that names every engine: a new engine is one more arm there and a folder of its
//! own (see the [module docs](super)).

use std::ops::RangeBounds;
use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::io::Storage;
use crate::kv::flock::FileLock;
use crate::kv::wal::{Dropped, Record};

use super::batch::{check_sizes, BatchOp, WriteBatch};
use super::btree::BTreeEngine;
use super::check::{check_dir, CheckReport};
use super::dir::read_identity;
use super::engine::StoreEngine;
use super::hybrid::HybridEngine;
use super::log::LogEngine;
use super::lsm::LsmEngine;
use super::open::{self, Recover};
use super::options::{CreateOptions, Engine, StoreOptions};
use super::row_cache::RowCache;
use super::stats::StoreStats;
use super::view::{Range, Snapshot};

/// A store; see the module docs. `Send + Sync`: share it between threads by
/// reference or in an `Arc`; every method takes `&self` except [`Store::close`].
pub struct Store {
    /// Declared before the lock: dropped first, so the lock is held until the engine has
    /// stopped.
    engine: Box<dyn StoreEngine>,
    /// The record cache in front of the engine ([`StoreOptions::row_cache_bytes`]).
    rows: Option<RowCache>,
    _lock: FileLock,
}

impl Store {
    /// Creates a store in `dir`, which must not exist or be empty, and opens it.
    pub fn create(dir: &Path, create: &CreateOptions, options: &StoreOptions) -> Result<Store> {
        Store::start(dir, None, Some(create), options)
    }

    /// [`Store::create`] with the block files on `storage` (a simulated device, for
    /// benchmarks) instead of files the options open in `dir`; the log and manifest stay in
    /// `dir`. `storage`'s block size must be `create.block_size`.
    #[doc(hidden)]
    pub fn create_on(
        dir: &Path,
        storage: Arc<Storage>,
        create: &CreateOptions,
        options: &StoreOptions,
    ) -> Result<Store> {
        Store::start(dir, Some(storage), Some(create), options)
    }

    /// Opens the store in `dir`, recovering every acknowledged write. Not a store
    /// ([`crate::Error::NotAStore`]), a newer format, damage, or a second writer are typed
    /// errors.
    pub fn open(dir: &Path, options: &StoreOptions) -> Result<Store> {
        Store::start(dir, None, None, options)
    }

    /// [`Store::open`] of a store made by [`Store::create_on`], its block files on `storage`.
    #[doc(hidden)]
    pub fn open_on(dir: &Path, storage: Arc<Storage>, options: &StoreOptions) -> Result<Store> {
        Store::start(dir, Some(storage), None, options)
    }

    /// Creates (`create` given) or opens the store in `dir` with the engine its identity
    /// names: the one place that knows every engine.
    fn start(
        dir: &Path,
        storage: Option<Arc<Storage>>,
        create: Option<&CreateOptions>,
        options: &StoreOptions,
    ) -> Result<Store> {
        let engine = match create {
            Some(create) => create.engine,
            None => read_identity(dir)?.0.engine,
        };
        match engine {
            Engine::Hybrid => Store::start_as::<HybridEngine>(dir, storage, create, options),
            Engine::BTree => Store::start_as::<BTreeEngine>(dir, storage, create, options),
            Engine::Lsm(_) => Store::start_as::<LsmEngine>(dir, storage, create, options),
            Engine::Log(_) if storage.is_some() => Err(log_has_no_block_files()),
            Engine::Log(_) => Store::start_as::<LogEngine>(dir, None, create, options),
        }
    }

    /// [`Store::start`] with the engine `E`, through the one open protocol ([`open`]).
    fn start_as<E: Recover + StoreEngine + 'static>(
        dir: &Path,
        storage: Option<Arc<Storage>>,
        create: Option<&CreateOptions>,
        options: &StoreOptions,
    ) -> Result<Store> {
        let (engine, lock) = match create {
            Some(create) => open::create::<E>(dir, create, options, storage)?,
            None => open::open::<E>(dir, options, storage, None)?,
        };
        Ok(Store {
            engine: Box::new(engine),
            rows: RowCache::new(options.row_cache_bytes),
            _lock: lock,
        })
    }

    /// Checks the store in `dir` without opening it for writing: every block and record
    /// (each found through the model or the inner nodes), every log record, every file's
    /// owner and identity. Damage (a missing or foreign file too) goes in the report, and
    /// so do files the store does not name ([`CheckReport::unknown`]).
    pub fn check(dir: &Path) -> Result<CheckReport> {
        check_dir(dir)
    }

    /// What the store was created with.
    pub fn identity(&self) -> CreateOptions {
        self.engine.base().identity
    }

    /// What this open cut of a damaged log (see [`StoreOptions::recovery`]); `None` when the
    /// log was whole. A read-only open cuts nothing and reports what it skipped.
    pub fn recovery(&self) -> Option<&Dropped> {
        self.engine.base().dropped.as_ref()
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.engine.base().dir
    }

    /// The value of `key`, `None` when absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(rows) = &self.rows else {
            return self.engine.get(key);
        };
        if let Some(value) = rows.get(key) {
            return Ok(Some(value));
        }
        let ticket = rows.ticket(key);
        let value = self.engine.get(key)?;
        if let (Some(value), Some(ticket)) = (&value, ticket) {
            rows.fill(key, value, ticket);
        }
        Ok(value)
    }

    /// Writes `record`, whose operations are `ops`, and brings the record cache up to it
    /// (see [`super::row_cache`]), whether or not the write failed part way.
    fn write_record(&self, record: Record<'_>, ops: &[BatchOp<'_>]) -> Result<()> {
        let Some(rows) = &self.rows else {
            return self.engine.write(record);
        };
        let writing = rows.begin(ops);
        let written = self.engine.write(record);
        writing.end(written.is_ok());
        written
    }

    /// Sets `key` to `value`; returns once the write is acknowledged (see
    /// [`StoreOptions::fsync`]).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        check_sizes(key, Some(value))?;
        self.write_record(Record::Put { key, value }, &[BatchOp::Put(key, value)])
    }

    /// Removes `key` (absent keys too: a delete is logged either way).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        check_sizes(key, None)?;
        self.write_record(Record::Delete { key }, &[BatchOp::Delete(key)])
    }

    /// Applies a batch: all of it, or after a crash none of it. An empty batch does nothing.
    pub fn write(&self, batch: &WriteBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let ops: Vec<BatchOp<'_>> = match &self.rows {
            Some(_) => batch.ops().collect(),
            None => Vec::new(),
        };
        self.write_record(
            Record::Batch {
                ops: batch.encoded(),
            },
            &ops,
        )
    }

    /// A read view that stays as it is now while writes and merges go on.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.engine.snapshot())
    }

    /// The entries within `bounds`, ascending, as of now (a snapshot taken for it).
    pub fn range<'k>(&self, bounds: impl RangeBounds<&'k [u8]>) -> Range {
        self.snapshot().range(bounds)
    }

    /// The entries within `bounds`, descending, as of now.
    pub fn range_rev<'k>(&self, bounds: impl RangeBounds<&'k [u8]>) -> Range {
        self.snapshot().range_rev(bounds)
    }

    /// Makes every acknowledged write durable, whatever the fsync policy.
    pub fn sync(&self) -> Result<()> {
        self.engine.base().sync()
    }

    /// Folds everything written so far into the store's files and waits for it: a merge of
    /// the dynamic stage into the table (`hybrid`), a checkpoint (`btree`), a flush of the
    /// memtable and the compactions it makes due (`lsm`); the log is empty after it. A `log`
    /// store collects its emptiest segments and checkpoints its map.
    pub fn compact(&self) -> Result<()> {
        self.engine.compact()
    }

    /// Waits until no merge is running or pending (without starting one) and returns the
    /// error a background merge met, if any: benchmarks time the drain of merge work. The
    /// `btree` engine does its checkpoints in the writer that triggers them: nothing to wait
    /// for.
    #[doc(hidden)]
    pub fn wait_for_merges(&self) -> Result<()> {
        self.engine.wait_for_merges()
    }

    /// Memory, disk bytes, merges and stalls now.
    pub fn stats(&self) -> StoreStats {
        let stats = self.engine.stats();
        let (row_cache_bytes, row_cache_records) =
            self.rows.as_ref().map_or((0, 0), RowCache::usage);
        StoreStats {
            row_cache_bytes,
            row_cache_records,
            memory_bytes: stats.memory_bytes + row_cache_bytes,
            ..stats
        }
    }

    /// Finishes background work (a running merge) or checkpoints (`btree`), syncs the log
    /// and closes the store, returning any error met. Dropping a store stops it too but cannot
    /// report errors, and leaves more log to replay at the next open.
    pub fn close(self) -> Result<()> {
        self.engine.close()
    }
}

/// A `log` store was asked to put its block files on a given storage: it has none.
fn log_has_no_block_files() -> crate::Error {
    crate::Error::InvalidParameter {
        name: "storage",
        value: "a storage for block files".into(),
        expected: "none for a log store: its records are in its log (open it with Store::open)",
    }
}
