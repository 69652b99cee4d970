//! Sorted records with a tombstone flag, packed into blocks: the codec the disk PGM's level 0
//! ([`super::dpgm`]) and the FITing-tree's segment data and delta buffers
//! ([`super::fiting`]) share, and [`Run`], such records in memory.
//!
//! Byte layout of a block (`P` usable bytes, `ps` payload bytes, `R = floor(P / (9 + ps))`
//! records a block):
//!
//! | offset          | size | field                                 |
//! |-----------------|------|---------------------------------------|
//! | `r * (9 + ps)`  | 8    | key of record `r`, little-endian      |
//! | `+ 8`           | 1    | flag: 0 live, 1 tombstone             |
//! | `+ 9`           | `ps` | payload (zeros for a tombstone)       |
//!
//! Record `i` of a run lies in its `i / R`-th block, slot `i % R`; keys ascend strictly across
//! the run's blocks; bytes past the last record are zero. How many records a run holds is
//! recorded by its owner, never in the blocks: [`decode_records`] is given the count and checks
//! flags and order, naming the block of a bad record.

use crate::disk::header_fields::{put_u64, u64_at};
use crate::error::{Error, Result};

/// Bytes of a record besides its payload: key and flag.
pub(crate) const RECORD_EXTRA: usize = 9;

/// Largest payload a record holds, in bytes.
pub(crate) const MAX_PAYLOAD: usize = 1 << 16;

/// Records per block for payload size `ps` and `usable` bytes a block.
pub(crate) fn records_per_block(usable: usize, ps: usize) -> usize {
    usable / (RECORD_EXTRA + ps)
}

/// [`Error::InvalidParameter`] for a payload above [`MAX_PAYLOAD`]: what the parameters of
/// every owner of such records check.
pub(crate) fn check_payload_size(ps: usize) -> Result<()> {
    if ps > MAX_PAYLOAD {
        return Err(Error::InvalidParameter {
            name: "payload_size",
            value: ps.to_string(),
            expected: "at most 65536 bytes",
        });
    }
    Ok(())
}

/// Records per block of `block_size` bytes (trailer included) for payload size `ps`;
/// [`Error::InvalidParameter`] when not even one fits: what a build checks against its
/// device's blocks.
pub(crate) fn per_block_for(block_size: usize, ps: usize) -> Result<usize> {
    match records_per_block(block_size.saturating_sub(crate::io::BLOCK_TRAILER), ps) {
        0 => Err(Error::InvalidParameter {
            name: "payload_size",
            value: format!("{ps} with {block_size}-byte blocks"),
            expected: "small enough for a key, a flag byte and a payload to fit a block",
        }),
        per => Ok(per),
    }
}

/// Sorted records with tombstones: level 0 in memory, a region of the manifest, or a run being merged.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Keys, strictly ascending.
    pub keys: Vec<u64>,
    /// Per key: true when it is a tombstone.
    pub dead: Vec<bool>,
    /// Payloads concatenated (`ps` bytes each; zeros for a tombstone).
    pub payloads: Vec<u8>,
}

/// Encodes the records of `level0` into the blocks of `out` (`block_size` bytes each, trailer
/// left to the device).
pub fn encode_records(run: &Run, ps: usize, block_size: usize, out: &mut [u8]) {
    let usable = block_size - crate::io::BLOCK_TRAILER;
    let per = records_per_block(usable, ps);
    out.fill(0);
    for (i, key) in run.keys.iter().enumerate() {
        let at = (i / per) * block_size + (i % per) * (RECORD_EXTRA + ps);
        put_u64(out, at, *key);
        out[at + 8] = u8::from(run.dead[i]);
        out[at + 9..at + 9 + ps].copy_from_slice(&run.payloads[i * ps..(i + 1) * ps]);
    }
}

/// Decodes `count` records from the blocks in `bytes` (whole blocks, the first being
/// block `first` of `file`).
pub fn decode_records(
    bytes: &[u8],
    count: usize,
    ps: usize,
    block_size: usize,
    first: u64,
    file: &str,
) -> Result<Run> {
    let usable = block_size.saturating_sub(crate::io::BLOCK_TRAILER);
    let per = records_per_block(usable, ps);
    if per == 0 || count.div_ceil(per) * block_size > bytes.len() {
        return Err(Error::Corrupt {
            file: file.to_string(),
            block: Some(first),
            what: format!("{count} records do not fit {} bytes", bytes.len()),
        });
    }
    let mut out = Run {
        keys: Vec::with_capacity(count),
        dead: Vec::with_capacity(count),
        payloads: Vec::with_capacity(count * ps),
    };
    for i in 0..count {
        let block = first + (i / per) as u64;
        let at = (i / per) * block_size + (i % per) * (RECORD_EXTRA + ps);
        let key = u64_at(bytes, at);
        let flag = bytes[at + 8];
        let bad = |what: String| Error::Corrupt {
            file: file.to_string(),
            block: Some(block),
            what,
        };
        if flag > 1 {
            return Err(bad(format!("record {i} has flag {flag}")));
        }
        if out.keys.last().is_some_and(|&p| p >= key) {
            return Err(bad(format!("records {} and {i} are out of order", i - 1)));
        }
        out.keys.push(key);
        out.dead.push(flag == 1);
        out.payloads.extend_from_slice(&bytes[at + 9..at + 9 + ps]);
    }
    Ok(out)
}

