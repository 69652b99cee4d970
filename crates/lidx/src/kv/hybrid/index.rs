//! [`HybridIndex`]: the dynamic stage, the frozen stage, the static stage, the log and the
//! background merge put together. See the module docs of [`super`] for the design.

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

use super::options::{HybridOptions, HybridStats};
use super::recovery::{check_coverage, decode_meta, wal_exists, Meta};

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
    /// [`HybridIndex::create`] with any dynamic stage map.
    pub fn create_with(
        storage: Arc<Storage>,
        keys: &[K],
        payload_of: impl Fn(usize, &K, &mut [u8]),
        options: HybridOptions,
    ) -> Result<Self> {
        options.check()?;
        let dir = dir_of(&storage)?;
        if dir.join("CURRENT").exists() {
            return Err(Error::Io {
                file: dir.display().to_string(),
                op: "create hybrid index".to_string(),
                kind: std::io::ErrorKind::AlreadyExists,
                message: "the directory already holds an index; open it instead".to_string(),
            });
        }
        check_strictly_sorted(keys)?;
        let ps = options.payload_size;
        let wal_dir = dir.join(WAL_DIR);
        // No CURRENT: a log here is a leftover of a create that crashed before its commit.
        if wal_dir.exists() {
            std::fs::remove_dir_all(&wal_dir)
                .map_err(|e| Error::io(wal_dir.display().to_string(), "remove old log", &e))?;
        }
        let parts = write_parts(&storage, &options.stage(), 1, keys.len(), |out| {
            let mut payload = vec![0u8; ps];
            for (i, k) in keys.iter().enumerate() {
                payload_of(i, k, &mut payload);
                out.push(*k, &payload)?;
            }
            Ok(())
        })?;
        let (wal, _) = Wal::open(&wal_dir, options.wal, |_, _| Ok(()))?;
        let manifest = Manifest {
            static_files: parts.iter().map(|p| p.name.clone()).collect(),
            wal_segments: vec![WAL_DIR.to_string()],
            static_seq: 0,
            meta: Meta::of::<K>(ps, 2).encode(),
        };
        let store = ManifestStore::create(&dir, &manifest)?;
        let stage = Stage::new(ps);
        Ok(Self::assemble(
            storage,
            options,
            Some(wal),
            Some(store),
            2,
            stage,
            StaticSet::new(parts),
            wal_dir,
        ))
    }

    /// [`HybridIndex::open`] (or, with `read_only`, [`HybridIndex::open_read_only`]) with any
    /// dynamic stage map.
    pub fn open_with(
        storage: Arc<Storage>,
        options: HybridOptions,
        read_only: bool,
    ) -> Result<Self> {
        options.check()?;
        let dir = dir_of(&storage)?;
        let (store, manifest) = ManifestStore::open(&dir)?;
        let manifest_file = dir.join("CURRENT").display().to_string();
        let meta = decode_meta(&manifest_file, &manifest.meta)?;
        meta.check_key::<K>(&manifest_file)?;
        if meta.payload_size as usize != options.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: options.payload_size.to_string(),
                expected: "the payload size the index was created with",
            });
        }
        let mut parts: Vec<Arc<StaticPart<K>>> = Vec::new();
        for name in &manifest.static_files {
            let index = AnyStatic::open(&storage, name, options.fetch)?;
            let Some(part) = StaticPart::new(Arc::clone(&storage), name.clone(), index, None)?
            else {
                continue;
            };
            if let Some(prev) = parts.last() {
                if !prev.first.key_lt(&part.first) {
                    return Err(Error::Corrupt {
                        file: manifest_file,
                        block: None,
                        what: format!("static file {name} does not follow {}", prev.name),
                    });
                }
            }
            parts.push(Arc::new(part));
        }
        if !read_only {
            remove_leftovers(&storage, &dir, &manifest.static_files)?;
        }
        let wal_dir = dir.join(WAL_DIR);
        if !wal_exists(&wal_dir)? {
            return Err(Error::Io {
                file: wal_dir.display().to_string(),
                op: "open write-ahead log".to_string(),
                kind: std::io::ErrorKind::NotFound,
                message: "the log has no segment; it was removed outside lidx".to_string(),
            });
        }
        let ps = options.payload_size;
        let mut stage = Stage::<K, D>::new(ps);
        let static_seq = manifest.static_seq;
        let apply = |seq: Seq, record: Record<'_>| -> Result<()> {
            if seq <= static_seq {
                return Ok(());
            }
            let key = record.key_as::<K>()?;
            match record {
                Record::Put { value, .. } => {
                    if value.len() != ps {
                        return Err(Error::Corrupt {
                            file: wal_dir.display().to_string(),
                            block: None,
                            what: format!(
                                "record {seq} has a {}-byte payload, the index {ps}",
                                value.len()
                            ),
                        });
                    }
                    stage.apply(key, Some(value))
                }
                Record::Delete { .. } => stage.apply(key, None),
            }
        };
        let (wal, report) = if read_only {
            (None, replay(&wal_dir, apply)?)
        } else {
            let (wal, report) = Wal::open(&wal_dir, options.wal, apply)?;
            (Some(wal), report)
        };
        check_coverage(&wal_dir, &report, static_seq)?;
        let store = (!read_only).then_some(store);
        Ok(Self::assemble(
            storage,
            options,
            wal,
            store,
            meta.next_generation,
            stage,
            StaticSet::new(parts),
            wal_dir,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        storage: Arc<Storage>,
        options: HybridOptions,
        wal: Option<Wal>,
        store: Option<ManifestStore>,
        next_generation: u64,
        stage: Stage<K, D>,
        statics: StaticSet<K>,
        wal_dir: PathBuf,
    ) -> Self {
        let writable = wal.is_some();
        let inner = Arc::new(Inner {
            storage,
            options,
            wal,
            version: RwLock::new(Arc::new(Version {
                dynamic: Arc::new(RwLock::new(stage)),
                frozen: None,
                frozen_seq: 0,
                statics: Arc::new(statics),
            })),
            gate: RwLock::new(()),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            manifest: Mutex::new((store, next_generation)),
            merge: Mutex::new(MergeState::default()),
            merge_cond: Condvar::new(),
            merges: AtomicU64::new(0),
            merge_nanos: AtomicU64::new(0),
            write_stalls: AtomicU64::new(0),
            stall_nanos: AtomicU64::new(0),
            wal_dir,
        });
        let worker = writable.then(|| {
            let inner = Arc::clone(&inner);
            std::thread::spawn(move || inner.merge_loop())
        });
        HybridIndex { inner, worker }
    }

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

/// Removes the static files in `dir` that `live` does not name.
fn remove_leftovers(storage: &Storage, dir: &Path, live: &[String]) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir.display().to_string(), "list directory", &e))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(dir.display().to_string(), "list directory", &e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if is_static_file(&name) && !live.iter().any(|l| *l == name) {
            storage.remove(&name)?;
        }
    }
    Ok(())
}

