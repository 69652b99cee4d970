//! The YCSB runner checks every read and reports what the plan did; the curve's CSV and SVG.

use std::collections::BTreeMap;
use std::sync::Arc;

use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx_bench::disk_workload::payload_of;
use lidx_bench::kv_runner::{self, KvBench, KvBenchConfig, KvSetup, StorageBase};
use lidx_bench::kv_store::{KvStore, MemoryBudget, StoreSpec};
use lidx_bench::runner::Silent;
use lidx_bench::store_keys::StoreKeys;
use lidx_bench::ycsb::YcsbWorkload;
use lidx_bench::{plot, BenchError};
use parking_lot::RwLock;

/// A `BTreeMap` store; `wrong` answers a wrong payload for that key, `forget` drops inserts.
struct MapStore {
    map: RwLock<BTreeMap<u64, Vec<u8>>>,
    wrong: Option<u64>,
    forget: bool,
}

impl KvStore<u64> for MapStore {
    fn get(&self, key: &u64, payload: &mut [u8]) -> lidx::Result<bool> {
        match self.map.read().get(key) {
            Some(p) => {
                payload.copy_from_slice(p);
                if self.wrong == Some(*key) {
                    payload[0] ^= 1;
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn put(&self, key: u64, payload: &[u8]) -> lidx::Result<()> {
        if !self.forget {
            self.map.write().insert(key, payload.to_vec());
        }
        Ok(())
    }
    fn payload_size(&self) -> usize {
        8
    }
    fn memory_bytes(&self) -> usize {
        self.map.read().len() * 24
    }
    fn disk_bytes(&self) -> u64 {
        0
    }
    fn describe(&self) -> String {
        "BTreeMap".to_string()
    }
}

fn map_builder(
    wrong: Option<u64>,
    forget: bool,
) -> impl Fn(Arc<Storage>, &[u64]) -> lidx_bench::Result<Box<dyn KvStore<u64>>> {
    move |_storage, keys| {
        let map = keys
            .iter()
            .map(|&k| {
                let mut p = vec![0u8; 8];
                payload_of(k, &mut p);
                (k, p)
            })
            .collect();
        Ok(Box::new(MapStore {
            map: RwLock::new(map),
            wrong,
            forget,
        }))
    }
}

fn ram() -> StorageBase {
    StorageBase {
        dir: None,
        kind: DeviceKind::Sim(SimProfile::named("nvme").unwrap()),
        block_size: 4096,
        cache_blocks: 0,
    }
}

fn config(ops: usize, threads: usize) -> KvBenchConfig {
    KvBenchConfig {
        ops,
        threads,
        runs: 1,
        seed: 3,
        payload_size: 8,
        memory_limit: None,
    }
}

/// `workload`'s plan over the `u64` keys `k`.
fn u64_bench<'a>(
    k: &[u64],
    workload: YcsbWorkload,
    base: &'a StorageBase,
    config: KvBenchConfig,
) -> KvBench<'a> {
    KvBench::new("t", k, Arc::new(StoreKeys::U64), workload, base, config).unwrap()
}

/// One thread running `ops` operations over the `u64` keys `k`.
fn u64_setup<'a>(
    k: &'a [u64],
    base: &'a StorageBase,
    key_bytes: &'a Arc<StoreKeys>,
    ops: usize,
) -> KvSetup<'a> {
    KvSetup {
        dataset: "t",
        keys: k,
        key_bytes,
        base,
        config: config(ops, 1),
    }
}

/// The typed hybrid with sorted runs as its dynamic stage, at `budget`.
fn sorted_runs_hybrid(budget: Option<MemoryBudget>) -> StoreSpec {
    StoreSpec::hybrid(
        None,
        lidx::disk::Fetch::default(),
        budget,
        lidx::kv::FsyncPolicy::Never,
        lidx_bench::kv_store::DynamicKind::parse("sorted-runs").unwrap(),
    )
    .unwrap()
}

fn keys(n: u64) -> Vec<u64> {
    (0..n).map(|i| i * i + 11).collect()
}

#[test]
fn a_correct_store_passes_and_the_counts_match_the_plan() {
    let (k, base) = (keys(4000), ram());
    let bench = u64_bench(&k, YcsbWorkload::Balanced, &base, config(600, 2));
    let record = bench
        .run_store("map", false, &map_builder(None, false), &mut Silent)
        .unwrap();
    assert_eq!((record.ops, record.reads, record.inserts), (600, 300, 300));
    assert_eq!(record.n_init, 3000);
    assert_eq!(record.threads, 2);
    assert!(record.ops_per_s > 0.0 && record.modeled_ops_per_s.is_some());
    assert_eq!(record.blocks_per_read, Some(0.0));
}

