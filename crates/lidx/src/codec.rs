//! The byte codec every saved model and file format uses: [`Encoder`] and [`Decoder`].
//!
//! Models, the static learned index's file, the hybrid index's manifest and the join tables'
//! saved indexes all write little-endian byte strings with an [`Encoder`] and read them back
//! with a [`Decoder`]. The bytes come from disk, so decoding is defensive: every read is
//! bounds-checked ([`Decoder`] returns [`Error::Corrupt`] naming the file and the byte offset,
//! never panics), and lengths are checked against the bytes that remain before anything is
//! allocated ([`Decoder::count`]). Checksums of the blocks that hold the bytes are the device's
//! job.
//!
//! This module sits below `model` and `mem` (it needs only [`crate::key`] and
//! [`crate::error`]), so a model can save itself without knowing about the indexes built on it.
//!
//! It also holds the one content fingerprint a derived file records of the data it was built
//! from ([`record_block_fingerprint`]): a join table's records (`join::table`) and the sorted
//! keys an on-disk index was built on ([`keys_fingerprint`], `lidx build`'s files), so that
//! both kinds of saved index are bound to their data the same way.

use crate::error::{Error, Result};
use crate::key::Key;

/// The largest key count (and window error) a decoded index accepts, so that window arithmetic
/// such as `pos + eps + 1` cannot overflow whatever the bytes say.
pub const MAX_LEN: usize = 1 << 62;

/// The fingerprint term of block `block` holding `records` (their bytes): a fingerprint is the
/// wrapping sum of these over the blocks of what it covers. XXH3-64 seeded with the block
/// number, so the sum depends on the order of the blocks; summing per block lets writers that
/// fill a file in parallel stretches add their parts.
#[inline]
pub(crate) fn record_block_fingerprint(block: u64, records: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(records, block)
}

/// Bytes of the keys' encoding [`keys_fingerprint`] hashes per term.
pub(crate) const FINGERPRINT_CHUNK_BYTES: usize = 4096;

/// The content fingerprint of `keys`, in their order: their encodings (`Key::write_to`,
/// `K::SIZE` bytes each) cut into chunks of `FINGERPRINT_CHUNK_BYTES` (whole keys), the
/// `record_block_fingerprint` of chunk `c` summed (wrapping) over the chunks; 0 for no key.
/// Two key sequences with one key changed differ (up to XXH3's collisions), so an index file
/// that records it is bound to exactly the keys it was built from. `KeysFingerprint` sums
/// the same from keys given one at a time.
pub fn keys_fingerprint<K: Key>(keys: &[K]) -> u64 {
    let mut fingerprint = KeysFingerprint::default();
    for key in keys {
        fingerprint.push(key);
    }
    fingerprint.finish()
}

/// [`keys_fingerprint`] of keys given one at a time (a writer that streams its records).
#[derive(Debug, Default, Clone)]
pub(crate) struct KeysFingerprint {
    /// Encodings of the current chunk's keys.
    chunk: Vec<u8>,
    /// Chunks summed so far.
    chunks: u64,
    /// Their terms' wrapping sum.
    sum: u64,
}

impl KeysFingerprint {
    /// Adds the next key (all keys given must be of one type).
    pub(crate) fn push<K: Key>(&mut self, key: &K) {
        let at = self.chunk.len();
        self.chunk.resize(at + K::SIZE, 0);
        key.write_to(&mut self.chunk[at..]);
        if self.chunk.len() + K::SIZE > FINGERPRINT_CHUNK_BYTES {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let term = record_block_fingerprint(self.chunks, &self.chunk);
        self.sum = self.sum.wrapping_add(term);
        self.chunks += 1;
        self.chunk.clear();
    }

    /// The fingerprint of the keys pushed.
    pub(crate) fn finish(mut self) -> u64 {
        if !self.chunk.is_empty() {
            self.seal();
        }
        self.sum
    }
}

/// Appends little-endian values to a byte vector.
#[derive(Debug, Default)]
pub struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    /// An empty encoder.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends a `u8`.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// Appends a `u32`.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a `u64`.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a `usize` as a `u64`.
    pub fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }

    /// Appends an `f64` (its bits).
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// Appends a key in its on-disk form ([`Key::write_to`]).
    pub fn key<K: Key>(&mut self, k: &K) {
        let at = self.bytes.len();
        self.bytes.resize(at + K::SIZE, 0);
        k.write_to(&mut self.bytes[at..]);
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, v: &[u8]) {
        self.bytes.extend_from_slice(v);
    }
}

