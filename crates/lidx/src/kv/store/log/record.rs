//! The `log` engine's records and where they are: each write is one log record
//! ([`crate::kv::wal::Record::Batch`], framed and checksummed by the write-ahead log) whose body
//! is this module's encoding, and the in-memory map holds the place of each key's newest
//! operation: the byte where the operation starts, so that a read decodes one operation, not a
//! whole batch (a load writes thousands of operations per record).
//!
//! Operation: crc32c of the rest of the operation (4 bytes), a kind byte (1 put, 2 delete), the
//! key (in a `log:<map>` store 8 bytes, big-endian, so that numeric order is byte order; in a
//! `log:trie:<map>` store `varint(key length)` and the key), the place of the key's
//! previous operation (`prev`, 8 bytes little-endian, [`NO_LOC`] when there is none), the
//! record's sequence number (8 bytes), and for a put `varint(value length)` and the value. A
//! record holds at most one operation per key (a batch keeps the last one on a key). The
//! record's own checksum covers everything at recovery; the operation's lets a read check the
//! bytes it uses without reading the rest of the record.
//!
//! `prev` links every key's operations newest to oldest, as FASTER's hybrid log does: a
//! snapshot taken at sequence number `s` follows the chain from the map's entry to the first
//! operation at or before `s`, so snapshots need no versions in memory. Paper 001 §III (Viper)
//! keeps only the latest place of a key and has no snapshots; the chain is what lets this
//! engine offer the `Store` API's snapshots and consistent ranges.

use crate::codec::{get_varint, put_varint};
use crate::error::{Error, Result};

use crate::kv::store::options::{LogKeys, MAX_KEY_BYTES, MIN_KEY_BYTES};

/// Bytes of every key of a `log` store.
pub(crate) const KEY_BYTES: usize = 8;
/// `prev` of a key's first record.
pub(crate) const NO_LOC: u64 = u64::MAX;
/// Set in a map entry whose newest record is a delete: a get answers `None` without reading it.
pub(crate) const TOMBSTONE: u64 = 1 << 63;
const OFFSET_BITS: u32 = 40;
const PUT: u8 = 1;
const DELETE: u8 = 2;
/// Bytes of an operation's crc and kind, and of its `prev` and `seq`.
const OP_HEAD: usize = 4 + 1;
const OP_LINKS: usize = 8 + 8;

/// Where a record starts: the ordinal of its segment among the store's segments (23 bits) and
/// its byte offset in it (40 bits), packed into a map value below [`TOMBSTONE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Loc {
    pub(crate) segment: usize,
    pub(crate) offset: u64,
}

/// Segments a store may have: what 23 bits of a packed place count.
pub(crate) const MAX_SEGMENTS: usize = 1 << (63 - OFFSET_BITS);

impl Loc {
    pub(crate) fn pack(self) -> u64 {
        ((self.segment as u64) << OFFSET_BITS) | self.offset
    }

    /// The place a map value names (its tombstone bit ignored).
    pub(crate) fn unpack(value: u64) -> Loc {
        let value = value & !TOMBSTONE;
        Loc {
            segment: (value >> OFFSET_BITS) as usize,
            offset: value & ((1 << OFFSET_BITS) - 1),
        }
    }
}

/// One operation of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogOp<'a> {
    /// The key: 8 bytes in a store of `u64` keys.
    pub(crate) key: &'a [u8],
    /// The key's previous operation, packed, or [`NO_LOC`].
    pub(crate) prev: u64,
    /// The sequence number of the record it is in.
    pub(crate) seq: u64,
    /// The value of a put; `None` for a delete.
    pub(crate) value: Option<&'a [u8]>,
}

