//! Issue 30, the store's classes, done as a user would do them with `lidx kv`:
//!
//! * class 4: a store's files were not bound to their store and generation. A hybrid
//!   `table-*.lbt`, or a btree `pages.lbp` / `inner-*.lbi`, copied from another store (or an
//!   older copy of the store's own file put back) made `kv get` answer the other store's or the
//!   older generation's values with exit 0, and `kv check` called the store sound. Now every
//!   such file is refused, by name, with a non-zero exit, and the value is never printed.
//! * class 5 (store side): `kv check` gave false all-clears: after `rm db/wal/*.log` it reported
//!   "0 log segment(s)" with exit 0 (for a `log:*` store that log is all of its data), and a
//!   file in the store's directory that the store does not name was silently ignored. Now a
//!   missing file is damage (exit 1) and a stray file is reported as unknown. A btree page
//!   file's header slot torn by an interrupted checkpoint's stamp (the other slot holding the
//!   committed stamp) was called damage (exit 1) on a store that opens and is sound; it is now
//!   reported as such, with exit 0.
//! * class 10 (store side): a sound store on read-only media could not be read at all (the
//!   `LOCK` file was opened for writing); a reader blocked by a writer was told to "open
//!   read-only", which it already was; damage to `CURRENT` was met with "rebuild the index".

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{lidx, text};

fn ok(args: &[&str]) -> String {
    let out = lidx(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn db(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A store of `engine` named `name` in `dir` holding `k1` and `k2` with values ending in `tag`,
/// folded into its files.
fn store(dir: &Path, name: &str, engine: &str, tag: &str) -> String {
    let db = db(dir, name);
    ok(&["kv", "create", "--db", &db, "--engine", engine]);
    ok(&["kv", "put", "--db", &db, "k1", &format!("one-{tag}")]);
    ok(&["kv", "put", "--db", &db, "k2", &format!("two-{tag}")]);
    ok(&["kv", "compact", "--db", &db]);
    db
}

/// The one file in `db` whose name starts with `prefix`.
fn file(db: &str, prefix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "{prefix}* in {db}: {found:?}");
    found.pop().unwrap()
}

/// Asserts that reading `k1` from `db` is refused (never answered with `wrong`), and that
/// `kv check` exits 1 naming `named`.
fn refused(db: &str, wrong: &str, named: &str) {
    let get = lidx(&["kv", "get", "--db", db, "k1"]);
    assert!(
        !text(&get.stdout).contains(wrong),
        "answered a foreign value: {}",
        text(&get.stdout)
    );
    assert!(!get.status.success(), "get exit 0: {}", text(&get.stdout));
    assert!(text(&get.stderr).contains(named), "{}", text(&get.stderr));
    let check = lidx(&["kv", "check", "--db", db]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stdout));
    assert!(
        text(&check.stdout).contains(named),
        "check does not name {named}: {}",
        text(&check.stdout)
    );
}

#[test]
fn a_table_from_another_hybrid_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path(), "a", "hybrid", "a");
    let b = store(dir.path(), "b", "hybrid", "b");
    let table = file(&a, "table-");
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    fs::copy(file(&b, "table-"), &table).unwrap();
    refused(&a, "one-b", &name);
}

#[test]
fn an_older_table_of_the_same_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path(), "a", "hybrid", "old");
    let old = fs::read(file(&a, "table-")).unwrap();
    ok(&["kv", "put", "--db", &a, "k1", "one-new"]);
    ok(&["kv", "compact", "--db", &a]);
    let table = file(&a, "table-");
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    fs::write(&table, old).unwrap();
    refused(&a, "one-old", &name);
}

#[test]
fn btree_files_from_another_store_or_an_older_checkpoint_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for victim in ["pages.lbp", "inner-"] {
        let c = store(dir.path(), &format!("c-{victim}"), "btree", "c");
        let d = store(dir.path(), &format!("d-{victim}"), "btree", "d");
        let target = file(&c, victim);
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        fs::copy(file(&d, victim), &target).unwrap();
        refused(&c, "one-d", &name);
    }
    // The page file put back as it was two checkpoints ago.
    let e = store(dir.path(), "e", "btree", "old");
    let pages = file(&e, "pages.lbp");
    let old = fs::read(&pages).unwrap();
    ok(&["kv", "put", "--db", &e, "k1", "one-new"]);
    ok(&["kv", "compact", "--db", &e]);
    fs::write(&pages, old).unwrap();
    refused(&e, "one-old", "pages.lbp");
}

