//! [`StoreEngine`] for the `lsm` engine: writes and reads are the staged engines' own
//! (`super::super::staged`, `staged_read`), over the runs of `levels`; a write whose value
//! goes to the value log and is longer than its segments is refused before it is logged.

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::kv::store::batch::{decode_ops, BatchOp};
use crate::kv::store::engine::{Base, EngineSnapshot, StoreEngine};
use crate::kv::store::staged::Staged;
use crate::kv::store::staged_read::{get_latest, StagedSnapshot};
use crate::kv::store::stats::StoreStats;
use crate::kv::wal::Record;

use super::levels::spec_of;
use super::state::LsmEngine;
use super::values::check_value;

impl StoreEngine for LsmEngine {
    fn base(&self) -> &Base {
        &self.inner.base
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_latest(&self.inner, key)
    }

    fn write(&self, record: Record<'_>) -> Result<()> {
        let vmin = spec_of(&self.inner).vmin;
        if vmin > 0 {
            let segment = self.inner.base.options.log_segment_bytes;
            match record {
                Record::Put { value, .. } => check_value(value.len(), vmin, segment)?,
                Record::Batch { ops } => {
                    for op in decode_ops("a batch", ops) {
                        if let BatchOp::Put(_, value) = op? {
                            check_value(value.len(), vmin, segment)?;
                        }
                    }
                }
                Record::Delete { .. } => {}
            }
        }
        self.inner.write(record)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot> {
        Box::new(StagedSnapshot::take(&self.inner))
    }

    fn compact(&self) -> Result<()> {
        LsmEngine::compact(self)
    }

    fn wait_for_merges(&self) -> Result<()> {
        self.wait_for_work()
    }

    fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        let v = inner.current();
        let (dynamic_keys, dynamic_bytes) = Staged::dynamic_size(&v);
        let runs = &v.files;
        let headers = || runs.runs().map(|r| r.table.header());
        let model_bytes = runs.memory_bytes();
        let value_log_bytes = runs.values.iter().map(|s| s.table.disk_bytes()).sum();
        let cache_bytes = inner.storage.cache_blocks() * inner.storage.block_size();
        inner.work.stats(StoreStats {
            dynamic_keys,
            dynamic_bytes,
            table_records: headers().map(|h| h.records).sum(),
            table_key_bytes: headers().map(|h| h.key_bytes).sum(),
            table_value_bytes: headers().map(|h| h.value_bytes).sum(),
            model_bytes,
            cache_bytes,
            memory_bytes: dynamic_bytes + model_bytes + cache_bytes,
            table_disk_bytes: runs.runs().map(|r| r.table.disk_bytes()).sum::<u64>()
                + value_log_bytes,
            value_log_segments: runs.values.len(),
            value_log_bytes,
            value_log_live_bytes: runs.live_values().values().sum(),
            lsm_runs: runs.runs().count(),
            lsm_levels: runs.levels.iter().filter(|l| !l.is_empty()).count(),
            filter_bytes: runs.runs().map(|r| r.filter_bytes()).sum(),
            shed_filter_runs: runs.shed_runs(),
            lsm_written_bytes: inner.shared.written.load(Ordering::Relaxed),
            compaction_bytes: inner.shared.compacted.load(Ordering::Relaxed),
            moved_bytes: inner.shared.moved.load(Ordering::Relaxed),
            ..inner.base.stats()
        })
    }

    /// Waits for the running flush and compaction, stops both threads and syncs the log.
    fn close(mut self: Box<Self>) -> Result<()> {
        self.stop();
        self.inner.closed()
    }
}
