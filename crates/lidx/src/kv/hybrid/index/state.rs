//! [`HybridIndex`]: the dynamic stage, the frozen stage, the static stage, the log and the
//! background merge put together. See the module docs of [`super`] for the design.
//!
//! One file per part: the index's state and its reads here, [`open`] (create, reopen,
//! recovery), [`write`] (a write's path, freezing, merges), [`cursor`] (scan cursors).

mod cursor;
mod open;
mod write;

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::{check_strictly_sorted, Key};
use crate::kv::wal::{replay, Record, Seq, Wal, WalStats};
use crate::kv::{Manifest, ManifestStore};
use crate::mem::btree::BTree;

use crate::disk::hybrid::dynamic::{DynamicMap, Slot, Stage};
use crate::disk::hybrid::merge::{merge_into, write_parts};
use crate::disk::hybrid::static_set::{is_static_file, AnyStatic, StaticPart, StaticSet};
use crate::disk::DiskIndex;

use super::options::{HybridOptions, HybridStats};
use super::recovery::{check_coverage, decode_meta, wal_exists, Meta};
use cursor::{MemCursor, StaticCursor};

/// Name of the log directory inside the storage's directory.
pub const WAL_DIR: &str = "wal";

/// Key stripes: writers of the same key are serialized from log append to stage insert, so
/// the stage applies a key's writes in log order.
const STRIPES: usize = 64;

type Shared<K, D> = Arc<RwLock<Stage<K, D>>>;

/// What a reader sees: one consistent set of stages.
struct Version<K: Key, D: DynamicMap<K>> {
    dynamic: Shared<K, D>,
    frozen: Option<Shared<K, D>>,
    /// Last sequence number in the frozen stage.
    frozen_seq: Seq,
    statics: Arc<StaticSet<K>>,
}

#[derive(Default)]
struct MergeState {
    pending: bool,
    running: bool,
    error: Option<Error>,
    shutdown: bool,
}

struct Inner<K: Key, D: DynamicMap<K>> {
    storage: Arc<Storage>,
    options: HybridOptions,
    wal: Option<Wal>,
    version: RwLock<Arc<Version<K, D>>>,
    /// Writers hold it shared from log append to stage insert; a freeze holds it exclusive.
    gate: RwLock<()>,
    stripes: Vec<Mutex<()>>,
    manifest: Mutex<(Option<ManifestStore>, u64)>,
    merge: Mutex<MergeState>,
    merge_cond: Condvar,
    merges: AtomicU64,
    merge_nanos: AtomicU64,
    write_stalls: AtomicU64,
    stall_nanos: AtomicU64,
    wal_dir: PathBuf,
}

/// The hybrid index of paper 002 §9 (G6); see the module docs of [`super`]. `Send + Sync`,
/// every method takes `&self`. The dynamic stage's map is `D`: lidx's in-memory B+-tree by
/// default ([`super::StdMap`] plugs in `std`'s `BTreeMap`).
pub struct HybridIndex<K: Key, D: DynamicMap<K> = BTree<K, Slot>> {
    inner: Arc<Inner<K, D>>,
    worker: Option<JoinHandle<()>>,
}

fn dir_of(storage: &Storage) -> Result<PathBuf> {
    storage
        .dir()
        .map(Path::to_path_buf)
        .ok_or(Error::InvalidParameter {
            name: "storage",
            value: "an in-memory storage".to_string(),
            expected: "a storage with a directory (for the write-ahead log and the manifest)",
        })
}

impl<K: Key> HybridIndex<K> {
    /// Creates an index in `storage`'s directory (which must not hold one yet: `Io` of kind
    /// `AlreadyExists`) with the initial static stage bulk-loaded from strictly increasing
    /// `keys`, entry `i` getting the payload `payload_of(i, &keys[i], out)` writes.
    pub fn create(
        storage: Arc<Storage>,
        keys: &[K],
        payload_of: impl Fn(usize, &K, &mut [u8]),
        options: HybridOptions,
    ) -> Result<Self> {
        Self::create_with(storage, keys, payload_of, options)
    }

    /// Opens the index in `storage`'s directory: the manifest's static files, then the log
    /// replayed into the dynamic stage (see [`super::recovery`]).
    pub fn open(storage: Arc<Storage>, options: HybridOptions) -> Result<Self> {
        Self::open_with(storage, options, false)
    }

    /// Opens the index for reading only: `put` and `delete` return `Error::ReadOnly`, no merge
    /// runs, and nothing in the directory changes except that a torn log tail is cut (as
    /// [`replay`] does).
    pub fn open_read_only(storage: Arc<Storage>, options: HybridOptions) -> Result<Self> {
        Self::open_with(storage, options, true)
    }
}

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

    /// Inserts or updates `key`. Returns once the write is in the log as the fsync policy says
    /// (acknowledged). Errors: `ReadOnly`, `InvalidParameter` for a payload of another length
    /// than the index's, `InvalidKey` (NaN), the log's I/O errors, and a background merge's
    /// error when the write would have to wait for that merge.
    pub fn put(&self, key: K, payload: &[u8]) -> Result<()> {
        if payload.len() != self.inner.options.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly the index's payload_size bytes",
            });
        }
        self.inner.write(key, Some(payload), "put")
    }

    /// Deletes `key` (a tombstone until the next merge). Errors as [`HybridIndex::put`].
    pub fn delete(&self, key: &K) -> Result<()> {
        self.inner.write(*key, None, "delete")
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

    /// Blocks until no merge is running or pending; returns the error of a failed background
    /// merge (the index keeps serving reads and takes writes until its dynamic stage is full
    /// again; reopen it to retry the merge).
    pub fn wait_for_merges(&self) -> Result<()> {
        let mut m = self.inner.merge.lock();
        loop {
            if let Some(e) = &m.error {
                return Err(e.clone());
            }
            if !m.pending && !m.running {
                return Ok(());
            }
            self.inner.merge_cond.wait(&mut m);
        }
    }

    /// Freezes the dynamic stage and merges it now (if it holds anything), waiting for the
    /// merge; for tests and for a clean state before a read-only benchmark.
    pub fn merge_now(&self) -> Result<()> {
        self.wait_for_merges()?;
        if self.inner.freeze(true)? {
            self.wait_for_merges()?;
        }
        Ok(())
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

fn dynamic_bytes<K: Key, D: DynamicMap<K>>(v: &Version<K, D>) -> usize {
    std::iter::once(&v.dynamic)
        .chain(v.frozen.as_ref())
        .map(|s| s.read().memory_bytes())
        .sum()
}

impl<K: Key, D: DynamicMap<K>> Drop for HybridIndex<K, D> {
    /// Stops the merge thread after the merge it is running, if any. A frozen stage not merged
    /// yet stays in the log and is replayed at the next open.
    fn drop(&mut self) {
        self.inner.merge.lock().shutdown = true;
        self.inner.merge_cond.notify_all();
        if let Some(h) = self.worker.take() {
            let _ = h.join();
        }
    }
}
