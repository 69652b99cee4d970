//! Build and open parameters of the disk B+-tree.
//!
//! Paper 003 runs its B+-tree two ways: entirely on disk with only the meta block in memory
//! (§6.1), and with every inner node in memory, leaves on disk (the *hybrid case*, §6.2). A
//! third setting, the top `k` levels in memory, sits between them and is what a buffer pool
//! that favors upper levels gives (compare §6.6). [`Resident`] chooses among the three.

use crate::disk::DEFAULT_PAYLOAD_SIZE;
use crate::error::{Error, Result};

/// Which inner levels stay in memory. Leaves are always on disk.
///
/// More levels in memory cost RAM (about the size of those levels' blocks) and save one block
/// read per level per lookup: with [`Resident::AllInner`] every lookup reads exactly one block,
/// its leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Resident {
    /// Only the header is in memory: a lookup reads one block per level (paper 003 §6.1).
    None,
    /// Every inner node is in memory: a lookup reads its leaf only (paper 003 §6.2, the hybrid
    /// case).
    #[default]
    AllInner,
    /// The top `k` levels (the root is level 1 from the top) are in memory, or all inner levels
    /// when the tree has fewer. `TopLevels(0)` is [`Resident::None`].
    TopLevels(u32),
}

impl Resident {
    /// How many levels are resident in a tree of `height` levels (leaves included).
    pub fn levels(self, height: u32) -> u32 {
        let inner = height.saturating_sub(1);
        match self {
            Resident::None => 0,
            Resident::AllInner => inner,
            Resident::TopLevels(k) => k.min(inner),
        }
    }
}

/// Parameters of [`super::DiskBTree::build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskBTreeParams {
    /// Bytes of payload stored with every key (default 8). Larger payloads mean fewer entries
    /// per leaf, so more leaves and a taller tree.
    pub payload_size: usize,
    /// Fraction of each node's capacity the bulk load fills, in `(0, 1]` (default 1.0: the
    /// smallest tree, fastest scans). Lower values leave room in every leaf and inner node for
    /// inserts without splits, at the cost of `1 / fill_factor` times the blocks and inner-node
    /// memory.
    pub fill_factor: f64,
    /// Which levels stay in memory after the build.
    pub resident: Resident,
}

impl Default for DiskBTreeParams {
    fn default() -> Self {
        DiskBTreeParams {
            payload_size: DEFAULT_PAYLOAD_SIZE,
            fill_factor: 1.0,
            resident: Resident::AllInner,
        }
    }
}

impl DiskBTreeParams {
    /// [`Error::InvalidParameter`] for a fill factor outside `(0, 1]`.
    pub fn check(&self) -> Result<()> {
        if !(self.fill_factor > 0.0 && self.fill_factor <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "fill_factor",
                value: self.fill_factor.to_string(),
                expected: "a fraction in (0, 1]",
            });
        }
        Ok(())
    }
}
