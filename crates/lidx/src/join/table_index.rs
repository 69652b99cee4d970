//! Saved indexes over a table: built once, written next to the table, reloaded for later joins.
//!
//! Paper 000 §5.2: "Indexes are built offline and serialized to disk. When used for a join, the
//! indexes are deserialized first and completely stored in memory." The paper does not say how
//! a saved index is tied to its table; we store the table's record count and content
//! fingerprint (written in the table's header by its writer, see `join::table`) and the build
//! parameters, so an index is reused only for exactly the records and the settings it was
//! built for, and rebuilt (and saved again) otherwise: a table re-created in place with other
//! keys, even with the same count and end keys, never gets the old index. The model bytes are any
//! [`Persist`] encoding; a checksum covers them besides the device's block checksums, so that
//! a model is never decoded from bytes that were not written together.
//!
//! Saving writes the file under a hidden name of its own beside the table and renames it over
//! `name` once synced, so a join killed while saving leaves the previous saved index (or none),
//! never a partial one that the next join would call corrupt (issue 30, class 3). Where the
//! table's directory is not writable the index is used from memory ([`IndexLoad::unsaved`]).
//!
//! Why these files are not opened through `disk::static_learned::AnyStaticLearned` (issue 12
//! asked whether they could be): that opener reads a static learned *file*, records in its own
//! data blocks plus the model that locates them, and maps the model kind the file records to a
//! model type because its callers (the hybrid's static stage, the benchmarks) take whatever the
//! file holds. A join index is the other half of §5.2's arrangement: a model alone, over records
//! that live in someone else's file (the table, whose format and fingerprint `join::table`
//! owns), deserialized completely into memory. Opening it as a static learned file would need
//! either a second copy of the table's records in data blocks (the table is the data) or a
//! static learned file without data blocks, which `AnyStaticLearned` could not search. Nor is
//! the dispatch by kind needed: the join's algorithm (`inlj-pgm`, `inlj-rs`, ...) names the
//! model type, so [`load_or_build`] is typed by it, and a file of another kind is
//! [`Error::ModelKindMismatch`]. What both share is below them: each model's [`Persist`]
//! encoding and the kind numbers of `docs/format.md`. The binding to the table's content
//! fingerprint (issue 13) stays here, in the header below.
//!
//! File layout: one byte stream packed into the payloads of consecutive blocks (each block's
//! last 4 bytes are the device's crc32c trailer), little-endian:
//!
//! | offset | size | field                                                     |
//! |--------|------|-----------------------------------------------------------|
//! | 0      | 8    | magic `0x5844_494a_5844_494c` ("LIDXJIDX")                |
//! | 8      | 4    | format version (2)                                        |
//! | 12     | 4    | model kind ([`Persist::KIND`])                            |
//! | 16     | 4    | key size of the table (8 or 16)                           |
//! | 20     | 4    | reserved, 0                                               |
//! | 24     | 8    | build parameters tag (see [`IndexSpec::tag`])             |
//! | 32     | 8    | table record count                                        |
//! | 40     | 8    | table's content fingerprint (its header's)                |
//! | 48     | 8    | model byte length `L`                                     |
//! | 56     | 4    | crc32c of the model bytes                                 |
//! | 60     | 4    | crc32c of bytes 0..60                                     |
//! | 64     | `L`  | model bytes ([`Persist::encode`])                         |
//!
//! The file has exactly the blocks the stream needs; more or fewer is [`Error::Corrupt`] or
//! [`Error::Truncated`]. Version 1 (end keys instead of the fingerprint, which matched a table
//! re-created with the same count and end keys) is not read: such a file is rebuilt.

use std::time::{Duration, Instant};

use crate::codec::{Decoder, Encoder};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, IoClass, Storage, BLOCK_TRAILER};
use crate::join::table::{Table, TableKey};
use crate::mem::persist::Persist;

/// Magic number of a saved index file ("LIDXJIDX" read as little-endian bytes).
pub const INDEX_MAGIC: u64 = u64::from_le_bytes(*b"LIDXJIDX");
/// Format version written and read.
pub const INDEX_VERSION: u32 = 2;
/// Bytes before the model bytes.
pub const INDEX_HEADER_BYTES: usize = 64;

