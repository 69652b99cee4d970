//! Issue 30, classes 7, 8, 9 and part of 10, as a user meets them with `lidx kv`:
//! - class 7, a dump did not load back: `kv scan` printed escaped text but `kv load` took a
//!   `.tsv` raw, so a scan-then-load renamed every key with a tab, backslash or 0xff byte;
//!   `kv put` and `kv load` read the same text as different keys; a quoted CSV field and a
//!   header line loaded literally.
//! - class 8, a torture run passed without testing anything: `--writers 2001` made every
//!   writer panic and the run said "0 lost" with exit 0; killing `kv torture` left its child
//!   writing to the store for up to 120 s.
//! - class 9, partial work was not reported: a bad line stopped a load after some batches
//!   were committed without saying so, a failed first load left a store with its engine
//!   fixed, and 65 values of 16 MiB were refused as one record of over 1 GiB.
//! - class 10 (messages): "8 to 8 bytes", "0 is not a size", "(no such directory)" for a
//!   regular file.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{lidx, text};

fn run_ok(args: &[&str]) -> Vec<u8> {
    let out = lidx(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    out.stdout
}

/// Runs `lidx` with `input` on its standard input.
fn lidx_with_input(args: &[&str], input: impl FnOnce(&mut dyn Write) + Send + 'static) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lidx binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || input(&mut stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Keys and values a dump must carry exactly: tabs, backslashes, newlines, carriage returns,
/// commas, quotes, 0xff and 0x00 bytes, non-ASCII letters, and text that looks like an escape.
const AWKWARD: &[(&[u8], &[u8])] = &[
    (b"tab\there", b"a\tb"),
    (b"C:\\dir", b"C:\\\\share\\x41"),
    (b"bin\xff", b"\xff\xfe\x00"),
    (b"line\nbreak\r\n", b"two\nlines"),
    (b"a,b", b"\"quoted, with comma\""),
    (b"\"", b"'"),
    ("caf\u{e9}".as_bytes(), "na\u{ef}ve".as_bytes()),
    (b"\\t literally", b""),
    (b"key", b"value"),
    (b" spaces ", b" "),
];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A store holding [`AWKWARD`], written with `kv put --hex` (exact bytes).
fn awkward_store(root: &Path, name: &str) -> String {
    let db = root.join(name);
    run_ok(&["kv", "create", "--db", s(&db)]);
    for (k, v) in AWKWARD {
        run_ok(&["kv", "put", "--db", s(&db), "--hex", &hex(k), &hex(v)]);
    }
    s(&db).to_string()
}

/// Every key's exact value bytes, read back with `kv get --hex`.
fn assert_holds_awkward(db: &str) {
    for (k, v) in AWKWARD {
        let got = run_ok(&["kv", "get", "--db", db, "--hex", &hex(k)]);
        assert_eq!(text(&got).trim_end(), hex(v), "key {k:?} in {db}");
    }
}

/// Class 7: `kv scan > dump.tsv` then `kv load` of the dump gave other keys (the load took the
/// escaped text raw). Every format scan writes now loads back byte for byte, from a file and
/// through a pipe, in text and in hex.
#[test]
fn scan_then_load_round_trips_every_byte() {
    let root = tempdir();
    let db = awkward_store(root.path(), "db");
    assert_holds_awkward(&db);
    let full = run_ok(&["kv", "scan", "--db", &db]);
    for (format, extra) in [
        ("tsv", &[][..]),
        ("csv", &[][..]),
        ("jsonl", &[][..]),
        ("tsv", &["--hex"][..]),
        ("csv", &["--header"][..]),
    ] {
        let mut scan = vec!["kv", "scan", "--db", &db, "--format", format];
        scan.extend(extra);
        let dump = run_ok(&scan);
        let file = root.path().join(format!("dump{}.{format}", extra.join("")));
        std::fs::write(&file, &dump).unwrap();
        let copy = root.path().join(format!("copy-{format}{}", extra.join("")));
        let mut load = vec!["kv", "load", "--db", s(&copy), "--from", s(&file)];
        load.extend(extra);
        run_ok(&load);
        assert_holds_awkward(s(&copy));
        assert_eq!(
            run_ok(&["kv", "scan", "--db", s(&copy)]),
            full,
            "{format} {extra:?}"
        );
        // The same through a pipe: `kv scan | kv load --from -`.
        let piped = root
            .path()
            .join(format!("piped-{format}{}", extra.join("")));
        let mut load = vec![
            "kv",
            "load",
            "--db",
            s(&piped),
            "--from",
            "-",
            "--format",
            format,
        ];
        load.extend(extra);
        let out = lidx_with_input(&load, move |w| w.write_all(&dump).unwrap());
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            run_ok(&["kv", "scan", "--db", s(&piped)]),
            full,
            "piped {format}"
        );
    }
}

/// Class 7: a store of u64 keys (from an SOSD file) dumps its keys as decimal numbers; the
/// dump loads back into a new u64 store, and into the same store, as the same keys.
#[test]
fn a_u64_store_dump_loads_back_as_the_same_keys() {
    let root = tempdir();
    let sosd = root.path().join("k.sosd");
    lidx_bench::sosd::write_sosd(&sosd, &[0, 3, 700, u64::MAX]).unwrap();
    let db = root.path().join("db");
    run_ok(&["kv", "load", "--db", s(&db), "--from", s(&sosd)]);
    run_ok(&["kv", "put", "--db", s(&db), "700", "v\\\\\\t"]);
    let dump = run_ok(&["kv", "scan", "--db", s(&db), "--format", "csv"]);
    assert_eq!(text(&dump), "0,\n3,\n700,v\\\\\\t\n18446744073709551615,\n");
    let file = root.path().join("dump.csv");
    std::fs::write(&file, &dump).unwrap();
    let copy = root.path().join("copy");
    run_ok(&[
        "kv",
        "load",
        "--db",
        s(&copy),
        "--keys",
        "u64",
        "--from",
        s(&file),
    ]);
    run_ok(&["kv", "load", "--db", s(&db), "--from", s(&file)]);
    for store in [&db, &copy] {
        assert_eq!(
            run_ok(&["kv", "scan", "--db", s(store), "--format", "csv"]),
            dump
        );
        assert_eq!(
            run_ok(&["kv", "get", "--db", s(store), "--hex", "700"]),
            b"765c09\n"
        );
    }
}

/// Class 7: the `.tsv` a user writes by hand (or `kv scan` printed) holds `tab\there` and
/// `C:\\dir`; `kv load` stored those characters raw while `kv put`/`kv get` read them as
/// escapes, so `kv get 'tab\there'` did not find the key just loaded.
#[test]
fn put_get_and_load_read_the_same_text() {
    let root = tempdir();
    let tsv = root.path().join("hand.tsv");
    std::fs::write(&tsv, "tab\\there\t1\nC:\\\\dir\tx\\xffy\n").unwrap();
    let db = root.path().join("db");
    run_ok(&["kv", "load", "--db", s(&db), "--from", s(&tsv)]);
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "tab\\there"]), b"1\n");
    assert_eq!(
        run_ok(&["kv", "get", "--db", s(&db), "--hex", &hex(b"tab\there")]),
        b"31\n"
    );
    assert_eq!(
        run_ok(&["kv", "get", "--db", s(&db), "C:\\\\dir"]),
        b"x\\xffy\n"
    );
    // `kv put` of the same text replaces the loaded record instead of adding a second one.
    run_ok(&["kv", "put", "--db", s(&db), "tab\\there", "2"]);
    assert_eq!(
        run_ok(&["kv", "scan", "--db", s(&db)]),
        b"C:\\\\dir\tx\\xffy\ntab\\there\t2\n"
    );
    // A backslash that starts no escape is refused with its line, never stored literally.
    let bad = root.path().join("bad.tsv");
    std::fs::write(&bad, "good\t1\nC:\\dir\t2\n").unwrap();
    let out = lidx(&["kv", "load", "--db", s(&db), "--from", s(&bad)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("line 2") && err.contains("escape"), "{err}");
    let out = lidx(&["kv", "get", "--db", s(&db), "C:\\dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad escape"),
        "{}",
        text(&out.stderr)
    );
}

