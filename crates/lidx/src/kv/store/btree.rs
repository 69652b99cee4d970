//! The `btree` engine: a [`ByteBTree`] made durable through the store's write-ahead log, with
//! checkpoints; its reads, snapshots and ranges.
//!
//! A write is appended to the log, then applied to the tree (each leaf it touches read once
//! and written once, to a new block), in one order: writers take turns for both, so the log's
//! order is the tree's. Every [`StoreOptions::memory_budget`] bytes of log, and at `compact`
//! and `close`, a **checkpoint** syncs the page file, writes the tree's image
//! (`inner-<generation>.lbi`), commits the manifest naming it with the last sequence number
//! it holds, and drops the log up to there; the writer that triggers one waits for it, which
//! [`crate::kv::store::StoreStats::write_stalls`] counts. Opening reads the last image and
//! replays the log after it: the tree of the checkpoint is intact, because no block of it is
//! reused before the next checkpoint commits (see [`crate::disk::byte_btree`]).
//!
//! A crash at any step leaves a store that opens with every acknowledged write: before the
//! manifest commit, the old image and the whole log since it are still there; after it, the
//! new image holds everything the dropped log held. A new image the manifest does not name is
//! a leftover and is removed at the next open.
//!
//! Reads take the tree's lock shared; a snapshot or range holds the root it started from and
//! registers its sequence number, so the blocks it may read are not reused until it is
//! dropped.

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::disk::byte_btree::{get_in, BTreeCursor, ByteBTree, Image, Node, Op, PageIo};
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::wal::{Dropped, Record, Seq, Wal};

use super::batch::{check_sizes, decode_ops, BatchOp};
use super::dir::{
    check_file, create_store, encode_meta, identify, open_dir, recover_log, remove_leftovers,
    OpenedDir, StoreMeta, WAL_DIR,
};
use super::options::{CreateOptions, StoreOptions};
use super::view::{Entry, Readers};

/// The page file of a `btree` store.
pub(crate) const PAGES_FILE: &str = "pages.lbp";

fn image_name(g: u64) -> String {
    format!("inner-{g:010}.lbi")
}

fn is_image_name(name: &str) -> bool {
    name.starts_with("inner-") && name.ends_with(".lbi")
}

/// [`Error::ForeignFile`] unless a header slot of the page file holds exactly the stamp of
/// the store `store` and the checkpoint of generation `checkpoint` (0: none) that the
/// manifest names. A checkpoint stamps the page file's other slot with its generation before
/// it commits, and once committed (or when a writer opens) erases the older checkpoint's
/// stamp ([`ByteBTree::settle_pages`]) before any of that checkpoint's blocks can be reused:
/// so a page file that still holds the stamp has that checkpoint's blocks intact (one whose
/// next checkpoint did not commit included), and one that does not (another store's, an
/// older copy, or a later one whose checkpoints reused the blocks) is refused. A slot damaged
/// after its checkpoint committed is the slot's damage, and its error is returned. Returns
/// the highest generation the page file's slots hold (stamps that did not commit burn theirs).
pub(crate) fn check_pages(storage: &Storage, store: u128, checkpoint: u64) -> Result<u64> {
    let committed = FileOwner {
        store,
        generation: checkpoint,
    };
    let stamps = ByteBTree::pages_stamps(storage, PAGES_FILE, committed)?;
    if stamps.holds_committed {
        return Ok(stamps.highest.unwrap_or(checkpoint).max(checkpoint));
    }
    // Neither slot readable: the header's own error (damage, not another store's file).
    let owner = ByteBTree::read_pages_owner(storage, PAGES_FILE)?;
    if owner.store == store {
        ByteBTree::check_pages_slots(storage, PAGES_FILE, committed)?;
    }
    let file = storage.dir().map_or_else(
        || PAGES_FILE.to_string(),
        |d| d.join(PAGES_FILE).display().to_string(),
    );
    Err(Error::ForeignFile {
        file,
        what: format!(
            "its header says {owner}; the store is {store:032x} and its live checkpoint is \
             generation {checkpoint}, which no header slot names (another store's page \
             file, or a copy from before or after that checkpoint)"
        ),
    })
}

/// The writer's bookkeeping, behind the lock that makes writers take turns.
struct WriterState {
    next_generation: u64,
    /// The generation of the checkpoint the manifest names (0: none): its stamp stays in the
    /// page file until the next checkpoint commits.
    committed: u64,
    image: Option<String>,
    /// Log bytes appended since the last checkpoint.
    log_bytes: u64,
    /// The error that stopped writes (a write half-applied to the tree).
    failed: Option<Error>,
}

