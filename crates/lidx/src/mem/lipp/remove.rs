//! Remove: ours. The reference has none, and paper 003 §2 describes none for LIPP.
//!
//! A remove follows the models to the key's slot like a lookup. A `DATA` slot holding the key
//! becomes `NULL`; every node on the path counts one entry less. On the way back up a parent
//! repairs each child the remove went through:
//!
//! * a child left empty is dropped and its slot becomes `NULL`;
//! * a child left with one entry is folded into its slot as `DATA` (the key was predicted to
//!   that slot, so it is where an insert would have put it), so no chain of one-entry nodes
//!   grows under repeated insert/remove of neighbouring keys;
//! * a child left with fewer than `1/shrink` of the entries it was built with
//!   (`LippParams::shrunk`) is rebuilt, which frees the slots it no longer needs.
//!
//! The root is checked the same way by the map (`tree.rs`). Every rebuild here follows at
//! least `(1 - 1/shrink) * build_size` removes below that node since its build, so its cost is
//! amortized over them. Lookups never see a stale entry: a removed slot is `NULL` at once.

use super::model::LippKey;
use super::node::Node;
use super::params::LippParams;
use super::slots::{Slot, SlotMut};

impl<K: LippKey, V> Node<K, V> {
    /// Removes `key` (image `m`) from this subtree, returning its value.
    pub(crate) fn remove(&mut self, key: &K, m: u64, params: &LippParams) -> Option<V> {
        let pos = self.model.predict(m, self.len());
        let value = match self.get_mut(pos) {
            SlotMut::Null => return None,
            SlotMut::Data(k, _) => {
                if !k.key_cmp(key).is_eq() {
                    return None;
                }
                let Slot::Data(_, v) = self.take(pos) else {
                    unreachable!("matched DATA above")
                };
                v
            }
            SlotMut::Node(child) => {
                let v = child.remove(key, m, params)?;
                match child.size {
                    0 => drop(self.take(pos)),
                    1 => {
                        let Slot::Node(child) = self.take(pos) else {
                            unreachable!("matched NODE above")
                        };
                        let (k, last) = child.into_entries().pop().expect("one entry left");
                        self.set(pos, Slot::Data(k, last));
                    }
                    size if params.shrunk(size, child.build_size) => child.rebuild(params),
                    _ => {}
                }
                v
            }
        };
        self.size -= 1;
        Some(value)
    }
}
