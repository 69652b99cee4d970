//! The open and create protocol of a store, written once for every engine: check the
//! options, read and check `STORE`, take the lock, set up the block storage, read the
//! manifest and check it is the store's own, let the engine open the files it names
//! ([`Recover::load`]), remove the engine's leftovers, replay the log after what those files
//! hold and check that it covers all of it, then let the engine build its state
//! ([`Recover::finish`]). An engine plugs in only what differs: its files, how a logged
//! record is applied, and what it builds.
//!
//! The log must cover everything after the manifest's `static_seq` (the sequence number up
//! to which the engine's files hold the records): it has at least one segment (`create`
//! starts it before the manifest exists), its first replayed record is at most
//! `static_seq + 1` and its next sequence number at least `static_seq + 1`. A log that breaks
//! that lost records, and opening fails with [`Error::Corrupt`] (or [`Error::Io`] `NotFound`
//! when the log directory is gone) rather than silently serving old data. The typed hybrid
//! index ([`crate::kv::hybrid`]) checks its log with the same two functions.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::io::{FaultPlan, Storage};
use crate::kv::flock::FileLock;
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::wal::{replay_covered, Dropped, Record, ReplayReport, Seq, Wal, WalOptions};

use super::dir::{
    check_create, check_meta, check_options, check_storage, decode_meta, encode_meta, lock,
    read_identity, remove_leftovers, storage_for, write_identity, FileIdentity, StoreMeta,
    ValueRefs, WAL_DIR,
};
use super::engine::Base;
use super::options::{CreateOptions, StoreOptions};

/// What an engine plugs into the protocol (see the module docs).
pub(crate) trait Recover: Sized {
    /// What the manifest's static files are to this engine, in errors (`tables`, `images`).
    const FILES: &'static str;
    /// True when the manifest may name more than one of them (the `lsm` engine's runs).
    const MANY_FILES: bool = false;
    /// The names of the engine's block files, when it has any: those the manifest does not
    /// name are leftovers of an interrupted merge or checkpoint, removed by a writer's open.
    const LEFTOVERS: Option<fn(&str) -> bool>;
    /// True when the engine reads nothing from a sealed log segment and holds every record of
    /// one in fsynced files of its own before it removes it (a memtable flush, a checkpoint):
    /// then under `FsyncPolicy::Never` the log seals segments without an fsync
    /// ([`WalOptions::seal_unsynced`]). False for the `log` engine, whose segments are its
    /// data.
    const SEALS_LOG_UNSYNCED: bool = false;
    /// What the log's records are replayed into.
    type Replay;

    /// Checks a new store's identity and the options it is created with for this engine,
    /// before anything is written.
    fn check_new(_identity: &CreateOptions, _options: &StoreOptions) -> Result<()> {
        Ok(())
    }

    /// Opens and checks the files `opened` names (it may raise `opened.next_generation`);
    /// returns what the log is replayed into and the sequence number the files hold up to.
    fn load(
        dir: &Path,
        options: &StoreOptions,
        opened: &mut OpenedDir,
    ) -> Result<(Self::Replay, Seq)>;