pub(crate) struct BTreeInner {
    pub(crate) dir: PathBuf,
    pub(crate) identity: CreateOptions,
    /// The store's id, written into the page file, every image and every log segment.
    store: u128,
    options: StoreOptions,
    pub(crate) storage: Arc<Storage>,
    wal: Option<Wal>,
    /// What opening cut of a damaged log.
    pub(crate) dropped: Option<Dropped>,
    tree: RwLock<ByteBTree>,
    /// The last write applied to the tree; changed under the tree's write lock.
    applied: AtomicU64,
    readers: Readers,
    manifest: Mutex<Option<ManifestStore>>,
    writer: Mutex<WriterState>,
    pub(crate) checkpoints: AtomicU64,
    pub(crate) checkpoint_nanos: AtomicU64,
    pub(crate) write_stalls: AtomicU64,
    pub(crate) stall_nanos: AtomicU64,
    pub(crate) recovered_records: u64,
    pub(crate) recovery_seconds: f64,
}

/// An open `btree` engine and its lock.
pub(crate) struct BTreeEngine {
    pub(crate) inner: Arc<BTreeInner>,
    _lock: File,
}

/// The operations of a logged record, sorted by key, the last one on a key winning.
fn record_ops<'a>(log: &str, seq: Seq, record: &Record<'a>) -> Result<Vec<Op<'a>>> {
    let bad = |e: Error| Error::Corrupt {
        file: log.to_string(),
        block: None,
        what: format!("record {seq}: {e}"),
    };
    match *record {
        Record::Put { key, value } => {
            check_sizes(key, Some(value)).map_err(bad)?;
            Ok(vec![(key, Some(value))])
        }
        Record::Delete { key } => {
            check_sizes(key, None).map_err(bad)?;
            Ok(vec![(key, None)])
        }
        Record::Batch { ops } => {
            let mut last: BTreeMap<&'a [u8], Option<&'a [u8]>> = BTreeMap::new();
            for op in decode_ops(log, ops) {
                match op? {
                    BatchOp::Put(k, v) => last.insert(k, Some(v)),
                    BatchOp::Delete(k) => last.insert(k, None),
                };
            }
            Ok(last.into_iter().collect())
        }
    }
}

impl BTreeEngine {
    /// Creates a `btree` store in `dir` (missing or empty).
    pub(crate) fn create(
        dir: &Path,
        identity: &CreateOptions,
        options: &StoreOptions,
        storage: Option<Arc<Storage>>,
    ) -> Result<BTreeEngine> {
        let held = create_store(dir, identity, options)?;
        BTreeEngine::open_dir_as(dir, options, storage, Some(held))
    }

    /// Opens the `btree` store in `dir`: the last checkpoint, then the log after it. The
    /// page file is created by the first open of a store that has never checkpointed (until
    /// then the log holds everything).
    pub(crate) fn open(
        dir: &Path,
        options: &StoreOptions,
        storage: Option<Arc<Storage>>,
    ) -> Result<BTreeEngine> {
        BTreeEngine::open_dir_as(dir, options, storage, None)
    }

