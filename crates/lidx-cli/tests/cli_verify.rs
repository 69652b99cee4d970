//! `lidx verify --dir`: every index file and table of a directory read whole, recognized by
//! content; damage named by file and block, under a valid checksum too (a changed join table
//! record, a static learned file's key out of order), a stale saved join index named, exit
//! code 1 on damage, 2 for a directory that is not there.

mod common;

use std::path::Path;

use common::{lidx, text};

fn run_ok(args: &[&str]) {
    let out = lidx(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
}

/// Join tables `t.r1` and `t.large` of `rows` keys in `dir`, and the saved index `inlj-pgm`
/// leaves beside `t.large`.
fn tables_and_index(dir: &Path, rows: &str) {
    let t = dir.join("t");
    let t = t.to_str().unwrap();
    let from = format!("gen:lognormal:{rows}");
    run_ok(&[
        "table", "create", "--from", &from, "--ratio", "1", "--out", t,
    ]);
    let (r1, large, out) = (format!("{t}.r1"), format!("{t}.large"), dir.join("out"));
    let join = [
        "join", "--algo", "inlj-pgm", "--left", &r1, "--right", &large, "--out",
    ];
    run_ok(&[&join[..], &[out.to_str().unwrap()]].concat());
}

/// Builds index files, join tables and a saved join index in `dir`.
fn fill(dir: &Path) {
    let d = dir.to_str().unwrap();
    let build = [
        "build",
        "--index",
        "btree,pgm:eps=16,zonemap",
        "--dataset",
        "gen:lognormal:30K",
    ];
    run_ok(&[&build[..], &["--dir", d]].concat());
    tables_and_index(dir, "8K");
}

/// Rewrites block `block` of `path` with `change` applied and a valid checksum.
fn reseal(path: &Path, block: usize, change: impl FnOnce(&mut [u8])) {
    let mut bytes = std::fs::read(path).unwrap();
    let b = &mut bytes[block * 4096..(block + 1) * 4096];
    change(&mut b[..4092]);
    lidx::raw::io::checksum::seal(b, block as u64);
    std::fs::write(path, bytes).unwrap();
}

fn verify(dir: &Path) -> (Option<i32>, String) {
    let out = lidx(&["verify", "--dir", dir.to_str().unwrap()]);
    (out.status.code(), text(&out.stdout) + &text(&out.stderr))
}

#[test]
fn a_sound_directory_verifies_and_damage_is_named() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path());
    std::fs::write(dir.path().join("notes.txt"), "not an index").unwrap();
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(0), "{shown}");
    for what in [
        "disk B+-tree: 30000 entries",
        "static learned index: 30000",
        "join table: 8000",
        "saved join index",
        "bound to t.large",
        "1 other files skipped",
    ] {
        assert!(shown.contains(what), "{what}: {shown}");
    }

    // A flipped byte: the device's checksum names the block.
    let btree = dir.path().join("btree.fill=100.lidx");
    let mut bytes = std::fs::read(&btree).unwrap();
    bytes[3 * 4096 + 40] ^= 0x08;
    std::fs::write(&btree, &bytes).unwrap();
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("DAMAGED  btree.fill=100.lidx") && shown.contains("block 3"),
        "{shown}"
    );
    bytes[3 * 4096 + 40] ^= 0x08;
    std::fs::write(&btree, &bytes).unwrap();

    // A join table record changed under a valid checksum: the fingerprint catches it.
    reseal(&dir.path().join("t.large"), 5, |b| b[8] ^= 1);
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("DAMAGED  t.large") && shown.contains("fingerprint"),
        "{shown}"
    );
    // A saved index of another table of the same name is stale.
    let other = tempfile::tempdir().unwrap();
    tables_and_index(other.path(), "9K");
    let idx = dir.path().join("t.large.pgm.idx");
    std::fs::copy(other.path().join("t.large.pgm.idx"), &idx).unwrap();
    let (_, shown) = verify(dir.path());
    assert!(
        shown.contains("DAMAGED  t.large.pgm.idx") && shown.contains("stale"),
        "{shown}"
    );

    // A static learned file's key changed under a valid checksum, out of order.
    let pgm = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("pgm.eps=16"))
        .unwrap();
    reseal(&pgm, 2, |b| {
        b[16..24].copy_from_slice(&u64::MAX.to_le_bytes())
    });
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(1));
    assert!(shown.contains("DAMAGED  pgm.eps=16"), "{shown}");
}

#[test]
fn a_missing_directory_is_a_usage_error() {
    let (code, shown) = verify(Path::new("/no/such/dir"));
    assert_eq!(code, Some(2), "{shown}");
    assert!(shown.contains("an existing directory"), "{shown}");
}

#[test]
fn byte_key_indexes_are_verified_through_their_own_checks() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    let (w, d) = (words.to_str().unwrap(), dir.path().join("idx"));
    run_ok(&["gen", "--dataset", "gen:words:5K", "--out", w]);
    let built = [
        "build",
        "--index",
        "byte-table,byte-btree",
        "--dataset",
        w,
        "--dir",
    ];
    run_ok(&[&built[..], &[d.to_str().unwrap()]].concat());
    let (code, shown) = verify(&d);
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("byte B+-tree: 5000 records"), "{shown}");
    assert!(shown.contains("byte table: 5000 records"), "{shown}");
    let pages = d.join("byte-btree.lidx");
    let mut bytes = std::fs::read(&pages).unwrap();
    bytes[2 * 4096 + 64] ^= 0x04;
    std::fs::write(&pages, &bytes).unwrap();
    let (code, shown) = verify(&d);
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("DAMAGED  byte-btree.image.lidx"), "{shown}");
}

/// FILM's two files verify as one index (its data pages carry no header and are read through
/// it); a flipped byte in a data page is damage named by block.
#[test]
fn film_verifies_with_its_data_pages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    run_ok(&[
        "build",
        "--index",
        "film:mem=10K",
        "--dataset",
        "gen:lognormal:10K",
        "--dir",
        d,
    ]);
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("ok       film.eps=64.mem=10000.lidx (+ film.eps=64.mem=10000.lidx.data)"),
        "{shown}"
    );
    assert!(shown.contains("0 damaged"), "{shown}");
    let data = dir.path().join("film.eps=64.mem=10000.lidx.data");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[2 * 4096 + 100] ^= 1;
    std::fs::write(&data, &bytes).unwrap();
    let (code, shown) = verify(dir.path());
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("block 2 of"), "{shown}");
}
