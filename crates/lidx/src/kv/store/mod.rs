//! [`Store`]: a durable, ordered map from byte-string keys to byte-string values, in a
//! directory, behind one API whatever engine serves it.
//!
//! ```no_run
//! use lidx::kv::store::{CreateOptions, Store, StoreOptions, WriteBatch};
//! # fn main() -> lidx::Result<()> {
//! let store = Store::create("/tmp/words".as_ref(), &CreateOptions::default(), &StoreOptions::default())?;
//! store.put(b"apple", b"3")?;
//! let mut batch = WriteBatch::new();
//! batch.put(b"pear", b"5")?.delete(b"apple")?;
//! store.write(&batch)?; // all of it or none of it, after a crash too
//! let snapshot = store.snapshot();
//! for entry in store.range(b"a".as_slice()..b"q".as_slice()) {
//!     let (key, value) = entry?;
//!     println!("{key:?} = {value:?}");
//! }
//! assert_eq!(snapshot.get(b"pear")?, Some(b"5".to_vec()));
//! store.close()?;
//! # Ok(()) }
//! ```
//!
//! # Keys, values and where they live
//!
//! Keys are 1 to [`MAX_KEY_BYTES`] (4 KiB) bytes, ordered byte-wise; values 0 to
//! [`MAX_VALUE_BYTES`] (16 MiB). Anything else is [`crate::Error::SizeLimit`], refused before
//! it is logged. Values live **inline, next to their keys**: in the dynamic stage in memory,
//! and in the table's record stream on disk, where a record longer than what is left of a
//! block runs on into the next blocks ([`crate::disk::byte_table`]). So a lookup of a small
//! record reads one block, and a 1 MiB value is one more sequential request of 256 blocks.
//! We chose this over a separate value log (WiscKey) because the engine's merge rewrites the
//! table anyway and a value log would add a second read to every lookup and its own garbage
//! collection; the cost is that a merge copies large values again, which the benchmarks in the
//! README measure (`lidx kv load` rate and bytes per key).
//!
//! Typed keys (`u64`, `u32`, `i64`, `f64`, [`crate::key::Str16`]) are stored through an
//! order-preserving encoding ([`OrderedKey`]), so their ranges come out in their own order.
//!
//! # Engines
//!
//! [`Engine::Hybrid`] is paper 002 §9's hybrid index (see [`crate::kv::hybrid`] for the paper
//! and the merge protocol) over byte keys: writes go to the write-ahead log, then to a
//! dynamic stage in memory; a merge folds it into one static table whose blocks are located by
//! a learned model over the keys of any length ([`crate::disk::byte_table`]). The engine is
//! recorded in the store's `STORE` file; other engines plug in behind the same `Store`.
//!
//! # Durability, batches and snapshots
//!
//! Every write is one log record appended (group commit, [`StoreOptions::fsync`]) before it is
//! applied; a [`WriteBatch`] is one record, so after a crash it is there whole or not at all.
//! [`Store::snapshot`] pins the stages and a sequence number; its reads do not change while
//! writes and merges go on. Plain reads see every acknowledged write.
//!
//! # The directory
//!
//! `STORE` (identity: engine, block size, model, key format; checked on open, a newer format
//! version is refused), `LOCK` (held by the one writer, or shared by readers: a second writer
//! gets [`crate::Error::Locked`]), `CURRENT` and `MANIFEST-*` ([`crate::kv::manifest`]), `wal/`
//! ([`crate::kv::wal`]) and the live `table-*.lbt`.

mod batch;
mod check;
mod dir;
mod engine;
mod memtable;
mod options;
mod ordered;
mod read;

use std::ops::RangeBounds;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::kv::wal::Record;

pub use batch::{BatchOp, WriteBatch};
pub use check::{CheckReport, Damage};
pub use dir::{decode_identity, LOCK_FILE, STORE_FILE, STORE_MAGIC, STORE_VERSION};
pub use options::{
    CreateOptions, Engine, KeyFormat, StoreOptions, MAX_KEY_BYTES, MAX_VALUE_BYTES, MIN_KEY_BYTES,
};
pub use ordered::OrderedKey;
pub use read::{Entry, Range, Snapshot};

/// A store; see the [module docs](self). `Send + Sync`: share it between threads by
/// reference or in an `Arc`; every method takes `&self` except [`Store::close`].
pub struct Store {
    engine: engine::Engine,
}

/// What a store holds and has done since it was opened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreStats {
    /// The engine's name.
    pub engine: &'static str,
    /// Keys in the dynamic stages (live and frozen), tombstones included.
    pub dynamic_keys: usize,
    /// Bytes of memory of the dynamic stages.
    pub dynamic_bytes: usize,
    /// Records in the table on disk.
    pub table_records: u64,
    /// Key bytes in the table.
    pub table_key_bytes: u64,
    /// Value bytes in the table.
    pub table_value_bytes: u64,
    /// Bytes of memory of the table's model and separators.
    pub model_bytes: usize,
    /// Bytes of the page cache over table files.
    pub cache_bytes: usize,
    /// All memory above: dynamic stages, model, cache.
    pub memory_bytes: usize,
    /// Bytes of the table file.
    pub table_disk_bytes: u64,
    /// Bytes of the write-ahead log.
    pub log_disk_bytes: u64,
    /// Merges completed since open.
    pub merges: u64,
    /// Seconds spent merging.
    pub merge_seconds: f64,
    /// Writes that waited for a merge.
    pub write_stalls: u64,
    /// Seconds writers waited.
    pub stall_seconds: f64,
    /// Log records replayed at open.
    pub recovered_records: u64,
}

