//! Ordered iteration over an [`super::Art`]: [`Range`], and the seek that `lower_bound` and
//! `range` start from.
//!
//! The ART paper (Leis et al., ICDE 2013, §III) notes that a radix tree keeps its keys in
//! order, so a range scan is a depth-first walk of the children in key-byte order; it leaves
//! the walk itself open. Ours keeps a stack of `(inner node, position of the child being
//! walked)` frames, one per inner node on the path, so the next leaf is found without parent
//! pointers. A path has at most one inner node per key byte, so the stack is a fixed array of
//! [`MAX_KEY_BYTES`] frames and an iterator never allocates.
//!
//! **Seeking a lower bound with optimistic prefixes.** The seek descends like a lookup but
//! compares each compressed path with the key *in order* over its full length, bytes beyond
//! the [`MAX_PREFIX`] stored ones being read from the subtree's leftmost leaf (every leaf below
//! a node shares its path). If the path is greater than the key, every key of the subtree is
//! greater, and the answer is the subtree's smallest leaf; if smaller, the whole subtree is
//! smaller and the walk moves on to the next subtree to the right; if equal, the next byte
//! picks the child: an exact match descends, otherwise the first child with a greater byte
//! holds the answer in its smallest leaf. Skipping the unstored bytes, as a lookup does, would
//! be wrong here: a subtree whose hidden bytes are smaller than the key's would be entered and
//! its first leaf returned.
//!
//! [`MAX_PREFIX`]: super::node::MAX_PREFIX

use std::ops::Bound;

use super::key_bytes::{ArtKey, MAX_KEY_BYTES};
use super::multilevel::fragment;
use super::node::{Leaf, NodeRef, View};
use super::tree::prefix_cmp;

/// One inner node on the path and the position (see [`NodeRef::child_at`]) of the child the
/// walk is in.
struct Frame<'a, K, V> {
    node: &'a NodeRef<K, V>,
    pos: usize,
}

impl<K, V> Clone for Frame<'_, K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, V> Copy for Frame<'_, K, V> {}

/// Iterator over the entries of an [`super::Art`] in a key range, in key order.
pub struct Range<'a, K, V> {
    stack: [Frame<'a, K, V>; MAX_KEY_BYTES],
    depth: usize,
    /// The leaf `next` returns, unless `stale`.
    next: Option<&'a Leaf<K, V>>,
    /// `next` was returned: the walk moves on at the next call, not before, so a seek (a
    /// `lower_bound`) does not pay for the leaf after its answer.
    stale: bool,
    end: Bound<K>,
}

impl<'a, K: ArtKey, V> Range<'a, K, V> {
    /// The entries of the tree at `root` from `start` (inclusive or exclusive) to `end`.
    pub(super) fn new(root: &'a NodeRef<K, V>, start: Bound<&K>, end: Bound<K>) -> Self {
        let mut r = Range {
            stack: [Frame { node: root, pos: 0 }; MAX_KEY_BYTES],
            depth: 0,
            next: None,
            stale: false,
            end,
        };
        r.next = match start {
            Bound::Unbounded => r.descend_leftmost(root),
            Bound::Included(k) => r.seek(root, k, true),
            Bound::Excluded(k) => r.seek(root, k, false),
        };
        r
    }

    /// The first leaf `>= key` (or `> key` when not `inclusive`), building the stack of its
    /// path. See the module docs.
    fn seek(
        &mut self,
        root: &'a NodeRef<K, V>,
        key: &K,
        inclusive: bool,
    ) -> Option<&'a Leaf<K, V>> {
        let kb = key.key_bytes();
        let kb = kb.as_ref();
        let mut node = root;
        let mut depth = 0;
        loop {
            match node.view() {
                View::Empty => return None,
                View::Leaf(leaf) => {
                    let order = leaf.key.key_cmp(key);
                    return if order.is_gt() || (order.is_eq() && inclusive) {
                        Some(leaf)
                    } else {
                        self.advance()
                    };
                }
                _ => {}
            }
            match prefix_cmp(node, kb, depth) {
                std::cmp::Ordering::Greater => return self.descend_leftmost(node),
                std::cmp::Ordering::Less => return self.advance(),
                std::cmp::Ordering::Equal => {}
            }
            depth += node.header().expect("an inner node").prefix_len();
            let span = node.span();
            let frag = fragment(&kb[depth..depth + span]);
            let Some((pos, at, child)) = node.child_at(node.position_ge(frag)) else {
                return self.advance();
            };
            self.push(node, pos);
            if at != frag {
                return self.descend_leftmost(child);
            }
            node = child;
            depth += span;
        }
    }

    fn push(&mut self, node: &'a NodeRef<K, V>, pos: usize) {
        self.stack[self.depth] = Frame { node, pos };
        self.depth += 1;
    }

    /// The smallest leaf below `node`, pushing the path to it.
    fn descend_leftmost(&mut self, mut node: &'a NodeRef<K, V>) -> Option<&'a Leaf<K, V>> {
        loop {
            match node.view() {
                View::Empty => return None,
                View::Leaf(leaf) => return Some(leaf),
                _ => {
                    let (pos, _, child) = node.child_at(0).expect("an inner node has children");
                    self.push(node, pos);
                    node = child;
                }
            }
        }
    }

    /// The leaf after the subtree the top frame's child is, popping finished nodes.
    fn advance(&mut self) -> Option<&'a Leaf<K, V>> {
        while self.depth > 0 {
            let top = self.stack[self.depth - 1];
            if let Some((pos, _, child)) = top.node.child_at(top.pos + 1) {
                self.stack[self.depth - 1].pos = pos;
                return self.descend_leftmost(child);
            }
            self.depth -= 1;
        }
        None
    }
}

impl<'a, K: ArtKey, V> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.stale {
            self.next = self.advance();
            self.stale = false;
        }
        let leaf = self.next?;
        let inside = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => !leaf.key.key_cmp(e).is_gt(),
            Bound::Excluded(e) => leaf.key.key_cmp(e).is_lt(),
        };
        if !inside {
            self.next = None;
            return None;
        }
        self.stale = true;
        Some((&leaf.key, &leaf.value))
    }
}
