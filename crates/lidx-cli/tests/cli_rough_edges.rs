//! Rough edges a new user hit with real data (issue 12), one regression test each:
//!
//! 1. an unsorted SOSD file printed its message twice (`keys are not sorted: ...: keys are not
//!    sorted: ...`): the bench errors reported the library error as their `source` too;
//! 2. `bench --help` omitted `art`, `start`, `start-greedy`: the list was written by hand;
//! 5. the table's `mean ns` (back to back) and `p50` (one lookup alone) did not say which was
//!    which;
//! 6. `ycsb` printed nothing for 70 s when stderr was not a terminal;
//! 7. `ycsb --device file:/new/path` created the whole path, and `build` created its directory
//!    before checking the dataset, leaving it empty on failure;
//! 9. `KeyTypeMismatch` advised "open it with the key type it was built with" without naming
//!    what to use;
//! 10. `ycsb` reported any failure to open its storage as "bad block size `4096`";
//! 11. a missing dataset file said "expected gen:... or a path to an SOSD file".

mod common;

use common::{lidx, text, without_progress};
use lidx_bench::registry::IndexSpec;

#[test]
fn an_unsorted_file_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unsorted.sosd");
    // The writer writes keys as given: this file is out of order.
    lidx_bench::sosd::write_sosd(&path, &[1, 5, 3, 9]).unwrap();
    for args in [
        &["stats", "--dataset", path.to_str().unwrap()][..],
        &[
            "bench",
            "--dataset",
            path.to_str().unwrap(),
            "--queries",
            "10",
        ],
    ] {
        let out = lidx(args);
        let stderr = without_progress(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.matches("not sorted").count(), 1, "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn bench_help_lists_every_index_of_the_registry() {
    let out = lidx(&["bench", "--help"]);
    let help = text(&out.stdout);
    for form in IndexSpec::forms() {
        assert!(help.contains(&form), "`{form}` missing from:\n{help}");
    }
    for name in [
        "art",
        "start",
        "start-greedy",
        "zonemap",
        "leco-zonemap-rough",
    ] {
        assert!(help.contains(name), "{name}");
    }
}

#[test]
fn the_table_says_which_figure_is_throughput_and_which_latency() {
    let dir = tempfile::tempdir().unwrap();
    let out = lidx(&[
        "bench",
        "--dataset",
        "gen:lognormal:2K",
        "--index",
        "sorted,pgm",
        "--queries",
        "1K",
        "--runs",
        "1",
        "--out",
        dir.path().join("r.jsonl").to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("mean ns (throughput)"), "{stdout}");
    assert!(stdout.contains("p50 ns (latency)"), "{stdout}");
    let help = text(&lidx(&["bench", "--help"]).stdout);
    assert!(
        help.contains("(throughput)") && help.contains("(latency)"),
        "{help}"
    );
}

#[test]
fn a_missing_dataset_file_says_no_such_file() {
    let out = lidx(&["stats", "--dataset", "no/such/books_200M_uint64"]);
    let stderr = without_progress(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: no such file: no/such/books_200M_uint64;"),
        "{stderr}"
    );
}

#[test]
fn ycsb_creates_only_the_last_directory_of_its_device() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a/b/kv");
    let out = lidx(&[
        "ycsb",
        "--dataset",
        "gen:lognormal:2K",
        "--device",
        &format!("file:{}", deep.display()),
        "--ops",
        "100",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("create it first"), "{stderr}");
    assert!(!dir.path().join("a").exists(), "nothing is created");
}

#[test]
fn build_leaves_no_directory_when_the_dataset_fails() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("idx");
    let out = lidx(&[
        "build",
        "--index",
        "btree",
        "--dataset",
        dir.path().join("missing.sosd").to_str().unwrap(),
        "--dir",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        !target.exists(),
        "build created its directory before failing"
    );
}

#[test]
fn a_bad_block_size_is_named_as_such_and_nothing_else_is() {
    let dir = tempfile::tempdir().unwrap();
    let device = format!("file:{}", dir.path().join("kv").display());
    let out = lidx(&[
        "ycsb",
        "--dataset",
        "gen:lognormal:2K",
        "--device",
        &device,
        "--block-size",
        "1000",
    ]);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains("block_size") && stderr.contains("1000"),
        "{stderr}"
    );
    assert!(!dir.path().join("kv").exists());
    // A failure that is not about the block size does not say it is.
    let out = lidx(&[
        "ycsb",
        "--dataset",
        "gen:lognormal:2K",
        "--device",
        &format!("file:{}", dir.path().join("x/y/kv").display()),
    ]);
    assert!(
        !text(&out.stderr).contains("block size"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_key_type_mismatch_names_both_types_and_what_to_do() {
    let err = lidx::raw::key::check_key_type::<u64>("idx.lidx", "str16", 16).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("holds str16 keys") && message.contains("opened for u64 keys"),
        "{message}"
    );
    assert!(message.contains("rebuild it from u64 keys"), "{message}");
}

#[test]
fn a_long_command_prints_progress_lines_when_stderr_is_not_a_terminal() {
    let out = lidx(&[
        "ycsb",
        "--dataset",
        "gen:lognormal:2K",
        "--workload",
        "read-only",
        "--ops",
        "200",
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(lines.len() >= 2, "{stderr}");
    assert!(lines.iter().any(|l| l.contains("done")), "{stderr}");
}
