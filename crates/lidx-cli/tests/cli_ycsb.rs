//! `lidx ycsb` end to end on a tiny dataset: every workload on the simulated and the real
//! device with records written, the curve's CSV and SVG, bad arguments exit 2 with one line.

mod common;

use common::{lidx, lidx_ok, text, without_progress};
use lidx_bench::records::KvRecord;
use lidx_bench::report::read_records;

const SMALL: [&str; 10] = [
    "ycsb",
    "--dataset",
    "gen:lognormal:8K",
    "--ops",
    "600",
    "--runs",
    "1",
    "--memory-budget",
    "5000%",
    "--seed=5",
];

#[test]
fn every_workload_runs_on_the_simulated_and_the_real_device() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let files = format!("file:{}", dir.path().join("data").display());
    for device in ["sim:nvme", files.as_str()] {
        let mut args = SMALL.to_vec();
        args.extend([
            "--device",
            device,
            "--workload",
            "read-only,write-only,balanced",
            "--threads",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--force",
        ]);
        // The simulated device runs the default dynamic stage, the real one sorted runs.
        let dynamic = if device == "sim:nvme" {
            "btree"
        } else {
            "sorted-runs"
        };
        args.extend([
            "--dynamic",
            dynamic,
            "--store",
            "adapter:btree,adapter:hybrid",
        ]);
        let result = lidx(&args);
        let stdout = text(&result.stdout);
        assert!(result.status.success(), "{}", text(&result.stderr));
        assert!(
            stdout.contains("x ref") && stdout.contains("hybrid:"),
            "{stdout}"
        );
        let records: Vec<KvRecord> = read_records(&out).unwrap();
        assert_eq!(records.len(), 6);
        for r in &records {
            assert_eq!((r.n_init, r.ops, r.threads), (6000, 600, 2));
            assert!(r.speedup_vs_btree.is_some() && r.ops_per_s > 0.0);
            assert_eq!(r.modeled_ops_per_s.is_some(), device == "sim:nvme");
        }
        let hybrid = records
            .iter()
            .find(|r| r.store.starts_with("hybrid:"))
            .unwrap();
        assert!(
            hybrid.store.ends_with(&format!("dynamic={dynamic}")),
            "{}",
            hybrid.store
        );
        let btree = records
            .iter()
            .find(|r| r.store.starts_with("btree"))
            .unwrap();
        assert_eq!(
            hybrid.memory_budget,
            Some((btree.memory_bytes as f64 * 50.0).round() as u64)
        );
    }
    // Every run's directory is removed afterwards.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("data"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The default stores run the store's engines through its API, the B+-tree engine first (the
/// reference); the adapters run beside them in the same invocation.
#[test]
fn the_store_engines_run_through_the_api_beside_the_adapters() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    // Keys enough for the B+-tree's inner nodes to exceed the store's smallest budget (4 KiB).
    let mut args = SMALL.to_vec();
    args[2] = "gen:lognormal:100K";
    args[8] = "100%";
    args.extend([
        "--workload",
        "read-only,balanced,write-only",
        "--store",
        "btree,hybrid,adapter:btree,adapter:hybrid",
        "--out",
        out.to_str().unwrap(),
    ]);
    lidx_ok(&args);
    let records: Vec<KvRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 12);
    for workload in ["read-only", "balanced", "write-only"] {
        let of = |prefix: &str| {
            records
                .iter()
                .find(|r| r.workload == workload && r.store.starts_with(prefix))
                .unwrap_or_else(|| panic!("{workload} {prefix}"))
        };
        let (btree, hybrid) = (of("store:btree"), of("store:hybrid"));
        assert_eq!(btree.speedup_vs_btree, Some(1.0), "the reference");
        assert_eq!(hybrid.memory_budget, Some(btree.memory_bytes));
        assert!(hybrid.speedup_vs_btree.is_some() && of("btree:resident").ops_per_s > 0.0);
        assert!(of("hybrid:").ops_per_s > 0.0);
    }
}

/// `--row-cache` gives each lidx store a record cache: its record names it, and the store
/// holds records in it at the end; the typed adapter has none.
#[test]
fn a_record_cache_is_given_to_the_stores_and_named_in_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let mut args = SMALL.to_vec();
    args[8] = "1M";
    args.extend([
        "--workload",
        "c,a",
        "--store",
        "adapter:btree,hybrid,lsm",
        "--row-cache",
        "1M",
        "--out",
        out.to_str().unwrap(),
    ]);
    lidx_ok(&args);
    let records: Vec<KvRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 6);
    for r in &records {
        if r.store.starts_with("store:") {
            assert!(r.config.ends_with(" row_cache=976.6KiB"), "{}", r.config);
            // "..., a record cache holding <records> records in <bytes> bytes", at the end.
            let held = r
                .describe
                .split_once("a record cache holding ")
                .and_then(|(_, rest)| rest.split(' ').next()?.parse::<u64>().ok());
            assert!(held.is_some_and(|n| n > 0), "{}", r.describe);
        } else {
            assert!(!r.config.contains("row_cache"), "{}", r.config);
        }
    }
}

