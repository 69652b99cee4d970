//! Inserts and removes: what ALEX does when a data node is full or costs more than expected
//! (paper 001 §II-A on ALEX's retraining: "when a node is full, ALEX expands it or splits it,
//! deciding by its cost model"). Each such change is counted and timed ([`super::AlexRetrains`]).
//!
//! A data node at `max_density` grows to `min_density` ([`DataNode::expand`]) unless
//! its measured cost is well above the expected one, its shifts per insert are catastrophic,
//! or it is at the largest size. Then, as in the reference's default policy:
//!
//! * on a cost deviation, the node's keys are costed as one retrained node and as two halves
//!   (by the parent's routing, plus one traversal and the model-size charge); the cheaper wins:
//!   **expand and retrain** or **split**;
//! * catastrophic cost or the largest size always **split**;
//! * a split goes **sideways** (the two halves share the parent's slots of the old node; the
//!   parent doubles its slots first when the node owned only one, up to `max_fanout`), or
//!   **down** (a new inner node of fanout two over the node's keys) when the parent cannot
//!   grow, when the node is the root, or when a sideways cut would leave a half empty (keys
//!   outside the parent's range all route to its edge slot). The reference has no such
//!   fallback: it widens the root's key domain instead, which we do not (see the module docs).

use std::time::Instant;

use super::build::span_model;
use super::cost::{self, NodeCost, MODEL_SIZE_WEIGHT, NODE_LOOKUP_WEIGHT};
use super::data_node::{DataNode, Full, NIL};
use super::inner_node::{InnerNode, LEAF};
use super::model::{self, LinearModel};
use super::{Alex, AlexKey};

impl<K: AlexKey, V: Default> Alex<K, V> {
    /// Inserts a valid key, returning the value it replaces.
    pub(super) fn insert_valid(&mut self, key: K, mut value: V) -> Option<V> {
        loop {
            let (leaf, parent) = self.descend(key.to_model());
            match self.leaves[leaf as usize].insert(key, value, &self.derived) {
                Ok(old) => {
                    if old.is_none() {
                        self.len += 1;
                    }
                    return old;
                }
                Err((full, v)) => {
                    value = v;
                    self.make_room(leaf, parent, full);
                }
            }
        }
    }

    /// Expands, retrains or splits data node `leaf` so that the next insert into it can
    /// succeed, counting and timing the change in [`Alex::retrains`].
    fn make_room(&mut self, leaf: u32, parent: Option<(u32, usize)>, full: Full) {
        let start = Instant::now();
        let d = self.derived;
        let node = &mut self.leaves[leaf as usize];
        if node.num_keys < 2 {
            node.resize(d.min_density, true, false, false, &d);
            self.retrains.retrains.record(start);
            return;
        }
        if full == Full::Expand {
            node.expand(&d);
            self.retrains.expansions.record(start);
            return;
        }
        if full == Full::CostDeviation {
            if let Some(retrained) = self.retrain_beats_split(leaf, parent) {
                let node = &mut self.leaves[leaf as usize];
                node.resize(d.min_density, true, false, false, &d);
                node.expected = retrained;
                node.reset_counters();
                self.retrains.retrains.record(start);
                return;
            }
        }
        let duplication = self.leaves[leaf as usize].duplication;
        match parent {
            Some((p, slot))
                if duplication > 0
                    || self.inners[p as usize].children.len() * 2 <= d.max_fanout =>
            {
                self.split_sideways(leaf, p, slot)
            }
            _ => self.split_down(leaf, parent),
        }
        self.retrains.splits.record(start);
    }

    /// Whether `key` routes to the left half of `leaf`'s slots in `parent` (by key range when
    /// it has no parent), as a split would cut it.
    fn halves_router(
        &self,
        leaf: u32,
        parent: Option<(u32, usize)>,
        keys: &[K],
    ) -> (LinearModel, usize, usize) {
        match parent {
            Some((p, slot)) => {
                let inner = &self.inners[p as usize];
                let duplication = self.leaves[leaf as usize].duplication;
                let start = InnerNode::run_start(slot, duplication);
                let mut model = inner.model;
                model.scale(2.0);
                (
                    model,
                    inner.children.len() * 2,
                    2 * start + (1 << duplication),
                )
            }
            None => {
                let mut model = span_model(keys);
                model.scale(2.0);
                (model, 2, 1)
            }
        }
    }

    /// The cost of `leaf` retrained, when that is lower than the cost of its two halves.
    fn retrain_beats_split(&self, leaf: u32, parent: Option<(u32, usize)>) -> Option<NodeCost> {
        let d = self.derived;
        let node = &self.leaves[leaf as usize];
        let keys: Vec<K> = (0..node.capacity())
            .filter(|&i| node.is_occupied(i))
            .map(|i| node.keys[i])
            .collect();
        let n = keys.len();
        let per_key = |count: usize| {
            MODEL_SIZE_WEIGHT
                * count as f64
                * (std::mem::size_of::<DataNode<K, V>>() + 4) as f64
                * self.len.max(1) as f64
                / n as f64
        };
        let costed = |slice: &[K]| {
            let m = model::fit(slice.len(), |i| slice[i].to_model());
            cost::expected_cost(
                slice.len(),
                |i| slice[i].to_model(),
                &m,
                d.init_density,
                1.0,
            )
        };
        let whole = costed(&keys);
        let (router, slots, mid) = self.halves_router(leaf, parent, &keys);
        let cut = keys.partition_point(|k| router.slot(k.to_model(), slots) < mid);
        let (left, right) = keys.split_at(cut);
        let halves = costed(left).cost * left.len() as f64 / n as f64
            + costed(right).cost * right.len() as f64 / n as f64
            + NODE_LOOKUP_WEIGHT
            + per_key(2);
        let retrained = whole.cost + NODE_LOOKUP_WEIGHT + per_key(1);
        (retrained <= halves).then_some(whole)
    }

