//! Header block codec: block 0 of a disk B+-tree file.
//!
//! Paper 003 §4.1 keeps a *meta block* first in the file that records the root's address,
//! because splits can change the root; §6.1 holds it in memory while the index is in use. Ours
//! holds the root and everything else needed to reopen the tree without a scan: key type and
//! sizes, height, counts and the first leaf, and what the file is (the magic) with every build
//! parameter ([`super::DiskBTreeParams`]'s payload size and fill factor; which levels stay in
//! memory is chosen at open, so it is not recorded), so a caller can check that a file is the
//! tree it asked for ([`Header::params`]). It is written at build and by
//! [`super::DiskBTree::flush`]; between flushes the copy in memory is the current one.
//!
//! Byte layout of the header (little-endian, in the usable bytes of block 0):
//!
//! | offset | size | field                                                        |
//! |--------|------|--------------------------------------------------------------|
//! | 0      | 8    | magic `b"lidxBPT1"` as a little-endian `u64` ([`MAGIC`])     |
//! | 8      | 4    | format version, 2                                            |
//! | 12     | 4    | key size in bytes                                            |
//! | 16     | 16   | key type name (`Key::NAME`), UTF-8, zero-padded              |
//! | 32     | 4    | payload size in bytes                                        |
//! | 36     | 4    | block size in bytes (checksum trailer included)              |
//! | 40     | 4    | height: levels including the leaves (1 = the root is a leaf) |
//! | 44     | 4    | reserved, 0                                                  |
//! | 48     | 8    | root block                                                   |
//! | 56     | 8    | first (leftmost) leaf block                                  |
//! | 64     | 8    | entries                                                      |
//! | 72     | 8    | leaf nodes                                                   |
//! | 80     | 8    | inner nodes                                                  |
//! | 88     | 8    | blocks in the file: 1 + leaves + inner nodes + free blocks   |
//! | 96     | 8    | build fill factor, `f64` bits, in `(0, 1]`                   |
//! | 104    | 8    | first block of the free list's chain, `u64::MAX` = none      |
//! | 112    | 8    | free blocks (chain blocks included)                          |
//! | 120    | 8    | fingerprint of the keys built from ([`keys_fingerprint`])    |
//!
//! The free list ([`super::free`]) holds the blocks of nodes that merges removed; splits take
//! from it before they append to the file. The keys' fingerprint binds the file to the dataset
//! it was built from (a derived file; `docs/format.md`, "Keys fingerprint"): a caller opening
//! it for a dataset
//! compares it with the dataset's ([`crate::disk::check_built_from`]); writes after the build
//! do not change it. Version 1 had no fill factor, version 2 no free list (its block count was
//! leaves and inner nodes only), version 3 no fingerprint; their files are refused
//! ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion): rebuild them with
//! `lidx build`).
//!
//! [`keys_fingerprint`]: crate::codec::keys_fingerprint
//!
//! [`decode_header`] checks the magic ([`Error::BadMagic`](crate::Error::BadMagic)), the version
//! ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion)) and that the fields agree with each other (sizes give a
//! valid node layout, the block count is the node and free block count plus one, root, first
//! leaf and free list head are blocks of the file, the height fits the node count, the entries
//! fit the leaves); anything else is
//! [`Error::Corrupt`](crate::Error::Corrupt) for block 0. The key type is checked by the caller, who knows it.

use crate::disk::header_fields::{
    check_block_size, corrupt_block0, f64_at, key_name_at, put_key_name, put_u32, put_u64s, u32_at,
    u64_at, HeaderStart,
};
use crate::error::Result;
use crate::key::Key;

use super::node::{NodeLayout, NO_BLOCK};
use super::params::DiskBTreeParams;

