//! A LIPP node: a linear model over an array of slots, each `NULL`, `DATA` (one entry) or
//! `NODE` (a child), and the statistics that decide when its subtree is rebuilt.
//!
//! Paper 003 §2 (Figure 1(d)) describes LIPP's single node type: a data array whose elements
//! are one of the three kinds, a type array saying which, and a linear model. Here the model
//! and statistics are a [`Header`]; the node itself, one allocation of header, flags and
//! items, and its unsafe code are `slots.rs`.
//!
//! Invariants: every key below slot `i` of a node is predicted to `i` by the node's model; a
//! child holds at least one entry; `size` counts the entries of the subtree.
//!
//! The statistics are the reference's: `size` and `build_size` (entries now and when built),
//! `inserts` since the build and `conflicts`, the inserts that met a `DATA` slot and made a
//! child of it (see `insert.rs`).

use super::model::LinearModel;
use super::params::LippParams;
use super::plan::{plan, runs, TWO_SLOTS};
pub(crate) use super::slots::Node;
use super::slots::{Slot, SlotRef};

/// A node's model and statistics, at the start of its block (see `slots.rs`), which also
/// holds its slots. A lookup reads the model, the first 24 bytes. The insert counters
/// saturate: they only matter for nodes built from at most `LippParams::fixed_size` entries,
/// far below `u32::MAX`.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) model: LinearModel,
    pub(crate) size: usize,
    pub(crate) build_size: usize,
    pub(crate) inserts: u32,
    pub(crate) conflicts: u32,
}

impl Header {
    /// A fresh node's header: `size` entries, the build size, no inserts since.
    fn built(model: LinearModel, size: usize) -> Self {
        Header {
            model,
            size,
            build_size: size,
            inserts: 0,
            conflicts: 0,
        }
    }
}

impl<K, V> Node<K, V> {
    /// An empty node of one slot: what an empty map's root is.
    pub(crate) fn empty() -> Self {
        Node::with_header(1, Header::built(LinearModel::FLAT, 0))
    }

    /// The node made when `(a, va)` and `(b, vb)`, images `ma < mb`, meet in one slot.
    pub(crate) fn two(a: (K, V), ma: u64, b: (K, V), mb: u64) -> Self {
        let model = LinearModel::two(ma, mb, TWO_SLOTS);
        let mut node = Node::with_header(TWO_SLOTS, Header::built(model, 2));
        node.set(model.predict(ma, TWO_SLOTS), Slot::Data(a.0, a.1));
        node.set(model.predict(mb, TWO_SLOTS), Slot::Data(b.0, b.1));
        node
    }

    /// Builds the subtree of `keys` (sorted distinct model images) whose entries `entries`
    /// yields in the same order, top-down: fit the model, then place each run of keys that
    /// share a slot as `DATA` (one key) or a child built the same way (more); the decisions
    /// are [`super::plan`]'s.
    pub(crate) fn build(
        keys: &[u64],
        entries: &mut impl Iterator<Item = (K, V)>,
        params: &LippParams,
    ) -> Self {
        let (model, slot_count) = plan(keys, params);
        let mut node = Node::with_header(slot_count, Header::built(model, keys.len()));
        for (pos, start, end) in runs(keys, &model, slot_count) {
            let slot = if end == start + 1 {
                let (k, v) = entries.next().expect("one entry per key");
                Slot::Data(k, v)
            } else {
                Slot::Node(Node::build(&keys[start..end], entries, params))
            };
            node.set(pos, slot);
        }
        node
    }

    /// Moves every entry of the subtree, in key order, to the end of `out`.
    pub(crate) fn drain_into(self, out: &mut Vec<(K, V)>) {
        for slot in self.into_contents() {
            match slot {
                Slot::Null => {}
                Slot::Data(k, v) => out.push((k, v)),
                Slot::Node(child) => child.drain_into(out),
            }
        }
    }

    /// Bytes of the subtree: this node's block (header, flags, items) and every child's.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.block_bytes() + self.children().map(Node::size_in_bytes).sum::<usize>()
    }

    /// The children, in slot order.
    pub(crate) fn children(&self) -> impl Iterator<Item = &Node<K, V>> {
        self.iter().filter_map(|s| match s {
            SlotRef::Node(c) => Some(c),
            _ => None,
        })
    }
}
