//! The `log` engine's checkpoint: each live key's place at one sequence number, and the
//! segments those places name, so that reopening reads this file and the log after it
//! instead of the whole log, and so that the collector may remove segments the file covers.
//!
//! Paper 001 §III (Viper) rebuilds its map from the whole log at every recovery (its Fig. 16
//! measures that time). Issue 32 asks for a store that reopens a 10M-record store in under 5
//! s whatever its history: the checkpoint is the map's entries in key order, bulk-loaded
//! straight back (no hashing, no sort), plus the records after it.
//!
//! A checkpoint is exact at its sequence number `seq` although writers go on while it is
//! written: it reads the live map a chunk at a time, registered as a snapshot at `seq` (so a
//! delete keeps its key's entry meanwhile), and an entry that names a record after `seq` (at
//! or past where the head segment ended at `seq`: the log is appended in sequence order) is
//! followed back through the key's `prev` links to its place at `seq`. Paper 001 §III has no
//! checkpoint; a fuzzy one (entries newer than `seq`, made right by the replay) would be
//! cheaper, but a recovery mode that cuts the log after `seq` could then leave an entry
//! naming a record it cut. The store's manifest names the checkpoint file and its `seq` (as
//! `static_seq`), and records its size and header checksum, like any engine's files.
//!
//! # File `log-<generation, 20 digits>.ckpt`
//!
//! | offset | size | field                                                          |
//! |--------|------|----------------------------------------------------------------|
//! | 0      | 8    | magic `lidxLCK1`                                               |
//! | 8      | 4    | format version (1)                                             |
//! | 12     | 4    | keys: 1 = 8-byte keys (`log:<map>`), 2 = any length (`log:trie:<map>`) |
//! | 16     | 16   | owner: the store's id                                          |
//! | 32     | 8    | generation (in the name too)                                   |
//! | 40     | 8    | `seq`: the records up to it are in the entries                 |
//! | 48     | 8    | the id the next new segment gets                               |
//! | 56     | 8    | `S`, segments listed                                           |
//! | 64     | 4    | crc32c of bytes 0..64                                          |
//! | 68     | 4    | reserved, 0                                                    |
//! | 72     | 32 S | per segment: first sequence number, id, operations, bytes at `seq` |
//! | ...    | ...  | entries in strictly increasing key order: 8-byte keys: key (big-endian) and place (8 bytes each); any length: `varint(key length)`, the key, the place |
//! | end-16 | 8    | entries                                                        |
//! | end-8  | 4    | crc32c of bytes 72..end-8                                      |
//! | end-4  | 4    | reserved, 0                                                    |
//!
//! The listed segments are every segment the store had at `seq` but those the collector is
//! removing; a segment made after `seq` is not listed and takes the next ids in the order of
//! its first record. A place names a listed segment. The bytes of a listed
//! segment at `seq` are where the replay of the records after `seq` starts in it.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::codec::{get_varint, put_varint};
use crate::error::{Error, Result};
use crate::kv::store::dir::FileIdentity;
use crate::kv::store::options::{LogKeys, MAX_KEY_BYTES, MIN_KEY_BYTES};
use crate::kv::wal::Seq;

use super::record::TOMBSTONE;

/// Magic number of a checkpoint file.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"lidxLCK1";
/// Format version of a checkpoint file.
pub const CHECKPOINT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = CHECKPOINT_MAGIC;
const VERSION: u32 = CHECKPOINT_VERSION;
/// Bytes of the header, and of one listed segment.
pub(crate) const HEADER_BYTES: usize = 72;
const SEGMENT_BYTES: usize = 32;
const TRAILER_BYTES: usize = 16;

/// One segment a checkpoint lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The sequence number of its first record (its name).
    pub(crate) first: Seq,
    pub(crate) id: usize,
    /// Operations in it at `seq`.
    pub(crate) ops: u64,
    /// Its bytes at `seq`: where the replay after `seq` starts in it.
    pub(crate) len: u64,
}

/// The entries of a checkpoint, by the store's keys.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entries {
    U64(Vec<(u64, u64)>),
    Bytes(Vec<(Box<[u8]>, u64)>),
}

/// A checkpoint read back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    pub(crate) generation: u64,
    pub(crate) seq: Seq,
    pub(crate) next_id: usize,
    pub(crate) segments: Vec<Listed>,
    pub(crate) entries: Entries,
}

