//! The `log` engine: paper 001 §III's end-to-end setting (Viper), records appended to the log
//! and never moved, an in-memory map from each key to its newest record (`engine`); the
//! record body it logs (`record`), the map over keys of 8 bytes or any length (`map`), and
//! its snapshots and ranges (`read`).

mod engine;
mod map;
mod read;
pub(crate) mod record;

pub(crate) use engine::LogEngine;