    /// Applies the logged `record` of sequence number `seq`.
    fn replay(state: &mut Self::Replay, seq: Seq, record: Record<'_>) -> Result<()>;

    /// Builds the open engine from its replayed state.
    fn finish(state: Self::Replay, recovered: Recovered) -> Result<Self>;
}

/// What the protocol hands an engine's [`Recover::finish`].
pub(crate) struct Recovered {
    /// What every engine keeps; [`Base::recovered`] stamps the open's time.
    pub(crate) base: Base,
    /// The storage of the engine's block files.
    pub(crate) storage: Arc<Storage>,
    /// The manifest, to commit to; `None` when read-only.
    pub(crate) manifest: Option<ManifestStore>,
    /// The generation the next new file gets.
    pub(crate) next_generation: u64,
    /// The sequence number of the last record in the log.
    pub(crate) last: Seq,
}

/// Creates a store of engine `E` in `dir` (missing or empty) and opens it; returns it and the
/// store's lock, held until it is dropped.
pub(crate) fn create<E: Recover>(
    dir: &Path,
    identity: &CreateOptions,
    options: &StoreOptions,
    storage: Option<Arc<Storage>>,
) -> Result<(E, FileLock)> {
    E::check_new(identity, options)?;
    let held = create_store(dir, identity, options)?;
    open(dir, options, storage, Some(held))
}

/// Opens the store of engine `E` in `dir` (see the module docs), with the lock `held` when
/// [`create`] just took it; `storage`, when given, serves the block files instead of files in
/// `dir` (benchmarks on simulated devices). Returns the engine and the store's lock.
pub(crate) fn open<E: Recover>(
    dir: &Path,
    options: &StoreOptions,
    storage: Option<Arc<Storage>>,
    held: Option<FileLock>,
) -> Result<(E, FileLock)> {
    let opened_at = Instant::now();
    let most = if E::MANY_FILES { usize::MAX } else { 1 };
    let mut opened = open_dir(dir, options, storage, (E::FILES, most), held)?;
    let (mut state, static_seq) = E::load(dir, options, &mut opened)?;
    if let (false, Some(ours)) = (options.read_only, E::LEFTOVERS) {
        remove_leftovers(dir, &opened.manifest.static_files, ours)?;
    }
    let mut recovered_records = 0u64;
    let (wal, last, dropped) = recover_log(
        dir,
        options,
        E::SEALS_LOG_UNSYNCED,
        opened.storage.faults().cloned(),
        opened.store,
        static_seq,
        |seq, record| {
            recovered_records += 1;
            E::replay(&mut state, seq, record)
        },
    )?;
    let OpenedDir {
        identity,
        store,
        lock,
        storage,
        manifest_store,
        next_generation,
        ..
    } = opened;
    let recovered = Recovered {
        base: Base {
            dir: dir.to_path_buf(),
            identity,
            store,
            options: *options,
            wal,
            dropped,
            recovered_records,
            recovery_seconds: 0.0,
            opened_at,
        },
        storage,
        manifest: (!options.read_only).then_some(manifest_store),
        next_generation,
        last,
    };
    Ok((E::finish(state, recovered)?, lock))
}

/// Lays out a new store in `dir` (missing or empty) for any engine: `STORE`, the log, then
/// a manifest that names no file yet (the log exists before the manifest, so a store with a
/// manifest always has a log). Returns the lock, which the engine's open keeps: dropped and
/// taken again, it could be refused (`Locked`) while another thread of the process forks a
/// child, which holds the lock until it execs.
fn create_store(dir: &Path, identity: &CreateOptions, options: &StoreOptions) -> Result<FileLock> {
    check_create(identity)?;
    if options.read_only {
        return Err(Error::ReadOnly {
            op: "create a store",
        });
    }
    let store = write_identity(dir, identity)?;
    let held = lock(dir, true)?;
    drop(Wal::open_with_faults(
        &dir.join(WAL_DIR),
        WalOptions::default(),
        None,
        0,
        store,
        |_, _| Ok(()),
    )?);
    ManifestStore::create(
        dir,
        &Manifest {
            meta: encode_meta(&StoreMeta {
                next_generation: 1,
                store,
                files: Vec::new(),
                value_refs: Vec::new(),
            }),
            ..Manifest::default()
        },
    )?;
    Ok(held)
}

/// What opening a store's directory finds, before the engine reads its own files.
pub(crate) struct OpenedDir {
    pub(crate) identity: CreateOptions,
    /// The store's id.
    pub(crate) store: u128,
    /// Held while the store is open.
    pub(crate) lock: FileLock,
    pub(crate) storage: Arc<Storage>,
    pub(crate) manifest_store: ManifestStore,
    pub(crate) manifest: Manifest,
    pub(crate) next_generation: u64,
    /// The one block file the manifest names (a table or an image), if it names one, and
    /// what the manifest records of it.
    pub(crate) file: Option<(String, FileIdentity)>,
    /// Every block file the manifest names, in its order, with what it records of each.
    pub(crate) files: Vec<(String, FileIdentity)>,
    /// What the manifest records of an `lsm` store's value log references.
    pub(crate) value_refs: Vec<ValueRefs>,
}

/// Opens `dir` for any engine: checks the options, reads the identity, takes the lock
/// (shared when read-only; `held` when [`create_store`] just took it), sets up the storage (`storage` when given, see
/// [`check_storage`]) and reads the manifest, which names at most `most` files, `what` to the
/// engine, and must be the store's own ([`check_meta`]).
fn open_dir(
    dir: &Path,
    options: &StoreOptions,
    storage: Option<Arc<Storage>>,
    (what, most): (&str, usize),
    held: Option<FileLock>,
) -> Result<OpenedDir> {
    check_options(options)?;
    let (identity, store) = read_identity(dir)?;
    let lock = match held {
        Some(file) => file,
        None => lock(dir, !options.read_only)?,
    };
    let storage = match storage {
        Some(s) => {
            check_storage(&s, &identity)?;
            s
        }
        None => Arc::new(storage_for(dir, &identity, options)?),
    };
    let (mut manifest_store, manifest) = ManifestStore::open(dir)?;
    manifest_store.set_faults(storage.faults().cloned());
    let name = crate::kv::manifest::manifest_path(dir, manifest_store.number())
        .display()
        .to_string();
    let meta = decode_meta(&name, &manifest.meta)?;
    check_meta(&name, &meta, store, manifest.static_files.len())?;
    if manifest.static_files.len() > most {
        return Err(Error::Corrupt {
            file: name,
            block: None,
            what: format!(
                "the manifest names {} {what}, a store has one",
                manifest.static_files.len()
            ),
        });
    }
    let files: Vec<(String, FileIdentity)> = manifest
        .static_files
        .iter()
        .cloned()
        .zip(meta.files.iter().copied())
        .collect();
    let file = match files.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    };
    Ok(OpenedDir {
        identity,
        store,
        lock,
        storage,
        manifest_store,
        manifest,
        next_generation: meta.next_generation,
        file,
        files,
        value_refs: meta.value_refs,
    })
}

