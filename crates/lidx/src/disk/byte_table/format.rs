//! The byte table's header, parameters, varints and separators.
//!
//! Header (block 0 payload, little-endian):
//!
//! | offset | size | field                                                  |
//! |--------|------|--------------------------------------------------------|
//! | 0      | 8    | magic `lidxBTB1`                                       |
//! | 8      | 4    | format version (4; 1 to 3 are read too)                |
//! | 12     | 4    | block size the file was written with                   |
//! | 16     | 4    | model `eps`                                            |
//! | 20     | 4    | model `threshold`                                      |
//! | 24     | 8    | records                                                |
//! | 32     | 8    | data blocks (blocks `1..=data_blocks`)                 |
//! | 40     | 8    | bytes of the record stream                             |
//! | 48     | 8    | separator entries                                      |
//! | 56     | 8    | bytes of the separator stream (in the blocks after the data) |
//! | 64     | 8    | total key bytes                                        |
//! | 72     | 8    | total value bytes                                      |
//! | 80     | 4    | shortest key's length (0: not recorded)                |
//! | 84     | 4    | longest key's length (0: not recorded)                 |
//! | 88     | 24   | owner: store id and generation ([`crate::disk::owner`]) |
//! | 112    | 4    | kind: 0 a table, 1 an `lsm` run ([`ByteTableKind`])    |
//! | 116    | 4    | the key filter's hashes (0: no filter, see `filter`)   |
//! | 120    | 4    | the key filter's scheme                                |
//! | 124    | 8    | the key filter's 64-bit words (in the blocks after the separators) |
//!
//! The key lengths were added without a version change: a table written before them has
//! zeros there (the header block is zero-filled) and opens with the general locator.
//!
//! Version 2 pads: a record that fits in a block but not in what is left of the current one
//! starts the next block instead, the rest of the current one zeros (a zero where a record
//! would start: no key is empty), so a lookup of such a record reads one block. Version 1
//! let every record run on (1000-byte values straddled a boundary one time in four, 1.24
//! blocks per lookup); its files are read as they are.
//!
//! Version 3 records the table's owner (issue 30): the store it belongs to and its generation
//! there, so that a store refuses a table copied from another store or an older one of its
//! own. Versions 1 and 2 are read with owner [`FileOwner::NONE`] (a table saved outside a
//! store); a store's tables are version 3 or later.
//!
//! The kind and the key filter were added in version 3 without a version change, as the key
//! lengths were: a table written before them has zeros there, a plain table without a filter,
//! which is what the `hybrid` engine still writes. An `lsm` run's values each start with a tag
//! byte (a put or a tombstone, `crate::kv::store::lsm`), so a run must never be read as a
//! table of values: the kind says which it is, and the store checks it on open.
//!
//! Version 4 gives each data block a point index: the last two bytes of its payload
//! ([`super::slots::FOOTER`]) leave the record stream and count the buckets of a hash table
//! from the block's keys to its records, kept in the block's padding ([`super::slots`]). A
//! block's record stream is two bytes shorter than in versions 1 to 3, which are read as they
//! are.

use super::filter::{max_words, FILTER_SCHEME};
use crate::disk::owner::{FileOwner, OWNER_BYTES};
use crate::error::{Error, Result};
use crate::mem::string_index::StringIndexParams;

/// Magic number of a byte table: `lidxBTB1`.
pub const BYTE_TABLE_MAGIC: u64 = u64::from_le_bytes(*b"lidxBTB1");
/// Format version of byte tables (see the module docs for what 2, 3 and 4 changed).
pub const BYTE_TABLE_VERSION: u32 = 4;
/// Offset of the owner stamp (version 3).
const OWNER_AT: usize = 88;
/// Offset of the kind and the key filter's fields.
const KIND_AT: usize = OWNER_AT + OWNER_BYTES;
/// Bytes of the header fields.
pub(crate) const HEADER_BYTES: usize = KIND_AT + 20;
/// Bytes at the start of every data block: the offset of its first record start.
pub(crate) const BLOCK_PREFIX: usize = 2;
/// The block prefix of a data block in which no record starts.
pub(crate) const NO_START: u16 = u16::MAX;

/// Record-stream bytes of each data block of a table of `version` written with `block_size`
/// blocks: the payload less the prefix, and from version 4 less the point index's footer.
pub(crate) fn stream_cap(block_size: usize, version: u32) -> usize {
    let footer = if version >= 4 {
        super::slots::FOOTER
    } else {
        0
    };
    block_size - crate::io::checksum::BLOCK_TRAILER - BLOCK_PREFIX - footer
}

