//! The store conformance suite: every `Store` engine against `BTreeMap<Vec<u8>, Vec<u8>>`
//! under proptest sequences of put, delete, batch, range (both directions), snapshot, compact
//! and reopen, with byte keys of 1 B to 1 KiB and values of 0 B to 1 MiB. A tiny memory
//! budget makes merges (`hybrid`) and checkpoints (`btree`) happen every few dozen writes, so
//! the static table, the frozen stage and the dynamic stage all answer, and reopening after a
//! drop replays the log onto the last checkpoint.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

mod store_common;
use lidx::kv::FsyncPolicy;
use lidx::kv::{CreateOptions, Engine, LogKeys, LogSpec, Store, StoreOptions, WriteBatch};
use lidx::mem::MapSpec;
use proptest::prelude::*;
use store_common::{options_for, ENGINES};

const ALL: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Unbounded, Bound::Unbounded);

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Get(Vec<u8>),
    Range(Option<Vec<u8>>, Option<Vec<u8>>, bool),
    /// A range from after the first key to the second one included, forward or not.
    RangeAfter(Vec<u8>, Vec<u8>, bool),
    /// Takes a snapshot, applies the writes, then checks the snapshot still reads the old
    /// state.
    SnapshotThen(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Compact,
    Reopen,
    /// Drops the store without closing it (no final merge or checkpoint), then opens it: the
    /// log after the last merge or checkpoint is replayed.
    DropReopen,
}

fn key() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(prop::sample::select(b"abc\x00\xff".to_vec()), 1..6),
        1 => prop::collection::vec(any::<u8>(), 1..=1024),
        1 => (1usize..=1024).prop_map(|n| vec![b'k'; n]),
    ]
    .boxed()
}

/// The `log` engine's keys: 8 bytes, mostly from a small alphabet so that keys repeat.
fn key8() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(prop::sample::select(b"ab\x00\xff".to_vec()), 8),
        1 => prop::collection::vec(any::<u8>(), 8),
    ]
    .boxed()
}

/// Keys for a `log:trie:<map>` store: mostly of a few bytes over a tiny alphabet, 1 to 24 long,
/// so that keys share 8-byte slices, end inside shared slices and differ only past them; some
/// of any bytes and length, as `key`.
fn key_trie() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        6 => prop::collection::vec(prop::sample::select(b"a\x00\xff".to_vec()), 1..24),
        1 => key(),
    ]
    .boxed()
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        10 => prop::collection::vec(any::<u8>(), 0..40),
        2 => prop::collection::vec(any::<u8>(), 0..9000),
        1 => (0usize..=(1 << 20)).prop_map(|n| vec![(n % 251) as u8; n]),
    ]
}

fn write(key: BoxedStrategy<Vec<u8>>) -> impl Strategy<Value = (Vec<u8>, Option<Vec<u8>>)> {
    (key, prop::option::weighted(0.75, value()))
}

fn bound() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(key())
}

/// Operations on keys from `key`; range bounds are any keys (for the `log` engine, bounds of
/// other lengths than its keys').
fn op(key: fn() -> BoxedStrategy<Vec<u8>>) -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        8 => key().prop_map(Op::Delete),
        5 => prop::collection::vec(write(key()), 0..8).prop_map(Op::Batch),
        10 => key().prop_map(Op::Get),
        5 => (bound(), bound(), any::<bool>()).prop_map(|(a, b, f)| Op::Range(a, b, f)),
        2 => (key(), key(), any::<bool>()).prop_map(|(a, b, f)| Op::RangeAfter(a, b, f)),
        3 => prop::collection::vec(write(key()), 1..6).prop_map(Op::SnapshotThen),
        1 => Just(Op::Compact),
        2 => Just(Op::Reopen),
        2 => Just(Op::DropReopen),
    ]
}

/// The suite's options; with `rows`, a record cache small enough to evict within a case.
fn options(rows: bool) -> StoreOptions {
    StoreOptions {
        fsync: FsyncPolicy::Never,
        row_cache_bytes: if rows { 2048 } else { 0 },
        memory_budget: 4096,
        cache_bytes: 64 << 10,
        // The `log` engine's collector and checkpoints run within a case's few writes.
        log_segment_bytes: 4096,
        ..StoreOptions::default()
    }
}

