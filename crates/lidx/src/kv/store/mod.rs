//! [`Store`]: a durable, ordered map from byte-string keys to byte-string values, in a
//! directory, behind one API whatever engine serves it.
//!
//! ```no_run
//! use lidx::kv::{CreateOptions, Store, StoreOptions, WriteBatch};
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
//! it is logged. Where values live depends on the engine and the record's size:
//!
//! * `hybrid`: **inline, next to their keys**, in the dynamic stage in memory and in the
//!   table's record stream on disk, where a record longer than what is left of a block runs
//!   on into the next blocks ([`crate::disk::byte_table`]). A lookup of a small record reads
//!   one block; a 1 MiB value is one more sequential request of 256 blocks. A separate value
//!   log (WiscKey) would add a second read to every lookup and a garbage collector of its
//!   own. What decided it, and where it stops holding (`lidx ycsb --store btree,hybrid
//!   --dataset gen:lognormal:400K --payload-size <n> --workload read-only,write-only --ops
//!   30K`, sim:nvme, 300K records, equal memory): with 8-byte values the hybrid reads one
//!   block per lookup (0.99x the B+-tree) and writes 11.9x as fast; with 1000-byte values it
//!   still reads one block per lookup (1.005x; before records were kept from straddling a
//!   block boundary, one in four did: 1.24 blocks, 0.81x) but writes at 0.48x, every merge
//!   rewriting 300 MB of values for the ~1,300 writes the budget holds (57 blocks merged per
//!   write). So inline is right for small values and wrong for large ones under writes;
//!   values above a size belong in a value log, which this engine does not have yet (see the
//!   README's limitations).
//! * `btree`: **by size**. A record of up to half a leaf (key and value together: about
//!   2 KiB with 4 KiB blocks) is inline in its leaf, so a lookup reads one block; a larger
//!   one goes to an overflow run of its own blocks, and its leaf keeps a reference and the
//!   key's first 64 bytes ([`crate::disk::byte_btree`]). Half keeps two records or more in
//!   every leaf, so a split always has room; an update of a large value rewrites its run and
//!   one leaf, not the neighbours' values. A quarter (the first choice) sent 1 KiB values to
//!   a block each: 3,605 bytes on disk per record of a 1000-byte value (1M records), 2,396
//!   with half.
//!
//! Typed keys (`u64`, `u32`, `i64`, `f64`, [`crate::key::Str16`]) are stored through an
//! order-preserving encoding ([`OrderedKey`]), so their ranges come out in their own order.
//!
//! # Engines
//!
//! [`Engine::Hybrid`] (the default) is paper 002 §9's hybrid index (see [`crate::kv::hybrid`]
//! for the paper and the merge protocol) over byte keys: writes go to the write-ahead log,
//! then to a dynamic stage in memory; a merge folds it into one static table whose blocks are
//! located by a learned model over the keys of any length ([`crate::disk::byte_table`]).
//!
//! [`Engine::BTree`] is the disk B+-tree it is measured against, at the same durability:
//! every inner node in memory, one leaf read per lookup, one leaf read and written per
//! insert, written copy-on-write and made durable by the same log with checkpoints
//! ([`crate::disk::byte_btree`]; the engine's protocol is in `btree.rs`).
//!
//! [`Engine::Log`] is paper 001 §III's end-to-end setting (Viper): records appended to the log
//! and never moved, an updatable in-memory map chosen by name ([`crate::mem::MapSpec`]) from
//! each 8-byte key to its newest operation (`log:trie:<map>`: keys of any length, the map a
//! [`crate::mem::TrieMap`] of such maps); reads come from the memory-mapped log, snapshots
//! follow each key's chain of operations back, and reopening rebuilds the map from the log
//! (the engine's protocol and its limits are in `log.rs`).
//!
//! The engine is recorded in the store's `STORE` file, and [`Store::open`] picks it from
//! there; another engine plugs in as one more variant behind the same `Store`, [`Snapshot`]
//! and [`Range`].
//!
//! # Durability, batches and snapshots
//!
//! Every write is one log record appended ([`StoreOptions::fsync`]) before it is applied; a
//! [`WriteBatch`] is one record, so after a crash it is there whole or not at all. The hybrid
//! engine's writers share group commits; the btree engine's writers take turns for the log
//! append and the tree update together (its log order is its tree order), so with
//! `fsync: Always` each of its writes waits for its own `fdatasync`. [`Store::snapshot`] pins
//! the stages (or the tree's root) and a sequence number; its reads do not change while
//! writes, merges and checkpoints go on. Plain reads see every acknowledged write, and never a
//! write a snapshot taken after them would not see: a version applied but not yet published
//! (its writer waiting for an earlier one) is waited for, not returned early.
//!
//! # When the device fails
//!
//! A failed write or sync of a block file, of the log or of a manifest commit is a typed
//! error, and no acknowledged write is lost (`tests/store_faults.rs` strikes every kind of
//! fault at many points of each):
//! a block file's failure leaves the write in the log, and a log that failed refuses every
//! later append (see [`crate::kv::wal`]), so nothing is acknowledged that it may not hold.
//! The hybrid engine keeps a failed merge's error: writes go on into the dynamic stage until
//! it fills, then every write gets the error, even once the device works again (the merge is
//! not retried); reopening the store recovers from the log. The btree engine refuses every
//! write after a page write of an update failed (part of the update may be in the tree); a
//! failed checkpoint leaves the previous one in force and is tried again at the next write. A
//! write that met the fault
//! returns the error and is there whole or not at all after a reopen. What is not covered: a
//! power loss that forgets unsynced block-file writes (`lidx kv torture --power-loss` drops the
//! log's unsynced end).
//!
//! # The directory
//!
//! `STORE` (identity: engine, block size, model, key format and the store's random id;
//! checked on open, another format version is refused), `LOCK` (held by the one writer, or
//! shared by readers: a second writer gets [`crate::Error::Locked`]; a reader opens it for
//! reading only, so a store on read-only media opens read-only), `CURRENT` and `MANIFEST-*`
//! ([`crate::kv::manifest`]), `wal/` ([`crate::kv::wal`]), and the engine's block files: the
//! live `table-*.lbt` (`hybrid`), or `pages.lbp` and the last checkpoint's `inner-*.lbi`
//! (`btree`); a `log` store has none (its log is its data).
//!
//! Every file is bound to its store and generation (issue 30): the store's id is in every
//! table's, image's, page file's and log segment's header, with the file's generation, and the
//! manifest records each live file's identity (generation, size, crc32c of its first block).
//! A file copied from another store, or an older copy of the store's own put back, is
//! refused by open and by [`Store::check`] with [`crate::Error::ForeignFile`] naming it (the
//! layouts are in `dir`'s module docs).

