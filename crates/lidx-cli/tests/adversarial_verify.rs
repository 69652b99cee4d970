//! Issue 30's adversarial scenarios for the files `lidx build` writes and `lidx verify` reads,
//! done as a user would, each asserting the exit code and what is said:
//!
//! - class 5 (file side): `lidx verify --dir` called a directory sound (exit 0, "0 damaged")
//!   when an index file's first block was zeroed (what a killed `lidx build` leaves) or its
//!   magic had one flipped bit (both were "skipped"), and never read the `alex`, `lipp`, `dpgm`,
//!   `dfiting` and `btree-learned` files `lidx build` writes; a store that lost its `STORE`
//!   file was sound;
//! - class 6: `lidx bench --on-disk` reused index files built from a dataset of the same size
//!   but other keys (they were bound by key count only) and benchmarked them with exit 0;
//! - class 10: a text file given as a join table was called "truncated".

mod common;

use std::path::Path;

use common::{lidx, lidx_ok, text};

fn run_ok(args: &[&str]) -> String {
    let out = lidx(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout) + &text(&out.stderr)
}

fn verify(dir: &Path) -> (Option<i32>, String) {
    let out = lidx(&["verify", "--dir", dir.to_str().unwrap()]);
    (out.status.code(), text(&out.stdout) + &text(&out.stderr))
}

/// `lidx build --index <indexes>` of `dataset` (seed `seed`) into `dir`, buffered.
fn build(dir: &Path, indexes: &str, dataset: &str, seed: &str) {
    let d = dir.to_str().unwrap();
    run_ok(&[
        "build",
        "--index",
        indexes,
        "--dataset",
        dataset,
        "--seed",
        seed,
        "--dir",
        d,
        "--buffered",
    ]);
}

/// Changes the bytes of `path` with `change`.
fn edit(path: &Path, change: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    change(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

/// Rewrites block 0 of `path` with `change` applied and a valid checksum.
fn reseal_block0(path: &Path, change: impl FnOnce(&mut [u8])) {
    edit(path, |bytes| {
        let b = &mut bytes[..4096];
        change(&mut b[..4092]);
        lidx::raw::io::checksum::seal(b, 0);
    });
}

/// Runs `lidx verify` on `dir`, asserts exit 1 and that each of `files` is named damaged;
/// returns what it printed.
fn verify_damaged(dir: &Path, files: &[&str]) -> String {
    let (code, shown) = verify(dir);
    assert_eq!(code, Some(1), "{shown}");
    for file in files {
        assert!(
            shown
                .lines()
                .any(|l| l.starts_with(&format!("DAMAGED  {file} "))),
            "{file} should be named damaged: {shown}"
        );
    }
    shown
}

/// The regression of class 5: a zeroed first block, a magic with one flipped bit (under a
/// valid checksum or not), a text file named as an index and a join table with its header
/// zeroed were all "skipped" and the directory "0 damaged" with exit 0. Each is now named
/// damaged, with exit 1, and a file that is plainly not lidx's is still listed as skipped.
#[test]
fn a_killed_build_or_a_flipped_magic_is_damage_not_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "btree,pgm:eps=16,zonemap", "gen:lognormal:20K", "42");
    let t = d.join("t");
    run_ok(&[
        "table",
        "create",
        "--from",
        "gen:lognormal:6K",
        "--ratio",
        "1",
        "--out",
        t.to_str().unwrap(),
    ]);
    std::fs::write(d.join("notes.txt"), "my notes, not an index\n").unwrap();
    let (code, shown) = verify(d);
    assert_eq!(code, Some(0), "{shown}");

    edit(&d.join("btree.fill=100.lidx"), |b| b[..4096].fill(0));
    reseal_block0(&d.join("zonemap.gran=item.lidx"), |b| b[2] ^= 0x10);
    edit(&d.join("pgm.eps=16.eps_rec=8.gran=item.lidx"), |b| {
        b[5] ^= 0x01
    });
    edit(&d.join("t.large"), |b| b[..4096].fill(0));
    std::fs::write(d.join("half.lidx"), "1\n2\n3\n").unwrap();
    let shown = verify_damaged(
        d,
        &[
            "btree.fill=100.lidx",
            "zonemap.gran=item.lidx",
            "pgm.eps=16.eps_rec=8.gran=item.lidx",
            "t.large",
            "half.lidx",
        ],
    );
    assert!(shown.contains("skipped  notes.txt"), "{shown}");
    assert!(shown.contains("5 damaged"), "{shown}");
}

/// The regression of class 5: the files of paper 003's updatable indexes that `lidx build`
/// writes were never read by `lidx verify` (listed as skipped, or not at all). Each is now
/// opened through its structure and read whole, and a damaged block in any of them is exit 1.
#[test]
fn every_file_kind_lidx_build_writes_is_verified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(
        d,
        "alex,lipp,dpgm,dfiting,btree-learned",
        "gen:lognormal:20K",
        "42",
    );
    let (code, shown) = verify(d);
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains(" 0 other files skipped"), "{shown}");
    for file in [
        "alex.lidx",
        "lipp.lidx",
        "dpgm.eps=64.lidx",
        "dfiting.eps=64.lidx",
        "btree-learned.lidx",
    ] {
        assert!(
            shown
                .lines()
                .any(|l| l.starts_with(&format!("ok       {file} ")) && l.contains("20000")),
            "{file}: {shown}"
        );
    }
    for file in [
        "alex.lidx.data",
        "lipp.lidx",
        "dfiting.eps=64.lidx",
        "btree-learned.lidx",
    ] {
        edit(&d.join(file), |b| b[2 * 4096 + 100] ^= 0x04);
    }
    edit(&d.join("dpgm.eps=64.lidx"), |b| b[70] ^= 0x04);
    verify_damaged(
        d,
        &[
            "alex.lidx",
            "lipp.lidx",
            "dpgm.eps=64.lidx",
            "dfiting.eps=64.lidx",
            "btree-learned.lidx",
        ],
    );
}

