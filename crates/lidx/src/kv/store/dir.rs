//! A store's directory: its `STORE` identity file, checked on every open, and its `LOCK` file,
//! which keeps a second writer out.
//!
//! `STORE` layout (little-endian): magic `lidxSTOR` (8), format version (4), engine (4), block
//! size (4), model eps (4), model threshold (4), key format (4), length `n` of the engine's spec
//! (4), crc32c of bytes 0..36 and of the spec (4), then the spec: `n` bytes of text. Version 1
//! (`hybrid`, `btree`) has no spec (`n` = 0, 40 bytes); version 2 is a `log` store, whose spec
//! is its map's label (`alex:...`, see [`crate::mem::MapSpec`]; `trie:alex:...` for a store
//! of byte keys, [`super::LogSpec`]), so that reopening it builds the same map. A build
//! before `log:trie` existed refuses such a store as damaged (the map `trie:...` is not one
//! it has) rather than as a newer format: the version stayed 2. A version-1 build refuses a version-2 store as a newer format.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::mem::string_index::StringIndexParams;

use std::sync::Arc;

use crate::io::{DeviceKind, FaultPlan, Storage};
use crate::kv::hybrid::recovery::{check_coverage, require_wal};
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::wal::{replay_covered, Dropped, Record, Seq, Wal, WalOptions};

use super::options::{
    CreateOptions, Engine, KeyFormat, LogSpec, StoreOptions, MAX_MEMORY_BUDGET, MIN_MEMORY_BUDGET,
};

/// Magic number of a store's `STORE` file: `lidxSTOR`.
pub const STORE_MAGIC: u64 = u64::from_le_bytes(*b"lidxSTOR");
/// Newest format version of stores this build reads and writes (1 without an engine spec, 2
/// with one).
pub const STORE_VERSION: u32 = 2;
/// Name of the identity file.
pub const STORE_FILE: &str = "STORE";
/// Name of the lock file.
pub const LOCK_FILE: &str = "LOCK";
const STORE_BYTES: usize = 40;

fn shown(dir: &Path) -> String {
    dir.display().to_string()
}

/// Encodes the identity of a store created with `options`.
pub(crate) fn encode_identity(options: &CreateOptions) -> Vec<u8> {
    let spec = match options.engine {
        Engine::Log(log) => log.label(),
        _ => String::new(),
    };
    let mut b = vec![0u8; STORE_BYTES];
    b[0..8].copy_from_slice(&STORE_MAGIC.to_le_bytes());
    let fields = [
        if spec.is_empty() { 1 } else { 2 },
        options.engine.code(),
        options.block_size as u32,
        options.model.eps as u32,
        options.model.threshold as u32,
        options.key_format.code(),
        spec.len() as u32,
    ];
    for (i, f) in fields.iter().enumerate() {
        b[8 + 4 * i..12 + 4 * i].copy_from_slice(&f.to_le_bytes());
    }
    b.extend_from_slice(spec.as_bytes());
    let crc = identity_crc(&b);
    b[36..40].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The checksum of a `STORE` file's bytes: the fixed part before it, then the spec after it.
fn identity_crc(b: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&b[..36]), &b[STORE_BYTES..])
}

/// Decodes a `STORE` file's bytes; `file` names it in errors. Never panics.
pub fn decode_identity(file: &str, b: &[u8]) -> Result<CreateOptions> {
    if b.len() < 12 {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("{} bytes, {STORE_BYTES} expected", b.len()),
        });
    }
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]));
    let magic = u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8]));
    if magic != STORE_MAGIC {
        return Err(Error::BadMagic {
            file: file.to_string(),
            expected: STORE_MAGIC,
            got: magic,
        });
    }
    let version = u32_at(8);
    if !(1..=STORE_VERSION).contains(&version) {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: version,
            supported: STORE_VERSION,
        });
    }
    let spec_len = if b.len() >= STORE_BYTES {
        u32_at(32) as usize
    } else {
        0
    };
    if b.len() < STORE_BYTES || b.len() - STORE_BYTES != spec_len {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("{} bytes, {} expected", b.len(), STORE_BYTES + spec_len),
        });
    }
    let crc = identity_crc(b);
    if crc != u32_at(36) {
        return Err(Error::Corrupt {
            file: file.to_string(),
            block: None,
            what: format!("checksum {crc:#010x}, written as {:#010x}", u32_at(36)),
        });
    }
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    };
    let spec = std::str::from_utf8(&b[STORE_BYTES..])
        .map_err(|_| bad("the engine's spec is not text".to_string()))?;
    let engine = match (u32_at(12), version) {
        (1, 1) => Engine::Hybrid,
        (2, 1) => Engine::BTree,
        (3, 2) => Engine::Log(LogSpec::parse(spec).ok_or_else(|| {
            bad(format!(
                "the log engine's map `{spec}` is not one this build has"
            ))
        })?),
        (code, _) => {
            return Err(bad(format!(
                "unknown engine {code} in a version {version} file"
            )))
        }
    };
    let key_format = KeyFormat::from_code(u32_at(28))
        .ok_or_else(|| bad(format!("unknown key format {}", u32_at(28))))?;
    let options = CreateOptions {
        engine,
        block_size: u32_at(16) as usize,
        model: StringIndexParams {
            eps: u32_at(20) as usize,
            threshold: u32_at(24) as usize,
        },
        key_format,
    };
    check_create(&options).map_err(|e| bad(e.to_string()))?;
    Ok(options)
}