mod batch;
#[cfg(test)]
mod binding_tests;
mod btree;
mod check;
mod dir;
mod hybrid;
mod hybrid_read;
mod log;
mod log_map;
mod log_read;
mod log_record;
mod memtable;
mod options;
mod ordered;
mod view;

use std::ops::RangeBounds;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::Result;
use crate::io::Storage;
use crate::kv::wal::{Dropped, Record};

pub use batch::{BatchOp, WriteBatch};
pub use check::{CheckReport, Damage, TornSlot};
pub use dir::{decode_identity, STORE_FILE, STORE_MAGIC, STORE_VERSION};
pub use options::{
    CreateOptions, Engine, KeyFormat, LogKeys, LogSpec, StoreOptions, MAX_KEY_BYTES,
    MAX_MEMORY_BUDGET, MAX_VALUE_BYTES, MIN_KEY_BYTES, MIN_MEMORY_BUDGET,
};
pub use ordered::OrderedKey;
pub use view::{Entry, Range, Snapshot};

use view::SnapshotOf;

/// A store; see the module docs. `Send + Sync`: share it between threads by
/// reference or in an `Arc`; every method takes `&self` except [`Store::close`].
pub struct Store {
    engine: Engines,
}

enum Engines {
    Hybrid(hybrid::Engine),
    BTree(btree::BTreeEngine),
    Log(log::LogEngine),
}

