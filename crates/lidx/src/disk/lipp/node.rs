//! Node codec: a LIPP node on disk is a header (model and statistics) followed by its slots,
//! each a flag byte (`NULL`, `DATA`, `NODE`) and its content, stored contiguously from the
//! node's position in the file's usable bytes (a node may cross blocks).
//!
//! Paper 003 §4.2: LIPP's on-disk layout is ALEX's "with the exception of the node bitmaps,
//! which are replaced with a slot flag to identify the type", which "removes the overhead of
//! fetching the bitmap from the disk". We put the flag inside each slot, so reading a slot
//! reads its type with it: a lookup reads at most the block of the header (the model) and the
//! block of the slot per node, the `2 log N` of paper 003 Table 2.
//!
//! Node header (little-endian, [`NODE_HEADER`] bytes at the node's position):
//!
//! | offset | size | field                                                           |
//! |--------|------|-----------------------------------------------------------------|
//! | 0      | 4    | tag `b"LIPN"` ([`TAG`])                                         |
//! | 4      | 4    | reserved, 0                                                     |
//! | 8      | 8    | slots (at least 1)                                              |
//! | 16     | 8    | model base: model image of the node's first key at build        |
//! | 24     | 8    | model slope, `f64` bits (finite, >= 0)                          |
//! | 32     | 8    | model intercept, `f64` bits (finite)                            |
//! | 40     | 8    | size: entries in the subtree                                    |
//! | 48     | 8    | build size: entries when the subtree was built                  |
//! | 56     | 4    | inserts since the build (statistics)                            |
//! | 60     | 4    | inserts since the build that made a child (statistics)          |
//!
//! Slot `i` starts at `NODE_HEADER + i * slot_bytes`, `slot_bytes = 1 + 8 + payload_size`:
//!
//! | offset | size    | field                                                         |
//! |--------|---------|---------------------------------------------------------------|
//! | 0      | 1       | flag: 0 `NULL`, 1 `DATA`, 2 `NODE`                            |
//! | 1      | 8       | `DATA`: the key; `NODE`: the child's address ([`encode_addr`]); `NULL`: 0 |
//! | 9      | payload | `DATA`: the payload; otherwise zeros                          |
//!
//! An address is paper 003 §4.1's "4 bytes for the block number and 4 bytes for the offset in
//! the block": `block << 32 | offset`, the offset counting the block's usable bytes (the
//! checksum trailer is not addressable). In the code a node is named by its *position*,
//! `block * usable + offset`.

use crate::disk::header_fields::corrupt_at as corrupt;
use crate::disk::header_fields::{f64_at, put_u32, put_u64s, u32_at, u64_at};
use crate::error::Result;
use crate::mem::lipp::model::LinearModel;

/// Tag of a node header.
pub(crate) const TAG: u32 = u32::from_le_bytes(*b"LIPN");
/// Bytes of a node header.
pub const NODE_HEADER: usize = 64;
/// Flag of an empty slot.
pub(crate) const NULL: u8 = 0;
/// Flag of a slot holding one entry.
pub(crate) const DATA: u8 = 1;
/// Flag of a slot holding a child's address.
pub(crate) const NODE: u8 = 2;
/// Largest slot count accepted from a file (a node of 2^40 slots is far past any build).
pub(crate) const MAX_SLOTS: u64 = 1 << 40;

/// A node's header. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeHeader {
    /// Slots of the node.
    pub slots: u64,
    /// The key-to-slot model.
    pub(crate) model: LinearModel,
    /// Entries in the subtree.
    pub size: u64,
    /// Entries when the subtree was built.
    pub build_size: u64,
    /// Inserts since the build.
    pub inserts: u32,
    /// Inserts since the build that made a child.
    pub conflicts: u32,
}

impl NodeHeader {
    /// The slot model image `m` goes to.
    pub fn predict(&self, m: u64) -> usize {
        self.model.predict(m, self.slots as usize)
    }

    /// Writes the header into `out[..NODE_HEADER]`.
    pub fn encode(&self, out: &mut [u8]) {
        put_u32(out, 0, TAG);
        put_u32(out, 4, 0);
        put_u64s(
            out,
            &[
                (8, self.slots),
                (16, self.model.base),
                (24, self.model.slope.to_bits()),
                (32, self.model.intercept.to_bits()),
                (40, self.size),
                (48, self.build_size),
            ],
        );
        put_u32(out, 56, self.inserts);
        put_u32(out, 60, self.conflicts);
    }

    /// Bytes of the node: header and slots.
    pub fn node_bytes(&self, slot_bytes: usize) -> u64 {
        NODE_HEADER as u64 + self.slots * slot_bytes as u64
    }
}