/// How a byte table is built: its model's parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteTableParams {
    /// The separator model's parameters (see `crate::mem::string_index`).
    pub model: StringIndexParams,
}

/// What a byte table's records are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ByteTableKind {
    /// Keys and their values: a table of its own or the `hybrid` engine's static stage.
    #[default]
    Table,
    /// A sorted run of the `lsm` engine: every value starts with a tag byte saying whether
    /// the record is a put (the value follows), a tombstone, or a reference to the value in a
    /// value log segment.
    Run,
    /// A segment of the `lsm` engine's value log: the values its runs refer to, under their
    /// keys.
    Values,
}

impl ByteTableKind {
    fn code(self) -> u64 {
        match self {
            ByteTableKind::Table => 0,
            ByteTableKind::Run => 1,
            ByteTableKind::Values => 2,
        }
    }
}

/// A byte table's key filter as its header records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterShape {
    /// Hashes per key.
    pub hashes: u32,
    /// 64-bit words of filter bits.
    pub words: u64,
}

/// What a byte table's header records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteTableHeader {
    /// Format version the file was written with (1 or 2: from 2 on, records that fit a
    /// block do not straddle one).
    pub version: u32,
    /// Block size the file was written with.
    pub block_size: u32,
    /// Model parameters.
    pub params: ByteTableParams,
    /// Records in the table.
    pub records: u64,
    /// Data blocks (blocks `1..=data_blocks`).
    pub data_blocks: u64,
    /// Bytes of the record stream.
    pub stream_bytes: u64,
    /// Separator entries.
    pub entries: u64,
    /// Bytes of the separator stream.
    pub index_bytes: u64,
    /// Sum of the key lengths.
    pub key_bytes: u64,
    /// Sum of the value lengths.
    pub value_bytes: u64,
    /// The shortest and longest key's lengths, `(0, 0)` when not recorded.
    pub key_lens: (u32, u32),
    /// The store and generation the table belongs to ([`FileOwner::NONE`] outside a store
    /// and before version 3).
    pub owner: FileOwner,
    /// What the records are.
    pub kind: ByteTableKind,
    /// The key filter, when the table has one.
    pub filter: Option<FilterShape>,
}