impl Store {
    /// Creates a store in `dir`, which must not exist or be empty, and opens it.
    pub fn create(dir: &Path, create: &CreateOptions, options: &StoreOptions) -> Result<Store> {
        Ok(Store {
            engine: engine::Engine::create(dir, create, options, None)?,
        })
    }

    /// [`Store::create`] with the table files on `storage` (a simulated device, for
    /// benchmarks) instead of files the options open in `dir`; the log and manifest stay in
    /// `dir`. `storage`'s block size must be `create.block_size`.
    #[doc(hidden)]
    pub fn create_on(
        dir: &Path,
        storage: std::sync::Arc<crate::io::Storage>,
        create: &CreateOptions,
        options: &StoreOptions,
    ) -> Result<Store> {
        Ok(Store {
            engine: engine::Engine::create(dir, create, options, Some(storage))?,
        })
    }

    /// Opens the store in `dir`, recovering every acknowledged write. Not a store
    /// ([`crate::Error::NotAStore`]), a newer format, damage, or a second writer are typed
    /// errors.
    pub fn open(dir: &Path, options: &StoreOptions) -> Result<Store> {
        Ok(Store {
            engine: engine::Engine::open(dir, options, None)?,
        })
    }

    /// Checks the store in `dir` without opening it for writing: every table block and
    /// record (each found through the model), every log record. Damage goes in the report.
    pub fn check(dir: &Path) -> Result<CheckReport> {
        check::check_dir(dir)
    }

    /// What the store was created with.
    pub fn identity(&self) -> CreateOptions {
        self.engine.inner.identity
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.engine.inner.dir
    }

    /// The value of `key`, `None` when absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        read::get_at(&self.engine.inner.current(), key, u64::MAX)
    }

    /// Sets `key` to `value`; returns once the write is acknowledged (see
    /// [`StoreOptions::fsync`]).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        batch::check_sizes(key, Some(value))?;
        self.engine.inner.write(Record::Put { key, value })
    }

    /// Removes `key` (absent keys too: a delete is logged either way).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        batch::check_sizes(key, None)?;
        self.engine.inner.write(Record::Delete { key })
    }

    /// Applies a batch: all of it, or after a crash none of it. An empty batch does nothing.
    pub fn write(&self, batch: &WriteBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.engine.inner.write(Record::Batch {
            ops: batch.encoded(),
        })
    }

    /// A read view that stays as it is now while writes and merges go on.
    pub fn snapshot(&self) -> Snapshot {
        let (version, seq) = self.engine.inner.take_snapshot();
        Snapshot {
            inner: std::sync::Arc::clone(&self.engine.inner),
            version,
            seq,
        }
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
        match self.engine.inner.wal_handle() {
            Some(wal) => wal.sync().map(|_| ()),
            None => Ok(()),
        }
    }

    /// Merges everything written so far into the table on disk and waits for it.
    pub fn compact(&self) -> Result<()> {
        self.engine.inner.compact()
    }

    /// Waits until no merge is running or pending (without starting one) and returns the
    /// error a background merge met, if any: benchmarks time the drain of merge work.
    #[doc(hidden)]
    pub fn wait_for_merges(&self) -> Result<()> {
        self.engine.inner.wait_merges()
    }

    /// Memory, disk bytes, merges and stalls now.
    pub fn stats(&self) -> StoreStats {
        let inner = &self.engine.inner;
        let v = inner.current();
        let (mut dynamic_keys, mut dynamic_bytes) = (0, 0);
        for stage in std::iter::once(&v.mem).chain(&v.frozen) {
            let s = stage.read();
            dynamic_keys += s.len();
            dynamic_bytes += s.memory_bytes();
        }
        let table = v.table.as_ref().map(|t| &t.table);
        let model_bytes = table.map_or(0, |t| t.memory_bytes());
        let cache_bytes = inner.storage.cache_blocks() * inner.storage.block_size();
        StoreStats {
            engine: inner.identity.engine.name(),
            dynamic_keys,
            dynamic_bytes,
            table_records: table.map_or(0, |t| t.len()),
            table_key_bytes: table.map_or(0, |t| t.header().key_bytes),
            table_value_bytes: table.map_or(0, |t| t.header().value_bytes),
            model_bytes,
            cache_bytes,
            memory_bytes: dynamic_bytes + model_bytes + cache_bytes,
            table_disk_bytes: table.map_or(0, |t| t.disk_bytes()),
            log_disk_bytes: inner.log_bytes(),
            merges: inner.merges.load(Ordering::Relaxed),
            merge_seconds: inner.merge_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            write_stalls: inner.write_stalls.load(Ordering::Relaxed),
            stall_seconds: inner.stall_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            recovered_records: inner.recovered_records,
        }
    }

    /// Waits for a running merge, syncs the log and closes the store, returning any error a
    /// background merge met. Dropping a store does the same but cannot report errors.
    pub fn close(self) -> Result<()> {
        self.engine.close()
    }
}
