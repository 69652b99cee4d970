//! Crash test of the store, for each engine: a child process (this test binary, re-executed
//! in "child mode" through `LIDX_STORE_CRASH_CHILD`) writes byte keys of 6 B to 3 KiB and
//! values of 8 B to 200 KiB into a `Store` with a tiny memory budget (merges or checkpoints
//! run all the time), in single puts, deletes and batches of up to 8 keys, printing each
//! operation before it starts (`begin`)
//! and after it is acknowledged (`ack`). The parent kills it with `SIGKILL` after a random
//! delay, many times over one directory, and after each kill reopens the store and checks that
//! every acknowledged write is there with its exact value, that the operation in flight is
//! there whole or not at all (a batch never half-applied), that a full scan shows exactly
//! what lookups show, that no table file or image of an interrupted merge or checkpoint
//! survives, and that `Store::check` finds nothing damaged. Fixed seeds; the directory is on the target's disk.

mod crash_child;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use lidx::kv::store::{CreateOptions, Engine, Store, StoreOptions, WriteBatch};
use lidx::kv::FsyncPolicy;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CHILD_ENV: &str = "LIDX_STORE_CRASH_CHILD";
const DIR_ENV: &str = "LIDX_STORE_CRASH_DIR";
const GEN_ENV: &str = "LIDX_STORE_CRASH_GEN";
const ITERATIONS: u64 = 16;
const KEYS: u64 = 2000;
const WRITERS: u64 = 2;
const CHILD_LIFETIME: Duration = Duration::from_secs(20);

fn options(generation: u64) -> StoreOptions {
    StoreOptions {
        fsync: if generation.is_multiple_of(3) {
            FsyncPolicy::Always
        } else {
            FsyncPolicy::Never
        },
        memory_budget: 256 << 10,
        cache_bytes: 1 << 20,
        ..StoreOptions::default()
    }
}

/// Key `k`'s bytes: a name, then padding that makes some keys long (up to 3 KiB).
fn key_bytes(k: u64) -> Vec<u8> {
    let mut key = format!("key{k:05}").into_bytes();
    let pad = if k.is_multiple_of(97) {
        3000
    } else {
        (k % 7 * 40) as usize
    };
    key.resize(key.len() + pad, b'.');
    key
}

/// The value written with `version`: its 8 bytes repeated, 8 B to 200 KiB.
fn value_bytes(version: u64) -> Vec<u8> {
    let len = if version.is_multiple_of(61) {
        200 << 10
    } else {
        8 * (1 + (version % 50) as usize)
    };
    version.to_le_bytes().repeat(len / 8)
}

fn version_of(key: u64, value: &[u8]) -> u64 {
    let v = u64::from_le_bytes(value[..8].try_into().unwrap());
    assert_eq!(value, value_bytes(v), "key {key}: the value is damaged");
    v
}

/// Entry point of the child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    if std::env::var(CHILD_ENV).is_err() {
        return;
    }
    let dir = std::path::PathBuf::from(std::env::var(DIR_ENV).unwrap());
    let generation: u64 = std::env::var(GEN_ENV).unwrap().parse().unwrap();
    let store = Store::open(&dir, &options(generation)).unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..WRITERS {
            let store = &store;
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(generation << 8 | t);
                let mut i = 0u64;
                while start.elapsed() < CHILD_LIFETIME {
                    // Writer t owns the keys = t mod WRITERS: one operation in flight per key.
                    let n = if rng.gen_range(0..3) == 0 {
                        rng.gen_range(2..=8)
                    } else {
                        1
                    };
                    let mut keys: Vec<u64> = (0..n)
                        .map(|_| rng.gen_range(0..KEYS / WRITERS) * WRITERS + t)
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    let version = generation << 32 | t << 24 | i;
                    let delete = rng.gen_range(0..4) == 0;
                    let list = keys
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(",");
                    let what = if delete {
                        "del".to_string()
                    } else {
                        version.to_string()
                    };
                    let say = |kind: &str| {
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "{kind} {t} {list} {what}").unwrap();
                        out.flush().unwrap();
                    };
                    say("begin");
                    let value = value_bytes(version);
                    if keys.len() == 1 {
                        let k = key_bytes(keys[0]);
                        if delete {
                            store.delete(&k).unwrap();
                        } else {
                            store.put(&k, &value).unwrap();
                        }
                    } else {
                        let mut b = WriteBatch::new();
                        for &k in &keys {
                            if delete {
                                b.delete(&key_bytes(k)).unwrap();
                            } else {
                                b.put(&key_bytes(k), &value).unwrap();
                            }
                        }
                        store.write(&b).unwrap();
                    }
                    say("ack");
                    i += 1;
                }
            });
        }
    });
}