/// What an index was built on: the table's record count and content fingerprint, and a tag of
/// the build parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSpec {
    /// Model kind, [`Persist::KIND`].
    pub kind: u32,
    /// Key size of the table.
    pub key_size: u32,
    /// A number that changes with the build parameters (for example the window setting).
    pub tag: u64,
    /// Records in the table.
    pub count: u64,
    /// The table's content fingerprint ([`crate::join::TableHeader::fingerprint`]).
    pub fingerprint: u64,
}

impl IndexSpec {
    /// The spec of an index of kind `M::KIND` with parameter tag `tag` over `table`.
    pub fn of<K: TableKey, M: Persist<K>>(table: &Table<K>, tag: u64) -> IndexSpec {
        IndexSpec {
            kind: M::KIND,
            key_size: K::SIZE as u32,
            tag,
            count: table.len(),
            fingerprint: table.header().fingerprint,
        }
    }

    fn encode(&self, model_len: u64, model_crc: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&INDEX_MAGIC.to_le_bytes());
        out.extend_from_slice(&INDEX_VERSION.to_le_bytes());
        out.extend_from_slice(&self.kind.to_le_bytes());
        out.extend_from_slice(&self.key_size.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.tag.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        out.extend_from_slice(&model_len.to_le_bytes());
        out.extend_from_slice(&model_crc.to_le_bytes());
        let crc = crc32c::crc32c(out);
        out.extend_from_slice(&crc.to_le_bytes());
    }
}

/// Decodes and checks the first [`INDEX_HEADER_BYTES`] of a saved index file: magic, version,
/// header checksum. Returns the spec, the model's length and its checksum. Never panics.
pub fn decode_index_header(file: &str, bytes: &[u8]) -> Result<(IndexSpec, u64, u32)> {
    if bytes.len() < INDEX_HEADER_BYTES {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!(
                "index header of {} bytes, need {INDEX_HEADER_BYTES}",
                bytes.len()
            ),
        });
    }
    let mut d = Decoder::new(file, &bytes[..INDEX_HEADER_BYTES]);
    let magic = d.u64()?;
    if magic != INDEX_MAGIC {
        return Err(Error::BadMagic {
            file: file.to_string(),
            expected: INDEX_MAGIC,
            got: magic,
        });
    }
    let version = d.u32()?;
    if version != INDEX_VERSION {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: version,
            supported: INDEX_VERSION,
        });
    }
    let kind = d.u32()?;
    let key_size = d.u32()?;
    let _reserved = d.u32()?;
    let tag = d.u64()?;
    let count = d.u64()?;
    let fingerprint = d.u64()?;
    let model_len = d.u64()?;
    let model_crc = d.u32()?;
    let header_crc = d.u32()?;
    if crc32c::crc32c(&bytes[..INDEX_HEADER_BYTES - 4]) != header_crc {
        return Err(Error::Corrupt {
            file: file.to_string(),
            block: Some(0),
            what: "index header checksum does not match".to_string(),
        });
    }
    let spec = IndexSpec {
        kind,
        key_size,
        tag,
        count,
        fingerprint,
    };
    Ok((spec, model_len, model_crc))
}

/// Decodes the whole stream of a saved index file (the payloads of its blocks, concatenated):
/// the header ([`decode_index_header`]), then checks that the model bytes are all there, that
/// only zero padding follows them, and their checksum. Returns the spec and the model bytes.
/// Never panics.
pub fn decode_saved<'a>(file: &str, bytes: &'a [u8]) -> Result<(IndexSpec, &'a [u8])> {
    let (spec, model_len, model_crc) = decode_index_header(file, bytes)?;
    let corrupt = |what: &str| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: what.to_string(),
    };
    let rest = &bytes[INDEX_HEADER_BYTES..];
    if model_len > rest.len() as u64 {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("model of {model_len} bytes, {} present", rest.len()),
        });
    }
    let (model, padding) = rest.split_at(model_len as usize);
    if padding.iter().any(|&b| b != 0) {
        return Err(corrupt("non-zero bytes after the model"));
    }
    if crc32c::crc32c(model) != model_crc {
        return Err(corrupt("model checksum does not match"));
    }
    Ok((spec, model))
}

