//! The hybrid index (`lidx::kv::HybridIndex`) against a `BTreeMap` model: random operation sequences
//! with tiny merge triggers so that merges (and reopens) happen often, every static model,
//! several key types, reopen and read-only opens, concurrency, and every kind of bad input.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx::kv::FsyncPolicy;
use lidx::kv::{HybridIndex, HybridOptions};
use lidx::raw::kv::hybrid::{DynamicMap, MergeTrigger, SortedRuns, StaticModel, StdMap};
use lidx::raw::kv::WalOptions;
use lidx::{Error, Key, Str16};
use proptest::prelude::*;

const PS: usize = 8;

fn storage(dir: &Path) -> Arc<Storage> {
    let ram = SimProfile::named("ram").unwrap();
    Arc::new(Storage::new(dir, DeviceKind::Sim(ram), 4096).unwrap())
}

fn options(model: StaticModel, trigger: usize, threads: usize) -> HybridOptions {
    HybridOptions {
        model,
        trigger: MergeTrigger::Constant(trigger),
        merge_threads: threads,
        wal: WalOptions {
            fsync: FsyncPolicy::Never,
            ..WalOptions::default()
        },
        ..HybridOptions::default()
    }
}

/// A u64 store in `dir` loaded with `keys`, each with its version-0 value.
fn create_u64(dir: &Path, keys: &[u64], opts: HybridOptions) -> HybridIndex<u64> {
    HybridIndex::create(
        storage(dir),
        keys,
        |_, k, out| out.copy_from_slice(&value(*k, 0)),
        opts,
    )
    .unwrap()
}

fn value(k: u64, version: u64) -> [u8; PS] {
    (k.wrapping_mul(0x9E37_79B9) ^ version).to_le_bytes()
}

/// Every key of the model is found with its value, every other probed key is absent, and full
/// and partial scans match.
fn check<K: Key + Ord, D: DynamicMap<K>>(
    h: &HybridIndex<K, D>,
    model: &BTreeMap<K, [u8; PS]>,
    probes: &[K],
) {
    let mut buf = [0u8; PS];
    for k in probes {
        let found = h.get(k, &mut buf).unwrap();
        match model.get(k) {
            Some(v) => {
                assert!(found, "{k:?} missing");
                assert_eq!(&buf, v, "{k:?}");
            }
            None => assert!(!found, "{k:?} present"),
        }
    }
    for start in probes.iter().take(8) {
        for limit in [1, 3, 1000] {
            let (mut ks, mut ps) = (Vec::new(), Vec::new());
            let n = h.scan(start, limit, &mut ks, &mut ps).unwrap();
            let want: Vec<(K, [u8; PS])> = model
                .range(start..)
                .take(limit)
                .map(|(k, v)| (*k, *v))
                .collect();
            assert_eq!(n, want.len(), "scan from {start:?} limit {limit}");
            assert_eq!(ks, want.iter().map(|w| w.0).collect::<Vec<_>>());
            assert_eq!(ps, want.iter().flat_map(|w| w.1).collect::<Vec<_>>());
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(u64, u64),
    Delete(u64),
    Get(u64),
    Scan(u64, usize),
    Merge,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..300, any::<u64>()).prop_map(|(k, v)| Op::Put(k, v)),
        3 => (0u64..300).prop_map(Op::Delete),
        3 => (0u64..300).prop_map(Op::Get),
        2 => (0u64..300, 0usize..20).prop_map(|(k, n)| Op::Scan(k, n)),
        1 => Just(Op::Merge),
        1 => Just(Op::Reopen),
    ]
}