#[test]
fn a_log_segment_from_another_store_is_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let a = db(dir.path(), "a");
    let b = db(dir.path(), "b");
    for (db, tag) in [(&a, "a"), (&b, "b")] {
        ok(&["kv", "create", "--db", db, "--engine", "log:btree"]);
        ok(&["kv", "put", "--db", db, "00000001", &format!("one-{tag}")]);
    }
    let wal = Path::new(&a).join("wal");
    let seg = fs::read_dir(&wal).unwrap().next().unwrap().unwrap().path();
    let from = Path::new(&b).join("wal").join(seg.file_name().unwrap());
    fs::copy(from, &seg).unwrap();
    let get = lidx(&["kv", "get", "--db", &a, "00000001"]);
    assert!(
        !text(&get.stdout).contains("one-b"),
        "{}",
        text(&get.stdout)
    );
    assert!(!get.status.success());
    let check = lidx(&["kv", "check", "--db", &a]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stdout));
}

#[test]
fn check_calls_a_deleted_log_damage_and_reports_stray_files() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["log:btree", "hybrid", "btree"] {
        let db = db(dir.path(), &engine.replace(':', "-"));
        ok(&["kv", "create", "--db", &db, "--engine", engine]);
        ok(&["kv", "put", "--db", &db, "00000001", "v"]);
        let stray = Path::new(&db).join("notes.txt");
        fs::write(&stray, "mine").unwrap();
        let check = lidx(&["kv", "check", "--db", &db]);
        assert!(check.status.success(), "{}", text(&check.stdout));
        assert!(
            text(&check.stdout).contains("unknown: ") && text(&check.stdout).contains("notes.txt"),
            "{engine}: {}",
            text(&check.stdout)
        );
        for seg in fs::read_dir(Path::new(&db).join("wal")).unwrap() {
            fs::remove_file(seg.unwrap().path()).unwrap();
        }
        let check = lidx(&["kv", "check", "--db", &db]);
        assert_eq!(
            check.status.code(),
            Some(1),
            "{engine}: {}",
            text(&check.stdout)
        );
        assert!(
            text(&check.stdout).contains("wal"),
            "{}",
            text(&check.stdout)
        );
        assert_eq!(
            fs::read(&stray).unwrap(),
            b"mine",
            "the user's file is intact"
        );
    }
}

#[test]
fn check_calls_a_zeroed_or_flipped_header_damage() {
    let dir = tempfile::tempdir().unwrap();
    for (engine, victim) in [
        ("hybrid", "table-"),
        ("btree", "pages.lbp"),
        ("btree", "inner-"),
    ] {
        for how in ["zero", "flip"] {
            let db = store(dir.path(), &format!("{engine}-{how}-{victim}"), engine, "x");
            let path = file(&db, victim);
            let mut bytes = fs::read(&path).unwrap();
            // A page file's header is two slots: one damaged slot may be what an interrupted
            // checkpoint left (see `check_reports_a_stamp_torn_by_an_interrupted_checkpoint`).
            let header = if victim == "pages.lbp" { 8192 } else { 4096 };
            match how {
                "zero" => bytes[..header].fill(0),
                _ => (0..header).step_by(4096).for_each(|at| bytes[at] ^= 1),
            }
            fs::write(&path, bytes).unwrap();
            let check = lidx(&["kv", "check", "--db", &db]);
            assert_eq!(
                check.status.code(),
                Some(1),
                "{engine} {how} {victim}: {}",
                text(&check.stdout)
            );
        }
    }
}

/// Regression (review of issue 30, class 5): a power loss while a checkpoint stamps a btree
/// store's page file leaves the header slot it stamps torn, the other slot holding the
/// committed checkpoint's stamp. The store opens and answers, but `kv check` called it
/// damaged (exit 1); it now exits 0 and names the torn slot.
#[test]
fn check_reports_a_stamp_torn_by_an_interrupted_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), "b", "btree", "x");
    let pages = file(&db, "pages.lbp");
    let mut bytes = fs::read(&pages).unwrap();
    // Block 1, the slot the next checkpoint stamps (after a checkpoint both slots hold its
    // stamp): its first half rewritten, the checksum trailer the old bytes'.
    for b in &mut bytes[4096..4096 + 2048] {
        *b ^= 0x5a;
    }
    fs::write(&pages, bytes).unwrap();
    let check = lidx(&["kv", "check", "--db", &db]);
    let out = text(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!("torn: {} block 1", pages.display())),
        "{out}"
    );
    assert!(!out.contains("damaged"), "{out}");
    assert_eq!(ok(&["kv", "get", "--db", &db, "k2"]).trim(), "two-x");
}

