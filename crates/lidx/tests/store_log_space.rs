//! The `log` engine reclaims its log and reopens from a checkpoint (issue 32): updates keep
//! the log within its space ratio (and without the collector they do not), a reopen replays
//! only the log after the checkpoint, deletes free their map entries (later, when a snapshot
//! needs them), a snapshot reads what it saw across collections, and a segment a crash left
//! after its collection is removed by the next writable open. Every read is checked against
//! a model, and every store ends sound under `check`.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use lidx::kv::{CreateOptions, Engine, FsyncPolicy, LogSpec, Store, StoreOptions};

const SEGMENT: u64 = 16 << 10;
const ALL: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Unbounded, Bound::Unbounded);

fn options(ratio: Option<f64>) -> StoreOptions {
    StoreOptions {
        fsync: FsyncPolicy::Never,
        log_segment_bytes: SEGMENT,
        log_space_ratio: ratio,
        ..StoreOptions::default()
    }
}

fn create(dir: &Path, map: &str, ratio: Option<f64>) -> Store {
    let create = CreateOptions {
        engine: Engine::Log(LogSpec::parse(map).unwrap()),
        ..CreateOptions::default()
    };
    Store::create(dir, &create, &options(ratio)).unwrap()
}

fn key(i: u64) -> [u8; 8] {
    (i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_be_bytes()
}

fn value(i: u64, round: u64) -> Vec<u8> {
    format!("{i:08}/{round:04}/{}", "v".repeat(80)).into_bytes()
}

fn check_model(store: &Store, model: &BTreeMap<[u8; 8], Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(store.get(k).unwrap().as_deref(), Some(&v[..]));
    }
    let all: Vec<(Vec<u8>, Vec<u8>)> = store.range(ALL).map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.to_vec(), v.clone())).collect();
    assert_eq!(all, want);
}

