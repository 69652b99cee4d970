//! `lidx recovery`: the log engine over each map is loaded, reopened and checked; the table
//! and the records carry paper 001's recovery time and space columns.

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