    /// [`BTreeEngine::open`] with the lock `held` when the store was just created.
    fn open_dir_as(
        dir: &Path,
        options: &StoreOptions,
        storage: Option<Arc<Storage>>,
        held: Option<File>,
    ) -> Result<BTreeEngine> {
        let opened_at = Instant::now();
        let OpenedDir {
            identity,
            store: store_id,
            lock: lock_file,
            storage,
            manifest_store: store,
            manifest,
            next_generation,
            file,
        } = open_dir(dir, options, storage, "images", held)?;
        if file.is_none() && !storage.exists(PAGES_FILE) {
            if options.read_only {
                return Err(Error::ReadOnly {
                    op: "open a btree store that was never opened for writing",
                });
            }
            let owner = FileOwner {
                store: store_id,
                generation: 0,
            };
            drop(ByteBTree::create_owned(&storage, PAGES_FILE, owner)?);
        }
        let image = match &file {
            Some((name, recorded)) => {
                let image = Image::read(&storage, name)?;
                check_file(&storage, name, recorded, image.owner, store_id)?;
                Some(image)
            }
            None => None,
        };
        let checkpoint = file.as_ref().map_or(0, |(_, recorded)| recorded.generation);
        // A checkpoint that stamped the page file but did not commit used up its generation:
        // the next one takes a later one, so that no two stamps of the page file share a
        // generation (a copy of the page file taken in between would pass for the new one).
        let next_generation = next_generation.max(check_pages(&storage, store_id, checkpoint)? + 1);
        let committed = FileOwner {
            store: store_id,
            generation: checkpoint,
        };
        if !options.read_only {
            // Before the log's replay can reuse a block no longer in the checkpoint: an older
            // checkpoint's stamp left by a crash after its successor committed is erased.
            let burned = FileOwner {
                store: store_id,
                generation: next_generation - 1,
            };
            ByteBTree::settle_pages(&storage, PAGES_FILE, committed, burned)?;
        }
        let static_seq = manifest.static_seq;
        let mut tree = ByteBTree::open(&storage, PAGES_FILE, image, static_seq, options.read_only)?;
        let image_file = file.map(|(name, _)| name);
        if !options.read_only {
            remove_leftovers(dir, &manifest.static_files, is_image_name)?;
        }
        let log_name = dir.join(WAL_DIR).display().to_string();
        let mut recovered = 0u64;
        let mut log_bytes = 0u64;
        let (wal, last, dropped) = recover_log(
            dir,
            options,
            storage.faults().cloned(),
            store_id,
            static_seq,
            |seq, record| {
                recovered += 1;
                log_bytes += record.encoded_len() as u64;
                tree.apply(&record_ops(&log_name, seq, &record)?, seq)?;
                tree.reclaim(seq);
                Ok(())
            },
        )?;
        let inner = Arc::new(BTreeInner {
            dir: dir.to_path_buf(),
            identity,
            store: store_id,
            options: *options,
            storage,
            wal,
            dropped,
            tree: RwLock::new(tree),
            applied: AtomicU64::new(last),
            readers: Readers::default(),
            manifest: Mutex::new((!options.read_only).then_some(store)),
            writer: Mutex::new(WriterState {
                next_generation,
                committed: checkpoint,
                image: image_file,
                log_bytes,
                failed: None,
            }),
            checkpoints: AtomicU64::new(0),
            checkpoint_nanos: AtomicU64::new(0),
            write_stalls: AtomicU64::new(0),
            stall_nanos: AtomicU64::new(0),
            recovered_records: recovered,
            recovery_seconds: opened_at.elapsed().as_secs_f64(),
        });
        Ok(BTreeEngine {
            inner,
            _lock: lock_file,
        })
    }

    /// Checkpoints what the log holds (so the next open replays nothing) and syncs the log.
    pub(crate) fn close(self) -> Result<()> {
        if let Some(wal) = &self.inner.wal {
            let mut st = self.inner.writer.lock();
            if st.log_bytes > 0 && st.failed.is_none() {
                self.inner.checkpoint(&mut st)?;
            }
            wal.sync()?;
        }
        Ok(())
    }
}

impl BTreeInner {
    fn wal(&self) -> Result<&Wal> {
        self.wal.as_ref().ok_or(Error::ReadOnly { op: "write" })
    }

    pub(crate) fn wal_handle(&self) -> Option<&Wal> {
        self.wal.as_ref()
    }

