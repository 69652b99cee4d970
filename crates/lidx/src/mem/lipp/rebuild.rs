//! Subtree rebuilds: drain a subtree's entries in key order and bulk-build it again, so its
//! model fits the keys it holds now.
//!
//! The reference rebuilds after an insert when its statistics say the subtree outgrew its
//! model (`LippParams::grown`), choosing the highest such node on the insert's path; we do the
//! same (see `insert.rs`), and also after a remove that left the subtree sparse
//! (`LippParams::shrunk`, see `remove.rs`). A rebuild costs one pass over the subtree's slots
//! and one bulk build of its entries; since the statistics restart at the build, it is paid
//! for by the inserts or removes that came before it.

use super::model::LippKey;
use super::node::Node;
use super::params::LippParams;

impl<K: LippKey, V> Node<K, V> {
    /// Rebuilds this subtree from its entries.
    pub(crate) fn rebuild(&mut self, params: &LippParams) {
        let old = std::mem::replace(self, Node::empty());
        let entries = old.into_entries();
        *self = Node::from_entries(entries, params);
    }

    /// The subtree's entries in key order.
    pub(crate) fn into_entries(self) -> Vec<(K, V)> {
        let mut entries = Vec::with_capacity(self.size);
        self.drain_into(&mut entries);
        entries
    }

    /// A subtree built from `entries`, in strictly increasing key order.
    pub(crate) fn from_entries(entries: Vec<(K, V)>, params: &LippParams) -> Self {
        let keys: Vec<u64> = entries.iter().map(|(k, _)| k.to_model()).collect();
        Node::build(&keys, &mut entries.into_iter(), params)
    }
}
