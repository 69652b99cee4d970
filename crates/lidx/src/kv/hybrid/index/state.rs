//! The state of a [`HybridIndex`]: the versions readers see (dynamic, frozen and static
//! stages), the log, the manifest, the merge's state and the counters, shared by the index's
//! handles and its merge thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::disk::hybrid::dynamic::{DynamicMap, Slot, Stage};
use crate::disk::hybrid::static_set::StaticSet;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::Key;
use crate::kv::hybrid::options::HybridOptions;
use crate::kv::wal::{Seq, Wal};
use crate::kv::ManifestStore;
use crate::mem::btree::BTree;

/// Name of the log directory inside the storage's directory.
pub(super) const WAL_DIR: &str = "wal";

/// Key stripes: writers of the same key are serialized from log append to stage insert, so
/// the stage applies a key's writes in log order.
pub(super) const STRIPES: usize = 64;

type Shared<K, D> = Arc<RwLock<Stage<K, D>>>;

/// What a reader sees: one consistent set of stages.
pub(super) struct Version<K: Key, D: DynamicMap<K>> {
    pub(super) dynamic: Shared<K, D>,
    pub(super) frozen: Option<Shared<K, D>>,
    /// Last sequence number in the frozen stage.
    pub(super) frozen_seq: Seq,
    pub(super) statics: Arc<StaticSet<K>>,
}

#[derive(Default)]
pub(super) struct MergeState {
    pub(super) pending: bool,
    pub(super) running: bool,
    pub(super) error: Option<Error>,
    pub(super) shutdown: bool,
}

pub(super) struct Inner<K: Key, D: DynamicMap<K>> {
    pub(super) storage: Arc<Storage>,
    pub(super) options: HybridOptions,
    pub(super) wal: Option<Wal>,
    pub(super) version: RwLock<Arc<Version<K, D>>>,
    /// Writers hold it shared from log append to stage insert; a freeze holds it exclusive.
    pub(super) gate: RwLock<()>,
    pub(super) stripes: Vec<Mutex<()>>,
    pub(super) manifest: Mutex<(Option<ManifestStore>, u64)>,
    pub(super) merge: Mutex<MergeState>,
    pub(super) merge_cond: Condvar,
    pub(super) merges: AtomicU64,
    pub(super) merge_nanos: AtomicU64,
    pub(super) write_stalls: AtomicU64,
    pub(super) stall_nanos: AtomicU64,
    pub(super) wal_dir: PathBuf,
}

/// The hybrid index of paper 002 §9 (G6); see [`HybridOptions`](crate::kv::HybridOptions). `Send + Sync`,
/// every method takes `&self`. The dynamic stage's map is `D`: lidx's in-memory B+-tree by
/// default ([`StdMap`] plugs in `std`'s `BTreeMap`).
///
/// [`StdMap`]: crate::kv::hybrid::StdMap
pub struct HybridIndex<K: Key, D: DynamicMap<K> = BTree<K, Slot>> {
    pub(super) inner: Arc<Inner<K, D>>,
    pub(super) worker: Option<JoinHandle<()>>,
}

pub(super) fn dir_of(storage: &Storage) -> Result<PathBuf> {
    storage
        .dir()
        .map(Path::to_path_buf)
        .ok_or(Error::InvalidParameter {
            name: "storage",
            value: "an in-memory storage".to_string(),
            expected: "a storage with a directory (for the write-ahead log and the manifest)",
        })
}

impl<K: Key, D: DynamicMap<K>> Inner<K, D> {
    /// The stages a reader sees now.
    pub(super) fn current(&self) -> Arc<Version<K, D>> {
        Arc::clone(&self.version.read())
    }
}

pub(super) fn dynamic_bytes<K: Key, D: DynamicMap<K>>(v: &Version<K, D>) -> usize {
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