/// Bytes the log's live records take, exactly: one put a record, each record framed (16
/// bytes, then the body's kind and length), each operation its crc, kind, key (a trie
/// store's with its length), previous place, sequence number, and the value with its length.
fn live_log_bytes(model: &BTreeMap<[u8; 8], Vec<u8>>, trie: bool) -> u64 {
    model
        .values()
        .map(|v| (16 + 5 + 4 + 1 + usize::from(trie) + 8 + 16 + 1 + v.len()) as u64)
        .sum()
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = std::fs::read_dir(dir.join("wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    s.sort();
    s
}

/// Writes `keys` keys then updates each `rounds` times, a hot fifth of them in every round
/// and the rest once in a while, so that segments hold live and dead records mixed; returns
/// the model.
fn skewed(store: &Store, keys: u64, rounds: u64) -> BTreeMap<[u8; 8], Vec<u8>> {
    let mut model = churn(store, keys, 0);
    let hot = keys / 5;
    let cold_per_round = (keys - hot) / rounds;
    for round in 1..=rounds {
        let cold = hot + (round - 1) * cold_per_round..hot + round * cold_per_round;
        for i in (0..hot).chain(cold) {
            let v = value(i, round);
            store.put(&key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    model
}

/// Writes `keys` keys then updates each `rounds` times; returns the model.
fn churn(store: &Store, keys: u64, rounds: u64) -> BTreeMap<[u8; 8], Vec<u8>> {
    let mut model = BTreeMap::new();
    for round in 0..=rounds {
        for i in 0..keys {
            let v = value(i, round);
            store.put(&key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    model
}

#[test]
fn updates_stay_within_the_space_ratio_and_reopen_replays_only_the_tail() {
    for map in ["btree", "alex", "trie:lipp"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let store = create(&db, map, Some(1.5));
        let mut model = churn(&store, 1500, 10);
        model.extend(skewed(&store, 1500, 10));
        store.wait_for_merges().unwrap();
        let s = store.stats();
        let live = live_log_bytes(&model, map.starts_with("trie:"));
        let amp = s.log_disk_bytes as f64 / live as f64;
        // The collector runs when a segment closes: at most about two segments past the limit.
        let slack = 1.5 + (2 * SEGMENT) as f64 / live as f64;
        assert!(amp <= slack, "{map}: space amplification {amp:.2} ({s:?})");
        // The collector's estimate of the live bytes: the records it moved share one frame
        // per batch, so each live key may take up to a frame's bytes less than `live` counts
        // (how many were moved depends on when the collector ran), and each segment's header
        // adds its share.
        let frame = (1500 * (16 + 5)) as f64 / live as f64;
        let estimate = s.log_live_bytes as f64 / live as f64;
        assert!(
            (0.97 - frame..=1.03).contains(&estimate),
            "{map}: estimate {estimate:.3} ({s:?})"
        );
        assert!(s.log_relocated_bytes > 0 && s.merges > 0, "{map}: {s:?}");
        assert_eq!(s.dynamic_keys, 1500, "{map}");
        check_model(&store, &model);
        // Once every key is written again, every live record is a put of its own (the moved
        // batches are dead): the estimate is the exact count, within the segments' headers.
        model.extend(churn(&store, 1500, 0));
        store.wait_for_merges().unwrap();
        let s = store.stats();
        let estimate =
            s.log_live_bytes as f64 / live_log_bytes(&model, map.starts_with("trie:")) as f64;
        assert!(
            (0.97..=1.03).contains(&estimate),
            "{map}: estimate after a fresh round {estimate:.3} ({s:?})"
        );
        check_model(&store, &model);
        let written = 1500 * 23;
        store.close().unwrap();
        assert!(Store::check(&db).unwrap().is_sound());

        let store = Store::open(&db, &options(Some(1.5))).unwrap();
        let s = store.stats();
        assert!(
            s.recovered_records < written / 2,
            "{map}: replayed {} of {written} records",
            s.recovered_records
        );
        check_model(&store, &model);
        store.close().unwrap();
    }
}

#[test]
fn without_the_collector_the_log_keeps_every_update() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let store = create(&db, "btree", None);
    let model = churn(&store, 1500, 10);
    store.wait_for_merges().unwrap();
    let s = store.stats();
    let amp = s.log_disk_bytes as f64 / live_log_bytes(&model, false) as f64;
    assert!(amp > 8.0, "space amplification {amp:.2} ({s:?})");
    assert_eq!(s.log_relocated_bytes, 0);
    check_model(&store, &model);
    store.close().unwrap();
    let store = Store::open(&db, &options(Some(1.5))).unwrap();
    check_model(&store, &model);
    // Reopened with the collector on, `compact` brings the log down to its live records.
    store.compact().unwrap();
    let s = store.stats();
    let amp = s.log_disk_bytes as f64 / live_log_bytes(&model, false) as f64;
    assert!(
        amp < 1.5,
        "space amplification after compact {amp:.2} ({s:?})"
    );
    check_model(&store, &model);
}

#[test]
fn deletes_free_their_map_entries_once_no_snapshot_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let store = create(&db, "alex", Some(1.5));
    let mut model = churn(&store, 500, 0);
    for i in 0..250 {
        store.delete(&key(i)).unwrap();
        model.remove(&key(i));
    }
    // A checkpoint keeps deletes' entries while it reads the map, as a snapshot does, and
    // drops them when it ends.
    store.wait_for_merges().unwrap();
    assert_eq!(
        store.stats().dynamic_keys,
        250,
        "no snapshot: entries dropped"
    );

    let snap = store.snapshot();
    for i in 250..500 {
        store.delete(&key(i)).unwrap();
    }
    assert_eq!(store.stats().dynamic_keys, 250, "kept for the snapshot");
    for i in 250..500 {
        assert_eq!(snap.get(&key(i)).unwrap(), Some(value(i, 0)));
        assert_eq!(store.get(&key(i)).unwrap(), None);
    }
    drop(snap);
    // (A checkpoint in progress holds them until it ends.)
    store.wait_for_merges().unwrap();
    assert_eq!(
        store.stats().dynamic_keys,
        0,
        "dropped with the last snapshot"
    );
    // Later writes close the deletes' segments, which the collector frees.
    let mut model = BTreeMap::new();
    for round in 0..6 {
        for i in 1000..1300 {
            let v = value(i, round);
            store.put(&key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    store.compact().unwrap();
    assert_eq!(store.stats().dynamic_keys, 300, "{:?}", store.stats());
    check_model(&store, &model);
    store.close().unwrap();
    assert!(Store::check(&db).unwrap().is_sound());
    let store = Store::open(&db, &options(Some(1.5))).unwrap();
    check_model(&store, &model);
}

#[test]
fn a_snapshot_reads_what_it_saw_across_collections() {
    for map in ["btree", "trie:alex"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let store = create(&db, map, Some(1.5));
        let before = churn(&store, 800, 1);
        let snap = store.snapshot();
        let after = churn(&store, 800, 6);
        for i in 0..100 {
            store.delete(&key(i)).unwrap();
        }
        let pinned = segments(&db);
        store.compact().unwrap();
        assert!(
            pinned.iter().any(|p| !p.exists()),
            "{map}: segments the snapshot reads were collected"
        );
        for (k, v) in &before {
            assert_eq!(snap.get(k).unwrap().as_deref(), Some(&v[..]), "{map}");
        }
        let seen: Vec<_> = snap.range(ALL).map(|r| r.unwrap()).collect();
        let want: Vec<_> = before
            .iter()
            .map(|(k, v)| (k.to_vec(), v.clone()))
            .collect();
        assert_eq!(seen, want, "{map}");
        drop(snap);
        for i in 100..800 {
            assert_eq!(store.get(&key(i)).unwrap(), after.get(&key(i)).cloned());
        }
        store.close().unwrap();
        assert!(Store::check(&db).unwrap().is_sound());
    }
}

#[test]
fn a_collected_segment_left_by_a_crash_is_removed_by_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let store = create(&db, "btree", Some(1.5));
    let model = churn(&store, 1000, 3);
    let kept: Vec<(PathBuf, Vec<u8>)> = segments(&db)
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    store.compact().unwrap();
    store.close().unwrap();
    let now = segments(&db);
    let gone: Vec<&(PathBuf, Vec<u8>)> = kept.iter().filter(|(p, _)| !now.contains(p)).collect();
    assert!(!gone.is_empty(), "compact collected segments");
    // As if the store stopped after the checkpoint's commit, before the removal.
    for (p, b) in &gone {
        std::fs::write(p, b).unwrap();
    }
    let read_only = StoreOptions {
        read_only: true,
        ..options(Some(1.5))
    };
    let store = Store::open(&db, &read_only).unwrap();
    check_model(&store, &model);
    drop(store);
    assert!(
        gone.iter().all(|(p, _)| p.exists()),
        "a read-only open changes nothing"
    );
    let store = Store::open(&db, &options(Some(1.5))).unwrap();
    assert!(gone.iter().all(|(p, _)| !p.exists()));
    check_model(&store, &model);
    store.close().unwrap();
    assert!(Store::check(&db).unwrap().is_sound());
}

#[test]
fn bad_collector_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for bad in [
        StoreOptions {
            log_space_ratio: Some(1.0),
            ..options(None)
        },
        StoreOptions {
            log_space_ratio: Some(f64::NAN),
            ..options(None)
        },
        StoreOptions {
            log_segment_bytes: 100,
            ..options(None)
        },
        StoreOptions {
            log_segment_bytes: 2 << 30,
            ..options(None)
        },
    ] {
        let create = CreateOptions {
            engine: Engine::parse("log:btree").unwrap(),
            ..CreateOptions::default()
        };
        assert!(matches!(
            Store::create(&db, &create, &bad),
            Err(lidx::Error::InvalidParameter { .. })
        ));
    }
}

/// Point-in-time recovery of a store with a checkpoint: a damaged record after it cuts the
/// log there (the segments after it set aside), and the store opens at the state before it.
#[test]
fn point_in_time_recovery_cuts_after_the_checkpoint() {
    use lidx::kv::WalRecovery;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // No collector: each put is one record, so record n is the nth put.
    let store = create(&db, "btree", None);
    let mut puts = Vec::new();
    // A checkpoint of 5,000 keys (80 KB): the next is due after as many bytes of log, so the
    // 45 KB of updates after it stay in three segments it does not cover.
    for (round, keys) in [(0, 5000), (1, 300)] {
        for i in 0..keys {
            let v = value(i, round);
            store.put(&key(i), &v).unwrap();
            puts.push((key(i), v));
        }
        if round == 0 {
            store.compact().unwrap();
        }
    }
    // Dropped, not closed: a close could checkpoint again, past the damage.
    drop(store);
    // Damage the first record of the first segment the last checkpoint does not cover (the
    // collector's thread checkpoints as the log grows); later segments, if any, are set aside.
    let (_, manifest) = lidx::raw::kv::ManifestStore::open(&db).unwrap();
    let first_of = |p: &PathBuf| -> u64 {
        let name = p.file_name().unwrap().to_str().unwrap();
        name["wal-".len()..name.len() - ".log".len()]
            .parse()
            .unwrap()
    };
    let segs = segments(&db);
    let after: Vec<&PathBuf> = segs
        .iter()
        .filter(|p| first_of(p) > manifest.static_seq + 1)
        .collect();
    assert!(
        after.len() >= 2,
        "{segs:?}, checkpoint at {}",
        manifest.static_seq
    );
    let victim = after[0];
    let mut bytes = std::fs::read(victim).unwrap();
    bytes[48 + 30] ^= 0x40;
    std::fs::write(victim, &bytes).unwrap();
    let options = StoreOptions {
        recovery: WalRecovery::PointInTime,
        ..options(None)
    };
    let store = Store::open(&db, &options).unwrap();
    let dropped = store.recovery().expect("the cut is reported").clone();
    let kept = usize::try_from(dropped.first_seq - 1).unwrap();
    assert!(kept >= 5000 && kept < puts.len(), "cut at {kept}");
    let mut model = BTreeMap::new();
    for (k, v) in &puts[..kept] {
        model.insert(*k, v.clone());
    }
    check_model(&store, &model);
    store.close().unwrap();
}

/// Snapshots taken and read by two threads while the collector moves and removes segments
/// under updates and deletes never fail, never change, and see a state the writer passed
/// through: every key from 100 on, and of keys 0-99 (deleted in order) the ones not yet
/// deleted when the snapshot was taken.
#[test]
fn snapshots_read_while_the_collector_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let store = create(&db, "alex", Some(1.5));
    skewed(&store, 600, 2);
    let reader = || {
        for _ in 0..30 {
            let snap = store.snapshot();
            let first: Vec<_> = snap.range(ALL).map(|r| r.unwrap()).collect();
            let keys: std::collections::BTreeSet<[u8; 8]> = first
                .iter()
                .map(|(k, _)| k[..].try_into().unwrap())
                .collect();
            assert!(
                (100..600).all(|i| keys.contains(&key(i))),
                "a key from 100 on is missing"
            );
            let deleted = (0..100).take_while(|&i| !keys.contains(&key(i))).count() as u64;
            assert!(
                (deleted..100).all(|i| keys.contains(&key(i))),
                "keys below 100 are deleted in order: {deleted} gone, then a gap"
            );
            for (k, v) in first.iter().step_by(7) {
                assert_eq!(snap.get(k).unwrap().as_ref(), Some(v));
            }
            let again: Vec<_> = snap.range(ALL).map(|r| r.unwrap()).collect();
            assert_eq!(first, again);
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            skewed(&store, 600, 12);
            for i in 0..100 {
                store.delete(&key(i)).unwrap();
            }
        });
        s.spawn(reader);
        reader();
    });
    store.close().unwrap();
    assert!(Store::check(&db).unwrap().is_sound());
}
