//! The free list: blocks of nodes that merges removed, reused by later splits.
//!
//! Paper 003 §6.3 measures storage after writes and does not reuse invalid space; its footnote
//! says reusing it needs bookkeeping of free space and costs extra work. A B+-tree's nodes are
//! all one block, so the bookkeeping is one block id per free block: a merge or a root collapse
//! gives its block here, a split takes the lowest free block before it appends to the file,
//! so the file stops growing while deletes make room.
//! Taking and giving cost no I/O: the list lives in memory between flushes.
//!
//! [`super::DiskBTree::flush`] persists it as a chain of *free-list blocks* made of free blocks
//! themselves (the highest ones, which are reused last): each holds the ids of other free
//! blocks and the next chain block, and the header records the chain's first block and the
//! number of free blocks, chain blocks included. Opening reads the chain (one block per
//! [`FreeLayout::ids_per_block`] free blocks, 509 with 4 KiB blocks) and checks it: every
//! chain block decodes ([`decode_free_block`]), every id is a block of the tree, none appears
//! twice, the count is the header's, and (in [`super::check`]) no free block is reachable from
//! the root. A failure is [`Error::Corrupt`](crate::Error::Corrupt) naming the file and the block.
//!
//! Byte layout of a free-list block (little-endian, usable bytes of the block; the node header
//! of [`super::node`] with kind 3):
//!
//! | offset | size      | field                                              |
//! |--------|-----------|----------------------------------------------------|
//! | 0      | 1         | kind: 3 = free-list block                          |
//! | 1      | 3         | reserved, 0                                        |
//! | 4      | 4         | count: free block ids in this block                |
//! | 8      | 8         | next free-list block, `u64::MAX` = none            |
//! | 16     | `count*8` | free block ids, ascending                          |

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::disk::header_fields::corrupt_at as corrupt;
use crate::error::Result;
use crate::io::{AlignedBuf, BlockDevice, IoClass};

use super::node::{NODE_HEADER, NO_BLOCK};

/// Kind byte of a free-list block.
pub(crate) const KIND_FREE: u8 = 3;

/// Where the ids sit in a free-list block of `usable` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeLayout {
    /// Usable bytes per block.
    pub usable: usize,
}

impl FreeLayout {
    /// Free block ids one free-list block holds.
    pub fn ids_per_block(&self) -> usize {
        (self.usable - NODE_HEADER) / 8
    }
}

/// A decoded free-list block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeBlock {
    /// The free block ids it lists.
    pub ids: Vec<u64>,
    /// The next block of the chain, if any.
    pub next: Option<u64>,
}

/// Decodes and validates the free-list block in `bytes` (a block's usable bytes), read from
/// block `block` of `file`, a tree of `blocks` blocks: ids and the next link must be blocks
/// of the tree other than the header and this block, ids strictly ascending.
pub fn decode_free_block(
    bytes: &[u8],
    layout: &FreeLayout,
    block: u64,
    blocks: u64,
    file: &str,
) -> Result<FreeBlock> {
    if bytes.len() < layout.usable || layout.usable < NODE_HEADER + 8 {
        return Err(corrupt(
            file,
            block,
            format!(
                "free-list block of {} bytes read with a layout for {} bytes",
                bytes.len(),
                layout.usable
            ),
        ));
    }
    if bytes[0] != KIND_FREE || bytes[1..4] != [0, 0, 0] {
        return Err(corrupt(
            file,
            block,
            format!(
                "kind {} where the free list has a block (kind {KIND_FREE})",
                bytes[0]
            ),
        ));
    }
    let count = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")) as usize;
    if count > layout.ids_per_block() {
        return Err(corrupt(
            file,
            block,
            format!(
                "{count} free block ids exceed the capacity {}",
                layout.ids_per_block()
            ),
        ));
    }
    let id_ok = |id: u64| id >= 1 && id < blocks && id != block;
    let link = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    if link != NO_BLOCK && !id_ok(link) {
        return Err(corrupt(
            file,
            block,
            format!("next free-list block {link} is not a block of the tree ({blocks} blocks)"),
        ));
    }
    let ids: Vec<u64> = bytes[NODE_HEADER..NODE_HEADER + count * 8]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if let Some(&bad) = ids.iter().find(|&&id| !id_ok(id)) {
        return Err(corrupt(
            file,
            block,
            format!("free block {bad} is not a block of the tree ({blocks} blocks)"),
        ));
    }
    if ids.windows(2).any(|w| w[0] >= w[1]) {
        return Err(corrupt(file, block, "free block ids are not ascending"));
    }
    Ok(FreeBlock {
        ids,
        next: (link != NO_BLOCK).then_some(link),
    })
}

/// Encodes a free-list block listing `ids` (ascending, at most `ids_per_block`).
pub fn encode_free_block(buf: &mut [u8], layout: &FreeLayout, ids: &[u64], next: Option<u64>) {
    buf[..layout.usable].fill(0);
    buf[0] = KIND_FREE;
    buf[4..8].copy_from_slice(&(ids.len() as u32).to_le_bytes());
    buf[8..16].copy_from_slice(&next.unwrap_or(NO_BLOCK).to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        let at = NODE_HEADER + i * 8;
        buf[at..at + 8].copy_from_slice(&id.to_le_bytes());
    }
}

/// The free blocks, lowest first.
#[derive(Debug, Default)]
pub(crate) struct FreeList {
    heap: BinaryHeap<Reverse<u64>>,
}

