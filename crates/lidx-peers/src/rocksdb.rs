//! RocksDB: the LSM-tree in C++ (write-ahead log, memtables, leveled compaction in background
//! threads), its block cache over buffered file I/O. Only with the cargo feature `rocksdb`.
//!
//! Two ways to build it in, both through the `rocksdb` crate 0.20.1 (the newest whose C calls
//! all exist in RocksDB 7.8, Debian 12's `librocksdb-dev`; 0.21 calls
//! `rocksdb_cache_create_hyper_clock` and `rocksdb_readoptions_set_async_io`, added later):
//!
//! * **Linked to the system library, seconds:** `.ci/install-rocksdb` installs
//!   `librocksdb-dev` (7.8.3) and `libclang-dev` (bindgen reads `rocksdb/c.h`), then
//!
//!   ```text
//!   ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu ROCKSDB_INCLUDE_DIR=/usr/include \
//!     cargo build --release -p lidx-cli --features rocksdb
//!   ```
//!
//!   (`librocksdb-sys` links `librocksdb.so` when `ROCKSDB_LIB_DIR` is set and generates its
//!   bindings from the system's header when `ROCKSDB_INCLUDE_DIR` is).
//! * **From source** (RocksDB 7.9.2 bundled in `librocksdb-sys`): the same command without the
//!   two variables; it compiles RocksDB's C++ (hours on two cores shared with other builds,
//!   tens of minutes idle).
//!
//! Writes with `sync = false` and the write-ahead log on: handed to the OS before they are
//! acknowledged, as lidx's `--fsync never`. The block cache is [`PeerOptions::cache_bytes`]
//! and holds the index and filter blocks too (`cache_index_and_filter_blocks`), so the budget
//! covers them as the hybrid's covers its models; the memtable is
//! [`PeerOptions::write_buffer_bytes`] / 2 (one active, one being flushed). Bloom filters of
//! 10 bits per key (what `db_bench` and most deployments use), compression off.
//! [`ByteStore::compact`] flushes the memtable and compacts the whole key range once.

use std::path::{Path, PathBuf};

use ::rocksdb::{
    BlockBasedOptions, Cache, DBCompressionType, Direction, IteratorMode, Options, WriteOptions, DB,
};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions};

use crate::adapter::{fill_scan, stats, wait_while};

/// The RocksDB engine.
pub struct RocksDb;

/// The version of the `rocksdb` crate this crate is built with (checked against `Cargo.lock`
/// by a test).
pub const VERSION: &str = "0.20.1";

/// Which RocksDB is inside: the system library `librocksdb-sys` was pointed at, or the one it
/// compiled from source.
fn library() -> String {
    match option_env!("ROCKSDB_LIB_DIR") {
        Some(dir) => format!("RocksDB system library in {dir}"),
        None => "RocksDB 7.9.2 built from source".to_string(),
    }
}

impl PeerEngine for RocksDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn version(&self) -> String {
        format!("rocksdb {VERSION} ({})", library())
    }

    fn durability(&self) -> &'static str {
        "write-ahead log handed to the OS per write (sync = false)"
    }

    fn create(&self, dir: &Path, options: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        let cache =
            Cache::new_lru_cache(usize::try_from(options.cache_bytes).unwrap_or(usize::MAX))
                .map_err(|e| peer_error("rocksdb", dir, "create its block cache", &e))?;
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        table.set_bloom_filter(10.0, false);
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::None);
        opts.set_write_buffer_size(
            usize::try_from(options.write_buffer_bytes / 2).unwrap_or(usize::MAX),
        );
        opts.set_max_write_buffer_number(2);
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, dir).map_err(|e| peer_error("rocksdb", dir, "open", &e))?;
        Ok(Box::new(RocksStore {
            db,
            dir: dir.to_path_buf(),
            memory: options.cache_bytes + options.write_buffer_bytes,
            _cache: cache,
        }))
    }
}

struct RocksStore {
    db: DB,
    dir: PathBuf,
    memory: u64,
    _cache: Cache,
}

impl RocksStore {
    fn err(&self, op: &str, e: &dyn std::fmt::Display) -> lidx::Error {
        peer_error("rocksdb", &self.dir, op, e)
    }

    fn property(&self, name: &str) -> u64 {
        self.db.property_int_value(name).ok().flatten().unwrap_or(0)
    }
}

impl ByteStore for RocksStore {
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        let value = self.db.get_pinned(key).map_err(|e| self.err("get", &e))?;
        Ok(value.map(|v| v.to_vec()))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.db
            .put_opt(key, value, &WriteOptions::default())
            .map_err(|e| self.err("put", &e))
    }

    fn delete(&self, key: &[u8]) -> lidx::Result<()> {
        self.db
            .delete_opt(key, &WriteOptions::default())
            .map_err(|e| self.err("delete", &e))
    }

    fn write(&self, batch: &WriteBatch) -> lidx::Result<()> {
        let mut b = ::rocksdb::WriteBatch::default();
        for op in batch.ops() {
            match op {
                BatchOp::Put(k, v) => b.put(k, v),
                BatchOp::Delete(k) => b.delete(k),
            }
        }
        self.db
            .write_opt(b, &WriteOptions::default())
            .map_err(|e| self.err("write a batch", &e))
    }

    fn scan(
        &self,
        start: &[u8],
        len: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        let entries = self
            .db
            .iterator(IteratorMode::From(start, Direction::Forward));
        fill_scan(entries, len, out, |op, e| self.err(op, e))
    }

    fn compact(&self) -> lidx::Result<()> {
        self.db.flush().map_err(|e| self.err("flush", &e))?;
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        self.wait_for_merges()
    }

    fn wait_for_merges(&self) -> lidx::Result<()> {
        wait_while(|| {
            self.property("rocksdb.num-running-compactions") > 0
                || self.property("rocksdb.num-running-flushes") > 0
                || self.property("rocksdb.compaction-pending") > 0
        })
    }

    fn stats(&self) -> ByteStoreStats {
        let describe = format!(
            "rocksdb {VERSION}: block cache {} bytes used, {} SST bytes",
            self.property("rocksdb.block-cache-usage"),
            self.property("rocksdb.total-sst-files-size")
        );
        stats(self.memory, &self.dir, describe)
    }

    fn dir(&self) -> &Path {
        &self.dir
    }
}
