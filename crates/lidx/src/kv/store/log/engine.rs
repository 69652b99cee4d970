//! [`StoreEngine`] for the `log` engine: what the store calls, each call handed to the
//! engine's state (`state`: the map, the log's segments, writes) or to its reads (`read`).

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::kv::store::engine::{Base, EngineSnapshot, StoreEngine};
use crate::kv::store::stats::StoreStats;
use crate::kv::wal::Record;

use super::read::LogSnapshot;
use super::state::LogEngine;

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

    /// Makes every acknowledged write durable: the log is all there is to fold.
    fn compact(&self) -> Result<()> {
        self.inner.base.sync()
    }

    fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        let (map_keys, map_bytes) = {
            let map = inner.map.read();
            (map.len(), map.size_in_bytes())
        };
        StoreStats {
            dynamic_keys: map_keys,
            table_records: inner.live.load(Ordering::Relaxed),
            table_key_bytes: inner.live_key_bytes.load(Ordering::Relaxed),
            model_bytes: map_bytes,
            memory_bytes: map_bytes,
            ..inner.base.stats()
        }
    }

    /// Syncs the log and closes the store.
    fn close(self: Box<Self>) -> Result<()> {
        self.inner.base.sync()
    }
}
