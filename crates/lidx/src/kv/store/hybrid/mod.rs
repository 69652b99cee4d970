//! The `hybrid` engine: paper 002 §9's hybrid index over byte keys, a dynamic stage in memory
//! merged into one learned [`crate::disk::byte_table`] table: its state, writes and merges
//! (`engine`), and its reads, snapshots and ranges (`read`).

mod engine;
mod read;

pub(crate) use engine::HybridEngine;
