//! `lidx tpcc` end to end (paper 002 §10.6): a 1-warehouse database at a tenth of the items and
//! customers, the B+-tree and the hybrid on a file device, records `lidx report` reads, and the
//! typed refusals of bad input.

mod common;

use common::{lidx, lidx_ok, names, text};
use lidx_bench::records::{RecordSet, TpccRecord};
use lidx_bench::report::read_records;

#[test]
fn one_warehouse_runs_on_a_file_device_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("device");
    let out = dir.path().join("t.jsonl");
    let result = lidx_ok(&[
        "tpcc",
        "--warehouses",
        "1",
        "--scale",
        "10",
        "--transactions",
        "1500",
        "--index",
        "btree,hybrid:cpr-pgm",
        "--device",
        &format!("file:{}", device.display()),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&result.stdout);
    assert!(
        stdout.contains("consistency conditions 1-4 passed"),
        "{stdout}"
    );
    assert!(stdout.contains("hybrid:cpr-pgm:64"), "{stdout}");
    let records: Vec<TpccRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!((r.warehouses, r.scale, r.transactions), (1, 10, 1500));
        assert_eq!(r.timing, "wall");
        assert_eq!(r.digest, records[0].digest);
        assert!(r.tps > 0.0 && r.blocks_read_per_txn > 0.0 && r.index_bytes > 0);
    }
    assert!(
        names(&device).is_empty(),
        "the indexes are removed: {:?}",
        names(&device)
    );
    let mut set = RecordSet::default();
    set.read(&out).unwrap();
    assert_eq!(set.tpcc, records);
    let again = lidx(&[
        "tpcc",
        "--scale",
        "10",
        "--transactions",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2), "an existing --out is refused");
}

#[test]
fn bad_input_is_a_usage_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    for (args, says) in [
        (vec!["--warehouses", "0"], "1 to 65535 warehouses"),
        (vec!["--index", "btree,bogus"], "hybrid[:<model>]"),
        (vec!["--index", "hybrid:zonemap"], "hybrid[:<model>]"),
        (vec!["--scale", "7"], "divisor"),
        (vec!["--transactions", "0"], "--transactions"),
        (vec!["--device", "tape:x"], "file:<dir>"),
    ] {
        let mut all = vec!["tpcc"];
        all.extend(args.iter().copied());
        for (flag, value) in [("--scale", "10"), ("--transactions", "10")] {
            if !args.contains(&flag) {
                all.extend([flag, value]);
            }
        }
        let run = lidx(&all);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let device = format!("file:{}", missing.display());
    let run = lidx(&[
        "tpcc",
        "--scale",
        "10",
        "--transactions",
        "10",
        "--device",
        &device,
    ]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("create it first"), "{stderr}");
}
