//! Issue 30, as a user would meet it: the files a command writes and removes (classes 1, 2
//! and 3) and three of class 10's panics and refusals. Each test is the scenario of the issue,
//! asserting the user's bytes are intact and the exit code is right.
//!
//! * Class 1, a command removed what it did not create: `lidx recovery --dir D` refused a
//!   non-empty `D/log-<map>` (a user's files) and then deleted it; `lidx ycsb --device
//!   file:D` emptied `D/ycsb-<workload>-<store>-<run>` before each run, whoever's it was, and
//!   `lidx bench --on-disk --updatable --device file:D` removed every `D/upd.<index>*`.
//! * Class 2, helper files clobbered users' files: `join --threads N --out X` wrote `X.part<i>`
//!   and `grace-hash` `X.grace.b<n>` / `X.grace.p<n>`, truncating and then deleting any file of
//!   that name, an input table included; `lidx gen` killed mid-write left its hidden temporary
//!   file (1.5 GB in the report).
//! * Class 3, outputs replaced before the new one existed: `join --force` emptied the old
//!   output before the join ran, a failed join left 0 bytes (and, without `--force`, an empty
//!   `--out` that blocked the retry); `bench --out` naming its own `--dataset` with `--force`
//!   overwrote the dataset.
//! * Class 10: a closed stdout (`lidx repro list | true`, `stats`, `kv stats`, `kv check`,
//!   `kv get`, `verify`) panicked with exit code 101; an INLJ join on read-only tables failed
//!   because it insisted on saving its index; `table create` from text merged `a` and `a\0`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{json_lines, lidx, lidx_ok, names, text};

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// `lidx table create` of 20K lognormal keys at ratio 1 into `dir` (`large`, `r1`).
fn tables(dir: &Path, extra: &[&str]) {
    let out = format!("{}/", dir.display());
    let run = common::table_create("gen:lognormal:20K", "1", &out, extra);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

fn join(algo: &str, left: &Path, right: &Path, out: &Path, extra: &[&str]) -> Output {
    common::join(algo, &path(left), &path(right), &path(out), extra)
}

/// Puts a user's file in the directory `parent/child`, runs `lidx command`, and asserts that it
/// succeeded and that `parent` holds that directory and file alone, as they were.
fn leaves_a_users_directory_alone(parent: &Path, child: &str, command: &[&str]) {
    let users = parent.join(child);
    std::fs::create_dir_all(&users).unwrap();
    std::fs::write(users.join("notes.txt"), b"mine").unwrap();
    let run = lidx(command);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(std::fs::read(users.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(names(parent), [child]);
    assert_eq!(names(&users), ["notes.txt"]);
}

#[test]
fn recovery_leaves_a_users_directory_named_like_its_store_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("D");
    let dir = path(&d);
    let command = [
        "recovery",
        "--dataset",
        "gen:lognormal:2K",
        "--index",
        "btree",
        "--runs",
        "1",
        "--dir",
        &dir,
    ];
    leaves_a_users_directory_alone(&d, "log-btree_leaf_16_inner_15", &command);
}

#[test]
fn ycsb_leaves_a_users_directory_named_like_its_run_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("dev");
    let device = format!("file:{}", d.display());
    let command = [
        "ycsb",
        "--dataset",
        "gen:lognormal:2K",
        "--workload",
        "read-only",
        "--ops",
        "1K",
        "--store",
        "btree",
        "--device",
        &device,
    ];
    let run = "ycsb-read-only-store_btree_budget_default_fsync_never-0";
    leaves_a_users_directory_alone(&d, run, &command);
}

#[test]
fn bench_updatable_leaves_a_users_files_named_like_its_index_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let device = tmp.path().join("dev");
    std::fs::create_dir_all(&device).unwrap();
    let users = ["upd.btree.fill=100.lidx", "upd.btree.fill=100.lidx.notes"];
    for name in users {
        std::fs::write(device.join(name), name.as_bytes()).unwrap();
    }
    lidx_ok(&[
        "bench",
        "--on-disk",
        "--updatable",
        "--index",
        "btree",
        "--dataset",
        "gen:lognormal:5K",
        "--device",
        &format!("file:{}", device.display()),
        "--workload",
        "write-only",
        "--queries",
        "1K",
        "--runs",
        "1",
    ]);
    for name in users {
        assert_eq!(std::fs::read(device.join(name)).unwrap(), name.as_bytes());
    }
    assert_eq!(names(&device), users);
}

