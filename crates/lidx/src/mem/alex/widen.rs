//! Widening the root's key domain to the right, for keys appended past it.
//!
//! The root's model maps the keys it was built on into its `S` child slots; a larger key is
//! clamped into the last slot. Without more, keys appended in increasing order (time stamps,
//! sequence numbers: the `log` store's load) all land in the right edge's data node, which
//! splits down as it fills, so the right edge deepens by a level every few splits and each
//! insert descends further: 2M keys inserted in increasing order into an empty map took
//! 17.4 µs an insert, 3M 43.6 µs (against 0.39 and 0.41 µs in random order).
//!
//! The reference widens the root (its "root expansion", after enough keys fall out of the
//! domain). We widen it when an insert finds its data node full and that node holds at least
//! 16 keys past the root's domain and at least half of its keys (keys landing a little past
//! the largest in a random order, or one far key, do not halve the root's slots for the keys
//! inside). One widening appends `S` slots with the model unchanged, so every key in the
//! domain keeps its slot exactly; a new data node owns them, taking from the right edge's
//! nodes the keys that now route to it. Keys still past the new domain (a far run of appends)
//! go to that node and widen the root again when it fills, once per fill, so the root grows
//! to cover them step by step. A root at the largest fanout gets a parent first: a new root
//! of one slot whose model is the old one's divided by `S` (a power of two, so the old root
//! keeps exactly its keys), which then widens the same way. Widenings are counted and timed
//! with the other reshapes ([`super::AlexRetrains`]).
//!
//! Appends into a region a far run jumped over land in a node owning one slot of a root
//! below the top one; when that root is at the largest fanout the node splits down, as
//! before the widening.
//!
//! Keys below the domain are not widened for (the models' base is the smallest key they were
//! fitted on, so moving it would round predictions differently): decreasing inserts still
//! deepen the left edge.

use std::iter;
use std::time::Instant;

use super::data_node::{DataNode, NIL};
use super::inner_node::{InnerNode, LEAF};
use super::key::AlexKey;
use super::map::Alex;

/// Keys past the root's domain a full data node must hold before the root widens for them:
/// one far key (or a few) stays in the edge node, as in the reference (its
/// `kMinOutOfDomainKeys`, 5, before it considers expanding).
const MIN_PAST_KEYS: usize = 16;

impl<K: AlexKey, V: Default> Alex<K, V> {
    /// Widens the root once (doubling its slots, after giving it a parent when it is at the
    /// largest fanout) when `m` predicts past its last slot and data node `leaf` (where `m`
    /// routes, full) holds at least [`MIN_PAST_KEYS`] keys past the root's domain and at
    /// least half of its keys. Whether it widened.
    pub(super) fn widen_root_for(&mut self, m: u64, leaf: u32) -> bool {
        if self.root & LEAF != 0 || !self.past_root(m) {
            return false;
        }
        let node = &self.leaves[leaf as usize];
        let past = node
            .occupied_keys()
            .filter(|k| self.past_root(k.to_model()))
            .count();
        if past < MIN_PAST_KEYS || past * 2 < node.num_keys {
            return false;
        }
        let start = Instant::now();
        let slots = self.inners[self.root as usize].children.len();
        if 2 * slots > self.derived.max_fanout {
            self.raise_root(slots);
        }
        self.widen_root(self.inners[self.root as usize].children.len());
        self.retrains.widenings.record(start);
        true
    }

    /// Whether model image `m` predicts past the root's last slot (the root is inner).
    fn past_root(&self, m: u64) -> bool {
        let root = &self.inners[self.root as usize];
        root.model.predict(m) as i64 >= root.children.len() as i64
    }

    /// Puts a root of one slot over the current one (of `slots` slots).
    fn raise_root(&mut self, slots: usize) {
        let old = self.root;
        let mut model = self.inners[old as usize].model;
        model.scale(1.0 / slots as f64);
        self.inners[old as usize].duplication = 0;
        // The new root is pushed before `root` names it (`get` reads ids unchecked).
        let new_root = self.inners.len() as u32;
        self.inners.push(InnerNode {
            model,
            children: vec![old],
            duplication: 0,
        });
        self.root = new_root;
    }

    /// Doubles the root's slots (`slots` now) with its model unchanged: a new data node owns
    /// the new half, holding the keys that route there.
    fn widen_root(&mut self, slots: usize) {
        let root = self.root as usize;
        let model = self.inners[root].model;
        let moves = |k: &K| model.predict(k.to_model()) as i64 >= slots as i64;
        let last = self.descend(u64::MAX).0;
        let (mut keys, mut values) = (Vec::new(), Vec::new());
        let mut leaf = last;
        while leaf != NIL {
            let node = &self.leaves[leaf as usize];
            let prev = node.prev;
            let Some(last_key) = node.occupied_keys().last() else {
                leaf = prev;
                continue;
            };
            if !moves(&last_key) {
                break;
            }
            let (mut node_keys, mut node_values) = self.leaves[leaf as usize].drain();
            let cut = node_keys.partition_point(|k| !moves(k));
            let (moved_keys, moved_values) = (node_keys.split_off(cut), node_values.split_off(cut));
            keys.splice(0..0, moved_keys);
            values.splice(0..0, moved_values);
            self.refill(leaf, &node_keys, node_values);
            if cut > 0 {
                break;
            }
            leaf = prev;
        }
        let mut node = DataNode::fresh(&keys, values, slots.trailing_zeros() as u8, &self.derived);
        let id = self.leaves.len() as u32;
        node.prev = last;
        node.next = NIL;
        self.leaves[last as usize].next = id;
        self.leaves.push(node);
        self.inners[root]
            .children
            .extend(iter::repeat_n(id | LEAF, slots));
    }

    /// Rebuilds data node `leaf` over `keys` and `values` under the same id, in its place in
    /// the chain.
    fn refill(&mut self, leaf: u32, keys: &[K], values: Vec<V>) {
        let old = &self.leaves[leaf as usize];
        let (prev, next, duplication) = (old.prev, old.next, old.duplication);
        let mut node = DataNode::fresh(keys, values, duplication, &self.derived);
        node.prev = prev;
        node.next = next;
        self.leaves[leaf as usize] = node;
    }
}
