//! [`StoreEngine`] for the `btree` engine: what the store calls, each call handed to the
//! engine's state (`state`: the tree, writes, checkpoints) or to its reads (`read`).

use crate::error::Result;
use crate::kv::store::engine::{Base, EngineSnapshot, StoreEngine};
use crate::kv::store::stats::StoreStats;
use crate::kv::wal::Record;

use super::read::BTreeSnapshot;
use super::state::BTreeEngine;

impl StoreEngine for BTreeEngine {
    fn base(&self) -> &Base {
        &self.inner.base
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.tree.read().get(key)
    }

    fn write(&self, record: Record<'_>) -> Result<()> {
        self.inner.write(record)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot> {
        Box::new(BTreeSnapshot::new(&self.inner))
    }

    fn compact(&self) -> Result<()> {
        self.inner.compact()
    }

    fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        let (records, key_bytes, value_bytes, model_bytes, disk, free) = inner.tree_figures();
        let cache_bytes = inner.storage.cache_blocks() * inner.storage.block_size();
        inner.work.stats(StoreStats {
            table_records: records,
            table_key_bytes: key_bytes,
            table_value_bytes: value_bytes,
            model_bytes,
            cache_bytes,
            memory_bytes: model_bytes + cache_bytes,
            table_disk_bytes: disk,
            free_disk_bytes: free,
            ..inner.base.stats()
        })
    }

    /// Checkpoints what the log holds (so the next open replays nothing) and syncs the log.
    fn close(self: Box<Self>) -> Result<()> {
        if let Some(wal) = &self.inner.base.wal {
            let mut st = self.inner.writer.lock();
            if st.log_bytes > 0 && st.failed.is_none() {
                self.inner.checkpoint(&mut st)?;
            }
            wal.sync()?;
        }
        Ok(())
    }
}