#[test]
fn join_helper_files_never_touch_a_users_files_or_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tables(dir, &[]);
    let (left, large) = (dir.join("r1"), dir.join("large"));
    let users = [
        "out.part0",
        "out.part1",
        "out.grace.b0",
        "out.grace.b1",
        "out.grace.p0",
        "out.grace.p1",
    ];
    for name in users {
        std::fs::write(dir.join(name), name.as_bytes()).unwrap();
    }
    let out = dir.join("out");
    let threads = join("sort-merge", &left, &large, &out, &["--threads", "2"]);
    let merged = &json_lines(&threads)[0];
    let grace = join(
        "grace-hash",
        &left,
        &large,
        &out,
        &["--force", "--threads", "2"],
    );
    assert_eq!(json_lines(&grace)[0]["checksum"], merged["checksum"]);
    for name in users {
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            name.as_bytes(),
            "{name}"
        );
    }
    // An input table named as a part of the output: read, never opened for writing.
    let input = dir.join("j.part1");
    std::fs::copy(&large, &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let run = join(
        "sort-merge",
        &left,
        &input,
        &dir.join("j"),
        &["--threads", "2"],
    );
    assert_eq!(json_lines(&run)[0]["checksum"], merged["checksum"]);
    assert_eq!(std::fs::read(&input).unwrap(), before);
    let mut expected: Vec<String> = ["j", "j.part1", "large", "out", "r1"]
        .into_iter()
        .chain(users)
        .map(String::from)
        .collect();
    expected.sort();
    assert_eq!(names(dir), expected, "nothing else is left");
}

/// Sends `signal` to the process `child`.
fn kill(child: &std::process::Child, signal: i32) {
    // SAFETY: kill(2) on the id of a child this test started and has not waited for.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0);
}

/// True when `dir` holds anything besides `out`: a staged file (in a staging directory, once
/// a file is in it).
fn staged(dir: &Path, out: &str) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let e = e.unwrap();
        e.file_name() != out
            && (e.path().is_file()
                || std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some()))
    })
}

#[test]
fn gen_killed_mid_write_leaves_nothing_and_the_old_output_untouched() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("keys.sosd");
        gen_1k(&out);
        let before = std::fs::read(&out).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lidx"))
            .args([
                "gen",
                "--dataset",
                "gen:uniform-sparse:20M",
                "--force",
                "--out",
            ])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !staged(tmp.path(), "keys.sosd") {
            assert!(
                child.try_wait().unwrap().is_none(),
                "gen ended before its temporary file was seen"
            );
            assert!(started.elapsed() < Duration::from_secs(120));
            std::thread::sleep(Duration::from_millis(2));
        }
        kill(&child, signal);
        let status = child.wait().unwrap();
        assert!(!status.success(), "signal {signal}: {status:?}");
        assert_eq!(names(tmp.path()), ["keys.sosd"], "signal {signal}");
        assert_eq!(std::fs::read(&out).unwrap(), before, "signal {signal}");
    }
}

#[test]
fn a_failed_join_keeps_the_old_output_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (sorted, shuffled) = (tmp.path().join("s"), tmp.path().join("u"));
    tables(&sorted, &[]);
    tables(&shuffled, &["--shuffle"]);
    let out = tmp.path().join("out");
    let good = join(
        "sort-merge",
        &sorted.join("r1"),
        &sorted.join("large"),
        &out,
        &[],
    );
    let good = &json_lines(&good)[0];
    let before = std::fs::read(&out).unwrap();
    // sort-merge on unsorted tables fails half-way through (keys out of order).
    for threads in ["1", "2"] {
        let extra = ["--force", "--threads", threads];
        let failed = join(
            "sort-merge",
            &shuffled.join("r1"),
            &shuffled.join("large"),
            &out,
            &extra,
        );
        assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
        assert_eq!(std::fs::read(&out).unwrap(), before, "--threads {threads}");
    }
    // Without --force, a failed join leaves no output to block the retry.
    let new = tmp.path().join("new");
    let failed = join(
        "sort-merge",
        &shuffled.join("r1"),
        &shuffled.join("large"),
        &new,
        &[],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert!(!new.exists());
    let retry = join(
        "sort-merge",
        &sorted.join("r1"),
        &sorted.join("large"),
        &new,
        &[],
    );
    assert_eq!(json_lines(&retry)[0]["checksum"], good["checksum"]);
    assert_eq!(names(tmp.path()), ["new", "out", "s", "u"]);
}

