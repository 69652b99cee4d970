//! `lidx recovery` (the log engine over each map, loaded, reopened and checked, with paper
//! 001's recovery time and space columns) and `lidx dims` (paper 001 §IV's design dimensions).

mod common;

use common::{lidx, lidx_ok, text};
use lidx_bench::records::{DimsUpdateRecord, RecoveryRecord};
use lidx_bench::report::read_records;

#[test]
fn every_map_recovers_and_reports_its_space() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    lidx_ok(&[
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
    let result = lidx_ok(&[
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
    let result = lidx_ok(&[
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
    let stdout = text(&result.stdout);
    for s in ["rmi", "ats", "btree", "lrs"] {
        assert!(stdout.contains(s), "{s}: {stdout}");
    }
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let bad = lidx(&["dims", "structure", "--structures", "rmi,skiplist"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}

/// `lidx dims insert` runs each strategy at each reserve on bench's insert protocol (every key
/// checked), counts retrains, writes one CSV row per strategy and reserve, draws Fig. 18a, and
/// refuses existing outputs and a reserve of 0.
#[test]
fn the_insertion_dimension_writes_its_table_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("i.csv"), dir.path().join("i.svg"));
    lidx_ok(&[
        "dims",
        "insert",
        "--dataset",
        "gen:lognormal:20K",
        "--reserve",
        "16,64",
        "--runs",
        "1",
        "--out",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let records: Vec<DimsUpdateRecord> = read_records(&csv).unwrap();
    let rows: Vec<(&str, Option<u64>)> = records
        .iter()
        .map(|r| (r.strategy.as_str(), r.reserve))
        .collect();
    assert_eq!(
        rows,
        [
            ("buffer", Some(16)),
            ("buffer", Some(64)),
            ("inplace", Some(16)),
            ("inplace", Some(64)),
            ("gap", Some(16)),
            ("gap", Some(64)),
            ("alex", None)
        ]
    );
    for r in &records {
        assert_eq!(
            (r.n, r.loaded, r.inserted),
            (20_000, 10_000, 10_000),
            "{r:?}"
        );
        assert!(r.insert_ns > 0.0 && r.retrains > 0, "{r:?}");
        assert!(r.retrain_s > 0.0 && r.retrain_s <= r.insert_s, "{r:?}");
    }
    // A segment takes `reserve` new keys between retrains whatever its strategy.
    assert_eq!(records[0].retrains, records[2].retrains);
    assert_eq!(records[0].retrains, records[4].retrains);
    assert!(records[1].retrains < records[0].retrains);
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(header
        .starts_with("schema,command,dataset,n,loaded,inserted,strategy,index,reserve,insert_ns"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    for again in [
        vec!["dims", "insert", "--svg", svg.to_str().unwrap()],
        vec!["dims", "insert", "--out", csv.to_str().unwrap()],
    ] {
        let again = lidx(&again);
        assert!(!again.status.success(), "an existing output is refused");
    }
    for bad in [
        vec!["dims", "insert", "--reserve", "128,0"],
        vec!["dims", "insert", "--strategies", "buffer,lsm"],
    ] {
        let bad = lidx(&bad);
        assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
    }
}

/// `lidx dims retrain` reads the retrain counters at each checkpoint for every strategy, the
/// dynamic PGM and ALEX, and draws Fig. 18b-d.
#[test]
fn the_retraining_dimension_counts_while_inserting() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let svgs: Vec<_> = ["progress", "count", "total", "average", "tradeoff"]
        .iter()
        .map(|f| dir.path().join(format!("{f}.svg")))
        .collect();
    let mut args = vec![
        "dims".to_string(),
        "retrain".into(),
        "--dataset".into(),
        "gen:lognormal:20K".into(),
        "--reserve".into(),
        "32".into(),
        "--strategies".into(),
        "buffer,dpgm,alex".into(),
        "--checkpoints".into(),
        "4".into(),
        "--runs".into(),
        "2".into(),
        "--out".into(),
        csv.to_str().unwrap().into(),
    ];
    for (flag, svg) in ["progress", "count", "total", "average", "tradeoff"]
        .iter()
        .zip(&svgs)
    {
        args.push(format!("--svg-{flag}"));
        args.push(svg.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    lidx_ok(&args);
    let records: Vec<DimsUpdateRecord> = read_records(&csv).unwrap();
    assert_eq!(records.len(), 3 * 4);
    for strategy in records.chunks(4) {
        let inserted: Vec<u64> = strategy.iter().map(|r| r.inserted).collect();
        assert_eq!(inserted, [2500, 5000, 7500, 10_000], "{strategy:?}");
        assert!(
            strategy.windows(2).all(|w| w[0].retrains <= w[1].retrains),
            "{strategy:?}"
        );
        assert!(strategy[3].retrains > 0, "{strategy:?}");
    }
    assert_eq!(records[4].index, "dpgm:eps=64:eps_rec=8:base=32");
    for svg in &svgs {
        assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
    }
    let bad = lidx(&["dims", "retrain", "--reserve", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}