impl FreeList {
    /// Free blocks now.
    pub(crate) fn len(&self) -> u64 {
        self.heap.len() as u64
    }

    /// The lowest free block, taken off the list.
    pub(crate) fn take(&mut self) -> Option<u64> {
        self.heap.pop().map(|Reverse(b)| b)
    }

    /// Puts `block` on the list.
    pub(crate) fn give(&mut self, block: u64) {
        self.heap.push(Reverse(block));
    }

    /// The free blocks, ascending.
    pub(crate) fn sorted(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.heap.iter().map(|r| r.0).collect();
        ids.sort_unstable();
        ids
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<u64>()
    }

    /// Reads the chain from `head` in a tree of `blocks` blocks and checks it holds exactly
    /// `count` distinct free blocks (see the module docs).
    pub(crate) fn load(
        device: &dyn BlockDevice,
        layout: &FreeLayout,
        head: u64,
        count: u64,
        blocks: u64,
    ) -> Result<FreeList> {
        let file = device.name();
        let mut ids: Vec<u64> = Vec::new();
        let mut buf = AlignedBuf::zeroed(device.block_size());
        let mut next = (head != NO_BLOCK).then_some(head);
        while let Some(block) = next {
            if ids.len() as u64 >= count {
                return Err(corrupt(
                    file,
                    block,
                    format!("the free list holds more than the header's {count} blocks"),
                ));
            }
            device.read_blocks(block, &mut buf, IoClass::Header)?;
            let decoded = decode_free_block(&buf[..layout.usable], layout, block, blocks, file)?;
            ids.push(block);
            ids.extend(decoded.ids);
            next = decoded.next;
        }
        if ids.len() as u64 != count {
            return Err(corrupt(
                file,
                0,
                format!(
                    "the free list holds {} blocks, the header says {count}",
                    ids.len()
                ),
            ));
        }
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(corrupt(file, w[0], "the block is on the free list twice"));
        }
        Ok(FreeList {
            heap: ids.into_iter().map(Reverse).collect(),
        })
    }

    /// Writes the list as a chain into its own highest blocks and returns the chain's head
    /// (`NO_BLOCK` when the list is empty). The list itself is unchanged: chain blocks stay
    /// free, reusable once the header that names them is replaced.
    pub(crate) fn store(&self, device: &dyn BlockDevice, layout: &FreeLayout) -> Result<u64> {
        let ids = self.sorted();
        let per = layout.ids_per_block();
        let chain = ids.len().div_ceil(per + 1);
        let (listed, chain_blocks) = ids.split_at(ids.len() - chain);
        let mut buf = AlignedBuf::zeroed(device.block_size());
        for (i, &block) in chain_blocks.iter().enumerate() {
            let part = &listed[(i * per).min(listed.len())..((i + 1) * per).min(listed.len())];
            encode_free_block(&mut buf, layout, part, chain_blocks.get(i + 1).copied());
            device.write_blocks(block, &mut buf, IoClass::Header)?;
        }
        Ok(chain_blocks.first().copied().unwrap_or(NO_BLOCK))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::io::{SimProfile, Storage};

    #[test]
    fn block_round_trip_and_validation() {
        let layout = FreeLayout { usable: 508 };
        assert_eq!(layout.ids_per_block(), 61);
        let mut buf = vec![0u8; 508];
        encode_free_block(&mut buf, &layout, &[2, 5, 9], Some(4));
        let decoded = decode_free_block(&buf, &layout, 7, 10, "f").unwrap();
        assert_eq!(decoded.ids, [2, 5, 9]);
        assert_eq!(decoded.next, Some(4));
        let block_err = |bytes: &[u8]| match decode_free_block(bytes, &layout, 7, 10, "f") {
            Err(Error::Corrupt { block, .. }) => block,
            other => panic!("{other:?}"),
        };
        assert_eq!(block_err(&vec![0u8; 508]), Some(7));
        for (at, value, what) in [
            (16, 12, "id past the tree"),
            (8, 7, "a link to itself"),
            (24, 1, "ids out of order"),
            (4, 200, "count past the capacity"),
        ] {
            let mut bad = buf.clone();
            bad[at] = value;
            assert_eq!(block_err(&bad), Some(7), "{what}");
        }
    }

    #[test]
    fn store_and_load_round_trip() {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap();
        let device = storage.create("t").unwrap();
        let layout = FreeLayout { usable: 508 };
        for n in [0u64, 1, 61, 62, 63, 200] {
            let mut list = FreeList::default();
            (0..n).for_each(|i| list.give(1 + i * 3));
            let blocks = 1 + n * 3;
            device
                .write_blocks(0, &mut vec![0u8; 512 * blocks as usize], IoClass::Header)
                .unwrap();
            let head = list.store(device.as_ref(), &layout).unwrap();
            let loaded = FreeList::load(device.as_ref(), &layout, head, n, blocks).unwrap();
            assert_eq!(loaded.sorted(), list.sorted(), "{n} free blocks");
            assert!(FreeList::load(device.as_ref(), &layout, head, n + 1, blocks).is_err());
            if n > 0 {
                assert!(FreeList::load(device.as_ref(), &layout, head, n - 1, blocks).is_err());
            }
        }
        let mut list = FreeList::default();
        [9, 3, 5].into_iter().for_each(|b| list.give(b));
        assert_eq!(
            (list.take(), list.take(), list.len()),
            (Some(3), Some(5), 1)
        );
    }
}