fn expected_range(
    m: &Model,
    lo: &Option<Vec<u8>>,
    hi: &Option<Vec<u8>>,
    fwd: bool,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let (lo, hi) = (lo.clone(), hi.clone());
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return Vec::new();
        }
    }
    let lo = lo.map_or(Bound::Unbounded, Bound::Included);
    let hi = hi.map_or(Bound::Unbounded, Bound::Excluded);
    let it = m
        .range::<Vec<u8>, _>((lo, hi))
        .map(|(k, v)| (k.clone(), v.clone()));
    if fwd {
        it.collect()
    } else {
        it.rev().collect()
    }
}

/// Compares entry lists, reporting the first difference briefly (values can be 1 MiB).
#[track_caller]
fn same(got: Vec<(Vec<u8>, Vec<u8>)>, want: Vec<(Vec<u8>, Vec<u8>)>) {
    let short = |e: Option<&(Vec<u8>, Vec<u8>)>| {
        e.map(|(k, v)| {
            format!(
                "{:?} => {} bytes {:?}",
                &k[..k.len().min(12)],
                v.len(),
                &v[..v.len().min(4)]
            )
        })
    };
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "entry {i} of {} (want {}): got {:?}, want {:?}",
            got.len(),
            want.len(),
            short(got.get(i)),
            short(want.get(i))
        );
    }
}

#[track_caller]
fn same_value(key: &[u8], got: Option<Vec<u8>>, want: Option<Vec<u8>>) {
    if got != want {
        panic!(
            "get {:?}: got {:?} bytes, want {:?} bytes",
            &key[..key.len().min(12)],
            got.map(|v| v.len()),
            want.map(|v| v.len())
        );
    }
}

fn got_range(r: impl Iterator<Item = lidx::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    r.collect::<lidx::Result<_>>().unwrap()
}

fn bounds<'a>(
    lo: &'a Option<Vec<u8>>,
    hi: &'a Option<Vec<u8>>,
) -> (Bound<&'a [u8]>, Bound<&'a [u8]>) {
    (
        lo.as_deref().map_or(Bound::Unbounded, Bound::Included),
        hi.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
    )
}

fn apply_batch(store: &Store, m: &mut Model, writes: &[(Vec<u8>, Option<Vec<u8>>)]) {
    let mut b = WriteBatch::new();
    for (k, v) in writes {
        match v {
            Some(v) => {
                b.put(k, v).unwrap();
                m.insert(k.clone(), v.clone());
            }
            None => {
                b.delete(k).unwrap();
                m.remove(k);
            }
        }
    }
    store.write(&b).unwrap();
}

fn check_all(store: &Store, m: &Model) {
    same(
        got_range(store.range(ALL)),
        expected_range(m, &None, &None, true),
    );
}

