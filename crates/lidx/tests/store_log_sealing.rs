//! Which engines seal their log segments without an fsync under `FsyncPolicy::Never` (the
//! log's "Sealing unsynced"): those whose tables hold a segment's records before the segment is
//! removed (`lsm`, `hybrid`, `btree`), never the `log` engine, whose segments are its data,
//! and no engine under another policy. A segment says so in its header's flags (offset 12),
//! which is what replay reads after a power loss.

use std::path::Path;

use lidx::kv::{CreateOptions, Engine, FsyncPolicy, Store, StoreOptions, MIN_LOG_SEGMENT_BYTES};
use lidx::raw::kv::wal::SEALED_UNSYNCED;

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
