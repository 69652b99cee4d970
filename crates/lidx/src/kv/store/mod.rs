//! The `Store`: its handle, the open/create protocol, the engines behind one trait (one
//! folder each) and what they share. What it does and guarantees is documented on the public
//! family module, [`crate::kv`].

mod batch;
#[cfg(test)]
mod binding_tests;
mod btree;
mod check;
mod dir;
mod engine;
mod handle;
mod hybrid;
mod log;
mod lsm;
mod memtable;
mod open;
mod options;
mod ordered;
mod readers;
mod row_cache;
mod staged;
mod staged_read;
mod stats;
mod view;

pub use batch::{BatchOp, WriteBatch};
pub use check::{CheckReport, Damage, TornSlot};
pub use dir::{decode_identity, STORE_FILE, STORE_MAGIC, STORE_VERSION};
pub use engine::Entry;
pub use handle::Store;
pub use log::{decode_checkpoint, CHECKPOINT_MAGIC, CHECKPOINT_VERSION};
pub use options::{
    CreateOptions, Engine, KeyFormat, LogKeys, LogSpec, LsmSpec, StoreOptions, MAX_KEY_BYTES,
    MAX_LOG_SEGMENT_BYTES, MAX_MEMORY_BUDGET, MAX_VALUE_BYTES, MIN_KEY_BYTES,
    MIN_LOG_SEGMENT_BYTES, MIN_LOG_SPACE_RATIO, MIN_MEMORY_BUDGET,
};
pub use ordered::OrderedKey;
pub use stats::StoreStats;
pub use view::{Range, Snapshot};

pub(crate) use open::{check_coverage, require_wal};