impl Run {
    /// Records `a..b` as a run of their own.
    pub fn slice(&self, a: usize, b: usize, ps: usize) -> Run {
        Run {
            keys: self.keys[a..b].to_vec(),
            dead: self.dead[a..b].to_vec(),
            payloads: self.payloads[a * ps..b * ps].to_vec(),
        }
    }

    /// Records in the run.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the run holds no record.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Appends a record with a key above the last one (`Corrupt` for `file` otherwise).
    pub fn push(&mut self, key: u64, dead: bool, payload: &[u8], file: &str) -> Result<()> {
        if self.keys.last().is_some_and(|&p| p >= key) {
            return Err(Error::Corrupt {
                file: file.to_string(),
                block: None,
                what: format!("records out of order at key {key}"),
            });
        }
        self.keys.push(key);
        self.dead.push(dead);
        self.payloads.extend_from_slice(payload);
        Ok(())
    }

    /// Position of `key`: `Ok(i)` when present, `Err(i)` where it would go.
    pub fn find(&self, key: u64) -> std::result::Result<usize, usize> {
        self.keys.binary_search(&key)
    }

    /// Payload of record `i`.
    pub fn payload(&self, i: usize, ps: usize) -> &[u8] {
        &self.payloads[i * ps..(i + 1) * ps]
    }

    /// Sets record `i` (present) or inserts it at `i` (absent, `at` = `Err(i)`).
    pub fn put(
        &mut self,
        at: std::result::Result<usize, usize>,
        key: u64,
        dead: bool,
        payload: &[u8],
        ps: usize,
    ) {
        match at {
            Ok(i) => {
                self.dead[i] = dead;
                self.payloads[i * ps..(i + 1) * ps].copy_from_slice(payload);
            }
            Err(i) => {
                self.keys.insert(i, key);
                self.dead.insert(i, dead);
                self.payloads
                    .splice(i * ps..i * ps, payload.iter().copied());
            }
        }
    }

    /// Removes record `i`.
    pub fn remove(&mut self, i: usize, ps: usize) {
        self.keys.remove(i);
        self.dead.remove(i);
        self.payloads.drain(i * ps..(i + 1) * ps);
    }

    /// The merge of `self` (newer) and `older`: where both hold a key, the newer record wins.
    pub fn merge_over(self, older: &Run, ps: usize) -> Run {
        let mut out = Run::default();
        let (mut i, mut j) = (0, 0);
        while i < self.len() || j < older.len() {
            let take_new = j == older.len() || (i < self.len() && self.keys[i] <= older.keys[j]);
            if take_new {
                if j < older.len() && self.keys[i] == older.keys[j] {
                    j += 1;
                }
                out.keys.push(self.keys[i]);
                out.dead.push(self.dead[i]);
                out.payloads.extend_from_slice(self.payload(i, ps));
                i += 1;
            } else {
                out.keys.push(older.keys[j]);
                out.dead.push(older.dead[j]);
                out.payloads.extend_from_slice(older.payload(j, ps));
                j += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_order() {
        let level0 = Run {
            keys: (0..1000u64).map(|k| k * 3).collect(),
            dead: (0..1000).map(|i| i % 7 == 0).collect(),
            payloads: (0..8000u32).map(|b| b as u8).collect(),
        };
        let blocks = 1000usize.div_ceil(records_per_block(4092, 8));
        let mut out = vec![0u8; blocks * 4096];
        encode_records(&level0, 8, 4096, &mut out);
        assert_eq!(decode_records(&out, 1000, 8, 4096, 1, "f").unwrap(), level0);
        let mut bad = out.clone();
        bad[8] = 2;
        assert!(decode_records(&bad, 1000, 8, 4096, 1, "f").is_err());
        let mut bad = out.clone();
        bad[17..25].copy_from_slice(&0u64.to_le_bytes());
        assert!(matches!(
            decode_records(&bad, 1000, 8, 4096, 1, "f"),
            Err(Error::Corrupt { block: Some(1), .. })
        ));
        assert!(decode_records(&out, 5000, 8, 4096, 1, "f").is_err());
    }

    #[test]
    fn payload_limits() {
        check_payload_size(MAX_PAYLOAD).unwrap();
        assert!(matches!(
            check_payload_size(MAX_PAYLOAD + 1),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(per_block_for(4096, 8).unwrap(), 4092 / 17);
        assert!(matches!(
            per_block_for(512, 600),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
