//! The `hybrid` engine: paper 002 §9's hybrid index over byte keys, a dynamic stage in memory
//! merged into one learned [`crate::disk::byte_table`] table: its state, open, writes and
//! merges (`state`), its reads, snapshots and ranges (`read`), and what the store calls
//! (`engine`).

mod engine;
mod read;
mod state;

pub(crate) use state::HybridEngine;