    /// The value of `key` now.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.tree.read().get(key)
    }

    /// Logs `record` and applies it to the tree.
    pub(crate) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.wal()?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        let seq = wal.append(&[record])?;
        let ops = record_ops("write", seq, &record)?;
        {
            let mut tree = self.tree.write();
            if let Err(e) = tree.apply(&ops, seq) {
                // Part of the write may be in the tree: no later write may build on it. The
                // log has all of it; reopening the store recovers it.
                st.failed = Some(e.clone());
                return Err(e);
            }
            self.applied.store(seq, Ordering::Release);
            let readers = self.readers.oldest(seq);
            tree.reclaim(readers);
        }
        st.log_bytes += record.encoded_len() as u64;
        if st.log_bytes >= self.options.memory_budget as u64 {
            let start = Instant::now();
            self.checkpoint(&mut st)?;
            self.write_stalls.fetch_add(1, Ordering::Relaxed);
            self.stall_nanos
                .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Checkpoints the tree now (see the module docs); `compact`.
    pub(crate) fn compact(&self) -> Result<()> {
        self.wal()?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        self.checkpoint(&mut st)
    }

    fn checkpoint(&self, st: &mut WriterState) -> Result<()> {
        let start = Instant::now();
        let wal = self.wal()?;
        // The generation is taken before anything is written: a checkpoint that fails after
        // its manifest went live (a failed directory fsync) must not have the next one rewrite
        // the image that manifest names.
        let generation = st.next_generation;
        st.next_generation = generation + 1;
        let owner = FileOwner {
            store: self.store,
            generation,
        };
        let (mut image, seq) = {
            let mut tree = self.tree.write();
            tree.sync()?;
            // Stamped before the commit: a page file whose generation is below the live
            // checkpoint's is an older copy (see `check_pages`).
            let committed = FileOwner {
                store: self.store,
                generation: st.committed,
            };
            tree.stamp_pages(owner, committed)?;
            (tree.image(), self.applied.load(Ordering::Acquire))
        };
        image.owner = owner;
        let name = image_name(generation);
        image.write(&self.storage, &name)?;
        let identity = identify(&self.storage, &name, generation)?;
        wal.rotate()?;
        {
            let mut manifest = self.manifest.lock();
            let store = manifest
                .as_mut()
                .ok_or(Error::ReadOnly { op: "checkpoint" })?;
            store.commit(&Manifest {
                static_files: vec![name.clone()],
                wal_segments: Vec::new(),
                static_seq: seq,
                meta: encode_meta(&StoreMeta {
                    next_generation: generation + 1,
                    store: self.store,
                    files: vec![identity],
                }),
            })?;
        }
        st.committed = generation;
        {
            let mut tree = self.tree.write();
            // The previous checkpoint's stamp is erased before its blocks can be reused.
            tree.settle(owner, owner)?;
            tree.checkpointed(seq);
            let readers = self.readers.oldest(seq);
            tree.reclaim(readers);
        }
        st.log_bytes = 0;
        if let Some(old) = st.image.replace(name) {
            self.storage.remove(&old)?;
        }
        wal.remove_up_to(seq)?;
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.checkpoint_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// A view of the tree as it is now, registered as a snapshot until dropped.
    pub(crate) fn snapshot(self: &Arc<Self>) -> BTreeSnapshot {
        let tree = self.tree.read();
        let seq = self.applied.load(Ordering::Acquire);
        self.readers.retain(seq);
        BTreeSnapshot {
            inner: Arc::clone(self),
            io: tree.io().clone(),
            root: tree.root(),
            seq,
        }
    }

    /// Records, key bytes, value bytes, inner-node memory, page file and image bytes, free
    /// bytes of the page file.
    pub(crate) fn tree_figures(&self) -> (u64, u64, u64, usize, u64, u64) {
        let tree = self.tree.read();
        let image = self
            .writer
            .lock()
            .image
            .as_deref()
            .map_or(0, |n| self.storage.file_bytes(n));
        (
            tree.len(),
            tree.key_bytes(),
            tree.value_bytes(),
            tree.memory_bytes(),
            tree.disk_bytes() + image,
            tree.free_blocks() * self.storage.block_size() as u64,
        )
    }
}

/// A `btree` engine's read view: the root of the tree when it was taken, and its sequence
/// number (registered, so the blocks it reads stay).
pub(crate) struct BTreeSnapshot {
    inner: Arc<BTreeInner>,
    io: PageIo,
    root: Arc<Node>,
    pub(crate) seq: Seq,
}

impl BTreeSnapshot {
    /// The value of `key` in the view.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(&self.io, &self.root, key)
    }

    /// The entries within `bounds`, ascending when `forward`.
    pub(crate) fn range<'k>(
        &self,
        bounds: impl RangeBounds<&'k [u8]>,
        forward: bool,
    ) -> BTreeRange {
        let owned = |b: Bound<&&[u8]>| match b {
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let (start, end) = (owned(bounds.start_bound()), owned(bounds.end_bound()));
        let empty = match (&start, &end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
            _ => false,
        };
        self.inner.readers.retain(self.seq);
        BTreeRange {
            inner: Arc::clone(&self.inner),
            seq: self.seq,
            cursor: (!empty).then(|| {
                BTreeCursor::new(self.io.clone(), Arc::clone(&self.root), start, end, forward)
            }),
        }
    }
}

impl Drop for BTreeSnapshot {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}

/// A range of a `btree` engine's entries, from one snapshot.
pub(crate) struct BTreeRange {
    inner: Arc<BTreeInner>,
    seq: Seq,
    cursor: Option<BTreeCursor>,
}

impl BTreeRange {
    /// The next entry, `None` after the last.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        match &mut self.cursor {
            Some(c) => c.next_record(),
            None => Ok(None),
        }
    }
}

impl Drop for BTreeRange {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}
