//! Records survive a round trip through JSON lines and CSV, absent values included, and the
//! output format follows the file extension.

use lidx_bench::records::BenchRecord;
use lidx_bench::report::{read_records, table, write_records, Format, Machine};
use lidx_bench::BenchError;

fn record(index: &str, segments: Option<u64>, speedup: Option<f64>) -> BenchRecord {
    let machine = Machine::detect();
    BenchRecord {
        schema: "bench/1".to_string(),
        command: "lidx bench".to_string(),
        dataset: "lognormal:1M".to_string(),
        n: 1_000_000,
        workload: "lookup:zipf".to_string(),
        index: index.to_string(),
        label: format!("{index}:eps=64"),
        params: "eps=64".to_string(),
        operation: "lower_bound".to_string(),
        build_s: 0.125,
        build_keys_per_s: 8e6,
        bytes: 4096,
        bytes_per_key: 0.004096,
        mean_ns: 123.5,
        mean_ns_min: 120.25,
        mean_ns_max: 130.0,
        p50_ns: 110,
        p99_ns: 400,
        p999_ns: 900,
        sample_every: 16,
        huge_pages: true,
        mean_log2_window: 6.5,
        segments,
        height: segments.map(|_| 2),
        speedup_vs_binary: speedup,
        runs: 3,
        queries: 1_000_000,
        seed: 42,
        cpu: machine.cpu,
        cores: machine.cores,
        lidx_version: "0.1.0".to_string(),
    }
}

#[test]
fn jsonl_and_csv_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let records = vec![
        record("pgm", Some(1234), Some(2.5)),
        record("sorted", None, None),
    ];
    for name in ["out.jsonl", "out.json", "out.csv"] {
        let path = dir.path().join(name);
        write_records(&path, &records).unwrap();
        assert_eq!(
            read_records::<BenchRecord>(&path).unwrap(),
            records,
            "{name}"
        );
    }
    let text = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.contains("\"speedup_vs_binary\":null"));
    let csv = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    assert!(csv.starts_with("schema,command,dataset,n,workload,index,label,params,build_s,"));
    assert!(csv
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("bench/1,lidx bench,"));
}

#[test]
fn other_extensions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["out.txt", "out"] {
        let path = dir.path().join(name);
        assert!(matches!(
            Format::for_path(&path),
            Err(BenchError::BadSpec { .. })
        ));
        assert!(write_records::<BenchRecord>(&path, &[]).is_err());
        assert!(!path.exists());
    }
}

#[test]
fn the_table_shows_the_key_columns() {
    let text = table(&[record("pgm", Some(1234), Some(2.5))]);
    for needle in ["pgm:eps=64", "mean ns", "123.5", "2.50x", "1234"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}
