//! `lidx ycsb --store redb,fjall,lmdb,hybrid`: the peers run beside lidx's engine on the same
//! plan, every read checked, on string keys and on u64 keys, scans included; `rocksdb` in a
//! build without it is a skipped row that says how to build it, never a missing one.

mod common;

use common::lidx_ok;
use lidx_bench::records::KvRecord;
use lidx_bench::report::read_records;

fn run(dataset: &str, workloads: &str, stores: &str, out: &std::path::Path) -> Vec<KvRecord> {
    let dir = out.parent().unwrap().join("data");
    let device = format!("file:{}", dir.display());
    lidx_ok(&[
        "ycsb",
        "--dataset",
        dataset,
        "--ops",
        "400",
        "--threads",
        "2",
        "--memory-budget",
        "2M",
        "--payload-size",
        "100",
        "--device",
        &device,
        "--workload",
        workloads,
        "--store",
        stores,
        "--seed=9",
        "--out",
        out.to_str().unwrap(),
    ]);
    read_records(out).unwrap()
}

#[test]
fn the_peers_run_beside_the_hybrid_on_the_same_plan() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    // 3,000 string keys of 16 to 64 bytes (the string keys; LMDB takes up to 511).
    let keys: String = (0..3000u64)
        .map(|i| {
            let len = 16 + (i * 7919 % 49) as usize;
            let key = format!("user{:012}{}", i * 2654435761 % 1_000_003, "x".repeat(len));
            format!("{}\n", &key[..len])
        })
        .collect();
    let file = dir.path().join("keys.txt");
    std::fs::write(&file, keys).unwrap();
    let dataset = format!("text:{}", file.display());
    let records = run(&dataset, "c,a,e", "hybrid,redb,fjall,lmdb", &out);
    assert_eq!(records.len(), 12);
    for r in &records {
        assert!(r.skipped.is_none(), "{r:?}");
        assert!(r.ops_per_s > 0.0 && r.load_records_per_s > 0.0, "{r:?}");
        assert!(r.disk_bytes_per_record > 0.0, "{r:?}");
        assert!(r.speedup_vs_btree.is_some(), "ratios to the hybrid");
    }
    let peer = |name: &str| {
        records
            .iter()
            .find(|r| r.workload.starts_with('c') && r.store.starts_with(&format!("peer:{name}")))
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(peer("redb").memory_budget, Some(2_000_000));
    assert_eq!(peer("lmdb").reads, 400);
    // Each record says what its store ran with: without a limit, the budget's split.
    assert!(
        peer("redb").config.starts_with("cache=1.4MiB "),
        "{}",
        peer("redb").config
    );
    assert!(peer("fjall")
        .config
        .starts_with("cache=1.4MiB memtable=512KiB"));
    assert!(peer("lmdb").config.starts_with("map_size=1024GiB"));
    assert!(
        records[0].config.starts_with("budget=1.9MiB "),
        "{}",
        records[0].config
    );
}

#[test]
fn u64_keys_run_and_a_missing_peer_is_a_skipped_row() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let records = run("gen:uniform-sparse:4K", "c", "hybrid,lmdb,rocksdb", &out);
    assert_eq!(records.len(), 3);
    assert!(records[1].skipped.is_none() && records[1].ops_per_s > 0.0);
    if cfg!(feature = "rocksdb") {
        assert!(records[2].skipped.is_none());
    } else {
        let why = records[2]
            .skipped
            .as_deref()
            .expect("rocksdb is not built in");
        assert!(why.contains("--features rocksdb"), "{why}");
        assert_eq!(records[2].store, "peer:rocksdb,budget=2000000");
    }
}