#[test]
fn an_output_that_is_the_commands_dataset_is_refused_even_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("keys.jsonl");
    gen_1k(&data);
    let before = std::fs::read(&data).unwrap();
    let d = path(&data);
    let runs: [&[&str]; 3] = [
        &[
            "bench",
            "--index",
            "pgm",
            "--queries",
            "1000",
            "--runs",
            "1",
        ],
        &["recovery", "--index", "btree", "--runs", "1"],
        &[
            "bench",
            "--workload",
            "insert",
            "--index",
            "btree",
            "--runs",
            "1",
        ],
    ];
    for command in runs {
        let mut args = command.to_vec();
        args.extend_from_slice(&["--dataset", &d, "--out", &d, "--force"]);
        let run = lidx(&args);
        assert_eq!(
            run.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&run.stderr)
        );
        assert!(
            text(&run.stderr).contains("not an input"),
            "{}",
            text(&run.stderr)
        );
        assert_eq!(std::fs::read(&data).unwrap(), before, "{args:?}");
    }
    assert_eq!(names(tmp.path()), ["keys.jsonl"]);
}

/// Runs `lidx args` with stdout a pipe whose reading end is closed.
fn into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let db = path(&tmp.path().join("db"));
    for args in [
        &["kv", "create", "--db", &db][..],
        &["kv", "put", "--db", &db, "k", "v"],
    ] {
        let run = lidx(args);
        assert!(run.status.success(), "{args:?}: {}", text(&run.stderr));
    }
    let tables_dir = tmp.path().join("t");
    tables(&tables_dir, &[]);
    let t = path(&tables_dir);
    let out = path(&tmp.path().join("joined"));
    let commands: [&[&str]; 8] = [
        &["repro", "list"],
        &["stats", "--dataset", "gen:lognormal:10K"],
        &["kv", "stats", "--db", &db],
        &["kv", "check", "--db", &db],
        &["kv", "get", "--db", &db, "k"],
        &["verify", "--dir", &t],
        &["gen", "--dataset", "gen:uniform-dense:1K", "--out", &out],
        &[
            "join",
            "--algo",
            "hash",
            "--left",
            &format!("{t}/r1"),
            "--right",
            &format!("{t}/large"),
            "--out",
            &format!("{out}.join"),
        ],
    ];
    for args in commands {
        let run = into_closed_pipe(args);
        let stderr = text(&run.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(run.status.code(), Some(101), "{args:?}: {stderr}");
    }
    // The outputs were renamed into place before the line on stdout: nothing staged is left.
    assert_eq!(names(tmp.path()), ["db", "joined", "joined.join", "t"]);
}

/// A read-only view of `dir`: a read-only bind mount for root (who ignores permission bits),
/// the directory's write bits cleared for anyone else. Undone on drop.
struct ReadOnly {
    view: PathBuf,
    mounted: bool,
}

impl ReadOnly {
    fn new(dir: &Path, view: &Path) -> ReadOnly {
        use std::os::unix::fs::PermissionsExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
            return ReadOnly {
                view: dir.to_path_buf(),
                mounted: false,
            };
        }
        std::fs::create_dir_all(view).unwrap();
        let mount = |args: &[&str]| {
            let status = Command::new("mount").args(args).status().unwrap();
            assert!(status.success(), "mount {args:?}");
        };
        mount(&["--bind", &path(dir), &path(view)]);
        mount(&["-o", "remount,bind,ro", &path(view)]);
        ReadOnly {
            view: view.to_path_buf(),
            mounted: true,
        }
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.mounted {
            let _ = Command::new("umount").arg(&self.view).status();
        } else {
            let _ = std::fs::set_permissions(&self.view, std::fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn an_inlj_on_read_only_tables_uses_its_index_from_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tables");
    tables(&dir, &[]);
    let out = tmp.path().join("out");
    let merge = join("sort-merge", &dir.join("r1"), &dir.join("large"), &out, &[]);
    let merge = &json_lines(&merge)[0];
    let before = names(&dir);
    let ro = ReadOnly::new(&dir, &tmp.path().join("ro"));
    for algo in ["inlj-pgm", "inlj-btree"] {
        let run = join(
            algo,
            &ro.view.join("r1"),
            &ro.view.join("large"),
            &out,
            &["--force"],
        );
        let line = &json_lines(&run)[0];
        assert_eq!(line["checksum"], merge["checksum"], "{algo}");
        assert!(
            line["index"].as_str().unwrap().contains("in memory only"),
            "{algo}: {line}"
        );
        assert!(
            text(&run.stderr).contains("not saved"),
            "{}",
            text(&run.stderr)
        );
    }
    drop(ro);
    assert_eq!(names(&dir), before);
}

#[test]
fn table_create_refuses_text_keys_that_padding_would_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys.txt");
    let out = tmp.path().join("t");
    let (from, dir) = (
        format!("text:{}", keys.display()),
        format!("{}/", out.display()),
    );
    let create = |lines: &[u8]| {
        std::fs::write(&keys, lines).unwrap();
        lidx(&[
            "table", "create", "--from", &from, "--ratio", "1", "--out", &dir,
        ])
    };
    let run = create(b"a\na\0\nb\n");
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("zero-padded"), "{stderr}");
    assert!(!out.join("large").exists());
    // Keys that differ in more than trailing zero bytes stay distinct; real duplicates drop.
    let lines = json_lines(&create(b"a\na\na\0b\nb\n"));
    assert_eq!(lines[0]["count"], 3);
}

