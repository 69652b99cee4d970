//! The table header: block 0 of a table file, and the key types a table holds.
//!
//! The header starts with the paper's 16 bytes (paper 000 §5.1: record count, key size, value
//! size); we add a magic number, a format version and a content fingerprint of the records, so
//! that a file derived from a table (a saved index, `join::table_index`) can be bound to
//! exactly the records it was built from. Its checks are the block checksum (the io layer's
//! crc32c trailer covers the header), the magic and version, the key size (8 = `u64`, 16 =
//! `str16`, the two key types a table holds), and the file size: a file with fewer blocks than
//! the count needs is [`Error::Truncated`], one with more is [`Error::Corrupt`].
//!
//! Header layout (block 0, little-endian; the rest of the block's payload is zero):
//!
//! | offset | size | field                                              |
//! |--------|------|----------------------------------------------------|
//! | 0      | 8    | record count                                       |
//! | 8      | 4    | key size in bytes (8 or 16)                        |
//! | 12     | 4    | value size in bytes                                |
//! | 16     | 8    | magic `"LIDXTABL"` ([`TABLE_MAGIC`])               |
//! | 24     | 4    | format version ([`TABLE_VERSION`], 2)              |
//! | 28     | 4    | reserved, 0                                        |
//! | 32     | 8    | content fingerprint ([`record_block_fingerprint`]) |
//!
//! Version 1 (before fingerprints) was the first 16 bytes alone, zeros after: it is refused
//! with [`Error::UnsupportedVersion`] (recreate the table with `lidx table create`), since a
//! saved index over it could not be bound to its records.
//!
//! The fingerprint is the wrapping sum, over the table's record blocks `b = 0, 1, ...`, of
//! XXH3-64 (seeded with `b`) of the block's record bytes (its records, key then value, without
//! the unused tail and the trailer). Seeding with the block number makes it depend on the
//! records' order; summing per block lets writers that fill a table in parallel stretches (a
//! join's output) add their parts; the writer computes it as it writes each buffer.

use std::hash::Hash;

use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::{Key, Str16};

/// Bytes of the table header.
pub const HEADER_BYTES: usize = 40;

/// Magic number of a table header ("LIDXTABL" read as little-endian bytes), at byte 16.
pub const TABLE_MAGIC: u64 = u64::from_le_bytes(*b"LIDXTABL");

/// Table format version written and read.
pub(super) const TABLE_VERSION: u32 = 2;

/// The fingerprint term of record block `block` holding `records` (its records' bytes): the
/// table's fingerprint is the wrapping sum of these over its record blocks (module docs). The
/// one fingerprint of derived files, shared with `lidx build`'s indexes, lives in the codec.
pub(super) use crate::codec::record_block_fingerprint;

/// Largest value a table accepts, in bytes (a record must fit one block in any case).
pub(super) const MAX_VALUE_SIZE: u32 = 1 << 16;

/// The key types a table holds: 8-byte integers and 16-byte strings (paper 000 §6.2). `Hash`
/// and `Eq` serve the hash joins.
pub trait TableKey: Key + Hash + Eq {}

impl TableKey for u64 {}
impl TableKey for Str16 {}

/// The key type name recorded by a key size, as [`Key::NAME`] spells it.
pub(super) fn key_name_of_size(key_size: u32) -> Option<&'static str> {
    match key_size {
        8 => Some(<u64 as Key>::NAME),
        16 => Some(<Str16 as Key>::NAME),
        _ => None,
    }
}

/// The table header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHeader {
    /// Number of records.
    pub count: u64,
    /// Key size in bytes: 8 (`u64`) or 16 (`str16`).
    pub key_size: u32,
    /// Value size in bytes (may be 0).
    pub value_size: u32,
    /// Content fingerprint of the records (module docs); 0 for an empty table.
    pub fingerprint: u64,
}

impl TableHeader {
    /// Bytes of one record.
    pub fn record_size(&self) -> usize {
        self.key_size as usize + self.value_size as usize
    }

    /// Records in one block of `payload` usable bytes (0 when a record does not fit).
    pub fn records_per_block(&self, payload: usize) -> usize {
        payload / self.record_size().max(1)
    }

    /// Blocks of the whole file: the header block and the record blocks.
    pub fn blocks(&self, payload: usize) -> u64 {
        let per = self.records_per_block(payload).max(1) as u64;
        1 + self.count.div_ceil(per)
    }

