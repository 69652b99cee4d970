//! A store's directory: its `STORE` identity file, checked on every open, its `LOCK` file,
//! which keeps a second writer out, and the identities of its files that the manifest records.
//!
//! `STORE` layout (little-endian), version 3:
//!
//! | offset | size | field                                                        |
//! |--------|------|--------------------------------------------------------------|
//! | 0      | 8    | magic `lidxSTOR`                                             |
//! | 8      | 4    | format version (3)                                           |
//! | 12     | 4    | engine (1 hybrid, 2 btree, 3 log)                            |
//! | 16     | 4    | block size                                                   |
//! | 20     | 4    | model eps                                                    |
//! | 24     | 4    | model threshold                                              |
//! | 28     | 4    | key format                                                   |
//! | 32     | 4    | length `n` of the engine's spec                              |
//! | 36     | 4    | crc32c of bytes 0..36, then of bytes 40..56 + n              |
//! | 40     | 16   | store id: random, made at `create`                           |
//! | 56     | n    | the engine's spec (text; empty but for `log` and `lsm` stores) |
//!
//! A `log` store's spec is its map's label (`alex:...`, see [`crate::mem::MapSpec`];
//! `trie:alex:...` for a store of byte keys, [`super::LogSpec`]), so that reopening it builds
//! the same map; an `lsm` store's is its shape's (`lsm:ratio=10:l0=4:bits=10`, `:runs=K` after it when tiered,
//! [`super::LsmSpec`]). The store id (issue 30, class 4) is written into every file the store owns:
//! its tables and checkpoint images with their generation, its page file, its log's segments,
//! and the manifest's `meta`; a file of another store, or an older generation of its own, is
//! refused by name ([`Error::ForeignFile`]). Versions 1 and 2 (before the id) are refused with
//! [`Error::UnsupportedVersion`], whose message says how to move the records to a new store:
//! their files carry no owner to check, and reading them as owned by anyone would bring back
//! the silent wrong answers the id is there to stop.
//!
//! The manifest's `meta` of a store (version 2, little-endian):
//!
//! | offset      | size | field                                                   |
//! |-------------|------|---------------------------------------------------------|
//! | 0           | 8    | next file generation                                    |
//! | 8           | 16   | store id (as in `STORE`)                                |
//! | 24          | 4    | count `k` of file identities                            |
//! | 28 + 20 i   | 8    | identity `i`: the file's generation                     |
//! | 36 + 20 i   | 8    | its size in bytes                                       |
//! | 44 + 20 i   | 4    | crc32c of its block 0 as on disk (header and trailer)   |
//!
//! Identity `i` is that of the manifest's static file `i` (a table, or a checkpoint image).
//! A `btree` store's page file changes between checkpoints, so it is bound by its header
//! instead: its owner's store id, and a generation that is at least the checkpoint's (a
//! checkpoint stamps the page file before it commits: see `btree/engine.rs`).
//!
//! The `LOCK` file: a writer takes an exclusive `flock`, a reader a shared one. A read-only
//! open opens `LOCK` for reading only (a shared `flock` needs no write access), so a store on
//! read-only media opens read-only.

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::BuildHasher;
use std::io::{ErrorKind, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::kv::flock::FileLock;
use crate::mem::string_index::StringIndexParams;

use crate::disk::owner::FileOwner;
use crate::io::{AlignedBuf, DeviceKind, IoClass, Storage};

use super::options::{
    CreateOptions, Engine, KeyFormat, LogSpec, LsmSpec, StoreOptions, MAX_LOG_SEGMENT_BYTES,
    MAX_MEMORY_BUDGET, MIN_LOG_SEGMENT_BYTES, MIN_LOG_SPACE_RATIO, MIN_MEMORY_BUDGET,
};

/// Magic number of a store's `STORE` file: `lidxSTOR`.
pub const STORE_MAGIC: u64 = u64::from_le_bytes(*b"lidxSTOR");
/// Format version of stores this build reads and writes (3: with a store id; see the module
/// docs).
pub const STORE_VERSION: u32 = 3;
/// Name of the identity file.
pub const STORE_FILE: &str = "STORE";
/// Name of the lock file.
pub(super) const LOCK_FILE: &str = "LOCK";
/// Bytes of `STORE` before the engine's spec.
const STORE_BYTES: usize = 56;
/// Offset of the checksum in `STORE`.
const STORE_CRC_AT: usize = 36;
/// Offset of the store id in `STORE`.
const STORE_ID_AT: usize = 40;

fn shown(dir: &Path) -> String {
    dir.display().to_string()
}

/// Encodes the identity of a store created with `options` whose id is `id`.
pub(crate) fn encode_identity(options: &CreateOptions, id: u128) -> Vec<u8> {
    let spec = match options.engine {
        Engine::Log(log) => log.label(),
        Engine::Lsm(lsm) => lsm.label(),
        _ => String::new(),
    };
    let mut b = vec![0u8; STORE_BYTES];
    b[0..8].copy_from_slice(&STORE_MAGIC.to_le_bytes());
    let fields = [
        STORE_VERSION,
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
    b[STORE_ID_AT..STORE_BYTES].copy_from_slice(&id.to_le_bytes());
    b.extend_from_slice(spec.as_bytes());
    let crc = identity_crc(&b);
    b[STORE_CRC_AT..STORE_ID_AT].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The checksum of a `STORE` file's bytes: the fixed part before it, then the id and spec
/// after it.
fn identity_crc(b: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&b[..STORE_CRC_AT]), &b[STORE_ID_AT..])
}

/// Decodes a `STORE` file's bytes; `file` names it in errors. Never panics.
pub fn decode_identity(file: &str, b: &[u8]) -> Result<CreateOptions> {
    decode_store(file, b).map(|(options, _)| options)
}

/// [`decode_identity`], and the store's id.
pub(crate) fn decode_store(file: &str, b: &[u8]) -> Result<(CreateOptions, u128)> {
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
    if version != STORE_VERSION {
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
    if crc != u32_at(STORE_CRC_AT) {
        return Err(Error::Corrupt {
            file: file.to_string(),
            block: None,
            what: format!(
                "checksum {crc:#010x}, written as {:#010x}",
                u32_at(STORE_CRC_AT)
            ),
        });
    }
    let id = u128::from_le_bytes(b[STORE_ID_AT..STORE_BYTES].try_into().unwrap_or([0; 16]));
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    };
    let spec = std::str::from_utf8(&b[STORE_BYTES..])
        .map_err(|_| bad("the engine's spec is not text".to_string()))?;
    let engine = match (u32_at(12), spec.is_empty()) {
        (1, true) => Engine::Hybrid,
        (2, true) => Engine::BTree,
        (3, false) => Engine::Log(LogSpec::parse(spec).ok_or_else(|| {
            bad(format!(
                "the log engine's map `{spec}` is not one this build has"
            ))
        })?),
        (4, false) => Engine::Lsm(LsmSpec::parse(spec).ok_or_else(|| {
            bad(format!(
                "the lsm engine's spec `{spec}` is not one this build reads"
            ))
        })?),
        (code, _) => {
            return Err(bad(format!(
                "unknown engine {code} with a spec of {} bytes",
                spec.len()
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
    if id == 0 {
        return Err(bad("the store id is 0".into()));
    }
    Ok((options, id))
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

/// Reads and checks `dir`'s identity and id: [`Error::NotAStore`] when the directory or its
/// `STORE` file is missing.
pub(crate) fn read_identity(dir: &Path) -> Result<(CreateOptions, u128)> {
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
    decode_store(&path.display().to_string(), &bytes)
}

/// Makes `dir` a new store's directory: it must not exist or be empty. Writes `STORE`
/// durably, with a new random id, which it returns.
pub(crate) fn write_identity(dir: &Path, options: &CreateOptions) -> Result<u128> {
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
    let id = new_store_id(dir);
    let tmp = dir.join("STORE.tmp");
    let mut f = File::create(&tmp).map_err(|e| io("create STORE.tmp", e))?;
    f.write_all(&encode_identity(options, id))
        .and_then(|()| f.sync_all())
        .map_err(|e| io("write STORE.tmp", e))?;
    fs::rename(&tmp, dir.join(STORE_FILE)).map_err(|e| io("rename STORE.tmp", e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io("sync directory", e))?;
    Ok(id)
}

/// A new store id, never 0: two 64-bit SipHash values under keys the standard library draws
/// from the OS's random source ([`RandomState`]), over the time, the process id and the
/// directory, so that no two stores share an id (no dependency for 16 random bytes).
fn new_store_id(dir: &Path) -> u128 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = |salt: u8| RandomState::new().hash_one((salt, now, std::process::id(), dir));
    (u128::from(half(1)) << 64 | u128::from(half(2))).max(1)
}

/// Takes the store's lock: exclusive for a writer, shared for a reader. The lock is held
/// until the returned [`FileLock`] is dropped; another holder makes this [`Error::Locked`]. A reader
/// opens `LOCK` for reading only, so that a store on read-only media can be read; it creates
/// the file only when it is missing.
pub(crate) fn lock(dir: &Path, exclusive: bool) -> Result<FileLock> {
    let path = dir.join(LOCK_FILE);
    let open = |write: bool| {
        OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .truncate(false)
            .open(&path)
    };
    let file = match open(exclusive) {
        Err(e) if !exclusive && e.kind() == ErrorKind::NotFound => open(true),
        other => other,
    }
    .map_err(|e| Error::io(path.display().to_string(), "open lock file", &e))?;
    match FileLock::try_new(file, exclusive) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked { dir: shown(dir) }),
        Err(e) => Err(Error::io(path.display().to_string(), "lock", &e)),
    }
}

/// Name of the log directory inside a store.
pub(crate) const WAL_DIR: &str = "wal";

/// The storage of a store's table files: files in `dir`, under one cache of
/// [`StoreOptions::cache_bytes`] shared by all of them (so a store of many files, the `lsm`
/// engine's runs, holds that much and no more).
pub(crate) fn storage_for(
    dir: &Path,
    identity: &CreateOptions,
    options: &StoreOptions,
) -> Result<Storage> {
    let kind = DeviceKind::File {
        direct: options.direct_io,
    };
    Ok(Storage::new(dir, kind, identity.block_size)?
        .with_shared_cache(options.cache_bytes / identity.block_size))
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

/// What the manifest records of one of the store's immutable files (a table, a checkpoint
/// image): see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    /// The file's generation (in its name and its header).
    pub(crate) generation: u64,
    /// Its size in bytes.
    pub(crate) bytes: u64,
    /// crc32c of its block 0 as on disk.
    pub(crate) header_crc: u32,
}

/// A store's manifest `meta`: see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoreMeta {
    /// The generation the next new file gets.
    pub(crate) next_generation: u64,
    /// The store's id.
    pub(crate) store: u128,
    /// The identity of each of the manifest's static files, in its order.
    pub(crate) files: Vec<FileIdentity>,
    /// An `lsm` store's value log: how many bytes of values each run refers to in each
    /// segment (written only when there are some, so other stores' meta is as before).
    pub(crate) value_refs: Vec<ValueRefs>,
}

/// Bytes of values the run of generation `run` refers to in the value log segment of
/// generation `segment` (an `lsm` store's, `lsm/values.rs`): what tells a segment's live
/// bytes without reading the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ValueRefs {
    pub(crate) run: u64,
    pub(crate) segment: u64,
    pub(crate) bytes: u64,
}

const META_FIXED: usize = 28;
const META_FILE: usize = 20;
const META_REF: usize = 24;

/// Encodes a store's manifest `meta`.
pub(crate) fn encode_meta(meta: &StoreMeta) -> Vec<u8> {
    let mut b = Vec::with_capacity(META_FIXED + META_FILE * meta.files.len());
    b.extend_from_slice(&meta.next_generation.to_le_bytes());
    b.extend_from_slice(&meta.store.to_le_bytes());
    b.extend_from_slice(&(meta.files.len() as u32).to_le_bytes());
    for f in &meta.files {
        b.extend_from_slice(&f.generation.to_le_bytes());
        b.extend_from_slice(&f.bytes.to_le_bytes());
        b.extend_from_slice(&f.header_crc.to_le_bytes());
    }
    if !meta.value_refs.is_empty() {
        b.extend_from_slice(&(meta.value_refs.len() as u32).to_le_bytes());
        for r in &meta.value_refs {
            for n in [r.run, r.segment, r.bytes] {
                b.extend_from_slice(&n.to_le_bytes());
            }
        }
    }
    b
}

/// Reads [`encode_meta`]'s bytes of the manifest `file`. Never panics.
pub(crate) fn decode_meta(file: &str, meta: &[u8]) -> Result<StoreMeta> {
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    };
    if meta.len() < META_FIXED {
        return Err(bad(format!(
            "store meta of {} bytes, at least {META_FIXED} expected (a store made before \
             store ids?)",
            meta.len()
        )));
    }
    let u64_at = |at: usize| u64::from_le_bytes(meta[at..at + 8].try_into().unwrap_or([0; 8]));
    let count = u32::from_le_bytes(meta[24..28].try_into().unwrap_or([0; 4])) as usize;
    let files_end = META_FIXED.saturating_add(META_FILE.saturating_mul(count));
    let refs = meta.get(files_end..).and_then(|rest| match rest.len() {
        0 => Some(0),
        n if n >= 4 => {
            let refs = u32::from_le_bytes(rest[..4].try_into().unwrap_or([0; 4])) as usize;
            (refs > 0 && n == 4 + META_REF.saturating_mul(refs)).then_some(refs)
        }
        _ => None,
    });
    let Some(refs) = refs else {
        return Err(bad(format!(
            "store meta of {} bytes for {count} file identities",
            meta.len()
        )));
    };
    let files = (0..count)
        .map(|i| {
            let at = META_FIXED + META_FILE * i;
            FileIdentity {
                generation: u64_at(at),
                bytes: u64_at(at + 8),
                header_crc: u32::from_le_bytes(meta[at + 16..at + 20].try_into().unwrap_or([0; 4])),
            }
        })
        .collect();
    let value_refs = (0..refs)
        .map(|i| {
            let at = files_end + 4 + META_REF * i;
            ValueRefs {
                run: u64_at(at),
                segment: u64_at(at + 8),
                bytes: u64_at(at + 16),
            }
        })
        .collect();
    Ok(StoreMeta {
        next_generation: u64_at(0),
        store: u128::from_le_bytes(meta[8..24].try_into().unwrap_or([0; 16])),
        files,
        value_refs,
    })
}

/// The identity of the file `name` of `storage`, of generation `generation`, as it is now.
pub(crate) fn identify(storage: &Storage, name: &str, generation: u64) -> Result<FileIdentity> {
    let device = storage.open(name, false)?;
    if device.len_blocks() == 0 {
        return Err(Error::Truncated {
            file: device.name().to_string(),
            what: "an empty file: its header was never written".into(),
        });
    }
    let mut block = AlignedBuf::zeroed(device.block_size());
    device.read_blocks(0, &mut block, IoClass::Header)?;
    Ok(FileIdentity {
        generation,
        bytes: storage.file_bytes(name),
        header_crc: crc32c::crc32c(&block),
    })
}

/// Checks that `name` of `storage` is the file the manifest recorded as `recorded`, and that
/// its header's `owner` is the store `store` at the recorded generation:
/// [`Error::ForeignFile`] naming the file otherwise.
pub(crate) fn check_file(
    storage: &Storage,
    name: &str,
    recorded: &FileIdentity,
    owner: FileOwner,
    store: u128,
) -> Result<()> {
    let file = storage
        .dir()
        .map_or_else(|| name.to_string(), |d| d.join(name).display().to_string());
    let foreign = |what: String| Error::ForeignFile {
        file: file.clone(),
        what,
    };
    let expected = FileOwner {
        store,
        generation: recorded.generation,
    };
    if owner != expected {
        return Err(foreign(format!(
            "its header says {owner}, the store is {expected}"
        )));
    }
    let now = identify(storage, name, recorded.generation)?;
    if now != *recorded {
        return Err(foreign(format!(
            "{} bytes with a header checksum of {:#010x}, the manifest recorded {} bytes and \
             {:#010x}",
            now.bytes, now.header_crc, recorded.bytes, recorded.header_crc
        )));
    }
    Ok(())
}

/// Checks that a manifest's `meta` is of the store `store` and records one identity per
/// static file.
pub(crate) fn check_meta(
    manifest: &str,
    meta: &StoreMeta,
    store: u128,
    static_files: usize,
) -> Result<()> {
    if meta.store != store {
        return Err(Error::ForeignFile {
            file: manifest.to_string(),
            what: format!(
                "the manifest is of store {:032x}, STORE says {store:032x}",
                meta.store
            ),
        });
    }
    if meta.files.len() != static_files {
        return Err(Error::Corrupt {
            file: manifest.to_string(),
            block: None,
            what: format!(
                "{static_files} static file(s) and {} identities",
                meta.files.len()
            ),
        });
    }
    Ok(())
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
    if options.row_cache_bytes > MAX_MEMORY_BUDGET {
        return Err(Error::InvalidParameter {
            name: "row cache bytes",
            value: options.row_cache_bytes.to_string(),
            expected: "at most 256 GiB (0 for no record cache)",
        });
    }
    if let Some(r) = options
        .log_space_ratio
        .filter(|r| !r.is_finite() || *r < MIN_LOG_SPACE_RATIO)
    {
        return Err(Error::InvalidParameter {
            name: "log space ratio",
            value: r.to_string(),
            expected: "a number of at least 1.2 (or none, to keep every record)",
        });
    }
    if !(MIN_LOG_SEGMENT_BYTES..=MAX_LOG_SEGMENT_BYTES).contains(&options.log_segment_bytes) {
        return Err(Error::InvalidParameter {
            name: "log segment bytes",
            value: options.log_segment_bytes.to_string(),
            expected: "from 4 KiB to 1 GiB",
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
        let b = encode_identity(&o, 42);
        assert_eq!(decode_store("STORE", &b).unwrap(), (o, 42));
        assert_eq!(decode_identity("STORE", &b).unwrap(), o);
        let mut flipped = b.clone();
        flipped[17] ^= 1;
        assert!(matches!(
            decode_identity("STORE", &flipped),
            Err(Error::Corrupt { .. })
        ));
        for version in [2, 4] {
            let mut other = b.clone();
            other[8] = version;
            assert!(matches!(
                decode_identity("STORE", &other),
                Err(Error::UnsupportedVersion { got, .. }) if got == u32::from(version)
            ));
        }
        let log = CreateOptions {
            engine: Engine::Log(LogSpec::parse("btree:leaf=32").unwrap()),
            ..CreateOptions::default()
        };
        let b2 = encode_identity(&log, 7);
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
            decode_identity("STORE", &encode_identity(&trie, 9)).unwrap(),
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
    fn store_meta_round_trips_with_and_without_value_references() {
        let id = |generation| FileIdentity {
            generation,
            bytes: generation * 4096,
            header_crc: generation as u32 ^ 0xABCD,
        };
        let plain = StoreMeta {
            next_generation: 9,
            store: 7 << 100,
            files: vec![id(3), id(5)],
            value_refs: Vec::new(),
        };
        let bytes = encode_meta(&plain);
        // Without references the meta is what builds before the value log wrote.
        assert_eq!(bytes.len(), META_FIXED + 2 * META_FILE);
        assert_eq!(decode_meta("m", &bytes).unwrap(), plain);
        let refs = StoreMeta {
            value_refs: vec![
                ValueRefs {
                    run: 3,
                    segment: 5,
                    bytes: 1000,
                },
                ValueRefs {
                    run: 3,
                    segment: 6,
                    bytes: 1,
                },
            ],
            ..plain
        };
        let bytes = encode_meta(&refs);
        assert_eq!(decode_meta("m", &bytes).unwrap(), refs);
        // Every cut, and a count of references that disagrees with the bytes, is refused;
        // any bytes decode or are refused without a panic.
        for cut in 0..bytes.len() {
            let got = decode_meta("m", &bytes[..cut]);
            assert!(
                got.is_err() || cut == META_FIXED + 2 * META_FILE,
                "cut at {cut}"
            );
        }
        let mut wrong = bytes.clone();
        wrong[META_FIXED + 2 * META_FILE] = 3;
        assert!(decode_meta("m", &wrong).is_err());
        let mut none = bytes[..META_FIXED + 2 * META_FILE].to_vec();
        none.extend_from_slice(&0u32.to_le_bytes());
        assert!(decode_meta("m", &none).is_err());
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            let junk: Vec<u8> = (0..(x % 120) as usize)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = decode_meta("m", &junk);
        }
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