/// Class 3 for `lidx build`: index files were written in place under their own names, so a
/// killed build left a file whose first block was zeroed (which `lidx bench --on-disk` then
/// found), and `--force` removed an updatable index's old files before the new build ran.
/// Now every file is built in a private directory and renamed into place once all are whole.
#[test]
fn a_killed_build_keeps_the_old_index_files_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let indexes = "btree,dpgm";
    lidx_ok(&[
        "build",
        "--dataset",
        "gen:uniform-dense:2K",
        "--index",
        indexes,
        "--dir",
        &path(&dir),
    ]);
    let before: Vec<(String, Vec<u8>)> = names(&dir)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(["build", "--force", "--dataset", "gen:uniform-sparse:30M"])
        .args(["--index", indexes, "--dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut seen = before.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    seen.sort();
    // Killed once a staged file exists: the build is writing.
    while !std::fs::read_dir(&dir).unwrap().any(|e| {
        let e = e.unwrap();
        e.path().is_dir() && std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some())
    }) {
        assert!(child.try_wait().unwrap().is_none(), "build ended first");
        assert!(started.elapsed() < Duration::from_secs(300));
        std::thread::sleep(Duration::from_millis(2));
    }
    kill(&child, libc::SIGTERM);
    assert!(!child.wait().unwrap().success());
    assert_eq!(names(&dir), seen, "a killed build left files behind");
    for (name, bytes) in &before {
        assert_eq!(
            &std::fs::read(dir.join(name)).unwrap(),
            bytes,
            "{name} changed"
        );
    }
}

/// Writes 1K uniform-dense keys to the SOSD file `out`.
fn gen_1k(out: &Path) {
    lidx_ok(&[
        "gen",
        "--dataset",
        "gen:uniform-dense:1K",
        "--out",
        &path(out),
    ]);
}

/// Class 3: `lidx build` whose `--dir` holds its own dataset under an index's name is
/// refused, with or without `--force`, and the dataset is untouched.
#[test]
fn a_build_never_writes_over_its_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("zonemap.gran=item.lidx");
    gen_1k(&dataset);
    let before = std::fs::read(&dataset).unwrap();
    for force in [false, true] {
        let mut args = vec!["build", "--dataset", dataset.to_str().unwrap()];
        args.extend(["--index", "zonemap", "--dir", tmp.path().to_str().unwrap()]);
        if force {
            args.push("--force");
        }
        let out = lidx(&args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&dataset).unwrap(), before);
    }
}