/// Class 7: `"a,b",1` loaded as the key `"a` (split at the first comma) and a header line as
/// a record `key` = `value`.
#[test]
fn quoted_csv_fields_and_a_header_load_as_csv_means() {
    let root = tempdir();
    let csv = root.path().join("q.csv");
    std::fs::write(
        &csv,
        "key,value\r\n\"a,b\",1\r\n\"say \"\"hi\"\"\",\"multi\nline\"\r\nplain,\r\n",
    )
    .unwrap();
    let db = root.path().join("db");
    run_ok(&["kv", "load", "--db", s(&db), "--from", s(&csv), "--header"]);
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "a,b"]), b"1\n");
    assert_eq!(
        run_ok(&["kv", "get", "--db", s(&db), "say \"hi\""]),
        b"multi\\nline\n"
    );
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "plain"]), b"\n");
    assert_eq!(
        lidx(&["kv", "get", "--db", s(&db), "key"]).status.code(),
        Some(1)
    );
    assert_eq!(
        text(&run_ok(&[
            "kv",
            "scan",
            "--db",
            s(&db),
            "--format",
            "csv",
            "--header"
        ])),
        "key,value\n\"a,b\",1\nplain,\n\"say \"\"hi\"\"\",multi\\nline\n"
    );
}

/// Class 9: a bad line at 5001 stopped the load after 4096 records were committed, and the
/// error did not say so. Now the records before the bad line are written and the error says
/// how many are durable and where to resume; resuming from there completes the load. A blank
/// line is skipped.
#[test]
fn a_failed_load_says_what_is_durable_and_where_to_resume() {
    let root = tempdir();
    let db = root.path().join("db");
    run_ok(&["kv", "create", "--db", s(&db)]);
    let mut lines: Vec<String> = (0..5000).map(|i| format!("k{i:05}\t{i}")).collect();
    lines.push(String::new()); // line 5001: blank, skipped
    lines.push("broken\\q\t1".to_string()); // line 5002: a bad escape
    lines.extend((5000..5100).map(|i| format!("k{i:05}\t{i}")));
    let tsv = root.path().join("big.tsv");
    std::fs::write(&tsv, lines.join("\n") + "\n").unwrap();
    let out = lidx(&["kv", "load", "--db", s(&db), "--from", s(&tsv)]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("line 5002"), "{err}");
    assert!(
        err.contains("5000 record(s) of this load are durable"),
        "{err}"
    );
    assert!(err.contains("resume from line 5002"), "{err}");
    assert!(err.contains("tail -n +5002"), "{err}");
    let scan = run_ok(&["kv", "scan", "--db", s(&db)]);
    assert_eq!(text(&scan).lines().count(), 5000);
    // Resume as told, with the bad line fixed.
    lines[5001] = "broken\\\\q\t1".to_string();
    let rest = lines[5001..].join("\n") + "\n";
    let out = lidx_with_input(
        &[
            "kv",
            "load",
            "--db",
            s(&db),
            "--format",
            "tsv",
            "--from",
            "-",
        ],
        move |w| w.write_all(rest.as_bytes()).unwrap(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scan = run_ok(&["kv", "scan", "--db", s(&db)]);
    assert_eq!(text(&scan).lines().count(), 5101);
    assert_eq!(
        run_ok(&["kv", "get", "--db", s(&db), "broken\\\\q"]),
        b"1\n"
    );
}

/// `kv load` of `file` into a new `btree` store `db`.
fn first_btree_load(db: &Path, file: &Path) -> Output {
    lidx(&[
        "kv",
        "load",
        "--db",
        s(db),
        "--engine",
        "btree",
        "--from",
        s(file),
    ])
}

/// Class 9: a first load that failed (on a bad header, or half-way) left a store behind with
/// its engine fixed, so a retry with another engine was refused. Now a failed load removes
/// what this run created, and only that.
#[test]
fn a_failed_first_load_leaves_no_store() {
    let root = tempdir();
    let parent = root.path().join("new");
    let db = parent.join("db");
    let csv = root.path().join("h.csv");
    std::fs::write(&csv, "key,value,comment\na,1\n").unwrap();
    let out = first_btree_load(&db, &csv);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("line 1") && err.contains("nothing is loaded"),
        "{err}"
    );
    assert!(
        !parent.exists(),
        "the failed load left {}",
        parent.display()
    );
    // Half-way: 9000 good records (two batches written) and then a bad line.
    let tsv = root.path().join("half.tsv");
    let mut body: String = (0..9000).map(|i| format!("k{i}\tv\n")).collect();
    body.push_str("no tab here\n");
    std::fs::write(&tsv, body).unwrap();
    let out = first_btree_load(&db, &tsv);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("line 9001"),
        "{}",
        text(&out.stderr)
    );
    assert!(!parent.exists());
    // The retry may choose another engine: nothing was fixed by the failed runs.
    std::fs::write(&csv, "key,value\na,1\n").unwrap();
    run_ok(&[
        "kv",
        "load",
        "--db",
        s(&db),
        "--engine",
        "hybrid",
        "--from",
        s(&csv),
        "--header",
    ]);
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "a"]), b"1\n");
    // A failed load into a store that exists keeps the store and everything in it.
    std::fs::write(&csv, "b,2\nc\n").unwrap();
    let out = lidx(&["kv", "load", "--db", s(&db), "--from", s(&csv)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "a"]), b"1\n");
    assert_eq!(run_ok(&["kv", "get", "--db", s(&db), "b"]), b"2\n");
}

