//! The `lidx` binary end to end on tiny generated data: bench prints its table and writes
//! records, gen writes a file that stats and bench read, build writes on-disk indexes that
//! bench --on-disk reopens on the real and the simulated device, a corrupted index file is a
//! one-line error, bad arguments exit 2 with one line.

use std::path::Path;
mod common;

use common::{lidx, lidx_ok, text};

use lidx_bench::records::{BenchRecord, DiskRecord};
use lidx_bench::report::read_records;

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
    lidx_ok(&["gen", "--dataset", "gen:lognormal:1000", "--out", file]);
    assert_eq!(std::fs::metadata(file).unwrap().len(), 8 + 8 * 1000);

    let result = lidx_ok(&["stats", "--dataset", file, "--json"]);
    let stats: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    assert!(stats.is_object(), "{stats}");
    lidx_ok(&["stats", "--dataset", file]);

    let out = dir.path().join("on-file.json");
    let result = lidx(&bench_args(file, out.to_str().unwrap()));
    assert!(result.status.success(), "{}", text(&result.stderr));
    assert_eq!(
        read_records::<BenchRecord>(Path::new(&out)).unwrap()[0].n,
        1000
    );
}

/// Issue 13: `lidx gen` replaced an existing `--out` without asking. Now it is refused (exit
/// 2, the file untouched) unless `--force`, and a dataset file is never its own output.
#[test]
fn gen_replaces_an_existing_file_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.sosd");
    let file = file.to_str().unwrap();
    std::fs::write(file, b"mine").unwrap();
    let result = lidx(&["gen", "--dataset", "gen:lognormal:1000", "--out", file]);
    assert_eq!(result.status.code(), Some(2), "{}", text(&result.stderr));
    assert!(
        text(&result.stderr).contains("--force"),
        "{}",
        text(&result.stderr)
    );
    assert_eq!(std::fs::read(file).unwrap(), b"mine");
    let forced = [
        "gen",
        "--dataset",
        "gen:lognormal:1000",
        "--out",
        file,
        "--force",
    ];
    lidx_ok(&forced);
    assert_eq!(std::fs::metadata(file).unwrap().len(), 8 + 8 * 1000);
    let result = lidx(&["gen", "--dataset", file, "--out", file, "--force"]);
    assert_eq!(result.status.code(), Some(2), "{}", text(&result.stderr));
    assert!(
        text(&result.stderr).contains("not an input"),
        "{}",
        text(&result.stderr)
    );
    assert_eq!(std::fs::metadata(file).unwrap().len(), 8 + 8 * 1000);
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        &["bench", "--index", "pgm:eps=64,nope"][..],
        &["bench", "--index", "rs:bits"],
        &["bench", "--workload", "scan"],
        &["bench", "--queries", "lots"],
        &["bench", "--out", "records.txt"],
        &["bench", "--on-disk", "--device", "tape:/x"],
        &["bench", "--on-disk", "--device", "sim:floppy"],
        &["bench", "--on-disk", "--index", "btree:fill=0"],
        &["bench", "--on-disk", "--index", "sorted"],
        &["bench", "--on-disk", "--index", "art"],
        &["bench", "--on-disk", "--resident", "some"],
        &["bench", "--on-disk", "--fetch", "eventually"],
        &["bench", "--on-disk", "--workload", "scan:0"],
        &[
            "build",
            "--index",
            "pgm:gran=0",
            "--dataset",
            "gen:normal:1K",
            "--dir",
            "/tmp/x",
        ],
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

