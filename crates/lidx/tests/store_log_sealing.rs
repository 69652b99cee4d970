//! Which engines seal their log segments without an fsync under `FsyncPolicy::Never` (the
//! log's "Sealing unsynced"): those whose tables hold a segment's records before the segment is
//! removed (`lsm`, `hybrid`, `btree`), never the `log` engine, whose segments are its data,
//! and no engine under another policy. A segment says so in its header's flags (offset 12),
//! which is what replay reads after a power loss.

use std::path::Path;

use lidx::kv::{CreateOptions, Engine, FsyncPolicy, Store, StoreOptions, MIN_LOG_SEGMENT_BYTES};
use lidx::raw::kv::wal::{SEALED_UNSYNCED, SEGMENT_HEADER_BYTES};
use lidx::raw::kv::{Record, Wal, WalOptions};

/// The flags of every segment of the store's log in `dir`.
fn segment_flags(dir: &Path) -> Vec<u32> {
    let mut flags = Vec::new();
    for entry in std::fs::read_dir(dir.join("wal")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "log") {
            let bytes = std::fs::read(&path).unwrap();
            flags.push(u32::from_le_bytes(bytes[12..16].try_into().unwrap()));
        }
    }
    flags
}

#[test]
fn only_engines_whose_tables_hold_the_log_seal_it_unsynced_and_only_under_never() {
    for name in ["lsm", "hybrid", "btree", "log:btree"] {
        for fsync in [
            FsyncPolicy::Never,
            FsyncPolicy::Always,
            FsyncPolicy::EveryMs(50),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let create = CreateOptions {
                engine: Engine::parse(name).unwrap(),
                ..CreateOptions::default()
            };
            // Small log segments: the `log` engine starts a new one every few dozen puts.
            let options = StoreOptions {
                fsync,
                log_segment_bytes: MIN_LOG_SEGMENT_BYTES,
                ..StoreOptions::default()
            };
            // Created under the default policy: the first segment was made then.
            Store::create(dir.path(), &create, &StoreOptions::default())
                .unwrap()
                .close()
                .unwrap();
            let store = Store::open(dir.path(), &options).unwrap();
            for i in 0..100u64 {
                store.put(&i.to_be_bytes(), &[7u8; 100]).unwrap();
            }
            // A compaction flushes (or checkpoints), sealing the segment the puts went to.
            store.compact().unwrap();
            store.close().unwrap();
            let store = Store::open(dir.path(), &options).unwrap();
            store.put(&7u64.to_be_bytes(), b"again").unwrap();
            store.close().unwrap();
            let want = if fsync == FsyncPolicy::Never && !name.starts_with("log") {
                SEALED_UNSYNCED
            } else {
                0
            };
            let flags = segment_flags(dir.path());
            assert!(!flags.is_empty(), "{name} {fsync:?}");
            assert_eq!(
                flags.last().copied(),
                Some(want),
                "{name} {fsync:?}: the newest segment's flags, of {flags:?}"
            );
            let store = Store::open(dir.path(), &options).unwrap();
            assert_eq!(
                store.get(&7u64.to_be_bytes()).unwrap().as_deref(),
                Some(&b"again"[..])
            );
            assert_eq!(store.range(..).count(), 100, "{name} {fsync:?}");
        }
    }
}

/// The segment files of the store's log in `dir`, oldest first.
fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir.join("wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn an_lsm_store_under_never_opens_at_the_prefix_a_power_loss_kept_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let create = CreateOptions {
        engine: Engine::parse("lsm").unwrap(),
        ..CreateOptions::default()
    };
    let options = StoreOptions {
        fsync: FsyncPolicy::Never,
        ..StoreOptions::default()
    };
    let store = Store::create(dir.path(), &create, &options).unwrap();
    for i in 0..10u64 {
        store.put(&i.to_be_bytes(), b"first").unwrap();
    }
    store.close().unwrap();
    // As a freeze leaves the log: the segment of records 1..=10 sealed (without an fsync, as
    // its header says), the next one holding records 11..=15, and no flush committed yet.
    let [sealed] = &segments(dir.path())[..] else {
        panic!("one segment")
    };
    let owner = u128::from_le_bytes(std::fs::read(sealed).unwrap()[24..40].try_into().unwrap());
    assert_eq!(
        u32::from_le_bytes(std::fs::read(sealed).unwrap()[12..16].try_into().unwrap()),
        SEALED_UNSYNCED
    );
    {
        let log_options = WalOptions {
            fsync: FsyncPolicy::Never,
            seal_unsynced: true,
            ..WalOptions::default()
        };
        let (wal, _) = Wal::open_with_faults(
            &dir.path().join("wal"),
            log_options,
            None,
            0,
            owner,
            |_, _| Ok(()),
        )
        .unwrap();
        assert_eq!(wal.rotate().unwrap(), 11);
        for i in 10..15u64 {
            let key = i.to_be_bytes();
            let value = b"second";
            wal.append(&[Record::Put { key: &key, value }]).unwrap();
        }
    }
    // A power loss: of the sealed segment only its header (fsynced when it was made) reached
    // the disk; the later segment was written back.
    let sealed_bytes = std::fs::read(sealed).unwrap();
    std::fs::write(sealed, &sealed_bytes[..SEGMENT_HEADER_BYTES]).unwrap();
    let report = Store::check(dir.path()).unwrap();
    assert!(report.is_sound(), "{report:?}");
    assert!(report.torn_tail_bytes > 0);
    // The store opens at the longest prefix: nothing of records 1..=15 (the later segment is
    // set aside, not read past the gap), and goes on from record 1.
    let store = Store::open(dir.path(), &options).unwrap();
    assert_eq!(store.range(..).count(), 0);
    store.put(&1u64.to_be_bytes(), b"third").unwrap();
    store.close().unwrap();
    let aside = std::fs::read_dir(dir.path().join("wal"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".dropped")
        })
        .count();
    assert_eq!(aside, 1, "the later segment is kept aside");
    let store = Store::open(dir.path(), &options).unwrap();
    assert_eq!(
        store.get(&1u64.to_be_bytes()).unwrap().as_deref(),
        Some(&b"third"[..])
    );
    assert_eq!(store.range(..).count(), 1);
}