/// Writes `model`, built on the table described by `spec`, to the file `name`. Returns the
/// file's size in bytes.
pub(crate) fn save<K: TableKey, M: Persist<K>>(
    storage: &Storage,
    name: &str,
    spec: &IndexSpec,
    model: &M,
) -> Result<u64> {
    let mut enc = Encoder::new();
    model.encode(&mut enc);
    let model_bytes = enc.into_bytes();
    let mut stream = Vec::with_capacity(INDEX_HEADER_BYTES + model_bytes.len());
    spec.encode(
        model_bytes.len() as u64,
        crc32c::crc32c(&model_bytes),
        &mut stream,
    );
    stream.extend_from_slice(&model_bytes);
    let bs = storage.block_size();
    let payload = bs - BLOCK_TRAILER;
    let blocks = stream.len().div_ceil(payload);
    let mut buf = AlignedBuf::zeroed(blocks * bs);
    for (i, chunk) in stream.chunks(payload).enumerate() {
        buf[i * bs..i * bs + chunk.len()].copy_from_slice(chunk);
    }
    let Some(dir) = storage.dir() else {
        let device = storage.create(name)?;
        device.write_blocks(0, &mut buf, IoClass::Model)?;
        device.sync()?;
        return Ok((blocks * bs) as u64);
    };
    let staged = crate::join::scratch::scratch_name(&format!(".{name}.saving"));
    let written = (|| {
        let device = storage.create(&staged)?;
        device.write_blocks(0, &mut buf, IoClass::Model)?;
        device.sync()?;
        let (from, to) = (dir.join(&staged), dir.join(name));
        std::fs::rename(&from, &to).map_err(|e| {
            Error::io(
                to.display().to_string(),
                "rename a saved index into place",
                &e,
            )
        })?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir.display().to_string(), "sync", &e))
    })();
    if written.is_err() {
        crate::join::scratch::remove_scratch(storage, &staged);
    }
    written.map(|()| (blocks * bs) as u64)
}

/// Reads the saved index file `name`: its spec and the model bytes (see [`decode_saved`]).
pub fn read_saved(storage: &Storage, name: &str) -> Result<(IndexSpec, Vec<u8>)> {
    let device = storage.open(name, false)?;
    let bs = device.block_size();
    let payload = device.payload_size();
    let blocks = device.len_blocks();
    if blocks == 0 {
        return Err(Error::Truncated {
            file: name.to_string(),
            what: "empty index file".to_string(),
        });
    }
    let mut first = AlignedBuf::zeroed(bs);
    device.read_blocks(0, &mut first, IoClass::Model)?;
    let (_, model_len, _) = decode_index_header(name, &first[..payload])?;
    let want = (INDEX_HEADER_BYTES as u64)
        .saturating_add(model_len)
        .div_ceil(payload as u64);
    if want > blocks {
        return Err(Error::Truncated {
            file: name.to_string(),
            what: format!("{blocks} blocks, the model needs {want}"),
        });
    }
    if want < blocks {
        return Err(Error::Corrupt {
            file: name.to_string(),
            block: None,
            what: format!("{blocks} blocks, more than the {want} the model needs"),
        });
    }
    let mut buf = AlignedBuf::zeroed(blocks as usize * bs);
    device.read_blocks(0, &mut buf, IoClass::Model)?;
    let mut stream = Vec::with_capacity(blocks as usize * payload);
    for block in buf.chunks(bs) {
        stream.extend_from_slice(&block[..payload]);
    }
    let (spec, model) = decode_saved(name, &stream)?;
    let model = model.to_vec();
    Ok((spec, model))
}

/// How an index came to be in memory for a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLoad {
    /// True when read from its saved file, false when built (and saved).
    pub loaded: bool,
    /// Why a saved file was there but not used, when it was rebuilt: `"stale"` (built on
    /// other records: the table was re-created), `"other parameters"` or `"other format
    /// version"`.
    pub rebuilt: Option<&'static str>,
    /// Time to build it (read the keys, fit, save), or to load it.
    pub time: Duration,
    /// Bytes the index keeps in memory.
    pub memory_bytes: usize,
    /// Bytes of its saved file.
    pub file_bytes: u64,
    /// True when it was built but could not be saved because the table's directory is not
    /// writable (read-only media, no permission): the join used it from memory, and the next
    /// join builds it again.
    pub unsaved: bool,
}

