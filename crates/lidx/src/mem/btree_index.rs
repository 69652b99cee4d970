//! The B+-tree as a static index: the "btree" baseline of the benchmarks.
//!
//! Paper 000 §5.2 and §6.1 compare learned indexes with STX-BTree; this is our [`BTree`] map
//! used the same way over sorted keys it does not own. Each distinct key maps to the position
//! of its first occurrence, so [`StaticIndex::search`] returns the exact lower bound as a
//! window of width 0 (`lo == pos == hi`), and a last-mile search has nothing left to do. It
//! stores every distinct key and a `usize` position, which is what a learned index saves; the
//! sampled variant of paper 000 §6.1 is [`crate::mem::BTreeModel`].

use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::map::OrderedMap;
use crate::mem::btree::{BTree, BTreeParams};

/// Every distinct key of a sorted array mapped to its first position, in a [`BTree`].
pub struct BTreeIndex<K: Key> {
    tree: BTree<K, usize>,
    len: usize,
}

impl<K: Key> BTreeIndex<K> {
    /// Builds the index over sorted `keys` (duplicates allowed; the first occurrence counts).
    ///
    /// Errors: [`crate::Error::OutOfOrder`], [`crate::Error::InvalidKey`] (NaN), and
    /// [`crate::Error::InvalidParameter`] for bad `params`.
    pub fn build(keys: &[K], params: BTreeParams) -> Result<Self> {
        check_sorted(keys)?;
        let is_first = |i: usize| i == 0 || keys[i - 1].key_lt(&keys[i]);
        let distinct = (0..keys.len()).filter(|&i| is_first(i)).count();
        let firsts = (0..keys.len())
            .filter(move |&i| is_first(i))
            .map(|i| (keys[i], i));
        // An exact length lets `bulk_load` allocate the leaves once instead of doubling.
        let firsts = ExactLen {
            inner: firsts,
            remaining: distinct,
        };
        Ok(BTreeIndex {
            tree: BTree::bulk_load(firsts, params)?,
            len: keys.len(),
        })
    }

    /// The underlying map from distinct key to first position.
    pub fn tree(&self) -> &BTree<K, usize> {
        &self.tree
    }
}

impl<K: Key> StaticIndex<K> for BTreeIndex<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let pos = self.tree.lower_bound(&key).map_or(self.len, |(_, &p)| p);
        ApproxPos::exact(pos)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<BTree<K, usize>>()
            + self.tree.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.tree.leaf_count()),
            height: Some(self.tree.height()),
        }
    }
}

/// An iterator whose length is known in advance, so that its size hint is exact.
struct ExactLen<I> {
    inner: I,
    remaining: usize,
}

impl<I: Iterator> Iterator for ExactLen<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.remaining -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}
