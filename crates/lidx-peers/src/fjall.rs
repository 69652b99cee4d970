//! fjall: an LSM-tree in Rust (journal, memtables, sorted tables, leveled compaction in
//! background threads), with its own block cache over buffered file I/O.
//!
//! Every write goes to the journal, flushed to the OS before it is acknowledged (fjall's
//! default, `PersistMode::Buffer`: survives a process crash, not a power loss), then to the
//! memtable. Compression off; fjall's own filters (bloom: 0.01% false positives on L0, 10
//! bits per key below) and pinning (L0 filters, L0 and L1 index blocks) as they come.
//! [`ByteStore::compact`] syncs the journal, flushes the memtable and compacts everything
//! into the last level once, as after a bulk load.
//!
//! **Sizes** ([`Settings::of`]). Without a memory limit: the cache is
//! [`PeerOptions::cache_bytes`], each memtable half of [`PeerOptions::write_buffer_bytes`]
//! (one active, one being flushed). Under a memory limit `L`, as fjall's docs recommend:
//!
//! * **Cache:** `L`/4. `DatabaseBuilder::cache_size`: "It is recommended to configure the
//!   block cache capacity to be ~20-25% of the available memory - or more **if** the data set
//!   _fully_ fits into memory"; a run's data set is larger than the limits it is measured at,
//!   so the upper end of the advice. fjall reads its tables with buffered I/O: the rest of `L`
//!   is the OS page cache behind the cache.
//! * **Memtable:** `L`/16 from 8 MiB to 64 MiB (`KeyspaceCreateOptions::max_memtable_size`:
//!   "Recommended size 8 - 64 MiB, depending on how much memory is available"; its default
//!   is 64 MiB).
//! * **Filters:** `expect_point_read_hits` (no filter on the last level): "Enable this only
//!   if you know that point reads generally are expected to find a key-value pair", as every
//!   read of the YCSB workloads does.
//!
//! The settings are the record's `config` line ([`ByteStore::config`]).

use std::path::{Path, PathBuf};

use ::fjall::config::CompressionPolicy;
use ::fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{
    config_bytes, peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions,
};

use crate::adapter::{fill_scan, stats, wait_while};

/// The fjall engine.
pub struct Fjall;

/// The version of fjall this crate is built with (checked against `Cargo.lock` by a test).
pub const VERSION: &str = "3.1.13";

impl PeerEngine for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }

    fn version(&self) -> String {
        format!("fjall {VERSION}")
    }

    fn durability(&self) -> &'static str {
        "journal flushed to the OS per write, no fsync"
    }

    fn create(&self, dir: &Path, options: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        let err = |op: &str, e: &dyn std::fmt::Display| peer_error("fjall", dir, op, e);
        let settings = Settings::of(options);
        let db = Database::builder(dir)
            .cache_size(settings.cache)
            .open()
            .map_err(|e| err("open", &e))?;
        let keyspace = db
            .keyspace("lidx", || {
                KeyspaceCreateOptions::default()
                    .data_block_compression_policy(CompressionPolicy::disabled())
                    .index_block_compression_policy(CompressionPolicy::disabled())
                    .max_memtable_size(settings.memtable)
                    .expect_point_read_hits(settings.point_read_hits)
            })
            .map_err(|e| err("create keyspace", &e))?;
        Ok(Box::new(FjallStore {
            db,
            keyspace,
            dir: dir.to_path_buf(),
            memory: settings.cache + 2 * settings.memtable,
            config: settings.config(),
        }))
    }
}

/// What a fjall store is opened with (the module docs say why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Bytes of the block cache.
    pub cache: u64,
    /// Bytes of a memtable (`max_memtable_size`).
    pub memtable: u64,
    /// `expect_point_read_hits`.
    pub point_read_hits: bool,
}

impl Settings {
    /// The settings for `options`: the budget's split, or sized from the memory limit.
    pub fn of(options: &PeerOptions) -> Settings {
        match options.memory_limit {
            None => Settings {
                cache: options.cache_bytes,
                memtable: options.write_buffer_bytes / 2,
                point_read_hits: false,
            },
            Some(limit) => Settings {
                cache: limit / 4,
                memtable: (limit / 16).clamp(8 << 20, 64 << 20),
                point_read_hits: true,
            },
        }
    }

    /// The record's `config` line.
    pub fn config(&self) -> String {
        format!(
            "cache={} memtable={} expect_point_read_hits={} filters=fjall's default \
             compression=none",
            config_bytes(self.cache),
            config_bytes(self.memtable),
            if self.point_read_hits { "on" } else { "off" }
        )
    }
}

struct FjallStore {
    db: Database,
    keyspace: Keyspace,
    dir: PathBuf,
    memory: u64,
    config: String,
}

impl FjallStore {
    fn err(&self, op: &str, e: &dyn std::fmt::Display) -> lidx::Error {
        peer_error("fjall", &self.dir, op, e)
    }
}

impl ByteStore for FjallStore {
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        let value = self.keyspace.get(key).map_err(|e| self.err("get", &e))?;
        Ok(value.map(|v| v.to_vec()))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.keyspace
            .insert(key, value)
            .map_err(|e| self.err("insert", &e))
    }

    fn delete(&self, key: &[u8]) -> lidx::Result<()> {
        self.keyspace
            .remove(key)
            .map_err(|e| self.err("remove", &e))
    }

    fn write(&self, batch: &WriteBatch) -> lidx::Result<()> {
        let mut b = self.db.batch();
        for op in batch.ops() {
            match op {
                BatchOp::Put(k, v) => b.insert(&self.keyspace, k, v),
                BatchOp::Delete(k) => b.remove(&self.keyspace, k),
            }
        }
        b.commit().map_err(|e| self.err("commit a batch", &e))
    }

    fn scan(
        &self,
        start: &[u8],
        len: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        let entries = self.keyspace.range(start..).map(|g| g.into_inner());
        fill_scan(entries, len, out, |op, e| self.err(op, e))
    }

    fn compact(&self) -> lidx::Result<()> {
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err("persist", &e))?;
        self.keyspace
            .rotate_memtable_and_wait()
            .map_err(|e| self.err("flush", &e))?;
        self.keyspace
            .major_compact()
            .map_err(|e| self.err("compact", &e))?;
        self.wait_for_merges()
    }

    fn wait_for_merges(&self) -> lidx::Result<()> {
        wait_while(|| self.db.outstanding_flushes() > 0 || self.db.active_compactions() > 0)
    }

    fn stats(&self) -> ByteStoreStats {
        let describe = format!(
            "fjall {VERSION}: {} tables, cache {} of {} bytes",
            self.keyspace.table_count(),
            self.db.cache_size(),
            self.db.cache_capacity()
        );
        stats(self.memory, &self.dir, describe)
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn config(&self) -> String {
        self.config.clone()
    }
}
