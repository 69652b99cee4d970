//! Regression (issue 13, leftover): under the recovery modes that cut a damaged log
//! (`point-in-time`, `tolerate-corrupted-tail`), a damaged record that the store's table files
//! already hold (sequence number at or below the manifest's) was cut like any other: the cut
//! renamed later segments aside and shortened the segment, and then the coverage check failed
//! with "log segments are missing", naming neither the damage nor the cut. The record is not
//! lost (the tables hold it), so it is no reason to cut: replay now checks coverage before it
//! changes any file and reports the damaged record, that the tables hold it, and what to do.
//!
//! A segment the tables cover that another segment follows is not read at all (issue 32), so
//! its damage neither stops an open nor is cut. The damaged segment is one a crash left behind: its records are all in the tables (the
//! checkpoint committed), and only the removal of the old segment did not happen.

use std::path::{Path, PathBuf};

use lidx::kv::WalRecovery;
use lidx::kv::{CreateOptions, Engine, Store, StoreOptions};
use lidx::raw::kv::wal::SEGMENT_HEADER_BYTES;
use lidx::Error;

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join("wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
}

/// A file's name and bytes, for every file of the log directory.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    segments(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// A `btree` store in `dir` whose tables hold records 1..=30 and whose log holds, as a crash
/// between a checkpoint's commit and its removal of the old segment leaves it, the old
/// segment of records 1..=30 (damaged by `damage`) and, when `active`, the empty active one.
fn store_with_covered_damage(dir: &Path, active: bool, damage: impl FnOnce(&mut Vec<u8>)) {
    let create = CreateOptions {
        engine: Engine::BTree,
        ..CreateOptions::default()
    };
    let store = Store::create(dir, &create, &StoreOptions::default()).unwrap();
    for i in 0..30u32 {
        store.put(&i.to_be_bytes(), b"value").unwrap();
    }
    let [old] = &segments(dir)[..] else {
        panic!("one segment before the checkpoint")
    };
    let old = old.clone();
    let mut old_bytes = std::fs::read(&old).unwrap();
    store.close().unwrap();
    assert!(!old.exists(), "the checkpoint removed the old segment");
    if !active {
        for segment in segments(dir) {
            std::fs::remove_file(segment).unwrap();
        }
    }
    damage(&mut old_bytes);
    std::fs::write(&old, old_bytes).unwrap();
}

fn open(dir: &Path, recovery: WalRecovery, read_only: bool) -> lidx::Result<Store> {
    let options = StoreOptions {
        recovery,
        read_only,
        ..StoreOptions::default()
    };
    Store::open(dir, &options)
}

/// The message of the `Corrupt` error `result` must be.
fn corrupt(result: lidx::Result<Store>) -> String {
    match result {
        Err(e @ Error::Corrupt { .. }) => e.to_string(),
        Err(other) => panic!("expected Corrupt, got {other}"),
        Ok(_) => panic!("expected Corrupt, the store opened"),
    }
}

/// A segment whose records the tables all hold, followed by another, is not read at all
/// (issue 32: a `log` store's reopen must not read its whole log): its damage stops no open,
/// nothing is cut under any mode, and `check` still names it.
#[test]
fn a_covered_segment_is_not_read_and_not_cut_under_any_mode() {
    let dir = tempfile::tempdir().unwrap();
    // A flipped byte in the first record's body: valid records follow it.
    store_with_covered_damage(dir.path(), true, |bytes| {
        bytes[SEGMENT_HEADER_BYTES + 20] ^= 0x40
    });
    let before = snapshot(dir.path());
    for recovery in [
        WalRecovery::PointInTime,
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::TornTail,
    ] {
        for read_only in [false, true] {
            let store = open(dir.path(), recovery, read_only).unwrap();
            assert!(store.recovery().is_none(), "nothing dropped");
            for i in 0..30u32 {
                assert_eq!(
                    store.get(&i.to_be_bytes()).unwrap().as_deref(),
                    Some(&b"value"[..])
                );
            }
            drop(store);
            assert_eq!(snapshot(dir.path()), before, "no file changed");
        }
    }
    let report = Store::check(dir.path()).unwrap();
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.what.contains("record 1") || d.what.contains("checksum")),
        "{report:?}"
    );
}

#[test]
fn tolerate_corrupted_tail_does_not_cut_inside_what_the_tables_hold() {
    let dir = tempfile::tempdir().unwrap();
    // The last record of the only segment damaged: the mode cuts a damaged tail.
    store_with_covered_damage(dir.path(), false, |bytes| {
        let last = bytes.len() - 3;
        bytes[last] ^= 0x40;
    });
    let before = snapshot(dir.path());
    for recovery in [WalRecovery::TolerateCorruptedTail, WalRecovery::PointInTime] {
        let message = corrupt(open(dir.path(), recovery, false));
        assert!(message.contains("record 30 at offset"), "{message}");
        assert!(
            message.contains("already hold every record up to 30"),
            "{message}"
        );
        assert!(message.contains("no readable record after it"), "{message}");
        assert_eq!(snapshot(dir.path()), before, "no file changed");
    }
}