/// The name of the checkpoint of generation `generation`.
pub(crate) fn checkpoint_name(generation: u64) -> String {
    format!("log-{generation:020}.ckpt")
}

/// True for the names of checkpoint files and of their temporary copies: those the manifest
/// does not name are leftovers of an interrupted checkpoint, removed by a writer's open.
pub(crate) fn is_checkpoint_file(name: &str) -> bool {
    name.strip_prefix("log-").is_some_and(|rest| {
        let digits = rest
            .strip_suffix(".ckpt")
            .or_else(|| rest.strip_suffix(".ckpt.tmp"));
        digits.is_some_and(|d| d.len() == 20 && d.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn keys_code(keys: LogKeys) -> u32 {
    match keys {
        LogKeys::U64 => 1,
        LogKeys::Bytes => 2,
    }
}

/// The header of a checkpoint of `keys` of the store `owner`.
fn header(
    keys: LogKeys,
    owner: u128,
    generation: u64,
    seq: Seq,
    next_id: usize,
    segments: usize,
) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&keys_code(keys).to_le_bytes());
    h[16..32].copy_from_slice(&owner.to_le_bytes());
    h[32..40].copy_from_slice(&generation.to_le_bytes());
    h[40..48].copy_from_slice(&seq.to_le_bytes());
    h[48..56].copy_from_slice(&(next_id as u64).to_le_bytes());
    h[56..64].copy_from_slice(&(segments as u64).to_le_bytes());
    let crc = crc32c::crc32c(&h[..64]);
    h[64..68].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Writes a checkpoint file in `dir` under a temporary name; [`CheckpointWriter::finish`]
/// syncs it and gives it its name. Dropped unfinished (an error, a full disk), it removes
/// the temporary file it made.
pub(crate) struct CheckpointWriter {
    keys: LogKeys,
    /// `None` once finished.
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    generation: u64,
    header_crc: u32,
    crc: u32,
    entries: u64,
    bytes: u64,
    last: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// The file has its name: nothing to remove.
    renamed: bool,
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: a leftover is removed by the store's next writable open anyway.
            drop(self.out.take());
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// The error of a write to a finished checkpoint (never made: `finish` takes the writer).
fn closed() -> std::io::Error {
    std::io::Error::other("the checkpoint file is already finished")
}

impl CheckpointWriter {
    /// Starts the checkpoint of generation `generation` of the store `owner` in `dir`: its
    /// header and the segments it lists.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create(
        dir: &Path,
        keys: LogKeys,
        owner: u128,
        generation: u64,
        seq: Seq,
        next_id: usize,
        segments: &[Listed],
    ) -> Result<CheckpointWriter> {
        let name = checkpoint_name(generation);
        let path = dir.join(&name);
        let tmp = dir.join(format!("{name}.tmp"));
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| Error::io(tmp.display().to_string(), "create checkpoint", &e))?;
        let head = header(keys, owner, generation, seq, next_id, segments.len());
        let mut w = CheckpointWriter {
            keys,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            tmp,
            path,
            generation,
            header_crc: crc32c::crc32c(&head),
            crc: 0,
            entries: 0,
            bytes: 0,
            last: None,
            buf: Vec::with_capacity(64),
            renamed: false,
        };
        w.put_raw(&head)?;
        for s in segments {
            let mut b = [0u8; SEGMENT_BYTES];
            b[..8].copy_from_slice(&s.first.to_le_bytes());
            b[8..16].copy_from_slice(&(s.id as u64).to_le_bytes());
            b[16..24].copy_from_slice(&s.ops.to_le_bytes());
            b[24..32].copy_from_slice(&s.len.to_le_bytes());
            w.put(&b)?;
        }
        Ok(w)
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.bytes += bytes.len() as u64;
        let written = match self.out.as_mut() {
            Some(out) => out.write_all(bytes),
            None => Err(closed()),
        };
        // The file's name is made only for an error: this runs once per entry.
        written.map_err(|e| Error::io(self.tmp.display().to_string(), "write checkpoint", &e))
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.put_raw(bytes)
    }

    /// Adds the entry `key -> place`; keys come in strictly increasing order.
    pub(crate) fn entry(&mut self, key: &[u8], place: u64) -> Result<()> {
        if self.last.as_deref().is_some_and(|last| last >= key) || place & TOMBSTONE != 0 {
            return Err(Error::InvalidParameter {
                name: "checkpoint entry",
                value: format!("{key:02x?}"),
                expected: "keys in strictly increasing order, places of live records",
            });
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if self.keys == LogKeys::Bytes {
            put_varint(&mut buf, key.len() as u64);
        }
        buf.extend_from_slice(key);
        buf.extend_from_slice(&place.to_le_bytes());
        let r = self.put(&buf);
        self.buf = buf;
        r?;
        match &mut self.last {
            Some(last) => {
                last.clear();
                last.extend_from_slice(key);
            }
            None => self.last = Some(key.to_vec()),
        }
        self.entries += 1;
        Ok(())
    }

    /// Ends the file, syncs it, renames it to its name and syncs the directory; returns what
    /// the manifest records of it.
    pub(crate) fn finish(mut self) -> Result<FileIdentity> {
        let count = self.entries.to_le_bytes();
        self.put(&count)?;
        let mut tail = [0u8; 8];
        tail[..4].copy_from_slice(&self.crc.to_le_bytes());
        self.put_raw(&tail)?;
        let name = self.tmp.display().to_string();
        let file = self
            .out
            .take()
            .ok_or_else(|| Error::io(&name, "write checkpoint", &closed()))?
            .into_inner()
            .map_err(|e| Error::io(&name, "write checkpoint", e.error()))?;
        file.sync_all()
            .map_err(|e| Error::io(&name, "sync checkpoint", &e))?;
        fs::rename(&self.tmp, &self.path).map_err(|e| Error::io(&name, "rename checkpoint", &e))?;
        self.renamed = true;
        sync_parent(&self.path)?;
        Ok(FileIdentity {
            generation: self.generation,
            bytes: self.bytes,
            header_crc: self.header_crc,
        })
    }
}

/// Syncs the directory holding `path`, so that a rename or removal in it is durable.
pub(crate) fn sync_parent(path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir.display().to_string(), "sync directory", &e))
}

/// Reads the checkpoint `path` that the manifest recorded as `recorded`, of the store `owner`
/// and its `keys`, and checks it: a file of another store or another generation is
/// [`Error::ForeignFile`], a damaged one [`Error::Corrupt`].
pub(crate) fn read(
    path: &Path,
    recorded: &FileIdentity,
    owner: u128,
    keys: LogKeys,
) -> Result<Checkpoint> {
    let file = path.display().to_string();
    let bytes = fs::read(path).map_err(|e| Error::io(&file, "read checkpoint", &e))?;
    let head = &bytes[..bytes.len().min(HEADER_BYTES)];
    let identity = FileIdentity {
        generation: recorded.generation,
        bytes: bytes.len() as u64,
        header_crc: crc32c::crc32c(head),
    };
    if identity != *recorded {
        return Err(Error::ForeignFile {
            file,
            what: format!(
                "{} bytes with a header checksum of {:#010x}, the manifest recorded {} bytes and \
                 {:#010x}",
                identity.bytes, identity.header_crc, recorded.bytes, recorded.header_crc
            ),
        });
    }
    let checkpoint = decode(&file, &bytes, keys)?;
    if u128::from_le_bytes(bytes[16..32].try_into().unwrap_or_default()) != owner
        || checkpoint.generation != recorded.generation
    {
        return Err(Error::ForeignFile {
            file,
            what: format!(
                "a checkpoint of store {:032x} generation {}, the store is {owner:032x} at \
                 generation {}",
                u128::from_le_bytes(bytes[16..32].try_into().unwrap_or_default()),
                checkpoint.generation,
                recorded.generation
            ),
        });
    }
    Ok(checkpoint)
}

/// Decodes a checkpoint file's `bytes` (`file` names it in errors) of a store of `keys`.
/// Never panics: anything but a sound checkpoint is [`Error::Corrupt`] (or
/// [`Error::UnsupportedVersion`]).
pub(crate) fn decode(file: &str, bytes: &[u8], keys: LogKeys) -> Result<Checkpoint> {
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: format!("log checkpoint: {what}"),
    };
    if bytes.len() < HEADER_BYTES + TRAILER_BYTES {
        return Err(bad(format!("{} bytes, shorter than any", bytes.len())));
    }
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
    if &bytes[..8] != MAGIC {
        return Err(bad("not a log checkpoint (wrong magic)".into()));
    }
    if crc32c::crc32c(&bytes[..64]) != u32_at(64) {
        return Err(bad("its header fails its checksum".into()));
    }
    let version = u32_at(8);
    if version != VERSION {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: version,
            supported: VERSION,
        });
    }
    if u32_at(12) != keys_code(keys) {
        return Err(bad(format!(
            "keys of kind {}, the store's are of kind {}",
            u32_at(12),
            keys_code(keys)
        )));
    }
    let end = bytes.len() - TRAILER_BYTES;
    if crc32c::crc32c(&bytes[HEADER_BYTES..end + 8]) != u32_at(end + 8) {
        return Err(bad("its body fails its checksum".into()));
    }
    let count = u64_at(56);
    let listed_bytes = usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(SEGMENT_BYTES))
        .filter(|&n| n <= end - HEADER_BYTES)
        .ok_or_else(|| bad(format!("{count} segments listed, more than the file holds")))?;
    let too_big = |v: u64| usize::try_from(v).map_err(|_| bad(format!("a segment id of {v}")));
    let mut segments = Vec::with_capacity(listed_bytes / SEGMENT_BYTES);
    for at in (HEADER_BYTES..HEADER_BYTES + listed_bytes).step_by(SEGMENT_BYTES) {
        let listed = Listed {
            first: u64_at(at),
            id: too_big(u64_at(at + 8))?,
            ops: u64_at(at + 16),
            len: u64_at(at + 24),
        };
        if segments
            .last()
            .is_some_and(|p: &Listed| p.first >= listed.first || p.id >= listed.id)
        {
            return Err(bad("segments listed out of order".into()));
        }
        segments.push(listed);
    }
    let next_id = too_big(u64_at(48))?;
    if segments.last().is_some_and(|s| s.id >= next_id) {
        return Err(bad(format!("a listed segment's id is not below {next_id}")));
    }
    let entries_count = u64_at(end);
    let mut at = HEADER_BYTES + listed_bytes;
    let body = &bytes[..end];
    let place_at = |at: usize| -> Result<u64> {
        let place = u64::from_le_bytes(
            body.get(at..at + 8)
                .ok_or_else(|| bad("an entry runs past the end".into()))?
                .try_into()
                .unwrap_or_default(),
        );
        if place & TOMBSTONE != 0 {
            return Err(bad(format!("an entry's place {place:#x} is out of range")));
        }
        Ok(place)
    };
    let capacity = usize::try_from(entries_count)
        .unwrap_or(usize::MAX)
        .min((end - at) / 9 + 1);
    let entries = match keys {
        LogKeys::U64 => {
            let mut v: Vec<(u64, u64)> = Vec::with_capacity(capacity);
            while at < end {
                let key = u64::from_be_bytes(
                    body.get(at..at + 8)
                        .ok_or_else(|| bad("an entry runs past the end".into()))?
                        .try_into()
                        .unwrap_or_default(),
                );
                let place = place_at(at + 8)?;
                if v.last().is_some_and(|&(k, _)| k >= key) {
                    return Err(bad("entries out of key order".into()));
                }
                v.push((key, place));
                at += 16;
            }
            Entries::U64(v)
        }
        LogKeys::Bytes => {
            let mut v: Vec<(Box<[u8]>, u64)> = Vec::with_capacity(capacity);
            while at < end {
                let (len, n) = get_varint(&body[at..])
                    .ok_or_else(|| bad("a key length runs past the end".into()))?;
                let len = usize::try_from(len)
                    .ok()
                    .filter(|l| (MIN_KEY_BYTES..=MAX_KEY_BYTES).contains(l))
                    .ok_or_else(|| bad(format!("a key of {len} bytes")))?;
                let start = at + n;
                let key = body
                    .get(start..start + len)
                    .ok_or_else(|| bad("a key runs past the end".into()))?;
                let place = place_at(start + len)?;
                if v.last().is_some_and(|(k, _)| &k[..] >= key) {
                    return Err(bad("entries out of key order".into()));
                }
                v.push((key.into(), place));
                at = start + len + 8;
            }
            Entries::Bytes(v)
        }
    };
    let found = match &entries {
        Entries::U64(v) => v.len(),
        Entries::Bytes(v) => v.len(),
    } as u64;
    if found != entries_count {
        return Err(bad(format!(
            "{found} entries, the trailer says {entries_count}"
        )));
    }
    Ok(Checkpoint {
        generation: u64_at(32),
        seq: u64_at(40),
        next_id,
        segments,
        entries,
    })
}