/// Checks options for a new store.
pub(crate) fn check_create(options: &CreateOptions) -> Result<()> {
    let bs = options.block_size;
    if bs == 0 || !bs.is_multiple_of(4096) || bs > 1 << 16 {
        return Err(Error::InvalidParameter {
            name: "block size",
            value: bs.to_string(),
            expected: "a multiple of 4096 up to 65536",
        });
    }
    if options.model.eps == 0 || options.model.threshold == 0 {
        return Err(Error::InvalidParameter {
            name: "model",
            value: format!("{:?}", options.model),
            expected: "eps and threshold of at least 1",
        });
    }
    Ok(())
}

/// Reads and checks `dir`'s identity: [`Error::NotAStore`] when the directory or its `STORE`
/// file is missing.
pub(crate) fn read_identity(dir: &Path) -> Result<CreateOptions> {
    if !dir.is_dir() {
        return Err(Error::NotAStore {
            dir: shown(dir),
            what: if dir.exists() {
                "it is a file, not a directory".into()
            } else {
                "no such directory".into()
            },
        });
    }
    let path = dir.join(STORE_FILE);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(Error::NotAStore {
                dir: shown(dir),
                what: format!("it has no {STORE_FILE} file"),
            })
        }
        Err(e) => return Err(Error::io(path.display().to_string(), "read", &e)),
    };
    decode_identity(&path.display().to_string(), &bytes)
}

/// Makes `dir` a new store's directory: it must not exist or be empty. Writes `STORE`
/// durably.
pub(crate) fn write_identity(dir: &Path, options: &CreateOptions) -> Result<()> {
    let io = |what: &str, e: std::io::Error| Error::io(shown(dir), what, &e);
    if dir.exists() {
        if dir.join(STORE_FILE).exists() {
            return Err(Error::InvalidParameter {
                name: "directory",
                value: shown(dir),
                expected: "a directory that is not a store yet (open it instead)",
            });
        }
        let mut entries = fs::read_dir(dir).map_err(|e| io("read directory", e))?;
        if entries.next().is_some() {
            return Err(Error::NotAStore {
                dir: shown(dir),
                what: "it holds other files; a new store needs an empty or missing directory"
                    .into(),
            });
        }
    }
    fs::create_dir_all(dir).map_err(|e| io("create directory", e))?;
    let tmp = dir.join("STORE.tmp");
    let mut f = File::create(&tmp).map_err(|e| io("create STORE.tmp", e))?;
    f.write_all(&encode_identity(options))
        .and_then(|()| f.sync_all())
        .map_err(|e| io("write STORE.tmp", e))?;
    fs::rename(&tmp, dir.join(STORE_FILE)).map_err(|e| io("rename STORE.tmp", e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io("sync directory", e))
}

/// Takes the store's lock: exclusive for a writer, shared for a reader. The lock is held
/// while the returned file is open; another holder makes this [`Error::Locked`].
pub(crate) fn lock(dir: &Path, exclusive: bool) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::io(path.display().to_string(), "open lock file", &e))?;
    let got = if exclusive {
        file.try_lock()
    } else {
        file.try_lock_shared()
    };
    match got {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(Error::Locked { dir: shown(dir) }),
        Err(fs::TryLockError::Error(e)) => Err(Error::io(path.display().to_string(), "lock", &e)),
    }
}

