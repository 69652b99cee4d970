//! The key-value stores lidx's store is measured against, each behind the store shape the
//! YCSB runner measures lidx's own engines through ([`lidx_bench::byte_store::ByteStore`]):
//! one file per peer, each a [`PeerEngine`] that creates a fresh store in a directory.
//!
//! | name      | engine                     | file         |
//! |-----------|----------------------------|--------------|
//! | `redb`    | redb (copy-on-write B-tree) | [`redb`]    |
//! | `fjall`   | fjall (LSM-tree)           | [`fjall`]    |
//! | `lmdb`    | LMDB through heed (mmap B+-tree) | [`lmdb`] |
//! | `rocksdb` | RocksDB (LSM-tree, C++), only with the cargo feature `rocksdb` | `rocksdb.rs` |
//! | `rocksdb-rows` | the same with its row cache (`lidx ycsb --row-cache`) | `rocksdb.rs` |
//!
//! The same settings for all, chosen to match lidx's store under `lidx ycsb`'s defaults:
//!
//! * **Durability: no fsync per write.** lidx's store with `--fsync never` hands every write
//!   to the OS (its log) before acknowledging it: it survives a crash of the process, not of
//!   the machine. RocksDB (`sync = false`, write-ahead log on), fjall (its journal flushed to
//!   the OS per write, its default) and LMDB (`MDB_NOSYNC`: each commit written to the file,
//!   not synced) give the same. redb has no such level: `Durability::None` keeps a commit in
//!   redb's memory until a later durable commit, weaker than the others (it favours redb);
//!   its other level, `Immediate`, fsyncs every commit.
//! * **No compression** anywhere (lidx compresses nothing).
//! * **Memory.** Without a memory limit, the budget split into cache and write buffer
//!   ([`lidx_bench::byte_store::PeerOptions::from_budget`]). LMDB has neither and lives on the
//!   OS page cache, as RocksDB, fjall and redb do besides their own caches: `lidx ycsb
//!   --memory-limit` holds every engine's run, its heap and the page cache it faults in, to
//!   one cgroup limit ([`lidx_bench::memory_limit`]), and every run records its resident
//!   memory. Under that limit each peer sizes itself from it as its own documentation
//!   recommends for the workload ([`lidx_bench::byte_store::PeerOptions::from_limit`]; each
//!   peer's module cites what it followed):
//!
//!   | peer | under `--memory-limit L` |
//!   |---|---|
//!   | `rocksdb` | block cache 5L/8 (L/2 when the workload writes) with index and filter blocks, L0's pinned; 2 memtables of L/16 (1-64 MiB); bloom 10 bits/key; `optimize_filters_for_hits`; `OptimizeForPointLookup` without scans |
//!   | `redb` | `set_cache_size` 3L/4 (5L/8 when the workload writes) |
//!   | `fjall` | cache L/4 (its docs: 20-25% of memory); memtable L/16 (8-64 MiB); `expect_point_read_hits` |
//!   | `lmdb` | nothing to size: a 1 TiB map over the OS page cache, the whole limit |
//!
//!   Each store says what it was opened with ([`lidx_bench::byte_store::ByteStore::config`]):
//!   a `config` line in every record.
//!
//! RocksDB is C++, so the default build does not have it: there `rocksdb` is
//! [`Unavailable`](lidx_bench::byte_store::Unavailable), and a run that names it reports it
//! skipped, saying how to build it in. The quick way links Debian's library (seconds, after
//! `.ci/install-rocksdb`):
//!
//! ```text
//! ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu ROCKSDB_INCLUDE_DIR=/usr/include \
//!   cargo build --release -p lidx-cli --features rocksdb
//! ```
//!
//! without the two variables it compiles RocksDB from source (hours on two shared cores).

use std::sync::Arc;

use lidx_bench::byte_store::PeerEngine;

mod adapter;
pub mod fjall;
pub mod lmdb;
pub mod redb;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;

/// Every peer by name, `rocksdb` and `rocksdb-rows`
/// [`Unavailable`](lidx_bench::byte_store::Unavailable) unless built with the feature.
pub fn all() -> Vec<Arc<dyn PeerEngine>> {
    let mut all: Vec<Arc<dyn PeerEngine>> = vec![
        Arc::new(redb::Redb),
        Arc::new(fjall::Fjall),
        Arc::new(lmdb::Lmdb),
    ];
    all.extend(rocks());
    all
}

#[cfg(feature = "rocksdb")]
fn rocks() -> [Arc<dyn PeerEngine>; 2] {
    [Arc::new(rocksdb::RocksDb), Arc::new(rocksdb::RocksDbRows)]
}

#[cfg(not(feature = "rocksdb"))]
fn rocks() -> [Arc<dyn PeerEngine>; 2] {
    ["rocksdb", "rocksdb-rows"].map(unavailable_rocksdb)
}

#[cfg(not(feature = "rocksdb"))]
fn unavailable_rocksdb(name: &'static str) -> Arc<dyn PeerEngine> {
    Arc::new(lidx_bench::byte_store::Unavailable {
        name,
        why: "not in this build: run `.ci/install-rocksdb`, then build with \
              `ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu ROCKSDB_INCLUDE_DIR=/usr/include \
              cargo build --release -p lidx-cli --features rocksdb` (without the two variables \
              it compiles RocksDB from source)"
            .to_string(),
    })
}
