//! Inner nodes on disk: a header with the node's linear model, then the child addresses.
//!
//! Paper 003 §4.1, Layout #2: inner nodes go to their own file, stored contiguously one after
//! another, so that small upper-level nodes share a block ("we can traverse multiple levels
//! using one block"); each child pointer is 8 bytes, block number and offset
//! (`super::addr`). As in memory (`crate::mem::alex::inner_node`), a child owns
//! `2^duplication` neighbouring slots; the duplication is kept in the child's own header.
//!
//! Byte layout (little-endian) at the node's position in `<name>.inner`:
//!
//! | offset | size        | field                                                   |
//! |--------|-------------|---------------------------------------------------------|
//! | 0      | 4           | tag `b"ALXI"`                                           |
//! | 4      | 1           | state: 1 live, 2 invalid (replaced by a structural change) |
//! | 5      | 1           | duplication: log2 of the parent's slots pointing here   |
//! | 6      | 2           | reserved, 0                                             |
//! | 8      | 4           | fanout (a power of two, at least 2)                     |
//! | 12     | 4           | reserved, 0                                             |
//! | 16     | 8           | model slope `a`, `f64` bits (finite, >= 0)              |
//! | 24     | 8           | model intercept `b`, `f64` bits (finite)                |
//! | 32     | 8           | model base key                                          |
//! | 40     | 8 * fanout  | child addresses                                         |
//!
//! On-disk inner nodes never change size: a data node splits sideways only inside the slots it
//! already owns, and otherwise down (see `update`), so a parent's slots are rewritten in place
//! and the parent never moves. The duplication is rewritten in place when a left widening
//! puts a new node over this one (which then owns half of the new node's slots).

use crate::error::{Error, Result};
use crate::mem::alex::model::LinearModel;

/// Tag of an inner node.
pub(crate) const TAG: u32 = u32::from_le_bytes(*b"ALXI");
/// Bytes before the child addresses.
pub const INNER_HEADER_BYTES: usize = 40;
/// A node in use.
pub(crate) const LIVE: u8 = 1;
/// A node replaced by a structural change; its bytes are not reused.
pub(crate) const INVALID: u8 = 2;
/// Largest fanout accepted from a file (the in-memory ALEX's limit for 1 GiB nodes).
pub(crate) const MAX_FANOUT: u32 = 1 << 27;

/// An inner node's header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InnerHeader {
    pub(crate) state: u8,
    pub(crate) duplication: u8,
    pub(crate) fanout: u32,
    pub(crate) model: LinearModel,
}

impl InnerHeader {
    /// Child slots.
    pub fn fanout(&self) -> usize {
        self.fanout as usize
    }

    /// Bytes of the node with its children.
    pub fn node_bytes(&self) -> u64 {
        INNER_HEADER_BYTES as u64 + 8 * u64::from(self.fanout)
    }

    /// Writes the header into `out[..INNER_HEADER_BYTES]`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&TAG.to_le_bytes());
        out[4] = self.state;
        out[5] = self.duplication;
        out[6..8].fill(0);
        out[8..12].copy_from_slice(&self.fanout.to_le_bytes());
        out[12..16].fill(0);
        out[16..24].copy_from_slice(&self.model.a.to_bits().to_le_bytes());
        out[24..32].copy_from_slice(&self.model.b.to_bits().to_le_bytes());
        out[32..40].copy_from_slice(&self.model.base.to_le_bytes());
    }
}

/// Decodes an inner node's header from `bytes` (its first [`INNER_HEADER_BYTES`]), read from
/// `file` at `block`; any inconsistency is [`Error::Corrupt`] naming both.
pub fn decode_inner_header(bytes: &[u8], file: &str, block: u64) -> Result<InnerHeader> {
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(block),
        what: format!("inner node: {what}"),
    };
    if bytes.len() < INNER_HEADER_BYTES {
        return Err(bad(format!(
            "{} bytes, header needs {INNER_HEADER_BYTES}",
            bytes.len()
        )));
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
    if u32_at(0) != TAG {
        return Err(bad(format!("tag {:#x}, not an inner node", u32_at(0))));
    }
    let h = InnerHeader {
        state: bytes[4],
        duplication: bytes[5],
        fanout: u32_at(8),
        model: LinearModel {
            a: f64::from_bits(u64_at(16)),
            b: f64::from_bits(u64_at(24)),
            base: u64_at(32),
        },
    };
    if h.state != LIVE && h.state != INVALID {
        return Err(bad(format!("state {}", h.state)));
    }
    if h.duplication > 31 {
        return Err(bad(format!("duplication {}", h.duplication)));
    }
    if h.fanout < 2 || h.fanout > MAX_FANOUT || !h.fanout.is_power_of_two() {
        return Err(bad(format!("fanout {}", h.fanout)));
    }
    if !(h.model.a.is_finite() && h.model.a >= 0.0 && h.model.b.is_finite()) {
        return Err(bad(format!("model {} x + {}", h.model.a, h.model.b)));
    }
    Ok(h)
}
