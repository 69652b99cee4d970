//! Opening a hybrid index: creating one from sorted records, or reopening one (manifest,
//! static files, leftover removal, log replay), and assembling the running index.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::disk::hybrid::dynamic::{DynamicMap, Stage};
use crate::disk::hybrid::merge::write_parts;
use crate::disk::hybrid::static_set::{is_static_file, AnyStatic, StaticPart, StaticSet};
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::{check_strictly_sorted, Key};
use crate::kv::hybrid::options::HybridOptions;
use crate::kv::hybrid::recovery::{decode_meta, Meta};
use crate::kv::store::{check_coverage, require_wal};
use crate::kv::wal::{replay_covered, Record, Seq, Wal};
use crate::kv::{Manifest, ManifestStore};

use super::state::{dir_of, HybridIndex, Inner, MergeState, Version, STRIPES, WAL_DIR};

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
    /// replayed into the dynamic stage (see `crate::kv::hybrid::recovery`).
    pub fn open(storage: Arc<Storage>, options: HybridOptions) -> Result<Self> {
        Self::open_with(storage, options, false)
    }

    /// Opens the index for reading only: `put` and `delete` return `Error::ReadOnly`, no merge
    /// runs, and nothing in the directory changes: what the recovery mode would cut of a
    /// damaged log is skipped (the log's read-only replay).
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
            let index = AnyStatic::open(&storage, name, Some(options.fetch))?;
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
        require_wal(&wal_dir)?;
        let ps = options.payload_size;
        let mut stage = Stage::<K, D>::new(ps);
        let static_seq = manifest.static_seq;
        let apply = |seq: Seq, record: Record<'_>| -> Result<()> {
            if seq <= static_seq {
                return Ok(());
            }
            if let Record::Batch { .. } = record {
                return Err(Error::Corrupt {
                    file: wal_dir.display().to_string(),
                    block: None,
                    what: format!(
                        "record {seq} is a batch, which only a kv::Store writes: this log is a \
                         store's, not a hybrid index's"
                    ),
                });
            }
            let key = record.key_as::<K>()?;
            let Record::Put { value, .. } = record else {
                return stage.apply(key, None);
            };
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
        };
        let (wal, report) = if read_only {
            let recovery = options.wal.recovery;
            (
                None,
                replay_covered(&wal_dir, recovery, static_seq, 0, true, apply)?,
            )
        } else {
            let (wal, report) =
                Wal::open_with_faults(&wal_dir, options.wal, None, static_seq, 0, apply)?;
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
