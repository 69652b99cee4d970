//! [`StoreEngine`] for the hybrid engine: what the store calls, each call handed to the
//! engine's state (`state`: writes, freezes, merges) or to its reads (`read`).

use crate::error::Result;
use crate::kv::store::engine::{Base, EngineSnapshot, StoreEngine};
use crate::kv::store::stats::StoreStats;
use crate::kv::wal::Record;

use crate::kv::store::staged::Staged;
use crate::kv::store::staged_read::{get_latest, StagedSnapshot};

use super::state::HybridEngine;

impl StoreEngine for HybridEngine {
    fn base(&self) -> &Base {
        &self.inner.base
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_latest(&self.inner, key)
    }

    fn write(&self, record: Record<'_>) -> Result<()> {
        self.inner.write(record)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot> {
        Box::new(StagedSnapshot::take(&self.inner))
    }

    fn compact(&self) -> Result<()> {
        self.inner.compact()
    }

    fn wait_for_merges(&self) -> Result<()> {
        self.inner.wait_merges()
    }

    fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        let v = inner.current();
        let (dynamic_keys, dynamic_bytes) = Staged::dynamic_size(&v);
        let table = v.files.as_ref().map(|t| &t.table);
        let model_bytes = table.map_or(0, |t| t.memory_bytes());
        let cache_bytes = inner.storage.cache_blocks() * inner.storage.block_size();
        inner.work.stats(StoreStats {
            dynamic_keys,
            dynamic_bytes,
            table_records: table.map_or(0, |t| t.len()),
            table_key_bytes: table.map_or(0, |t| t.header().key_bytes),
            table_value_bytes: table.map_or(0, |t| t.header().value_bytes),
            model_bytes,
            cache_bytes,
            memory_bytes: dynamic_bytes + model_bytes + cache_bytes,
            table_disk_bytes: table.map_or(0, |t| t.disk_bytes()),
            free_disk_bytes: 0,
            ..inner.base.stats()
        })
    }

    /// Waits for a running merge, stops the merge thread and syncs the log.
    fn close(mut self: Box<Self>) -> Result<()> {
        self.stop_worker();
        self.inner.closed()
    }
}