    /// Replaces data node `leaf` by `left` (same id) and `right` (a new id), chained in its
    /// place. Returns the new id, tagged.
    fn replace_leaf(
        &mut self,
        leaf: u32,
        mut left: DataNode<K, V>,
        mut right: DataNode<K, V>,
    ) -> u32 {
        let right_id = self.leaves.len() as u32;
        let old = &self.leaves[leaf as usize];
        let (prev, next) = (old.prev, old.next);
        left.prev = prev;
        left.next = right_id;
        right.prev = leaf;
        right.next = next;
        if next != NIL {
            self.leaves[next as usize].prev = right_id;
        }
        self.leaves[leaf as usize] = left;
        self.leaves.push(right);
        right_id | LEAF
    }

    /// Splits `leaf` in two across its slots in parent `p` (reached at `slot`), doubling the
    /// parent first when the leaf owns a single slot; falls back to a split down when a half
    /// would be empty.
    fn split_sideways(&mut self, leaf: u32, p: u32, slot: usize) {
        let (keys, values) = self.leaves[leaf as usize].drain();
        let mut slot = slot;
        if self.leaves[leaf as usize].duplication == 0 {
            let inner = &mut self.inners[p as usize];
            inner.double();
            slot *= 2;
            let children = inner.children.clone();
            let mut i = 0;
            while i < children.len() {
                let child = children[i];
                let duplication = self.duplication_of(child) + 1;
                self.set_duplication(child, duplication);
                i += 1 << duplication;
            }
        }
        let duplication = self.leaves[leaf as usize].duplication;
        let start = InnerNode::run_start(slot, duplication);
        let mid = start + (1 << (duplication - 1));
        let inner = &self.inners[p as usize];
        let slots = inner.children.len();
        let cut = keys.partition_point(|k| inner.model.slot(k.to_model(), slots) < mid);
        if cut == 0 || cut == keys.len() {
            self.split_down_entries(leaf, Some((p, slot)), keys, values);
            return;
        }
        let (left, right) = self.halves(&keys, values, cut, duplication - 1);
        let right_id = self.replace_leaf(leaf, left, right);
        let end = start + (1 << duplication);
        self.inners[p as usize].children[mid..end].fill(right_id);
    }

    /// Data nodes for `keys[..cut]` and `keys[cut..]` with their values.
    fn halves(
        &self,
        keys: &[K],
        mut values: Vec<V>,
        cut: usize,
        duplication: u8,
    ) -> (DataNode<K, V>, DataNode<K, V>) {
        let right_values = values.split_off(cut);
        (
            DataNode::fresh(&keys[..cut], values, duplication, &self.derived),
            DataNode::fresh(&keys[cut..], right_values, duplication, &self.derived),
        )
    }

    /// Replaces `leaf` by an inner node of fanout two over its keys.
    fn split_down(&mut self, leaf: u32, parent: Option<(u32, usize)>) {
        let (keys, values) = self.leaves[leaf as usize].drain();
        self.split_down_entries(leaf, parent, keys, values);
    }

    fn split_down_entries(
        &mut self,
        leaf: u32,
        parent: Option<(u32, usize)>,
        keys: Vec<K>,
        values: Vec<V>,
    ) {
        let duplication = self.leaves[leaf as usize].duplication;
        let mut model = span_model(&keys);
        model.scale(2.0);
        let cut = keys.partition_point(|k| model.slot(k.to_model(), 2) == 0);
        let (left, right) = self.halves(&keys, values, cut, 0);
        let right_id = self.replace_leaf(leaf, left, right);
        let inner_id = self.inners.len() as u32;
        self.inners.push(InnerNode {
            model,
            children: vec![leaf | LEAF, right_id],
            duplication,
        });
        match parent {
            Some((p, slot)) => {
                let start = InnerNode::run_start(slot, duplication);
                self.inners[p as usize].children[start..start + (1 << duplication)].fill(inner_id);
            }
            None => self.root = inner_id,
        }
    }

    pub(super) fn duplication_of(&self, node: u32) -> u8 {
        if node & LEAF != 0 {
            self.leaves[(node & !LEAF) as usize].duplication
        } else {
            self.inners[node as usize].duplication
        }
    }

    fn set_duplication(&mut self, node: u32, duplication: u8) {
        if node & LEAF != 0 {
            self.leaves[(node & !LEAF) as usize].duplication = duplication;
        } else {
            self.inners[node as usize].duplication = duplication;
        }
    }
}
