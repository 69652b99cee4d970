//! `lidx bench --on-disk` with paper 003's six workloads on updatable indexes (issue 16): every
//! workload runs on 20K keys on the simulated and the real device, writes records with the
//! write breakdown and ratios to the B+-tree, leaves no file behind and no file of `lidx build`
//! changed; `lidx build` saves every updatable index and `--out` replaces a file only with
//! `--force`; usage errors (a parameter an index does not take, too many operations, threads)
//! are one line and exit 2 before anything runs.

mod common;

use common::{lidx, lidx_ok, text, without_progress};

const WORKLOADS: [&str; 6] = [
    "lookup",
    "scan",
    "write-only",
    "read-heavy",
    "write-heavy",
    "balanced",
];

#[test]
fn six_workloads_on_the_simulated_device_with_records() {
    let dir = tempfile::tempdir().unwrap();
    for workload in WORKLOADS {
        let out = dir.path().join(format!("{workload}.jsonl"));
        let result = lidx(&[
            "bench",
            "--on-disk",
            "--updatable",
            "--index",
            "btree,btree:fill=70",
            "--dataset",
            "gen:lognormal:20K",
            "--device",
            "sim:sata-ssd",
            "--workload",
            workload,
            "--queries",
            "2K",
            "--runs",
            "1",
            "--resident",
            "inner,none",
            "--out",
            out.to_str().unwrap(),
        ]);
        let stderr = text(&result.stderr);
        assert!(result.status.success(), "{workload}: {stderr}");
        assert!(
            stderr.contains("progress: btree:fill=100:resident=none"),
            "{stderr}"
        );
        let stdout = text(&result.stdout);
        assert!(
            stdout.contains("vs btree") && stdout.contains("modeled time"),
            "{stdout}"
        );
        let records: Vec<serde_json::Value> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 4, "{workload}");
        let writes = !matches!(workload, "lookup" | "scan");
        for r in &records {
            assert_eq!(r["ops"], 2000);
            assert_eq!(r["search_us"].is_f64(), writes, "{workload}: {r}");
            assert!(r["throughput_vs_btree"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["modeled_p99_us"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["storage_bytes"].as_u64().unwrap() > 0, "{r}");
            let inner = r["inner_read_per_op"].as_f64().unwrap();
            match r["index"].as_str().unwrap() {
                l if l.ends_with("resident=inner") => assert_eq!(inner, 0.0, "{r}"),
                _ => assert!(inner >= 1.0, "{r}"),
            }
        }
        assert_eq!(records[0]["throughput_vs_btree"], 1.0);
        assert_eq!(
            records[0]["bulk_keys"],
            if writes { 10_000 } else { 20_000 }
        );
    }
}

#[test]
fn write_workload_on_a_file_device_leaves_built_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let index_dir = dir.path().join("idx");
    let index_dir = index_dir.to_str().unwrap();
    lidx_ok(&[
        "build",
        "--index",
        "btree",
        "--dataset",
        "gen:lognormal:20K",
        "--dir",
        index_dir,
    ]);
    let file = dir.path().join("idx/btree.fill=100.lidx");
    let before = std::fs::read(&file).unwrap();
    let result = lidx_ok(&[
        "bench",
        "--on-disk",
        "--dataset",
        "gen:lognormal:20K",
        "--device",
        &format!("file:{index_dir}"),
        "--workload",
        "write-heavy",
        "--queries",
        "1K",
        "--runs",
        "1",
        "--block-size",
        "8192",
    ]);
    let stdout = text(&result.stdout);
    assert!(
        stdout.contains("write-heavy") && stdout.contains("8192-byte blocks"),
        "{stdout}"
    );
    assert!(stdout.contains("wall time"), "{stdout}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the built file is untouched"
    );
    let names: Vec<String> = std::fs::read_dir(index_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["btree.fill=100.lidx"],
        "the run's own file is removed"
    );
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    for (args, says) in [
        (&["--index", "alex:fill=70"][..], "btree-learned"),
        (&["--index", "dpgm:eps=x"], "dfiting[:eps=<n>]"),
        (
            &["--workload", "write-only", "--queries", "20K"],
            "at most 10000 operations",
        ),
        (&["--workload", "balanced", "--threads", "2"], "one writer"),
        (
            &["--workload", "balanced", "--bulk-load", "100"],
            "strictly between 0 and 100",
        ),
        (&["--workload", "write-twice"], "write-heavy"),
        (
            &["--workload", "balanced", "--dataset", "gen:words:1K"],
            "numeric keys",
        ),
    ] {
        let mut all = vec!["bench", "--on-disk"];
        all.extend_from_slice(args);
        if !args.contains(&"--dataset") {
            all.extend_from_slice(&["--dataset", "gen:lognormal:20K"]);
        }
        if !args.contains(&"--workload") {
            all.extend_from_slice(&["--workload", "balanced"]);
        }
        let result = lidx(&all);
        let stderr = without_progress(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}: {stderr}");
        // The operation count is checked against the dataset once it is loaded (its notes).
        let errors = stderr.lines().filter(|l| !l.starts_with("note: ")).count();
        assert_eq!(errors, 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(result.stdout.is_empty());
    }
}

#[test]
fn build_saves_every_updatable_index_and_replaces_one_only_when_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let index = "alex,lipp,dfiting:eps=32,dpgm,btree-learned";
    let build = |extra: &[&str]| {
        let mut args = vec![
            "build",
            "--index",
            index,
            "--dataset",
            "gen:lognormal:5K",
            "--dir",
            d,
        ];
        args.extend_from_slice(extra);
        lidx(&args)
    };
    let built = build(&[]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let stdout = text(&built.stdout);
    for saved in [
        "alex.lidx",
        "lipp.lidx",
        "dfiting.eps=32.lidx",
        "dpgm.eps=64.lidx",
        "btree-learned.lidx",
    ] {
        assert!(stdout.contains(saved), "{saved} in {stdout}");
    }
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert!(files.contains(&"alex.lidx.inner".to_string()), "{files:?}");
    assert!(files.contains(&"alex.lidx.data".to_string()), "{files:?}");
    assert!(files.contains(&"lipp.lidx".to_string()), "{files:?}");
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.path().join(f)).unwrap())
        .collect();

    let refused = build(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--force"));
    for (f, bytes) in files.iter().zip(&before) {
        assert_eq!(
            &std::fs::read(dir.path().join(f)).unwrap(),
            bytes,
            "{f} changed"
        );
    }

    let forced = build(&["--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));

    let strings = lidx(&[
        "build",
        "--index",
        "alex",
        "--dataset",
        "gen:words:1K",
        "--dir",
        d,
    ]);
    assert_eq!(strings.status.code(), Some(2), "{}", text(&strings.stderr));
    assert!(text(&strings.stderr).contains("numeric"));
}

#[test]
fn bench_out_replaces_an_existing_file_only_when_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mine.csv");
    std::fs::write(&out, "a user's own file\n").unwrap();
    let out = out.to_str().unwrap();
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--on-disk",
            "--index",
            "btree",
            "--workload",
            "write-only",
            "--dataset",
            "gen:lognormal:5K",
            "--device",
            "sim:sata-ssd",
            "--queries",
            "500",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        lidx(&args)
    };
    let refused = bench(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(out).unwrap(), "a user's own file\n");
    let forced = bench(&["--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert!(std::fs::read_to_string(out).unwrap().contains("write-only"));
}
