//! The `btree` engine: a [`ByteBTree`] made durable through the store's write-ahead log, with
//! checkpoints. Its snapshots and ranges are in `read`.
//!
//! A write is appended to the log, then applied to the tree (each leaf it touches read once
//! and written once, to a new block), in one order: writers take turns for both, so the log's
//! order is the tree's. Every [`StoreOptions::memory_budget`] bytes of log, and at `compact`
//! and `close`, a **checkpoint** syncs the page file, writes the tree's image
//! (`inner-<generation>.lbi`), commits the manifest naming it with the last sequence number
//! it holds, and drops the log up to there; the writer that triggers one waits for it, which
//! [`crate::kv::StoreStats::write_stalls`] counts. Opening reads the last image and
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
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::disk::byte_btree::{ByteBTree, Image, Op};
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::store::batch::{check_sizes, decode_ops, BatchOp};
use crate::kv::store::dir::{check_file, encode_meta, identify, StoreMeta, WAL_DIR};
use crate::kv::store::engine::Base;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::StoreOptions;
use crate::kv::store::readers::Readers;
use crate::kv::store::stats::Work;
use crate::kv::wal::{Record, Seq, Wal};

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
pub(super) struct WriterState {
    next_generation: u64,
    /// The generation of the checkpoint the manifest names (0: none): its stamp stays in the
    /// page file until the next checkpoint commits.
    committed: u64,
    image: Option<String>,
    /// Log bytes appended since the last checkpoint.
    pub(super) log_bytes: u64,
    /// The error that stopped writes (a write half-applied to the tree).
    pub(super) failed: Option<Error>,
}

pub(crate) struct BTreeInner {
    /// Directory, identity, options, log; the store's id is written into the page file and
    /// every image.
    pub(super) base: Base,
    pub(super) storage: Arc<Storage>,
    pub(crate) tree: RwLock<ByteBTree>,
    /// The last write applied to the tree; changed under the tree's write lock.
    pub(crate) applied: AtomicU64,
    pub(crate) readers: Readers,
    manifest: Mutex<Option<ManifestStore>>,
    pub(super) writer: Mutex<WriterState>,
    /// Checkpoints, and writes that waited for one.
    pub(super) work: Work,
}

/// An open `btree` engine.
pub(crate) struct BTreeEngine {
    pub(super) inner: Arc<BTreeInner>,
}

/// What the `btree` engine's log is replayed into: the tree of the last checkpoint.
pub(crate) struct Replay {
    tree: ByteBTree,
    /// The checkpoint's generation (0: none) and its image's name.
    checkpoint: u64,
    image: Option<String>,
    /// Log bytes replayed: the log since the checkpoint.
    log_bytes: u64,
    log_name: String,
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

impl Recover for BTreeEngine {
    const FILES: &'static str = "images";
    const LEFTOVERS: Option<fn(&str) -> bool> = Some(is_image_name);
    const SEALS_LOG_UNSYNCED: bool = true;
    type Replay = Replay;

    /// The last checkpoint: its image and the page file. The page file is created by the
    /// first open of a store that has never checkpointed (until then the log holds
    /// everything).
    fn load(dir: &Path, options: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        let (storage, store_id) = (&opened.storage, opened.store);
        if opened.file.is_none() && !storage.exists(PAGES_FILE) {
            if options.read_only {
                return Err(Error::ReadOnly {
                    op: "open a btree store that was never opened for writing",
                });
            }
            let owner = FileOwner {
                store: store_id,
                generation: 0,
            };
            drop(ByteBTree::create_owned(storage, PAGES_FILE, owner)?);
        }
        let image = match &opened.file {
            Some((name, recorded)) => {
                let image = Image::read(storage, name)?;
                check_file(storage, name, recorded, image.owner, store_id)?;
                Some(image)
            }
            None => None,
        };
        let checkpoint = opened
            .file
            .as_ref()
            .map_or(0, |(_, recorded)| recorded.generation);
        // A checkpoint that stamped the page file but did not commit used up its generation:
        // the next one takes a later one, so that no two stamps of the page file share a
        // generation (a copy of the page file taken in between would pass for the new one).
        let next_generation = opened
            .next_generation
            .max(check_pages(storage, store_id, checkpoint)? + 1);
        opened.next_generation = next_generation;
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
            ByteBTree::settle_pages(storage, PAGES_FILE, committed, burned)?;
        }
        let static_seq = opened.manifest.static_seq;
        let tree = ByteBTree::open(storage, PAGES_FILE, image, static_seq, options.read_only)?;
        let replay = Replay {
            tree,
            checkpoint,
            image: opened.file.as_ref().map(|(name, _)| name.clone()),
            log_bytes: 0,
            log_name: dir.join(WAL_DIR).display().to_string(),
        };
        Ok((replay, static_seq))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        state.log_bytes += record.encoded_len() as u64;
        state
            .tree
            .apply(&record_ops(&state.log_name, seq, &record)?, seq)?;
        state.tree.reclaim(seq);
        Ok(())
    }

    fn finish(state: Replay, r: Recovered) -> Result<BTreeEngine> {
        let inner = Arc::new(BTreeInner {
            storage: r.storage,
            tree: RwLock::new(state.tree),
            applied: AtomicU64::new(r.last),
            readers: Readers::default(),
            manifest: Mutex::new(r.manifest),
            writer: Mutex::new(WriterState {
                next_generation: r.next_generation,
                committed: state.checkpoint,
                image: state.image,
                log_bytes: state.log_bytes,
                failed: None,
            }),
            work: Work::default(),
            base: r.base.recovered(),
        });
        Ok(BTreeEngine { inner })
    }
}

impl BTreeInner {
    fn wal(&self) -> Result<&Wal> {
        self.base.wal()
    }

    /// Logs `record` and applies it to the tree.
    pub(super) fn write(&self, record: Record<'_>) -> Result<()> {
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
        if st.log_bytes >= self.base.options.memory_budget as u64 {
            let start = Instant::now();
            self.checkpoint(&mut st)?;
            self.work.stalled(start);
        }
        Ok(())
    }

    /// Checkpoints the tree now (see the module docs); `compact`.
    pub(super) fn compact(&self) -> Result<()> {
        self.wal()?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        self.checkpoint(&mut st)
    }

    pub(super) fn checkpoint(&self, st: &mut WriterState) -> Result<()> {
        let start = Instant::now();
        let wal = self.wal()?;
        // The generation is taken before anything is written: a checkpoint that fails after
        // its manifest went live (a failed directory fsync) must not have the next one rewrite
        // the image that manifest names.
        let generation = st.next_generation;
        st.next_generation = generation + 1;
        let owner = FileOwner {
            store: self.base.store,
            generation,
        };
        let (mut image, seq) = {
            let mut tree = self.tree.write();
            tree.sync()?;
            // Stamped before the commit: a page file whose generation is below the live
            // checkpoint's is an older copy (see `check_pages`).
            let committed = FileOwner {
                store: self.base.store,
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
                    store: self.base.store,
                    files: vec![identity],
                    value_refs: Vec::new(),
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
        self.work.done(start);
        Ok(())
    }

    /// Records, key bytes, value bytes, inner-node memory, page file and image bytes, free
    /// bytes of the page file.
    pub(super) fn tree_figures(&self) -> (u64, u64, u64, usize, u64, u64) {
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
