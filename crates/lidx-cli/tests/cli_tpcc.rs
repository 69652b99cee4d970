//! `lidx tpcc` end to end (paper 002 §10.6): a 1-warehouse database at a tenth of the items and
//! customers, the B+-tree and the hybrid on a file device, each index a store (`kv:lsm`), the
//! tuples in a store (`store:lsm`, issue 34's second mode), records `lidx report` reads, and the typed refusals
//! of bad input.

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

/// Each of the eleven indexes a store of the `lsm` engine (`kv:lsm`, the tuples in memory), and
/// the second mode, on a file device: the same digest as the first mode's B+-tree, the checks
/// passed (the second mode's before and after a reopen), records that say where the tuples
/// were, and nothing left in the device's directory.
#[test]
fn the_tuples_in_a_store_read_what_the_first_mode_reads() {
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("device");
    let out = dir.path().join("t.jsonl");
    let result = lidx_ok(&[
        "tpcc",
        "--scale",
        "10",
        "--transactions",
        "600",
        "--index",
        "btree,kv:lsm,store:lsm",
        "--fsync",
        "never",
        "--device",
        &format!("file:{}", device.display()),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&result.stdout);
    assert!(stdout.contains("after a reopen"), "{stdout}");
    assert!(
        stdout.contains("kv:lsm") && stdout.contains("store:lsm"),
        "{stdout}"
    );
    let records: Vec<TpccRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|r| r.digest == records[0].digest));
    let tuples: Vec<&str> = records.iter().map(|r| r.tuples.as_str()).collect();
    assert_eq!(tuples, ["memory", "memory", "store"]);
    assert!(records[1].tps > 0.0 && records[1].disk_bytes > 0);
    assert_eq!(records[2].fsync, "never");
    assert!(records[2].reopen_s > 0.0 && records[2].disk_bytes > records[0].disk_bytes);
    assert!(names(&device).is_empty(), "{:?}", names(&device));
}

/// A record of the first mode written before the store mode existed (no `tuples`, `fsync`
/// or `reopen_s`) still reads, as a memory run.
#[test]
fn a_record_without_the_mode_reads_as_the_first_mode() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let mut record = serde_json::to_value(TpccRecord {
        schema: "tpcc/1".to_string(),
        index: "btree:fill=100".to_string(),
        tuples: "store".to_string(),
        ..TpccRecord::default()
    })
    .unwrap();
    for field in ["tuples", "fsync", "reopen_s", "kv_memory"] {
        record.as_object_mut().unwrap().remove(field).unwrap();
    }
    std::fs::write(&out, format!("{record}\n")).unwrap();
    let mut set = RecordSet::default();
    set.read(&out).unwrap();
    assert_eq!(set.tpcc.len(), 1);
    assert_eq!(set.tpcc[0].tuples, "memory");
    assert_eq!(
        (set.tpcc[0].fsync.as_str(), set.tpcc[0].reopen_s),
        ("", 0.0)
    );
    assert_eq!(set.tpcc[0].kv_memory, 0);
}

#[test]
fn bad_input_is_a_usage_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    for (args, says) in [
        (vec!["--warehouses", "0"], "1 to 65535 warehouses"),
        (vec!["--index", "btree,bogus"], "hybrid[:<model>]"),
        (vec!["--index", "hybrid:zonemap"], "hybrid[:<model>]"),
        (vec!["--index", "btree,store:lsmx"], "store:<engine>"),
        (vec!["--index", "store:"], "store:<engine>"),
        (vec!["--index", "btree,kv:nonsense"], "kv:<engine>"),
        (vec!["--kv-memory", "lots"], "first"),
        (vec!["--kv-memory", "10K"], "8 KiB for each of 11 stores"),
        (
            vec!["--index", "store:lsm", "--fsync", "sometimes"],
            "every:<ms>",
        ),
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
