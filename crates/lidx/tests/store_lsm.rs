//! The `lsm` engine's own behaviour beside the shared suites (conformance, faults,
//! concurrency): its runs reach several levels and compact, its shape and budget are checked
//! before anything is written, a read-only open waits for nothing, and a table of the wrong
//! kind where a run belongs is refused.

use std::path::Path;

use lidx::kv::{CreateOptions, Engine, FsyncPolicy, LsmSpec, Store, StoreOptions};
use lidx::Error;

fn lsm_spec(ratio: usize, l0: usize) -> LsmSpec {
    LsmSpec {
        ratio,
        l0,
        bits: 10,
        runs: 1,
    }
}

fn lsm(ratio: usize, l0: usize) -> CreateOptions {
    CreateOptions {
        engine: Engine::Lsm(lsm_spec(ratio, l0)),
        ..CreateOptions::default()
    }
}

fn options(budget: usize) -> StoreOptions {
    StoreOptions {
        fsync: FsyncPolicy::Never,
        memory_budget: budget,
        ..StoreOptions::default()
    }
}

fn key(i: u64) -> [u8; 8] {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 8).to_be_bytes()
}

#[test]
fn writes_flush_into_levels_that_compact_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::create(&path, &lsm(2, 2), &options(8 << 10)).unwrap();
    for i in 0..4_000u64 {
        store.put(&key(i), &i.to_le_bytes().repeat(4)).unwrap();
    }
    for i in (0..4_000u64).step_by(3) {
        store.delete(&key(i)).unwrap();
    }
    store.compact().unwrap();
    let stats = store.stats();
    assert!(stats.lsm_levels >= 3, "{stats:?}");
    assert!(stats.compaction_bytes > 0, "{stats:?}");
    assert!(stats.filter_bytes > 0, "{stats:?}");
    assert!(stats.lsm_written_bytes >= stats.compaction_bytes);
    store.close().unwrap();
    assert!(Store::check(&path).unwrap().is_sound());
    let store = Store::open(&path, &options(8 << 10)).unwrap();
    for i in 0..4_000u64 {
        let want = (i % 3 != 0).then(|| i.to_le_bytes().repeat(4));
        assert_eq!(store.get(&key(i)).unwrap(), want, "key {i}");
    }
    assert_eq!(store.range(..).count(), 4_000 - 1_334);
}

/// Writes 400 keys three times over and deletes every fourth on a new store of `spec`, checks
/// every read through compaction, reopen and `check`, and returns the stats after compacting.
fn overwrite_and_read_back(spec: LsmSpec) -> lidx::kv::StoreStats {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let create = CreateOptions {
        engine: Engine::Lsm(spec),
        ..CreateOptions::default()
    };
    let store = Store::create(&path, &create, &options(8 << 10)).unwrap();
    for round in 0..3u64 {
        for i in 0..400u64 {
            store
                .put(&key(i), &(i + round).to_le_bytes().repeat(4))
                .unwrap();
        }
    }
    for i in (0..400u64).step_by(4) {
        store.delete(&key(i)).unwrap();
    }
    store.compact().unwrap();
    let stats = store.stats();
    store.close().unwrap();
    assert!(Store::check(&path).unwrap().is_sound());
    let store = Store::open(&path, &options(8 << 10)).unwrap();
    for i in 0..400u64 {
        let want = (i % 4 != 0).then(|| (i + 2).to_le_bytes().repeat(4));
        assert_eq!(store.get(&key(i)).unwrap(), want, "key {i}");
    }
    assert_eq!(store.range(..).count(), 400 - 100);
    stats
}

#[test]
fn a_leveled_label_is_the_one_older_builds_wrote_and_a_tiered_one_names_its_runs() {
    let leveled = LsmSpec::default();
    assert_eq!(leveled.label(), "lsm:ratio=10:l0=4:bits=10");
    assert_eq!(LsmSpec::parse("lsm:ratio=10:l0=4:bits=10"), Some(leveled));
    assert_eq!(LsmSpec::parse("lsm:ratio=10:l0=4:bits=10").unwrap().runs, 1);
    let tiered = LsmSpec { runs: 4, ..leveled };
    assert_eq!(tiered.label(), "lsm:ratio=10:l0=4:bits=10:runs=4");
    assert_eq!(LsmSpec::parse(&tiered.label()), Some(tiered));
}

#[test]
fn tiered_levels_read_back_and_rewrite_less_than_leveled() {
    let leveled = overwrite_and_read_back(LsmSpec {
        runs: 1,
        ..lsm_spec(2, 2)
    });
    let tiered = overwrite_and_read_back(LsmSpec {
        runs: 2,
        ..lsm_spec(2, 2)
    });
    assert!(tiered.lsm_levels >= 3, "{tiered:?}");
    // The same writes, flushed alike: tiered merges rewrite each run into the next level
    // without the run already there.
    assert!(
        tiered.compaction_bytes < leveled.compaction_bytes,
        "tiered {tiered:?}, leveled {leveled:?}"
    );
}

#[test]
fn a_shape_or_budget_out_of_range_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for (create, budget) in [
        (lsm(10, 0), 1 << 20),
        (lsm(1, 4), 1 << 20),
        (lsm(65, 4), 1 << 20),
        (
            CreateOptions {
                engine: Engine::Lsm(LsmSpec {
                    ratio: 10,
                    l0: 4,
                    bits: 65,
                    runs: 1,
                }),
                ..CreateOptions::default()
            },
            1 << 20,
        ),
        (lsm(10, 4), 4096),
    ] {
        let path = dir.path().join("db");
        let got = Store::create(&path, &create, &options(budget));
        assert!(
            matches!(got, Err(Error::InvalidParameter { .. })),
            "{create:?} {budget}: {:?}",
            got.err()
        );
        assert!(!path.join("STORE").exists(), "{create:?}: nothing written");
    }
}

#[test]
fn a_read_only_open_waits_for_no_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::create(&path, &lsm(2, 2), &options(16 << 10)).unwrap();
    for i in 0..5_000u64 {
        store.put(&key(i), b"value").unwrap();
    }
    store.close().unwrap();
    let reader = Store::open(
        &path,
        &StoreOptions {
            read_only: true,
            ..options(16 << 10)
        },
    )
    .unwrap();
    reader.wait_for_merges().unwrap();
    assert_eq!(reader.get(&key(7)).unwrap(), Some(b"value".to_vec()));
    assert!(matches!(reader.compact(), Err(Error::ReadOnly { .. })));
}

#[test]
fn a_hybrid_table_where_a_run_belongs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (runs, tables) = (dir.path().join("lsm"), dir.path().join("hybrid"));
    let store = Store::create(&runs, &lsm(10, 4), &options(1 << 20)).unwrap();
    store.put(b"k", b"v").unwrap();
    store.compact().unwrap();
    store.close().unwrap();
    let hybrid = CreateOptions::default();
    let store = Store::create(&tables, &hybrid, &options(1 << 20)).unwrap();
    store.put(b"k", b"v").unwrap();
    store.compact().unwrap();
    store.close().unwrap();
    let run = only_file(&runs, "run-");
    let table = only_file(&tables, "table-");
    // The table in the run's place, under the run's name: refused (a foreign owner or the
    // wrong kind), never read as tagged records.
    std::fs::copy(&table, &run).unwrap();
    assert!(Store::open(&runs, &options(1 << 20)).is_err());
    assert!(!Store::check(&runs).unwrap().is_sound());
}

fn only_file(dir: &Path, prefix: &str) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}