fn model_strategy() -> impl Strategy<Value = StaticModel> {
    prop_oneof![
        Just(StaticModel::LecoZoneMap),
        Just(StaticModel::Pgm { eps: 4 }),
        Just(StaticModel::CprPgm { eps: 8 }),
        Just(StaticModel::PgmZero { pages: 1.5 }),
        Just(StaticModel::Auto { pages: 1.5 }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn matches_btreemap(
        init in proptest::collection::btree_set(0u64..300, 0..100),
        ops in proptest::collection::vec(op(), 1..150),
        model in model_strategy(),
        trigger in 1usize..12,
        threads in 1usize..4,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let opts = options(model, trigger, threads);
        let keys: Vec<u64> = init.iter().copied().collect();
        let mut h = HybridIndex::create(storage(dir.path()), &keys, |_, k, out| {
            out.copy_from_slice(&value(*k, 0))
        }, opts.clone()).unwrap();
        let mut model: BTreeMap<u64, [u8; PS]> =
            keys.iter().map(|&k| (k, value(k, 0))).collect();
        let mut buf = [0u8; PS];
        for op in ops {
            match op {
                Op::Put(k, v) => {
                    h.put(k, &value(k, v)).unwrap();
                    model.insert(k, value(k, v));
                }
                Op::Delete(k) => {
                    h.delete(&k).unwrap();
                    model.remove(&k);
                }
                Op::Get(k) => {
                    let found = h.get(&k, &mut buf).unwrap();
                    prop_assert_eq!(found.then_some(buf), model.get(&k).copied());
                }
                Op::Scan(k, n) => {
                    let (mut ks, mut ps) = (Vec::new(), Vec::new());
                    h.scan(&k, n, &mut ks, &mut ps).unwrap();
                    let want: Vec<u64> = model.range(k..).take(n).map(|(k, _)| *k).collect();
                    prop_assert_eq!(ks, want);
                }
                Op::Merge => h.merge_now().unwrap(),
                Op::Reopen => {
                    drop(h);
                    h = HybridIndex::open(storage(dir.path()), opts.clone()).unwrap();
                }
            }
        }
        h.wait_for_merges().unwrap();
        let probes: Vec<u64> = (0..300).collect();
        check(&h, &model, &probes);
        let est = h.len_estimate();
        h.merge_now().unwrap();
        prop_assert_eq!(h.stats().static_len, model.len());
        prop_assert_eq!(h.len_estimate(), model.len());
        prop_assert!(est <= 400);
        check(&h, &model, &probes);
    }
}

/// Keys of every type through merges with every model and 3 merge threads, then a reopen.
fn every_model<K: Key + Ord>(make: impl Fn(u64) -> K) {
    for model in [
        StaticModel::LecoZoneMap,
        StaticModel::Pgm { eps: 16 },
        StaticModel::CprPgm { eps: 16 },
        StaticModel::PgmZero { pages: 1.2 },
        StaticModel::Auto { pages: 1.5 },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let opts = options(model, 500, 3);
        let keys: Vec<K> = (0..3000u64).map(|i| make(i * 3)).collect();
        let h = HybridIndex::create(
            storage(dir.path()),
            &keys,
            |i, _, out| out.copy_from_slice(&value(i as u64 * 3, 0)),
            opts.clone(),
        )
        .unwrap();
        let mut model_map: BTreeMap<K, [u8; PS]> = (0..3000u64)
            .map(|i| (make(i * 3), value(i * 3, 0)))
            .collect();
        for i in 0..2500u64 {
            let k = (i * 7919) % 9000;
            if i % 5 == 0 {
                h.delete(&make(k)).unwrap();
                model_map.remove(&make(k));
            } else {
                h.put(make(k), &value(k, i)).unwrap();
                model_map.insert(make(k), value(k, i));
            }
        }
        h.wait_for_merges().unwrap();
        let stats = h.stats();
        assert!(stats.merges >= 3, "{model:?}: {stats:?}");
        assert!(stats.static_files >= 2, "{model:?}: {stats:?}");
        let probes: Vec<K> = (0..9001u64).step_by(7).map(&make).collect();
        check(&h, &model_map, &probes);
        drop(h);
        let h = HybridIndex::<K>::open(storage(dir.path()), opts).unwrap();
        check(&h, &model_map, &probes);
    }
}

#[test]
fn every_model_and_key_type() {
    every_model(|i| i);
    every_model(|i| {
        let mut s: Str16 = [b'k'; 16];
        s[8..].copy_from_slice(&i.to_be_bytes());
        s
    });
}

/// Puts, updates and deletes through merges with the dynamic stage `D`, then checks.
fn i64_keys_with_stage<D: DynamicMap<i64>>() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<i64> = (-500..500).map(|i| i * 10).collect();
    let h = HybridIndex::<i64, D>::create_with(
        storage(dir.path()),
        &keys,
        |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
        options(StaticModel::LecoZoneMap, 50, 2),
    )
    .unwrap();
    let mut model: BTreeMap<i64, [u8; PS]> = keys.iter().map(|&k| (k, k.to_le_bytes())).collect();
    for k in -600..600i64 {
        if k % 3 == 0 {
            h.put(k, &(k * 2).to_le_bytes()).unwrap();
            model.insert(k, (k * 2).to_le_bytes());
        } else if k % 7 == 0 {
            h.delete(&k).unwrap();
            model.remove(&k);
        }
    }
    h.wait_for_merges().unwrap();
    assert!(h.stats().merges > 0);
    let probes: Vec<i64> = (-700..700).collect();
    check(&h, &model, &probes);
}

#[test]
fn i64_and_f64_keys_and_other_stages() {
    i64_keys_with_stage::<StdMap<i64>>();
    i64_keys_with_stage::<SortedRuns<i64>>();

    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<f64> = (0..100).map(|i| i as f64 * 0.5 - 20.0).collect();
    let h = HybridIndex::create(
        storage(dir.path()),
        &keys,
        |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
        options(StaticModel::Pgm { eps: 4 }, 10, 1),
    )
    .unwrap();
    h.put(-100.25, &1f64.to_le_bytes()).unwrap();
    h.delete(&-20.0).unwrap();
    h.merge_now().unwrap();
    let (mut ks, mut ps) = (Vec::new(), Vec::new());
    h.scan(&f64::NEG_INFINITY, 2, &mut ks, &mut ps).unwrap();
    assert_eq!(ks, vec![-100.25, -19.5]);
    assert!(matches!(
        h.put(f64::NAN, &[0; PS]),
        Err(Error::InvalidKey { .. })
    ));
    assert!(matches!(
        h.scan(&f64::NAN, 1, &mut ks, &mut ps),
        Err(Error::InvalidKey { .. })
    ));
}

#[test]
fn reopen_read_only_and_file_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(StaticModel::LecoZoneMap, 100, 2);
    let keys: Vec<u64> = (0..1000).map(|i| i * 2).collect();
    let h = create_u64(dir.path(), &keys, opts.clone());
    let mut model: BTreeMap<u64, [u8; PS]> = keys.iter().map(|&k| (k, value(k, 0))).collect();
    for k in 0..450u64 {
        h.put(k * 5 + 1, &value(k, 1)).unwrap();
        model.insert(k * 5 + 1, value(k, 1));
    }
    h.wait_for_merges().unwrap();
    assert!(h.stats().merges >= 3);
    // Only the live generation's files remain, and the log was trimmed.
    let statics = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("static-"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(statics(dir.path()).len(), h.stats().static_files);
    let segments = std::fs::read_dir(dir.path().join("wal")).unwrap().count();
    assert!(segments <= 2, "{segments} log segments left");
    assert!(h.memory_bytes() > 0 && h.disk_bytes() > 0);
    assert!(h.describe().contains("hybrid<u64>"));
    drop(h);

    // A leftover of a crashed merge is removed at open (read-write), kept by read-only.
    std::fs::write(dir.path().join("static-0000000099-0000.sli"), b"junk").unwrap();
    let ro = HybridIndex::<u64>::open_read_only(storage(dir.path()), opts.clone()).unwrap();
    let probes: Vec<u64> = (0..2300).collect();
    check(&ro, &model, &probes);
    assert!(matches!(ro.put(1, &[0; PS]), Err(Error::ReadOnly { .. })));
    assert!(matches!(ro.delete(&1), Err(Error::ReadOnly { .. })));
    assert!(matches!(ro.merge_now(), Err(Error::ReadOnly { .. })));
    assert!(dir.path().join("static-0000000099-0000.sli").exists());
    drop(ro);
    let h = HybridIndex::<u64>::open(storage(dir.path()), opts).unwrap();
    assert!(!dir.path().join("static-0000000099-0000.sli").exists());
    check(&h, &model, &probes);
}

#[test]
fn memory_budget_and_ratio_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<u64> = (0..20_000).map(|i| i * 4).collect();
    let mut opts = options(StaticModel::LecoZoneMap, usize::MAX, 1);
    opts.trigger = MergeTrigger::Ratio(10.0);
    let h = create_u64(dir.path(), &keys, opts);
    for k in 0..1999u64 {
        h.put(k * 4 + 1, &value(k, 1)).unwrap();
    }
    assert_eq!(h.stats().merges, 0, "20000 / 10 entries fit");
    for k in 1999..2100u64 {
        h.put(k * 4 + 1, &value(k, 1)).unwrap();
    }
    h.wait_for_merges().unwrap();
    assert_eq!(h.stats().merges, 1);
    drop(h);

    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(StaticModel::LecoZoneMap, usize::MAX, 1);
    let budget = 64 * 1024;
    opts.memory_budget = Some(budget);
    let h = create_u64(dir.path(), &keys, opts);
    for k in 0..20_000u64 {
        h.put(k * 4 + 2, &value(k, 1)).unwrap();
        let s = h.stats();
        // The frozen stage of a running merge is held besides the new dynamic stage, and a
        // stage's arena grows by doubling: at most three budgets at any time.
        assert!(
            s.dynamic_bytes + s.static_memory_bytes <= 3 * budget,
            "{s:?}"
        );
    }
    h.wait_for_merges().unwrap();
    assert!(h.stats().merges >= 2, "{:?}", h.stats());
}