/// What a store holds and has done since it was opened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreStats {
    /// The engine's name.
    pub engine: &'static str,
    /// Keys in the dynamic stages (live and frozen), tombstones included (`hybrid`; 0 for
    /// `btree`, which has none).
    pub dynamic_keys: usize,
    /// Bytes of memory of the dynamic stages.
    pub dynamic_bytes: usize,
    /// Records on disk: in the table (`hybrid`) or the tree (`btree`).
    pub table_records: u64,
    /// Key bytes of those records.
    pub table_key_bytes: u64,
    /// Value bytes of those records.
    pub table_value_bytes: u64,
    /// Bytes of memory of what locates records on disk: the table's model and separators
    /// (`hybrid`), the inner nodes (`btree`).
    pub model_bytes: usize,
    /// Bytes of the page cache over the store's block files.
    pub cache_bytes: usize,
    /// All memory above: dynamic stages, model or inner nodes, cache.
    pub memory_bytes: usize,
    /// Bytes of the block files: the table (`hybrid`), the page file and the checkpoint
    /// image (`btree`).
    pub table_disk_bytes: u64,
    /// Bytes of the block files that are free for reuse (`btree`: blocks of replaced leaves
    /// and runs, reused by later writes; the file does not shrink). 0 for `hybrid`, whose
    /// merges write the table anew.
    pub free_disk_bytes: u64,
    /// Bytes of the write-ahead log.
    pub log_disk_bytes: u64,
    /// Merges (`hybrid`) or checkpoints (`btree`) completed since open.
    pub merges: u64,
    /// Seconds spent in them.
    pub merge_seconds: f64,
    /// Writes that waited for a merge or a checkpoint.
    pub write_stalls: u64,
    /// Seconds writers waited.
    pub stall_seconds: f64,
    /// Log records replayed at open.
    pub recovered_records: u64,
    /// Seconds the open took to recover: read the files, replay the log, and (`log`) rebuild
    /// the map from it (paper 001 Fig. 16's recovery time).
    pub recovery_seconds: f64,
}

impl Store {
    /// Creates a store in `dir`, which must not exist or be empty, and opens it.
    pub fn create(dir: &Path, create: &CreateOptions, options: &StoreOptions) -> Result<Store> {
        Store::create_in(dir, None, create, options)
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
        Store::create_in(dir, Some(storage), create, options)
    }

    fn create_in(
        dir: &Path,
        storage: Option<Arc<Storage>>,
        create: &CreateOptions,
        options: &StoreOptions,
    ) -> Result<Store> {
        let engine = match create.engine {
            Engine::Hybrid => {
                Engines::Hybrid(hybrid::Engine::create(dir, create, options, storage)?)
            }
            Engine::BTree => {
                Engines::BTree(btree::BTreeEngine::create(dir, create, options, storage)?)
            }
            Engine::Log(_) if storage.is_some() => return Err(log_has_no_block_files()),
            Engine::Log(_) => Engines::Log(log::LogEngine::create(dir, create, options)?),
        };
        Ok(Store { engine })
    }

    /// Opens the store in `dir`, recovering every acknowledged write. Not a store
    /// ([`crate::Error::NotAStore`]), a newer format, damage, or a second writer are typed
    /// errors.
    pub fn open(dir: &Path, options: &StoreOptions) -> Result<Store> {
        let engine = match dir::read_identity(dir)?.0.engine {
            Engine::Hybrid => Engines::Hybrid(hybrid::Engine::open(dir, options, None)?),
            Engine::BTree => Engines::BTree(btree::BTreeEngine::open(dir, options, None)?),
            Engine::Log(_) => Engines::Log(log::LogEngine::open(dir, options)?),
        };
        Ok(Store { engine })
    }