fn run(engine: Engine, dir: &Path, ops: Vec<Op>, rows: bool) {
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    let mut store = Store::create(dir, &create, &options_for(engine, options(rows))).unwrap();
    let mut m = Model::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                store.put(&k, &v).unwrap();
                m.insert(k, v);
            }
            Op::Delete(k) => {
                store.delete(&k).unwrap();
                m.remove(&k);
            }
            Op::Batch(w) => apply_batch(&store, &mut m, &w),
            Op::Get(k) => same_value(&k, store.get(&k).unwrap(), m.get(&k).cloned()),
            Op::Range(lo, hi, fwd) => {
                let r = if fwd {
                    store.range(bounds(&lo, &hi))
                } else {
                    store.range_rev(bounds(&lo, &hi))
                };
                same(got_range(r), expected_range(&m, &lo, &hi, fwd));
            }
            Op::RangeAfter(lo, hi, fwd) => {
                let b = (Bound::Excluded(&lo[..]), Bound::Included(&hi[..]));
                let r = if fwd {
                    store.range(b)
                } else {
                    store.range_rev(b)
                };
                let mut want: Vec<_> = if lo < hi {
                    m.range::<Vec<u8>, _>((Bound::Excluded(lo), Bound::Included(hi)))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                } else {
                    Vec::new()
                };
                if !fwd {
                    want.reverse();
                }
                same(got_range(r), want);
            }
            Op::SnapshotThen(w) => {
                let snap = store.snapshot();
                let before = m.clone();
                apply_batch(&store, &mut m, &w);
                store.compact().unwrap();
                // Writes after the merge or checkpoint reuse what it freed, unless the
                // snapshot still needs it.
                let again: Vec<_> = w
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.clone().map(|mut v| {
                                v.push(b'!');
                                v
                            }),
                        )
                    })
                    .collect();
                apply_batch(&store, &mut m, &again);
                for (k, _) in &w {
                    same_value(k, snap.get(k).unwrap(), before.get(k).cloned());
                    same_value(k, store.get(k).unwrap(), m.get(k).cloned());
                }
                let all = (Bound::<&[u8]>::Unbounded, Bound::<&[u8]>::Unbounded);
                same(
                    got_range(snap.range(all)),
                    expected_range(&before, &None, &None, true),
                );
                same(
                    got_range(snap.range_rev(all)),
                    expected_range(&before, &None, &None, false),
                );
            }
            Op::Compact => store.compact().unwrap(),
            Op::Reopen => {
                store.close().unwrap();
                store = Store::open(dir, &options_for(engine, options(rows))).unwrap();
                check_all(&store, &m);
            }
            Op::DropReopen => {
                drop(store);
                store = Store::open(dir, &options_for(engine, options(rows))).unwrap();
                check_all(&store, &m);
            }
        }
    }
    let all = (Bound::<&[u8]>::Unbounded, Bound::<&[u8]>::Unbounded);
    same(
        got_range(store.range(all)),
        expected_range(&m, &None, &None, true),
    );
    store.close().unwrap();
    let report = Store::check(dir).unwrap();
    assert!(report.is_sound(), "{report:?}");
    let store = Store::open(dir, &options_for(engine, options(rows))).unwrap();
    for (k, v) in &m {
        same_value(k, store.get(k).unwrap(), Some(v.clone()));
    }
    same(
        got_range(store.range_rev(all)),
        expected_range(&m, &None, &None, false),
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_engine_matches_a_btreemap(
        ops in prop::collection::vec(op(key), 1..120),
        rows in any::<bool>(),
    ) {
        for engine in ENGINES {
            let dir = tempfile::tempdir().unwrap();
            run(engine, &dir.path().join("db"), ops.clone(), rows);
        }
    }

    /// Each case runs the log engine over one of the maps, so that every map gets cases
    /// without multiplying the suite's time by their number.
    #[test]
    fn the_log_engine_matches_a_btreemap(
        ops in prop::collection::vec(op(key8), 1..120),
        which in 0usize..64,
        rows in any::<bool>(),
    ) {
        let engines = log_engines(LogKeys::U64);
        let dir = tempfile::tempdir().unwrap();
        run(engines[which % engines.len()], &dir.path().join("db"), ops, rows);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The same for `log:trie:<map>`, keys of any length.
    #[test]
    fn the_trie_log_engine_matches_a_btreemap(
        ops in prop::collection::vec(op(key_trie), 1..120),
        which in 0usize..64,
        rows in any::<bool>(),
    ) {
        let engines = log_engines(LogKeys::Bytes);
        let dir = tempfile::tempdir().unwrap();
        run(engines[which % engines.len()], &dir.path().join("db"), ops, rows);
    }
}

/// The `log` engine with `keys` over every map it can be given (for byte keys every ordered
/// one), small nodes where a map has them.
fn log_engines(keys: LogKeys) -> Vec<Engine> {
    MapSpec::forms()
        .iter()
        .filter(|form| keys == LogKeys::U64 || !form.starts_with("hash"))
        .map(|form| {
            let name = form.split('[').next().unwrap();
            let spec = match name {
                "btree" => "btree:leaf=4:inner=4",
                other => other,
            };
            Engine::Log(LogSpec {
                map: MapSpec::parse(spec).unwrap(),
                keys,
            })
        })
        .collect()
}

#[test]
fn a_log_store_refuses_keys_of_other_lengths_and_keeps_its_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let engine = Engine::parse("log:btree:leaf=8").unwrap();
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    let store = Store::create(&path, &create, &options(false)).unwrap();
    assert!(matches!(
        store.put(b"short", b"v"),
        Err(lidx::Error::SizeLimit { len: 5, .. })
    ));
    let mut batch = WriteBatch::new();
    batch
        .put(b"12345678", b"ok")
        .unwrap()
        .put(b"123456789", b"no")
        .unwrap();
    assert!(matches!(
        store.write(&batch),
        Err(lidx::Error::SizeLimit { len: 9, .. })
    ));
    assert_eq!(
        store.get(b"12345678").unwrap(),
        None,
        "a refused batch wrote nothing"
    );
    assert_eq!(store.get(b"short").unwrap(), None);
    store.put(b"12345678", b"ok").unwrap();
    store.close().unwrap();
    let store = Store::open(&path, &options(false)).unwrap();
    assert_eq!(store.identity().engine, engine);
    assert_eq!(store.identity().engine.label(), "log:btree:leaf=8:inner=15");
    assert_eq!(store.get(b"12345678").unwrap(), Some(b"ok".to_vec()));
    let stats = store.stats();
    assert_eq!(
        (stats.engine, stats.table_records, stats.recovered_records),
        ("log", 1, 1)
    );
    // The trie takes ordered maps only: `hash` is no name, and given as a spec it is refused.
    assert_eq!(Engine::parse("log:trie:hash"), None);
    let hash = CreateOptions {
        engine: Engine::Log(LogSpec {
            map: MapSpec::parse("hash").unwrap(),
            keys: LogKeys::Bytes,
        }),
        ..CreateOptions::default()
    };
    assert!(matches!(
        Store::create(&dir.path().join("hash"), &hash, &options(false)),
        Err(lidx::Error::InvalidParameter { .. })
    ));
    assert!(
        !dir.path().join("hash").join("STORE").exists(),
        "refused before anything is written"
    );
}

