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
//! acknowledged, as lidx's `--fsync never`. Bloom filters of 10 bits per key (what `db_bench`
//! and most deployments use), compression off, two memtables (one active, one being flushed).
//! The block cache holds the index and filter blocks too (`cache_index_and_filter_blocks`),
//! so the memory it is given covers them as the hybrid's budget covers its models; those of
//! L0 and the top level of partitioned ones are pinned there
//! (`pin_l0_filter_and_index_blocks_in_cache`, `pin_top_level_index_and_filter`).
//! [`ByteStore::compact`] flushes the memtable and compacts the whole key range once.
//!
//! **Sizes** ([`Settings::of`]). Without a memory limit: the budget's split
//! ([`PeerOptions::from_budget`]), the block cache its cache share and each memtable half its
//! write buffer share. Under a memory limit `L` (`lidx ycsb --memory-limit`), as RocksDB's
//! own documents recommend for the workload:
//!
//! * **Memtables:** `write_buffer_size` = `L`/16, from 1 MiB up to RocksDB's default 64 MiB,
//!   two of them. The wiki's *Setup Options and Basic Tuning* on `write_buffer_size`: "You
//!   need to budget for 2 x your worst case memory use"; `L`/8 in all.
//! * **Block cache:** the rest of the engine's own share of `L`, three quarters
//!   ([`lidx_bench::byte_store::own_memory`]): `3L/4 - L/8 = 5L/8`; when the workload writes, five
//!   eighths, `5L/8 - L/8 = L/2` (RocksDB sized to three quarters was killed by the cgroup in every
//!   long YCSB-A run: `own_memory` says what was measured). *Memory usage in RocksDB* (wiki)
//!   explains that a block missed in the block cache is read with buffered I/O, so the OS page
//!   cache is a second tier holding the raw, usually *compressed* blocks, and that a smaller block
//!   cache leaves more room to that tier; the setup guide hence leaves much of the memory to the
//!   page cache. Here compression is off, so a page-cache block is a byte-for-byte copy of a
//!   block-cache one: the block cache takes most of the limit, and the rest of it is left for the
//!   page cache the reads, the log and the compactions pass through and for what RocksDB allocates
//!   outside the cache (table readers, iterators).
//! * **Filters:** `optimize_filters_for_hits` (no filter on the last level, about 90% of the
//!   filter memory, given back to the cache): *Memory usage in RocksDB* advises it when
//!   `Get()` mostly finds its key, as every read of the YCSB workloads does.
//! * **Point lookups:** `OptimizeForPointLookup(block_cache_mb)` when the workload reads and
//!   writes single keys only ([`PeerOptions::point_reads`]: every workload but E's scans):
//!   `include/rocksdb/options.h` says "Use this if you don't need to keep the data sorted,
//!   i.e. you'll never use an iterator, only Put() and Get() API calls", which is YCSB C, B
//!   and D (reads with a few updates or inserts) as much as A and F. It sets the memtable's
//!   bloom filter (`memtable_prefix_bloom_size_ratio` 0.02, whole-key filtering) and a table
//!   factory with the data blocks' hash index (`kDataBlockBinaryAndHash`, ratio 0.75), bloom
//!   filters and a cache of its own; that factory would drop the pinning above, so the table
//!   options set here replace it with the same hash index, filters and the one block cache.
//!
//! * **Writeback:** `bytes_per_sync` and `wal_bytes_per_sync` of 1 MiB, so RocksDB asks the
//!   OS to write its table and log files out every megabyte rather than leaving them dirty in
//!   the page cache until the kernel's writeback: the wiki's *Setup Options and Basic Tuning*
//!   lists `bytes_per_sync = 1048576` among the options it recommends to everyone. Set with or
//!   without a memory limit (RocksDB figures before session 49 were measured without it).
//!   Under a limit dirty pages are charged to the run and are slow to reclaim; with these,
//!   3M-operation YCSB-A runs under a 160 MB cgroup held at most 13 MB of dirty pages in any
//!   sample (what they held before was not measured).
//!
//! The settings are the record's `config` line ([`ByteStore::config`]).
//!
//! **`rocksdb-rows`** ([`RocksDbRows`]) is the same with RocksDB's `row_cache` (a cache of
//! key-value pairs in front of the block cache, "Default: null (disabled)" in `options.h`)
//! of [`PeerOptions::row_cache_bytes`] (`lidx ycsb --row-cache`), taken out of the block
//! cache so its memory is the same: the peer beside lidx's stores given the same record
//! cache, so that a comparison can show what the record cache alone is worth.

