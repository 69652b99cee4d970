//! Header block codec: block 0 of a learned-inner B+-tree file.
//!
//! Like the disk B+-tree's meta block (paper 003 §4.1, [`crate::disk::btree::header`]) it is
//! what a reopen starts from: what the file is (magic, version, key type, every build
//! parameter), its counts, and where the rest of the in-memory part lives: the *meta chain*
//! holding the model, the directory and the split list ([`super::meta`]), and the free list's
//! chain ([`crate::disk::btree::free`], the B+-tree's own). It is written at build and by
//! [`super::BTreeLearned::flush`]; between flushes the copy in memory is the current one.
//!
//! Byte layout (little-endian, in the usable bytes of block 0):
//!
//! | offset | size | field                                                            |
//! |--------|------|------------------------------------------------------------------|
//! | 0      | 8    | magic `b"lidxBTL1"` as a little-endian `u64` ([`MAGIC`])         |
//! | 8      | 4    | format version, 3                                                |
//! | 12     | 4    | key size in bytes                                                |
//! | 16     | 16   | key type name (`Key::NAME`), UTF-8, zero-padded                  |
//! | 32     | 4    | payload size in bytes                                            |
//! | 36     | 4    | block size in bytes (checksum trailer included)                  |
//! | 40     | 8    | entries                                                          |
//! | 48     | 8    | leaves                                                           |
//! | 56     | 8    | model slots (leaves the model addresses; the rest are split ones) |
//! | 64     | 8    | blocks in the file: 1 + leaves + meta blocks + free blocks       |
//! | 72     | 8    | build fill factor, `f64` bits, in `(0, 1]`                       |
//! | 80     | 8    | retrain ratio, `f64` bits, positive                              |
//! | 88     | 8    | first (leftmost) leaf block                                      |
//! | 96     | 8    | first block of the meta chain                                    |
//! | 104    | 8    | blocks of the meta chain                                         |
//! | 112    | 8    | bytes of the meta stream                                         |
//! | 120    | 8    | first block of the free list's chain, `u64::MAX` = none          |
//! | 128    | 8    | free blocks (chain blocks included)                              |
//! | 136    | 8    | state: 1 = clean (flushed, no write since), 0 = written since    |
//! | 144    | 8    | eps of the model over the leaves, in entries                     |
//! | 152    | 8    | fingerprint of the keys built from                               |
//!
//! The keys' fingerprint ([`keys_fingerprint`](crate::disk::keys_fingerprint)) binds the file to the dataset it
//! was built from ([`crate::disk::check_built_from`]); writes after the build do not change
//! it. Version 2 had none; its files are refused ([`Error::UnsupportedVersion`]: rebuild them
//! with `lidx build`).
//!
//! A file whose state is 0 was being written when it was last closed: its meta chain and free
//! list may be stale, and [`super::BTreeLearned::open`] ignores them and recovers from the
//! leaves (see [`super::update`]). Blocks past `1 + leaves + meta blocks + free blocks` are
//! leaked ones (the previous meta chain until the next flush lists it as free).
//!
//! [`decode_header`] checks the magic ([`Error::BadMagic`]), the version
//! ([`Error::UnsupportedVersion`]) and that the fields agree (a node layout exists, the blocks
//! add up, every named block is a block of the file, the slots are at most the leaves, the
//! entries fit the leaves, the meta stream fits its chain); anything else is
//! [`Error::Corrupt`] for block 0. The key type is checked by the caller.

use crate::disk::btree::header::{check_entries_fit, check_free_head, layout_of};
use crate::disk::btree::node::{NodeLayout, NODE_HEADER};
use crate::disk::header_fields::{
    check_block_size, corrupt_block0, f64_at, key_name_at, put_key_name, put_u32, put_u64s, u32_at,
    u64_at, HeaderStart,
};
use crate::error::{Error, Result};
use crate::key::Key;

use super::params::{BTreeLearnedParams, MAX_EPS};

/// Magic number of a learned-inner B+-tree file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"lidxBTL1");
/// Format version this build writes and reads (2: leaves cut by count, the model's boundary
/// offsets and ties in the meta stream; version 1's leaves were cut by the model: rebuild them;
/// 3: the keys' fingerprint).
pub const VERSION: u32 = 3;
/// Bytes of the header.
pub(crate) const HEADER_BYTES: usize = 160;
/// What block 0 starts with.
const START: HeaderStart = HeaderStart::new("header", MAGIC, VERSION, HEADER_BYTES);