    /// The key type's name (`u64`, `str16`), or `?` for a key size no table has.
    pub fn key_name(&self) -> &'static str {
        key_name_of_size(self.key_size).unwrap_or("?")
    }

    /// Writes the [`HEADER_BYTES`] header bytes to `out[..HEADER_BYTES]`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.count.to_le_bytes());
        out[8..12].copy_from_slice(&self.key_size.to_le_bytes());
        out[12..16].copy_from_slice(&self.value_size.to_le_bytes());
        out[16..24].copy_from_slice(&TABLE_MAGIC.to_le_bytes());
        out[24..28].copy_from_slice(&TABLE_VERSION.to_le_bytes());
        out[28..32].fill(0);
        out[32..40].copy_from_slice(&self.fingerprint.to_le_bytes());
    }

    /// Decodes and checks a header from the payload of block 0 of `file`, for a device whose
    /// blocks have `payload` usable bytes: a key size of 8 or 16, a value size up to
    /// [`MAX_VALUE_SIZE`] with the record fitting one block, and a record count whose blocks
    /// fit in a `u64`; [`Error::BadMagic`] or [`Error::UnsupportedVersion`] for another file
    /// or format. Never panics.
    #[doc(hidden)]
    pub fn decode(file: &str, bytes: &[u8], payload: usize) -> Result<TableHeader> {
        let corrupt = |what: String| Error::Corrupt {
            file: file.to_string(),
            block: Some(0),
            what,
        };
        if bytes.len() < HEADER_BYTES {
            return Err(Error::Truncated {
                file: file.to_string(),
                what: format!("table header of {} bytes, need {HEADER_BYTES}", bytes.len()),
            });
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let magic = u64_at(16);
        let version = u32_at(24);
        if magic == 0 && version == 0 {
            // Version 1 had the first 16 bytes only, and zeros after them.
            return Err(Error::UnsupportedVersion {
                file: file.to_string(),
                got: 1,
                supported: TABLE_VERSION,
            });
        }
        if magic != TABLE_MAGIC {
            return Err(Error::BadMagic {
                file: file.to_string(),
                expected: TABLE_MAGIC,
                got: magic,
            });
        }
        if version != TABLE_VERSION {
            return Err(Error::UnsupportedVersion {
                file: file.to_string(),
                got: version,
                supported: TABLE_VERSION,
            });
        }
        if u32_at(28) != 0 {
            return Err(corrupt("reserved header bytes are not zero".to_string()));
        }
        let header = TableHeader {
            count: u64_at(0),
            key_size: u32_at(8),
            value_size: u32_at(12),
            fingerprint: u64_at(32),
        };
        if key_name_of_size(header.key_size).is_none() {
            return Err(corrupt(format!(
                "key size {} (a table holds u64 keys of 8 bytes or str16 keys of 16)",
                header.key_size
            )));
        }
        if header.value_size > MAX_VALUE_SIZE || header.records_per_block(payload) == 0 {
            return Err(corrupt(format!(
                "value size {} does not fit a block of {payload} usable bytes",
                header.value_size
            )));
        }
        if header.count > (1 << 48) {
            return Err(corrupt(format!(
                "record count {} is implausible",
                header.count
            )));
        }
        Ok(header)
    }
}

/// Reads the header of the table `name` without choosing a key type: what the CLI does to
/// dispatch on `u64` or `str16`.
pub fn read_header(storage: &Storage, name: &str) -> Result<TableHeader> {
    let device = storage
        .open(name, false)
        .map_err(|e| not_a_table(storage, name, e))?;
    read_header_of(device.as_ref()).map_err(|e| not_a_table(storage, name, e))
}

/// `err`, the error of opening `name` or reading its table header, or [`Error::NotATable`]
/// when the file's own bytes show that it never was a table: a file that is not whole blocks
/// or whose block 0 fails its checksum or magic, and whose bytes 16..24 are not
/// [`TABLE_MAGIC`] (a text file given as a table is not a "truncated" or "damaged" one).
/// Only a file device's bytes can be read raw; a simulated one keeps `err`.
pub(super) fn not_a_table(storage: &Storage, name: &str, err: Error) -> Error {
    use std::io::Read;
    let unreadable = matches!(
        err,
        Error::Truncated { .. } | Error::ChecksumMismatch { block: 0, .. } | Error::BadMagic { .. }
    );
    let Some(dir) = storage.dir().filter(|_| unreadable) else {
        return err;
    };
    let mut head = Vec::with_capacity(64);
    let read = std::fs::File::open(dir.join(name)).and_then(|f| f.take(64).read_to_end(&mut head));
    if read.is_err() || head.is_empty() || head.get(16..24) == Some(&TABLE_MAGIC.to_le_bytes()[..])
    {
        return err;
    }
    let text = head
        .iter()
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace());
    let what = match head.get(16..24) {
        _ if text => "it starts with text, not a table header".to_string(),
        Some(magic) => format!(
            "no table magic \"LIDXTABL\" at byte 16, it holds {:#018x} there",
            u64::from_le_bytes(magic.try_into().expect("8 bytes"))
        ),
        None => format!("{} bytes, shorter than a table header", head.len()),
    };
    Error::NotATable {
        file: name.to_string(),
        what,
    }
}

pub(super) fn read_header_of(device: &dyn BlockDevice) -> Result<TableHeader> {
    if device.len_blocks() == 0 {
        return Err(Error::Truncated {
            file: device.name().to_string(),
            what: "empty file, no table header".to_string(),
        });
    }
    let mut block = AlignedBuf::zeroed(device.block_size());
    device.read_blocks(0, &mut block, IoClass::Header)?;
    let header = TableHeader::decode(
        device.name(),
        &block[..device.payload_size()],
        device.payload_size(),
    )?;
    let want = header.blocks(device.payload_size());
    let have = device.len_blocks();
    if have < want {
        return Err(Error::Truncated {
            file: device.name().to_string(),
            what: format!(
                "{have} blocks, the header's {} records need {want}",
                header.count
            ),
        });
    }
    if have > want {
        return Err(Error::Corrupt {
            file: device.name().to_string(),
            block: None,
            what: format!(
                "{have} blocks, more than the {want} the header's {} records need",
                header.count
            ),
        });
    }
    Ok(header)
}

/// Checks that two tables hold the same key type: [`Error::KeyTypeMismatch`] naming `file`
/// (the right side) otherwise.
pub fn check_same_key_type(left: &TableHeader, right: &TableHeader, file: &str) -> Result<()> {
    if left.key_size == right.key_size {
        return Ok(());
    }
    Err(Error::KeyTypeMismatch {
        file: file.to_string(),
        expected: left.key_name(),
        got: right.key_name().to_string(),
    })
}