use std::path::{Path, PathBuf};

use ::rocksdb::{
    BlockBasedOptions, Cache, DBCompressionType, DataBlockIndexType, Direction, IteratorMode,
    Options, WriteOptions, DB,
};
use lidx::kv::{BatchOp, WriteBatch};
use lidx_bench::byte_store::{
    config_bytes, own_memory, peer_error, ByteStore, ByteStoreStats, PeerEngine, PeerOptions,
};

use crate::adapter::{fill_scan, stats, wait_while};

/// The RocksDB engine.
pub struct RocksDb;

/// The RocksDB engine with a row cache (see the module docs).
pub struct RocksDbRows;

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
        create(dir, Settings::of(options))
    }
}

impl PeerEngine for RocksDbRows {
    fn name(&self) -> &'static str {
        "rocksdb-rows"
    }

    fn version(&self) -> String {
        RocksDb.version()
    }

    fn durability(&self) -> &'static str {
        RocksDb.durability()
    }

    fn create(&self, dir: &Path, options: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        let settings = Settings::of(options)
            .with_row_cache(options.row_cache_bytes)
            .ok_or_else(|| lidx::Error::InvalidParameter {
                name: "rocksdb-rows row cache",
                value: options.row_cache_bytes.to_string(),
                expected: "bytes above 0 that leave the block cache 1 MiB (`lidx ycsb \
                           --row-cache`; plain `rocksdb` has none)",
            })?;
        create(dir, settings)
    }
}

/// Opens a RocksDB store in `dir` with `settings`.
fn create(dir: &Path, settings: Settings) -> lidx::Result<Box<dyn ByteStore>> {
    let bytes = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let cache = Cache::new_lru_cache(bytes(settings.block_cache))
        .map_err(|e| peer_error("rocksdb", dir, "create its block cache", &e))?;
    let rows = Cache::new_lru_cache(bytes(settings.row_cache))
        .map_err(|e| peer_error("rocksdb", dir, "create its row cache", &e))?;
    let mut opts = Options::default();
    if settings.row_cache > 0 {
        opts.set_row_cache(&rows);
    }
    if settings.point_lookup {
        // First: it replaces the table factory, which the one below replaces in turn.
        opts.optimize_for_point_lookup(settings.block_cache >> 20);
    }
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&cache);
    table.set_cache_index_and_filter_blocks(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    table.set_pin_top_level_index_and_filter(true);
    table.set_bloom_filter(BLOOM_BITS, false);
    if settings.point_lookup {
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
        table.set_data_block_hash_ratio(0.75);
    }
    opts.create_if_missing(true);
    opts.set_compression_type(DBCompressionType::None);
    opts.set_write_buffer_size(bytes(settings.write_buffer));
    opts.set_max_write_buffer_number(MEMTABLES);
    opts.set_optimize_filters_for_hits(settings.filters_for_hits);
    opts.set_bytes_per_sync(SYNC_BYTES);
    opts.set_wal_bytes_per_sync(SYNC_BYTES);
    opts.set_block_based_table_factory(&table);
    let db = DB::open(&opts, dir).map_err(|e| peer_error("rocksdb", dir, "open", &e))?;
    Ok(Box::new(RocksStore {
        db,
        dir: dir.to_path_buf(),
        memory: settings.block_cache
            + settings.row_cache
            + settings.write_buffer * MEMTABLES as u64,
        config: settings.config(),
        _cache: cache,
        _rows: rows,
    }))
}

/// Bits per key of the bloom filters.
const BLOOM_BITS: f64 = 10.0;

/// Bytes RocksDB writes to a table or log file between its requests that the OS write them
/// out (`bytes_per_sync`, `wal_bytes_per_sync`; the module docs say why).
const SYNC_BYTES: u64 = 1 << 20;

/// Memtables: one active, one being flushed.
const MEMTABLES: i32 = 2;

/// What a RocksDB store is opened with (the module docs say why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Bytes of the block cache (data, index and filter blocks).
    pub block_cache: u64,
    /// Bytes of each memtable (`write_buffer_size`).
    pub write_buffer: u64,
    /// `OptimizeForPointLookup`.
    pub point_lookup: bool,
    /// `optimize_filters_for_hits`.
    pub filters_for_hits: bool,
    /// Bytes of the row cache (0: none; `rocksdb-rows` only).
    pub row_cache: u64,
}