/// One reported line: (kind, writer, keys, Some(version) or None for a delete).
type Line = (String, u64, Vec<u64>, Option<u64>);

fn run_and_kill(dir: &Path, generation: u64, delay: Duration) -> Vec<Line> {
    let envs = [
        (CHILD_ENV, "1".into()),
        (DIR_ENV, dir.as_os_str().to_owned()),
        (GEN_ENV, generation.to_string().into()),
    ];
    crash_child::run_and_kill(&envs, delay)
        .into_iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() == 4 && (f[0] == "begin" || f[0] == "ack")).then(|| {
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].split(',').map(|k| k.parse().unwrap()).collect(),
                    f[3].parse().ok(),
                )
            })
        })
        .collect()
}

#[test]
fn hybrid_store_survives_sigkill_during_writes_batches_and_merges() {
    survives_sigkill(Engine::Hybrid);
}

#[test]
fn btree_store_survives_sigkill_during_writes_batches_and_checkpoints() {
    survives_sigkill(Engine::BTree);
}

fn survives_sigkill(engine: Engine) {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = root.path().join("store");
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    Store::create(&dir, &create, &options(0))
        .unwrap()
        .close()
        .unwrap();
    let mut model: BTreeMap<u64, Option<u64>> = (0..KEYS).map(|k| (k, None)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0x5702_e5a5);
    let (mut acked_total, mut batches_in_flight, mut merges_seen) = (0, 0, 0u64);
    for generation in 1..=ITERATIONS {
        let delay = Duration::from_millis(rng.gen_range(80..500));
        let lines = run_and_kill(&dir, generation, delay);
        let mut in_flight: BTreeMap<u64, (Vec<u64>, Option<u64>)> = BTreeMap::new();
        for (kind, t, keys, version) in lines {
            if kind == "begin" {
                in_flight.insert(t, (keys, version));
            } else {
                for k in keys {
                    model.insert(k, version);
                }
                in_flight.remove(&t);
                acked_total += 1;
            }
        }
        let store = Store::open(&dir, &options(generation)).unwrap();
        let got: BTreeMap<u64, Option<u64>> = (0..KEYS)
            .map(|k| {
                let v = store.get(&key_bytes(k)).unwrap();
                (k, v.map(|v| version_of(k, &v)))
            })
            .collect();
        // The operation in flight: applied to all its keys or to none.
        for (keys, version) in in_flight.values() {
            batches_in_flight += usize::from(keys.len() > 1);
            // Keys the operation changes (a delete of an absent key changes nothing).
            let changes: Vec<u64> = keys
                .iter()
                .copied()
                .filter(|k| model[k] != *version)
                .collect();
            let applied: Vec<bool> = changes.iter().map(|k| got[k] == *version).collect();
            if applied.iter().any(|&a| a) {
                assert!(
                    applied.iter().all(|&a| a),
                    "generation {generation}: an operation on {keys:?} is half applied"
                );
                for k in changes {
                    model.insert(k, *version);
                }
            }
        }
        assert_eq!(got, model, "generation {generation}");
        // A full scan shows exactly what the lookups show.
        let from_scan: Vec<(Vec<u8>, u64)> = store
            .range(..)
            .map(|e| {
                let (k, v) = e.unwrap();
                let version = u64::from_le_bytes(v[..8].try_into().unwrap());
                (k, version)
            })
            .collect();
        let mut from_model: Vec<(Vec<u8>, u64)> = model
            .iter()
            .filter_map(|(k, v)| v.map(|v| (key_bytes(*k), v)))
            .collect();
        from_model.sort();
        assert_eq!(from_scan, from_model, "generation {generation}");
        // Only the live table (or checkpoint image) survives an interrupted merge (or
        // checkpoint).
        let prefix = match engine {
            Engine::Hybrid => "table-",
            Engine::BTree => "inner-",
        };
        let files = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with(prefix)
            })
            .count();
        let stats = store.stats();
        match engine {
            Engine::Hybrid => assert_eq!(
                files,
                usize::from(stats.table_records > 0),
                "generation {generation}"
            ),
            Engine::BTree => assert!(files <= 1, "generation {generation}: {files} images"),
        }
        merges_seen += files as u64;
        store.close().unwrap();
        let report = Store::check(&dir).unwrap();
        assert!(report.is_sound(), "generation {generation}: {report:?}");
    }
    eprintln!(
        "{acked_total} operations acknowledged, {batches_in_flight} batches in flight at a kill"
    );
    assert!(
        acked_total > 300,
        "the children acknowledged {acked_total} operations"
    );
    assert!(merges_seen > 0, "merges must run to be interrupted");
}
