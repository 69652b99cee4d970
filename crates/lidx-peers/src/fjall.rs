//! fjall: an LSM-tree in Rust (journal, memtables, sorted tables, leveled compaction in
//! background threads), with its own block cache over buffered file I/O.
//!
//! Every write goes to the journal, flushed to the OS before it is acknowledged (fjall's
//! default, `PersistMode::Buffer`: survives a process crash, not a power loss), then to the
//! memtable. The cache is [`PeerOptions::cache_bytes`], each memtable half of
//! [`PeerOptions::write_buffer_bytes`] (one active, one being flushed); compression off. [`ByteStore::compact`] syncs the
//! journal, flushes the memtable and compacts everything into the last level once, as after
//! a bulk load.

use std::path::{Path, PathBuf};

use ::fjall::config::CompressionPolicy;
use ::fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions};

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
        let db = Database::builder(dir)
            .cache_size(options.cache_bytes)
            .open()
            .map_err(|e| err("open", &e))?;
        let memtable = options.write_buffer_bytes / 2;
        let keyspace = db
            .keyspace("lidx", || {
                KeyspaceCreateOptions::default()
                    .data_block_compression_policy(CompressionPolicy::disabled())
                    .index_block_compression_policy(CompressionPolicy::disabled())
                    .max_memtable_size(memtable)
            })
            .map_err(|e| err("create keyspace", &e))?;
        Ok(Box::new(FjallStore {
            db,
            keyspace,
            dir: dir.to_path_buf(),
            memory: options.cache_bytes + options.write_buffer_bytes,
        }))
    }
}

struct FjallStore {
    db: Database,
    keyspace: Keyspace,
    dir: PathBuf,
    memory: u64,
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
}