/// Name of the log directory inside a store.
pub(crate) const WAL_DIR: &str = "wal";

/// The storage of a store's table files: files in `dir`, cached as the options say.
pub(crate) fn storage_for(
    dir: &Path,
    identity: &CreateOptions,
    options: &StoreOptions,
) -> Result<Storage> {
    let kind = DeviceKind::File {
        direct: options.direct_io,
    };
    Ok(Storage::new(dir, kind, identity.block_size)?
        .with_cache_blocks(options.cache_bytes / identity.block_size))
}

/// Checks that a storage given for a store has the store's block size.
pub(crate) fn check_storage(storage: &Storage, identity: &CreateOptions) -> Result<()> {
    if storage.block_size() != identity.block_size {
        return Err(Error::InvalidParameter {
            name: "storage block size",
            value: storage.block_size().to_string(),
            expected: "the store's block size",
        });
    }
    Ok(())
}

/// The manifest's meta of a store: the next file generation.
pub(crate) fn encode_meta(next_generation: u64) -> Vec<u8> {
    next_generation.to_le_bytes().to_vec()
}

/// Reads [`encode_meta`]'s bytes.
pub(crate) fn decode_meta(file: &str, meta: &[u8]) -> Result<u64> {
    let b: [u8; 8] = meta.try_into().map_err(|_| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: format!("store meta of {} bytes, 8 expected", meta.len()),
    })?;
    Ok(u64::from_le_bytes(b))
}

/// Checks the options of an open.
pub(crate) fn check_options(options: &StoreOptions) -> Result<()> {
    if !(MIN_MEMORY_BUDGET..=MAX_MEMORY_BUDGET).contains(&options.memory_budget) {
        return Err(Error::InvalidParameter {
            name: "memory budget",
            value: options.memory_budget.to_string(),
            expected: "from 4096 bytes to 256 GiB",
        });
    }
    if let Some(r) = options.merge_ratio.filter(|r| r.is_nan() || *r < 1.0) {
        return Err(Error::InvalidParameter {
            name: "merge ratio",
            value: r.to_string(),
            expected: "a number of at least 1",
        });
    }
    Ok(())
}

/// Removes the engine's files (`ours`) the manifest does not name: leftovers of an
/// interrupted merge or checkpoint.
pub(crate) fn remove_leftovers(
    dir: &Path,
    live: &[String],
    ours: impl Fn(&str) -> bool,
) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if ours(&name) && !live.contains(&name) {
            std::fs::remove_file(entry.path())
                .map_err(|e| Error::io(entry.path().display().to_string(), "remove", &e))?;
        }
    }
    Ok(())
}

/// Lays out a new store in `dir` (missing or empty) for either engine: `STORE`, the log, then
/// a manifest that names no file yet (the log exists before the manifest, so a store with a
/// manifest always has a log). Returns the lock, which the engine's open keeps: dropped and
/// taken again, it could be refused (`Locked`) while another thread of the process forks a
/// child, which holds the lock until it execs.
pub(crate) fn create_store(
    dir: &Path,
    identity: &CreateOptions,
    options: &StoreOptions,
) -> Result<File> {
    check_create(identity)?;
    if options.read_only {
        return Err(Error::ReadOnly {
            op: "create a store",
        });
    }
    write_identity(dir, identity)?;
    let held = lock(dir, true)?;
    drop(Wal::open(
        &dir.join(WAL_DIR),
        WalOptions::default(),
        |_, _| Ok(()),
    )?);
    ManifestStore::create(
        dir,
        &Manifest {
            meta: encode_meta(1),
            ..Manifest::default()
        },
    )?;
    Ok(held)
}

/// What opening a store's directory finds, before the engine reads its own files.
pub(crate) struct OpenedDir {
    pub(crate) identity: CreateOptions,
    /// Held while the store is open.
    pub(crate) lock: File,
    pub(crate) storage: Arc<Storage>,
    pub(crate) manifest_store: ManifestStore,
    pub(crate) manifest: Manifest,
    pub(crate) next_generation: u64,
    /// The one block file the manifest names (a table or an image), if any.
    pub(crate) file: Option<String>,
}

