//! The `lidx` binary end to end on tiny generated data: bench prints its table and writes
//! records, gen writes a file that stats and bench read, bad arguments exit 2 with one line.

use std::path::Path;
use std::process::{Command, Output};

use lidx_bench::report::{read_records, BenchRecord};

fn lidx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(args)
        .output()
        .expect("the lidx binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn bench_args<'a>(dataset: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "bench",
        "--dataset",
        dataset,
        "--index",
        "sorted",
        "--queries",
        "2K",
        "--runs",
        "2",
        "--seed",
        "3",
        "--out",
        out,
    ]
}

#[test]
fn bench_prints_a_table_and_writes_records() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["records.jsonl", "records.csv"] {
        let out = dir.path().join(name);
        let result = lidx(&bench_args("gen:lognormal:3000", out.to_str().unwrap()));
        let stdout = text(&result.stdout);
        assert!(result.status.success(), "{}", text(&result.stderr));
        assert!(stdout.contains("mean ns"), "{stdout}");
        assert!(stdout.contains("sorted"), "{stdout}");
        let records: Vec<BenchRecord> = read_records(&out).unwrap();
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!((r.n, r.queries, r.runs, r.seed), (3_000, 2_000, 2, 3));
        assert_eq!(r.speedup_vs_binary, Some(1.0));
    }
}

#[test]
fn gen_writes_a_file_that_stats_and_bench_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.sosd");
    let file = file.to_str().unwrap();
    let result = lidx(&["gen", "--dataset", "gen:lognormal:1000", "--out", file]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    assert_eq!(std::fs::metadata(file).unwrap().len(), 8 + 8 * 1000);

    let result = lidx(&["stats", "--dataset", file, "--json"]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    assert!(stats.is_object(), "{stats}");
    let result = lidx(&["stats", "--dataset", file]);
    assert!(result.status.success(), "{}", text(&result.stderr));

    let out = dir.path().join("on-file.json");
    let result = lidx(&bench_args(file, out.to_str().unwrap()));
    assert!(result.status.success(), "{}", text(&result.stderr));
    assert_eq!(
        read_records::<BenchRecord>(Path::new(&out)).unwrap()[0].n,
        1000
    );
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        &["bench", "--index", "pgm:eps=64,nope"][..],
        &["bench", "--index", "rs:bits"],
        &["bench", "--workload", "scan"],
        &["bench", "--queries", "lots"],
        &["bench", "--out", "records.txt"],
    ] {
        let result = lidx(args);
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: bad "), "{stderr}");
        assert!(stderr.contains("expected"), "{stderr}");
        assert!(result.stdout.is_empty());
    }
}
