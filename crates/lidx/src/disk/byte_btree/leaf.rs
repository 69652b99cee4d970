//! Leaf pages: sorted records of variable length in one block, with a slot array for binary
//! search, and the records too large for a leaf, which live in overflow runs.
//!
//! Leaf payload (the block minus its checksum trailer), little-endian:
//!
//! | offset        | size        | field                                            |
//! |---------------|-------------|--------------------------------------------------|
//! | 0             | 1           | kind: 1 (leaf)                                   |
//! | 1             | 1           | reserved, 0                                      |
//! | 2             | 2           | records `n`                                      |
//! | 4             | 4           | bytes used (header, slots and records)           |
//! | 8             | 2 `n`       | slots: the offset of each record, in key order   |
//! | ...           |             | records                                          |
//!
//! A record is `key length u16, tag u8, value length u32`, then for tag 0 (inline) the key and
//! the value, for tag 1 (overflow) the first block of its run (u64), a prefix length (u8) and
//! the key's first bytes (at most [`PREFIX_MAX`]). An overflow run is the key then the value,
//! written over consecutive blocks of the page file; a record goes there when its inline form
//! would take more than half a leaf ([`Geometry::inline_max`]), so every leaf holds at least
//! two records and a split always has room. With 4 KiB blocks that is any record of more than
//! about 2 KiB of key and value together.

use crate::error::{Error, Result};

/// Kind byte of a leaf page.
pub(crate) const LEAF_KIND: u8 = 1;
/// Bytes of a leaf's header.
pub(crate) const LEAF_HEADER: usize = 8;
/// Bytes of a record's fixed part: key length, tag, value length.
const RECORD_FIXED: usize = 7;
/// Key bytes an overflow record keeps in its leaf, so most comparisons need no extra read.
pub(crate) const PREFIX_MAX: usize = 64;

/// Sizes that follow from the block's payload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    /// Usable bytes of a block.
    pub(crate) payload: usize,
}

impl Geometry {
    /// Largest record kept inline (fixed part, key and value; its slot not counted).
    pub(crate) fn inline_max(self) -> usize {
        (self.payload - LEAF_HEADER) / 2 - 2
    }

    /// Blocks of an overflow run of `bytes`.
    pub(crate) fn run_blocks(self, bytes: usize) -> u64 {
        bytes.div_ceil(self.payload).max(1) as u64
    }
}

/// A record read in place from a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotRef<'a> {
    Inline {
        key: &'a [u8],
        value: &'a [u8],
    },
    Overflow {
        prefix: &'a [u8],
        klen: usize,
        vlen: usize,
        first: u64,
    },
}

impl SlotRef<'_> {
    /// Key and value lengths.
    pub(crate) fn lens(&self) -> (usize, usize) {
        match *self {
            SlotRef::Inline { key, value } => (key.len(), value.len()),
            SlotRef::Overflow { klen, vlen, .. } => (klen, vlen),
        }
    }
}

/// The encoded record of `key` and `value` kept inline.
pub(crate) fn encode_inline(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(RECORD_FIXED + key.len() + value.len());
    r.extend_from_slice(&(key.len() as u16).to_le_bytes());
    r.push(0);
    r.extend_from_slice(&(value.len() as u32).to_le_bytes());
    r.extend_from_slice(key);
    r.extend_from_slice(value);
    r
}

/// The encoded record of `key` (and a value of `vlen` bytes) whose run starts at `first`.
pub(crate) fn encode_overflow(key: &[u8], vlen: usize, first: u64) -> Vec<u8> {
    let prefix = &key[..key.len().min(PREFIX_MAX)];
    let mut r = Vec::with_capacity(RECORD_FIXED + 9 + prefix.len());
    r.extend_from_slice(&(key.len() as u16).to_le_bytes());
    r.push(1);
    r.extend_from_slice(&(vlen as u32).to_le_bytes());
    r.extend_from_slice(&first.to_le_bytes());
    r.push(prefix.len() as u8);
    r.extend_from_slice(prefix);
    r
}

/// Bytes a record takes in a leaf: its encoding and its slot.
pub(crate) fn leaf_bytes(record: &[u8]) -> usize {
    record.len() + 2
}

/// Encodes `records` (encoded records in key order, fitting) as a leaf into `payload`,
/// zero-filling the rest.
pub(crate) fn encode_leaf<R: AsRef<[u8]>>(records: &[R], payload: &mut [u8]) {
    payload.fill(0);
    payload[0] = LEAF_KIND;
    payload[2..4].copy_from_slice(&(records.len() as u16).to_le_bytes());
    let mut at = LEAF_HEADER + 2 * records.len();
    for (i, record) in records.iter().enumerate() {
        let record = record.as_ref();
        payload[LEAF_HEADER + 2 * i..LEAF_HEADER + 2 * i + 2]
            .copy_from_slice(&(at as u16).to_le_bytes());
        payload[at..at + record.len()].copy_from_slice(record);
        at += record.len();
    }
    payload[4..8].copy_from_slice(&(at as u32).to_le_bytes());
}

/// A leaf's payload, checked enough that every slot can be read without going out of bounds.
#[derive(Clone, Copy)]
pub(crate) struct LeafRef<'a> {
    payload: &'a [u8],
    count: usize,
    file: &'a str,
    block: u64,
}

