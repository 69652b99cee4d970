//! A byte table's key filter: a Bloom filter over its keys, so a lookup of a key the table
//! does not hold reads no block (what the `lsm` engine's runs need: a get of an absent key
//! asks every run, and without filters each would read a block).
//!
//! The bits are `fastbloom`'s (pinned to one version in the workspace: the bit positions a
//! hash sets are that version's), fed each key's xxh3 64-bit hash, a specified function, so
//! the filter a table was written with answers the same in every build. The header records
//! the scheme ([`FILTER_SCHEME`]), the number of hashes and the 64-bit words, which follow
//! the separator stream in their own blocks, each with the device's checksum. A table
//! without a filter (every table before filters, and the `hybrid` engine's) has zeros there.
//!
//! Sizing: `bits_per_key` bits per record (10 by default, about 1% false positives with the
//! optimal 7 hashes, as LevelDB's and RocksDB's default filters).

use fastbloom::BloomFilter;

use crate::error::{Error, Result};

/// The one filter scheme this build writes and reads: `fastbloom` 0.17's bit layout over
/// xxh3-64 of the key.
pub(crate) const FILTER_SCHEME: u32 = 1;
/// Most hashes a filter may use (more gives nothing at any sensible size).
const MAX_HASHES: u32 = 32;
/// Most bits per record a filter may spend.
pub(crate) const MAX_BITS_PER_KEY: u32 = 64;

/// Most 64-bit words a table of `records` records may keep for its filter: 512 bits a
/// record, 8 times the most a writer asks for. A merge sizes its filter for the records it
/// reads and may write fewer; one that kept under an eighth of them writes no filter rather
/// than one this much too large, so a header claiming more is refused, whatever the file's
/// size.
pub(crate) fn max_words(records: u64) -> u64 {
    records.max(1).saturating_mul(8)
}

/// A table's filter, built while it is written or read back at open.
pub(crate) struct KeyFilter {
    bloom: BloomFilter,
}

impl KeyFilter {
    /// An empty filter for about `records` keys at `bits_per_key` bits each (at least one
    /// word), with the optimal number of hashes.
    pub(crate) fn new(records: u64, bits_per_key: u32) -> KeyFilter {
        let words = (records.saturating_mul(u64::from(bits_per_key)))
            .div_ceil(64)
            .max(1);
        let hashes = ((f64::from(bits_per_key) * std::f64::consts::LN_2).round() as u32)
            .clamp(1, MAX_HASHES);
        KeyFilter {
            bloom: BloomFilter::from_vec(vec![0; words as usize]).hashes(hashes),
        }
    }

    /// The filter stored as `words` with `hashes` hashes, checked against the header's
    /// claims by the caller; `file` names the table in errors.
    pub(crate) fn from_words(file: &str, words: Vec<u64>, hashes: u32) -> Result<KeyFilter> {
        if words.is_empty() || !(1..=MAX_HASHES).contains(&hashes) {
            return Err(Error::Corrupt {
                file: file.to_string(),
                block: Some(0),
                what: format!("a filter of {} words with {hashes} hashes", words.len()),
            });
        }
        Ok(KeyFilter {
            bloom: BloomFilter::from_vec(words).hashes(hashes),
        })
    }

    /// Adds the key whose [`key_hash`](super::slots::key_hash) is `hash`.
    #[inline]
    pub(crate) fn insert_hash(&mut self, hash: u64) {
        self.bloom.insert_hash(hash);
    }

    /// False when the key whose [`key_hash`](super::slots::key_hash) is `hash` is surely not in the table.
    #[inline]
    pub(crate) fn may_contain_hash(&self, hash: u64) -> bool {
        self.bloom.contains_hash(hash)
    }

    /// The filter's hashes per key.
    pub(crate) fn hashes(&self) -> u32 {
        self.bloom.num_hashes()
    }

    /// The filter's bits, as stored.
    pub(crate) fn words(&self) -> &[u64] {
        self.bloom.as_slice()
    }

    /// Bytes of memory.
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(self.bloom.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::super::slots::key_hash;
    use super::*;

    #[test]
    fn every_key_added_is_found_and_few_others_are() {
        let n = 20_000u64;
        let mut f = KeyFilter::new(n, 10);
        for i in 0..n {
            f.insert_hash(key_hash(&i.to_be_bytes()));
        }
        assert_eq!(f.hashes(), 7);
        assert!((0..n).all(|i| f.may_contain_hash(key_hash(&i.to_be_bytes()))));
        let false_positives = (n..2 * n)
            .filter(|i| f.may_contain_hash(key_hash(&i.to_be_bytes())))
            .count();
        // About 1% at 10 bits a key; 2% leaves room for the hash's luck.
        assert!(false_positives < (n / 50) as usize, "{false_positives}");
        let back = KeyFilter::from_words("t", f.words().to_vec(), f.hashes()).unwrap();
        assert!((0..n).all(|i| back.may_contain_hash(key_hash(&i.to_be_bytes()))));
        assert_eq!(
            (n..2 * n)
                .filter(|i| back.may_contain_hash(key_hash(&i.to_be_bytes())))
                .count(),
            false_positives
        );
    }

    #[test]
    fn a_filter_of_no_words_or_a_bad_hash_count_is_refused() {
        assert!(KeyFilter::from_words("t", vec![], 7).is_err());
        assert!(KeyFilter::from_words("t", vec![0], 0).is_err());
        assert!(KeyFilter::from_words("t", vec![0], 33).is_err());
        assert!(KeyFilter::from_words("t", vec![0], 32).is_ok());
    }
}