/// Appends the encoding of `op` to `out` (`keys`: the store's; `op.key` checked for it).
pub(crate) fn encode_op(op: &LogOp<'_>, keys: LogKeys, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(if op.value.is_some() { PUT } else { DELETE });
    if keys == LogKeys::Bytes {
        put_varint(out, op.key.len() as u64);
    }
    out.extend_from_slice(op.key);
    out.extend_from_slice(&op.prev.to_le_bytes());
    out.extend_from_slice(&op.seq.to_le_bytes());
    if let Some(value) = op.value {
        put_varint(out, value.len() as u64);
        out.extend_from_slice(value);
    }
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes the operation at the start of `bytes` (`file` and `at` name it in errors) of a
/// store of `keys`: the operation and the bytes it takes. Never panics.
pub(crate) fn decode_op<'a>(
    file: &str,
    at: &dyn std::fmt::Display,
    bytes: &'a [u8],
    keys: LogKeys,
) -> Result<(LogOp<'a>, usize)> {
    let bad = |what: &str| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: format!("log operation {at}: {what}"),
    };
    if bytes.len() < OP_HEAD {
        return Err(bad("it ends early"));
    }
    let kind = bytes[4];
    let (key_len, key_at) = match keys {
        LogKeys::U64 => (KEY_BYTES, OP_HEAD),
        LogKeys::Bytes => {
            let (len, n) =
                get_varint(&bytes[OP_HEAD..]).ok_or_else(|| bad("a key length ends early"))?;
            let len = usize::try_from(len)
                .ok()
                .filter(|len| (MIN_KEY_BYTES..=MAX_KEY_BYTES).contains(len))
                .ok_or_else(|| bad(&format!("a key of {len} bytes")))?;
            (len, OP_HEAD + n)
        }
    };
    let fixed = key_at + key_len + OP_LINKS;
    if bytes.len() < fixed {
        return Err(bad("it ends early"));
    }
    let key = &bytes[key_at..key_at + key_len];
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
    let (prev, seq) = (u64_at(fixed - 16), u64_at(fixed - 8));
    let (value, used) = match kind {
        PUT => {
            let (len, n) = get_varint(&bytes[fixed..]).ok_or_else(|| bad("a length ends early"))?;
            let start = fixed + n;
            let len = usize::try_from(len)
                .ok()
                .filter(|&len| len <= bytes.len() - start)
                .ok_or_else(|| bad("its value runs past the record"))?;
            (Some(&bytes[start..start + len]), start + len)
        }
        DELETE => (None, fixed),
        k => return Err(bad(&format!("unknown operation {k}"))),
    };
    let stored = u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default());
    let crc = crc32c::crc32c(&bytes[4..used]);
    if crc != stored {
        return Err(bad(&format!(
            "checksum {crc:#010x}, written as {stored:#010x}"
        )));
    }
    if prev != NO_LOC && prev & TOMBSTONE != 0 {
        return Err(bad("a previous place out of range"));
    }
    Ok((
        LogOp {
            key,
            prev,
            seq,
            value,
        },
        used,
    ))
}

/// Decodes a record's operations (`file` and `seq` name it in errors), each with its position
/// in `bytes`; a damaged one yields one error and stops. Never panics.
pub(crate) fn decode_ops<'a>(
    file: &str,
    seq: u64,
    bytes: &'a [u8],
    keys: LogKeys,
) -> impl Iterator<Item = Result<(usize, LogOp<'a>)>> + 'a {
    let file = file.to_string();
    let mut at = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        if at == bytes.len() || failed {
            return None;
        }
        let here = format!("{at} of record {seq}");
        let r = decode_op(&file, &here, &bytes[at..], keys).and_then(|(op, used)| {
            if op.seq != seq {
                return Err(Error::Corrupt {
                    file: file.clone(),
                    block: None,
                    what: format!("log operation {here} says it is of record {}", op.seq),
                });
            }
            let start = at;
            at += used;
            Ok((start, op))
        });
        failed = r.is_err();
        Some(r)
    })
}

/// The key of a `log` store's 8 bytes, or [`Error::SizeLimit`].
pub(crate) fn key_of(key: &[u8]) -> Result<u64> {
    key.try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| Error::SizeLimit {
            what: "key of a log store (8 bytes, a u64 big-endian)",
            len: key.len(),
            min: KEY_BYTES,
            max: KEY_BYTES,
        })
}

/// `key` padded with zeros to 8 bytes (`key` at most 8 bytes), and whether it was shorter.
fn padded(key: &[u8]) -> (u64, bool) {
    let mut b = [0u8; KEY_BYTES];
    let n = key.len().min(KEY_BYTES);
    b[..n].copy_from_slice(&key[..n]);
    (u64::from_be_bytes(b), key.len() < KEY_BYTES)
}

