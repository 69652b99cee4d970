//! [`Lipp`]: the map, its lookup, and the [`OrderedMap`] and [`BulkLoad`] implementations.
//!
//! A lookup follows the models from the root: a `NODE` slot descends, a `DATA` slot answers
//! if its key is the key (one comparison, no search: the precise position), a `NULL` slot
//! answers "absent" (paper 003 §2). The root is held in the map itself; an empty map's root is
//! a node of one `NULL` slot.

use std::ops::RangeBounds;

use super::iter::Range;
use super::model::LippKey;
use super::node::Node;
use super::params::LippParams;
use super::slots::SlotRef;
use crate::error::{Error, Result};
use crate::map::{BulkLoad, OrderedMap};

/// The shape of a [`Lipp`] tree, from [`Lipp::shape`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LippShape {
    /// Nodes, the root included.
    pub nodes: usize,
    /// Slots of all nodes.
    pub slots: usize,
    /// Depth of the deepest entry (1: in the root).
    pub max_depth: usize,
    /// Mean depth of an entry.
    pub mean_depth: f64,
}

/// LIPP, an updatable learned index with precise positions (Wu et al., VLDB 2021), as an
/// ordered map. See the module docs of `crate::mem::lipp`.
pub struct Lipp<K, V> {
    root: Node<K, V>,
    params: LippParams,
}

impl<K: LippKey, V> Lipp<K, V> {
    /// An empty map; [`Error::InvalidParameter`] for bad `params`.
    pub fn new(params: LippParams) -> Result<Self> {
        params.validate()?;
        Ok(Lipp {
            root: Node::empty(),
            params,
        })
    }

    /// Builds a map from pairs in strictly increasing key order.
    ///
    /// Errors: [`Error::OutOfOrder`] for a descent, [`Error::DuplicateKey`] for a repeated key,
    /// [`Error::InvalidKey`] for a NaN, [`Error::InvalidParameter`] for bad `params`.
    pub fn bulk_load(entries: Vec<(K, V)>, params: LippParams) -> Result<Self> {
        params.validate()?;
        for (index, (key, _)) in entries.iter().enumerate() {
            let previous = index.checked_sub(1).map(|i| &entries[i].0);
            crate::key::check_next(index, previous, key, true)?;
        }
        Ok(Lipp {
            root: Node::from_entries(entries, &params),
            params,
        })
    }

    /// All entries in key order.
    pub fn iter(&self) -> Range<'_, K, V> {
        self.range(..)
    }

    /// The parameters the map was made with.
    pub fn params(&self) -> &LippParams {
        &self.params
    }

    /// The tree's shape: nodes, slots, the deepest entry's depth and the mean depth of an
    /// entry (the root is depth 1): what a lookup costs, in node visits.
    pub fn shape(&self) -> LippShape {
        let mut shape = LippShape::default();
        let mut depth_sum = 0usize;
        let mut stack = vec![(&self.root, 1usize)];
        while let Some((node, depth)) = stack.pop() {
            shape.nodes += 1;
            shape.slots += node.len();
            for slot in node.iter() {
                match slot {
                    SlotRef::Null => {}
                    SlotRef::Data(..) => {
                        depth_sum += depth;
                        shape.max_depth = shape.max_depth.max(depth);
                    }
                    SlotRef::Node(child) => stack.push((child, depth + 1)),
                }
            }
        }
        shape.mean_depth = depth_sum as f64 / self.root.size.max(1) as f64;
        shape
    }

    /// The root, for the invariant checks of the unit tests.
    #[cfg(test)]
    pub(crate) fn root(&self) -> &Node<K, V> {
        &self.root
    }
}

impl<K: LippKey, V> OrderedMap<K, V> for Lipp<K, V> {
    type Range<'a>
        = Range<'a, K, V>
    where
        Self: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let m = key.to_model();
        let mut node = &self.root;
        loop {
            match node.get(node.model.predict(m, node.len())) {
                SlotRef::Node(child) => node = child,
                SlotRef::Data(k, v) => return k.key_cmp(key).is_eq().then_some(v),
                SlotRef::Null => return None,
            }
        }
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        let m = key.to_model();
        Ok(self.root.insert(key, m, value, &self.params))
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        if key.invalid_reason().is_some() {
            return None;
        }
        let value = self.root.remove(key, key.to_model(), &self.params)?;
        if self.root.size == 0 {
            self.root = Node::empty();
        } else if self.params.shrunk(self.root.size, self.root.build_size) {
            self.root.rebuild(&self.params);
        }
        Some(value)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Range<'_, K, V> {
        Range::new(&self.root, range.start_bound(), range.end_bound().cloned())
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        if key.invalid_reason().is_some() {
            return None;
        }
        self.root.lower_bound(key, key.to_model())
    }

    fn len(&self) -> usize {
        self.root.size
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.root.size_in_bytes()
    }
}

impl<K: LippKey, V> BulkLoad<K, V> for Lipp<K, V> {
    type Params = LippParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &LippParams) -> Result<Self> {
        Lipp::bulk_load(entries, *params)
    }
}
