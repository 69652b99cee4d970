//! [`Store`]: a durable, ordered map from byte-string keys to byte-string values, in a
//! directory, behind one API whatever engine serves it.
//!
//! ```no_run
//! use lidx::kv::{CreateOptions, Store, StoreOptions, WriteBatch};
//! # fn main() -> lidx::Result<()> {
//! let store = Store::create("/tmp/words".as_ref(), &CreateOptions::default(), &StoreOptions::default())?;
//! store.put(b"apple", b"3")?;
//! let mut batch = WriteBatch::new();
//! batch.put(b"pear", b"5")?.delete(b"apple")?;
//! store.write(&batch)?; // all of it or none of it, after a crash too
//! let snapshot = store.snapshot();
//! for entry in store.range(b"a".as_slice()..b"q".as_slice()) {
//!     let (key, value) = entry?;
//!     println!("{key:?} = {value:?}");
//! }
//! assert_eq!(snapshot.get(b"pear")?, Some(b"5".to_vec()));
//! store.close()?;
//! # Ok(()) }
//! ```
//!
//! # Keys, values and where they live
//!
//! Keys are 1 to [`MAX_KEY_BYTES`] (4 KiB) bytes, ordered byte-wise; values 0 to
//! [`MAX_VALUE_BYTES`] (16 MiB). Anything else is [`crate::Error::SizeLimit`], refused before
//! it is logged. Where values live depends on the engine and the record's size:
//!
//! * `hybrid`: **inline, next to their keys**, in the dynamic stage in memory and in the
//!   table's record stream on disk, where a record longer than what is left of a block runs
//!   on into the next blocks (`crate::disk::byte_table`). A lookup of a small record reads
//!   one block; a 1 MiB value is one more sequential request of 256 blocks. A separate value
//!   log (WiscKey) would add a second read to every lookup and a garbage collector of its
//!   own. What decided it, and where it stops holding (`lidx ycsb --store btree,hybrid
//!   --dataset gen:lognormal:400K --payload-size <n> --workload read-only,write-only --ops
//!   30K`, sim:nvme, 300K records, equal memory): with 8-byte values the hybrid reads one
//!   block per lookup (0.99x the B+-tree) and writes 11.9x as fast; with 1000-byte values it
//!   still reads one block per lookup (1.005x; before records were kept from straddling a
//!   block boundary, one in four did: 1.24 blocks, 0.81x) but writes at 0.48x, every merge
//!   rewriting 300 MB of values for the ~1,300 writes the budget holds (57 blocks merged per
//!   write). So inline is right for small values and wrong for large ones under writes;
//!   values above a size belong in a value log, which this engine does not have yet (see the
//!   `docs/limitations.md`).
//! * `btree`: **by size**. A record of up to half a leaf (key and value together: about
//!   2 KiB with 4 KiB blocks) is inline in its leaf, so a lookup reads one block; a larger
//!   one goes to an overflow run of its own blocks, and its leaf keeps a reference and the
//!   key's first 64 bytes (`crate::disk::byte_btree`). Half keeps two records or more in
//!   every leaf, so a split always has room; an update of a large value rewrites its run and
//!   one leaf, not the neighbours' values. A quarter (the first choice) sent 1 KiB values to
//!   a block each: 3,605 bytes on disk per record of a 1000-byte value (1M records), 2,396
//!   with half.
//!
//! Typed keys (`u64`, `u32`, `i64`, `f64`, [`crate::Str16`]) are stored through an
//! order-preserving encoding ([`OrderedKey`]), so their ranges come out in their own order.
//!
//! # Engines
//!
//! [`Engine::Hybrid`] (the default) is paper 002 §9's hybrid index (see `crate::kv::hybrid`
//! for the paper and the merge protocol) over byte keys: writes go to the write-ahead log,
//! then to a dynamic stage in memory; a merge folds it into one static table whose blocks are
//! located by a learned model over the keys of any length (`crate::disk::byte_table`).
//!
//! [`Engine::BTree`] is the disk B+-tree it is measured against, at the same durability:
//! every inner node in memory, one leaf read per lookup, one leaf read and written per
//! insert, written copy-on-write and made durable by the same log with checkpoints
//! (`crate::disk::byte_btree`; the engine's protocol is in `btree/engine.rs`).
//!
//! [`Engine::Log`] is paper 001 §III's end-to-end setting (Viper): records appended to the log
//! and never moved, an updatable in-memory map chosen by name ([`crate::mem::MapSpec`]) from
//! each 8-byte key to its newest operation (`log:trie:<map>`: keys of any length, the map a
//! [`crate::mem::TrieMap`] of such maps); reads come from the memory-mapped log, snapshots
//! follow each key's chain of operations back, a collector rewrites the live records of the
//! emptiest log segments and removes them once the log passes
//! [`StoreOptions::log_space_ratio`] times its live bytes, and reopening reads the last
//! checkpoint of the map and the log after it (the engine's protocol and its limits are in
//! `log/state.rs` and `log/collect.rs`).
//!
//! [`Engine::Lsm`] is a log-structured merge tree whose sorted runs are learned byte tables:
//! the hybrid's write path and memtable, flushed to runs at level 0 and merged level by level
//! (leveled, [`LsmSpec::ratio`] apart) on a compaction thread; each run is located by its
//! learned model (one block per lookup) and guarded by a Bloom key filter while the filters fit
//! in half the budget, so a get of a key a run does not hold reads none of its blocks (the
//! deepest runs let theirs go first); its memtables stay within the budget, and what grows
//! with the data is the runs' models, about a byte a key of 8-byte keys (the design and where
//! it departs from Bourbon and DobLIX are in `lsm/mod.rs`).
//!
//! The engine is recorded in the store's `STORE` file, and [`Store::open`] picks it from
//! there. Every engine implements one private trait (`engine.rs`, after lsm-tree's
//! `AbstractTree`): [`Store`], [`Snapshot`] and [`Range`] hold it behind a trait object, so
//! each of their methods is written once. Opening and creating a store is written once too
//! (`open.rs`: options, `STORE`, lock, manifest, the store's ownership of each file, the
//! log's replay and coverage); an engine plugs in its files, how a record is applied and
//! what it builds. Another engine is one more folder beside `hybrid/`, `btree/` and `log/`.
//!
//! # Durability, batches and snapshots
//!
//! Every write is one log record appended ([`StoreOptions::fsync`]) before it is applied; a
//! [`WriteBatch`] is one record, so after a crash it is there whole or not at all. The hybrid
//! engine's writers share group commits; the btree engine's writers take turns for the log
//! append and the tree update together (its log order is its tree order), so with
//! `fsync: Always` each of its writes waits for its own `fdatasync`. [`Store::snapshot`] pins
//! the stages (or the tree's root) and a sequence number; its reads do not change while
//! writes, merges and checkpoints go on. Plain reads see every acknowledged write, and never a
//! write a snapshot taken after them would not see: a version applied but not yet published
//! (its writer waiting for an earlier one) is waited for, not returned early.
//!
//! # When the device fails
//!
//! A failed write or sync of a block file, of the log or of a manifest commit is a typed
//! error, and no acknowledged write is lost (`tests/store_faults.rs` strikes every kind of
//! fault at many points of each):
//! a block file's failure leaves the write in the log, and a log that failed refuses every
//! later append (see `crate::kv::wal`), so nothing is acknowledged that it may not hold.
//! The hybrid engine keeps a failed merge's error: writes go on into the dynamic stage until
//! it fills, then every write gets the error, even once the device works again (the merge is
//! not retried); reopening the store recovers from the log. The btree engine refuses every
//! write after a page write of an update failed (part of the update may be in the tree); a
//! failed checkpoint leaves the previous one in force and is tried again at the next write. A
//! write that met the fault
//! returns the error and is there whole or not at all after a reopen. What is not covered: a
//! power loss that forgets unsynced block-file writes (`lidx kv torture --power-loss` drops the
//! log's unsynced end).
//!
//! # The directory
//!
//! `STORE` (identity: engine, block size, model, key format and the store's random id;
//! checked on open, another format version is refused), `LOCK` (held by the one writer, or
//! shared by readers: a second writer gets [`crate::Error::Locked`]; a reader opens it for
//! reading only, so a store on read-only media opens read-only), `CURRENT` and `MANIFEST-*`
//! (`crate::kv::manifest`), `wal/` (`crate::kv::wal`), and the engine's block files: the
//! live `table-*.lbt` (`hybrid`), or `pages.lbp` and the last checkpoint's `inner-*.lbi`
//! (`btree`); a `log` store has none (its log is its data).
//!
//! Every file is bound to its store and generation (issue 30): the store's id is in every
//! table's, image's, page file's and log segment's header, with the file's generation, and the
//! manifest records each live file's identity (generation, size, crc32c of its first block).
//! A file copied from another store, or an older copy of the store's own put back, is
//! refused by open and by [`Store::check`] with [`crate::Error::ForeignFile`] naming it (the
//! layouts are in `dir`'s module docs).
//!
//! # The typed hybrid index, and what both share
//!
//! [`HybridIndex`] is paper 002 §9's hybrid (G6) over fixed-width keys, with the paper's
//! choices of model, fetch strategy and dynamic map (what `lidx ycsb --store adapter:hybrid`
//! runs). It and the store are made durable by the same two pieces, which stay inside the crate: an append-only,
//! checksummed write-ahead log (group commit from many threads under a [`FsyncPolicy`];
//! recovery cuts a torn tail and refuses damage in the middle, as [`WalRecovery`] says) and
//! an atomically switched manifest naming the live static files and the sequence number
//! ([`Seq`]) they hold the data up to. Recovery opens the manifest's files and replays the log
//! above that number; a merge rotates the log, writes the new files, commits a manifest naming
//! them and then drops the log it covers.

mod flock;
pub(crate) mod hybrid;
pub(crate) mod manifest;
mod stamp;
pub(crate) mod store;
pub(crate) mod wal;

pub use hybrid::{HybridIndex, HybridOptions, HybridStats};
pub use store::{
    BatchOp, CheckReport, CreateOptions, Damage, Engine, Entry, KeyFormat, LogKeys, LogSpec,
    LsmSpec, OrderedKey, Range, Snapshot, Store, StoreOptions, StoreStats, TornSlot, WriteBatch,
    MAX_KEY_BYTES, MAX_LOG_SEGMENT_BYTES, MAX_MEMORY_BUDGET, MAX_VALUE_BYTES, MIN_KEY_BYTES,
    MIN_LOG_SEGMENT_BYTES, MIN_LOG_SPACE_RATIO, MIN_MEMORY_BUDGET,
};
pub use wal::{DamageKind, Dropped, FsyncPolicy, Seq, WalRecovery};

pub(crate) use manifest::{Manifest, ManifestStore};
pub use wal::{WalOptions, WalStats};
