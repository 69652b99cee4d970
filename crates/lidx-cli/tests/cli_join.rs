//! `lidx table create` and `lidx join` end to end on tiny generated data: every algorithm
//! prints one JSON line with the same output count and checksum, a saved index is reused by
//! the next run, string keys and the simulated device work, bad arguments exit 2 with one line.

mod common;

use common::{json_lines, lidx};

fn create(dir: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    json_lines(&common::table_create(
        "gen:lognormal:30K",
        "1,10",
        dir,
        extra,
    ))
}

#[test]
fn every_algorithm_prints_the_same_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    let tables = create(&dir, &[]);
    assert_eq!(tables.len(), 3);
    let large = tables[0]["count"].as_u64().unwrap();
    assert_eq!(tables[1]["count"].as_u64().unwrap(), large);
    assert_eq!(tables[2]["count"].as_u64().unwrap(), large / 10);
    let path = |name: &str| format!("{dir}{name}");
    let mut seen = None;
    for algo in [
        "sort-merge",
        "hash",
        "grace-hash",
        "inlj-btree",
        "inlj-pgm",
        "inlj-sampled-pgm",
        "inlj-rs",
        "inlj-rmi",
    ] {
        for threads in ["1", "2"] {
            let out = common::join(
                algo,
                &path("r10"),
                &path("large"),
                &path("out"),
                &["--force", "--threads", threads],
            );
            let lines = json_lines(&out);
            assert_eq!(lines.len(), 1);
            let line = &lines[0];
            assert_eq!(line["algo"], algo);
            assert_eq!(line["output_count"].as_u64().unwrap(), large / 10);
            let sum = line["checksum"].as_u64().unwrap();
            assert_eq!(*seen.get_or_insert(sum), sum, "{algo}");
            assert!(line["blocks_read"].as_u64().unwrap() > 0);
            if algo.starts_with("inlj") && threads == "2" {
                assert_eq!(line["index_loaded"], true, "{algo}");
            }
        }
    }
    // The simulated device reads the same files.
    let lines = json_lines(&lidx(&[
        "join",
        "--algo",
        "inlj-sampled-pgm",
        "--left",
        &path("r1"),
        "--right",
        &path("large"),
        "--out",
        &path("out"),
        "--force",
        "--device",
        "sim:nvme",
        "--window",
        "1024",
    ]));
    assert_eq!(lines[0]["output_count"].as_u64().unwrap(), large);
}

#[test]
fn string_keys_and_key_type_mismatch() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("{}/s", tmp.path().display());
    let tables = create(&prefix, &["--string-keys"]);
    assert_eq!(tables[0]["key_type"], "str16");
    let ints = format!("{}/i", tmp.path().display());
    create(&ints, &[]);
    let lines = json_lines(&lidx(&[
        "join",
        "--algo",
        "inlj-pgm",
        "--left",
        &format!("{prefix}.r10"),
        "--right",
        &format!("{prefix}.large"),
        "--out",
        &format!("{prefix}.out"),
        "--force",
    ]));
    assert_eq!(lines[0]["key_type"], "str16");
    let out = lidx(&[
        "join",
        "--algo",
        "sort-merge",
        "--left",
        &format!("{prefix}.r10"),
        "--right",
        &format!("{ints}.large"),
        "--out",
        &format!("{prefix}.out"),
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("str16"));
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    create(&dir, &[]);
    let t = format!("{dir}large");
    for bad in [
        vec!["--algo", "nested-loop"],
        vec!["--algo", "hash", "--memory", "lots"],
        vec!["--algo", "hash", "--memory", "1K"],
        vec!["--algo", "hash", "--threads", "0"],
        vec!["--algo", "inlj-pgm", "--window", "2"],
        vec!["--algo", "hash", "--device", "tape"],
    ] {
        let mut args = vec!["join", "--left", &t, "--right", &t, "--out"];
        let out_path = format!("{dir}out");
        args.push(&out_path);
        args.extend(bad.iter());
        let out = lidx(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{bad:?}"
        );
    }
    let out = lidx(&[
        "table",
        "create",
        "--from",
        "gen:lognormal:1K",
        "--ratio",
        "0",
        "--out",
        &dir,
    ]);
    assert_eq!(out.status.code(), Some(2));
}
