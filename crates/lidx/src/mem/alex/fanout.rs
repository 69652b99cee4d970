//! The fanout tree: how ALEX chooses an inner node's fanout and which neighbouring children to
//! merge, at bulk load (the "bottom-up" method of the reference implementation, its default).
//!
//! Level `l` of the tree cuts the node's key space into `2^l` equal parts of its model's
//! output; each part is costed as a data node ([`super::cost`]), plus a traversal and the
//! model-size charge of `2^l` children. Levels are added while the total falls (stopping after
//! two rises in a row); from the best level, sibling parts are merged upwards wherever one
//! node costs less than the two (paper 001 §II-A on ALEX's structure: children of one inner
//! node may cover different widths, an asymmetric tree).
//!
//! Where we differ: part boundaries are found by the node's own routing (a binary search on
//! "the model sends this key to a part at most `i`"), not by inverting the model and
//! correcting for rounding as the reference does, so a key always lands in the part that
//! was costed for it.

use std::mem::size_of;

use super::cost::{self, NodeCost, MODEL_SIZE_WEIGHT, NODE_LOOKUP_WEIGHT};
use super::data_node::DataNode;
use super::model::{self, LinearModel};
use super::params::Derived;
use crate::key::Key;

/// One part of one level.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub(crate) level: u32,
    pub(crate) index: usize,
    pub(crate) cost: NodeCost,
    /// Keys `[left, right)` of the node's keys.
    pub(crate) left: usize,
    pub(crate) right: usize,
    /// Fitted on the part's ranks (unscaled).
    pub(crate) model: LinearModel,
    used: bool,
}

impl Part {
    pub(crate) fn len(&self) -> usize {
        self.right - self.left
    }
}

/// Bytes a child costs its parent in the model-size term: a data node and its slot.
fn child_bytes<K, V>() -> f64 {
    (size_of::<DataNode<K, V>>() + size_of::<u32>()) as f64
}

/// Cuts `keys` into `2^level` parts by `node_model` (mapping the node's range to `[0, 1)`),
/// returning the level's total cost per key and its parts.
pub(crate) fn compute_level<K: Key, V>(
    keys: &[K],
    node_model: &LinearModel,
    total_keys: usize,
    level: u32,
    d: &Derived,
) -> (f64, Vec<Part>) {
    let n = keys.len();
    let fanout = 1usize << level;
    let mut routing = *node_model;
    routing.scale(fanout as f64);
    let mut parts = Vec::with_capacity(fanout);
    let mut total = 0.0;
    let mut left = 0;
    for index in 0..fanout {
        let right = if index + 1 == fanout {
            n
        } else {
            left + keys[left..].partition_point(|k| routing.slot(k.to_model(), fanout) <= index)
        };
        let slice = &keys[left..right];
        let (cost, model) = if slice.is_empty() {
            (NodeCost::default(), LinearModel::default())
        } else {
            let model = model::fit_sampled(slice.len(), |i| slice[i].to_model());
            let mut cost = cost::expected_cost(
                slice.len(),
                |i| slice[i].to_model(),
                &model,
                d.init_density,
                d.insert_fraction,
            );
            if slice.len() > d.max_data_keys() {
                cost.cost += NODE_LOOKUP_WEIGHT;
            }
            total += cost.cost * slice.len() as f64 / n as f64;
            (cost, model)
        };
        parts.push(Part {
            level,
            index,
            cost,
            left,
            right,
            model,
            used: false,
        });
        left = right;
    }
    total += NODE_LOOKUP_WEIGHT
        + MODEL_SIZE_WEIGHT * fanout as f64 * child_bytes::<K, V>() * total_keys as f64 / n as f64;
    (total, parts)
}