#[test]
fn build_then_bench_on_disk_on_the_file_and_simulated_devices() {
    let dir = tempfile::tempdir().unwrap();
    let index_dir = dir.path().join("idx");
    let index_dir = index_dir.to_str().unwrap();
    let index = "btree,pgm:eps=16,rs:err=8:gran=page,zonemap";
    let built = lidx_ok(&[
        "build",
        "--index",
        index,
        "--dataset",
        "gen:lognormal:20K",
        "--dir",
        index_dir,
    ]);
    assert!(
        text(&built.stdout).contains("btree.fill=100.lidx"),
        "{}",
        text(&built.stdout)
    );

    for device in [format!("file:{index_dir}"), "sim:hdd".to_string()] {
        let out = dir.path().join(format!("disk-{}.jsonl", &device[..4]));
        let out = out.to_str().unwrap();
        let mut args = vec![
            "bench",
            "--on-disk",
            "--device",
            &device,
            "--index",
            index,
            "--dataset",
            "gen:lognormal:20K",
            "--queries",
            "300",
            "--runs",
            "1",
            "--resident",
            "inner,none",
            "--fetch",
            "all-at-once,one-by-one",
            "--out",
            out,
        ];
        if device.starts_with("sim") {
            args.extend([
                "--dir",
                index_dir,
                "--workload",
                "scan",
                "--cache-blocks",
                "64",
            ]);
        }
        let result = lidx(&args);
        assert!(
            result.status.success(),
            "{device}: {}",
            text(&result.stderr)
        );
        assert!(
            text(&result.stderr).contains("reusing"),
            "{}",
            text(&result.stderr)
        );
        let records: Vec<DiskRecord> = read_records(Path::new(out)).unwrap();
        assert_eq!(records.len(), 8, "{device}");
        let inner = records
            .iter()
            .find(|r| r.index.ends_with("resident=inner"))
            .unwrap();
        assert_eq!(inner.build_s, 0.0, "the file was reused");
        if device.starts_with("file") {
            assert_eq!(inner.blocks_per_op, 1.0, "one leaf per lookup");
            assert!(inner.modeled_us.is_none());
        } else {
            assert!(inner.modeled_us.unwrap() > 0.0, "modeled time is reported");
            assert!(
                inner.cache_hit_ratio.unwrap() > 0.0,
                "repeated scans hit the cache"
            );
        }
    }

    let file = Path::new(index_dir).join("btree.fill=100.lidx");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[4096 + 100] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let result = lidx(&[
        "bench",
        "--on-disk",
        "--device",
        &format!("file:{index_dir}"),
        "--index",
        "btree",
        "--dataset",
        "gen:lognormal:20K",
        "--queries",
        "300",
        "--runs",
        "1",
    ]);
    let stderr = text(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("corrupt") && stderr.contains("block 1"),
        "{stderr}"
    );
}

#[test]
fn start_calibrates_reports_its_node_mix_and_runs_read_mostly() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.txt");
    let model = model.to_str().unwrap();
    let calibrated = lidx_ok(&["start", "calibrate", "--runs", "3", "--out", model]);
    assert!(text(&calibrated.stdout).contains("MultiNode4"));
    assert!(std::fs::metadata(model).unwrap().len() > 0);
    // The saved model is the user's file: a second calibration refuses it unless --force.
    let again = lidx(&["start", "calibrate", "--runs", "3", "--out", model]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
    let forced = lidx_ok(&[
        "start",
        "calibrate",
        "--runs",
        "3",
        "--json",
        "--force",
        "--out",
        model,
    ]);
    let rows: Vec<serde_json::Value> = text(&forced.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 7, "one record per node kind");
    assert_eq!(rows[0]["schema"], "start-nodes/1");

    let stats = lidx_ok(&[
        "start",
        "stats",
        "--dataset",
        "gen:lognormal:20K",
        "--model",
        model,
    ]);
    assert!(
        text(&stats.stdout).contains("N4="),
        "{}",
        text(&stats.stdout)
    );

    let records = dir.path().join("mixed.csv");
    let bench = lidx_ok(&[
        "start",
        "bench",
        "--dataset",
        "gen:lognormal:20K",
        "--withhold",
        "1K",
        "--lookups",
        "5K",
        "--runs",
        "1",
        "--out",
        records.to_str().unwrap(),
    ]);
    assert!(
        text(&bench.stdout).contains("start-greedy"),
        "{}",
        text(&bench.stdout)
    );
    let csv = std::fs::read_to_string(&records).unwrap();
    assert_eq!(
        csv.lines().count(),
        4,
        "a header and a record per tree:\n{csv}"
    );
    assert!(csv.lines().next().unwrap().contains("mixed_op_ns"), "{csv}");
}