/// Magic number of a disk B+-tree file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"lidxBPT1");
/// Format version this build writes and reads (2: the build fill factor is recorded; 3: the
/// free list; 4: the fingerprint of the keys built from).
pub(crate) const VERSION: u32 = 4;
/// Bytes of the header.
pub(crate) const HEADER_BYTES: usize = 128;
/// What block 0 starts with.
const START: HeaderStart = HeaderStart::new("header", MAGIC, VERSION, HEADER_BYTES);
/// Largest height accepted from a file: a tree of fanout 3 this tall would hold more than
/// 2^64 entries, so a larger value can only be corruption.
pub(crate) const MAX_HEIGHT: u32 = 48;

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
    /// Levels including the leaves.
    pub height: u32,
    /// Root block.
    pub root: u64,
    /// Leftmost leaf block.
    pub first_leaf: u64,
    /// Entries in the tree.
    pub entries: u64,
    /// Leaf nodes.
    pub leaves: u64,
    /// Inner nodes.
    pub inners: u64,
    /// Blocks of the tree (header, nodes and free blocks).
    pub blocks: u64,
    /// Fraction of each node's capacity the bulk load filled, in `(0, 1]`.
    pub fill_factor: f64,
    /// First block of the free list's chain ([`super::node::NO_BLOCK`] when it is empty).
    pub free_head: u64,
    /// Free blocks, the chain's own blocks included.
    pub free_blocks: u64,
    /// Fingerprint of the keys the tree was built from ([`keys_fingerprint`](crate::disk::keys_fingerprint)).
    pub keys_fingerprint: u64,
}

impl Header {
    /// The node layout the header's sizes give (`None` if they give none).
    pub fn layout(&self) -> Option<NodeLayout> {
        layout_of(self.block_size, self.key_size, self.payload_size)
    }

