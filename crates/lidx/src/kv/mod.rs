//! Key-value storage: the [`Store`] (a durable, ordered map from byte-string keys to
//! byte-string values in a directory, served by one of three engines: see [`Store`] and
//! [`Engine`]) and the typed [`HybridIndex`] of paper 002 §9 (G6).
//!
//! Both are made durable by the same two pieces, which stay inside the crate: an append-only,
//! checksummed write-ahead log (group commit from many threads under a [`FsyncPolicy`];
//! recovery cuts a torn tail and refuses damage in the middle, as [`WalRecovery`] says) and
//! an atomically switched manifest naming the live static files and the sequence number
//! ([`Seq`]) they hold the data up to. Recovery opens the manifest's files and replays the log
//! above that number; a merge rotates the log, writes the new files, commits a manifest naming
//! them and then drops the log it covers.

pub(crate) mod hybrid;
pub(crate) mod manifest;
mod stamp;
pub(crate) mod store;
pub(crate) mod wal;

pub use hybrid::{HybridIndex, HybridOptions, HybridStats};
pub use store::{
    BatchOp, CheckReport, CreateOptions, Damage, Engine, Entry, KeyFormat, LogKeys, LogSpec,
    OrderedKey, Range, Snapshot, Store, StoreOptions, StoreStats, TornSlot, WriteBatch,
    MAX_KEY_BYTES, MAX_MEMORY_BUDGET, MAX_VALUE_BYTES, MIN_KEY_BYTES, MIN_MEMORY_BUDGET,
};
pub use wal::{DamageKind, Dropped, FsyncPolicy, Seq, WalRecovery};

pub(crate) use manifest::{Manifest, ManifestStore};
pub(crate) use wal::{WalOptions, WalStats};