#[test]
fn a_wrong_payload_fails_the_run() {
    let (k, base) = (keys(2000), ram());
    let bench = u64_bench(&k, YcsbWorkload::ReadOnly, &base, config(3000, 1));
    let target = bench.plan().streams[0]
        .iter()
        .find_map(|op| match op {
            lidx_bench::ycsb::Op::Read(k) => Some(*k),
            _ => None,
        })
        .unwrap();
    let err = bench
        .run_store("map", false, &map_builder(Some(target), false), &mut Silent)
        .unwrap_err();
    assert!(
        matches!(&err, BenchError::WrongResult { key, .. } if *key == target),
        "{err}"
    );
}

#[test]
fn a_lost_insert_fails_the_balanced_run() {
    let (k, base) = (keys(2000), ram());
    let bench = u64_bench(&k, YcsbWorkload::Balanced, &base, config(400, 1));
    let err = bench
        .run_store("map", false, &map_builder(None, true), &mut Silent)
        .unwrap_err();
    assert!(
        matches!(&err, BenchError::WrongResult { what, .. } if what.contains("not found")),
        "{err}"
    );
}

#[test]
fn the_btree_baseline_reads_one_block_and_the_curve_draws() {
    let (k, base) = (keys(30_000), ram());
    let setup = KvSetup {
        dataset: "t",
        keys: &k,
        key_bytes: &Arc::new(StoreKeys::U64),
        base: &base,
        config: config(500, 1),
    };
    let records = kv_runner::compare(&setup, &[YcsbWorkload::ReadOnly], &[], &mut Silent).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].blocks_per_read, Some(1.0));
    assert_eq!(records[0].speedup_vs_btree, Some(1.0));

    let curve = kv_runner::curve(
        &setup,
        &[YcsbWorkload::ReadOnly],
        &StoreSpec::baseline(),
        &[MemoryBudget::Percent(50.0)],
        &mut Silent,
    )
    .unwrap();
    // 22 500 keys: height 2. No resident level (2 blocks per read), then all inner nodes,
    // then the spec at 50% (the B+-tree again: it takes no budget).
    let blocks: Vec<f64> = curve.iter().filter_map(|r| r.blocks_per_read).collect();
    assert_eq!(blocks, [2.0, 1.0, 1.0]);
    assert!(curve[0].memory_bytes < curve[1].memory_bytes);
    // Read-only: what a store may hold over the run is what it held, at the start or the end.
    for r in &curve {
        assert_eq!(plot::run_memory(r), r.memory_bytes.max(r.memory_end_bytes));
    }
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("c.csv"), dir.path().join("c.svg"));
    plot::write_csv(&csv, &curve).unwrap();
    plot::write_svg(&svg, &curve, "test").unwrap();
    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), curve.len() + 1);
    let header = csv.lines().next().unwrap_or_default();
    assert!(
        header.contains("workload,family,store,memory_bytes,memory_run_bytes"),
        "{header}"
    );
    check_svg(&std::fs::read_to_string(svg).unwrap());
}

/// The SVG is well formed: every element closed in order, an `<svg>` root, lines drawn.
fn check_svg(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap();
            if open.is_empty() {
                assert_eq!(name, "svg");
                roots += 1;
            }
            open.push(name);
        }
    }
    assert!(open.is_empty() && roots == 1, "unclosed {open:?}");
    assert!(svg.contains("<polyline") || svg.contains("<path"));
}

