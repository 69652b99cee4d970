//! Bulk loading: the root is costed as one data node, then each node either stays a data node
//! or becomes an inner node whose fanout and children the fanout tree chooses, recursively
//! (the reference's `bulk_load_node`; paper 001 §II-A: ALEX "builds the tree top-down, choosing
//! each node's fanout by its cost model").
//!
//! A node with at most `max_data_keys` keys whose cost is under one traversal stays a data
//! node at once. A node the fanout tree would keep whole but that is too large becomes an
//! inner node of the smallest power-of-two fanout whose parts fit on average (the reference's
//! "slightly hacky" rule). When a level's routing would leave every key in one part (only
//! possible through rounding), the node's model is replaced by one spanning exactly its keys,
//! which always separates the first key from the last; the reference has no such guard.

use super::cost::{self, NodeCost, NODE_LOOKUP_WEIGHT};
use super::data_node::{DataNode, NIL};
use super::fanout::{self, Part};
use super::inner_node::{InnerNode, LEAF};
use super::key::AlexKey;
use super::model::{self, LinearModel};
use super::params::Derived;

/// The nodes of a bulk-loaded [`super::Alex`]: what [`super::Alex::bulk_load`] assembles the map
/// from, and what the on-disk ALEX lays out in blocks ([`crate::disk::alex`]). Data nodes are in
/// key order (ids are given left to right).
pub(crate) struct AlexParts<K, V> {
    pub(crate) inners: Vec<InnerNode>,
    pub(crate) leaves: Vec<DataNode<K, V>>,
    /// Tagged id of the root ([`LEAF`] set for a data node).
    pub(crate) root: u32,
}

/// The nodes built from `entries`, already checked to be strictly increasing and valid.
pub(crate) fn bulk_load<K: AlexKey, V: Default>(
    entries: Vec<(K, V)>,
    derived: Derived,
) -> AlexParts<K, V> {
    let keys: Vec<K> = entries.iter().map(|e| e.0).collect();
    let mut values = entries.into_iter().map(|e| e.1);
    let mut builder = Builder {
        d: derived,
        inners: Vec::new(),
        leaves: Vec::new(),
        total_keys: keys.len(),
        values: &mut values,
    };
    let root = if keys.len() <= 1 {
        builder.leaf(&keys, None, NodeCost::default())
    } else {
        let fitted = model::fit_sampled(keys.len(), |i| keys[i].to_model());
        let node_cost = cost::expected_cost(
            keys.len(),
            |i| keys[i].to_model(),
            &fitted,
            derived.init_density,
            derived.insert_fraction,
        );
        let node_model = span_model(&keys);
        builder.node(&keys, node_model, node_cost, fitted)
    };
    let Builder { inners, leaves, .. } = builder;
    AlexParts {
        inners,
        leaves,
        root,
    }
}

/// A model mapping exactly the span of `keys` (at least two) onto `[0, 1)`.
pub(crate) fn span_model<K: AlexKey>(keys: &[K]) -> LinearModel {
    let (lo, hi) = (keys[0].to_model(), keys[keys.len() - 1].to_model());
    LinearModel {
        a: 1.0 / ((hi - lo) as f64 + 1.0),
        b: 0.0,
        base: lo,
    }
}

struct Builder<'v, K, V, I> {
    d: Derived,
    inners: Vec<InnerNode>,
    leaves: Vec<DataNode<K, V>>,
    total_keys: usize,
    values: &'v mut I,
}

impl<K: AlexKey, V: Default, I: Iterator<Item = V>> Builder<'_, K, V, I> {
    /// A data node over `keys` (taking their values in order), chained after the last one.
    fn leaf(&mut self, keys: &[K], fitted: Option<LinearModel>, expected: NodeCost) -> u32 {
        let mut node = DataNode::build(
            keys,
            self.values.by_ref().take(keys.len()),
            fitted,
            self.d.init_density,
            &self.d,
        );
        node.expected = expected;
        let id = self.leaves.len() as u32;
        if let Some(last) = self.leaves.last_mut() {
            last.next = id;
            node.prev = id - 1;
        }
        node.next = NIL;
        self.leaves.push(node);
        id | LEAF
    }

    /// A node over `keys` (at least one): `node_model` maps their part of the key space onto
    /// `[0, 1)`, `node_cost` is their cost as one data node, `fitted` their least squares.
    fn node(
        &mut self,
        keys: &[K],
        mut node_model: LinearModel,
        node_cost: NodeCost,
        fitted: LinearModel,
    ) -> u32 {
        let n = keys.len();
        let max_keys = self.d.max_data_keys();
        if n <= max_keys && (node_cost.cost < NODE_LOOKUP_WEIGHT || node_model.a == 0.0) {
            return self.leaf(keys, Some(fitted), node_cost);
        }
        let (mut depth, mut best_cost, mut parts) = fanout::best_fanout::<K, V>(
            keys,
            &node_model,
            node_cost.cost,
            self.total_keys,
            &self.d,
        );
        if parts.len() == 1 && n > max_keys {
            depth = 0;
            best_cost = f64::INFINITY;
        }
        if !(best_cost < node_cost.cost || n > max_keys) {
            return self.leaf(keys, Some(fitted), node_cost);
        }
        if depth == 0 {
            depth = ((n as f64 / self.d.max_data_slots as f64).log2() as u32 + 1).max(1);
            parts =
                fanout::compute_level::<K, V>(keys, &node_model, self.total_keys, depth, &self.d).1;
            if parts.iter().any(|p| p.len() == n) {
                node_model = span_model(keys);
                parts = fanout::compute_level::<K, V>(
                    keys,
                    &node_model,
                    self.total_keys,
                    depth,
                    &self.d,
                )
                .1;
            }
        }
        let fanout = 1usize << depth;
        let mut model = node_model;
        model.scale(fanout as f64);
        let id = self.inners.len();
        self.inners.push(InnerNode {
            model,
            children: Vec::with_capacity(fanout),
            duplication: 0,
        });
        let mut children = Vec::with_capacity(fanout);
        for part in parts {
            let duplication = (depth - part.level) as u8;
            let child = self.child(keys, &node_model, fanout, children.len(), duplication, part);
            self.set_duplication(child, duplication);
            children.extend(std::iter::repeat_n(child, 1 << duplication));
        }
        self.inners[id].children = children;
        id as u32
    }

    /// The child built for `part`, which owns `2^duplication` slots from `first_slot` of a
    /// node of `fanout` slots whose model (before scaling) is `node_model`.
    fn child(
        &mut self,
        keys: &[K],
        node_model: &LinearModel,
        fanout: usize,
        first_slot: usize,
        duplication: u8,
        part: Part,
    ) -> u32 {
        let slice = &keys[part.left..part.right];
        if slice.is_empty() {
            return self.leaf(slice, None, NodeCost::default());
        }
        // The child's share of the parent's output, mapped back onto keys.
        let lo_value = first_slot as f64 / fanout as f64;
        let hi_value = (first_slot + (1 << duplication)) as f64 / fanout as f64;
        let lo = (lo_value - node_model.b) / node_model.a;
        let hi = (hi_value - node_model.b) / node_model.a;
        let a = 1.0 / (hi - lo);
        let child_model = LinearModel {
            a,
            b: -a * lo,
            base: node_model.base,
        };
        self.node(slice, child_model, part.cost, part.model)
    }

    fn set_duplication(&mut self, node: u32, duplication: u8) {
        if node & LEAF != 0 {
            self.leaves[(node & !LEAF) as usize].duplication = duplication;
        } else {
            self.inners[node as usize].duplication = duplication;
        }
    }
}
