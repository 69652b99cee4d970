//! Ordered iteration: [`Range`], and the descent `lower_bound` takes.
//!
//! Because every node's model is non-decreasing in the key (`model.rs`), the keys below slot
//! `i` are all smaller than those below slot `j > i`, so a depth-first walk of the slots in
//! order yields the keys in order (paper 003 §3 notes a LIPP scan walks nodes this way, back
//! up to the parent at a node's end). The walk keeps a stack of `(node, next index)` frames,
//! one per node on the path, so no parent pointers are needed.
//!
//! Seeking the first key `>= k` (or `> k`) descends like a lookup, leaving a frame at each node
//! positioned after the predicted slot: every key in an earlier slot is smaller than `k` and
//! every key in a later one greater. At the bottom a `DATA` slot is the answer if its key
//! passes the bound, else the walk moves on; a `NULL` slot moves on. This is right for absent
//! keys too, which is what a learned index with precise positions usually gets wrong when it
//! stops at "not found".

use std::ops::Bound;

use super::model::LippKey;
use super::node::Node;
use super::slots::SlotRef;

/// Iterator over a [`super::Lipp`]'s entries in a key range, in key order.
pub struct Range<'a, K, V> {
    stack: Vec<(&'a Node<K, V>, usize)>,
    end: Bound<K>,
}

impl<'a, K: LippKey, V> Range<'a, K, V> {
    /// The entries below `root` from `start` to `end`.
    pub(crate) fn new(root: &'a Node<K, V>, start: Bound<&K>, end: Bound<K>) -> Self {
        let mut stack = Vec::with_capacity(8);
        let (key, inclusive) = match start {
            Bound::Unbounded => {
                stack.push((root, 0));
                return Range { stack, end };
            }
            Bound::Included(k) => (k, true),
            Bound::Excluded(k) => (k, false),
        };
        let m = key.to_model();
        let mut node = root;
        loop {
            let pos = node.model.predict(m, node.len());
            match node.get(pos) {
                SlotRef::Node(child) => {
                    stack.push((node, pos + 1));
                    node = child;
                }
                SlotRef::Data(k, _)
                    if k.key_cmp(key).is_gt() || (inclusive && k.key_cmp(key).is_eq()) =>
                {
                    stack.push((node, pos));
                    break;
                }
                _ => {
                    stack.push((node, pos + 1));
                    break;
                }
            }
        }
        Range { stack, end }
    }

    fn before_end(&self, k: &K) -> bool {
        match &self.end {
            Bound::Included(e) => !k.key_cmp(e).is_gt(),
            Bound::Excluded(e) => k.key_cmp(e).is_lt(),
            Bound::Unbounded => true,
        }
    }
}

impl<'a, K: LippKey, V> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(top) = self.stack.last_mut() {
            let (slots, i) = *top;
            if i >= slots.len() {
                self.stack.pop();
                continue;
            }
            top.1 += 1;
            match slots.get(i) {
                SlotRef::Null => {}
                SlotRef::Data(k, v) => {
                    if self.before_end(k) {
                        return Some((k, v));
                    }
                    self.stack.clear();
                    return None;
                }
                SlotRef::Node(child) => self.stack.push((child, 0)),
            }
        }
        None
    }
}

impl<K: LippKey, V> Node<K, V> {
    /// The first entry `>= key` (image `m`) below this node, without a stack: recursion down
    /// the predicted path, then the first entry to the right at the deepest level that has one.
    pub(crate) fn lower_bound(&self, key: &K, m: u64) -> Option<(&K, &V)> {
        let pos = self.model.predict(m, self.len());
        match self.get(pos) {
            SlotRef::Node(child) => {
                if let Some(found) = child.lower_bound(key, m) {
                    return Some(found);
                }
            }
            SlotRef::Data(k, v) if !k.key_cmp(key).is_lt() => return Some((k, v)),
            _ => {}
        }
        first_entry(self, pos + 1)
    }
}

/// The first entry below `slots[from..]`, in key order.
fn first_entry<K, V>(slots: &Node<K, V>, from: usize) -> Option<(&K, &V)> {
    (from..slots.len()).find_map(|i| match slots.get(i) {
        SlotRef::Null => None,
        SlotRef::Data(k, v) => Some((k, v)),
        SlotRef::Node(child) => first_entry(child, 0),
    })
}