/// Regression (issue 12, rough edge 4): `blocks/read` divided every block read, merges' and the
/// insert path's included, by the reads. The hybrid's inserts read nothing and its merges read
/// the old static files as `Data`: under writes its blocks per read stay those of its lookups
/// (about one per read: the zone map reads the key's block, now and then its neighbour), and the
/// merges' reads are reported apart.
#[test]
fn merges_reads_are_reported_apart_from_the_reads() {
    let (k, base, key_bytes) = (keys(12_000), ram(), Arc::new(StoreKeys::U64));
    let setup = u64_setup(&k, &base, &key_bytes, 5_000);
    // Room for about 2,000 of the 2,500 inserts: at least one merge.
    let hybrid = sorted_runs_hybrid(Some(MemoryBudget::Bytes(24 * 1024)));
    let records = kv_runner::compare(
        &setup,
        &[YcsbWorkload::Balanced],
        &[StoreSpec::baseline(), hybrid],
        &mut Silent,
    )
    .unwrap();
    let h = records
        .iter()
        .find(|r| r.store.starts_with("hybrid"))
        .unwrap();
    assert!(h.merges > 0, "the budget forces merges: {h:?}");
    assert!(h.merge_read_blocks_per_op > 0.0, "{h:?}");
    let per_read = h.blocks_per_read.unwrap();
    assert!(per_read < 1.1, "lookups' blocks only: {per_read}");
    assert!(h.read_blocks_per_op * h.ops as f64 > per_read * h.reads as f64);
}

/// Regression (002-fig11 at small scale took 43 minutes on one point): in the budget sweep, a
/// hybrid whose budget leaves its dynamic stage under `MIN_WRITE_ROOM` beside what it holds
/// built would merge every few writes; under writes it is a skipped record saying why (no
/// ratio, no point of the curve), from one byte under that room on, and runs from the room on;
/// read-only runs it at any budget.
#[test]
fn a_budget_without_room_for_writes_is_skipped_in_the_sweep() {
    let (k, base, key_bytes) = (keys(12_000), ram(), Arc::new(StoreKeys::U64));
    let setup = u64_setup(&k, &base, &key_bytes, 2_000);
    let hybrid = sorted_runs_hybrid(None);
    let of_hybrid = |records: &[lidx_bench::records::KvRecord]| -> Vec<_> {
        records
            .iter()
            .filter(|r| r.store.starts_with("hybrid"))
            .cloned()
            .collect()
    };
    let read = kv_runner::curve(
        &setup,
        &[YcsbWorkload::ReadOnly],
        &hybrid,
        &[MemoryBudget::Bytes(1)],
        &mut Silent,
    )
    .unwrap();
    let read = of_hybrid(&read);
    assert!(
        read[0].skipped.is_none() && read[0].ops_per_s > 0.0,
        "{read:?}"
    );
    let built = read[0].memory_bytes;
    let room = kv_runner::MIN_WRITE_ROOM;
    let budgets = [
        MemoryBudget::Bytes(1),
        MemoryBudget::Bytes(built + room - 1),
        MemoryBudget::Bytes(built + room),
    ];
    let curve = kv_runner::curve(
        &setup,
        &[YcsbWorkload::WriteOnly],
        &hybrid,
        &budgets,
        &mut Silent,
    )
    .unwrap();
    let written = of_hybrid(&curve);
    assert_eq!(written.len(), 3, "{written:?}");
    for r in &written[..2] {
        let why = r.skipped.as_deref().expect("no room for writes: skipped");
        assert!(why.contains("merge every few writes"), "{why}");
        assert_eq!((r.speedup_vs_btree, r.memory_vs_btree), (None, None));
    }
    assert!(written[2].skipped.is_none() && written[2].ops_per_s > 0.0);
    assert_eq!(written[2].memory_bytes, built);
    let points = plot::points(&curve);
    assert_eq!(
        points.len(),
        curve.len() - 2,
        "skipped records are no points"
    );
}

/// Keys of another type run on the stores through the API as ranks into their byte keys, every
/// read checked; an adapter is refused by key type, naming the stores that take it.
#[test]
fn text_keys_run_through_the_store_api_and_the_adapters_refuse_them() {
    let words = lidx_bench::words::generate(3000, 4);
    let ranked = lidx_bench::store_keys::RankedKeys::encode(&lidx_bench::keyfile::Keys::Bytes(
        words.clone(),
    ));
    let ranks = ranked.ranks();
    let key_bytes = Arc::new(StoreKeys::Ranked(ranked));
    let base = ram();
    let setup = KvSetup {
        dataset: "words",
        keys: &ranks,
        key_bytes: &key_bytes,
        base: &base,
        config: config(600, 2),
    };
    let stores = [
        StoreSpec::store(lidx::kv::Engine::BTree, None, lidx::kv::FsyncPolicy::Never),
        StoreSpec::store(
            lidx::kv::Engine::Hybrid,
            Some(MemoryBudget::Bytes(1 << 20)),
            lidx::kv::FsyncPolicy::Never,
        ),
    ];
    let workloads = [YcsbWorkload::ReadOnly, YcsbWorkload::Balanced];
    let records = kv_runner::compare(&setup, &workloads, &stores, &mut Silent).unwrap();
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(r.n_init, (ranks.len() * 3 / 4) as u64);
        assert!(r.reads > 0 && r.ops_per_s > 0.0, "{r:?}");
    }
    let err =
        kv_runner::compare(&setup, &workloads, &[StoreSpec::baseline()], &mut Silent).unwrap_err();
    assert!(
        matches!(&err, BenchError::KeyType { got: "text", .. })
            && err.to_string().contains("--store btree,hybrid"),
        "{err}"
    );
    let curve = kv_runner::curve(
        &setup,
        &workloads,
        &StoreSpec::baseline(),
        &[MemoryBudget::Percent(50.0)],
        &mut Silent,
    );
    assert!(matches!(curve, Err(BenchError::KeyType { .. })));
}