/// The suite's options for [`many_merges_over_a_large_key_set_stay_exact`], with a budget per
/// engine that makes merges many but not one per write. At the suite's budget, with 5,000 keys
/// stored, every write merged (`hybrid`: 19,998 merges for the 20,000 writes at 4 KiB) or
/// flushed and compacted (`lsm`: about 40,000 at 8 and 16 KiB), which took ten minutes of the
/// test's debug build and tested that one regime. `hybrid` gets 16 KiB (67 merges), `lsm` 64
/// KiB (50-65), `btree` keeps the suite's 4 KiB (218 checkpoints).
fn many_merges_options(engine: Engine) -> StoreOptions {
    let options = options_for(engine, options(false));
    match engine {
        Engine::Hybrid => StoreOptions {
            memory_budget: 16 << 10,
            ..options
        },
        Engine::Lsm(_) => StoreOptions {
            memory_budget: 64 << 10,
            ..options
        },
        _ => options,
    }
}

#[test]
fn many_merges_over_a_large_key_set_stay_exact() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let store = Store::create(
            &path,
            &CreateOptions {
                engine,
                ..CreateOptions::default()
            },
            &many_merges_options(engine),
        )
        .unwrap();
        let mut m = Model::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = format!("user{:06}", x % 5000).into_bytes();
            if i % 7 == 0 {
                store.delete(&k).unwrap();
                m.remove(&k);
            } else {
                let v = i.to_le_bytes().repeat((x % 5) as usize);
                store.put(&k, &v).unwrap();
                m.insert(k, v);
            }
        }
        let stats = store.stats();
        // Many merges, but not one every few writes (the regime the budgets above leave).
        assert!(stats.merges > 5 && stats.merges < 2_000, "{stats:?}");
        let all = (Bound::<&[u8]>::Unbounded, Bound::<&[u8]>::Unbounded);
        same(
            got_range(store.range(all)),
            expected_range(&m, &None, &None, true),
        );
        for k in (0..5000).map(|i| format!("user{i:06}").into_bytes()) {
            same_value(&k, store.get(&k).unwrap(), m.get(&k).cloned());
        }
    }
}
