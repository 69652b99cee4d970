//! [`DiskAlexParams`]: the in-memory ALEX's knobs ([`AlexParams`]) plus the payload size.

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};
use crate::mem::alex::params::Derived;
use crate::mem::alex::AlexParams;

/// Parameters of an on-disk ALEX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskAlexParams {
    /// ALEX's parameters, the reference's defaults (16 MiB nodes: paper 003 §4.1 "the size of
    /// the data node can be as large as 16 MB"). A data node's slot on disk is `8 +
    /// payload_size` bytes, so `max_node_bytes / (8 + payload_size)` slots at most; smaller
    /// nodes fetch fewer blocks per search and per expansion, at the price of a deeper tree.
    pub alex: AlexParams,
    /// Bytes of every payload (default 8). At least 1, at most 1024.
    pub payload_size: usize,
}

impl Default for DiskAlexParams {
    fn default() -> Self {
        DiskAlexParams {
            alex: AlexParams::default(),
            payload_size: DEFAULT_PAYLOAD_SIZE,
        }
    }
}

impl DiskAlexParams {
    /// Bytes of one data-node slot: the key and its payload.
    pub(crate) fn slot_bytes(&self) -> usize {
        8 + self.payload_size
    }

    /// Checks the parameters for blocks of `block_size` bytes and derives ALEX's limits for
    /// the on-disk slot size.
    pub(crate) fn check(&self, block_size: usize) -> Result<Derived> {
        if !(1..=1024).contains(&self.payload_size) {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: self.payload_size.to_string(),
                expected: "1 to 1024 bytes",
            });
        }
        if block_size < 512 {
            return Err(Error::InvalidParameter {
                name: "block_size",
                value: block_size.to_string(),
                expected: "at least 512 bytes",
            });
        }
        self.alex.derive(self.slot_bytes())
    }
}