/// Class 9: `kv load` packed 4096 records into one log record whatever their size, so 65
/// values of 16 MiB (each within the limit) were refused as "a record of 1090519841 bytes".
#[test]
fn values_summing_past_the_log_record_limit_load() {
    const VALUE: usize = 16 << 20;
    let root = tempdir();
    let db = root.path().join("db");
    let out = lidx_with_input(
        &[
            "kv",
            "load",
            "--db",
            s(&db),
            "--engine",
            "log:trie:btree",
            "--fsync",
            "never",
            "--format",
            "tsv",
            "--from",
            "-",
            "--json",
        ],
        |w| {
            let value = vec![b'v'; VALUE];
            for i in 0..65 {
                w.write_all(format!("big{i:02}\t").as_bytes()).unwrap();
                w.write_all(&value).unwrap();
                w.write_all(b"\n").unwrap();
            }
        },
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["loaded"], 65);
    assert_eq!(v["table_records"], 65);
    let got = run_ok(&["kv", "get", "--db", s(&db), "big64"]);
    assert_eq!(got.len(), VALUE + 1);
    assert!(got[..VALUE].iter().all(|&b| b == b'v'));
}

/// Class 10: messages that said something untrue or unhelpful.
#[test]
fn messages_say_what_is_true_and_what_to_do() {
    let root = tempdir();
    // A regular file given as a store's directory was "(no such directory)".
    let file = root.path().join("notes.txt");
    std::fs::write(&file, "my notes\n").unwrap();
    let out = lidx(&["kv", "get", "--db", s(&file), "k"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("is a file, not a directory"), "{err}");
    assert!(!err.contains("no such directory"), "{err}");
    // The same file as the directory of `lidx build`'s index files was "File exists".
    let out = lidx(&[
        "build",
        "--index",
        "btree",
        "--dataset",
        "gen:lognormal:1K",
        "--dir",
        s(&file),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is a file, not a directory"));
    assert_eq!(std::fs::read(&file).unwrap(), b"my notes\n");
    // And as the directory `lidx verify` reads: "expected an existing directory".
    let out = lidx(&["verify", "--dir", s(&file)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is a file, not a directory"));
    // A log store takes 8-byte keys: the refusal said "(8 to 8 bytes)".
    let db = root.path().join("log");
    run_ok(&["kv", "create", "--db", s(&db), "--engine", "log:btree"]);
    let out = lidx(&["kv", "put", "--db", s(&db), "abc", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("exactly 8 bytes"), "{err}");
    assert!(!err.contains("8 to 8"), "{err}");
    // `--memory-budget 0` was "0 is not a size"; now a usage error with the accepted range.
    for budget in ["0", "100", "1T", "lots"] {
        let out = lidx(&["kv", "stats", "--db", s(&db), "--memory-budget", budget]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{budget}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(!err.contains("is not a size"), "{err}");
        assert!(err.contains("from 4096 to 274877906944"), "{err}");
    }
}

fn torture(db: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["kv", "torture", "--db", s(db), "--seed", "3"];
    args.extend(extra);
    lidx(&args)
}

/// Class 8: `--writers 2001` on 2000 keys made every writer panic (a writer owned no key) and
/// the run reported "0 writes acknowledged, 0 lost" with exit 0; `--max-delay-ms 5` killed
/// most children before their first write. Parameters that leave nothing to test are refused
/// before anything is created.
#[test]
fn torture_refuses_parameters_that_test_nothing() {
    let root = tempdir();
    let db = root.path().join("db");
    for extra in [
        &["--writers", "2001", "--cycles", "2"][..],
        &["--writers", "0", "--cycles", "2"][..],
        &["--writers", "3", "--power-loss", "--cycles", "2"][..],
        &["--cycles", "0"][..],
        &["--max-delay-ms", "5"][..],
    ] {
        let out = torture(&db, extra);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("--writers") || err.contains("--max-delay-ms"),
            "{err}"
        );
        assert!(!db.exists(), "{extra:?} created the store");
    }
    assert!(text(&torture(&db, &["--writers", "2001"]).stderr).contains("1 to 64"));
    let short = torture(&db, &["--max-delay-ms", "5"]);
    assert!(text(&short.stderr).contains("a delay of 50 to 60000 ms"));
}

/// Class 8: a writer's panic was ignored while the child lived, and the parent counted the
/// cycle as passed. Now a panic in a child is reported to the parent and fails the run with
/// its message (the harness's hidden self-test makes the first writer panic).
#[test]
fn a_panic_in_a_writer_fails_the_torture_run() {
    let root = tempdir();
    let db = root.path().join("db");
    let out = torture(&db, &["--cycles", "5", "--inject-panic-after", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the child panicked"), "{err}");
    assert!(
        err.contains("the injected panic after 0 acknowledged writes"),
        "{err}"
    );
}

/// The ids of the processes whose parent is `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(id) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the command name may hold spaces, so split after it.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        if after.split(' ').nth(1).and_then(|p| p.parse().ok()) == Some(pid) {
            found.push(id);
        }
    }
    found
}

/// True while any thread of `pid` runs: a killed process's main thread is a zombie before
/// its other threads have exited and closed its files (the store's lock among them).
fn running(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat"))
            .is_ok_and(|stat| !stat[stat.rfind(')').unwrap() + 2..].starts_with(['Z', 'X']))
    })
}

/// Class 8: killing `kv torture` left its writer child holding the store's lock and writing
/// for up to 120 s. Now the child dies with its parent, and the store can be opened at once.
#[test]
fn a_torture_child_dies_with_its_parent() {
    let root = tempdir();
    let db = root.path().join("db");
    let mut parent = Command::new(env!("CARGO_BIN_EXE_lidx"))
        .args(["kv", "torture", "--db", s(&db), "--cycles", "100"])
        .args(["--max-delay-ms", "60000", "--seed", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let child = loop {
        if let Some(&c) = children_of(parent.id()).first() {
            break c;
        }
        assert!(started.elapsed().as_secs() < 30, "no writer child started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Let it write a little, then kill the parent as a user's Ctrl-\ or an OOM kill would.
    std::thread::sleep(std::time::Duration::from_millis(300));
    parent.kill().unwrap();
    parent.wait().unwrap();
    let killed = std::time::Instant::now();
    while running(child) {
        assert!(
            killed.elapsed().as_secs() < 10,
            "the writer child {child} outlived its parent by 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The lock is free: a writer opens the store, and what the children wrote is sound.
    run_ok(&["kv", "put", "--db", s(&db), "after", "1"]);
    run_ok(&["kv", "check", "--db", s(&db)]);
}

/// Class 9 with a signal: Ctrl-C (or SIGTERM) during a first load left a partial store whose
/// engine was fixed; the store the run created is removed, as a failed first load's is.
#[test]
fn a_first_load_interrupted_by_a_signal_leaves_no_store() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let root = tempdir();
        let db = root.path().join("new").join("db");
        let mut child = Command::new(env!("CARGO_BIN_EXE_lidx"))
            .args([
                "kv",
                "load",
                "--db",
                s(&db),
                "--format",
                "tsv",
                "--from",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the lidx binary runs");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"a\t1\nb\t2\n").unwrap();
        // The load waits for more input with its store created: it has said it is loading.
        let mut progress =
            std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        loop {
            let line = progress.next().expect("the load ended early").unwrap();
            if line.contains("loading records") {
                break;
            }
        }
        assert!(db.join("STORE").exists());
        // SAFETY: `kill` with the child's own process id and a valid signal number.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let status = child.wait().unwrap();
        drop(stdin);
        assert!(!status.success(), "signal {signal}: {status:?}");
        assert!(
            std::fs::read_dir(root.path()).unwrap().next().is_none(),
            "signal {signal}: the store this run created is left behind"
        );
    }
}
