//! `lidx kv` end to end: load from each file format, get, put, del, scan in both directions
//! with bounds and limits, stats, compact, check (sound and damaged), and the errors a user
//! meets: a directory that is not a store, a second writer, a key over the limit, an unknown
//! file format, a newer format version.

mod common;

use common::{json_lines, lidx, text};

fn run_ok(args: &[&str]) -> String {
    let out = lidx(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn load_get_put_del_scan_stats_compact_check() {
    for engine in ["hybrid", "btree", "log:trie:alex"] {
        each_command_on(engine);
    }
}

fn each_command_on(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let tsv = dir.path().join("words.tsv");
    std::fs::write(&tsv, "pear\t5\napple\t3\nfig\t1\napple\t4\ncafé\tnoir\n").unwrap();
    let loaded = run_ok(&[
        "kv",
        "load",
        "--db",
        db,
        "--engine",
        engine,
        "--from",
        tsv.to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(loaded.trim()).unwrap();
    assert_eq!(v["loaded"], 5);
    assert_eq!(
        v["table_records"], 4,
        "apple is given twice and keeps its last value"
    );
    assert_eq!(run_ok(&["kv", "get", "--db", db, "apple"]), "4\n");
    assert_eq!(run_ok(&["kv", "get", "--db", db, "café"]), "noir\n");
    run_ok(&["kv", "put", "--db", db, "k\\x00\\xff", "tab\\there"]);
    run_ok(&["kv", "del", "--db", db, "fig"]);
    let missing = lidx(&["kv", "get", "--db", db, "fig"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("not in the store"));
    assert_eq!(
        run_ok(&["kv", "scan", "--db", db]),
        "apple\t4\ncafé\tnoir\nk\\x00\\xff\ttab\\there\npear\t5\n"
    );
    assert_eq!(
        run_ok(&[
            "kv",
            "scan",
            "--db",
            db,
            "--reverse",
            "--from",
            "b",
            "--to",
            "pear",
            "--limit",
            "1"
        ]),
        "k\\x00\\xff\ttab\\there\n"
    );
    let lines = json_lines(&lidx(&["kv", "scan", "--db", db, "--json", "--limit", "2"]));
    assert_eq!(lines[1]["key"], "café");
    let stats = json_lines(&lidx(&["kv", "compact", "--db", db, "--json"]));
    assert_eq!(stats[0]["table_records"], 4);
    // A `log` store's map holds every key; its records are its log, not a table.
    let log = engine.starts_with("log:");
    assert_eq!(stats[0]["dynamic_keys"], if log { 4 } else { 0 });
    let shown = stats[0]["engine"].as_str().unwrap();
    assert!(shown.starts_with(engine), "{shown}");
    let check = json_lines(&lidx(&["kv", "check", "--db", db, "--json"]));
    assert_eq!(check[0]["sound"], true);
    if !log {
        assert_eq!(check[0]["table_records"], 4);
    }
    let other = if engine == "btree" { "hybrid" } else { "btree" };
    let refused = lidx(&[
        "kv",
        "load",
        "--db",
        db,
        "--engine",
        other,
        "--from",
        tsv.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("load into a new directory"));
}

#[test]
fn sosd_and_text_files_load_with_their_key_formats() {
    let dir = tempfile::tempdir().unwrap();
    let sosd = dir.path().join("keys.sosd");
    lidx_bench::sosd::write_sosd(&sosd, &[3, 10, 700, 1 << 40]).unwrap();
    let db = dir.path().join("nums");
    let db = db.to_str().unwrap();
    run_ok(&["kv", "load", "--db", db, "--from", sosd.to_str().unwrap()]);
    assert_eq!(
        run_ok(&["kv", "scan", "--db", db, "--from", "10", "--to", "1000"]),
        "10\t\n700\t\n"
    );
    assert_eq!(run_ok(&["kv", "get", "--db", db, "1099511627776"]), "\n");
    let bad = lidx(&["kv", "get", "--db", db, "ten"]);
    assert!(
        text(&bad.stderr).contains("u64 keys"),
        "{}",
        text(&bad.stderr)
    );
    let txt = dir.path().join("keys.txt");
    std::fs::write(&txt, "b\na\n").unwrap();
    let wrong = lidx(&["kv", "load", "--db", db, "--from", txt.to_str().unwrap()]);
    assert!(!wrong.status.success());
    // Text keys load into a u64 store as decimal numbers: words are refused with their line.
    assert!(text(&wrong.stderr).contains("line 1: the key: this store holds u64 keys"));
    let words = dir.path().join("words");
    run_ok(&[
        "kv",
        "load",
        "--db",
        words.to_str().unwrap(),
        "--from",
        txt.to_str().unwrap(),
    ]);
    assert_eq!(
        run_ok(&["kv", "scan", "--db", words.to_str().unwrap()]),
        "a\t\nb\t\n"
    );
}

#[test]
fn bad_input_gets_errors_that_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let out = lidx(&["kv", "get", "--db", plain.to_str().unwrap(), "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not a lidx store"),
        "{}",
        text(&out.stderr)
    );
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    run_ok(&["kv", "create", "--db", db]);
    let long = "k".repeat(5000);
    let out = lidx(&["kv", "put", "--db", db, &long, "v"]);
    assert!(
        text(&out.stderr).contains("5000-byte key"),
        "{}",
        text(&out.stderr)
    );
    let out = lidx(&["kv", "put", "--db", db, "", "v"]);
    assert!(
        text(&out.stderr).contains("0-byte key"),
        "{}",
        text(&out.stderr)
    );
    let xls = dir.path().join("data.xls");
    std::fs::write(&xls, "x").unwrap();
    let out = lidx(&["kv", "load", "--db", db, "--from", xls.to_str().unwrap()]);
    assert!(text(&out.stderr).contains(".tsv"), "{}", text(&out.stderr));
    let out = lidx(&["kv", "create", "--db", db]);
    assert!(!out.status.success(), "creating over a store is refused");
    // A store written by a newer lidx is refused by name.
    let store_file = std::path::Path::new(db).join("STORE");
    let mut bytes = std::fs::read(&store_file).unwrap();
    bytes[8] = 9;
    std::fs::write(&store_file, &bytes).unwrap();
    let out = lidx(&["kv", "stats", "--db", db]);
    assert!(
        text(&out.stderr).contains("format version 9"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn check_names_the_damaged_block_and_a_second_writer_is_locked_out() {
    for (engine, damaged) in [("hybrid", "lbt"), ("btree", "lbp")] {
        damage_and_lock(engine, damaged);
    }
}

fn damage_and_lock(engine: &str, damaged: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let tsv = dir.path().join("n.tsv");
    let body: String = (0..3000)
        .map(|i| format!("key{i:05}\tvalue{i}\n"))
        .collect();
    std::fs::write(&tsv, body).unwrap();
    run_ok(&[
        "kv",
        "load",
        "--db",
        db.to_str().unwrap(),
        "--engine",
        engine,
        "--from",
        tsv.to_str().unwrap(),
    ]);
    // Hold the store open for writing in this process: the CLI must be refused.
    let store = lidx::kv::Store::open(&db, &lidx::kv::StoreOptions::default()).unwrap();
    let out = lidx(&["kv", "put", "--db", db.to_str().unwrap(), "a", "b"]);
    assert!(
        text(&out.stderr).contains("open for writing elsewhere"),
        "{}",
        text(&out.stderr)
    );
    drop(store);
    let table = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == damaged))
        .unwrap();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[2 * 4096 + 100] ^= 0x20;
    std::fs::write(&table, &bytes).unwrap();
    let out = lidx(&["kv", "check", "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let shown = text(&out.stdout);
    assert!(shown.contains("block 2"), "{shown}");
    assert!(
        shown.contains(table.file_name().unwrap().to_str().unwrap()),
        "{shown}"
    );
}

/// Issue 13: a complete last log record that fails its checksum was dropped as a torn tail,
/// even when it had been acknowledged. Now opening refuses it and names the modes that would
/// go on; `--recovery tolerate-corrupted-tail` drops it, keeps a copy and says so. (The
/// `hybrid` engine: `btree` checkpoints when `lidx kv put` closes it, so its log is empty
/// between commands; both recover through the same code.)
#[test]
fn a_damaged_last_log_record_is_refused_until_a_recovery_mode_drops_it() {
    {
        let engine = "hybrid";
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let db = db.to_str().unwrap();
        run_ok(&["kv", "create", "--db", db, "--engine", engine]);
        run_ok(&["kv", "put", "--db", db, "kept", "1"]);
        run_ok(&["kv", "put", "--db", db, "damaged", "2"]);
        let wal = std::path::Path::new(db).join("wal");
        let segment = std::fs::read_dir(&wal)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .max()
            .unwrap();
        let mut bytes = std::fs::read(&segment).unwrap();
        let n = bytes.len();
        bytes[n - 2] ^= 0x10;
        std::fs::write(&segment, &bytes).unwrap();

        let out = lidx(&["kv", "get", "--db", db, "kept"]);
        assert_eq!(out.status.code(), Some(1), "{engine}");
        let err = text(&out.stderr);
        assert!(err.contains("complete but damaged"), "{engine}: {err}");
        assert!(err.contains("tolerate-corrupted-tail"), "{engine}: {err}");
        assert_eq!(std::fs::read(&segment).unwrap(), bytes, "nothing cut");

        let out = lidx(&["kv", "get", "--db", db, "--recovery", "nonsense", "kept"]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{engine}: a bad mode is a usage error"
        );

        // A reader skips the damaged record and changes nothing; a writer cuts it.
        let args = ["--recovery", "tolerate-corrupted-tail"];
        let out = lidx(&[&["kv", "get", "--db", db][..], &args, &["kept"]].concat());
        assert!(out.status.success(), "{engine}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).trim(), "1");
        assert!(text(&out.stderr).contains("skipped"), "{engine}");
        assert_eq!(
            std::fs::read(&segment).unwrap(),
            bytes,
            "a reader cuts nothing"
        );
        let out = lidx(&[&["kv", "put", "--db", db][..], &args, &["later", "3"]].concat());
        assert!(out.status.success(), "{engine}: {}", text(&out.stderr));
        let warned = text(&out.stderr);
        assert!(warned.contains("warning: the log of"), "{engine}: {warned}");
        assert!(warned.contains("kept in"), "{engine}: {warned}");
        assert_eq!(run_ok(&["kv", "get", "--db", db, "later"]).trim(), "3");
        let kept = std::fs::read_dir(&wal)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".dropped")
            })
            .count();
        assert_eq!(
            kept, 1,
            "{engine}: the dropped bytes are kept beside the log"
        );
        let out = lidx(&["kv", "get", "--db", db, "damaged"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{engine}: the dropped write is gone"
        );
        assert!(
            !text(&out.stderr).contains("warning"),
            "{engine}: the log is whole again"
        );
    }
}

/// A `log` store's collector options: taken on every command, shown by `kv stats`, and a
/// bad value is refused by the flag's name with what it takes (nothing is created).
#[test]
fn log_collector_options_are_taken_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let small = ["--log-segment-bytes", "4Ki", "--log-space-ratio", "1.5"];
    run_ok(
        &[
            &[
                "kv",
                "create",
                "--db",
                db,
                "--engine",
                "log:btree",
                "--keys",
                "u64",
            ],
            &small[..],
        ]
        .concat(),
    );
    for i in 0..200u64 {
        let k = (i % 20).to_string();
        let v = format!("value {i} {}", "x".repeat(100));
        run_ok(&[&["kv", "put", "--db", db, &k, &v], &small[..]].concat());
    }
    run_ok(&[&["kv", "compact", "--db", db], &small[..]].concat());
    let stats = run_ok(&["kv", "stats", "--db", db]);
    assert!(stats.contains("20 live keys"), "{stats}");
    assert!(stats.contains("checkpoint"), "{stats}");
    let json = json_lines(&lidx(&["kv", "stats", "--db", db, "--json"]));
    let log = json[0]["log_disk_bytes"].as_u64().unwrap();
    let live = json[0]["log_live_bytes"].as_u64().unwrap();
    assert!(live > 0 && log < 2 * live, "log {log}, live {live}");
    for (flag, bad, says) in [
        ("--log-space-ratio", "1.0", "at least 1.2"),
        ("--log-space-ratio", "many", "at least 1.2"),
        ("--log-segment-bytes", "4K", "4Ki (4096)"),
        ("--log-segment-bytes", "2Gi", "4Ki (4096)"),
    ] {
        let fresh = dir.path().join(format!("bad{}", bad.len()));
        let out = lidx(&[
            "kv",
            "create",
            "--db",
            fresh.to_str().unwrap(),
            "--engine",
            "log:btree",
            flag,
            bad,
        ]);
        assert!(!out.status.success(), "{flag} {bad} was taken");
        let err = text(&out.stderr);
        assert!(
            err.contains(flag) && err.contains(says),
            "{flag} {bad}: {err}"
        );
        assert!(
            !fresh.exists(),
            "{flag} {bad}: a refused create made its directory"
        );
    }
    let out = lidx(&[
        "recovery",
        "--log-space-ratio",
        "1.05",
        "--dataset",
        "gen:uniform-dense:1K",
    ]);
    assert!(
        text(&out.stderr).contains("at least 1.2"),
        "{}",
        text(&out.stderr)
    );
}