impl Settings {
    /// The settings for `options`: the budget's split, or sized from the memory limit.
    pub fn of(options: &PeerOptions) -> Settings {
        match options.memory_limit {
            None => Settings {
                block_cache: options.cache_bytes,
                write_buffer: options.write_buffer_bytes / MEMTABLES as u64,
                point_lookup: false,
                filters_for_hits: false,
                row_cache: 0,
            },
            Some(limit) => {
                let write_buffer = (limit / 16).clamp(1 << 20, 64 << 20);
                Settings {
                    block_cache: own_memory(limit, options.writes)
                        .saturating_sub(write_buffer * MEMTABLES as u64)
                        .max(1 << 20),
                    write_buffer,
                    point_lookup: options.point_reads,
                    filters_for_hits: true,
                    row_cache: 0,
                }
            }
        }
    }

    /// These settings with a row cache of `bytes` taken out of the block cache; `None` for 0
    /// bytes or for a cache that would leave the block cache under 1 MiB (for the index and
    /// filter blocks).
    pub fn with_row_cache(self, bytes: u64) -> Option<Settings> {
        (bytes > 0 && bytes <= self.block_cache.saturating_sub(1 << 20)).then_some(Settings {
            block_cache: self.block_cache - bytes,
            row_cache: bytes,
            ..self
        })
    }

    /// The record's `config` line.
    pub fn config(&self) -> String {
        let on = |b: bool| if b { "on" } else { "off" };
        let rows = if self.row_cache > 0 {
            format!(" row_cache={}", config_bytes(self.row_cache))
        } else {
            String::new()
        };
        format!(
            "block_cache={} write_buffer={}x{MEMTABLES} bloom={BLOOM_BITS} \
             cache_index_and_filter_blocks=on pin_l0=on pin_top_level_index=on \
             optimize_filters_for_hits={} optimize_for_point_lookup={} compression=none \
             bytes_per_sync={sync} wal_bytes_per_sync={sync}{rows}",
            config_bytes(self.block_cache),
            config_bytes(self.write_buffer),
            on(self.filters_for_hits),
            on(self.point_lookup),
            sync = config_bytes(SYNC_BYTES),
        )
    }
}

struct RocksStore {
    db: DB,
    dir: PathBuf,
    memory: u64,
    config: String,
    _cache: Cache,
    _rows: Cache,
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

    fn config(&self) -> String {
        self.config.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_a_limit_the_block_cache_takes_five_eighths_and_point_reads_optimize() {
        let c = Settings::of(&PeerOptions::from_limit(160_000_000, true, false));
        assert_eq!(c.write_buffer, 10_000_000);
        assert_eq!(c.block_cache, 100_000_000);
        assert!(c.point_lookup && c.filters_for_hits);
        assert!(
            c.config()
                .starts_with("block_cache=95.4MiB write_buffer=9.5MiBx2 bloom=10 "),
            "{}",
            c.config()
        );
        assert!(c.config().contains("optimize_for_point_lookup=on"));
        assert!(
            c.config()
                .contains(" bytes_per_sync=1MiB wal_bytes_per_sync=1MiB"),
            "{}",
            c.config()
        );
        // Writes: the block cache gives up an eighth of the limit.
        let c = Settings::of(&PeerOptions::from_limit(160_000_000, true, true));
        assert_eq!((c.block_cache, c.write_buffer), (80_000_000, 10_000_000));
        // Scans: no point-lookup mode; a large limit keeps RocksDB's default memtable.
        let c = Settings::of(&PeerOptions::from_limit(4 << 30, false, false));
        assert_eq!(c.write_buffer, 64 << 20);
        assert!(!c.point_lookup);
        // A budget: today's split.
        let c = Settings::of(&PeerOptions::from_budget(16 << 20));
        assert_eq!((c.block_cache, c.write_buffer), (12 << 20, 2 << 20));
        assert!(!c.point_lookup && !c.filters_for_hits);
    }

    #[test]
    fn a_row_cache_comes_out_of_the_block_cache() {
        let plain = Settings::of(&PeerOptions::from_limit(160_000_000, true, false));
        let c = plain.with_row_cache(40_000_000).unwrap();
        assert_eq!((c.block_cache, c.row_cache), (60_000_000, 40_000_000));
        assert!(c.config().ends_with(" row_cache=38.1MiB"), "{}", c.config());
        assert!(!plain.config().contains("row_cache"));
        // None, or one that leaves the block cache under 1 MiB, is refused.
        assert_eq!(plain.with_row_cache(0), None);
        assert_eq!(
            plain.with_row_cache(plain.block_cache - (1 << 20) + 1),
            None
        );
        assert!(plain
            .with_row_cache(plain.block_cache - (1 << 20))
            .is_some());
    }
}
