//! [`ByteStore`]: the store shape, a durable ordered map of byte keys to byte values in a
//! directory, which every engine the YCSB runner measures through a store goes through:
//! lidx's own engines ([`lidx::kv::Store`]: `hybrid`, `btree`, `log:<map>`) and the
//! peers of the `lidx-peers` crate (redb, fjall, LMDB, RocksDB), each a [`PeerEngine`] that
//! opens one.
//!
//! The trait lives here rather than in `lidx` or `lidx-peers`: it is what the benchmark needs
//! of a store (get, put, delete, batches, an ordered scan, stats), not an API an embedder of
//! `lidx` wants; and `lidx-peers` depends on this crate, not the other way round, so the
//! default build never compiles a peer (the CLI hands them to the runner as
//! [`crate::kv_store::StoreSpec::Peer`]). [`crate::kv_store::StoreApi`] turns any byte store
//! into the runner's [`crate::kv_store::KvStore`], so a peer and a lidx engine run the same
//! code around the call: the same key bytes ([`crate::store_keys`]), the same value check.
//!
//! Errors of a peer are its own types; an adapter turns them into [`lidx::Error::Io`] naming
//! the engine and what it was doing ([`peer_error`]), so the runner sees one error type.

use lidx::kv::{Store, WriteBatch};
use std::path::{Path, PathBuf};

use crate::kv_store::MergeStats;

/// What a byte store reports between operations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByteStoreStats {
    /// Bytes the engine says it holds in memory (structures, buffers, its own cache; a page
    /// cache the engine leaves to the OS is not in it: see the run's resident memory).
    pub memory_bytes: u64,
    /// Bytes of the store's files on disk.
    pub disk_bytes: u64,
    /// One line for reports.
    pub describe: String,
    /// Merges (compactions) and write stalls so far, where the engine counts them.
    pub merges: MergeStats,
}

/// A durable ordered map of byte keys to byte values, shared by the benchmark's threads.
pub trait ByteStore: Send + Sync {
    /// The value of `key`, if present.
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>>;
    /// Inserts `key` with `value`, or replaces its value.
    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()>;
    /// Removes `key` (nothing when absent).
    fn delete(&self, key: &[u8]) -> lidx::Result<()>;
    /// Applies `batch`, all of it or none (the load writes through it).
    fn write(&self, batch: &WriteBatch) -> lidx::Result<()>;
    /// Puts into `out` (cleared first) the first `len` entries with keys at or after `start`,
    /// ascending.
    fn scan(&self, start: &[u8], len: usize, out: &mut Vec<(Vec<u8>, Vec<u8>)>)
        -> lidx::Result<()>;
    /// Makes what was written durable and compact, as after a bulk load: flushes buffers and
    /// compacts to the engine's steady state.
    fn compact(&self) -> lidx::Result<()>;
    /// Blocks until no background work is running or pending.
    fn wait_for_merges(&self) -> lidx::Result<()> {
        Ok(())
    }
    /// Figures for reports.
    fn stats(&self) -> ByteStoreStats;
    /// The directory the store lives in.
    fn dir(&self) -> &Path;
    /// The settings it was opened with, one line (`block_cache=120MiB bloom=10 ...`), for
    /// reports: what a reader needs to run it the same way.
    fn config(&self) -> String {
        String::new()
    }
}