/// Opens the log of the store `dir` whose id is `store` (replays it without a writer when
/// read-only; a segment of another store's log is [`Error::ForeignFile`]; its appends
/// and fsyncs under `faults`, the plan of the storage a test opened the store on), calling
/// `apply` with every record after `static_seq` (what the store's files already hold), and
/// checks that the log covers everything after it. Returns the log's writer (none when
/// read-only), the sequence number of the last record, and what the recovery mode dropped of
/// a damaged log (a read-only open changes no file: it reports what it skipped).
fn recover_log(
    dir: &Path,
    options: &StoreOptions,
    seal_unsynced: bool,
    faults: Option<Arc<FaultPlan>>,
    store: u128,
    static_seq: Seq,
    mut apply: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<(Option<Wal>, Seq, Option<Dropped>)> {
    let wal_dir = dir.join(WAL_DIR);
    require_wal(&wal_dir)?;
    let after = |seq: Seq, record: Record<'_>| {
        if seq <= static_seq {
            Ok(())
        } else {
            apply(seq, record)
        }
    };
    let (wal, report) = if options.read_only {
        let report = replay_covered(&wal_dir, options.recovery, static_seq, store, true, after)?;
        (None, report)
    } else {
        let wal_options = WalOptions {
            fsync: options.fsync,
            recovery: options.recovery,
            seal_unsynced,
        };
        let (wal, report) =
            Wal::open_with_faults(&wal_dir, wal_options, faults, static_seq, store, after)?;
        (Some(wal), report)
    };
    check_coverage(&wal_dir, &report, static_seq)?;
    Ok((wal, report.next_seq - 1, report.dropped))
}

/// [`Error::Corrupt`] unless the log directory `dir` holds at least one segment: a store's
/// log exists from its creation on, so a missing one was removed outside lidx, and with it
/// every record after the static files (damage to restore, not a path or permission to fix).
pub(crate) fn require_wal(dir: &Path) -> Result<()> {
    if wal_exists(dir)? {
        return Ok(());
    }
    Err(Error::Corrupt {
        file: dir.display().to_string(),
        block: None,
        what: "the log has no segment: it was removed outside lidx, and with it every record \
               after the tables"
            .to_string(),
    })
}

/// True when the log directory `dir` holds at least one segment.
fn wal_exists(dir: &Path) -> Result<bool> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir.display().to_string(), "open write-ahead log", &e))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(dir.display().to_string(), "list write-ahead log", &e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("wal-") && name.ends_with(".log") {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `Corrupt` unless the replayed log covers every record after `static_seq` (module docs).
pub(crate) fn check_coverage(dir: &Path, report: &ReplayReport, static_seq: Seq) -> Result<()> {
    let file = dir.display().to_string();
    if report.next_seq <= static_seq {
        return Err(Error::Corrupt {
            file,
            block: None,
            what: format!(
                "the write-ahead log ends before record {}, but the manifest says the static \
                 files hold up to record {static_seq}: log segments are missing",
                report.next_seq
            ),
        });
    }
    if report.records > 0 && report.first_seq > static_seq + 1 {
        return Err(Error::Corrupt {
            file,
            block: None,
            what: format!(
                "the write-ahead log starts at record {}, but records from {} on are not in \
                 the static files: log segments are missing",
                report.first_seq,
                static_seq + 1
            ),
        });
    }
    Ok(())
}