/// Classes 1 and 3 for an updatable index: `lidx build --index alex --force` removed every file
/// named after the index that it did not write, so a dataset called `alex.lidx` (ALEX writes
/// only `alex.lidx.inner` and `.data`) and a user's `dpgm.eps=64.lidx.notes` were deleted.
#[test]
fn a_forced_build_removes_only_its_indexs_old_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("alex.lidx");
    gen_1k(&dataset);
    let keys = std::fs::read(&dataset).unwrap();
    let out = lidx(
        &["build", "--dataset", &path(&dataset), "--index", "alex"]
            .into_iter()
            .chain(["--dir", tmp.path().to_str().unwrap(), "--force"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&dataset).unwrap(), keys);

    let dir = tmp.path().join("idx");
    let build = |dataset: &str| {
        let out = lidx(
            &["build", "--dataset", dataset, "--index", "dpgm"]
                .into_iter()
                .chain(["--dir", dir.to_str().unwrap(), "--force"])
                .collect::<Vec<_>>(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    build("gen:uniform-dense:2K");
    let first = names(&dir);
    std::fs::write(dir.join("dpgm.eps=64.lidx.notes"), b"mine\n").unwrap();
    build("gen:uniform-sparse:200K");
    let second = names(&dir);
    assert_eq!(
        std::fs::read(dir.join("dpgm.eps=64.lidx.notes")).unwrap(),
        b"mine\n"
    );
    // The first build's level files are gone (the second wrote others), the note stayed.
    let stale: Vec<&String> = first.iter().filter(|n| !second.contains(n)).collect();
    assert!(
        stale.iter().all(|n| n.starts_with("dpgm.eps=64.lidx.L")),
        "{stale:?}"
    );
}

/// Class 3 across a command's outputs: `lidx ycsb --curve --out R --csv C --svg S` renamed each
/// into place as it was written, so a figure that could not be written left the records and
/// the CSV already replaced. Now all are staged and renamed together: a failure on the last
/// one leaves the old files as they were and nothing new.
#[test]
fn a_failed_figure_leaves_the_commands_other_outputs_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let (records, csv) = (tmp.path().join("rec.jsonl"), tmp.path().join("c.csv"));
    std::fs::write(&records, b"{\"old\":1}\n").unwrap();
    std::fs::write(&csv, b"old\n").unwrap();
    let out = lidx(&[
        "ycsb",
        "--dataset",
        "gen:lognormal:20K",
        "--ops",
        "1K",
        "--workload",
        "read-only",
        "--curve",
        "--budgets",
        "64K,256K",
        "--csv",
        &path(&csv),
        "--svg",
        &path(&tmp.path().join("no-such-dir").join("c.svg")),
        "--out",
        &path(&records),
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&records).unwrap(), b"{\"old\":1}\n");
    assert_eq!(std::fs::read(&csv).unwrap(), b"old\n");
    assert_eq!(names(tmp.path()), ["c.csv", "rec.jsonl"]);
}

/// Review of issue 30's fixes: `table create` into a directory it made printed its JSON lines
/// while that directory was still registered for removal, so with stdout a closed pipe the
/// failed print panicked and the unwinding removed the tables it had just written.
#[test]
fn table_create_into_a_new_directory_keeps_its_tables_when_stdout_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tnew");
    let out = format!("{}/", dir.display());
    let run = into_closed_pipe(&[
        "table",
        "create",
        "--from",
        "gen:uniform-dense:5K",
        "--ratio",
        "1",
        "--out",
        &out,
    ]);
    let stderr = text(&run.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(names(&dir), ["large", "r1"], "{stderr}");
}

/// Review of issue 30's fixes: `build --force` removed every file whose name began with an
/// updatable index's and whose bytes began with `lidx`, so a user's copies
/// (`alex.lidx.data.orig`, `lipp.lidx.v1-backup`) were deleted; and an index whose target
/// was a directory or a FIFO was built, reported, and silently dropped (exit 0).
#[test]
fn a_forced_build_keeps_copies_and_refuses_targets_that_are_not_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let build = |indexes: &str| {
        lidx(&[
            "build",
            "--dataset",
            "gen:uniform-dense:2K",
            "--index",
            indexes,
            "--dir",
            dir.to_str().unwrap(),
            "--force",
        ])
    };
    let first = build("alex,lipp");
    assert!(first.status.success(), "{}", text(&first.stderr));
    for (from, to) in [
        ("alex.lidx.data", "alex.lidx.data.orig"),
        ("lipp.lidx", "lipp.lidx.v1-backup"),
    ] {
        std::fs::copy(dir.join(from), dir.join(to)).unwrap();
    }
    let again = build("alex,lipp");
    assert!(again.status.success(), "{}", text(&again.stderr));
    for copy in ["alex.lidx.data.orig", "lipp.lidx.v1-backup"] {
        assert!(dir.join(copy).is_file(), "{copy} was removed");
    }
    std::fs::create_dir(dir.join("btree.fill=100.lidx")).unwrap();
    let refused = build("btree");
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(dir.join("btree.fill=100.lidx").is_dir());
}
