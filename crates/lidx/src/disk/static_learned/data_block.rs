//! Data blocks: the sorted (key, payload) records of a static learned index, packed per block.
//!
//! Paper 002 §3 stores "the ordered data points ... sequentially on disk", 256 of them (8-byte
//! key, 8-byte payload) per 4 KiB page, and paper 003 §4 puts the leaf level of every learned
//! index in fixed-size blocks. We do the same, with two changes a real file needs: each block
//! keeps its last 4 bytes for the device's crc32c trailer, and starts with an 8-byte header
//! (record count and a tag) so that a block that passes its checksum but holds the wrong
//! content is still caught. Entry `i` of the index lives in data block `i / per_block` (block
//! `1 + i / per_block` of the file), slot `i % per_block`, where
//!
//! ```text
//! per_block = (block_size - 4 - 8) / (key_size + payload_size)
//! ```
//!
//! 255 records for 8-byte keys and payloads in 4 KiB blocks (the trailer and header cost one
//! record of the paper's 256), 170 for 16-byte string keys.
//!
//! Inside a block the keys come first, then the payloads in the same order ("struct of
//! arrays"), so the last-mile binary search touches only contiguous key bytes:
//!
//! | offset                 | size                   | field                         |
//! |------------------------|------------------------|-------------------------------|
//! | 0                      | 4                      | record count `n`              |
//! | 4                      | 4                      | tag `"SLdb"` ([`DATA_BLOCK_TAG`]) |
//! | 8                      | `n * key_size`         | keys, strictly increasing     |
//! | `8 + n * key_size`     | `n * payload_size`     | payloads, in key order        |
//! | ...                    | to `block_size - 4`    | zero                          |
//! | `block_size - 4`       | 4                      | crc32c trailer (the device's) |
//!
//! Every block but the last is full; the last holds `len - (data_blocks - 1) * per_block`.
//! [`decode_data_block`] checks the tag, that the count is the one the layout implies, that
//! the records fit, and that the keys are strictly increasing, so a search over a decoded block
//! is always well defined.

use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::key::Key;

/// Block number of the first data block of the file (block 0 is the header).
pub(crate) const FIRST_DATA_BLOCK: u64 = 1;

/// Bytes of the block header (count and tag).
pub(crate) const DATA_BLOCK_HEADER: usize = 8;

/// Tag at offset 4 of every data block: the bytes `"SLdb"` as a little-endian u32.
pub(crate) const DATA_BLOCK_TAG: u32 = u32::from_le_bytes(*b"SLdb");

/// Records of `key_size + payload_size` bytes that fit in a block payload of `block_payload`
/// bytes after the block header (0 when none fits). `key_size` must be at least 1.
pub(crate) fn records_per_block(
    block_payload: usize,
    key_size: usize,
    payload_size: usize,
) -> usize {
    block_payload.saturating_sub(DATA_BLOCK_HEADER) / (key_size + payload_size).max(1)
}

/// Writes one data block into `out` (a block payload, zeroed): `keys` and, for record `j`, the
/// payload `fill(j, &keys[j], out)` writes (`payload_size` bytes). The caller makes sure the
/// records fit ([`records_per_block`]).
pub(crate) fn encode_data_block<K: Key>(
    out: &mut [u8],
    keys: &[K],
    payload_size: usize,
    mut fill: impl FnMut(usize, &K, &mut [u8]),
) {
    out[0..4].copy_from_slice(&(keys.len() as u32).to_le_bytes());
    out[4..8].copy_from_slice(&DATA_BLOCK_TAG.to_le_bytes());
    let payloads_at = DATA_BLOCK_HEADER + keys.len() * K::SIZE;
    for (j, key) in keys.iter().enumerate() {
        let at = DATA_BLOCK_HEADER + j * K::SIZE;
        key.write_to(&mut out[at..at + K::SIZE]);
        let at = payloads_at + j * payload_size;
        fill(j, key, &mut out[at..at + payload_size]);
    }
}

/// A validated view of one data block's records.
#[derive(Debug, Clone, Copy)]
pub struct DataBlock<'a, K> {
    keys: &'a [u8],
    payloads: &'a [u8],
    payload_size: usize,
    _key: PhantomData<fn() -> K>,
}

impl<'a, K: Key> DataBlock<'a, K> {
    /// The records of a block that [`decode_data_block`] accepted with this `count`.
    pub(super) fn view(bytes: &'a [u8], count: usize, payload_size: usize) -> Self {
        let keys_end = DATA_BLOCK_HEADER + count * K::SIZE;
        DataBlock {
            keys: &bytes[DATA_BLOCK_HEADER..keys_end],
            payloads: &bytes[keys_end..keys_end + count * payload_size],
            payload_size,
            _key: PhantomData,
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.keys.len() / K::SIZE
    }

    /// True when the block holds no record.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Key of record `j` (`j < len()`).
    #[inline]
    pub fn key(&self, j: usize) -> K {
        K::read_from(&self.keys[j * K::SIZE..(j + 1) * K::SIZE])
    }

    /// Payload of record `j` (`j < len()`).
    #[inline]
    pub fn payload(&self, j: usize) -> &'a [u8] {
        &self.payloads[j * self.payload_size..(j + 1) * self.payload_size]
    }

