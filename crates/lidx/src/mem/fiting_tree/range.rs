//! The chain of a [`super::FitingMap`]'s segments ([`Node`], ended by [`NIL`]) and [`Range`]:
//! the map's entries in key order, segment after segment along that chain, each read through
//! its strategy's cursor. The iterator walks the chain only, not the map, so this file needs
//! nothing of `map` (which builds the chain and hands it over).

use std::marker::PhantomData;
use std::ops::Bound;

use crate::key::Key;
use crate::mem::fiting_tree::strategy::InsertStrategy;

/// No segment (the end of the chain).
pub(crate) const NIL: u32 = u32::MAX;

/// A segment and the one after it in key order.
pub(crate) struct Node<S> {
    pub(crate) segment: S,
    pub(crate) next: u32,
}

/// Iterator over a [`super::FitingMap`]'s entries in a key range. See the module docs.
pub struct Range<'a, K: Key, V, S: InsertStrategy<K, V>> {
    nodes: &'a [Node<S>],
    segment: u32,
    cursor: Option<S::Cursor>,
    end: Bound<K>,
    _values: PhantomData<fn() -> &'a V>,
}

impl<'a, K: Key, V, S: InsertStrategy<K, V>> Range<'a, K, V, S> {
    /// The entries from `start` on, up to `end`, starting in segment `segment` of `nodes`.
    pub(crate) fn new(nodes: &'a [Node<S>], segment: u32, start: Bound<K>, end: Bound<K>) -> Self {
        let cursor = Some(nodes[segment as usize].segment.seek(start.as_ref()));
        Range {
            nodes,
            segment,
            cursor,
            end,
            _values: PhantomData,
        }
    }
}

impl<'a, K: Key, V, S: InsertStrategy<K, V>> Iterator for Range<'a, K, V, S> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        while self.segment != NIL {
            let node = &self.nodes[self.segment as usize];
            let cursor = self
                .cursor
                .get_or_insert_with(|| node.segment.seek(Bound::Unbounded));
            if let Some((k, v)) = node.segment.next(cursor) {
                let in_range = match &self.end {
                    Bound::Unbounded => true,
                    Bound::Included(e) => !e.key_lt(k),
                    Bound::Excluded(e) => k.key_lt(e),
                };
                if in_range {
                    return Some((k, v));
                }
                self.segment = NIL;
                return None;
            }
            self.segment = node.next;
            self.cursor = None;
        }
        None
    }
}
