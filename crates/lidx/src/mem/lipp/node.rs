//! A LIPP node: a linear model over an array of slots, each `NULL`, `DATA` (one entry) or
//! `NODE` (a child), and the statistics that decide when its subtree is rebuilt.
//!
//! Paper 003 §2 (Figure 1(d)) describes LIPP's single node type: a data array whose elements
//! are one of the three kinds, a bit array saying which, and a linear model. The reference keeps
//! two bitmaps beside an array of untagged unions. We follow paper 003 §4's on-disk layout
//! instead, a flag in each slot and no bitmap: a slot is a Rust enum, so the kind is read from
//! the same cache line as the entry or child it tags, and a lookup touches one line per level
//! instead of two (bitmap and item). The cost is space: a `u64 -> u64` slot is 24 bytes
//! against the reference's 16 bytes and 2 bits.
//!
//! Invariants: every key below slot `i` of a node is predicted to `i` by the node's model; a
//! child holds at least one entry; `size` counts the entries of the subtree.
//!
//! The statistics are the reference's: `size` and `build_size` (entries now and when built),
//! `inserts` since the build and `conflicts`, the inserts that met a `DATA` slot and made a
//! child of it (see `insert.rs`).

use super::model::{slots_per_key, LinearModel};
use super::params::LippParams;

/// One slot of a node.
pub(crate) enum Slot<K, V> {
    /// Empty: no key predicted here so far (or its entry was removed).
    Null,
    /// One entry.
    Data(K, V),
    /// Two or more entries predicted here, in a child node.
    Node(Box<Node<K, V>>),
}

/// A node. See the module docs.
pub(crate) struct Node<K, V> {
    pub(crate) model: LinearModel,
    pub(crate) slots: Box<[Slot<K, V>]>,
    pub(crate) size: usize,
    pub(crate) build_size: usize,
    pub(crate) inserts: usize,
    pub(crate) conflicts: usize,
}

/// Slots of the node made for two keys that met in one slot (the reference's choice).
pub(crate) const TWO_SLOTS: usize = 8;

fn null_slots<K, V>(n: usize) -> Box<[Slot<K, V>]> {
    std::iter::repeat_with(|| Slot::Null).take(n).collect()
}

impl<K, V> Node<K, V> {
    /// An empty node of one slot: what an empty map's root is.
    pub(crate) fn empty() -> Self {
        Node {
            model: LinearModel::FLAT,
            slots: null_slots(1),
            size: 0,
            build_size: 0,
            inserts: 0,
            conflicts: 0,
        }
    }

    /// The node made when `(a, va)` and `(b, vb)`, images `ma < mb`, meet in one slot.
    pub(crate) fn two(a: (K, V), ma: u64, b: (K, V), mb: u64) -> Self {
        let model = LinearModel::two(ma, mb, TWO_SLOTS);
        let mut slots = null_slots(TWO_SLOTS);
        slots[model.predict(ma, TWO_SLOTS)] = Slot::Data(a.0, a.1);
        slots[model.predict(mb, TWO_SLOTS)] = Slot::Data(b.0, b.1);
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
    /// share a slot as `DATA` (one key) or a child built the same way (more).
    pub(crate) fn build(
        keys: &[u64],
        entries: &mut impl Iterator<Item = (K, V)>,
        params: &LippParams,
    ) -> Self {
        let n = keys.len();
        let (model, slot_count) = match n {
            0 | 1 => (LinearModel::FLAT, 1),
            2 => (LinearModel::two(keys[0], keys[1], TWO_SLOTS), TWO_SLOTS),
            _ => {
                let slot_count = n * slots_per_key(n);
                (LinearModel::fit(keys, slot_count, params.fmcd), slot_count)
            }
        };
        let mut slots = null_slots(slot_count);
        let mut start = 0;
        while start < n {
            let pos = model.predict(keys[start], slot_count);
            let mut end = start + 1;
            while end < n && model.predict(keys[end], slot_count) == pos {
                end += 1;
            }
            slots[pos] = if end == start + 1 {
                let (k, v) = entries.next().expect("one entry per key");
                Slot::Data(k, v)
            } else {
                Slot::Node(Box::new(Node::build(&keys[start..end], entries, params)))
            };
            start = end;
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
        for slot in self.slots.into_vec() {
            match slot {
                Slot::Null => {}
                Slot::Data(k, v) => out.push((k, v)),
                Slot::Node(child) => child.drain_into(out),
            }
        }
    }

    /// Bytes of the subtree: this node's struct and slots and every child's.
    pub(crate) fn size_in_bytes(&self) -> usize {
        let own = std::mem::size_of_val::<[Slot<K, V>]>(&self.slots);
        own + self
            .children()
            .map(|c| std::mem::size_of::<Node<K, V>>() + c.size_in_bytes())
            .sum::<usize>()
    }

    /// The children, in slot order.
    pub(crate) fn children(&self) -> impl Iterator<Item = &Node<K, V>> {
        self.slots.iter().filter_map(|s| match s {
            Slot::Node(c) => Some(&**c),
            _ => None,
        })
    }
}