impl IndexLoad {
    /// `loaded`, `built`, or `rebuilt: <why>` ([`IndexLoad::rebuilt`]), followed by `, in
    /// memory only (the table's directory is not writable)` when [`IndexLoad::unsaved`].
    pub fn describe(&self) -> String {
        let how = match (self.loaded, self.rebuilt) {
            (true, _) => "loaded".to_string(),
            (false, Some(why)) => format!("rebuilt: {why}"),
            (false, None) => "built".to_string(),
        };
        if self.unsaved {
            format!("{how}, {UNSAVED}")
        } else {
            how
        }
    }
}

/// What `IndexLoad::describe` adds for an index that could not be saved.
pub const UNSAVED: &str = "in memory only (the table's directory is not writable)";

/// True for an error that says a file cannot be written where it was asked to be: read-only
/// media or no permission.
fn not_writable(error: &Error) -> bool {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    matches!(error, Error::Io { kind, .. } if matches!(kind, PermissionDenied | ReadOnlyFilesystem))
}

/// The index of kind `M` over `table` for parameter tag `tag`: loaded from the file `name` of
/// `storage` when it exists and was built for exactly this table's records (its count and
/// content fingerprint) and tag, otherwise built with `build` on the table's keys (which must
/// be strictly increasing: [`Error::DuplicateKey`] or [`Error::OutOfOrder`] otherwise) and
/// saved to `name`, saying why in `IndexLoad::rebuilt`. A saved file that is corrupt is an
/// error, not rebuilt silently; delete it to rebuild. When the directory is not writable
/// (issue 30: INLJ joins on read-only tables failed), the index is used from memory and
/// `IndexLoad::unsaved` says so.
pub fn load_or_build<K: TableKey, M: Persist<K>>(
    storage: &Storage,
    name: &str,
    table: &Table<K>,
    tag: u64,
    build: impl FnOnce(&[K]) -> Result<M>,
) -> Result<(M, IndexLoad)> {
    let start = Instant::now();
    let spec = IndexSpec::of::<K, M>(table, tag);
    let rebuilt = if storage.exists(name) {
        match read_saved(storage, name) {
            Err(Error::UnsupportedVersion { .. }) => Some("other format version"),
            Err(e) => return Err(e),
            Ok((saved, bytes)) => {
                if saved.kind != M::KIND {
                    return Err(Error::ModelKindMismatch {
                        file: name.to_string(),
                        expected: M::KIND,
                        got: saved.kind,
                    });
                }
                if saved == spec {
                    let model = decode_model::<K, M>(name, &bytes, table)?;
                    let memory_bytes = model.size_in_bytes();
                    let load = IndexLoad {
                        loaded: true,
                        rebuilt: None,
                        time: start.elapsed(),
                        memory_bytes,
                        file_bytes: storage.file_bytes(name),
                        unsaved: false,
                    };
                    return Ok((model, load));
                }
                Some(if saved.tag != spec.tag {
                    "other parameters"
                } else {
                    "stale"
                })
            }
        }
    } else {
        None
    };
    let keys = table.read_keys()?;
    crate::key::check_strictly_sorted(&keys)?;
    let model = build(&keys)?;
    drop(keys);
    let (file_bytes, unsaved) = match save(storage, name, &spec, &model) {
        Ok(bytes) => (bytes, false),
        Err(e) if not_writable(&e) => (0, true),
        Err(e) => return Err(e),
    };
    let memory_bytes = model.size_in_bytes();
    Ok((
        model,
        IndexLoad {
            loaded: false,
            rebuilt,
            time: start.elapsed(),
            memory_bytes,
            file_bytes,
            unsaved,
        },
    ))
}

/// Decodes the model bytes of a saved index over `table` (the file `name`), checking that it
/// indexes as many keys as the table has.
fn decode_model<K: TableKey, M: Persist<K>>(
    name: &str,
    bytes: &[u8],
    table: &Table<K>,
) -> Result<M> {
    let mut d = Decoder::new(name, bytes);
    let model = M::decode(&mut d)?;
    d.finish()?;
    if model.len() as u64 != table.len() {
        return Err(Error::Corrupt {
            file: name.to_string(),
            block: None,
            what: format!(
                "index over {} keys for a table of {}",
                model.len(),
                table.len()
            ),
        });
    }
    Ok(model)
}