/// What a peer is opened with.
///
/// Two ways to size a peer, one per way `lidx ycsb` is run:
///
/// * **A memory budget** ([`PeerOptions::from_budget`], no `--memory-limit`): three quarters
///   its cache, a quarter its write buffer, every peer alike; what the engine leaves to the OS
///   page cache is not held to anything.
/// * **A memory limit** ([`PeerOptions::from_limit`], `--memory-limit L`): the run is held to
///   `L` (heap and page cache, [`crate::memory_limit`]) and each engine sizes itself from `L`
///   as its own documentation recommends for the workload ([`PeerOptions::memory_limit`],
///   [`PeerOptions::point_reads`]; each peer's module says which document it followed). The
///   engines that size a cache and a write buffer of their own keep them within
///   [`own_memory`]`(L)`, three quarters of the limit (five eighths when the workload
///   writes), the share lidx's engines get too ([`lidx_budget_from_limit`]): the rest is left
///   for what every engine allocates beside its caches and for the OS page cache its file I/O
///   passes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerOptions {
    /// Bytes of the engine's own cache of blocks or pages (its block cache, page cache or
    /// read cache); an engine without one (LMDB) ignores it. Not used under a memory limit.
    pub cache_bytes: u64,
    /// Bytes of the engine's write buffer (memtable), where it has one. Not used under a
    /// memory limit.
    pub write_buffer_bytes: u64,
    /// The memory limit the run is held to: the engine sizes its caches and buffers from it
    /// as its documentation recommends, rather than from `cache_bytes` and
    /// `write_buffer_bytes`.
    pub memory_limit: Option<u64>,
    /// The workload reads and writes single keys only (no scans): an engine with a mode for
    /// point lookups (RocksDB's `OptimizeForPointLookup`, "use this if you'll never use an
    /// iterator, only Put() and Get()") uses it under a memory limit.
    pub point_reads: bool,
    /// The workload writes (inserts, updates): under a memory limit an engine's own memory is
    /// the smaller share ([`own_memory`]).
    pub writes: bool,
    /// Bytes of a record cache (key to value) for an engine variant that has one
    /// (`rocksdb-rows`: RocksDB's `row_cache`, taken out of its block cache, so its memory
    /// is unchanged); the others ignore it. 0 by default; `lidx ycsb --row-cache` sets it
    /// for lidx's stores and these variants alike.
    pub row_cache_bytes: u64,
}

impl PeerOptions {
    /// Splits a memory budget: three quarters the cache, one quarter the write buffer, as the
    /// hybrid's budget holds its dynamic stage (its write buffer) and models alike.
    pub fn from_budget(budget: u64) -> PeerOptions {
        PeerOptions {
            cache_bytes: budget - budget / 4,
            write_buffer_bytes: (budget / 4).max(1 << 20),
            memory_limit: None,
            point_reads: false,
            writes: false,
            row_cache_bytes: 0,
        }
    }

    /// Sizes from a memory limit of `limit` bytes for a workload with (`point_reads`) or
    /// without single-key operations only, that `writes` or only reads; `cache_bytes` and
    /// `write_buffer_bytes` are what the limit leaves an engine's own memory
    /// ([`own_memory`]), for reports.
    pub fn from_limit(limit: u64, point_reads: bool, writes: bool) -> PeerOptions {
        PeerOptions {
            cache_bytes: own_memory(limit, writes),
            write_buffer_bytes: 0,
            memory_limit: Some(limit),
            point_reads,
            writes,
            row_cache_bytes: 0,
        }
    }
}

/// The share of a memory limit an engine's own memory (its caches and write buffers) is
/// sized to: three quarters, or five eighths for a workload that `writes`. The rest is left
/// for what the engine allocates beside them (table readers, iterators, compaction and log
/// buffers, its threads' stacks, the allocator's free lists, the harness's few MB) and for
/// the OS page cache its file I/O passes through: under a cgroup a page of a buffered read or
/// write is charged too, and an engine whose own memory took the whole limit would be killed
/// by the first burst of dirty pages of a flush or a merge.
///
/// Why less for writes: under a steady stream of writes what an engine allocates beside its
/// caches grows with its compactions and the churn of its memtables. Measured in 3M-operation
/// YCSB-A runs under 160 MB (`lidx ycsb --dataset gen:uniform-sparse:4M --memory-limit 160M
/// --workload a`, and 8M; `docs/results/store-scale.md`): RocksDB sized to three quarters
/// (120 MB) was killed by the cgroup in all five runs, with glibc's default allocator, with two
/// arenas and with the mmap threshold the `lidx` binary now fixes; sized to five eighths
/// (100 MB) it finished all four on 3M records, at resident peaks of 143-155 MB, and two of
/// three on 6M.
pub fn own_memory(limit: u64, writes: bool) -> u64 {
    if writes {
        limit - limit / 8 * 3
    } else {
        limit - limit / 4
    }
}

