//! Regressions (issue 13, "fix first" 1 and 2; issue 12, rough edge 8):
//!
//! * `lidx join --out` naming an input table truncated that input to 0 bytes before failing.
//!   An output that is an input (the same path or another path to the same file) is refused
//!   before anything is opened for writing, and an existing output is replaced only with
//!   `--force`; `lidx table create` follows the same rule.
//! * `lidx table create` left the indexes saved next to a table it replaced, and a stale one
//!   gave a wrong join with exit code 0: they are removed, and one put back is rebuilt
//!   (`"index": "rebuilt: stale"`), never used.
//! * `lidx join --algo read-both` printed a `checksum` unrelated to the joins' checksum: the
//!   baselines print `"checksum": null` and their key sum as `read_checksum`.

mod common;

use common::json_lines;

fn create(dir: &str, extra: &[&str]) -> std::process::Output {
    common::table_create("gen:lognormal:20K", "1", dir, extra)
}

fn join(algo: &str, dir: &str, out: &str, extra: &[&str]) -> std::process::Output {
    common::join(
        algo,
        &format!("{dir}r1"),
        &format!("{dir}large"),
        out,
        extra,
    )
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    assert!(create(&dir, &[]).status.success());
    let left = format!("{dir}r1");
    let before = std::fs::read(&left).unwrap();
    let same_file_elsewhere = format!("{dir}link");
    std::fs::hard_link(&left, &same_file_elsewhere).unwrap();
    for out in [left.clone(), format!("{dir}./r1"), same_file_elsewhere] {
        for force in [&[][..], &["--force"][..]] {
            let run = join("sort-merge", &dir, &out, force);
            assert_eq!(run.status.code(), Some(2), "{out} {force:?}");
            assert!(stderr(&run).contains("not an input"), "{}", stderr(&run));
            assert_eq!(std::fs::read(&left).unwrap(), before, "{out}");
        }
    }
}

#[test]
fn an_existing_output_is_replaced_only_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    assert!(create(&dir, &[]).status.success());
    let out = format!("{dir}out");
    std::fs::write(&out, b"a user's file").unwrap();
    let run = join("sort-merge", &dir, &out, &[]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("--force"), "{}", stderr(&run));
    assert_eq!(std::fs::read(&out).unwrap(), b"a user's file");
    let run = join("sort-merge", &dir, &out, &["--force"]);
    assert!(run.status.success(), "{}", stderr(&run));
    // `table create` too.
    let large = std::fs::read(format!("{dir}large")).unwrap();
    let again = create(&dir, &["--seed", "7"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(std::fs::read(format!("{dir}large")).unwrap(), large);
    assert!(create(&dir, &["--seed", "7", "--force"]).status.success());
}

#[test]
fn a_replaced_tables_saved_index_is_removed_and_a_stale_one_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    assert!(create(&dir, &[]).status.success());
    let out = format!("{dir}out");
    let built = &json_lines(&join("inlj-pgm", &dir, &out, &[]))[0];
    assert_eq!(built["index"], "built");
    let loaded = &json_lines(&join("inlj-pgm", &dir, &out, &["--force"]))[0];
    assert_eq!(loaded["index"], "loaded");
    let index = format!("{dir}large.pgm.idx");
    let saved = std::fs::read(&index).unwrap();
    // Other keys, same count: the old index is removed with the table it described.
    assert!(create(&dir, &["--seed", "7", "--force"]).status.success());
    assert!(!std::path::Path::new(&index).exists());
    // Put back by hand, it is stale: rebuilt, and the join is right.
    std::fs::write(&index, saved).unwrap();
    let merge = &json_lines(&join("sort-merge", &dir, &out, &["--force"]))[0];
    let line = &json_lines(&join("inlj-pgm", &dir, &out, &["--force"]))[0];
    assert_eq!(line["index"], "rebuilt: stale");
    assert_eq!(line["output_count"], merge["output_count"]);
    assert_eq!(line["checksum"], merge["checksum"]);
}

#[test]
fn baselines_print_no_join_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("{}/", tmp.path().display());
    assert!(create(&dir, &[]).status.success());
    let out = format!("{dir}out");
    let merge = &json_lines(&join("sort-merge", &dir, &out, &[]))[0];
    assert!(merge["checksum"].as_u64().is_some());
    assert!(merge.get("read_checksum").is_none());
    for algo in ["read-both", "read-both-write"] {
        let line = &json_lines(&join(algo, &dir, &out, &["--force"]))[0];
        assert!(line["checksum"].is_null(), "{line}");
        assert!(line["read_checksum"].as_u64().is_some(), "{line}");
    }
}