/// Decodes and validates the header in `bytes` (at least [`NODE_HEADER`] bytes) of the node
/// at position `pos` (in `block` of `file`), in a file whose nodes end at `end`: the tag, a
/// slot count that fits before `end`, a finite non-decreasing model.
pub fn decode_node_header(
    bytes: &[u8],
    pos: u64,
    end: u64,
    slot_bytes: usize,
    block: u64,
    file: &str,
) -> Result<NodeHeader> {
    if bytes.len() < NODE_HEADER {
        return Err(corrupt(file, block, "node header cut short"));
    }
    let tag = u32_at(bytes, 0);
    if tag != TAG || u32_at(bytes, 4) != 0 {
        return Err(corrupt(
            file,
            block,
            format!("no LIPP node header at position {pos} (tag {tag:#x})"),
        ));
    }
    let header = NodeHeader {
        slots: u64_at(bytes, 8),
        model: LinearModel {
            base: u64_at(bytes, 16),
            slope: f64_at(bytes, 24),
            intercept: f64_at(bytes, 32),
        },
        size: u64_at(bytes, 40),
        build_size: u64_at(bytes, 48),
        inserts: u32_at(bytes, 56),
        conflicts: u32_at(bytes, 60),
    };
    if header.slots == 0 || header.slots > MAX_SLOTS {
        return Err(corrupt(
            file,
            block,
            format!("node at {pos} has {} slots", header.slots),
        ));
    }
    if pos
        .checked_add(header.node_bytes(slot_bytes))
        .is_none_or(|e| e > end)
    {
        return Err(corrupt(
            file,
            block,
            format!(
                "node at {pos} of {} slots runs past the end of the nodes ({end})",
                header.slots
            ),
        ));
    }
    let m = &header.model;
    if !m.slope.is_finite() || m.slope < 0.0 || !m.intercept.is_finite() {
        return Err(corrupt(
            file,
            block,
            format!(
                "node at {pos} has model slope {} intercept {}",
                m.slope, m.intercept
            ),
        ));
    }
    Ok(header)
}

/// A slot's content as decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// Empty.
    Null,
    /// An entry: its key (the payload follows the key in the slot bytes).
    Data(u64),
    /// A child at this position.
    Node(u64),
}

/// The on-disk address of position `pos` in blocks of `usable` bytes.
pub fn encode_addr(pos: u64, usable: usize) -> u64 {
    let (block, offset) = (pos / usable as u64, pos % usable as u64);
    (block << 32) | offset
}

/// The position of on-disk address `raw`, `None` when its offset is past the usable bytes.
pub(crate) fn decode_addr(raw: u64, usable: usize) -> Option<u64> {
    let (block, offset) = (raw >> 32, raw & 0xffff_ffff);
    (offset < usable as u64).then(|| block * usable as u64 + offset)
}

/// Decodes slot `bytes` (`1 + 8` bytes at least) of the node at `pos`, in a file whose nodes
/// lie in positions `first..end`: a known flag, and a child address inside the nodes and past
/// the parent's own position (children are always written after their parent).
pub fn decode_slot(
    bytes: &[u8],
    pos: u64,
    usable: usize,
    (first, end): (u64, u64),
    block: u64,
    file: &str,
) -> Result<SlotKind> {
    if bytes.len() < 9 {
        return Err(corrupt(file, block, "slot cut short"));
    }
    let word = u64_at(bytes, 1);
    match bytes[0] {
        NULL => Ok(SlotKind::Null),
        DATA => Ok(SlotKind::Data(word)),
        NODE => match decode_addr(word, usable) {
            Some(child) if child >= first && child > pos && child < end => {
                Ok(SlotKind::Node(child))
            }
            _ => Err(corrupt(
                file,
                block,
                format!(
                    "slot of the node at {pos} names child address {word:#x}, not a node \
                     after it (nodes end at {end})"
                ),
            )),
        },
        flag => Err(corrupt(
            file,
            block,
            format!("slot of the node at {pos} has flag {flag}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn sample() -> NodeHeader {
        NodeHeader {
            slots: 12,
            model: LinearModel {
                base: 77,
                slope: 0.25,
                intercept: 1.5,
            },
            size: 9,
            build_size: 7,
            inserts: 3,
            conflicts: 1,
        }
    }

    #[test]
    fn header_round_trip_and_typed_errors() {
        let mut buf = [0u8; NODE_HEADER];
        sample().encode(&mut buf);
        let end = 4092 * 2;
        assert_eq!(
            decode_node_header(&buf, 100, end, 17, 1, "f").unwrap(),
            sample()
        );
        for (at, v) in [(0usize, 9u8), (8, 0), (39, 0xff), (31, 0xff)] {
            let mut bad = buf;
            bad[at] = v;
            if at == 8 {
                bad[8..16].fill(0);
            }
            assert!(matches!(
                decode_node_header(&bad, 100, end, 17, 1, "f"),
                Err(Error::Corrupt { block: Some(1), .. })
            ));
        }
        assert!(decode_node_header(&buf, end - 10, end, 17, 1, "f").is_err());
    }

    #[test]
    fn slots_and_addresses() {
        let usable = 4092;
        for pos in [4092u64, 4093, 3 * 4092 + 4091] {
            assert_eq!(decode_addr(encode_addr(pos, usable), usable), Some(pos));
        }
        let mut slot = [0u8; 17];
        slot[0] = NODE;
        slot[1..9].copy_from_slice(&encode_addr(9000, usable).to_le_bytes());
        let range = (4092, 10_000);
        assert_eq!(
            decode_slot(&slot, 5000, usable, range, 1, "f").unwrap(),
            SlotKind::Node(9000)
        );
        assert!(decode_slot(&slot, 9500, usable, range, 1, "f").is_err());
        slot[0] = 7;
        assert!(decode_slot(&slot, 5000, usable, range, 1, "f").is_err());
        slot[0] = DATA;
        assert_eq!(
            decode_slot(&slot, 5000, usable, range, 1, "f").unwrap(),
            SlotKind::Data(encode_addr(9000, usable))
        );
    }
}