impl ByteTableHeader {
    /// Writes the header into the start of `out` (a block payload).
    pub(crate) fn encode(&self, out: &mut [u8]) {
        let h = self;
        let fields: [(usize, u64, usize); 14] = [
            (0, BYTE_TABLE_MAGIC, 8),
            (8, u64::from(h.version), 4),
            (12, u64::from(h.block_size), 4),
            (16, h.params.model.eps as u64, 4),
            (20, h.params.model.threshold as u64, 4),
            (24, h.records, 8),
            (32, h.data_blocks, 8),
            (40, h.stream_bytes, 8),
            (48, h.entries, 8),
            (56, h.index_bytes, 8),
            (64, h.key_bytes, 8),
            (72, h.value_bytes, 8),
            (80, u64::from(h.key_lens.0), 4),
            (84, u64::from(h.key_lens.1), 4),
        ];
        for (at, v, n) in fields {
            out[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        h.owner.encode_at(out, OWNER_AT);
        let filter = h.filter.unwrap_or(FilterShape {
            hashes: 0,
            words: 0,
        });
        let tail: [(usize, u64, usize); 4] = [
            (KIND_AT, h.kind.code(), 4),
            (KIND_AT + 4, u64::from(filter.hashes), 4),
            (
                KIND_AT + 8,
                u64::from(FILTER_SCHEME) * u64::from(h.filter.is_some()),
                4,
            ),
            (KIND_AT + 12, filter.words, 8),
        ];
        for (at, v, n) in tail {
            out[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
    }

    /// Blocks the separator stream takes.
    pub fn index_blocks(&self) -> u64 {
        let cap =
            (self.block_size as u64).saturating_sub(crate::io::checksum::BLOCK_TRAILER as u64);
        self.index_bytes.div_ceil(cap.max(1))
    }

    /// Blocks the key filter takes, after the separator stream's.
    pub fn filter_blocks(&self) -> u64 {
        let cap =
            (self.block_size as u64).saturating_sub(crate::io::checksum::BLOCK_TRAILER as u64);
        self.filter
            .map_or(0, |f| f.words.saturating_mul(8).div_ceil(cap.max(1)))
    }
}

fn le(bytes: &[u8], at: usize, n: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&bytes[at..at + n]);
    u64::from_le_bytes(b)
}

/// Decodes and checks a header read from block 0 of `file` (a device of `block_size`-byte
/// blocks and `len_blocks` blocks). Every field is checked against the others and the file's
/// size, so a table that opens has consistent counts; never panics.
pub(super) fn decode_header(
    file: &str,
    payload: &[u8],
    block_size: usize,
    len_blocks: u64,
) -> Result<ByteTableHeader> {
    if payload.len() < HEADER_BYTES {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("header of {} bytes, {HEADER_BYTES} needed", payload.len()),
        });
    }
    let magic = le(payload, 0, 8);
    if magic != BYTE_TABLE_MAGIC {
        return Err(Error::BadMagic {
            file: file.to_string(),
            expected: BYTE_TABLE_MAGIC,
            got: magic,
        });
    }
    let version = le(payload, 8, 4) as u32;
    if !(1..=BYTE_TABLE_VERSION).contains(&version) {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: version,
            supported: BYTE_TABLE_VERSION,
        });
    }
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(0),
        what,
    };
    let mut h = ByteTableHeader {
        version,
        block_size: le(payload, 12, 4) as u32,
        params: ByteTableParams {
            model: StringIndexParams {
                eps: le(payload, 16, 4) as usize,
                threshold: le(payload, 20, 4) as usize,
            },
        },
        records: le(payload, 24, 8),
        data_blocks: le(payload, 32, 8),
        stream_bytes: le(payload, 40, 8),
        entries: le(payload, 48, 8),
        index_bytes: le(payload, 56, 8),
        key_bytes: le(payload, 64, 8),
        value_bytes: le(payload, 72, 8),
        key_lens: (le(payload, 80, 4) as u32, le(payload, 84, 4) as u32),
        owner: if version >= 3 {
            FileOwner::decode_at(payload, OWNER_AT).unwrap_or_default()
        } else {
            FileOwner::NONE
        },
        kind: ByteTableKind::Table,
        filter: None,
    };
    if version >= 3 {
        h.kind = match le(payload, KIND_AT, 4) {
            0 => ByteTableKind::Table,
            1 => ByteTableKind::Run,
            2 => ByteTableKind::Values,
            k => return Err(bad(format!("unknown table kind {k}"))),
        };
        let (hashes, scheme, words) = (
            le(payload, KIND_AT + 4, 4) as u32,
            le(payload, KIND_AT + 8, 4) as u32,
            le(payload, KIND_AT + 12, 8),
        );
        if (hashes, scheme, words) != (0, 0, 0) {
            if scheme != FILTER_SCHEME {
                return Err(bad(format!(
                    "a key filter of scheme {scheme}, this build reads scheme {FILTER_SCHEME}"
                )));
            }
            if hashes == 0 || words == 0 || words > max_words(h.records) {
                return Err(bad(format!(
                    "a key filter of {words} words with {hashes} hashes for {} records",
                    h.records
                )));
            }
            h.filter = Some(FilterShape { hashes, words });
        }
    }
    if block_size > 1 << 16 {
        return Err(bad(format!(
            "{block_size}-byte blocks: a byte table's in-block offsets are 16-bit, so its blocks \
             are at most 65536 bytes"
        )));
    }
    if h.block_size as usize != block_size {
        return Err(bad(format!(
            "written with {}-byte blocks, opened with {block_size}-byte blocks",
            h.block_size
        )));
    }
    if h.params.model.eps == 0 || h.params.model.threshold == 0 {
        return Err(bad("model eps and threshold must be at least 1".into()));
    }
    let (short, long) = h.key_lens;
    let recorded = (short, long) != (0, 0);
    if recorded
        && (short == 0
            || short > long
            || u128::from(short) * u128::from(h.records) > u128::from(h.key_bytes)
            || u128::from(long) * u128::from(h.records) < u128::from(h.key_bytes))
    {
        return Err(bad(format!(
            "keys of {short} to {long} bytes cannot sum to {} bytes over {} records",
            h.key_bytes, h.records
        )));
    }
    let cap = stream_cap(block_size, h.version) as u64;
    if h.stream_bytes.div_ceil(cap) != h.data_blocks {
        return Err(bad(format!(
            "{} stream bytes need {} data blocks, the header says {}",
            h.stream_bytes,
            h.stream_bytes.div_ceil(cap),
            h.data_blocks
        )));
    }
    let need = 1 + h.data_blocks as u128 + h.index_blocks() as u128 + h.filter_blocks() as u128;
    if need > len_blocks as u128 {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("{len_blocks} blocks, the header describes {need}"),
        });
    }
    if h.entries > h.data_blocks || h.entries > h.records || (h.records > 0) != (h.entries > 0) {
        return Err(bad(format!(
            "{} separators for {} records in {} data blocks",
            h.entries, h.records, h.data_blocks
        )));
    }
    // Up to 10 bytes of lengths per record, and from version 2 less than a block of padding
    // per data block.
    let overhead = h.records.saturating_mul(10);
    let padding = if h.version >= 2 {
        h.data_blocks.saturating_mul(cap)
    } else {
        0
    };
    if h.key_bytes.saturating_add(h.value_bytes) > h.stream_bytes
        || h.stream_bytes
            > h.key_bytes
                .saturating_add(h.value_bytes)
                .saturating_add(overhead)
                .saturating_add(padding)
    {
        return Err(bad(format!(
            "{} key and {} value bytes do not fit a {}-byte stream of {} records",
            h.key_bytes, h.value_bytes, h.stream_bytes, h.records
        )));
    }
    Ok(h)
}

