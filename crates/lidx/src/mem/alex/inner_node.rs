//! ALEX's inner ("model") node: a linear model that maps a key straight to one of a
//! power-of-two array of child slots, with no search (paper 001 §II-A: "ALEX ... inner nodes
//! ... compute the child to visit with their model"; the "ATS" asymmetric tree).
//!
//! A child may own several neighbouring slots: `2^duplication` of them, aligned to their
//! count, which is what lets a child split sideways without touching the parent's model, and
//! lets the parent double its slots (every child's duplication rises by one) when a child
//! owning a single slot splits.
//!
//! Children are tagged `u32` ids into the map's two arenas: [`LEAF`] set for a data node.
//! The reference holds pointers; ids keep the nodes in two vectors and a slot at 4 bytes.

use std::mem::size_of;

use super::model::LinearModel;

/// Tag bit of a data-node id.
pub(crate) const LEAF: u32 = 1 << 31;

/// One inner node.
#[derive(Debug)]
pub(crate) struct InnerNode {
    pub(crate) model: LinearModel,
    pub(crate) children: Vec<u32>,
    /// log2 of the number of slots pointing here in the parent.
    pub(crate) duplication: u8,
}

impl InnerNode {
    /// The child for model image `m`.
    #[inline(always)]
    pub(crate) fn child(&self, m: u64) -> (u32, usize) {
        let slot = self.model.slot(m, self.children.len());
        (self.children[slot], slot)
    }

    /// The child for model image `m`, its slot unchecked: `get`'s descent.
    ///
    /// An inner node reachable from a map has children: it is made with at least one (a
    /// bulk-load level's parts, two on a split down, one on a raised root; the bulk load's
    /// empty placeholder is filled before the map exists), and its children are only doubled,
    /// extended or overwritten in place, never removed.
    #[inline(always)]
    pub(crate) fn child_unchecked(&self, m: u64) -> u32 {
        let slot = self.model.slot(m, self.children.len());
        debug_assert!(slot < self.children.len());
        // SAFETY: `slot_of` clamps into `[0, len)` for `0 < len <= 2^53` (children number far
        // fewer), whatever the prediction (NaN and infinities included), and `len > 0` above.
        unsafe { *self.children.get_unchecked(slot) }
    }

    /// Doubles the slots: each child's run doubles, the model's output doubles (exactly: a
    /// power-of-two scale), so every key keeps its child.
    pub(crate) fn double(&mut self) {
        self.children = self.children.iter().flat_map(|&c| [c, c]).collect();
        self.model.scale(2.0);
    }

    /// The first slot of the run holding `slot`, for a child with `2^duplication` slots.
    pub(crate) fn run_start(slot: usize, duplication: u8) -> usize {
        slot & !((1usize << duplication) - 1)
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        size_of::<Self>() + self.children.len() * size_of::<u32>()
    }
}

/// The nodes a sideways split replaces a data node by: (first slot, duplication, range of the
/// node's sorted keys) each.
pub(crate) type Runs = Vec<(usize, u8, std::ops::Range<usize>)>;

/// One halving of a run of `2^duplication` slots from `start` (`duplication > 0`), `cut_of(mid)`
/// being how many of the `n` keys route before its middle slot `mid`. When the keys straddle
/// the middle, pushes both halves onto `runs` and returns true; otherwise pushes an empty node
/// for the half without keys, leaves `start` at the other half and returns false. Either way
/// `duplication` is the halves' (one less). Shared by the in-memory split (`update`) and the
/// on-disk one (`crate::disk::alex`).
pub(crate) fn halve_run(
    runs: &mut Runs,
    start: &mut usize,
    duplication: &mut u8,
    n: usize,
    cut_of: impl FnOnce(usize) -> usize,
) -> bool {
    let mid = *start + (1 << (*duplication - 1));
    let cut = cut_of(mid);
    *duplication -= 1;
    let half = *duplication;
    if cut > 0 && cut < n {
        runs.push((*start, half, 0..cut));
        runs.push((mid, half, cut..n));
        return true;
    }
    if cut == 0 {
        runs.push((*start, half, 0..0));
        *start = mid;
    } else {
        runs.push((mid, half, cut..cut));
    }
    false
}
