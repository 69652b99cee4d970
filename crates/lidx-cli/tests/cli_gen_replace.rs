//! Regression (issue 13, leftover): `lidx gen --force` created the new file over the old one
//! and, when writing it failed (a full disk), removed it: the old dataset was lost along with
//! the new one. Now the new file is written beside `--out` and renamed over it only when whole,
//! so a failed write leaves the old file byte for byte and no temporary file behind.
//!
//! The write is made to fail with a file size limit (`ulimit -f`, SIGXFSZ ignored so that the
//! write returns `EFBIG` instead of killing the process), which stops it after the first
//! kilobytes as a full disk would.

mod common;

use std::process::Command;

use common::{names, text};

/// Runs `lidx gen --dataset <dataset> --out <out> --force` under a file size limit of 1 KiB.
fn gen_limited(dataset: &str, out: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" gen --dataset \"$1\" --out \"$2\" --force")
        .args([env!("CARGO_BIN_EXE_lidx"), dataset, out])
        .output()
        .expect("sh runs")
}

#[test]
fn a_failed_forced_gen_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, dataset) in [
        ("keys.sosd", "gen:lognormal:20K"),
        ("words.txt", "gen:words:20K"),
    ] {
        let path = dir.path().join(name);
        let file = path.to_str().unwrap();
        std::fs::write(file, b"the old dataset").unwrap();
        let result = gen_limited(dataset, file);
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("writing"), "{stderr}");
        assert_eq!(std::fs::read(file).unwrap(), b"the old dataset", "{name}");
    }
    assert_eq!(
        names(dir.path()),
        ["keys.sosd", "words.txt"],
        "no temporary file left"
    );

    // Without the limit the same command replaces the file, leaving nothing else.
    let file = dir.path().join("keys.sosd");
    let result = common::lidx(&[
        "gen",
        "--dataset",
        "gen:lognormal:20K",
        "--out",
        file.to_str().unwrap(),
        "--force",
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 + 8 * 20_000);
    assert_eq!(names(dir.path()), ["keys.sosd", "words.txt"]);
}
