//! LMDB through heed: a copy-on-write B+-tree in a memory-mapped file, one writer at a time,
//! readers lock-free; the bundled C source (`lmdb-master-sys`, LMDB's `mdb.master`).
//!
//! LMDB has no cache of its own: its pages are the OS page cache, mapped, so its memory is
//! held to the budget only by `lidx ycsb --memory-limit` (a cgroup that charges the page
//! cache). It is opened with `MDB_NOSYNC` (each commit is written to the file and survives a
//! process crash, not a power loss: lidx's `--fsync never`) and `MDB_NORDAHEAD` (no
//! read-ahead: LMDB's advice for random reads of a file larger than memory). A write is one
//! write transaction; a read one read transaction. Keys are at most 511 bytes (LMDB's
//! default `MDB_MAXKEYSIZE`; heed's `longer-keys` feature would lift it): a longer one is
//! LMDB's `MDB_BAD_VALSIZE` error.
//!
//! **Size**: none to set, with or without a memory limit. LMDB's documentation
//! (`mdb_env_set_mapsize`) asks only that the map be large enough for the database, "as large
//! as possible" within the address space: 1 TiB here, address space, not memory. Its
//! cache is the OS page cache of the mapped file, all the limit leaves it; under `lidx ycsb
//! --memory-limit` the cgroup charges those pages, so LMDB gets the whole limit as its
//! cache. The record's `config` line says so ([`ByteStore::config`]).

use std::path::{Path, PathBuf};

use ::heed::types::Bytes;
use ::heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions, WithoutTls};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions};

use crate::adapter::{fill_scan, stats};

/// The LMDB engine.
pub struct Lmdb;

/// The version of heed this crate is built with (checked against `Cargo.lock` by a test).
pub const VERSION: &str = "0.23.1";

/// The map's size: address space, not memory; the file grows as pages are used.
const MAP_BYTES: usize = 1 << 40;

impl PeerEngine for Lmdb {
    fn name(&self) -> &'static str {
        "lmdb"
    }

    fn version(&self) -> String {
        format!("heed {VERSION} (LMDB mdb.master)")
    }

    fn durability(&self) -> &'static str {
        "MDB_NOSYNC: each commit written to the file, no fsync"
    }

    fn create(&self, dir: &Path, _: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        let err = |op: &str, e: &dyn std::fmt::Display| peer_error("lmdb", dir, op, e);
        std::fs::create_dir_all(dir).map_err(|e| err("create the directory", &e))?;
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options.map_size(MAP_BYTES).max_readers(1024);
        // SAFETY: NO_SYNC and NO_READ_AHEAD only change when LMDB syncs and how it maps; the
        // directory is new and this process alone opens it.
        let env = unsafe {
            options.flags(EnvFlags::NO_SYNC | EnvFlags::NO_READ_AHEAD);
            options.open(dir)
        }
        .map_err(|e| err("open", &e))?;
        let wtxn = env.write_txn().map_err(|e| err("begin write", &e))?;
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| {
                opener
                    .create_database::<Bytes, Bytes>(wtxn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(|e: ::heed::Error| err("create database", &e))?
            .unwrap_commit();
        Ok(Box::new(LmdbStore {
            env,
            db,
            dir: dir.to_path_buf(),
        }))
    }
}

struct LmdbStore {
    env: Env<WithoutTls>,
    db: Database<'static, Bytes, Bytes>,
    dir: PathBuf,
}

impl LmdbStore {
    fn err(&self, op: &str, e: &dyn std::fmt::Display) -> lidx::Error {
        peer_error("lmdb", &self.dir, op, e)
    }

    /// Runs `f` in one write transaction and commits it.
    fn write_with(
        &self,
        f: impl FnOnce(&mut ::heed::RwTxn<'_>) -> lidx::Result<()>,
    ) -> lidx::Result<()> {
        let mut txn = self
            .env
            .write_txn()
            .map_err(|e| self.err("begin write", &e))?;
        f(&mut txn)?;
        txn.commit().map_err(|e| self.err("commit", &e))
    }
}

impl ByteStore for LmdbStore {
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        let txn = self
            .env
            .read_txn()
            .map_err(|e| self.err("begin read", &e))?;
        let value = self.db.get(&txn, key).map_err(|e| self.err("get", &e))?;
        Ok(value.map(<[u8]>::to_vec))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.write_with(|txn| {
            self.db
                .put(txn, key, value)
                .map_err(|e| self.err("put", &e))
        })
    }

    fn delete(&self, key: &[u8]) -> lidx::Result<()> {
        self.write_with(|txn| {
            self.db
                .delete(txn, key)
                .map(|_| ())
                .map_err(|e| self.err("delete", &e))
        })
    }

    fn write(&self, batch: &WriteBatch) -> lidx::Result<()> {
        self.write_with(|txn| {
            for op in batch.ops() {
                match op {
                    BatchOp::Put(k, v) => self.db.put(txn, k, v),
                    BatchOp::Delete(k) => self.db.delete(txn, k).map(|_| ()),
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
        use std::ops::Bound;
        let txn = self
            .env
            .read_txn()
            .map_err(|e| self.err("begin read", &e))?;
        let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(start), Bound::Unbounded);
        let range = self
            .db
            .range(&txn, &bounds)
            .map_err(|e| self.err("range", &e))?;
        fill_scan(range, len, out, |op, e| self.err(op, e))
    }

    fn compact(&self) -> lidx::Result<()> {
        self.env.force_sync().map_err(|e| self.err("sync", &e))
    }

    fn stats(&self) -> ByteStoreStats {
        let entries = (self.env.read_txn().ok())
            .and_then(|t| self.db.len(&t).ok())
            .unwrap_or(0);
        let describe = format!(
            "heed {VERSION} (LMDB): no cache of its own, the OS page cache mapped; {entries} entries"
        );
        stats(0, &self.dir, describe)
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn config(&self) -> String {
        format!(
            "map_size={}GiB cache=the OS page cache (mapped; no cache of its own) \
             MDB_NORDAHEAD MDB_NOSYNC",
            MAP_BYTES >> 30
        )
    }
}
