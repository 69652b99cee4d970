//! `lidx-sql-bench` on small seeded tables: every query class runs on every side and the sides
//! agree (the bench fails a run on any answer that differs from the first side's or has the
//! wrong size), the JSON report says so, and a directory without a larger table is a usage
//! error. Built only with the `parquet` feature, as the binary is.

mod common;

use std::process::Command;

use common::{keys, write_u64_table};

const BENCH: &str = env!("CARGO_BIN_EXE_lidx-sql-bench");

#[test]
fn sides_agree_on_every_query_class() {
    let dir = tempfile::tempdir().expect("temp dir");
    let all = keys(20_000, 7);
    write_u64_table(dir.path(), "large", &all);
    let r10: Vec<u64> = all.iter().copied().step_by(10).collect();
    write_u64_table(dir.path(), "r10", &r10);
    let json = dir.path().join("out.json");
    let out = Command::new(BENCH)
        .arg("--tables")
        .arg(dir.path())
        .args([
            "--runs",
            "2",
            "--instances",
            "2",
            "--partitions",
            "2",
            "--seed",
            "3",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run lidx-sql-bench");
    assert!(
        out.status.success(),
        "lidx-sql-bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("read json")).expect("parse json");
    assert_eq!(report["rows"], 20_000);
    let groups = report["groups"].as_array().expect("groups");
    // 3 IN-list sizes, 5 range selectivities, the scan, and the join with r10.
    assert_eq!(groups.len(), 10);
    for g in groups {
        assert_eq!(g["answers_agree"], true, "{g}");
        let sides = g["sides"].as_array().expect("sides");
        let expected = if g["class"] == "join" { 3 } else { 2 };
        assert_eq!(sides.len(), expected, "{g}");
        // Every query of the group, each run twice.
        let samples = 2 * g["queries"].as_u64().expect("queries") as usize;
        for s in sides {
            let total = s["total_ms"].as_array().expect("samples");
            assert_eq!(total.len(), samples, "{g}");
        }
    }
    let join = groups.iter().find(|g| g["class"] == "join").expect("join");
    assert_eq!(join["rows"], r10.len());
    let scan = groups.iter().find(|g| g["class"] == "scan").expect("scan");
    assert_eq!(scan["rows"], 20_000);
    for table in report["tables"].as_array().expect("tables") {
        assert!(
            table["parquet_bytes"].as_u64().expect("bytes") > 0,
            "{table}"
        );
    }
}

#[test]
fn a_directory_without_the_larger_table_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(BENCH)
        .arg("--tables")
        .arg(dir.path())
        .output()
        .expect("run lidx-sql-bench");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lidx table create"));
}
