//! redb: a copy-on-write B-tree in one file, with its own cache of pages (reads and a write
//! buffer, [`::redb::Builder::set_cache_size`]) over buffered file I/O.
//!
//! Each write is one write transaction committed with [`Durability::None`]: redb keeps it in
//! its memory until a later durable commit, the weakest durability of the peers (see the crate
//! docs); [`ByteStore::compact`] commits durably once after the load. A read is one read
//! transaction. Keys and values are byte slices in one table.
//!
//! **Size** ([`cache_bytes`]): redb has one knob, [`::redb::Builder::set_cache_size`], "the
//! amount of memory (in bytes) used for caching data" (its docs; the default, 1 GiB, is sized
//! for a machine, not for a limit), which redb shares between its read cache and its write
//! buffer. Without a memory limit it is the budget's cache share
//! ([`PeerOptions::from_budget`]); under a memory limit `L` it is the engine's whole own
//! share, three quarters of `L` (five eighths when the workload writes;
//! [`lidx_bench::byte_store::own_memory`]): redb reads its file with buffered I/O, so the
//! rest is the OS page cache its reads and writes pass
//! through (and the allocations beside its cache), as for the other peers. The size is the
//! record's `config` line ([`ByteStore::config`]).

use std::path::{Path, PathBuf};

use ::redb::{Database, Durability, ReadableDatabase, TableDefinition, WriteTransaction};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{
    config_bytes, own_memory, peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions,
};

use crate::adapter::{fill_scan, stats};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("lidx");

/// The redb engine.
pub struct Redb;

/// The version of redb this crate is built with (checked against `Cargo.lock` by a test).
pub const VERSION: &str = "4.6.0";

impl PeerEngine for Redb {
    fn name(&self) -> &'static str {
        "redb"
    }

    fn version(&self) -> String {
        format!("redb {VERSION}")
    }

    fn durability(&self) -> &'static str {
        "Durability::None per write (kept in redb's memory until a durable commit)"
    }

    fn create(&self, dir: &Path, options: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        let err = |op: &str, e: &dyn std::fmt::Display| peer_error("redb", dir, op, e);
        std::fs::create_dir_all(dir).map_err(|e| err("create the directory", &e))?;
        let cache = cache_bytes(options);
        let db = Database::builder()
            .set_cache_size(usize::try_from(cache).unwrap_or(usize::MAX))
            .create(dir.join("data.redb"))
            .map_err(|e| err("create", &e))?;
        let store = RedbStore {
            db,
            dir: dir.to_path_buf(),
            memory: cache,
        };
        let txn = store.begin(Durability::None)?;
        txn.open_table(TABLE)
            .map_err(|e| store.err("open table", &e))?;
        txn.commit().map_err(|e| store.err("commit", &e))?;
        Ok(Box::new(store))
    }
}

/// redb's cache for `options` (the module docs say why).
pub fn cache_bytes(options: &PeerOptions) -> u64 {
    options.memory_limit.map_or(options.cache_bytes, |limit| {
        own_memory(limit, options.writes)
    })
}

struct RedbStore {
    db: Database,
    dir: PathBuf,
    memory: u64,
}

impl RedbStore {
    fn err(&self, op: &str, e: &dyn std::fmt::Display) -> lidx::Error {
        peer_error("redb", &self.dir, op, e)
    }

    /// A write transaction committed with `durability`.
    fn begin(&self, durability: Durability) -> lidx::Result<WriteTransaction> {
        let mut txn = self
            .db
            .begin_write()
            .map_err(|e| self.err("begin write", &e))?;
        txn.set_durability(durability)
            .map_err(|e| self.err("set durability", &e))?;
        Ok(txn)
    }

    /// The table in a new read transaction.
    fn read_table(&self) -> lidx::Result<::redb::ReadOnlyTable<&'static [u8], &'static [u8]>> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| self.err("begin read", &e))?;
        txn.open_table(TABLE)
            .map_err(|e| self.err("open table", &e))
    }

    /// Runs `f` on the table in one write transaction and commits it.
    fn write_with(
        &self,
        f: impl FnOnce(&mut ::redb::Table<&[u8], &[u8]>) -> lidx::Result<()>,
    ) -> lidx::Result<()> {
        let txn = self.begin(Durability::None)?;
        {
            let mut table = txn
                .open_table(TABLE)
                .map_err(|e| self.err("open table", &e))?;
            f(&mut table)?;
        }
        txn.commit().map_err(|e| self.err("commit", &e))
    }
}

impl ByteStore for RedbStore {
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        let table = self.read_table()?;
        let value = table.get(key).map_err(|e| self.err("get", &e))?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.write_with(|t| {
            t.insert(key, value).map_err(|e| self.err("insert", &e))?;
            Ok(())
        })
    }

    fn delete(&self, key: &[u8]) -> lidx::Result<()> {
        self.write_with(|t| {
            t.remove(key).map_err(|e| self.err("remove", &e))?;
            Ok(())
        })
    }

    fn write(&self, batch: &WriteBatch) -> lidx::Result<()> {
        self.write_with(|t| {
            for op in batch.ops() {
                match op {
                    BatchOp::Put(k, v) => t.insert(k, v).map(|_| ()),
                    BatchOp::Delete(k) => t.remove(k).map(|_| ()),
                }
                .map_err(|e| self.err("write a batch", &e))?;
            }
            Ok(())
        })
    }

    fn scan(
        &self,
        start: &[u8],
        len: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        let table = self.read_table()?;
        let range = table.range(start..).map_err(|e| self.err("range", &e))?;
        let entries = range.map(|e| e.map(|(k, v)| (k.value().to_vec(), v.value().to_vec())));
        fill_scan(entries, len, out, |op, e| self.err(op, e))
    }

    fn compact(&self) -> lidx::Result<()> {
        let txn = self.begin(Durability::Immediate)?;
        txn.commit().map_err(|e| self.err("commit", &e))
    }

    fn stats(&self) -> ByteStoreStats {
        let describe = format!("redb {VERSION}: cache {} bytes", self.memory);
        stats(self.memory, &self.dir, describe)
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn config(&self) -> String {
        format!(
            "cache={} (set_cache_size: reads and write buffer) durability=none per write",
            config_bytes(self.memory)
        )
    }
}
