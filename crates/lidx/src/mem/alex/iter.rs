//! [`Range`]: entries in key order, walking occupied slots by the bitmap and data nodes by
//! their left-to-right chain. It walks the data nodes only, not the map, so it needs nothing
//! of `map` (which hands it its data nodes).

use std::cmp::Ordering;
use std::ops::Bound;

use super::data_node::{DataNode, NIL};
use crate::key::Key;

/// Iterator over a range of an [`super::Alex`] map, in key order.
#[derive(Debug)]
pub struct Range<'a, K, V> {
    leaves: &'a [DataNode<K, V>],
    leaf: u32,
    slot: usize,
    end: Bound<K>,
}

impl<'a, K: Key, V: Default> Range<'a, K, V> {
    /// The entries from slot `slot` of data node `leaf` of `leaves` on, up to `end`.
    pub(crate) fn new(leaves: &'a [DataNode<K, V>], leaf: u32, slot: usize, end: Bound<K>) -> Self {
        Range {
            leaves,
            leaf,
            slot,
            end,
        }
    }
}

impl<'a, K: Key, V: Default> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        while self.leaf != NIL {
            let node = &self.leaves[self.leaf as usize];
            match node.next_occupied(self.slot) {
                Some(i) => {
                    let key = &node.keys[i];
                    if past_end(key, &self.end) {
                        self.leaf = NIL;
                        return None;
                    }
                    self.slot = i + 1;
                    return Some((key, &node.values[i]));
                }
                None => {
                    self.leaf = node.next;
                    self.slot = 0;
                }
            }
        }
        None
    }
}

/// Whether `key` is past the end bound of a range.
#[inline]
fn past_end<K: Key>(key: &K, end: &Bound<K>) -> bool {
    match end {
        Bound::Included(e) => key.key_cmp(e) == Ordering::Greater,
        Bound::Excluded(e) => key.key_cmp(e) != Ordering::Less,
        Bound::Unbounded => false,
    }
}