#[test]
fn concurrent_readers_and_writers() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(StaticModel::CprPgm { eps: 16 }, 300, 2);
    let keys: Vec<u64> = (0..4000).map(|i| i * 8).collect();
    let h = create_u64(dir.path(), &keys, opts);
    let per_thread = 1500u64;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let h = &h;
            s.spawn(move || {
                let mut buf = [0u8; PS];
                for i in 0..per_thread {
                    let k = i * 8 + 1 + t;
                    h.put(k, &value(k, t)).unwrap();
                    assert!(h.get(&k, &mut buf).unwrap());
                    assert_eq!(buf, value(k, t));
                    let old = (i * 37 % 4000) * 8;
                    assert!(h.get(&old, &mut buf).unwrap(), "static key {old}");
                    if i % 100 == 0 {
                        let (mut ks, mut ps) = (Vec::new(), Vec::new());
                        h.scan(&old, 20, &mut ks, &mut ps).unwrap();
                        assert!(ks.windows(2).all(|w| w[0] < w[1]));
                        assert_eq!(ks[0], old);
                    }
                }
            });
        }
    });
    h.wait_for_merges().unwrap();
    let stats = h.stats();
    assert!(stats.merges >= 5, "{stats:?}");
    let mut buf = [0u8; PS];
    for t in 0..4u64 {
        for i in 0..per_thread {
            let k = i * 8 + 1 + t;
            assert!(h.get(&k, &mut buf).unwrap());
            assert_eq!(buf, value(k, t));
        }
    }
    assert_eq!(h.len_estimate(), 4000 + 4 * per_thread as usize);
}

