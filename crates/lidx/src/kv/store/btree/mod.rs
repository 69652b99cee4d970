//! The `btree` engine: the disk B+-tree ([`crate::disk::byte_btree`]) made durable by the
//! store's write-ahead log with checkpoints (`engine`), and its snapshots and ranges (`read`).

mod engine;
mod read;

pub(crate) use engine::{check_pages, BTreeEngine, PAGES_FILE};