/// Reads little-endian values from bytes that came from `file`, bounds-checked.
#[derive(Debug)]
pub struct Decoder<'a> {
    file: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `bytes`, read from `file` (named in errors).
    pub fn new(file: &'a str, bytes: &'a [u8]) -> Decoder<'a> {
        Decoder {
            file,
            bytes,
            pos: 0,
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Byte offset of the next read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// An [`Error::Corrupt`] for this file at the current offset.
    pub fn corrupt(&self, what: impl std::fmt::Display) -> Error {
        Error::Corrupt {
            file: self.file.to_string(),
            block: None,
            what: format!("model bytes at offset {}: {what}", self.pos),
        }
    }

    /// Takes the next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.corrupt(format!(
                "needs {n} more bytes, only {} remain",
                self.remaining()
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a `u8`.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Reads a `u32`.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Reads a `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Reads a `u64` that must fit a `usize` and be at most `max`.
    pub fn usize_at_most(&mut self, max: usize, what: &str) -> Result<usize> {
        let v = self.u64()?;
        if v > max as u64 {
            return Err(self.corrupt(format!("{what} is {v}, more than {max}")));
        }
        Ok(v as usize)
    }

    /// Reads a count of items of `item_bytes` bytes each that follow: refuses a count that
    /// the remaining bytes cannot hold, so a corrupt count never causes a huge allocation.
    pub fn count(&mut self, item_bytes: usize, what: &str) -> Result<usize> {
        let max = self.remaining().saturating_sub(8) / item_bytes.max(1);
        self.usize_at_most(max, what)
    }

    /// Reads a finite `f64`.
    pub fn f64_finite(&mut self, what: &str) -> Result<f64> {
        let v = f64::from_bits(self.u64()?);
        if !v.is_finite() {
            return Err(self.corrupt(format!("{what} is {v}, not a finite number")));
        }
        Ok(v)
    }

    /// Reads a key written by [`Encoder::key`].
    pub fn key<K: Key>(&mut self) -> Result<K> {
        Ok(K::read_from(self.take(K::SIZE)?))
    }

    /// Fails unless every byte was read.
    pub fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(self.corrupt(format!("{} unexpected trailing bytes", self.remaining())));
        }
        Ok(())
    }
}

/// Appends `v` as a LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes [`put_varint`] writes for `v`.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Reads a LEB128 varint from the start of `bytes`: the value and its length, `None` when
/// `bytes` ends inside it or it is longer than 10 bytes.
///
/// Inlined for values of up to three bytes, what the store's record lengths and its memtable
/// entries' sequence deltas usually are (a delta from the memtable's first sequence number,
/// zigzag coded, takes three bytes past a delta of 8,191): a memtable's binary search reads
/// the three before each key it compares, a block's search two a record. Called out of line
/// for every value, it took 8-11% of `lidx ycsb`'s samples in YCSB-A on the `lsm` engine;
/// inlined, a smaller YCSB-A run under callgrind executes 11.5% fewer instructions
/// (`docs/results/store-scale.md`, session 66).
#[inline]
pub(crate) fn get_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().take(3).enumerate() {
        v |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    get_long_varint(bytes)
}

/// The length of the varint at the start of `bytes`, [`get_varint`]'s second half without
/// decoding its value: what a reader skipping a field needs.
#[inline]
pub(crate) fn varint_bytes(bytes: &[u8]) -> Option<usize> {
    for (i, &b) in bytes.iter().take(3).enumerate() {
        if b & 0x80 == 0 {
            return Some(i + 1);
        }
    }
    get_long_varint(bytes).map(|(_, n)| n)
}

/// [`get_varint`] for a value of more than three bytes (or none).
#[inline(never)]
fn get_long_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7F).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fingerprint_binds_every_key_and_the_count() {
        let keys: Vec<u64> = (0..2000).map(|i| i * 7 + 3).collect();
        let fp = keys_fingerprint(&keys);
        assert_ne!(fp, 0);
        assert_eq!(fp, keys_fingerprint(&keys.clone()));
        for at in [0, 511, 512, 1999] {
            let mut other = keys.clone();
            other[at] += 1;
            assert_ne!(keys_fingerprint(&other), fp, "key {at}");
        }
        assert_ne!(keys_fingerprint(&keys[..1999]), fp);
        assert_eq!(keys_fingerprint::<u64>(&[]), 0);
    }

    #[test]
    fn varint_len_is_what_put_varint_writes() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX >> 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(varint_len(v), out.len(), "{v}");
        }
    }

    #[test]
    fn round_trip_and_truncation() {
        let mut e = Encoder::new();
        e.u8(3);
        e.u32(7);
        e.u64(u64::MAX);
        e.f64(1.5);
        e.key(&42u64);
        e.key(&[7u8; 16]);
        let bytes = e.into_bytes();
        let mut d = Decoder::new("m", &bytes);
        assert_eq!(d.u8().unwrap(), 3);
        assert_eq!(d.u32().unwrap(), 7);
        assert_eq!(d.u64().unwrap(), u64::MAX);
        assert_eq!(d.f64_finite("x").unwrap(), 1.5);
        assert_eq!(d.key::<u64>().unwrap(), 42);
        assert_eq!(d.key::<[u8; 16]>().unwrap(), [7u8; 16]);
        d.finish().unwrap();
        for cut in 0..bytes.len() {
            let mut d = Decoder::new("m", &bytes[..cut]);
            let all = (|| {
                d.u8()?;
                d.u32()?;
                d.u64()?;
                d.f64_finite("x")?;
                d.key::<u64>()?;
                d.key::<[u8; 16]>()
            })();
            assert!(matches!(all, Err(Error::Corrupt { .. })), "cut at {cut}");
        }
        let mut d = Decoder::new("m", &[0xff; 16]);
        assert!(d.count(8, "segments").is_err());
    }

    #[test]
    fn varints_round_trip_and_refuse_overlong() {
        // Both sides of every length's bound: one to three bytes are decoded inline, more out
        // of line.
        let bounds = (1..10).flat_map(|k| [(1u64 << (7 * k)) - 1, 1u64 << (7 * k)]);
        for v in [0, 300, u32::MAX as u64, u64::MAX]
            .into_iter()
            .chain(bounds)
        {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(get_varint(&out), Some((v, out.len())));
            assert_eq!(get_varint(&out[..out.len() - 1]), None);
            assert_eq!(varint_bytes(&out), Some(out.len()));
            assert_eq!(varint_bytes(&out[..out.len() - 1]), None);
            out.push(0x55);
            assert_eq!(varint_bytes(&out), Some(out.len() - 1), "a byte after it");
            assert_eq!(
                get_varint(&out),
                Some((v, out.len() - 1)),
                "a byte after it"
            );
        }
        // Skipping a varint finds the length decoding it finds.
        for bytes in [
            &[][..],
            &[0x80, 0x00],
            &[0xFF; 9],
            &[0x80; 11],
            &[0xFF, 0xFF, 0x01, 9],
        ] {
            assert_eq!(varint_bytes(bytes), get_varint(bytes).map(|(_, n)| n));
        }
        let mut ten = vec![0xFF; 9];
        ten.push(0x01);
        assert_eq!(varint_bytes(&ten), Some(10));
        assert_eq!(get_varint(&ten).map(|(_, n)| n), Some(10));
        // Padded encodings read as the reader always read them.
        assert_eq!(get_varint(&[0x80, 0x00]), Some((0, 2)));
        assert_eq!(get_varint(&[0xFF, 0x80, 0x80, 0x00]), Some((0x7F, 4)));
        assert_eq!(get_varint(&[]), None);
        assert_eq!(get_varint(&[0x80; 11]), None);
    }
}