/// The fields of the header block.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// Key type name (`Key::NAME`).
    pub key_name: String,
    /// Key size in bytes.
    pub key_size: u32,
    /// Payload size in bytes.
    pub payload_size: u32,
    /// Block size in bytes.
    pub block_size: u32,
    /// Entries.
    pub entries: u64,
    /// Leaves.
    pub leaves: u64,
    /// Model slots.
    pub slots: u64,
    /// Blocks of the file the index accounts for.
    pub blocks: u64,
    /// Fill factor of the bulk load.
    pub fill_factor: f64,
    /// Retrain ratio ([`BTreeLearnedParams::retrain_ratio`]).
    pub retrain_ratio: f64,
    /// Leftmost leaf.
    pub first_leaf: u64,
    /// First block of the meta chain.
    pub meta_head: u64,
    /// Blocks of the meta chain.
    pub meta_blocks: u64,
    /// Bytes of the meta stream.
    pub meta_bytes: u64,
    /// First block of the free list's chain ([`NO_BLOCK`](crate::disk::btree::node::NO_BLOCK) when empty).
    pub free_head: u64,
    /// Free blocks, chain blocks included.
    pub free_blocks: u64,
    /// True when nothing was written since the flush that wrote this header.
    pub clean: bool,
    /// Eps of the model that cuts the leaves.
    pub eps: u64,
    /// Fingerprint of the keys the index was built from.
    pub keys_fingerprint: u64,
}

impl Header {
    /// The leaf layout the header's sizes give (`None` if they give none).
    pub fn layout(&self) -> Option<NodeLayout> {
        layout_of(self.block_size, self.key_size, self.payload_size)
    }

    /// The build parameters the file records.
    pub fn params(&self) -> BTreeLearnedParams {
        BTreeLearnedParams {
            payload_size: self.payload_size as usize,
            fill_factor: self.fill_factor,
            retrain_ratio: self.retrain_ratio,
            eps: self.eps as usize,
        }
    }

    /// Writes the header into `out[..HEADER_BYTES]` and zeroes the rest of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        START.encode(out);
        put_u32(out, 12, self.key_size);
        put_key_name(out, 16, &self.key_name);
        put_u32(out, 32, self.payload_size);
        put_u32(out, 36, self.block_size);
        put_u64s(
            out,
            &[
                (40, self.entries),
                (48, self.leaves),
                (56, self.slots),
                (64, self.blocks),
                (72, self.fill_factor.to_bits()),
                (80, self.retrain_ratio.to_bits()),
                (88, self.first_leaf),
                (96, self.meta_head),
                (104, self.meta_blocks),
                (112, self.meta_bytes),
                (120, self.free_head),
                (128, self.free_blocks),
                (136, u64::from(self.clean)),
                (144, self.eps),
                (152, self.keys_fingerprint),
            ],
        );
    }

    /// [`Error::KeyTypeMismatch`] unless the file holds keys of type `K`.
    pub fn check_key<K: Key>(&self, file: &str) -> Result<()> {
        crate::key::check_key_type::<K>(file, &self.key_name, self.key_size)
    }
}

