//! Bad input gets a typed error that says what to do, never a panic or a hang: a path that is
//! not a lidx table, a missing path, a directory that is not a store, an unsorted table, an
//! unknown or badly named table, a SQL error, a table damaged after it was registered; and
//! the `lidx-sql` command's exit codes and messages for them.

use std::process::Command;

use crate::common::*;
use lidx_datafusion::{Error, SqlSession};

#[test]
fn paths_that_are_not_lidx_data_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SqlSession::new(2);
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "these are not the records you are looking for\n").unwrap();
    match s.register("t", &text) {
        Err(Error::Lidx(lidx::Error::NotATable { .. })) => {}
        other => panic!("{:?}", other.err()),
    }
    match s.register("t", &dir.path().join("missing")) {
        Err(e @ Error::Missing { .. }) => assert!(e.to_string().contains("lidx table create")),
        other => panic!("{:?}", other.err()),
    }
    let empty_dir = dir.path().join("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    match s.register("t", &empty_dir) {
        Err(Error::Lidx(lidx::Error::NotAStore { .. })) => {}
        other => panic!("{:?}", other.err()),
    }
    // An unsorted table cannot be seeked or declared ordered.
    write_u64_table(dir.path(), "shuffled", &[5, 3, 9]);
    match s.register("t", &dir.path().join("shuffled")) {
        Err(Error::Lidx(lidx::Error::OutOfOrder { .. })) => {}
        other => panic!("{:?}", other.err()),
    }
    // Nothing was registered by the failures.
    write_u64_table(dir.path(), "ok", &[1, 2, 3]);
    s.register("t", &dir.path().join("ok")).unwrap();
    assert_eq!(single_u64(&s, "SELECT count(*) FROM t"), 3);
}

#[test]
fn names_and_queries_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    write_u64_table(dir.path(), "t", &[1, 2, 3]);
    let mut s = SqlSession::new(2);
    for bad in ["", "T", "1t", "a-b", "a b"] {
        assert!(
            matches!(
                s.register(bad, &dir.path().join("t")),
                Err(Error::BadName { .. })
            ),
            "{bad}"
        );
    }
    s.register("t", &dir.path().join("t")).unwrap();
    assert!(matches!(
        s.register("t", &dir.path().join("t")),
        Err(Error::DuplicateName { .. })
    ));
    let rt = runtime();
    match rt.block_on(s.sql("SELECT * FROM nope JOIN t ON nope.key = t.key")) {
        Err(e @ Error::UnknownTable { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("\"nope\"")
                    && msg.contains("registered: t")
                    && msg.contains("--table nope=PATH"),
                "{msg}"
            );
        }
        other => panic!("{:?}", other.err()),
    }
    assert!(matches!(
        rt.block_on(s.sql("SELEKT 1")),
        Err(Error::DataFusion(_))
    ));
    assert!(matches!(
        rt.block_on(s.sql("SELECT nothing FROM t")),
        Err(Error::DataFusion(_))
    ));
    // A name that a WITH clause defines is not a table to register.
    assert_eq!(
        single_u64(&s, "WITH w AS (SELECT key FROM t) SELECT count(*) FROM w"),
        3
    );
}

