//! Every peer against `BTreeMap`: random sequences of puts, deletes, batches, gets and scans
//! (fixed seeds, small keys so they collide), each on a fresh store in a temporary directory,
//! then a compaction and a full scan.

use std::collections::BTreeMap;

use lidx::kv::WriteBatch;
use lidx_bench::byte_store::{ByteStore, PeerEngine, PeerOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Get(Vec<u8>),
    Scan(Vec<u8>, usize),
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(0u8), Just(1), Just(b'a'), Just(255)], 1..4)
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..40)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key().prop_map(Op::Delete),
        1 => prop::collection::vec((key(), prop::option::of(value())), 0..8).prop_map(Op::Batch),
        3 => key().prop_map(Op::Get),
        2 => (key(), 0usize..10).prop_map(|(k, n)| Op::Scan(k, n)),
    ]
}

fn expected_scan(
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    start: &[u8],
    n: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .range(start.to_vec()..)
        .take(n)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn run(store: &dyn ByteStore, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut model = BTreeMap::new();
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                store.put(k, v).unwrap();
                model.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                store.delete(k).unwrap();
                model.remove(k);
            }
            Op::Batch(entries) => {
                let mut batch = WriteBatch::new();
                for (k, v) in entries {
                    match v {
                        Some(v) => {
                            batch.put(k, v).unwrap();
                            model.insert(k.clone(), v.clone());
                        }
                        None => {
                            batch.delete(k).unwrap();
                            model.remove(k);
                        }
                    }
                }
                store.write(&batch).unwrap();
            }
            Op::Get(k) => prop_assert_eq!(store.get(k).unwrap(), model.get(k).cloned()),
            Op::Scan(k, n) => {
                store.scan(k, *n, &mut out).unwrap();
                prop_assert_eq!(&out, &expected_scan(&model, k, *n));
            }
        }
    }
    store.compact().unwrap();
    store.wait_for_merges().unwrap();
    store.scan(&[0], usize::MAX, &mut out).unwrap();
    prop_assert_eq!(&out, &expected_scan(&model, &[0], usize::MAX));
    let stats = store.stats();
    prop_assert!(model.is_empty() || stats.disk_bytes > 0);
    Ok(())
}

fn conforms(engine: &dyn PeerEngine) {
    conforms_with(engine, PeerOptions::from_budget(4 << 20));
}

fn conforms_with(engine: &dyn PeerEngine, options: PeerOptions) {
    let config = Config {
        cases: 12,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&prop::collection::vec(op(), 0..120), |ops| {
            let dir = tempfile::tempdir().unwrap();
            let store = engine.create(&dir.path().join("store"), &options).unwrap();
            run(store.as_ref(), &ops)
        })
        .unwrap();
}

#[test]
fn redb_is_an_ordered_map() {
    conforms(&lidx_peers::redb::Redb);
}

#[test]
fn fjall_is_an_ordered_map() {
    conforms(&lidx_peers::fjall::Fjall);
}

#[test]
fn lmdb_is_an_ordered_map() {
    conforms(&lidx_peers::lmdb::Lmdb);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_is_an_ordered_map() {
    conforms(&lidx_peers::rocksdb::RocksDb);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_with_a_row_cache_is_an_ordered_map() {
    let options = PeerOptions {
        row_cache_bytes: 64 << 10,
        ..PeerOptions::from_budget(4 << 20)
    };
    conforms_with(&lidx_peers::rocksdb::RocksDbRows, options);
}

#[test]
fn every_peer_has_a_name_and_the_locked_version() {
    let names: Vec<_> = lidx_peers::all().iter().map(|p| p.name()).collect();
    assert_eq!(names, ["redb", "fjall", "lmdb", "rocksdb", "rocksdb-rows"]);
    let lock =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    for (name, version) in [
        ("redb", lidx_peers::redb::VERSION),
        ("fjall", lidx_peers::fjall::VERSION),
        ("heed", lidx_peers::lmdb::VERSION),
    ] {
        let entry = format!("name = \"{name}\"\nversion = \"{version}\"");
        assert!(
            lock.contains(&entry),
            "{name} {version} is not in Cargo.lock"
        );
    }
}

#[cfg(not(feature = "rocksdb"))]
#[test]
fn rocksdb_without_the_feature_says_how_to_build_it() {
    let peers = lidx_peers::all();
    let dir = tempfile::tempdir().unwrap();
    for peer in &peers[3..] {
        let err = peer
            .create(dir.path(), &PeerOptions::from_budget(1 << 20))
            .err()
            .expect("not built in");
        assert!(err.to_string().contains("--features rocksdb"), "{err}");
    }
}