fn small_store(dir: &Path) -> HybridOptions {
    let opts = options(StaticModel::LecoZoneMap, 100, 1);
    let keys: Vec<u64> = (0..500).collect();
    let h = create_u64(dir, &keys, opts.clone());
    for k in 500..650u64 {
        h.put(k, &value(k, 0)).unwrap();
    }
    h.wait_for_merges().unwrap();
    for k in 650..700u64 {
        h.put(k, &value(k, 0)).unwrap();
    }
    opts
}

#[test]
fn bad_input_gives_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small_store(dir.path());
    let h = HybridIndex::<u64>::open(storage(dir.path()), opts.clone()).unwrap();
    assert!(matches!(
        h.put(1, &[0; 3]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        h.get(&1, &mut [0; 2]),
        Err(Error::InvalidParameter { .. })
    ));
    drop(h);
    // Another key type, another payload size, an existing store, an in-memory storage, bad
    // options.
    assert!(matches!(
        HybridIndex::<Str16>::open(storage(dir.path()), opts.clone()),
        Err(Error::KeyTypeMismatch { .. })
    ));
    let mut other = opts.clone();
    other.payload_size = 16;
    assert!(matches!(
        HybridIndex::<u64>::open(storage(dir.path()), other),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        HybridIndex::<u64>::create(storage(dir.path()), &[1], |_, _, _| {}, opts.clone()),
        Err(Error::Io {
            kind: std::io::ErrorKind::AlreadyExists,
            ..
        })
    ));
    assert!(matches!(
        HybridIndex::<u64>::create(Arc::new(Storage::ram()), &[1], |_, _, _| {}, opts.clone()),
        Err(Error::InvalidParameter { .. })
    ));
    let fresh = tempfile::tempdir().unwrap();
    for bad in [
        HybridOptions {
            merge_threads: 0,
            ..opts.clone()
        },
        HybridOptions {
            trigger: MergeTrigger::Ratio(0.0),
            ..opts.clone()
        },
        HybridOptions {
            trigger: MergeTrigger::Constant(0),
            ..opts.clone()
        },
        HybridOptions {
            model: StaticModel::Pgm { eps: 0 },
            ..opts.clone()
        },
        HybridOptions {
            model: StaticModel::Auto { pages: 0.5 },
            ..opts.clone()
        },
    ] {
        assert!(matches!(
            HybridIndex::<u64>::create(storage(fresh.path()), &[1], |_, _, _| {}, bad),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        HybridIndex::<u64>::create(storage(fresh.path()), &[2, 1], |_, _, _| {}, opts.clone()),
        Err(Error::OutOfOrder { .. })
    ));
    assert!(matches!(
        HybridIndex::<u64>::open(storage(fresh.path()), opts.clone()),
        Err(Error::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        })
    ));
}