    /// The build parameters the file records. Which levels stay in memory is not one of them
    /// (it is chosen at open): the result carries the default.
    pub fn params(&self) -> DiskBTreeParams {
        DiskBTreeParams {
            payload_size: self.payload_size as usize,
            fill_factor: self.fill_factor,
            ..DiskBTreeParams::default()
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
        put_u32(out, 40, self.height);
        put_u64s(
            out,
            &[
                (48, self.root),
                (56, self.first_leaf),
                (64, self.entries),
                (72, self.leaves),
                (80, self.inners),
                (88, self.blocks),
                (96, self.fill_factor.to_bits()),
                (104, self.free_head),
                (112, self.free_blocks),
                (120, self.keys_fingerprint),
            ],
        );
    }

    /// [`Error::KeyTypeMismatch`](crate::Error::KeyTypeMismatch) unless the file holds keys of type `K`.
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
    let header = Header {
        key_name,
        key_size: u32_at(bytes, 12),
        payload_size: u32_at(bytes, 32),
        block_size: u32_at(bytes, 36),
        height: u32_at(bytes, 40),
        root: u64_at(bytes, 48),
        first_leaf: u64_at(bytes, 56),
        entries: u64_at(bytes, 64),
        leaves: u64_at(bytes, 72),
        inners: u64_at(bytes, 80),
        blocks: u64_at(bytes, 88),
        fill_factor: f64_at(bytes, 96),
        free_head: u64_at(bytes, 104),
        free_blocks: u64_at(bytes, 112),
        keys_fingerprint: u64_at(bytes, 120),
    };
    if header.params().check().is_err() {
        return Err(corrupt(format!(
            "fill factor {} is not in (0, 1]",
            header.fill_factor
        )));
    }
    check_block_size(header.block_size, file)?;
    let Some(layout) = header.layout() else {
        return Err(corrupt(format!(
            "key size {} and payload size {} leave no valid node layout in {}-byte blocks",
            header.key_size, header.payload_size, header.block_size
        )));
    };
    let accounted = header
        .leaves
        .checked_add(header.inners)
        .and_then(|n| n.checked_add(header.free_blocks))
        .and_then(|n| n.checked_add(1));
    if header.leaves == 0 || accounted != Some(header.blocks) {
        return Err(corrupt(format!(
            "{} blocks do not hold the header, {} leaves, {} inner nodes and {} free blocks",
            header.blocks, header.leaves, header.inners, header.free_blocks
        )));
    }
    let node_block = |b: u64| b >= 1 && b < header.blocks;
    if !node_block(header.root) || !node_block(header.first_leaf) {
        return Err(corrupt(format!(
            "root {} or first leaf {} is not a node block ({} blocks)",
            header.root, header.first_leaf, header.blocks
        )));
    }
    check_free_head(header.free_head, header.free_blocks, header.blocks, file)?;
    let height_ok = match header.height {
        0 => false,
        1 => header.inners == 0 && header.leaves == 1 && header.root == header.first_leaf,
        h => h <= MAX_HEIGHT && header.inners >= u64::from(h - 1),
    };
    if !height_ok {
        return Err(corrupt(format!(
            "height {} does not fit {} leaves and {} inner nodes",
            header.height, header.leaves, header.inners
        )));
    }
    check_entries_fit(header.entries, header.leaves, &layout, file)?;
    Ok(header)
}

/// The node layout of `block_size`-byte blocks (trailer included) for keys and payloads of
/// these sizes (`None` if they give none): what the B+-tree's and the learned-inner
/// B+-tree's headers check.
pub(crate) fn layout_of(block_size: u32, key_size: u32, payload_size: u32) -> Option<NodeLayout> {
    let usable = (block_size as usize).checked_sub(crate::io::BLOCK_TRAILER)?;
    NodeLayout::new(usable, key_size as usize, payload_size as usize)
}

/// [`Error::Corrupt`](crate::Error::Corrupt) for block 0 unless the free list's head fits its
/// count: [`NO_BLOCK`] for an empty list, else a block after the header among `blocks`.
pub(crate) fn check_free_head(head: u64, free_blocks: u64, blocks: u64, file: &str) -> Result<()> {
    let ok = if free_blocks == 0 {
        head == NO_BLOCK
    } else {
        head >= 1 && head < blocks
    };
    if !ok {
        return Err(corrupt_block0(
            file,
            format!(
                "free list head {head} does not fit {free_blocks} free blocks in {blocks} blocks"
            ),
        ));
    }
    Ok(())
}

/// [`Error::Corrupt`](crate::Error::Corrupt) for block 0 unless `entries` fit `leaves` leaves
/// of `layout`.
pub(crate) fn check_entries_fit(
    entries: u64,
    leaves: u64,
    layout: &NodeLayout,
    file: &str,
) -> Result<()> {
    if entries > leaves.saturating_mul(layout.leaf_cap as u64) {
        return Err(corrupt_block0(
            file,
            format!(
                "{entries} entries do not fit {leaves} leaves of {}",
                layout.leaf_cap
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn sample() -> Header {
        Header {
            key_name: "u64".to_string(),
            key_size: 8,
            payload_size: 8,
            block_size: 4096,
            height: 2,
            root: 3,
            first_leaf: 1,
            entries: 300,
            leaves: 2,
            inners: 1,
            blocks: 6,
            fill_factor: 0.7,
            free_head: 5,
            free_blocks: 2,
            keys_fingerprint: 0x1234_5678,
        }
    }

    #[test]
    fn round_trip() {
        let mut buf = vec![0u8; 4092];
        sample().encode(&mut buf);
        assert_eq!(decode_header(&buf, "f").unwrap(), sample());
        assert_eq!(sample().params().fill_factor, 0.7);
        sample().check_key::<u64>("f").unwrap();
        assert!(matches!(
            sample().check_key::<[u8; 16]>("f"),
            Err(Error::KeyTypeMismatch { .. })
        ));
    }

    #[test]
    fn typed_errors() {
        let mut buf = vec![0u8; 4092];
        sample().encode(&mut buf);
        crate::disk::header_fields::assert_start_checked(&buf, |b| decode_header(b, "f"));
        let mut bad = buf.clone();
        bad[88] = 9;
        assert!(matches!(
            decode_header(&bad, "f"),
            Err(Error::Corrupt { block: Some(0), .. })
        ));
        let mut bad = buf.clone();
        bad[96..104].copy_from_slice(&1.5f64.to_bits().to_le_bytes());
        assert!(matches!(
            decode_header(&bad, "f"),
            Err(Error::Corrupt { block: Some(0), .. })
        ));
        let mut bad = buf.clone();
        bad[104] = 9;
        assert!(matches!(
            decode_header(&bad, "f"),
            Err(Error::Corrupt { block: Some(0), .. })
        ));
        for old_version in [1, 2, 3] {
            let mut old = buf.clone();
            old[8] = old_version;
            crate::error::assert_refused_as_old(
                decode_header(&old, "f").unwrap_err(),
                u32::from(old_version),
                VERSION,
            );
        }
        assert!(decode_header(&buf[..40], "f").is_err());
    }
}
