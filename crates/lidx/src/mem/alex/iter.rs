//! [`Range`]: entries in key order, walking occupied slots by the bitmap and data nodes by
//! their left-to-right chain.

use std::ops::Bound;

use super::data_node::NIL;
use super::{past_end, Alex};
use crate::key::Key;

/// Iterator over a range of an [`Alex`] map, in key order.
#[derive(Debug)]
pub struct Range<'a, K, V> {
    map: &'a Alex<K, V>,
    leaf: u32,
    slot: usize,
    end: Bound<K>,
}

impl<'a, K: Key, V: Default> Range<'a, K, V> {
    pub(crate) fn new(map: &'a Alex<K, V>, leaf: u32, slot: usize, end: Bound<K>) -> Self {
        Range {
            map,
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
            let node = &self.map.leaves[self.leaf as usize];
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