    /// [`Store::open`] of a store made by [`Store::create_on`], its block files on `storage`.
    #[doc(hidden)]
    pub fn open_on(dir: &Path, storage: Arc<Storage>, options: &StoreOptions) -> Result<Store> {
        let storage = Some(storage);
        let engine = match dir::read_identity(dir)?.0.engine {
            Engine::Hybrid => Engines::Hybrid(hybrid::Engine::open(dir, options, storage)?),
            Engine::BTree => Engines::BTree(btree::BTreeEngine::open(dir, options, storage)?),
            Engine::Log(_) => return Err(log_has_no_block_files()),
        };
        Ok(Store { engine })
    }

    /// Checks the store in `dir` without opening it for writing: every block and record
    /// (each found through the model or the inner nodes), every log record, every file's
    /// owner and identity. Damage (a missing or foreign file too) goes in the report, and
    /// so do files the store does not name ([`CheckReport::unknown`]).
    pub fn check(dir: &Path) -> Result<CheckReport> {
        check::check_dir(dir)
    }

    /// What the store was created with.
    pub fn identity(&self) -> CreateOptions {
        match &self.engine {
            Engines::Hybrid(e) => e.inner.identity,
            Engines::BTree(e) => e.inner.identity,
            Engines::Log(e) => e.inner.identity,
        }
    }

    /// What this open cut of a damaged log (see [`StoreOptions::recovery`]); `None` when the
    /// log was whole. A read-only open cuts nothing and reports what it skipped.
    pub fn recovery(&self) -> Option<&Dropped> {
        match &self.engine {
            Engines::Hybrid(e) => e.inner.dropped.as_ref(),
            Engines::BTree(e) => e.inner.dropped.as_ref(),
            Engines::Log(e) => e.inner.dropped.as_ref(),
        }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        match &self.engine {
            Engines::Hybrid(e) => &e.inner.dir,
            Engines::BTree(e) => &e.inner.dir,
            Engines::Log(e) => &e.inner.dir,
        }
    }

