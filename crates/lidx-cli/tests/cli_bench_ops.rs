//! `lidx bench` names the operation each row times (a map's `get`, a static index's
//! `lower_bound`) and writes its timed queries (or, for inserts, its inserted keys) for an
//! outside harness with `--queries-out`.

mod common;

use common::{lidx, lidx_ok, text};
use lidx_bench::records::BenchRecord;
use lidx_bench::report::read_records;
use lidx_bench::sosd::read_sosd;
use std::path::{Path, PathBuf};

/// `args` run again over an existing output file: refused without `--force`.
fn assert_refused_without_force(args: &[&str]) {
    let refused = lidx(args);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("--force"), "{stderr}");
}

/// `args` run again with `--force`: `file` is written again, with the same keys.
fn assert_same_with_force(args: &[&str], file: &Path, written: &[u64]) {
    let mut forced = args.to_vec();
    forced.push("--force");
    lidx_ok(&forced);
    assert_eq!(read_sosd(file).unwrap(), written);
}

/// `dataset` written by `lidx gen` to `k.sosd` in `dir`.
fn key_file(dir: &Path, dataset: &str) -> PathBuf {
    let keys = dir.join("k.sosd");
    lidx_ok(&["gen", "--dataset", dataset, "--out", keys.to_str().unwrap()]);
    keys
}

#[test]
fn maps_time_their_get_and_static_indexes_their_lower_bound() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.jsonl");
    let stdout = text(
        &lidx_ok(&[
            "bench",
            "--dataset",
            "gen:lognormal:20K",
            "--index",
            "sorted,pgm,alex,lipp,btree",
            "--queries",
            "5K",
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout,
    );
    assert!(stdout.contains(" op "), "{stdout}");
    let records: Vec<BenchRecord> = read_records(&out).unwrap();
    let ops: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r.index.as_str(), r.operation.as_str()))
        .collect();
    assert_eq!(
        ops,
        [
            ("sorted", "lower_bound"),
            ("pgm", "lower_bound"),
            ("alex", "get"),
            ("lipp", "get"),
            ("btree", "lower_bound"),
        ]
    );
    for r in &records {
        assert!(
            r.mean_ns > 0.0 && r.bytes > 0 || r.index == "sorted",
            "{r:?}"
        );
    }
    // A map's answer is exact: no window is searched after its get.
    let alex = records.iter().find(|r| r.index == "alex").unwrap();
    assert_eq!(alex.mean_log2_window, 0.0);
}

#[test]
fn queries_out_writes_the_timed_lookups_and_keeps_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let keys = key_file(dir.path(), "gen:zipf-gaps:10K");
    let queries = dir.path().join("q.sosd");
    let args = [
        "bench",
        "--dataset",
        keys.to_str().unwrap(),
        "--index",
        "sorted",
        "--queries",
        "3K",
        "--runs",
        "1",
        "--queries-out",
        queries.to_str().unwrap(),
    ];
    lidx_ok(&args);
    let keys = read_sosd(&keys).unwrap();
    let written = read_sosd(&queries).unwrap();
    assert_eq!(written.len(), 3000);
    assert!(written.iter().all(|q| keys.binary_search(q).is_ok()));

    // The same seed draws the same queries; an existing file is kept without --force.
    assert_refused_without_force(&args);
    assert_eq!(read_sosd(&queries).unwrap(), written);
    assert_same_with_force(&args, &queries, &written);
}

#[test]
fn queries_out_is_refused_where_no_lookup_or_insert_keys_are_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("q.sosd");
    let out = lidx(&[
        "bench",
        "--dataset",
        "gen:words:2K",
        "--index",
        "sorted",
        "--queries",
        "1K",
        "--queries-out",
        queries.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--queries-out"), "{stderr}");
    assert!(!queries.exists());
}

#[test]
fn queries_out_of_an_insert_run_is_the_inserted_half_in_insert_order() {
    let dir = tempfile::tempdir().unwrap();
    let keys = key_file(dir.path(), "gen:lognormal:5K");
    let inserted = dir.path().join("ins.sosd");
    let args = [
        "bench",
        "--dataset",
        keys.to_str().unwrap(),
        "--workload",
        "insert",
        "--index",
        "alex",
        "--runs",
        "1",
        "--queries-out",
        inserted.to_str().unwrap(),
    ];
    lidx_ok(&args);
    let mut distinct = read_sosd(&keys).unwrap();
    distinct.dedup();
    let written = read_sosd(&inserted).unwrap();
    assert_eq!(written.len(), distinct.len() - distinct.len() / 2);
    assert!(written.iter().all(|k| distinct.binary_search(k).is_ok()));
    let mut sorted = written.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), written.len(), "every inserted key once");
    assert_ne!(sorted, written, "in the shuffled insert order, not sorted");

    // An existing file is kept without --force, and a usage error writes nothing.
    assert_refused_without_force(&args);
    std::fs::remove_file(&inserted).unwrap();
    let mut no_runs = args.to_vec();
    no_runs.extend(["--runs", "0"]);
    assert!(!lidx(&no_runs).status.success());
    assert!(!inserted.exists());

    // The same seed inserts the same keys in the same order.
    assert_same_with_force(&args, &inserted, &written);
}

#[test]
fn queries_out_is_neither_the_dataset_nor_the_records_file() {
    let dir = tempfile::tempdir().unwrap();
    let keys = key_file(dir.path(), "gen:lognormal:5K");
    let before = std::fs::read(&keys).unwrap();
    let records = dir.path().join("r.jsonl");
    let runs = [("lookup", "sorted"), ("insert", "alex")];
    for ((queries, out), (workload, index)) in [(&keys, &records), (&records, &records)]
        .into_iter()
        .flat_map(|files| runs.map(|run| (files, run)))
    {
        let run = lidx(&[
            "bench",
            "--dataset",
            keys.to_str().unwrap(),
            "--workload",
            workload,
            "--index",
            index,
            "--queries",
            "1K",
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--queries-out",
            queries.to_str().unwrap(),
            "--force",
        ]);
        assert!(!run.status.success(), "{}", text(&run.stdout));
        assert!(
            text(&run.stderr).contains("not an input"),
            "{}",
            text(&run.stderr)
        );
    }
    assert_eq!(std::fs::read(&keys).unwrap(), before);
    assert!(!records.exists());
}