/// Runs `lidx args` as a user the directory's permissions apply to: as root (which writes
/// through permissions), through `setpriv` as `nobody`.
fn lidx_unprivileged(args: &[&str]) -> Output {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| text(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c.arg(env!("CARGO_BIN_EXE_lidx"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_lidx"))
    };
    cmd.args(args).output().expect("lidx runs")
}

fn chmod_tree(path: &Path, dir_mode: u32, file_mode: u32) {
    if path.is_dir() {
        for e in fs::read_dir(path).unwrap() {
            chmod_tree(&e.unwrap().path(), dir_mode, file_mode);
        }
        fs::set_permissions(path, fs::Permissions::from_mode(dir_mode)).unwrap();
    } else {
        fs::set_permissions(path, fs::Permissions::from_mode(file_mode)).unwrap();
    }
}

#[test]
fn a_store_on_read_only_media_is_read() {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    for engine in ["hybrid", "btree", "log:btree"] {
        let db = db(dir.path(), &engine.replace(':', "-"));
        ok(&["kv", "create", "--db", &db, "--engine", engine]);
        ok(&["kv", "put", "--db", &db, "00000001", "kept"]);
        if engine != "log:btree" {
            ok(&["kv", "compact", "--db", &db]);
        }
        ok(&["kv", "put", "--db", &db, "00000002", "logged"]);
        let before: Vec<(PathBuf, Vec<u8>)> = ["STORE", "LOCK", "CURRENT"]
            .iter()
            .map(|n| Path::new(&db).join(n))
            .map(|p| (p.clone(), fs::read(&p).unwrap()))
            .collect();
        chmod_tree(Path::new(&db), 0o555, 0o444);
        let get = lidx_unprivileged(&["kv", "get", "--db", &db, "00000001"]);
        assert!(get.status.success(), "{engine}: {}", text(&get.stderr));
        assert_eq!(text(&get.stdout).trim(), "kept");
        let scan = lidx_unprivileged(&["kv", "scan", "--db", &db]);
        assert!(scan.status.success(), "{engine}: {}", text(&scan.stderr));
        assert!(text(&scan.stdout).contains("logged"));
        for cmd in ["stats", "check"] {
            let out = lidx_unprivileged(&["kv", cmd, "--db", &db]);
            assert!(
                out.status.success(),
                "{engine} {cmd}: {}",
                text(&out.stderr)
            );
        }
        let put = lidx_unprivileged(&["kv", "put", "--db", &db, "00000003", "x"]);
        assert!(!put.status.success(), "a write on read-only media");
        chmod_tree(Path::new(&db), 0o755, 0o644);
        for (p, bytes) in before {
            assert_eq!(fs::read(&p).unwrap(), bytes, "{}", p.display());
        }
    }
}

#[test]
fn messages_say_what_is_true_of_store_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), "a", "hybrid", "a");
    let current = Path::new(&db).join("CURRENT");
    let mut bytes = fs::read(&current).unwrap();
    bytes[20] ^= 1;
    fs::write(&current, bytes).unwrap();
    let get = lidx(&["kv", "get", "--db", &db, "k1"]);
    assert!(!get.status.success());
    let err = text(&get.stderr);
    assert!(!err.contains("rebuild the index"), "{err}");
    assert!(err.contains("kv check") || err.contains("backup"), "{err}");
}

#[test]
fn a_reader_blocked_by_a_writer_is_told_what_is_true() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), "a", "hybrid", "a");
    let writer = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(Path::new(&db).join("LOCK"))
        .unwrap();
    writer.lock().unwrap();
    let get = lidx(&["kv", "get", "--db", &db, "k1"]);
    assert!(!get.status.success());
    let err = text(&get.stderr);
    assert!(!err.contains("read-only"), "{err}");
    assert!(err.contains("for writing") && err.contains("wait"), "{err}");
}