/// The smallest 8-byte key within a byte-string lower bound (`None`: no 8-byte key is). A
/// shorter key `k` is below every 8-byte key starting with it, a longer one above the 8-byte
/// key that is its prefix.
pub(crate) fn lower_u64(bound: std::ops::Bound<&[u8]>) -> Option<u64> {
    use std::ops::Bound::*;
    match bound {
        Unbounded => Some(0),
        Included(k) if k.len() < KEY_BYTES => Some(padded(k).0),
        Included(k) if k.len() == KEY_BYTES => Some(padded(k).0),
        Included(k) | Excluded(k) => {
            let (v, short) = padded(k);
            if short {
                Some(v)
            } else {
                v.checked_add(1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Bound;

    #[test]
    fn ops_round_trip_and_damage_is_an_error() {
        let (seven, max) = (7u64.to_be_bytes(), u64::MAX.to_be_bytes());
        let ops = [
            LogOp {
                key: &seven,
                prev: NO_LOC,
                seq: 5,
                value: Some(b"seven"),
            },
            LogOp {
                key: &max,
                prev: Loc {
                    segment: 3,
                    offset: 99,
                }
                .pack(),
                seq: 5,
                value: None,
            },
        ];
        assert_round_trip(&ops, LogKeys::U64, OP_HEAD + 8 + OP_LINKS + 1 + 5);
        assert_eq!(Loc::unpack(ops[1].prev | TOMBSTONE).segment, 3);
        let long = [7u8; 300];
        let ops = [
            LogOp {
                key: b"user42",
                ..ops[0]
            },
            LogOp {
                key: &long,
                ..ops[1]
            },
        ];
        assert_round_trip(&ops, LogKeys::Bytes, OP_HEAD + 1 + 6 + OP_LINKS + 1 + 5);
    }

    /// `ops` (of record 5) encode and decode back, the second starting at `second`; every cut
    /// (but the one between them) and every flipped byte is an error.
    fn assert_round_trip(ops: &[LogOp<'_>; 2], keys: LogKeys, second: usize) {
        let mut bytes = Vec::new();
        for op in ops {
            encode_op(op, keys, &mut bytes);
        }
        let back: Vec<_> = decode_ops("log", 5, &bytes, keys)
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(back, [(0, ops[0]), (second, ops[1])]);
        assert!(
            decode_ops("log", 6, &bytes, keys).any(|r| r.is_err()),
            "another record's ops"
        );
        for cut in 1..bytes.len() {
            let decoded: Result<Vec<_>> = decode_ops("log", 5, &bytes[..cut], keys).collect();
            assert!(decoded.is_err() || cut == second, "cut {cut}");
        }
        for flip in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[flip] ^= 0x10;
            assert!(
                decode_ops("log", 5, &bad, keys).any(|r| r.is_err()),
                "flip {flip}"
            );
        }
    }

    /// Every lower bound agrees with byte-wise comparison on keys near it.
    #[test]
    fn byte_lower_bounds_become_u64_bounds() {
        let probes: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![1, 2],
            vec![1, 2, 0, 0, 0, 0, 0, 0],
            vec![1, 2, 0, 0, 0, 0, 0, 0, 0],
            vec![255; 8],
            vec![255; 9],
            vec![0; 8],
        ];
        let keys = [
            0u64,
            1,
            u64::MAX,
            u64::MAX - 1,
            0x0102_0000_0000_0000,
            0x0102_0000_0000_0001,
            0x0101_ffff_ffff_ffff,
        ];
        for p in &probes {
            for (bound, lower) in [
                (Bound::Included(&p[..]), true),
                (Bound::Excluded(&p[..]), false),
            ] {
                let lo = lower_u64(bound);
                for &k in &keys {
                    let kb = k.to_be_bytes();
                    let above = if lower {
                        kb.as_slice() >= p.as_slice()
                    } else {
                        kb.as_slice() > p.as_slice()
                    };
                    assert_eq!(lo.is_some_and(|lo| k >= lo), above, "{p:?} {k:#x} lower");
                }
            }
        }
    }
}