    /// Number of records whose key is smaller than `key` (the in-block lower bound).
    pub fn lower_bound(&self, key: &K) -> usize {
        crate::search::lower_bound_by(self.len(), |i| self.key(i).key_lt(key))
    }
}

/// Checks that data block `block` of `file`, whose first key is `first`, follows the block
/// before it, whose last key was `previous` (none for the first block read): `Corrupt` when
/// the keys do not increase across the boundary.
pub(crate) fn check_follows<K: Key>(
    file: &str,
    block: u64,
    previous: Option<K>,
    first: K,
) -> Result<()> {
    match previous {
        Some(p) if !p.key_lt(&first) => Err(Error::Corrupt {
            file: file.to_string(),
            block: Some(block),
            what: format!(
                "data block: first key {first:?} does not follow the previous block's last key \
                 {p:?}"
            ),
        }),
        _ => Ok(()),
    }
}

/// Decodes and validates data block `block_no` of `file` from its payload `bytes`: the tag,
/// a record count equal to `expected_count` (what the layout says the block holds), records
/// that fit, and strictly increasing, valid keys. Never panics on any input.
pub fn decode_data_block<'a, K: Key>(
    file: &str,
    block_no: u64,
    bytes: &'a [u8],
    expected_count: usize,
    payload_size: usize,
) -> Result<DataBlock<'a, K>> {
    let corrupt = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(block_no),
        what: format!("data block: {what}"),
    };
    if bytes.len() < DATA_BLOCK_HEADER {
        return Err(corrupt(format!(
            "{} bytes hold no block header",
            bytes.len()
        )));
    }
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[4..8]);
    let tag = u32::from_le_bytes(raw);
    if tag != DATA_BLOCK_TAG {
        return Err(corrupt(format!(
            "tag {tag:#010x}, expected {DATA_BLOCK_TAG:#010x}"
        )));
    }
    raw.copy_from_slice(&bytes[0..4]);
    let count = u32::from_le_bytes(raw) as usize;
    if count != expected_count {
        return Err(corrupt(format!(
            "holds {count} records, the layout puts {expected_count} in it"
        )));
    }
    let keys_end = count
        .checked_mul(K::SIZE)
        .and_then(|k| k.checked_add(DATA_BLOCK_HEADER));
    let end = count
        .checked_mul(payload_size)
        .and_then(|p| p.checked_add(keys_end?));
    let (Some(_), Some(end)) = (keys_end, end) else {
        return Err(corrupt(format!("{count} records overflow the block")));
    };
    if end > bytes.len() {
        return Err(corrupt(format!(
            "{count} records need {end} bytes, the block has {}",
            bytes.len()
        )));
    }
    let block = DataBlock::<K>::view(bytes, count, payload_size);
    let mut previous: Option<K> = None;
    for j in 0..count {
        let key = block.key(j);
        if key.invalid_reason().is_some() {
            return Err(corrupt(format!("record {j} holds an invalid key {key:?}")));
        }
        if let Some(p) = previous {
            if !p.key_lt(&key) {
                return Err(corrupt(format!(
                    "record {j}: key {key:?} does not follow {p:?}"
                )));
            }
        }
        previous = Some(key);
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_validation() {
        assert_eq!(records_per_block(4092, 8, 8), 255);
        assert_eq!(records_per_block(4092, 16, 8), 170);
        assert_eq!(records_per_block(4, 8, 8), 0);
        let keys: Vec<u64> = (0..100).map(|i| i * 3 + 1).collect();
        let mut out = vec![0u8; 4092];
        encode_data_block(&mut out, &keys, 4, |j, k, p| {
            p.copy_from_slice(&((*k as u32) ^ j as u32).to_le_bytes())
        });
        let b = decode_data_block::<u64>("f", 1, &out, 100, 4).unwrap();
        assert_eq!(b.len(), 100);
        assert_eq!(b.key(7), 22);
        assert_eq!(b.payload(7), &(22u32 ^ 7).to_le_bytes());
        assert_eq!(b.lower_bound(&0), 0);
        assert_eq!(b.lower_bound(&22), 7);
        assert_eq!(b.lower_bound(&23), 8);
        assert_eq!(b.lower_bound(&1000), 100);
        let err = |bytes: &[u8], expected: usize| {
            matches!(
                decode_data_block::<u64>("f", 1, bytes, expected, 4),
                Err(Error::Corrupt { block: Some(1), .. })
            )
        };
        assert!(err(&out, 99), "wrong count");
        assert!(err(&out[..100], 100), "records past the end");
        assert!(err(&out[..5], 100), "no header");
        let mut swapped = out.clone();
        swapped[8..16].copy_from_slice(&50u64.to_le_bytes());
        assert!(err(&swapped, 100), "keys out of order");
        let mut tagless = out.clone();
        tagless[5] ^= 1;
        assert!(err(&tagless, 100), "bad tag");
    }
}
