//! The `hybrid` engine: paper 002 §9's hybrid index over byte keys, a dynamic stage in memory
//! merged into one learned [`crate::disk::byte_table`] table: its files, open and merges
//! (`state`; writes and reads are the staged engines' own, `super::staged` and
//! `super::staged_read`), and what the store calls (`engine`).

mod engine;
mod state;

pub(crate) use state::HybridEngine;
