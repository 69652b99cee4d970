//! Regression (issue 13, fix 3): `lidx bench --on-disk` trusted file names. Swapping
//! `btree.fill=100.lidx` with `btree.fill=70.lidx` (or `pgm:eps=64` with `pgm:eps=16`) in a
//! `--dir` reported each file's figures under the other's label, exit code 0. Now each file
//! records its build parameters and opening it by spec checks them: the run stops with one
//! line naming the file, what it holds and what was asked, exit code 1 (the arguments are
//! valid; the directory's content is not what they name, like a corrupt file); `lidx verify`
//! calls the file damaged, and `lidx build` checks what it wrote the same way.

mod common;

use std::path::Path;

use common::{lidx, lidx_ok, text};

const DATASET: &str = "gen:lognormal:8K";

fn swap(dir: &Path, a: &str, b: &str) {
    let tmp = dir.join("swap.tmp");
    std::fs::rename(dir.join(a), &tmp).unwrap();
    std::fs::rename(dir.join(b), dir.join(a)).unwrap();
    std::fs::rename(&tmp, dir.join(b)).unwrap();
}

fn bench(device: &str, dir: &str, index: &str) -> (Option<i32>, String) {
    let mut args = vec![
        "bench",
        "--on-disk",
        "--device",
        device,
        "--index",
        index,
        "--dataset",
        DATASET,
        "--queries",
        "200",
        "--runs",
        "1",
    ];
    if device.starts_with("sim:") {
        args.extend(["--dir", dir]);
    }
    let out = lidx(&args);
    (out.status.code(), text(&out.stderr))
}

#[test]
fn swapped_files_of_one_kind_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let index = "btree,btree:fill=70,pgm:eps=64,pgm:eps=16";
    lidx_ok(&["build", "--index", index, "--dataset", DATASET, "--dir", d]);
    let file = format!("file:{d}");
    let (code, stderr) = bench(&file, d, index);
    assert_eq!(code, Some(0), "{stderr}");

    swap(dir.path(), "btree.fill=100.lidx", "btree.fill=70.lidx");
    swap(
        dir.path(),
        "pgm.eps=64.eps_rec=8.gran=item.lidx",
        "pgm.eps=16.eps_rec=8.gran=item.lidx",
    );
    let cases = [
        (
            "btree",
            "btree.fill=100.lidx holds btree:fill=70 with 8-byte payloads but btree:fill=100 \
             with 8-byte payloads was asked for",
        ),
        (
            "pgm:eps=64",
            "pgm.eps=64.eps_rec=8.gran=item.lidx holds pgm:eps=16:eps_rec=8:gran=item with \
             8-byte payloads but pgm:eps=64:eps_rec=8:gran=item with 8-byte payloads was asked \
             for",
        ),
    ];
    for device in [file.as_str(), "sim:nvme"] {
        for (index, message) in cases {
            let (code, stderr) = bench(device, d, index);
            assert_eq!(code, Some(1), "{device} {index}: {stderr}");
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            assert_eq!(errors.len(), 1, "{stderr}");
            assert!(errors[0].contains(message), "{device} {index}: {stderr}");
            assert!(errors[0].contains("rebuild"), "{stderr}");
        }
    }

    let out = lidx(&["verify", "--dir", d]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for name in [
        "btree.fill=100.lidx",
        "btree.fill=70.lidx",
        "pgm.eps=64.eps_rec=8.gran=item.lidx",
        "pgm.eps=16.eps_rec=8.gran=item.lidx",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("DAMAGED  {name}")) && l.contains("(its name)")),
            "{name}: {stdout}"
        );
    }

    // Renamed to a name no spec has, a file is read as what it holds.
    std::fs::rename(
        dir.path().join("btree.fill=70.lidx"),
        dir.path().join("mine.lidx"),
    )
    .unwrap();
    let out = lidx(&["verify", "--dir", d]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("ok       mine.lidx")),
        "{stdout}"
    );
}

#[test]
fn swapped_byte_tables_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let index = "byte-table:eps=16,byte-table:eps=32";
    let words = "gen:words:3K";
    lidx_ok(&["build", "--index", index, "--dataset", words, "--dir", d]);
    swap(
        dir.path(),
        "byte-table.eps=16.lidx",
        "byte-table.eps=32.lidx",
    );
    let out = lidx(&[
        "bench",
        "--on-disk",
        "--device",
        &format!("file:{d}"),
        "--index",
        "byte-table:eps=16",
        "--dataset",
        words,
        "--queries",
        "100",
        "--runs",
        "1",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("byte-table.eps=16.lidx holds byte-table:eps=32"),
        "{stderr}"
    );
    let out = lidx(&["verify", "--dir", d]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("DAMAGED  byte-table.eps=16.lidx"),
        "{}",
        text(&out.stdout)
    );
}
