//! Insert: follow the models to the key's slot; a `NULL` slot takes the entry, a `DATA` slot
//! holding another key becomes a `NODE` slot whose new child holds both (conflict-driven child
//! creation, paper 003 §2), a `DATA` slot holding the key itself is an update.
//!
//! Every node on the path then counts the insert (`size`, `inserts`, and `conflicts` when it
//! made a child), and the highest node whose statistics say so (`LippParams::grown`) is
//! rebuilt, as the reference does. An update changes no statistic (the reference has no
//! update: it would put both copies in a new child).
//!
//! The insert is two loops rather than a recursion: one down to the slot, then one down the
//! same path again (its nodes now in cache) counting the insert and stopping at the first node
//! that wants a rebuild. The reference counts on the way down and keeps the path in an array
//! for its rebuild check; it has no update, where we count only once the slot shows the key is
//! new. Measured on 10M lognormal keys, 5M of them inserted into a map of the other 5M (Intel
//! Xeon VM, session 54, median of three passes): the recursion that counted on the way back up
//! ran 3.1 M inserts/s, 3.3 once `set` stopped emptying slots that are always empty, and the
//! two loops 4.2-4.3, the reference's 4.3-4.4; callgrind (1M keys) counts 296 instructions an
//! insert for the loops against the recursion's 343.

use super::model::LippKey;
use super::node::Node;
use super::params::LippParams;
use super::slots::{Kind, Slot, SlotMut};

impl<K: LippKey, V> Node<K, V> {
    /// Inserts `key` (image `m`) with `value` below this node, returning the value it
    /// replaced. See the module docs.
    pub(crate) fn insert(&mut self, key: K, m: u64, value: V, params: &LippParams) -> Option<V> {
        let mut depth = 0;
        let mut node = &mut *self;
        let (pos, kind) = loop {
            let pos = node.model.predict(m, node.len());
            match node.kind(pos) {
                Kind::Node => node = node.child_mut(pos),
                kind => break (pos, kind),
            }
            depth += 1;
        };
        let conflict = kind == Kind::Data;
        if conflict {
            if let SlotMut::Data(k, v) = node.get_mut(pos) {
                if k.key_cmp(&key).is_eq() {
                    return Some(std::mem::replace(v, value));
                }
            }
            let Slot::Data(old_key, old_value) = node.take(pos) else {
                unreachable!("a DATA slot")
            };
            let old_m = old_key.to_model();
            let child = if old_m < m {
                Node::two((old_key, old_value), old_m, (key, value), m)
            } else {
                Node::two((key, value), m, (old_key, old_value), old_m)
            };
            node.set(pos, Slot::Node(child));
        } else {
            node.set(pos, Slot::Data(key, value));
        }
        self.count_insert(m, depth, conflict, params);
        None
    }

    /// Counts one new entry on each of the `depth + 1` nodes of `m`'s path from this one,
    /// top-down, and rebuilds the first that wants it (which covers the nodes below it).
    fn count_insert(&mut self, m: u64, depth: usize, conflict: bool, params: &LippParams) {
        let mut node = self;
        for level in 0..=depth {
            node.size += 1;
            node.inserts = node.inserts.saturating_add(1);
            node.conflicts = node.conflicts.saturating_add(u32::from(conflict));
            if params.grown(node.size, node.build_size, node.inserts, node.conflicts) {
                node.rebuild(params);
                return;
            }
            if level < depth {
                let pos = node.model.predict(m, node.len());
                node = node.child_mut(pos);
            }
        }
    }
}