/// The shortest prefix of `key` that is above `previous` (so `previous < s <= key`), which is
/// enough to route between the two. `key` must be above `previous`.
pub(crate) fn shortest_separator<'a>(previous: &[u8], key: &'a [u8]) -> &'a [u8] {
    let common = previous.iter().zip(key).take_while(|(a, b)| a == b).count();
    &key[..(common + 1).min(key.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_route_between_neighbours() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"apple", b"apricot"),
            (b"ab", b"abc"),
            (b"a", b"b"),
            (b"", b"x"),
            (b"abc\xff", b"abd"),
        ];
        for (p, k) in cases {
            let s = shortest_separator(p, k);
            assert!(p < s && s <= k, "{p:?} < {s:?} <= {k:?}");
        }
        assert_eq!(shortest_separator(b"apple", b"apricot"), b"apr");
    }

    #[test]
    fn header_round_trips_and_checks_counts() {
        let h = ByteTableHeader {
            version: BYTE_TABLE_VERSION,
            block_size: 4096,
            params: ByteTableParams::default(),
            records: 10,
            data_blocks: 1,
            stream_bytes: 100,
            entries: 1,
            index_bytes: 5,
            key_bytes: 40,
            value_bytes: 40,
            key_lens: (4, 4),
            owner: FileOwner {
                store: 7,
                generation: 3,
            },
            kind: ByteTableKind::Table,
            filter: None,
        };
        let mut block = vec![0u8; 4092];
        h.encode(&mut block);
        assert_eq!(decode_header("t", &block, 4096, 3).unwrap(), h);
        // A run with a filter: its blocks are counted, and a filter too large for the records,
        // an unknown scheme or kind is refused.
        let run = ByteTableHeader {
            kind: ByteTableKind::Run,
            filter: Some(FilterShape {
                hashes: 7,
                words: 2,
            }),
            ..h
        };
        let mut with_filter = vec![0u8; 4092];
        run.encode(&mut with_filter);
        assert_eq!(decode_header("t", &with_filter, 4096, 4).unwrap(), run);
        assert!(matches!(
            decode_header("t", &with_filter, 4096, 3),
            Err(Error::Truncated { .. })
        ));
        // A filter larger than the file is refused before anything is read, and so is one
        // over 512 bits a record.
        let mut huge = with_filter.clone();
        huge[131] = 1;
        assert!(decode_header("t", &huge, 4096, u64::MAX).is_err());
        for (at, byte) in [(112, 3u8), (120, 9), (116, 0), (124, 81)] {
            let mut bad = with_filter.clone();
            bad[at] = byte;
            assert!(
                matches!(
                    decode_header("t", &bad, 4096, 4),
                    Err(Error::Corrupt { .. })
                ),
                "byte {at} = {byte}"
            );
        }
        // Key lengths that cannot add up to the key bytes are refused.
        let mut lens = block.clone();
        lens[84] = 3;
        assert!(matches!(
            decode_header("t", &lens, 4096, 3),
            Err(Error::Corrupt { .. })
        ));
        assert!(matches!(
            decode_header("t", &block, 4096, 2),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            decode_header("t", &block, 8192, 3),
            Err(Error::Corrupt { .. })
        ));
        // Versions 1 and 2 are read (without an owner); a newer one is refused by name.
        let mut v1 = block.clone();
        v1[8] = 1;
        let old = decode_header("t", &v1, 4096, 3).unwrap();
        assert_eq!((old.version, old.owner), (1, FileOwner::NONE));
        let mut newer = block.clone();
        newer[8] = BYTE_TABLE_VERSION as u8 + 1;
        assert!(matches!(
            decode_header("t", &newer, 4096, 3),
            Err(Error::UnsupportedVersion { got, .. }) if got == BYTE_TABLE_VERSION + 1
        ));
        block[24] = 0;
        assert!(matches!(
            decode_header("t", &block, 4096, 3),
            Err(Error::Corrupt { .. })
        ));
    }
}
