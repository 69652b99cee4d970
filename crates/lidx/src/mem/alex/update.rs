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
//! * catastrophic cost or the largest size always **split** (or narrow, below);
//! * a split goes **sideways** (the two halves share the parent's slots of the old node; the
//!   parent doubles its slots first when the node owned only one, up to `max_fanout`), or
//!   **down** (a new inner node of fanout two over the node's keys) when the parent cannot
//!   grow, when the node is the root, or when all its keys route to one slot of a parent at
//!   the largest fanout.
//!   When every key of the node routes to one half of its slots, that half keeps them and an
//!   empty node takes the other, halving again until the keys straddle a cut (see the module
//!   docs).
//!
//! A full data node holding mostly keys past the root's domain widens the root instead
//! (`widen`).

use std::iter;
use std::time::Instant;

use super::build::span_model;
use super::cost::{self, NodeCost, MODEL_SIZE_WEIGHT, NODE_LOOKUP_WEIGHT};
use super::data_node::{DataNode, Full, NIL};
use super::inner_node::{halve_run, InnerNode, Runs, LEAF};
use super::key::AlexKey;
use super::map::Alex;
use super::model::{self, LinearModel};

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
                    self.reshape(key, leaf, parent, full);
                }
            }
        }
    }

    /// Widens the root for `key` or makes room in data node `leaf`, which refused it as
    /// `full`. Out of line: it runs for one insert in about 1,500 (10M lognormal keys), and
    /// inlined into `insert_valid` its code gave every insert a prologue of about 40
    /// instructions (a 960-byte frame and its spills; callgrind, 200M of 3,036M instructions
    /// over 5M inserts). Out of line, 716 -> 641 instructions an insert (1M lognormal keys);
    /// `lidx bench --workload insert --index alex` on 10M took 174.8-179.5 ns an insert against
    /// 182.9-189.1 in four of five alternated rounds (session 60, Intel Xeon VM).
    #[cold]
    #[inline(never)]
    fn reshape(&mut self, key: K, leaf: u32, parent: Option<(u32, usize)>, full: Full) {
        if !self.widen_root_for(key.to_model(), leaf) {
            self.make_room(leaf, parent, full);
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
        let keys: Vec<K> = node.occupied_keys().collect();
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
    /// parent first when the leaf owns a single slot. When every key routes to one half of
    /// the leaf's slots, the leaf keeps that half and an empty node takes the other, until
    /// the keys straddle a half (keys appended past the others fill the empty nodes next,
    /// instead of deepening the tree under one node); when they all route to one slot, the
    /// parent doubles again, and at the largest fanout the leaf splits down.
    fn split_sideways(&mut self, leaf: u32, p: u32, slot: usize) {
        let (keys, values) = self.leaves[leaf as usize].drain();
        let mut slot = slot;
        if self.leaves[leaf as usize].duplication == 0 {
            self.double_parent(p);
            slot *= 2;
        }
        let mut duplication = self.leaves[leaf as usize].duplication;
        let mut start = InnerNode::run_start(slot, duplication);
        // (first slot, duplication, keys) of each node replacing the leaf.
        let mut runs: Runs = Vec::new();
        loop {
            if duplication == 0 {
                // Every key routes to one slot: double the parent again to cut it, or, at
                // the largest fanout, split down.
                if self.inners[p as usize].children.len() * 2 > self.derived.max_fanout {
                    self.split_down_entries(leaf, Some((p, slot)), keys, values);
                    return;
                }
                self.double_parent(p);
                for run in &mut runs {
                    run.0 *= 2;
                    run.1 += 1;
                }
                slot *= 2;
                start *= 2;
                duplication = 1;
            }
            let inner = &self.inners[p as usize];
            let slots = inner.children.len();
            let cut_of =
                |mid| keys.partition_point(|k| inner.model.slot(k.to_model(), slots) < mid);
            if halve_run(&mut runs, &mut start, &mut duplication, keys.len(), cut_of) {
                break;
            }
        }
        runs.sort_by_key(|run| run.0);
        let mut values = values.into_iter();
        let nodes = runs
            .into_iter()
            .map(|(start, duplication, range)| {
                let node_values = values.by_ref().take(range.len()).collect::<Vec<V>>();
                let node = DataNode::fresh(&keys[range], node_values, duplication, &self.derived);
                (start, node)
            })
            .collect();
        self.replace_leaf_by_runs(leaf, p, nodes);
    }

    /// Doubles inner node `p`'s slots, each child's run with them.
    fn double_parent(&mut self, p: u32) {
        let inner = &mut self.inners[p as usize];
        inner.double();
        let children = inner.children.clone();
        let mut i = 0;
        while i < children.len() {
            let child = children[i];
            let duplication = self.duplication_of(child) + 1;
            self.set_duplication(child, duplication);
            i += 1 << duplication;
        }
    }

    /// Replaces data node `leaf` (a child of `p`) by `nodes`, each with the first of the
    /// `2^duplication` slots it takes in `p`, in slot order: the first keeps the leaf's id
    /// (so the leftmost data node keeps id 0), the others get new ones, chained in its place.
    fn replace_leaf_by_runs(&mut self, leaf: u32, p: u32, nodes: Vec<(usize, DataNode<K, V>)>) {
        let old = &self.leaves[leaf as usize];
        let (prev, next) = (old.prev, old.next);
        let fresh = self.leaves.len() as u32;
        let ids: Vec<u32> = iter::once(leaf)
            .chain((0..nodes.len() as u32 - 1).map(|i| fresh + i))
            .collect();
        let last = ids.len() - 1;
        for (i, (start, mut node)) in nodes.into_iter().enumerate() {
            node.prev = if i == 0 { prev } else { ids[i - 1] };
            node.next = if i == last { next } else { ids[i + 1] };
            let run = 1usize << node.duplication;
            // The node goes in before its id does: `get` reads ids unchecked, so none may
            // name a node not yet pushed, even if a push unwinds.
            if i == 0 {
                self.leaves[leaf as usize] = node;
            } else {
                self.leaves.push(node);
            }
            self.inners[p as usize].children[start..start + run].fill(ids[i] | LEAF);
        }
        if next != NIL {
            self.leaves[next as usize].prev = ids[last];
        }
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
