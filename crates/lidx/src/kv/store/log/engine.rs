//! [`StoreEngine`] for the `log` engine: what the store calls, each call handed to the
//! engine's state (`state`: the map, the log's segments, writes), its reads (`read`) or its
//! collector (`collect`).

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::kv::store::engine::{Base, EngineSnapshot, StoreEngine};
use crate::kv::store::stats::StoreStats;
use crate::kv::wal::Record;

use super::collect::maintain;
use super::read::LogSnapshot;
use super::state::LogEngine;

impl LogEngine {
    /// Stops the collector's thread and waits for it (its pass in progress finishes).
    fn stop_collector(&self) {
        if let Some(thread) = self.thread.lock().take() {
            self.inner.collector.stop();
            let _ = thread.join();
        }
    }
}

impl StoreEngine for LogEngine {
    fn base(&self) -> &Base {
        &self.inner.base
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }

    fn write(&self, record: Record<'_>) -> Result<()> {
        self.inner.write(record)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot> {
        Box::new(LogSnapshot::new(&self.inner))
    }

    /// Collects every segment the space limit would, checkpoints, and syncs the log.
    fn compact(&self) -> Result<()> {
        if self.inner.base.wal.is_some() {
            maintain(&self.inner, true)?;
        }
        self.inner.base.sync()
    }

    /// Waits for the collector's pass in progress, and runs the one it was woken for if it has
    /// not started; returns its error if it stopped on one.
    fn wait_for_merges(&self) -> Result<()> {
        if self.inner.base.wal.is_some() && self.inner.collector.take_wake() {
            return maintain(&self.inner, false);
        }
        self.inner.collector_error()
    }

    fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        let (map_keys, map_bytes) = {
            let map = inner.map.read();
            (map.len(), map.size_in_bytes())
        };
        let live_bytes = inner.segments.read().live_bytes();
        inner.work.stats(StoreStats {
            dynamic_keys: map_keys,
            table_records: inner.live.load(Ordering::Relaxed),
            table_key_bytes: inner.live_key_bytes.load(Ordering::Relaxed),
            model_bytes: map_bytes,
            memory_bytes: map_bytes,
            table_disk_bytes: inner.checkpoint_bytes(),
            log_live_bytes: live_bytes,
            log_relocated_bytes: inner.relocated.load(Ordering::Relaxed),
            ..inner.base.stats()
        })
    }

    /// Stops the collector, checkpoints if the log since the last one calls for it, syncs the
    /// log and closes the store; returns the collector's error if it stopped on one.
    fn close(self: Box<Self>) -> Result<()> {
        self.stop_collector();
        if self.inner.base.wal.is_some() {
            maintain(&self.inner, false)?;
        }
        self.inner.base.sync()
    }
}

impl Drop for LogEngine {
    fn drop(&mut self) {
        self.stop_collector();
    }
}
