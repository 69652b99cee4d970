//! Issue 32 part 3: under `lidx ycsb --memory-limit L` each peer sizes itself from `L` as its
//! documentation recommends, and says so in its `config` line; without a limit, the budget's
//! split as before. The peers of every build (redb, fjall, LMDB); RocksDB's sizes are its
//! module's unit test (built with the feature only).

use lidx_bench::byte_store::{ByteStore, PeerEngine, PeerOptions};
use lidx_peers::{fjall::Fjall, lmdb::Lmdb, redb::Redb};

fn opened(engine: &dyn PeerEngine, options: &PeerOptions) -> (String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let store: Box<dyn ByteStore> = engine.create(&dir.path().join("db"), options).unwrap();
    (store.config(), store.stats().memory_bytes)
}

#[test]
fn under_a_limit_each_peer_sizes_itself_as_its_docs_say_and_says_so() {
    let limit = PeerOptions::from_limit(160_000_000, true, false);
    // redb: its one cache, three quarters of the limit.
    let (config, memory) = opened(&Redb, &limit);
    assert_eq!(memory, 120_000_000);
    assert!(config.starts_with("cache=114.4MiB "), "{config}");
    // Five eighths when the workload writes.
    let (_, memory) = opened(&Redb, &PeerOptions::from_limit(160_000_000, true, true));
    assert_eq!(memory, 100_000_000);
    // fjall: a quarter of the limit as its cache, memtables of L/16, no last-level filters.
    let (config, memory) = opened(&Fjall, &limit);
    assert_eq!(
        config,
        "cache=38.1MiB memtable=9.5MiB expect_point_read_hits=on filters=fjall's default \
         compression=none"
    );
    assert_eq!(memory, 40_000_000 + 2 * 10_000_000);
    // A small limit keeps fjall's memtable at the 8 MiB its docs name as the least.
    let (config, _) = opened(&Fjall, &PeerOptions::from_limit(16_000_000, false, false));
    assert!(
        config.contains("memtable=8MiB expect_point_read_hits=on"),
        "{config}"
    );
    // LMDB: nothing to size, the OS page cache is its cache.
    let (config, memory) = opened(&Lmdb, &limit);
    assert_eq!(memory, 0);
    assert!(
        config.starts_with("map_size=1024GiB cache=the OS page cache"),
        "{config}"
    );
}

#[test]
fn without_a_limit_the_budget_is_split_as_before() {
    let budget = PeerOptions::from_budget(4 << 20);
    let (config, memory) = opened(&Redb, &budget);
    assert_eq!(memory, 3 << 20);
    assert!(config.starts_with("cache=3MiB "), "{config}");
    let (config, memory) = opened(&Fjall, &budget);
    assert!(
        config.starts_with("cache=3MiB memtable=512KiB expect_point_read_hits=off"),
        "{config}"
    );
    assert_eq!(memory, (3 << 20) + (1 << 20));
}