#[test]
fn damage_found_while_a_query_runs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(20_000, 21);
    write_u64_table(dir.path(), "t", &keys);
    // Two partitions of about 40 blocks each are read when first polled; one of all 79
    // blocks on a blocking thread: the damage is an error either way.
    let mut sessions = Vec::new();
    for partitions in [2, 1] {
        let mut s = SqlSession::new(partitions);
        s.register("t", &dir.path().join("t")).unwrap();
        sessions.push(s);
    }
    // Flip a byte in the middle of a record block (the index is already in memory).
    let path = dir.path().join("t");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = 40 * 4096 + 100;
    bytes[at] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let rt = runtime();
    for s in &sessions {
        let result = rt.block_on(async {
            s.sql("SELECT sum(key) FROM t")
                .await?
                .collect()
                .await
                .map_err(Error::from)
        });
        let e = result.expect_err("a damaged block is read");
        assert!(e.to_string().contains("checksum"), "{e}");
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn lidx_sql(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lidx-sql"))
        .args(args)
        .output()
        .expect("run lidx-sql");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_prints_rows_plans_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_u64_table(dir.path(), "t", &[10, 20, 30, 40]);
    write_store(&dir.path().join("kv"), &[20, 30, 50]);
    let t = format!("t={}", dir.path().join("t").display());
    let kv = format!("kv={}", dir.path().join("kv").display());
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--format",
        "csv",
        "SELECT key FROM t WHERE key > 15 ORDER BY key",
    ]);
    assert_eq!((code, out.as_str()), (0, "key\n20\n30\n40\n"), "{err}");
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--format",
        "json",
        "SELECT key FROM t WHERE key IN (10, 40)",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["{\"key\":10}", "{\"key\":40}"]);
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--table",
        &kv,
        "SELECT count(*) AS n FROM kv",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| 2 |"), "{out}");
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--explain",
        "SELECT * FROM t WHERE key BETWEEN 15 AND 35",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("LidxScanExec") && !out.contains("FilterExec:"),
        "{out}"
    );
    write_u64_table(dir.path(), "r", &[20, 25, 40]);
    let r = format!("r={}", dir.path().join("r").display());
    let join = "SELECT r.key, t.value FROM r JOIN t ON r.key = t.key";
    let (code, out, err) = lidx_sql(&["--table", &t, "--table", &r, "--explain", join]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("LidxIndexJoinExec") && !out.contains("HashJoinExec"),
        "{out}"
    );
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--table",
        &r,
        "--no-index-join",
        "--explain",
        join,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("HashJoinExec") && !out.contains("LidxIndexJoinExec"),
        "{out}"
    );
    let (code, out, err) = lidx_sql(&[
        "--table",
        &t,
        "--table",
        &r,
        "--format",
        "csv",
        &format!("{join} ORDER BY r.key"),
    ]);
    assert_eq!(code, 0, "{err}");
    let want: String = [20u64, 40]
        .iter()
        .map(|k| format!("{k},{}\n", hex(&value_of(*k))))
        .collect();
    assert_eq!(out, format!("key,value\n{want}"));

    let missing = format!("t={}", dir.path().join("missing").display());
    let (code, _, err) = lidx_sql(&["--table", &missing, "SELECT 1"]);
    assert_eq!(code, 2);
    assert!(err.contains("does not exist"), "{err}");
    let (code, _, err) = lidx_sql(&["--table", &t, "SELECT * FROM u"]);
    assert_eq!(code, 2);
    assert!(err.contains("--table u=PATH"), "{err}");
    let (code, _, err) = lidx_sql(&["--table", "t", "SELECT 1"]);
    assert_eq!(code, 2);
    assert!(err.contains("NAME=PATH"), "{err}");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    let (code, _, err) = lidx_sql(&["--table", &format!("n={}", text.display()), "SELECT 1"]);
    assert_eq!(code, 1);
    assert!(err.contains("is not a lidx table"), "{err}");
}

/// A query from `--file` or standard input answers as from the command line, also a list of
/// keys longer than one argument may be; an unreadable file is a command-line error.
#[test]
fn the_command_reads_a_long_query_from_a_file_or_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<u64> = (1..=20_000u64).map(|k| k * 7).collect();
    write_u64_table(dir.path(), "t", &keys);
    let t = format!("t={}", dir.path().join("t").display());
    // 10,000 keys of 19 digits: past the 128 KiB Linux allows one argument.
    let list: Vec<String> = (0..10_000u64)
        .map(|i| (1_000_000_000_000_000 + i * 3).to_string())
        .chain(["7".to_string(), "700".to_string()])
        .collect();
    let sql = format!(
        "SELECT key FROM t WHERE key IN ({}) ORDER BY key",
        list.join(", ")
    );
    assert!(sql.len() > 128 * 1024, "{}", sql.len());
    let file = dir.path().join("q.sql");
    std::fs::write(&file, &sql).unwrap();
    let path = file.display().to_string();
    let (code, out, err) = lidx_sql(&["--table", &t, "--format", "csv", "--file", &path]);
    assert_eq!((code, out.as_str()), (0, "key\n7\n700\n"), "{err}");

    let mut child = Command::new(env!("CARGO_BIN_EXE_lidx-sql"))
        .args(["--table", &t, "--format", "csv", "--file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lidx-sql");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), sql.as_bytes()).unwrap();
    let out = child.wait_with_output().expect("wait for lidx-sql");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "key\n7\n700\n",
        "{err}"
    );

    let gone = dir.path().join("gone.sql").display().to_string();
    let (code, _, err) = lidx_sql(&["--table", &t, "--file", &gone]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read the query from --file"), "{err}");
    let (code, _, err) = lidx_sql(&["--table", &t, "--file", &path, "SELECT 1"]);
    assert_eq!(code, 2, "{err}");
}
