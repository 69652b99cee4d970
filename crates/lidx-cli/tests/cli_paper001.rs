//! `lidx recovery` (the log engine over each map, loaded, reopened and checked, with paper
//! 001's recovery time and space columns) and `lidx dims` (paper 001 §IV's design dimensions).

mod common;

use common::{lidx, text};

use lidx_bench::recovery_runner::RecoveryRecord;
use lidx_bench::report::read_records;

#[test]
fn every_map_recovers_and_reports_its_space() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let result = lidx(&[
        "recovery",
        "--dataset",
        "gen:lognormal:5K",
        "--index",
        "btree:leaf=8,art",
        "--runs",
        "2",
        "--dir",
        dir.path().join("stores").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let records: Vec<RecoveryRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!((r.n, r.payload_size, r.runs), (5000, 200, 2), "{r:?}");
        assert!(
            r.recovery_s > 0.0 && r.recovery_s_min <= r.recovery_s_max,
            "{r:?}"
        );
        assert!(r.index_keys_bytes == r.index_bytes + 8 * r.n, "{r:?}");
        assert!(r.log_bytes > r.n * 200, "{r:?}");
    }
    assert_eq!(records[0].map, "btree:leaf=8:inner=15");
    assert!(
        std::fs::read_dir(dir.path().join("stores"))
            .unwrap()
            .next()
            .is_none(),
        "the stores are removed"
    );
    let bad = lidx(&["recovery", "--index", "pgm"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}

/// `lidx dims approx` prints its table and writes its records and both figures.
#[test]
fn the_approximation_dimension_writes_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, time, leaves) = (
        dir.path().join("a.csv"),
        dir.path().join("time.svg"),
        dir.path().join("leaves.svg"),
    );
    let result = lidx(&[
        "dims",
        "approx",
        "--dataset",
        "gen:lognormal:20K",
        "--sizes",
        "64,1024",
        "--eps",
        "8,128",
        "--queries",
        "10K",
        "--runs",
        "1",
        "--out",
        csv.to_str().unwrap(),
        "--svg-time",
        time.to_str().unwrap(),
        "--svg-leaves",
        leaves.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let stdout = text(&result.stdout);
    assert!(
        stdout.contains("lsa-gap") && stdout.contains("opt-pla"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 7);
    for svg in [&time, &leaves] {
        assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
    }
    let again = lidx(&["dims", "approx", "--svg-time", time.to_str().unwrap()]);
    assert!(!again.status.success(), "an existing figure is refused");
    let bad = lidx(&["dims", "approx", "--eps", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}

/// `lidx dims structure` routes every query to its leaf through each structure (checked) and
/// draws Fig. 17c.
#[test]
fn the_structure_dimension_routes_to_the_same_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    let result = lidx(&[
        "dims",
        "structure",
        "--dataset",
        "gen:lognormal:20K",
        "--eps",
        "4,64",
        "--queries",
        "10K",
        "--runs",
        "1",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let stdout = text(&result.stdout);
    for s in ["rmi", "ats", "btree", "lrs"] {
        assert!(stdout.contains(s), "{s}: {stdout}");
    }
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let bad = lidx(&["dims", "structure", "--structures", "rmi,skiplist"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}