/// Copies the store in `from` to a fresh directory, damaged by `damage`, and opens it.
fn open_damaged(
    from: &Path,
    opts: &HybridOptions,
    damage: impl FnOnce(&Path),
) -> lidx::Result<HybridIndex<u64>> {
    let to = tempfile::tempdir().unwrap();
    let copy = |src: &Path, dst: &Path| {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
            }
        }
    };
    copy(from, to.path());
    copy(&from.join("wal"), &to.path().join("wal"));
    damage(to.path());
    HybridIndex::<u64>::open(storage(to.path()), opts.clone())
}

fn files(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn damaged_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small_store(dir.path());
    // Intact copy opens.
    let h = open_damaged(dir.path(), &opts, |_| {}).unwrap();
    assert_eq!(h.len_estimate(), 700);
    drop(h);
    // Missing static file.
    let r = open_damaged(dir.path(), &opts, |d| {
        std::fs::remove_file(&files(d, "static-")[0]).unwrap()
    });
    assert!(
        matches!(
            r,
            Err(Error::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            })
        ),
        "{:?}",
        r.err()
    );
    // Static file header damaged.
    let r = open_damaged(dir.path(), &opts, |d| {
        let f = &files(d, "static-")[0];
        let mut b = std::fs::read(f).unwrap();
        b[0] ^= 0xff;
        std::fs::write(f, b).unwrap();
    });
    assert!(
        matches!(
            r,
            Err(Error::ChecksumMismatch { .. } | Error::BadMagic { .. })
        ),
        "{:?}",
        r.err()
    );
    // Manifest damaged, CURRENT damaged, CURRENT missing.
    let r = open_damaged(dir.path(), &opts, |d| {
        let f = &files(d, "MANIFEST-")[0];
        let mut b = std::fs::read(f).unwrap();
        let n = b.len();
        b[n - 6] ^= 1;
        std::fs::write(f, b).unwrap();
    });
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{:?}", r.err());
    let r = open_damaged(dir.path(), &opts, |d| {
        std::fs::write(d.join("CURRENT"), b"garbage").unwrap()
    });
    assert!(
        matches!(r, Err(Error::BadMagic { .. } | Error::Truncated { .. })),
        "{:?}",
        r.err()
    );
    // Log gone, log segment damaged in the middle, a log segment missing.
    let r = open_damaged(dir.path(), &opts, |d| {
        std::fs::remove_dir_all(d.join("wal")).unwrap()
    });
    assert!(matches!(r, Err(Error::Io { .. })), "{:?}", r.err());
    let r = open_damaged(dir.path(), &opts, |d| {
        let f = files(&d.join("wal"), "wal-").pop().unwrap();
        let mut b = std::fs::read(&f).unwrap();
        b[40] ^= 1;
        std::fs::write(f, b).unwrap();
    });
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{:?}", r.err());
    let r = open_damaged(dir.path(), &opts, |d| {
        for f in files(&d.join("wal"), "wal-") {
            std::fs::remove_file(f).unwrap();
        }
    });
    // A removed log is damage (every record after the tables went with it), not a path or a
    // permission to fix.
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{:?}", r.err());
}
