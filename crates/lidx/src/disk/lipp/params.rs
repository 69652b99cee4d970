//! [`DiskLippParams`]: the in-memory LIPP's parameters ([`LippParams`]: FMCD, when subtrees are
//! rebuilt) and the payload size. Whether node headers stay in memory is chosen at open, so it
//! is not a parameter of the file.

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};
use crate::io::BLOCK_TRAILER;
use crate::mem::lipp::LippParams;

use super::node::NODE_HEADER;

/// Parameters of an on-disk LIPP. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskLippParams {
    /// FMCD and the rebuild policy, as the in-memory LIPP (defaults: the reference's).
    pub lipp: LippParams,
    /// Bytes of every payload (8 by default): a slot is `1 + 8 + payload_size` bytes, so larger
    /// payloads make every node, and the file, larger.
    pub payload_size: usize,
}

impl Default for DiskLippParams {
    fn default() -> Self {
        DiskLippParams {
            lipp: LippParams::default(),
            payload_size: DEFAULT_PAYLOAD_SIZE,
        }
    }
}

impl DiskLippParams {
    /// [`Error::InvalidParameter`] for bad LIPP parameters or a payload so large that a node
    /// header and one slot do not fit a block of `block_size` bytes.
    pub fn check(&self, block_size: usize) -> Result<()> {
        self.lipp.validate()?;
        if NODE_HEADER + 9 + self.payload_size > block_size - BLOCK_TRAILER {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: format!("{} with {block_size}-byte blocks", self.payload_size),
                expected: "small enough that a node header and one slot fit a block",
            });
        }
        Ok(())
    }
}