/// YCSB's core workloads run on the stores through the API (the `log` engine too), every
/// read, read-modify-write and scan checked; the adapters have no scan and are refused E.
#[test]
fn ycsb_core_workloads_run_on_every_engine() {
    let k = keys(4000);
    let key_bytes = Arc::new(StoreKeys::U64);
    let base = ram();
    let setup = KvSetup {
        dataset: "t",
        keys: &k,
        key_bytes: &key_bytes,
        base: &base,
        config: KvBenchConfig {
            payload_size: 200,
            ..config(400, 2)
        },
    };
    let never = lidx::kv::FsyncPolicy::Never;
    let log = lidx::kv::Engine::parse("log:btree").unwrap();
    let stores = [
        StoreSpec::store(lidx::kv::Engine::BTree, None, never),
        StoreSpec::store(log, None, never),
    ];
    let workloads: Vec<YcsbWorkload> = ["a", "b:uniform", "c", "d", "e", "f"]
        .iter()
        .map(|w| YcsbWorkload::parse(w).unwrap())
        .collect();
    let records = kv_runner::compare(&setup, &workloads, &stores, &mut Silent).unwrap();
    assert_eq!(records.len(), 12);
    for r in &records {
        assert_eq!(r.ops, 400, "{r:?}");
        assert!(r.ops_per_s > 0.0, "{r:?}");
    }
    let e = [YcsbWorkload::parse("e").unwrap()];
    let err = kv_runner::compare(&setup, &e, &[StoreSpec::baseline()], &mut Silent).unwrap_err();
    assert!(matches!(err, BenchError::BadSpec { .. }), "{err}");
    let hash = lidx::kv::Engine::parse("log:hash").unwrap();
    let err = kv_runner::compare(
        &setup,
        &e,
        &[StoreSpec::store(hash, None, never)],
        &mut Silent,
    )
    .unwrap_err();
    assert!(
        matches!(err, BenchError::BadSpec { .. }) && err.to_string().contains("log:hash scans"),
        "{err}"
    );
    let words = lidx_bench::words::generate(3000, 4);
    let ranked =
        lidx_bench::store_keys::RankedKeys::encode(&lidx_bench::keyfile::Keys::Bytes(words));
    let ranks = ranked.ranks();
    let text = Arc::new(StoreKeys::Ranked(ranked));
    let text_setup = KvSetup {
        dataset: "words",
        keys: &ranks,
        key_bytes: &text,
        ..setup
    };
    let records = kv_runner::compare(&text_setup, &e, &stores[..1], &mut Silent).unwrap();
    assert!(records[0].reads > 300, "{:?}", records[0]);
    let err = kv_runner::compare(&text_setup, &e, &stores[1..], &mut Silent).unwrap_err();
    assert!(
        matches!(err, BenchError::KeyType { .. }) && err.to_string().contains("log:trie:"),
        "{err}"
    );
    // The `log` engine over byte keys takes them, scans and all, every answer checked.
    let trie = lidx::kv::Engine::parse("log:trie:btree:leaf=8").unwrap();
    let all = ["e", "a", "f"].map(|w| YcsbWorkload::parse(w).unwrap());
    let records = kv_runner::compare(
        &text_setup,
        &all,
        &[StoreSpec::store(trie, None, never)],
        &mut Silent,
    )
    .unwrap();
    assert_eq!(records.len(), 3);
    for r in &records {
        assert!(r.reads > 150 && r.ops_per_s > 0.0, "{r:?}");
    }
}
