//! Reads: point lookups through the stages (dynamic, frozen, static), scans merging the three
//! stages in key order, and the sizes, counters and description of an index.

use std::sync::atomic::Ordering;

use crate::disk::hybrid::dynamic::DynamicMap;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::kv::hybrid::options::HybridStats;
use crate::kv::wal::{Wal, WalStats};

use super::cursor::{MemCursor, StaticCursor};
use super::state::{dynamic_bytes, HybridIndex};

impl<K: Key, D: DynamicMap<K>> HybridIndex<K, D> {
    /// Looks `key` up: the dynamic stage, then the frozen one, then the static stage. Copies
    /// the payload into `payload[..payload_size]` and returns true when found.
    /// `InvalidParameter` for a buffer shorter than the payload size.
    pub fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        let ps = self.inner.options.payload_size;
        if payload.len() < ps {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("a buffer of {} bytes", payload.len()),
                expected: "a buffer of at least payload_size bytes",
            });
        }
        let v = self.inner.current();
        for stage in std::iter::once(&v.dynamic).chain(v.frozen.as_ref()) {
            if let Some(entry) = stage.read().get(key) {
                return Ok(match entry {
                    Some(p) => {
                        payload[..ps].copy_from_slice(p);
                        true
                    }
                    None => false,
                });
            }
        }
        v.statics.get(key, payload)
    }

    /// Appends to `keys` and `payloads` up to `limit` entries from the first key `>= start`,
    /// the three stages merged in key order (a newer stage's entry hides an older one's,
    /// tombstones hide the key); returns how many.
    pub fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        if let Some(reason) = start.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        if limit == 0 {
            return Ok(0);
        }
        let v = self.inner.current();
        let ps = self.inner.options.payload_size;
        let batch = limit.saturating_add(1).clamp(16, 4096);
        let mut dynamic = MemCursor::new(&v.dynamic, *start, batch);
        let mut frozen = v.frozen.as_ref().map(|f| MemCursor::new(f, *start, batch));
        let mut statics = StaticCursor::new(&v.statics, *start, batch);
        let mut count = 0;
        while count < limit {
            dynamic.fill(ps);
            if let Some(f) = frozen.as_mut() {
                f.fill(ps);
            }
            statics.fill()?;
            let heads = [
                dynamic.head(),
                frozen.as_ref().and_then(|f| f.head()),
                statics.head(),
            ];
            let Some(min) =
                heads
                    .iter()
                    .flatten()
                    .copied()
                    .reduce(|a, b| if b.key_lt(&a) { b } else { a })
            else {
                break;
            };
            let is = |h: Option<K>| h.is_some_and(|k| !k.key_lt(&min) && !min.key_lt(&k));
            let value: Option<&[u8]> = if is(heads[0]) {
                dynamic.value(ps)
            } else if is(heads[1]) {
                frozen.as_ref().and_then(|f| f.value(ps))
            } else {
                Some(statics.value(ps))
            };
            if let Some(p) = value {
                keys.push(min);
                payloads.extend_from_slice(p);
                count += 1;
            }
            if is(heads[0]) {
                dynamic.pos += 1;
            }
            if is(heads[1]) {
                if let Some(f) = frozen.as_mut() {
                    f.pos += 1;
                }
            }
            if is(heads[2]) {
                statics.pos += 1;
            }
        }
        Ok(count)
    }

    /// Records in the static stage plus puts minus deletes in the dynamic stages: exact
    /// without updates of static keys or deletes of absent keys, else an over- or underestimate.
    pub fn len_estimate(&self) -> usize {
        let v = self.inner.current();
        let mut n = v.statics.len() as i64;
        for stage in std::iter::once(&v.dynamic).chain(v.frozen.as_ref()) {
            let s = stage.read();
            n += s.live() as i64 - s.tombstones() as i64;
        }
        n.max(0) as usize
    }

    /// Bytes held in memory: the dynamic and frozen stages and the static stage's models and
    /// file handles.
    pub fn memory_bytes(&self) -> usize {
        let v = self.inner.current();
        v.statics.memory_bytes() + dynamic_bytes(&v)
    }

    /// Bytes of the static files and of the log segments.
    pub fn disk_bytes(&self) -> u64 {
        let v = self.inner.current();
        let wal: u64 = std::fs::read_dir(&self.inner.wal_dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        v.statics.disk_bytes() + wal
    }

    /// Counters and sizes.
    pub fn stats(&self) -> HybridStats {
        let i = &self.inner;
        let v = i.current();
        let dynamic_len = v.dynamic.read().len();
        let frozen_len = v.frozen.as_ref().map_or(0, |f| f.read().len());
        HybridStats {
            merges: i.merges.load(Ordering::Relaxed),
            merge_nanos: i.merge_nanos.load(Ordering::Relaxed),
            dynamic_len,
            frozen_len,
            static_len: v.statics.len(),
            static_files: v.statics.parts.len(),
            write_stalls: i.write_stalls.load(Ordering::Relaxed),
            stall_nanos: i.stall_nanos.load(Ordering::Relaxed),
            dynamic_bytes: dynamic_bytes(&v),
            static_memory_bytes: v.statics.memory_bytes(),
            wal: i.wal.as_ref().map_or(WalStats::default(), Wal::stats),
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let i = &self.inner;
        let v = i.current();
        let dynamic_len = v.dynamic.read().len();
        let frozen_len = v.frozen.as_ref().map_or(0, |f| f.read().len());
        let model = v
            .statics
            .parts
            .first()
            .map_or("none", |p| p.index.model_name());
        format!(
            "hybrid<{}>: dynamic {} entries, frozen {}, static {} records in {} files \
             (model {model}, asked {}), trigger {:?}, memory budget {:?}, {} merge threads, \
             fsync {:?}{}",
            K::NAME,
            dynamic_len,
            frozen_len,
            v.statics.len(),
            v.statics.parts.len(),
            i.options.model.name(),
            i.options.trigger,
            i.options.memory_budget,
            i.options.merge_threads,
            i.options.wal.fsync,
            if i.wal.is_none() { ", read-only" } else { "" },
        )
    }
}
