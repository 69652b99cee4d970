//! What the CLI tests share: running the `lidx` binary and reading what it prints.
//!
//! Each test file uses some of these, so the unused rest is allowed.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs the `lidx` binary built for these tests with `args`.
pub fn lidx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(args)
        .output()
        .expect("the lidx binary runs")
}

/// Bytes the binary printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The JSON lines a successful run printed (panics, with its stderr, if it failed).
pub fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// What a run printed on stderr besides its progress lines (stderr is a pipe in tests, so
/// progress comes as `progress: ...` lines).
pub fn without_progress(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !l.starts_with("progress: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The names of the entries in `dir`, sorted.
pub fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `lidx table create --from <from> --ratio <ratio> --out <out>` and then `extra`.
pub fn table_create(from: &str, ratio: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "table", "create", "--from", from, "--ratio", ratio, "--out", out,
    ];
    args.extend_from_slice(extra);
    lidx(&args)
}

/// Runs `lidx join --algo <algo> --left <left> --right <right> --out <out>` and then `extra`.
pub fn join(algo: &str, left: &str, right: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "join", "--algo", algo, "--left", left, "--right", right, "--out", out,
    ];
    args.extend_from_slice(extra);
    lidx(&args)
}

/// Runs `lidx args` as [`lidx`] does and asserts that it succeeded (its stderr the message).
pub fn lidx_ok(args: &[&str]) -> Output {
    let out = lidx(args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}
