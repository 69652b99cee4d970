//! The codec of records and segment headers: frames, bodies, and the segment header.

use crate::disk::seq::Seq;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::kv::stamp::{check_length_and_crc, check_magic_version, corrupt, le_u32, le_u64};

/// Magic number at the start of every segment: `lidxWAL1`.
pub(super) const SEGMENT_MAGIC: u64 = u64::from_le_bytes(*b"lidxWAL1");
/// Format version of segments and records (2: the header names the store the segment
/// belongs to; 3: the header's flags, [`SEALED_UNSYNCED`]). Version 2 segments are read: their
/// flags field is reserved and 0.
pub(super) const VERSION: u32 = 3;
/// The oldest segment version still read.
const OLDEST_VERSION: u32 = 2;
/// Header flag: the writer may seal this segment without an fsync ([`super::WalOptions`]'s
/// `seal_unsynced` under [`super::FsyncPolicy::Never`]), so after a power loss it may end
/// torn even though later segments exist; replay treats its end as it treats the last
/// segment's.
pub const SEALED_UNSYNCED: u32 = 1;
/// Size of a segment header.
pub const SEGMENT_HEADER_BYTES: usize = 48;
/// Bytes of a segment header its checksum covers.
const SEGMENT_CRC_AT: usize = 40;
/// Size of a record's frame (crc, length, sequence number) before its body.
pub const FRAME_BYTES: usize = 16;
/// Largest record body accepted, on append and on read (1 GiB).
pub const MAX_BODY_BYTES: usize = 1 << 30;

pub(super) const KIND_PUT: u8 = 1;
pub(super) const KIND_DELETE: u8 = 2;
pub(super) const KIND_BATCH: u8 = 3;
/// Bytes of a body before the key: kind and key length.
pub(super) const BODY_PREFIX: usize = 5;

/// One logged operation. Keys are the [`Key::write_to`] bytes of a key (see
/// [`Record::key_as`]); values are any bytes, fixed or variable length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// Insert or update `key` with `value`.
    Put {
        /// The key's on-disk bytes.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Delete `key` (a tombstone in the dynamic stage).
    Delete {
        /// The key's on-disk bytes.
        key: &'a [u8],
    },
    /// Several operations that are applied all or not at all: one record, one sequence
    /// number, so a torn tail cuts a batch whole. `ops` is the owner's encoding (the store's
    /// is [`crate::kv::WriteBatch`]'s); the log only frames and checksums it.
    Batch {
        /// The encoded operations.
        ops: &'a [u8],
    },
}

impl<'a> Record<'a> {
    /// The key bytes; empty for a [`Record::Batch`].
    pub fn key(&self) -> &'a [u8] {
        match *self {
            Record::Put { key, .. } | Record::Delete { key } => key,
            Record::Batch { .. } => &[],
        }
    }

    /// The key decoded as a `K`; [`Error::KeyTypeMismatch`] when its length is not `K::SIZE`.
    pub fn key_as<K: Key>(&self) -> Result<K> {
        let key = self.key();
        if key.len() != K::SIZE {
            return Err(Error::KeyTypeMismatch {
                file: "write-ahead log record".to_string(),
                expected: K::NAME,
                got: format!("a {}-byte key", key.len()),
            });
        }
        Ok(K::read_from(key))
    }

    /// Bytes this record takes in the log, frame included.
    pub fn encoded_len(&self) -> usize {
        FRAME_BYTES + self.body_len()
    }

    pub(super) fn body_len(&self) -> usize {
        BODY_PREFIX
            + match *self {
                Record::Put { key, value } => key.len() + value.len(),
                Record::Delete { key } => key.len(),
                Record::Batch { ops } => ops.len(),
            }
    }
}

/// Appends record `seq` to `out`.
pub fn encode_record(seq: Seq, record: &Record<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    let body = record.body_len() as u32;
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&body.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    let (kind, key, value): (u8, &[u8], &[u8]) = match *record {
        Record::Put { key, value } => (KIND_PUT, key, value),
        Record::Delete { key } => (KIND_DELETE, key, &[]),
        Record::Batch { ops } => (KIND_BATCH, &[], ops),
    };
    out.push(kind);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
}

/// A frame whose length and checksum are right: (sequence number, body, total bytes).
/// `Truncated` when `bytes` ends inside the frame, `Corrupt` when the checksum fails. `offset`
/// only names the place in errors.
pub(super) fn decode_frame<'a>(
    file: &str,
    offset: u64,
    bytes: &'a [u8],
) -> Result<(Seq, &'a [u8], usize)> {
    if bytes.len() < FRAME_BYTES {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!(
                "record at offset {offset} has {} of its {FRAME_BYTES} frame bytes",
                bytes.len()
            ),
        });
    }
    let len = le_u32(bytes, 4) as usize;
    if len > MAX_BODY_BYTES {
        return Err(corrupt(
            file,
            format!(
                "record at offset {offset} claims {len} body bytes, more than {MAX_BODY_BYTES}"
            ),
        ));
    }
    if bytes.len() - FRAME_BYTES < len {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!(
                "record at offset {offset} has {} of its {len} body bytes",
                bytes.len() - FRAME_BYTES
            ),
        });
    }
    let end = FRAME_BYTES + len;
    let stored = le_u32(bytes, 0);
    let got = crc32c::crc32c(&bytes[4..end]);
    if stored != got {
        return Err(corrupt(
            file,
            format!("record at offset {offset}: checksum {got:#010x}, written as {stored:#010x}"),
        ));
    }
    Ok((le_u64(bytes, 8), &bytes[FRAME_BYTES..end], end))
}