impl<'a> LeafRef<'a> {
    /// Checks the header of the leaf in `payload`, read from `block` of `file`.
    pub(crate) fn parse(payload: &'a [u8], file: &'a str, block: u64) -> Result<LeafRef<'a>> {
        let bad = |what: String| Error::Corrupt {
            file: file.to_string(),
            block: Some(block),
            what,
        };
        if payload.len() < LEAF_HEADER || payload[0] != LEAF_KIND {
            return Err(bad(format!(
                "kind {} where a leaf (kind {LEAF_KIND}) was expected",
                payload.first().copied().unwrap_or(0)
            )));
        }
        let count = u16::from_le_bytes([payload[2], payload[3]]) as usize;
        let used = u32::from_le_bytes([payload[4], payload[5], payload[6], payload[7]]) as usize;
        if LEAF_HEADER + 2 * count > used || used > payload.len() {
            return Err(bad(format!(
                "{count} records in {used} bytes do not fit a {}-byte leaf",
                payload.len()
            )));
        }
        Ok(LeafRef {
            payload: &payload[..used],
            count,
            file,
            block,
        })
    }

    /// Records in the leaf.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Record `i` (`i < len()`); a record running past the leaf is [`Error::Corrupt`].
    pub(crate) fn slot(&self, i: usize) -> Result<SlotRef<'a>> {
        self.record(i).map(|(slot, _)| slot)
    }

    /// Record `i` and its encoded bytes.
    pub(crate) fn record(&self, i: usize) -> Result<(SlotRef<'a>, &'a [u8])> {
        let p = self.payload;
        let s = LEAF_HEADER + 2 * i;
        let at = u16::from_le_bytes([p[s], p[s + 1]]) as usize;
        decode_record(p, at).map_err(|what| Error::Corrupt {
            file: self.file.to_string(),
            block: Some(self.block),
            what: format!("record {i}: {what}"),
        })
    }
}

/// The record encoded in `raw` (a record [`LeafRef::record`] read or this module encoded);
/// `file` names where it came from in errors.
pub(crate) fn record_slot<'a>(raw: &'a [u8], file: &str) -> Result<SlotRef<'a>> {
    decode_record(raw, 0)
        .map(|(slot, _)| slot)
        .map_err(|what| Error::Corrupt {
            file: file.to_string(),
            block: None,
            what,
        })
}

/// Decodes the record at `at` of `p`: the record and its bytes, or what is wrong.
fn decode_record(p: &[u8], at: usize) -> std::result::Result<(SlotRef<'_>, &[u8]), String> {
    let fixed = p.get(at..at + RECORD_FIXED).ok_or("starts past the end")?;
    let klen = u16::from_le_bytes([fixed[0], fixed[1]]) as usize;
    let tag = fixed[2];
    let vlen = u32::from_le_bytes([fixed[3], fixed[4], fixed[5], fixed[6]]) as usize;
    let body = at + RECORD_FIXED;
    match tag {
        0 => {
            let end = body + klen + vlen;
            if end > p.len() {
                return Err("key or value past the end".into());
            }
            let slot = SlotRef::Inline {
                key: &p[body..body + klen],
                value: &p[body + klen..end],
            };
            Ok((slot, &p[at..end]))
        }
        1 => {
            let head = p
                .get(body..body + 9)
                .ok_or("overflow reference past the end")?;
            let first = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
            let plen = head[8] as usize;
            if plen != klen.min(PREFIX_MAX) {
                return Err(format!("prefix of {plen} bytes for a {klen}-byte key"));
            }
            let end = body + 9 + plen;
            let prefix = p.get(body + 9..end).ok_or("key prefix past the end")?;
            let slot = SlotRef::Overflow {
                prefix,
                klen,
                vlen,
                first,
            };
            Ok((slot, &p[at..end]))
        }
        t => Err(format!("unknown record tag {t}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_reads_back_what_was_encoded() {
        let long_key = vec![7u8; 900];
        let records = vec![
            encode_inline(b"a", b""),
            encode_overflow(&long_key, 5000, 42),
            encode_inline(b"zz", b"value"),
        ];
        let mut page = vec![0u8; 4092];
        encode_leaf(&records, &mut page);
        let leaf = LeafRef::parse(&page, "f", 3).unwrap();
        assert_eq!(leaf.len(), 3);
        assert_eq!(
            leaf.slot(0).unwrap(),
            SlotRef::Inline {
                key: b"a",
                value: b""
            }
        );
        assert_eq!(
            leaf.slot(1).unwrap(),
            SlotRef::Overflow {
                prefix: &long_key[..PREFIX_MAX],
                klen: 900,
                vlen: 5000,
                first: 42
            }
        );
        for (i, r) in records.iter().enumerate() {
            assert_eq!(leaf.record(i).unwrap().1, r.as_slice());
        }
        let used: usize = LEAF_HEADER + records.iter().map(|r| leaf_bytes(r)).sum::<usize>();
        assert_eq!(
            u32::from_le_bytes(page[4..8].try_into().unwrap()) as usize,
            used
        );
    }

    #[test]
    fn damaged_leaves_are_typed_errors() {
        let mut page = vec![0u8; 4092];
        encode_leaf(&[encode_inline(b"k", b"v")], &mut page);
        let mut wrong_kind = page.clone();
        wrong_kind[0] = 9;
        assert!(matches!(
            LeafRef::parse(&wrong_kind, "f", 1),
            Err(Error::Corrupt { .. })
        ));
        let mut long_key = page.clone();
        long_key[10..12].copy_from_slice(&4000u16.to_le_bytes());
        let leaf = LeafRef::parse(&long_key, "f", 1).unwrap();
        assert!(matches!(leaf.slot(0), Err(Error::Corrupt { .. })));
        let mut many = page;
        many[2..4].copy_from_slice(&3000u16.to_le_bytes());
        assert!(LeafRef::parse(&many, "f", 1).is_err());
    }
}