    /// The value of `key`, `None` when absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match &self.engine {
            Engines::Hybrid(e) => hybrid_read::get_latest(&e.inner, key),
            Engines::BTree(e) => e.inner.get(key),
            Engines::Log(e) => e.inner.get(key),
        }
    }

    fn write_record(&self, record: Record<'_>) -> Result<()> {
        match &self.engine {
            Engines::Hybrid(e) => e.inner.write(record),
            Engines::BTree(e) => e.inner.write(record),
            Engines::Log(e) => e.inner.write(record),
        }
    }

    /// Sets `key` to `value`; returns once the write is acknowledged (see
    /// [`StoreOptions::fsync`]).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        batch::check_sizes(key, Some(value))?;
        self.write_record(Record::Put { key, value })
    }

    /// Removes `key` (absent keys too: a delete is logged either way).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        batch::check_sizes(key, None)?;
        self.write_record(Record::Delete { key })
    }

    /// Applies a batch: all of it, or after a crash none of it. An empty batch does nothing.
    pub fn write(&self, batch: &WriteBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.write_record(Record::Batch {
            ops: batch.encoded(),
        })
    }

    /// A read view that stays as it is now while writes and merges go on.
    pub fn snapshot(&self) -> Snapshot {
        let of = match &self.engine {
            Engines::Hybrid(e) => {
                let (version, seq) = e.inner.take_snapshot();
                SnapshotOf::Hybrid(hybrid_read::HybridSnapshot {
                    inner: Arc::clone(&e.inner),
                    version,
                    seq,
                })
            }
            Engines::BTree(e) => SnapshotOf::BTree(e.inner.snapshot()),
            Engines::Log(e) => SnapshotOf::Log(log_read::LogSnapshot::new(&e.inner)),
        };
        Snapshot { of }
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
        let wal = match &self.engine {
            Engines::Hybrid(e) => e.inner.wal_handle(),
            Engines::BTree(e) => e.inner.wal_handle(),
            Engines::Log(e) => e.inner.wal_handle(),
        };
        match wal {
            Some(wal) => wal.sync().map(|_| ()),
            None => Ok(()),
        }
    }

    /// Folds everything written so far into the store's files and waits for it: a merge of
    /// the dynamic stage into the table (`hybrid`), a checkpoint (`btree`). Either way the
    /// log is empty after it.
    pub fn compact(&self) -> Result<()> {
        match &self.engine {
            Engines::Hybrid(e) => e.inner.compact(),
            Engines::BTree(e) => e.inner.compact(),
            Engines::Log(e) => e.inner.compact(),
        }
    }

    /// Waits until no merge is running or pending (without starting one) and returns the
    /// error a background merge met, if any: benchmarks time the drain of merge work. The
    /// `btree` engine does its checkpoints in the writer that triggers them: nothing to wait
    /// for.
    #[doc(hidden)]
    pub fn wait_for_merges(&self) -> Result<()> {
        match &self.engine {
            Engines::Hybrid(e) => e.inner.wait_merges(),
            Engines::BTree(_) => Ok(()),
            Engines::Log(_) => Ok(()),
        }
    }

    /// Memory, disk bytes, merges and stalls now.
    pub fn stats(&self) -> StoreStats {
        match &self.engine {
            Engines::Hybrid(e) => hybrid_stats(&e.inner),
            Engines::BTree(e) => {
                let inner = &e.inner;
                let (records, key_bytes, value_bytes, model_bytes, disk, free) =
                    inner.tree_figures();
                let cache_bytes = inner.storage.cache_blocks() * inner.storage.block_size();
                StoreStats {
                    engine: inner.identity.engine.name(),
                    table_records: records,
                    table_key_bytes: key_bytes,
                    table_value_bytes: value_bytes,
                    model_bytes,
                    cache_bytes,
                    memory_bytes: model_bytes + cache_bytes,
                    table_disk_bytes: disk,
                    free_disk_bytes: free,
                    log_disk_bytes: dir::log_bytes(&inner.dir),
                    merges: inner.checkpoints.load(Ordering::Relaxed),
                    merge_seconds: inner.checkpoint_nanos.load(Ordering::Relaxed) as f64 / 1e9,
                    write_stalls: inner.write_stalls.load(Ordering::Relaxed),
                    stall_seconds: inner.stall_nanos.load(Ordering::Relaxed) as f64 / 1e9,
                    recovered_records: inner.recovered_records,
                    recovery_seconds: inner.recovery_seconds,
                    ..StoreStats::default()
                }
            }
            Engines::Log(e) => log_stats(&e.inner),
        }
    }

    /// Finishes background work (a running merge) or checkpoints (`btree`), syncs the log
    /// and closes the store, returning any error met. Dropping a store stops it too but cannot
    /// report errors, and leaves more log to replay at the next open.
    pub fn close(self) -> Result<()> {
        match self.engine {
            Engines::Hybrid(e) => e.close(),
            Engines::BTree(e) => e.close(),
            Engines::Log(e) => e.close(),
        }
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

fn log_stats(inner: &log::LogInner) -> StoreStats {
    let (map_keys, map_bytes) = {
        let map = inner.map.read();
        (map.len(), map.size_in_bytes())
    };
    let live = inner.live.load(Ordering::Relaxed);
    StoreStats {
        engine: inner.identity.engine.name(),
        dynamic_keys: map_keys,
        table_records: live,
        table_key_bytes: inner.live_key_bytes.load(Ordering::Relaxed),
        model_bytes: map_bytes,
        memory_bytes: map_bytes,
        log_disk_bytes: dir::log_bytes(&inner.dir),
        recovered_records: inner.recovered_records,
        recovery_seconds: inner.recovery_seconds,
        ..StoreStats::default()
    }
}

fn hybrid_stats(inner: &hybrid::Inner) -> StoreStats {
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
        free_disk_bytes: 0,
        log_disk_bytes: dir::log_bytes(&inner.dir),
        merges: inner.merges.load(Ordering::Relaxed),
        merge_seconds: inner.merge_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        write_stalls: inner.write_stalls.load(Ordering::Relaxed),
        stall_seconds: inner.stall_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        recovered_records: inner.recovered_records,
        recovery_seconds: inner.recovery_seconds,
    }
}