/// FILM runs as a store (`disk:film:...`) beside the hybrid and the B+-tree on every
/// workload, every answer checked; its memory counts a key and a locator for every item, so it
/// is above the B+-tree's inner nodes whatever its cache.
#[test]
fn film_runs_beside_the_hybrid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let mut args = SMALL.to_vec();
    args[8] = "64Ki";
    args.extend([
        "--workload",
        "read-only,balanced,write-only",
        "--store",
        "adapter:btree,adapter:hybrid,disk:film:eps=16:mem=0,disk:film:mem=1Mi",
        "--hybrid-model",
        "cpr-pgm",
        "--out",
        out.to_str().unwrap(),
    ]);
    lidx_ok(&args);
    let records: Vec<KvRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 12);
    for r in records.iter().filter(|r| r.store.starts_with("disk:film")) {
        assert!(r.ops_per_s > 0.0 && r.skipped.is_none(), "{r:?}");
        assert!(r.memory_bytes >= 16 * r.n_init, "{r:?}");
        assert_eq!(r.memory_budget, None);
    }
    let bad = lidx(&["ycsb", "--store", "adapter:btree,disk:film:eps=0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("film[:eps=<n>][:mem=<bytes>]"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn the_curve_writes_a_csv_and_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("c.csv"), dir.path().join("c.svg"));
    let mut args = SMALL.to_vec();
    args.extend([
        "--workload",
        "read-only",
        "--curve",
        "--budgets",
        "10%,100%",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    lidx_ok(&args);
    let csv = std::fs::read_to_string(csv).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    // Header; the B+-tree with no resident level and with all inner nodes; two budgets.
    assert_eq!(rows.len(), 5, "{csv}");
    assert_eq!(rows.iter().filter(|r| r.contains(",hybrid,")).count(), 2);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("read-only hybrid") && svg.contains("read-only btree"));
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let bad: [&[&str]; 14] = [
        &["ycsb", "--workload", "scan"],
        &["ycsb", "--dataset", "gen:nope:1K"],
        &["ycsb", "--device", "tape:x"],
        &["ycsb", "--memory-budget=0%"],
        &["ycsb", "--hybrid-model", "pgm:eps=0"],
        &["ycsb", "--fetch", "sometimes"],
        &["ycsb", "--fsync", "every:0"],
        &["ycsb", "--ops", "lots"],
        &["ycsb", "--dynamic", "skiplist"],
        &["ycsb", "--store", "btree,leveldb"],
        &["ycsb", "--store", "hybrid,btree", "--memory-budget", "10%"],
        &["ycsb", "--row-cache", "lots"],
        &["ycsb", "--row-cache", "300G"],
        &["ycsb", "--store", "lsm,rocksdb-rows"],
    ];
    for args in bad {
        let result = lidx(args);
        let stderr = without_progress(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: bad "), "{stderr}");
    }
    // More inserts than the 25% held out.
    let mut args = SMALL.to_vec();
    args[4] = "5000";
    args.extend(["--workload", "write-only"]);
    let result = lidx(&args);
    let stderr = text(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("held out"), "{stderr}");
}

/// The `log` engine over a map, on YCSB's core workloads with paper 001's 200-byte values.
#[test]
fn the_log_engine_runs_ycsb_core_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let files = format!("file:{}", dir.path().join("data").display());
    let mut args = SMALL.to_vec();
    args.extend([
        "--device",
        files.as_str(),
        "--store",
        "btree,log:btree,log:art",
        "--workload",
        "a,c,d,e:uniform,f",
        "--payload-size",
        "200",
    ]);
    let result = lidx(&args);
    let stdout = text(&result.stdout);
    assert!(result.status.success(), "{}", text(&result.stderr));
    for want in [
        "log:btree:leaf=16:inner=15",
        "log:art",
        "a:zipf",
        "e:uniform",
        "d:latest",
    ] {
        assert!(stdout.contains(want), "{want}: {stdout}");
    }
    // A log store takes no memory budget, so it can be the reference under the default 100%.
    let mut args = SMALL.to_vec();
    args.extend([
        "--device",
        files.as_str(),
        "--store",
        "log:btree,log:alex",
        "--workload",
        "c",
    ]);
    let first = lidx_ok(&args);
    assert!(text(&first.stdout).contains("budget=default"));
    let bad = lidx(&[
        "ycsb",
        "--store",
        "log:alexx",
        "--dataset",
        "gen:lognormal:8K",
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}