impl<K: Key, D: DynamicMap<K>> Inner<K, D> {
    fn current(&self) -> Arc<Version<K, D>> {
        Arc::clone(&self.version.read())
    }

    /// True when the dynamic stage of `v` must be frozen.
    fn full(&self, v: &Version<K, D>) -> bool {
        let d = v.dynamic.read();
        if d.is_empty() {
            return false;
        }
        if d.len() >= self.options.max_entries(v.statics.len()) || d.slots_exhausted() {
            return true;
        }
        self.options
            .memory_budget
            .is_some_and(|b| d.memory_bytes() + v.statics.memory_bytes() > b)
    }

    fn write(&self, key: K, value: Option<&[u8]>, op: &'static str) -> Result<()> {
        let Some(wal) = &self.wal else {
            return Err(Error::ReadOnly { op });
        };
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        self.make_room()?;
        let mut key_bytes = [0u8; 64];
        let kb = &mut key_bytes[..K::SIZE];
        key.write_to(kb);
        let stripe = (key.to_model().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize;
        let _stripe = self.stripes[stripe % STRIPES].lock();
        let _gate = self.gate.read();
        let record = match value {
            Some(p) => Record::Put { key: kb, value: p },
            None => Record::Delete { key: kb },
        };
        wal.append(&[record])?;
        let v = self.current();
        let mut stage = v.dynamic.write();
        stage.apply(key, value)
    }

    /// Freezes the dynamic stage when it is full; when it is full and a merge still runs,
    /// waits for that merge (a write stall).
    fn make_room(&self) -> Result<()> {
        let mut stalled: Option<Instant> = None;
        let result = loop {
            let v = self.current();
            if !self.full(&v) {
                break Ok(());
            }
            if v.frozen.is_none() {
                match self.freeze(false) {
                    Ok(_) => continue,
                    Err(e) => break Err(e),
                }
            }
            stalled.get_or_insert_with(Instant::now);
            let mut m = self.merge.lock();
            if let Some(e) = &m.error {
                break Err(e.clone());
            }
            if self.current().frozen.is_some() {
                self.merge_cond.wait(&mut m);
            }
        };
        if let Some(t) = stalled {
            self.write_stalls.fetch_add(1, Ordering::Relaxed);
            self.stall_nanos
                .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        result
    }

    /// Makes the dynamic stage the frozen one (when it is full, or when `force` and it is not
    /// empty) and hands it to the merge thread; false when there was nothing to do (a merge
    /// already runs, or another writer froze it first).
    fn freeze(&self, force: bool) -> Result<bool> {
        let Some(wal) = &self.wal else {
            return Err(Error::ReadOnly { op: "merge" });
        };
        let _gate = self.gate.write();
        let v = self.current();
        if v.frozen.is_some() || !(self.full(&v) || (force && !v.dynamic.read().is_empty())) {
            return Ok(false);
        }
        let next = wal.rotate()?;
        let fresh = Version {
            dynamic: Arc::new(RwLock::new(Stage::new(self.options.payload_size))),
            frozen: Some(Arc::clone(&v.dynamic)),
            frozen_seq: next - 1,
            statics: Arc::clone(&v.statics),
        };
        *self.version.write() = Arc::new(fresh);
        let mut m = self.merge.lock();
        m.pending = true;
        self.merge_cond.notify_all();
        Ok(true)
    }

    fn merge_loop(&self) {
        loop {
            {
                let mut m = self.merge.lock();
                while !m.pending && !m.shutdown {
                    self.merge_cond.wait(&mut m);
                }
                if m.shutdown {
                    return;
                }
                m.pending = false;
                m.running = true;
            }
            let result = self.merge_once();
            let mut m = self.merge.lock();
            m.running = false;
            if let Err(e) = result {
                m.error.get_or_insert(e);
            }
            self.merge_cond.notify_all();
        }
    }

    /// One merge of the frozen stage (module docs of [`super`]: steps 2 to 6).
    fn merge_once(&self) -> Result<()> {
        let start = Instant::now();
        let v = self.current();
        let Some(frozen) = v.frozen.clone() else {
            return Ok(());
        };
        let ps = self.options.payload_size;
        let mut manifest = self.manifest.lock();
        let generation = manifest.1;
        let parts = {
            let f = frozen.read();
            let entries = f.entries();
            let expected = v.statics.len() + f.live();
            write_parts(
                &self.storage,
                &self.options.stage(),
                generation,
                expected,
                |out| merge_into(out, &v.statics, &f, &entries),
            )?
        };
        let static_seq = v.frozen_seq;
        let m = Manifest {
            static_files: parts.iter().map(|p| p.name.clone()).collect(),
            wal_segments: vec![WAL_DIR.to_string()],
            static_seq,
            meta: Meta::of::<K>(ps, generation + 1).encode(),
        };
        let store = manifest.0.as_mut().ok_or(Error::ReadOnly { op: "merge" })?;
        store.commit(&m)?;
        manifest.1 = generation + 1;
        drop(manifest);
        {
            let mut slot = self.version.write();
            let now = Arc::clone(&slot);
            *slot = Arc::new(Version {
                dynamic: Arc::clone(&now.dynamic),
                frozen: None,
                frozen_seq: 0,
                statics: Arc::new(StaticSet::new(parts)),
            });
        }
        for p in &v.statics.parts {
            p.retire();
        }
        drop(v);
        if let Some(wal) = &self.wal {
            wal.remove_up_to(static_seq)?;
        }
        self.merges.fetch_add(1, Ordering::Relaxed);
        self.merge_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }
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

/// Reads a dynamic stage in batches, from a start key on.
struct MemCursor<'a, K: Key, D: DynamicMap<K>> {
    stage: &'a RwLock<Stage<K, D>>,
    from: Bound<K>,
    batch: usize,
    keys: Vec<K>,
    present: Vec<bool>,
    payloads: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<'a, K: Key, D: DynamicMap<K>> MemCursor<'a, K, D> {
    fn new(stage: &'a RwLock<Stage<K, D>>, start: K, batch: usize) -> Self {
        MemCursor {
            stage,
            from: Bound::Included(start),
            batch,
            keys: Vec::new(),
            present: Vec::new(),
            payloads: Vec::new(),
            pos: 0,
            done: false,
        }
    }

    fn fill(&mut self, _ps: usize) {
        if self.pos < self.keys.len() || self.done {
            return;
        }
        self.keys.clear();
        self.present.clear();
        self.payloads.clear();
        self.pos = 0;
        self.stage.read().collect(
            self.from,
            self.batch,
            &mut self.keys,
            &mut self.present,
            &mut self.payloads,
        );
        if self.keys.len() < self.batch {
            self.done = true;
        }
        if let Some(last) = self.keys.last() {
            self.from = Bound::Excluded(*last);
        }
    }

    fn head(&self) -> Option<K> {
        self.keys.get(self.pos).copied()
    }

    fn value(&self, ps: usize) -> Option<&[u8]> {
        self.present[self.pos].then(|| &self.payloads[self.pos * ps..(self.pos + 1) * ps])
    }
}

/// Reads the static stage in batches, part after part, from a start key on.
struct StaticCursor<'a, K: Key> {
    set: &'a StaticSet<K>,
    part: usize,
    /// Where the next batch of the current part starts, and whether that key itself was
    /// already returned.
    from: Option<(K, bool)>,
    batch: usize,
    keys: Vec<K>,
    payloads: Vec<u8>,
    pos: usize,
}

impl<'a, K: Key> StaticCursor<'a, K> {
    fn new(set: &'a StaticSet<K>, start: K, batch: usize) -> Self {
        StaticCursor {
            set,
            part: set.route(&start),
            from: Some((start, false)),
            batch,
            keys: Vec::new(),
            payloads: Vec::new(),
            pos: 0,
        }
    }

    fn fill(&mut self) -> Result<()> {
        while self.pos >= self.keys.len() && self.part < self.set.parts.len() {
            self.keys.clear();
            self.payloads.clear();
            self.pos = 0;
            let (start, seen) = self.from.unwrap_or((K::MIN, false));
            let want = self.batch + usize::from(seen);
            let index = &self.set.parts[self.part].index;
            let got = index.scan(&start, want, &mut self.keys, &mut self.payloads)?;
            if seen && self.keys.first().is_some_and(|k| !start.key_lt(k)) {
                self.pos = 1;
            }
            if got < want {
                self.part += 1;
                self.from = None;
            } else if let Some(last) = self.keys.last() {
                self.from = Some((*last, true));
            }
        }
        Ok(())
    }

    fn head(&self) -> Option<K> {
        self.keys.get(self.pos).copied()
    }

    fn value(&self, ps: usize) -> &[u8] {
        &self.payloads[self.pos * ps..(self.pos + 1) * ps]
    }
}
