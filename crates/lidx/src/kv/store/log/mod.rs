//! The `log` engine: paper 001 §III's end-to-end setting (Viper), records appended to the log
//! and never moved, an in-memory map from each key to its newest record: its state, open and
//! writes (`state`), the record body it logs (`record`), the map over keys of 8 bytes or any
//! length (`map`), its snapshots and ranges (`read`), and what the store calls (`engine`).

mod engine;
mod map;
mod read;
pub(crate) mod record;
mod state;

pub(crate) use state::LogEngine;
