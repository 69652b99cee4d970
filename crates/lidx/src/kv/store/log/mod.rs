//! The `log` engine: paper 001 §III's end-to-end setting (Viper), records appended to the log
//! and never changed, an in-memory map from each key to its newest record: its state, open and
//! writes (`state`), the record body it logs (`record`), its segments as reads see them
//! (`segment`), the map over keys of 8 bytes or any length (`map`), its snapshots and ranges
//! (`read`), the collector that reclaims the log's space and writes checkpoints (`collect`,
//! `checkpoint`), and what the store calls (`engine`).

pub(crate) mod checkpoint;
mod collect;
mod engine;
mod map;
mod read;
pub(crate) mod record;
mod segment;
mod state;

pub use checkpoint::{decode_checkpoint, CHECKPOINT_MAGIC, CHECKPOINT_VERSION};
pub(crate) use state::{check_checkpoint, LogEngine};
