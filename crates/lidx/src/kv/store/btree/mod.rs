//! The `btree` engine: the disk B+-tree ([`crate::disk::byte_btree`]) made durable by the
//! store's write-ahead log with checkpoints: its state, open, writes and checkpoints
//! (`state`), its snapshots and ranges (`read`), and what the store calls (`engine`).

mod engine;
mod read;
mod state;

pub(crate) use state::{check_pages, BTreeEngine, PAGES_FILE};