/// Opens `dir` for either engine: checks the options, reads the identity, takes the lock
/// (shared when read-only; `held` when [`create_store`] just took it), sets up the storage (`storage` when given, see
/// [`check_storage`]) and reads the manifest, which names at most one `what` file.
pub(crate) fn open_dir(
    dir: &Path,
    options: &StoreOptions,
    storage: Option<Arc<Storage>>,
    what: &str,
    held: Option<File>,
) -> Result<OpenedDir> {
    check_options(options)?;
    let identity = read_identity(dir)?;
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
    let name = shown(dir);
    let next_generation = decode_meta(&name, &manifest.meta)?;
    let file = match manifest.static_files.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        more => {
            return Err(Error::Corrupt {
                file: name,
                block: None,
                what: format!("the manifest names {} {what}, a store has one", more.len()),
            })
        }
    };
    Ok(OpenedDir {
        identity,
        lock,
        storage,
        manifest_store,
        manifest,
        next_generation,
        file,
    })
}

/// Opens the log of the store `dir` (replays it without a writer when read-only; its appends
/// and fsyncs under `faults`, the plan of the storage a test opened the store on), calling
/// `apply` with every record after `static_seq` (what the store's files already hold), and
/// checks that the log covers everything after it. Returns the log's writer (none when
/// read-only), the sequence number of the last record, and what the recovery mode dropped of
/// a damaged log (a read-only open changes no file: it reports what it skipped).
pub(crate) fn recover_log(
    dir: &Path,
    options: &StoreOptions,
    faults: Option<Arc<FaultPlan>>,
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
        let report = replay_covered(&wal_dir, options.recovery, static_seq, true, after)?;
        (None, report)
    } else {
        let wal_options = WalOptions {
            fsync: options.fsync,
            recovery: options.recovery,
        };
        let (wal, report) =
            Wal::open_with_faults(&wal_dir, wal_options, faults, static_seq, after)?;
        (Some(wal), report)
    };
    check_coverage(&wal_dir, &report, static_seq)?;
    Ok((wal, report.next_seq - 1, report.dropped))
}

/// Bytes of the log's segments in the store `dir`.
pub(crate) fn log_bytes(dir: &Path) -> u64 {
    crate::kv::wal::list_segments(&dir.join(WAL_DIR))
        .map(|s| {
            s.iter()
                .map(|(_, p)| std::fs::metadata(p).map_or(0, |m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::options::LogKeys;
    use super::*;

    #[test]
    fn identity_round_trips_and_refuses_damage() {
        let o = CreateOptions::default();
        let b = encode_identity(&o);
        assert_eq!(decode_identity("STORE", &b).unwrap(), o);
        let mut flipped = b.clone();
        flipped[17] ^= 1;
        assert!(matches!(
            decode_identity("STORE", &flipped),
            Err(Error::Corrupt { .. })
        ));
        let mut newer = b.clone();
        newer[8] = 3;
        assert!(matches!(
            decode_identity("STORE", &newer),
            Err(Error::UnsupportedVersion { got: 3, .. })
        ));
        let log = CreateOptions {
            engine: Engine::Log(LogSpec::parse("btree:leaf=32").unwrap()),
            ..CreateOptions::default()
        };
        let b2 = encode_identity(&log);
        assert_eq!(decode_identity("STORE", &b2).unwrap(), log);
        let trie = CreateOptions {
            engine: Engine::parse("log:trie:alex").unwrap(),
            ..CreateOptions::default()
        };
        assert!(matches!(
            trie.engine,
            Engine::Log(LogSpec {
                keys: LogKeys::Bytes,
                ..
            })
        ));
        assert_eq!(
            decode_identity("STORE", &encode_identity(&trie)).unwrap(),
            trie
        );
        let mut flipped = b2.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(matches!(
            decode_identity("STORE", &flipped),
            Err(Error::Corrupt { .. })
        ));
        assert!(matches!(
            decode_identity("STORE", &b2[..b2.len() - 1]),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            decode_identity("STORE", &b[..20]),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            decode_identity("STORE", b"not a store at all"),
            Err(Error::BadMagic { .. })
        ));
    }

    #[test]
    fn a_second_writer_is_locked_out() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path(), true).unwrap();
        assert!(matches!(lock(dir.path(), true), Err(Error::Locked { .. })));
        assert!(matches!(lock(dir.path(), false), Err(Error::Locked { .. })));
        drop(first);
        let r1 = lock(dir.path(), false).unwrap();
        let _r2 = lock(dir.path(), false).unwrap();
        assert!(matches!(lock(dir.path(), true), Err(Error::Locked { .. })));
        drop(r1);
    }
}