/// The memory budget of lidx's engines under a memory limit when none is given
/// (`lidx ycsb --memory-limit L` without `--memory-budget`): the same share as a peer's own
/// memory ([`own_memory`]; the smaller one when any of the run's workloads `writes`) less
/// lidx's own cache (`cache_bytes`: the run's LRU page cache of `--cache-blocks` blocks), at
/// least `min`; neither side gets more of `L`.
pub fn lidx_budget_from_limit(limit: u64, cache_bytes: u64, min: u64, writes: bool) -> u64 {
    own_memory(limit, writes)
        .saturating_sub(cache_bytes)
        .max(min)
}

/// Bytes as a configuration line shows them: whole MiB or KiB where exact, bytes otherwise.
pub fn config_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1}MiB", bytes as f64 / (1u64 << 20) as f64)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{}KiB", bytes >> 10)
    } else if bytes >= 1 << 10 {
        format!("{:.1}KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes}B")
    }
}

/// A store engine measured beside lidx's: opens a fresh [`ByteStore`] in a directory.
pub trait PeerEngine: Send + Sync {
    /// Its name on the command line: `redb`, `fjall`, `lmdb`, `rocksdb`.
    fn name(&self) -> &'static str;
    /// The crate and version it is built from, for reports (`redb 4.6.0`).
    fn version(&self) -> String;
    /// The durability of an acknowledged write, for reports.
    fn durability(&self) -> &'static str;
    /// Creates an empty store in `dir` (made if missing).
    fn create(&self, dir: &Path, options: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>>;
}

/// A peer that is not in this build or cannot run here: every `create` fails with `why`, so
/// the runner reports it as skipped.
pub struct Unavailable {
    /// The name asked for.
    pub name: &'static str,
    /// Why it cannot run.
    pub why: String,
}

impl PeerEngine for Unavailable {
    fn name(&self) -> &'static str {
        self.name
    }

    fn version(&self) -> String {
        "unavailable".to_string()
    }

    fn durability(&self) -> &'static str {
        "-"
    }

    fn create(&self, dir: &Path, _: &PeerOptions) -> lidx::Result<Box<dyn ByteStore>> {
        Err(peer_error(self.name, dir, "open", &self.why))
    }
}

/// A peer's error as [`lidx::Error::Io`]: the engine and operation in `op`, its message.
pub fn peer_error(
    engine: &str,
    dir: &Path,
    op: &str,
    error: &dyn std::fmt::Display,
) -> lidx::Error {
    lidx::Error::Io {
        file: dir.display().to_string(),
        op: format!("{engine}: {op}"),
        kind: std::io::ErrorKind::Other,
        message: error.to_string(),
    }
}

/// Bytes the files under `dir` take on disk (allocated blocks, so a sparse or preallocated
/// file counts what it holds).
pub fn dir_disk_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => pending.push(entry.path()),
                Ok(m) => total += m.blocks() * 512,
                Err(_) => {}
            }
        }
    }
    total
}

/// lidx's store through the shape. Its memory is [`lidx::kv::StoreStats`]'s minus the
/// page cache (the run's storage carries that), its disk bytes the block files and the log.
pub struct LidxStore(pub Store);

