//! [`Range`]: a [`super::FitingMap`]'s entries in key order, segment after segment along the
//! chain of segments, each read through its strategy's cursor.

use std::ops::Bound;

use crate::key::Key;
use crate::mem::fiting_tree::map::{FitingMap, NIL};
use crate::mem::fiting_tree::strategy::InsertStrategy;

/// Iterator over a [`super::FitingMap`]'s entries in a key range. See the module docs.
pub struct Range<'a, K: Key, V, S: InsertStrategy<K, V>> {
    map: &'a FitingMap<K, V, S>,
    segment: u32,
    cursor: Option<S::Cursor>,
    end: Bound<K>,
}

impl<'a, K: Key, V, S: InsertStrategy<K, V>> Range<'a, K, V, S> {
    pub(crate) fn new(
        map: &'a FitingMap<K, V, S>,
        segment: u32,
        start: Bound<K>,
        end: Bound<K>,
    ) -> Self {
        let cursor = Some(map.nodes[segment as usize].segment.seek(start.as_ref()));
        Range {
            map,
            segment,
            cursor,
            end,
        }
    }
}

impl<'a, K: Key, V, S: InsertStrategy<K, V>> Iterator for Range<'a, K, V, S> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        while self.segment != NIL {
            let node = &self.map.nodes[self.segment as usize];
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
