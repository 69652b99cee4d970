//! [`Alex`] itself: the map's nodes and counters, its reads (descent, lookups, ranges) and the
//! [`OrderedMap`] and [`BulkLoad`] implementations. The bulk load is `build`'s, the updates are
//! `update`'s and `widen`'s (each adds its methods to [`Alex`]), ranges are `iter`'s.

use std::mem::size_of;
use std::ops::{Bound, RangeBounds};

use super::build::{bulk_load, AlexParts};
use super::data_node::DataNode;
use super::inner_node::{InnerNode, LEAF};
use super::iter::Range;
use super::key::AlexKey;
use super::params::{AlexParams, Derived};
use super::retrains::AlexRetrains;
use crate::error::{Error, Result};
use crate::map::{BulkLoad, OrderedMap};

/// Id of the leftmost data node: the bulk load builds it first, and a split keeps the left
/// half under the old id.
pub(super) const FIRST_LEAF: u32 = 0;

/// ALEX as an ordered map. See the module docs.
#[derive(Debug)]
pub struct Alex<K, V> {
    pub(super) params: AlexParams,
    pub(super) derived: Derived,
    pub(super) inners: Vec<InnerNode>,
    pub(super) leaves: Vec<DataNode<K, V>>,
    /// Tagged id of the root ([`LEAF`] set for a data node).
    pub(super) root: u32,
    pub(super) len: usize,
    pub(super) retrains: AlexRetrains,
}

/// Counts of nodes and of the updates that reshaped them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlexStats {
    /// Data nodes.
    pub data_nodes: usize,
    /// Inner nodes.
    pub inner_nodes: usize,
    /// Longest root-to-data-node path, counting the data node.
    pub depth: usize,
}

impl<K: AlexKey, V: Default> Alex<K, V> {
    /// An empty map.
    pub fn new(params: AlexParams) -> Result<Self> {
        Self::bulk_load(Vec::new(), params)
    }

    /// The map holding `entries`, which must be in strictly increasing key order.
    pub fn bulk_load(entries: Vec<(K, V)>, params: AlexParams) -> Result<Self> {
        let derived = params.derive(size_of::<(K, V)>())?;
        for (index, pair) in entries.iter().enumerate() {
            crate::key::check_next(
                index,
                index.checked_sub(1).map(|i| &entries[i].0),
                &pair.0,
                true,
            )?;
        }
        let len = entries.len();
        let AlexParts {
            inners,
            leaves,
            root,
        } = bulk_load(entries, derived);
        Ok(Alex {
            params,
            derived,
            inners,
            leaves,
            root,
            len,
            retrains: AlexRetrains::default(),
        })
    }

    /// The parameters the map was built with.
    pub fn params(&self) -> &AlexParams {
        &self.params
    }

    /// Expansions, retrains and splits of data nodes since the bulk load, with their time.
    pub fn retrains(&self) -> AlexRetrains {
        self.retrains
    }

    /// Node counts and depth.
    pub fn stats(&self) -> AlexStats {
        fn depth<K, V>(map: &Alex<K, V>, node: u32) -> usize {
            if node & LEAF != 0 {
                return 1;
            }
            let inner = &map.inners[node as usize];
            let mut children = inner.children.clone();
            children.dedup();
            1 + children.iter().map(|&c| depth(map, c)).max().unwrap_or(0)
        }
        AlexStats {
            data_nodes: self.leaves.len(),
            inner_nodes: self.inners.len(),
            depth: depth(self, self.root),
        }
    }

    /// The data node for model image `m`, and its parent with the slot taken there.
    #[inline(always)]
    pub(super) fn descend(&self, m: u64) -> (u32, Option<(u32, usize)>) {
        let mut node = self.root;
        let mut parent = None;
        while node & LEAF == 0 {
            let (child, slot) = self.inners[node as usize].child(m);
            parent = Some((node, slot));
            node = child;
        }
        (node & !LEAF, parent)
    }

    /// The data node for `key`: `get`'s descent, its indexes unchecked. What that relies on:
    /// the two node arenas never shrink, and `root` or a `children` entry is written only
    /// after the node it names is pushed (so ids stay valid even if a reshape unwinds); an
    /// inner node has children ([`InnerNode::child_unchecked`]). Past 2^31 nodes of a kind an
    /// inner id would read as a data node's, still in bounds (there is always a data node
    /// more than there are inner ones) but wrong: a limit of the `u32` ids, hundreds of GiB
    /// away. Callgrind (1M lognormal keys, session 71): 124 instructions a `get` with the
    /// timer's loop and dynamic call, 133 with the checks, C++ ALEX 110.
    #[inline(always)]
    pub(super) fn leaf_for(&self, key: &K) -> &DataNode<K, V> {
        let m = key.to_model();
        let mut node = self.root;
        while node & LEAF == 0 {
            debug_assert!((node as usize) < self.inners.len());
            // SAFETY: every inner-node id the tree holds (its root, its children) names one.
            let inner = unsafe { self.inners.get_unchecked(node as usize) };
            node = inner.child_unchecked(m);
        }
        let leaf = (node & !LEAF) as usize;
        debug_assert!(leaf < self.leaves.len());
        // SAFETY: every data-node id the tree holds names one.
        unsafe { self.leaves.get_unchecked(leaf) }
    }

    /// The first entry at or after `key` (after it when `exclusive`), as a leaf id and slot.
    fn seek(&self, key: &K, exclusive: bool) -> (u32, usize) {
        let (leaf, _) = self.descend(key.to_model());
        match self.leaves[leaf as usize].seek(key, exclusive) {
            Some(slot) => (leaf, slot),
            None => (self.leaves[leaf as usize].next, 0),
        }
    }
}

impl<K: AlexKey, V: Default> BulkLoad<K, V> for Alex<K, V> {
    type Params = AlexParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &AlexParams) -> Result<Self> {
        Self::bulk_load(entries, *params)
    }
}

impl<K: AlexKey, V: Default> OrderedMap<K, V> for Alex<K, V> {
    type Range<'a>
        = Range<'a, K, V>
    where
        V: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let leaf = self.leaf_for(key);
        leaf.find(key).and_then(|i| leaf.values.get(i))
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        Ok(self.insert_valid(key, value))
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let (leaf, _) = self.descend(key.to_model());
        let removed = self.leaves[leaf as usize].remove(key, &self.derived);
        if removed.is_some() {
            self.len -= 1;
        }
        removed
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Range<'_, K, V> {
        let (leaf, slot) = match range.start_bound() {
            Bound::Included(k) => self.seek(k, false),
            Bound::Excluded(k) => self.seek(k, true),
            Bound::Unbounded => (FIRST_LEAF, 0),
        };
        Range::new(&self.leaves, leaf, slot, range.end_bound().cloned())
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        self.range((Bound::Included(*key), Bound::Unbounded)).next()
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        size_of::<Self>()
            + self
                .leaves
                .iter()
                .map(DataNode::size_in_bytes)
                .sum::<usize>()
            + self
                .inners
                .iter()
                .map(InnerNode::size_in_bytes)
                .sum::<usize>()
    }
}
