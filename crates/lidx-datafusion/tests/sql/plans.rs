//! What DataFusion plans over a lidx table or store: key filters taken over by the scan (no
//! `FilterExec` above it), other filters left in a `FilterExec`, `ORDER BY key` without a
//! sort, a scan split into partitions by key range, and counts and key bounds answered from
//! the exact statistics without reading.

use crate::common::*;
use lidx_datafusion::SqlSession;

fn session(partitions: usize) -> (tempfile::TempDir, SqlSession, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(40_000, 11);
    write_u64_table(dir.path(), "t", &keys);
    write_store(&dir.path().join("kv"), &keys[..5_000]);
    let mut s = SqlSession::new(partitions);
    s.register("t", &dir.path().join("t")).unwrap();
    s.register("kv", &dir.path().join("kv")).unwrap();
    (dir, s, keys)
}

#[test]
fn key_filters_are_taken_over_by_the_scan_and_others_are_not() {
    let (_dir, s, keys) = session(4);
    let (a, b) = (keys[100], keys[30_000]);
    for filter in [
        format!("key = {a}"),
        format!("key < {b}"),
        format!("key <= {b}"),
        format!("key > {a}"),
        format!("{a} <= key"),
        format!("key BETWEEN {a} AND {b}"),
        format!("key IN ({a}, {b}, 7)"),
        format!("key > {a} AND key < {b}"),
        format!("key < {a} OR key > {b}"),
    ] {
        let plan = physical_plan(&s, &format!("SELECT key, value FROM t WHERE {filter}"));
        assert!(!plan.contains("FilterExec"), "{filter}:\n{plan}");
        assert!(
            plan.contains("LidxScanExec") && plan.contains("key_filters=["),
            "{filter}:\n{plan}"
        );
    }
    let plan = physical_plan(&s, "SELECT key FROM kv WHERE key BETWEEN X'00' AND X'ff'");
    assert!(
        !plan.contains("FilterExec") && plan.contains("key_filters=["),
        "{plan}"
    );
    for filter in [
        "value = X'00'".to_string(),
        format!("key <> {a}"),
        format!("key NOT IN ({a}, {b})"),
        format!("key + 1 = {a}"),
        format!("key = {a} OR value = X'00'"),
    ] {
        let plan = physical_plan(&s, &format!("SELECT key, value FROM t WHERE {filter}"));
        assert!(plan.contains("FilterExec"), "{filter}:\n{plan}");
    }
    // Both kinds at once: the key filter in the scan, the value filter above it.
    let plan = physical_plan(
        &s,
        &format!("SELECT key FROM t WHERE key > {a} AND value = X'00'"),
    );
    assert!(
        plan.contains("FilterExec") && plan.contains("key_filters=["),
        "{plan}"
    );
    assert!(
        !plan
            .lines()
            .any(|l| l.contains("FilterExec") && l.contains("key@0 >")),
        "{plan}"
    );
}

#[test]
fn order_by_key_needs_no_sort() {
    for partitions in [1, 4] {
        let (_dir, s, keys) = session(partitions);
        for sql in [
            "SELECT key, value FROM t ORDER BY key".to_string(),
            format!("SELECT value FROM t WHERE key > {} ORDER BY key", keys[10]),
            "SELECT key FROM kv ORDER BY key".to_string(),
        ] {
            let plan = physical_plan(&s, &sql);
            assert!(!plan.contains("SortExec"), "{sql}:\n{plan}");
        }
        let plan = physical_plan(&s, "SELECT key FROM t ORDER BY key DESC");
        assert!(plan.contains("SortExec"), "{plan}");
        let plan = physical_plan(&s, "SELECT key FROM t ORDER BY value");
        assert!(plan.contains("SortExec"), "{plan}");
    }
}

#[test]
fn scans_split_by_key_range_and_know_their_rows() {
    let (_dir, s, keys) = session(4);
    let plan = physical_plan(&s, "SELECT key, value FROM t");
    assert!(
        plan.contains("partitions=4") && plan.contains("rows=40000"),
        "{plan}"
    );
    let plan = physical_plan(
        &s,
        &format!("SELECT key, value FROM t WHERE key >= {}", keys[20_000]),
    );
    assert!(
        plan.contains("partitions=2") && plan.contains("rows=20000"),
        "{plan}"
    );
    let plan = physical_plan(
        &s,
        &format!("SELECT key FROM t WHERE key IN ({}, 3)", keys[7]),
    );
    assert!(
        plan.contains("partitions=1") && plan.contains("rows=1"),
        "{plan}"
    );
    let plan = physical_plan(&s, "SELECT key, value FROM t LIMIT 10");
    assert!(plan.contains("rows=10"), "{plan}");
    // More ranges than are sought while planning: the scan knows how many rows it can give
    // at most (a point one, a range its width), and splits the ranges.
    let list: Vec<String> = keys.iter().step_by(100).map(u64::to_string).collect();
    let (lo, hi) = (keys[5], keys[5] + 9);
    let plan = physical_plan(
        &s,
        &format!(
            "SELECT key FROM t WHERE key IN ({}) OR key BETWEEN {lo} AND {hi}",
            list.join(",")
        ),
    );
    let scan = plan
        .lines()
        .find(|l| l.contains("LidxScanExec"))
        .unwrap_or_else(|| panic!("{plan}"));
    let fields: Vec<&str> = scan.split(", ").map(str::trim).collect();
    assert!(
        fields.contains(&"partitions=4") && fields.contains(&"rows<=410"),
        "{plan}"
    );
    // As many ranges, one of them large: sought while planned, so that its rows are split.
    let plan = physical_plan(
        &s,
        &format!(
            "SELECT key FROM t WHERE key IN ({}) OR key >= {}",
            list.join(","),
            keys[20_000]
        ),
    );
    assert!(
        plan.contains("partitions=2") && plan.contains("rows=20200"),
        "{plan}"
    );
    let plan = physical_plan(&s, "SELECT key FROM kv");
    assert!(plan.contains("partitions=4"), "{plan}");
    // The partitions together are the whole table, each in key order.
    let got = rows(&query(&s, "SELECT key, value FROM t"));
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted.len(), keys.len());
    assert_eq!(
        sorted.iter().map(|r| r.0.clone()).collect::<Vec<_>>(),
        keys.iter()
            .map(|k| k.to_be_bytes().to_vec())
            .collect::<Vec<_>>()
    );
}

#[test]
fn counts_and_key_bounds_come_from_exact_statistics() {
    let (_dir, s, keys) = session(2);
    for (sql, want) in [
        ("SELECT count(*) FROM t", keys.len() as u64),
        ("SELECT min(key) FROM t", keys[0]),
        ("SELECT max(key) FROM t", keys[keys.len() - 1]),
    ] {
        let plan = physical_plan(&s, sql);
        assert!(!plan.contains("LidxScanExec"), "{sql}:\n{plan}");
        assert_eq!(single_u64(&s, sql), want, "{sql}");
    }
    let sql = format!(
        "SELECT count(*) FROM t WHERE key BETWEEN {} AND {}",
        keys[5], keys[500]
    );
    let plan = physical_plan(&s, &sql);
    assert!(!plan.contains("LidxScanExec"), "{plan}");
    assert_eq!(single_u64(&s, &sql), 496);
    let live = store_entries(&_dir.path().join("kv"), &[0], &[0xff; 9]).len() as u64;
    assert_eq!(single_u64(&s, "SELECT count(*) FROM kv"), live);
}