/// Decodes and validates a header from the usable bytes of block 0 of `file`.
pub fn decode_header(bytes: &[u8], file: &str) -> Result<Header> {
    let corrupt = |what: String| corrupt_block0(file, what);
    START.check(bytes, file)?;
    let key_name = key_name_at(bytes, 16)
        .map_err(|_| corrupt("key type name is not UTF-8".to_string()))?
        .to_string();
    let h = Header {
        key_name,
        key_size: u32_at(bytes, 12),
        payload_size: u32_at(bytes, 32),
        block_size: u32_at(bytes, 36),
        entries: u64_at(bytes, 40),
        leaves: u64_at(bytes, 48),
        slots: u64_at(bytes, 56),
        blocks: u64_at(bytes, 64),
        fill_factor: f64_at(bytes, 72),
        retrain_ratio: f64_at(bytes, 80),
        first_leaf: u64_at(bytes, 88),
        meta_head: u64_at(bytes, 96),
        meta_blocks: u64_at(bytes, 104),
        meta_bytes: u64_at(bytes, 112),
        free_head: u64_at(bytes, 120),
        free_blocks: u64_at(bytes, 128),
        clean: u64_at(bytes, 136) == 1,
        eps: u64_at(bytes, 144),
        keys_fingerprint: u64_at(bytes, 152),
    };
    if u64_at(bytes, 136) > 1 {
        return Err(corrupt(format!(
            "state {} is neither 0 nor 1",
            u64_at(bytes, 136)
        )));
    }
    if let Err(Error::InvalidParameter { name, value, .. }) = h.params().check() {
        return Err(corrupt(format!("{name} {value} is out of range")));
    }
    check_block_size(h.block_size, file)?;
    let Some(layout) = h.layout() else {
        return Err(corrupt(format!(
            "key size {} and payload size {} leave no leaf layout in {}-byte blocks",
            h.key_size, h.payload_size, h.block_size
        )));
    };
    if h.eps > MAX_EPS as u64 || h.params().leaf_target(layout.leaf_cap).is_err() {
        return Err(corrupt(format!(
            "eps {} (at most {MAX_EPS}) or fill factor {} is invalid for leaves of {}",
            h.eps, h.fill_factor, layout.leaf_cap
        )));
    }
    let accounted = h
        .leaves
        .checked_add(h.meta_blocks)
        .and_then(|n| n.checked_add(h.free_blocks))
        .and_then(|n| n.checked_add(1));
    if h.leaves == 0 || h.meta_blocks == 0 || accounted.is_none_or(|a| a > h.blocks) {
        return Err(corrupt(format!(
            "{} blocks cannot hold the header, {} leaves, {} meta blocks and {} free blocks",
            h.blocks, h.leaves, h.meta_blocks, h.free_blocks
        )));
    }
    if h.slots == 0 || h.slots > h.leaves {
        return Err(corrupt(format!(
            "{} model slots for {} leaves",
            h.slots, h.leaves
        )));
    }
    let in_file = |b: u64| b >= 1 && b < h.blocks;
    if !in_file(h.first_leaf) || !in_file(h.meta_head) {
        return Err(corrupt(format!(
            "first leaf {} or meta chain {} is not a block of the file ({} blocks)",
            h.first_leaf, h.meta_head, h.blocks
        )));
    }
    check_free_head(h.free_head, h.free_blocks, h.blocks, file)?;
    let per_block = (layout.usable - NODE_HEADER) as u64;
    if h.meta_bytes > h.meta_blocks.saturating_mul(per_block) {
        return Err(corrupt(format!(
            "a meta stream of {} bytes does not fit {} blocks",
            h.meta_bytes, h.meta_blocks
        )));
    }
    check_entries_fit(h.entries, h.leaves, &layout, file)?;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::header_fields;

    fn sample() -> Header {
        Header {
            key_name: "u64".to_string(),
            key_size: 8,
            payload_size: 8,
            block_size: 4096,
            entries: 300,
            leaves: 2,
            slots: 2,
            blocks: 6,
            fill_factor: 0.7,
            retrain_ratio: 1.0,
            first_leaf: 1,
            meta_head: 3,
            meta_blocks: 1,
            meta_bytes: 100,
            free_head: 4,
            free_blocks: 2,
            clean: true,
            eps: 16,
            keys_fingerprint: 3,
        }
    }

    #[test]
    fn round_trip() {
        let mut buf = vec![0u8; 4092];
        sample().encode(&mut buf);
        assert_eq!(decode_header(&buf, "f").unwrap(), sample());
        sample().check_key::<u64>("f").unwrap();
    }

    #[test]
    fn typed_errors() {
        let decode = |b: &[u8]| decode_header(b, "f");
        let buf = header_fields::assert_round_trip(&sample(), Header::encode, decode);
        let offsets = [56, 72, 80, 88, 96, 112, 120, 136, 144];
        header_fields::assert_fields_checked(&buf, offsets, |b, at| b[at + 7] ^= 0x80, decode);
        assert!(decode_header(&buf[..40], "f").is_err());
    }
}
