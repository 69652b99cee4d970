//! Insert: follow the models to the key's slot; a `NULL` slot takes the entry, a `DATA` slot
//! holding another key becomes a `NODE` slot whose new child holds both (conflict-driven child
//! creation, paper 003 §2), a `DATA` slot holding the key itself is an update.
//!
//! On the way back up every node on the path counts the insert (`size`, `inserts`, and
//! `conflicts` when it made a child), and the highest node whose statistics say so
//! (`LippParams::grown`) is rebuilt, as the reference does: a node that wants a rebuild tells
//! its parent, which rebuilds it unless the parent wants one itself (which covers it). An
//! update changes no statistic (the reference has no update: it would put both copies in a
//! new child).

use super::model::LippKey;
use super::node::Node;
use super::params::LippParams;
use super::slots::{Slot, SlotMut};

/// What an insert below a node did.
pub(crate) enum Inserted<V> {
    /// The key was there: its old value.
    Replaced(V),
    /// A new entry; `rebuild` when the node the call was made on wants a rebuild.
    Added { conflict: bool, rebuild: bool },
}

impl<K: LippKey, V> Node<K, V> {
    /// Inserts `key` (image `m`) with `value` below this node. See the module docs.
    pub(crate) fn insert(&mut self, key: K, m: u64, value: V, params: &LippParams) -> Inserted<V> {
        let pos = self.model.predict(m, self.len());
        let conflict = match self.get_mut(pos) {
            SlotMut::Null => {
                self.set(pos, Slot::Data(key, value));
                false
            }
            SlotMut::Data(k, v) if k.key_cmp(&key).is_eq() => {
                return Inserted::Replaced(std::mem::replace(v, value));
            }
            SlotMut::Data(..) => {
                let Slot::Data(old_key, old_value) = self.take(pos) else {
                    unreachable!("matched DATA above")
                };
                let old_m = old_key.to_model();
                let child = if old_m < m {
                    Node::two((old_key, old_value), old_m, (key, value), m)
                } else {
                    Node::two((key, value), m, (old_key, old_value), old_m)
                };
                self.set(pos, Slot::Node(child));
                true
            }
            SlotMut::Node(child) => match child.insert(key, m, value, params) {
                Inserted::Replaced(old) => return Inserted::Replaced(old),
                Inserted::Added {
                    conflict,
                    rebuild: child_wants,
                } => {
                    let wants = self.counts_insert(conflict, params);
                    if child_wants && !wants {
                        if let SlotMut::Node(child) = self.get_mut(pos) {
                            child.rebuild(params);
                        }
                    }
                    return Inserted::Added {
                        conflict,
                        rebuild: wants,
                    };
                }
            },
        };
        let rebuild = self.counts_insert(conflict, params);
        Inserted::Added { conflict, rebuild }
    }

    /// Counts one new entry below this node; true when the node now wants a rebuild.
    fn counts_insert(&mut self, conflict: bool, params: &LippParams) -> bool {
        self.size += 1;
        self.inserts = self.inserts.saturating_add(1);
        self.conflicts = self.conflicts.saturating_add(u32::from(conflict));
        params.grown(self.size, self.build_size, self.inserts, self.conflicts)
    }
}
