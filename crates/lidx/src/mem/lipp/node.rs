//! A LIPP node: a linear model over an array of slots, each `NULL`, `DATA` (one entry) or
//! `NODE` (a child), and the statistics that decide when its subtree is rebuilt.
//!
//! Paper 003 §2 (Figure 1(d)) describes LIPP's single node type: a data array whose elements
//! are one of the three kinds, a type array saying which, and a linear model; the slot array
//! and its flags are `slots.rs`.
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
use super::slots::{Slot, SlotRef, Slots};

/// A node. See the module docs.
///
/// A lookup reads the model and the slot arrays' addresses and length, the first 56 bytes,
/// which `repr(C)` keeps together. (Aligning the node to a cache line measured slower on
/// inserts: the allocator's aligned path.) The insert counters saturate: they only matter for
/// nodes built from at most `LippParams::fixed_size` entries, far below `u32::MAX`.
#[repr(C)]
pub(crate) struct Node<K, V> {
    pub(crate) model: LinearModel,
    pub(crate) slots: Slots<K, V>,
    pub(crate) size: usize,
    pub(crate) build_size: usize,
    pub(crate) inserts: u32,
    pub(crate) conflicts: u32,
}

impl<K, V> Node<K, V> {
    /// An empty node of one slot: what an empty map's root is.
    pub(crate) fn empty() -> Self {
        Node {
            model: LinearModel::FLAT,
            slots: Slots::new(1),
            size: 0,
            build_size: 0,
            inserts: 0,
            conflicts: 0,
        }
    }

    /// The node made when `(a, va)` and `(b, vb)`, images `ma < mb`, meet in one slot.
    pub(crate) fn two(a: (K, V), ma: u64, b: (K, V), mb: u64) -> Self {
        let model = LinearModel::two(ma, mb, TWO_SLOTS);
        let mut slots = Slots::new(TWO_SLOTS);
        slots.set(model.predict(ma, TWO_SLOTS), Slot::Data(a.0, a.1));
        slots.set(model.predict(mb, TWO_SLOTS), Slot::Data(b.0, b.1));
        Node {
            model,
            slots,
            size: 2,
            build_size: 2,
            inserts: 0,
            conflicts: 0,
        }
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
        let n = keys.len();
        let (model, slot_count) = plan(keys, params);
        let mut slots = Slots::new(slot_count);
        for (pos, start, end) in runs(keys, &model, slot_count) {
            let slot = if end == start + 1 {
                let (k, v) = entries.next().expect("one entry per key");
                Slot::Data(k, v)
            } else {
                Slot::Node(Box::new(Node::build(&keys[start..end], entries, params)))
            };
            slots.set(pos, slot);
        }
        Node {
            model,
            slots,
            size: n,
            build_size: n,
            inserts: 0,
            conflicts: 0,
        }
    }

    /// Moves every entry of the subtree, in key order, to the end of `out`.
    pub(crate) fn drain_into(self, out: &mut Vec<(K, V)>) {
        for slot in self.slots.into_contents() {
            match slot {
                Slot::Null => {}
                Slot::Data(k, v) => out.push((k, v)),
                Slot::Node(child) => child.drain_into(out),
            }
        }
    }

    /// Bytes of the subtree: this node's struct and slots and every child's.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.slots.size_in_bytes()
            + self
                .children()
                .map(|c| std::mem::size_of::<Node<K, V>>() + c.size_in_bytes())
                .sum::<usize>()
    }

    /// The children, in slot order.
    pub(crate) fn children(&self) -> impl Iterator<Item = &Node<K, V>> {
        self.slots.iter().filter_map(|s| match s {
            SlotRef::Node(c) => Some(c),
            _ => None,
        })
    }
}