pub(super) fn decode_body<'a>(file: &str, offset: u64, body: &'a [u8]) -> Result<Record<'a>> {
    if body.len() < BODY_PREFIX {
        return Err(corrupt(
            file,
            format!("record at offset {offset} has a {}-byte body", body.len()),
        ));
    }
    let key_len = le_u32(body, 1) as usize;
    if key_len > body.len() - BODY_PREFIX {
        return Err(corrupt(
            file,
            format!("record at offset {offset}: key length {key_len} exceeds its body"),
        ));
    }
    let key = &body[BODY_PREFIX..BODY_PREFIX + key_len];
    let rest = &body[BODY_PREFIX + key_len..];
    match body[0] {
        KIND_PUT => Ok(Record::Put { key, value: rest }),
        KIND_DELETE if rest.is_empty() => Ok(Record::Delete { key }),
        KIND_DELETE => Err(corrupt(
            file,
            format!(
                "delete record at offset {offset} has {} trailing bytes",
                rest.len()
            ),
        )),
        KIND_BATCH if key_len == 0 => Ok(Record::Batch { ops: rest }),
        KIND_BATCH => Err(corrupt(
            file,
            format!("batch record at offset {offset} has a {key_len}-byte key"),
        )),
        kind => Err(corrupt(
            file,
            format!("record at offset {offset} has unknown kind {kind}"),
        )),
    }
}

/// Decodes the record at the start of `bytes` (read at `offset` of `file`): its sequence
/// number, the record and the bytes it takes. `Truncated` when `bytes` ends inside it,
/// `Corrupt` for a bad checksum or body. Never panics.
pub fn decode_record<'a>(
    file: &str,
    offset: u64,
    bytes: &'a [u8],
) -> Result<(Seq, Record<'a>, usize)> {
    let (seq, body, n) = decode_frame(file, offset, bytes)?;
    Ok((seq, decode_body(file, offset, body)?, n))
}

/// Writes the header of a segment whose first record is `first`, of the log of the store
/// `owner` (0: a log outside a store), with `flags` (0 or [`SEALED_UNSYNCED`]). A segment
/// without flags is written as version 2, which older builds read too; version 3 only when a
/// flag is set.
pub fn encode_segment_header(first: Seq, owner: u128, flags: u32) -> [u8; SEGMENT_HEADER_BYTES] {
    let version = if flags == 0 { OLDEST_VERSION } else { VERSION };
    let mut b = [0u8; SEGMENT_HEADER_BYTES];
    b[0..8].copy_from_slice(&SEGMENT_MAGIC.to_le_bytes());
    b[8..12].copy_from_slice(&version.to_le_bytes());
    b[12..16].copy_from_slice(&flags.to_le_bytes());
    b[16..24].copy_from_slice(&first.to_le_bytes());
    b[24..40].copy_from_slice(&owner.to_le_bytes());
    let crc = crc32c::crc32c(&b[..SEGMENT_CRC_AT]);
    b[SEGMENT_CRC_AT..SEGMENT_CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

/// A decoded segment header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SegmentHeader {
    /// Sequence number of the segment's first record.
    pub(super) first: Seq,
    /// The store the segment belongs to (0: none).
    pub(super) owner: u128,
    /// 0 or [`SEALED_UNSYNCED`].
    pub(super) flags: u32,
}

impl SegmentHeader {
    /// True when the segment may end torn though later segments exist ([`SEALED_UNSYNCED`]).
    pub(super) fn sealed_unsynced(&self) -> bool {
        self.flags & SEALED_UNSYNCED != 0
    }
}

/// Reads a segment header. Magic, version (2 or 3), length, checksum, flags and reserved
/// bytes are checked, in that order. Never panics.
pub(super) fn decode_segment_header(file: &str, bytes: &[u8]) -> Result<SegmentHeader> {
    let version = if bytes.len() >= 12 {
        le_u32(bytes, 8)
    } else {
        0
    };
    let accepted = if (OLDEST_VERSION..=VERSION).contains(&version) {
        version
    } else {
        VERSION
    };
    check_magic_version(file, bytes, SEGMENT_MAGIC, accepted)?;
    check_length_and_crc(
        file,
        bytes,
        SEGMENT_HEADER_BYTES,
        SEGMENT_CRC_AT,
        "segment header",
    )?;
    let flags = le_u32(bytes, 12);
    let known = if version >= 3 { SEALED_UNSYNCED } else { 0 };
    if flags & !known != 0 || le_u32(bytes, SEGMENT_CRC_AT + 4) != 0 {
        return Err(corrupt(
            file,
            format!("segment header (version {version}) has unknown flags or reserved bytes that are not 0"),
        ));
    }
    let first = le_u64(bytes, 16);
    if first == 0 {
        return Err(corrupt(file, "segment starts at sequence number 0".into()));
    }
    let mut owner = [0u8; 16];
    owner.copy_from_slice(&bytes[24..40]);
    Ok(SegmentHeader {
        first,
        owner: u128::from_le_bytes(owner),
        flags,
    })
}