/// The best fanout for a node over `keys` whose cost as one data node is `node_cost`: the
/// tree depth and the parts to build, in key order (each part's duplication is the depth
/// minus its level).
pub(crate) fn best_fanout<K: Key, V>(
    keys: &[K],
    node_model: &LinearModel,
    node_cost: f64,
    total_keys: usize,
    d: &Derived,
) -> (u32, f64, Vec<Part>) {
    let n = keys.len();
    let mut best_level = 0;
    let mut best_cost = node_cost + NODE_LOOKUP_WEIGHT;
    let mut costs = vec![best_cost];
    let mut tree: Vec<Vec<Part>> = vec![vec![Part {
        level: 0,
        index: 0,
        cost: NodeCost {
            cost: best_cost,
            ..NodeCost::default()
        },
        left: 0,
        right: n,
        model: LinearModel::default(),
        used: false,
    }]];
    let mut level = 1;
    while 1usize << level <= d.max_fanout {
        let (cost, parts) = compute_level::<K, V>(keys, node_model, total_keys, level, d);
        costs.push(cost);
        let c = costs.len();
        if c >= 3 && costs[c - 1] > costs[c - 2] && costs[c - 2] > costs[c - 3] {
            break;
        }
        if cost < best_cost {
            best_cost = cost;
            best_level = level;
        }
        tree.push(parts);
        level += 1;
    }
    for part in &mut tree[best_level as usize] {
        part.used = true;
    }
    let best_cost = merge_upwards::<K, V>(&mut tree, best_level, best_cost, n, total_keys);
    (best_level, best_cost, collect_used(tree, best_level))
}

/// Merges sibling parts into their parent part wherever that lowers the cost.
fn merge_upwards<K, V>(
    tree: &mut [Vec<Part>],
    start_level: u32,
    mut best_cost: f64,
    n: usize,
    total_keys: usize,
) -> f64 {
    let node_bytes = size_of::<DataNode<K, V>>() as f64;
    for level in (1..=start_level as usize).rev() {
        let mut merged = false;
        for i in 0..tree[level].len() / 2 {
            let (l, r) = (&tree[level][2 * i], &tree[level][2 * i + 1]);
            if !(l.used && r.used) {
                continue;
            }
            let parent_keys = tree[level - 1][i].len();
            // The saving per key of the parent part, and weighted over the node's keys.
            let (saving, weighted) = if parent_keys == 0 {
                let s = MODEL_SIZE_WEIGHT * node_bytes * total_keys as f64 / n as f64;
                (s, s)
            } else {
                let pk = parent_keys as f64;
                let s = l.cost.cost * l.len() as f64 / pk + r.cost.cost * r.len() as f64 / pk
                    - tree[level - 1][i].cost.cost
                    + MODEL_SIZE_WEIGHT * node_bytes * total_keys as f64 / pk;
                (s, s * pk / n as f64)
            };
            if saving >= 0.0 {
                tree[level][2 * i].used = false;
                tree[level][2 * i + 1].used = false;
                tree[level - 1][i].used = true;
                best_cost -= weighted;
                merged = true;
            }
        }
        if !merged {
            break;
        }
    }
    best_cost
}

/// The used parts of levels `0..=max_level`, in key order.
fn collect_used(tree: Vec<Vec<Part>>, max_level: u32) -> Vec<Part> {
    let mut used: Vec<Part> = tree
        .into_iter()
        .take(max_level as usize + 1)
        .flatten()
        .filter(|p| p.used)
        .collect();
    used.sort_by_key(|p| p.index << (max_level - p.level));
    used
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::alex::params::AlexParams;

    #[test]
    fn parts_cover_the_keys_in_order_and_skewed_keys_get_a_fanout() {
        let d = AlexParams::default().derive(16).unwrap();
        let keys: Vec<u64> = (0..20_000u64).map(|i| i * i * i).collect();
        let range = (keys[keys.len() - 1] - keys[0]) as f64;
        let model = LinearModel {
            a: 1.0 / range,
            b: 0.0,
            base: keys[0],
        };
        let fitted = model::fit(keys.len(), |i| keys[i]);
        let node_cost = cost::expected_cost(keys.len(), |i| keys[i], &fitted, 0.7, 1.0).cost;
        let (depth, _, parts) = best_fanout::<u64, u64>(&keys, &model, node_cost, keys.len(), &d);
        assert!(depth >= 1, "cubic keys should not fit one node");
        let mut next = 0;
        let mut slots = 0;
        for p in &parts {
            assert_eq!(p.left, next);
            next = p.right;
            slots += 1usize << (depth - p.level);
        }
        assert_eq!(next, keys.len());
        assert_eq!(slots, 1 << depth);
    }
}