/// The regression of class 5: a store directory whose `STORE` file was lost was "1 files
/// verified, 0 damaged" (its manifest and `CURRENT` skipped as not lidx's, its table read on
/// its own) with exit 0. A store's own files without their `STORE` are damage.
#[test]
fn a_store_that_lost_its_store_file_is_not_sound() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, db) = (dir.path().join("k.sosd"), dir.path().join("db"));
    let k = keys.to_str().unwrap();
    run_ok(&["gen", "--dataset", "gen:lognormal:5K", "--out", k]);
    run_ok(&["kv", "load", "--db", db.to_str().unwrap(), "--from", k]);
    let (code, shown) = verify(&db);
    assert_eq!(code, Some(0), "{shown}");
    std::fs::remove_file(db.join("STORE")).unwrap();
    verify_damaged(&db, &["CURRENT"]);
}

/// The regression of class 6: index files built from one dataset were reused by `lidx bench
/// --on-disk` for another of the same size (bound by key count only) and benchmarked with
/// exit 0: here the datasets differ in their last key only, which 1K sampled lookups miss.
/// Each file now records its keys' fingerprint; the run stops naming the file, both
/// fingerprints and what to do, and `lidx verify` shows the fingerprint it finds.
#[test]
fn bench_on_disk_refuses_files_built_from_other_keys_of_the_same_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (d.join("a.sosd"), d.join("b.sosd"));
    run_ok(&[
        "gen",
        "--dataset",
        "gen:uniform-sparse:20K",
        "--out",
        a.to_str().unwrap(),
    ]);
    let mut other = std::fs::read(&a).unwrap();
    let last = other.len() - 8;
    let key = u64::from_le_bytes(other[last..].try_into().unwrap());
    other[last..].copy_from_slice(&(key + 1).to_le_bytes());
    std::fs::write(&b, other).unwrap();
    let idx = d.join("idx");
    build(&idx, "btree,pgm:eps=16", a.to_str().unwrap(), "42");
    let bench = |dataset: &Path| {
        lidx(&[
            "bench",
            "--on-disk",
            "--dataset",
            dataset.to_str().unwrap(),
            "--index",
            "btree,pgm:eps=16",
            "--device",
            &format!("file-buffered:{}", idx.display()),
            "--queries",
            "1K",
            "--runs",
            "1",
        ])
    };
    let same = bench(&a);
    assert!(same.status.success(), "{}", text(&same.stderr));
    assert!(text(&same.stderr).contains("reusing btree.fill=100.lidx"));
    let stale = bench(&b);
    let said = text(&stale.stderr);
    assert_eq!(stale.status.code(), Some(1), "{said}");
    assert!(said.contains("btree.fill=100.lidx"), "{said}");
    assert!(said.contains("rebuild with lidx build"), "{said}");
    assert!(said.contains("fingerprint"), "{said}");
    let (code, shown) = verify(&idx);
    assert_eq!(code, Some(0), "{shown}");
    let fingerprints = shown
        .lines()
        .filter(|l| l.contains("keys fingerprint 0x"))
        .count();
    assert_eq!(fingerprints, 2, "{shown}");
}

/// The regression of class 10: a text file given as a join table was "truncated (empty file,
/// no table header); it was not completely written: rebuild it", or a checksum failure when
/// longer than a block. It is now said not to be a lidx table, with how to make one.
#[test]
fn a_text_file_given_as_a_table_is_not_called_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.join("t");
    run_ok(&[
        "table",
        "create",
        "--from",
        "gen:lognormal:2K",
        "--ratio",
        "1",
        "--out",
        t.to_str().unwrap(),
    ]);
    let short = d.join("keys.txt");
    std::fs::write(&short, "1\n2\n3\n").unwrap();
    let long = d.join("many.txt");
    let lines: String = (0..3000).map(|i| format!("{i}\n")).collect();
    std::fs::write(&long, lines).unwrap();
    for (i, file) in [&short, &long].into_iter().enumerate() {
        let out = d.join(format!("out{i}"));
        let run = lidx(&[
            "join",
            "--algo",
            "sort-merge",
            "--left",
            file.to_str().unwrap(),
            "--right",
            d.join("t.large").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let said = text(&run.stderr);
        assert!(!run.status.success(), "{said}");
        assert!(said.contains("is not a lidx table"), "{said}");
        assert!(said.contains("lidx table create"), "{said}");
        assert!(!said.contains("truncated"), "{said}");
        assert!(!said.contains("checksum"), "{said}");
    }
}

/// Class 5: a FITing-tree's `.inner` or a disk PGM's level file whose index file was deleted
/// verified "ok" as a plain B+-tree or static learned index (exit 0), though nothing can open
/// the index.
#[test]
fn an_updatable_index_without_its_own_file_is_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    lidx_ok(&[
        "build",
        "--dataset",
        "gen:uniform-dense:2K",
        "--index",
        "dfiting,dpgm,alex",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let sound = lidx(&["verify", "--dir", dir.to_str().unwrap()]);
    assert!(sound.status.success(), "{}", text(&sound.stdout));
    for main in ["dfiting.eps=64.lidx", "dpgm.eps=64.lidx"] {
        let kept = std::fs::read(dir.join(main)).unwrap();
        std::fs::remove_file(dir.join(main)).unwrap();
        let out = lidx(&["verify", "--dir", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{main}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains("whose own file is missing"));
        std::fs::write(dir.join(main), kept).unwrap();
    }
}