/// The checkpoint decoder, for the fuzz target: the bytes of a checkpoint of a store of
/// 8-byte keys (`u64_keys`) or of any length; returns its `seq`, segments listed and entries.
/// Never panics.
pub fn decode_checkpoint(bytes: &[u8], u64_keys: bool) -> Result<(Seq, usize, usize)> {
    let keys = if u64_keys {
        LogKeys::U64
    } else {
        LogKeys::Bytes
    };
    let c = decode("fuzz", bytes, keys)?;
    let entries = match &c.entries {
        Entries::U64(v) => v.len(),
        Entries::Bytes(v) => v.len(),
    };
    Ok((c.seq, c.segments.len(), entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, keys: LogKeys, entries: &[(&[u8], u64)]) -> (FileIdentity, PathBuf) {
        let segments = [
            Listed {
                first: 1,
                id: 0,
                ops: 10,
                len: 500,
            },
            Listed {
                first: 40,
                id: 3,
                ops: 2,
                len: 90,
            },
        ];
        let mut w = CheckpointWriter::create(dir, keys, 77, 5, 41, 4, &segments).unwrap();
        for (k, p) in entries {
            w.entry(k, *p).unwrap();
        }
        let id = w.finish().unwrap();
        (id, dir.join(checkpoint_name(5)))
    }

    #[test]
    fn checkpoints_round_trip_and_every_damage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (1u64.to_be_bytes(), 9u64.to_be_bytes());
        for (keys, entries) in [
            (LogKeys::U64, vec![(&a[..], 3u64), (&b[..], 1 << 40)]),
            (LogKeys::Bytes, vec![(&b"k"[..], 3u64), (&b"user1"[..], 77)]),
        ] {
            let (id, path) = write(dir.path(), keys, &entries);
            assert!(is_checkpoint_file(&checkpoint_name(5)));
            let back = read(&path, &id, 77, keys).unwrap();
            assert_eq!((back.seq, back.next_id, back.segments.len()), (41, 4, 2));
            let got: Vec<(Vec<u8>, u64)> = match back.entries {
                Entries::U64(v) => v
                    .into_iter()
                    .map(|(k, p)| (k.to_be_bytes().to_vec(), p))
                    .collect(),
                Entries::Bytes(v) => v.into_iter().map(|(k, p)| (k.to_vec(), p)).collect(),
            };
            let want: Vec<(Vec<u8>, u64)> = entries.iter().map(|(k, p)| (k.to_vec(), *p)).collect();
            assert_eq!(got, want);
            assert!(matches!(
                read(&path, &id, 78, keys),
                Err(Error::ForeignFile { .. })
            ));
            let bytes = fs::read(&path).unwrap();
            for cut in 0..bytes.len() {
                assert!(decode("c", &bytes[..cut], keys).is_err(), "cut {cut}");
            }
            for flip in 0..bytes.len() {
                let mut bad = bytes.clone();
                bad[flip] ^= 0x04;
                // The reserved bytes are not covered.
                if (68..72).contains(&flip) || flip >= bytes.len() - 4 {
                    continue;
                }
                assert!(decode("c", &bad, keys).is_err(), "flip {flip}");
            }
        }
        let (id, path) = write(dir.path(), LogKeys::U64, &[]);
        assert!(read(&path, &id, 77, LogKeys::Bytes).is_err());
    }

    #[test]
    fn entries_out_of_order_are_refused_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = CheckpointWriter::create(dir.path(), LogKeys::Bytes, 1, 1, 1, 1, &[]).unwrap();
        w.entry(b"b", 1).unwrap();
        assert!(w.entry(b"a", 1).is_err());
        assert!(w.entry(b"b", 1).is_err());
        assert!(w.entry(b"c", TOMBSTONE | 1).is_err());
        // Dropped unfinished, it leaves nothing behind.
        let tmp = dir.path().join(format!("{}.tmp", checkpoint_name(1)));
        assert!(tmp.exists());
        drop(w);
        assert!(!tmp.exists() && !dir.path().join(checkpoint_name(1)).exists());
        assert!(!is_checkpoint_file("log-1.ckpt"));
        assert!(is_checkpoint_file(&format!("{}.tmp", checkpoint_name(3))));
    }
}