impl ByteStore for LidxStore {
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        self.0.get(key)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.0.put(key, value)
    }

    fn delete(&self, key: &[u8]) -> lidx::Result<()> {
        self.0.delete(key)
    }

    fn write(&self, batch: &WriteBatch) -> lidx::Result<()> {
        self.0.write(batch)
    }

    fn scan(
        &self,
        start: &[u8],
        len: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        out.clear();
        for entry in self.0.range(start..).take(len) {
            out.push(entry?);
        }
        Ok(())
    }

    fn compact(&self) -> lidx::Result<()> {
        self.0.compact()
    }

    fn wait_for_merges(&self) -> lidx::Result<()> {
        self.0.wait_for_merges()
    }

    fn stats(&self) -> ByteStoreStats {
        let s = self.0.stats();
        ByteStoreStats {
            memory_bytes: (s.memory_bytes - s.cache_bytes) as u64,
            disk_bytes: s.table_disk_bytes + s.log_disk_bytes,
            describe: describe_store(&s),
            merges: MergeStats {
                merges: s.merges,
                merge_nanos: (s.merge_seconds * 1e9) as u64,
                write_stalls: s.write_stalls,
                stall_nanos: (s.stall_seconds * 1e9) as u64,
            },
        }
    }

    fn dir(&self) -> &Path {
        self.0.dir()
    }
}

/// What a lidx store says it is in a record: its engine's figures, and its record cache's.
fn describe_store(s: &lidx::kv::StoreStats) -> String {
    let engine = if s.log_live_bytes > 0 {
        // A `log` store: its map, and what its collector keeps and rewrote.
        format!(
            "store:{}: {} live keys, {} bytes of map, a {} byte log of which {} live, \
             {} bytes rewritten by the collector",
            s.engine,
            s.table_records,
            s.model_bytes,
            s.log_disk_bytes,
            s.log_live_bytes,
            s.log_relocated_bytes
        )
    } else {
        format!(
            "store:{}: {} records on disk, {} dynamic keys, {} bytes of model or inner \
             nodes",
            s.engine, s.table_records, s.dynamic_keys, s.model_bytes
        )
    };
    if s.row_cache_bytes == 0 {
        return engine;
    }
    format!(
        "{engine}, a record cache holding {} records in {} bytes",
        s.row_cache_records, s.row_cache_bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lidx_gets_the_share_of_a_limit_a_peer_does_less_its_cache() {
        assert_eq!(own_memory(160_000_000, false), 120_000_000);
        assert_eq!(own_memory(160_000_000, true), 100_000_000);
        // 8192 blocks of 4 KiB: 32 MiB of cache.
        assert_eq!(
            lidx_budget_from_limit(160_000_000, 8192 * 4096, 1 << 20, false),
            120_000_000 - 33_554_432
        );
        assert_eq!(
            lidx_budget_from_limit(160_000_000, 8192 * 4096, 1 << 20, true),
            100_000_000 - 33_554_432
        );
        assert_eq!(
            lidx_budget_from_limit(400_000_000, 0, 1 << 20, false),
            300_000_000
        );
        // A cache larger than the share leaves the least budget a store takes.
        assert_eq!(
            lidx_budget_from_limit(16_000_000, 64 << 20, 1 << 20, false),
            1 << 20
        );
    }

    #[test]
    fn a_limit_sizes_nothing_itself_and_a_budget_splits_as_before() {
        let limited = PeerOptions::from_limit(160_000_000, true, false);
        assert_eq!(limited.memory_limit, Some(160_000_000));
        assert!(limited.point_reads && !limited.writes);
        assert_eq!(limited.cache_bytes, own_memory(160_000_000, false));
        let writing = PeerOptions::from_limit(160_000_000, true, true);
        assert_eq!(writing.cache_bytes, own_memory(160_000_000, true));
        let budget = PeerOptions::from_budget(16 << 20);
        assert_eq!(
            (budget.cache_bytes, budget.write_buffer_bytes),
            (12 << 20, 4 << 20)
        );
        assert_eq!(budget.memory_limit, None);
    }

    #[test]
    fn configuration_lines_show_bytes_in_binary_units() {
        assert_eq!(config_bytes(64 << 20), "64MiB");
        assert_eq!(config_bytes(100_000_000), "95.4MiB");
        assert_eq!(config_bytes(512 << 10), "512KiB");
        assert_eq!(config_bytes(39_915), "39.0KiB");
        assert_eq!(config_bytes(1000), "1000B");
    }
}
