//! Node addresses: paper 003 §4.1 stores a child pointer on disk as "4 bytes for the block
//! number and 4 bytes for the offset in the block" (8 bytes). Ours is that pair in one
//! little-endian `u64`, `block << 32 | offset`, with the top bit set when the child is a data
//! node (it lives in the data-node file; an inner node's children may be of either kind), so
//! blocks are below 2^31. The offset counts usable bytes of the block (the checksum trailer is
//! not addressable): a node that does not fit in the rest of its block continues at the start
//! of the next block's usable bytes.
//!
//! Inside the code a node is named by its *position*: `block * usable + offset`, a byte index
//! into the concatenated usable bytes of its file; [`Addr`] converts between the two.

use crate::error::{Error, Result};

/// Tag bit of a data-node address.
pub(crate) const DATA_TAG: u64 = 1 << 63;
/// No node (end of the data-node chain).
pub(crate) const NONE: u64 = u64::MAX;
/// Largest block number an address can hold.
pub(crate) const MAX_BLOCK: u64 = (1 << 31) - 1;

/// A node's place: its file (data or inner) and byte position in that file's usable bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Addr {
    pub(crate) data: bool,
    pub(crate) pos: u64,
}

impl Addr {
    pub(crate) fn inner(pos: u64) -> Addr {
        Addr { data: false, pos }
    }

    pub(crate) fn data(pos: u64) -> Addr {
        Addr { data: true, pos }
    }

    /// The on-disk form for blocks of `usable` bytes.
    pub(crate) fn encode(self, usable: usize) -> u64 {
        let (block, offset) = (self.pos / usable as u64, self.pos % usable as u64);
        debug_assert!(block <= MAX_BLOCK);
        (block << 32) | offset | if self.data { DATA_TAG } else { 0 }
    }

    /// Decodes an on-disk address; `None` when the offset is past the usable bytes or the
    /// block is 0 (the header block holds no node).
    pub(crate) fn decode(raw: u64, usable: usize) -> Option<Addr> {
        let data = raw & DATA_TAG != 0;
        let block = (raw & !DATA_TAG) >> 32;
        let offset = raw & 0xffff_ffff;
        if block == 0 || offset >= usable as u64 {
            return None;
        }
        Some(Addr {
            data,
            pos: block * usable as u64 + offset,
        })
    }

    /// Like [`Addr::decode`], as a [`Error::Corrupt`] naming `file` and `block` when invalid.
    pub(crate) fn decode_in(raw: u64, usable: usize, file: &str, block: u64) -> Result<Addr> {
        Addr::decode(raw, usable).ok_or_else(|| Error::Corrupt {
            file: file.to_string(),
            block: Some(block),
            what: format!("node address {raw:#x} is not a block and offset of the file"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_refuse_the_header_block() {
        for (data, pos) in [
            (false, 4064),
            (true, 4064 * 7 + 13),
            (true, 4064 * MAX_BLOCK),
        ] {
            let a = Addr { data, pos };
            assert_eq!(Addr::decode(a.encode(4064), 4064), Some(a));
        }
        assert_eq!(Addr::decode(5, 4064), None);
        assert_eq!(Addr::decode((1 << 32) | 4064, 4064), None);
    }
}
