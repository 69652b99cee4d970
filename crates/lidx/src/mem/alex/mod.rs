//! ALEX, an updatable adaptive learned index (Ding et al., SIGMOD 2020), as an owned ordered
//! map: [`Alex`].
//!
//! Paper 001 ("Cutting learned index into pieces", §II-A) takes ALEX apart into its insertion
//! strategy, "Gap" (gapped arrays filled by model-based insertion), its structure, "ATS" (an
//! asymmetric tree whose inner nodes route by model and whose shape a cost model chooses), and
//! its retraining (expand, split sideways or down, driven by the cost model and density); paper
//! 003 §2-3 describes the node layout. The ALEX paper itself is not in our folder; the
//! algorithm follows the reference implementation (`microsoft/ALEX`), read, not copied.
//!
//! One file per concept:
//!
//! * `model`: the linear models, least squares with sampling;
//! * `cost`: the cost model (search iterations, shifts, traversal, model size);
//! * `data_node`: the gapped array with its bitmap, exponential search, inserts with shifts,
//!   removes with contraction, resizing;
//! * `inner_node`: routing by model into power-of-two child slots, children owning runs;
//! * `fanout`: the fanout tree that sizes nodes at bulk load;
//! * `build`: the bulk load; `update`: inserts, expansion, retraining and splits, removes;
//!   `widen`: the root's key domain widened for appends;
//!   `retrains`: their counts and times; `iter`: ranges over the chain of data nodes.
//!
//! Where we differ from the reference, and why:
//!
//! * Nodes live in two arenas indexed by `u32` (data nodes and inner nodes); data nodes are
//!   chained left to right for scans. A split reuses the old node's id, so ids never free.
//! * Models subtract a per-node base key in integer arithmetic before going to `f64` (see
//!   `model`), so `u64` keys past 2^53 keep their precision inside a node.
//! * The root's key domain widens to the right only (`widen`), once per fill of a data node
//!   that holds at least 16 keys past the domain and at least half of its keys; the
//!   reference widens both ways after enough keys fall outside. Keys below the domain go to
//!   the leftmost data node, which splits down as it fills: decreasing inserts deepen the
//!   left edge. Increasing inserts into an empty map took 43.6 µs an insert at 3M keys
//!   before the widening (the right edge 1,407 levels deep at 2M), 0.18-0.22 µs after
//!   (depth 2); random order 0.42-0.49 µs, with the same tree as before the widening. Appends
//!   past the span of an inner node below the root still split down: that takes a root slot
//!   holding more keys than a data node can (at the default sizes about 800K keys a slot of
//!   a root at its 2^21 slots), or small nodes (`max_node_bytes` of a few KiB).
//! * A sideways split whose keys all route to one half of the node's slots gives the other
//!   half to an empty node (repeatedly), where the reference splits down: appends then fill
//!   the empty nodes beside it instead of deepening the tree under it. Keys that all route
//!   to one slot still split down.
//! * Splits cut in two (the reference's default "decide between retraining and splitting in
//!   two"), or narrow as above, and never propagate upwards (the reference's default too).
//!   Inner nodes are never merged or shrunk, and data nodes only shrink (as in the
//!   reference).
//! * Lookups do not count themselves (`get` takes `&self` and maps are `Sync`); the measured
//!   cost that triggers retraining counts inserts only. The reference counts both.
//! * Keys: [`AlexKey`] is implemented for `u64`, `u32`, `i64` and `f64`, whose model images are
//!   injective. `Str16` is refused at compile time: the model sees only its first 8 bytes, so
//!   keys sharing them would pile into one predicted slot and defeat the gapped array.
//! * Values must be `Default` (gap slots hold one; see `data_node`).
//!
//! # Measured against the reference
//!
//! 2-core Xeon VM shared with other jobs (noisy: single rounds swing by 2x); keys from `lidx
//! gen` (seed 42); the reference built `g++ -O3 -march=native`, ours in release; C++ then
//! Rust in separate processes, one round under the benchmark lock; transparent huge pages on
//! both sides (`glibc.malloc.hugetlb=1`); the same 2M uniform queries of existing keys
//! (splitmix64), every answer checked; inserts: a random half bulk-loaded, the other half
//! inserted in random order (same permutation both sides), every key checked after.
//!
//! * 10M lognormal, five rounds, ours against the reference in the same round: lookups
//!   1.05, 0.58, 1.07, 0.82, 1.02x its time, median 1.02x (ours 136-187 ns, the reference's
//!   129-236 ns); inserts 0.88, 0.97, 0.99, 1.19, 0.95x its throughput, median 0.97x
//!   (3.0-4.2 M/s); bulk load 1.19-1.85x its speed, median 1.67x (2.7-4.6 s against 4.5-5.5
//!   s). Before this round of work, in the same rounds: lookups median 1.04x (0.61-1.12),
//!   inserts median 0.91x (0.86-1.13): in this session the old code was already near the
//!   targets, so the earlier 1.25-2.0x and 0.49-0.70x were mostly the machine's noise; the
//!   changes here gain a few percent on lookups and about 7% on inserts.
//! * 10M `zipf-gaps`, the one round where the reference ran unhindered: lookups 1.11x
//!   (376 against 339 ns), inserts 0.87x (1.37 against 1.59 M/s), bulk load 1.40x.
//! * 50M lognormal (lookups and bulk load only): two rounds, both under heavy contention
//!   (the reference's bulk load took 64-72 s where the issue measured 19.4 s); ratios from
//!   0.55x to 2.5x, not usable. Not measured cleanly.
//!
//! What the profile says (perf, callgrind on 1M keys):
//!
//! * a lookup's time is its cache misses: more than half of it waits on the key slot at the
//!   prediction, as the reference's does; a tenth went to a data node's header spread over
//!   two lines, now one (see `data_node`). Evaluating models in `f64` without AVX-512 costs
//!   more instructions than the reference's `-march=native` build; the conversions are now
//!   the short ones (`crate::model::linear`).
//! * inserts run 1.35x the reference's instructions (424M against 315M for 500k inserts), all
//!   of it in data node resizes: 16.6k instructions a resize against 8.5k, from slots we
//!   initialise (keys to the gap key, values to `V::default()`) where the reference leaves
//!   them uninitialised, and bounds-checked per-key work. Prefetching the value slot and
//!   bitmap word at the prediction hides their misses behind the key's.
//! * the bulk load is faster: it spends its time in the fanout tree's costing (tabulated
//!   logarithms, see `cost`) and faulting pages in.

pub(crate) mod build;
pub(crate) mod cost;
pub(crate) mod data_node;
pub(crate) mod fanout;
pub(crate) mod inner_node;
mod iter;
pub(crate) mod model;
pub(crate) mod params;
mod retrains;
mod update;
mod widen;

use std::cmp::Ordering;
use std::mem::size_of;
use std::ops::{Bound, RangeBounds};

use crate::error::{Error, Result};
use crate::key::Key;
use crate::map::{BulkLoad, OrderedMap};
use data_node::DataNode;
use inner_node::{InnerNode, LEAF};
pub use iter::Range;
pub use params::AlexParams;
use params::Derived;
pub use retrains::AlexRetrains;

/// A key type ALEX supports: one whose model image ([`Key::to_model`]) is injective.
pub trait AlexKey: Key {}
impl AlexKey for u64 {}
impl AlexKey for u32 {}
impl AlexKey for i64 {}
impl AlexKey for f64 {}

/// Id of the leftmost data node: the bulk load builds it first, and a split keeps the left
/// half under the old id.
const FIRST_LEAF: u32 = 0;

/// ALEX as an ordered map. See the module docs.
#[derive(Debug)]
pub struct Alex<K, V> {
    params: AlexParams,
    derived: Derived,
    inners: Vec<InnerNode>,
    leaves: Vec<DataNode<K, V>>,
    /// Tagged id of the root ([`LEAF`] set for a data node).
    root: u32,
    len: usize,
    retrains: AlexRetrains,
}

/// An [`Alex`] taken apart ([`Alex::into_parts`]).
pub(crate) struct AlexParts<K, V> {
    pub(crate) inners: Vec<InnerNode>,
    pub(crate) leaves: Vec<DataNode<K, V>>,
    /// Tagged id of the root ([`LEAF`] set for a data node).
    pub(crate) root: u32,
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
        Ok(build::bulk_load(entries, params, derived))
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

    /// The nodes as built, for laying them out elsewhere (the on-disk ALEX's bulk load,
    /// [`crate::disk::alex`]): inner nodes, data nodes (in key order after a bulk load: ids
    /// are given left to right) and the tagged root.
    pub(crate) fn into_parts(self) -> AlexParts<K, V> {
        AlexParts {
            inners: self.inners,
            leaves: self.leaves,
            root: self.root,
        }
    }

    /// The data node for model image `m`, and its parent with the slot taken there.
    #[inline(always)]
    fn descend(&self, m: u64) -> (u32, Option<(u32, usize)>) {
        let mut node = self.root;
        let mut parent = None;
        while node & LEAF == 0 {
            let (child, slot) = self.inners[node as usize].child(m);
            parent = Some((node, slot));
            node = child;
        }
        (node & !LEAF, parent)
    }

    /// The data node for `key`.
    #[inline(always)]
    fn leaf_for(&self, key: &K) -> &DataNode<K, V> {
        let m = key.to_model();
        let mut node = self.root;
        while node & LEAF == 0 {
            node = self.inners[node as usize].child(m).0;
        }
        &self.leaves[(node & !LEAF) as usize]
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
        leaf.find(key).map(|i| &leaf.values[i])
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
        Range::new(self, leaf, slot, range.end_bound().cloned())
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

/// Whether `key` is past the end bound of a range.
#[inline]
fn past_end<K: Key>(key: &K, end: &Bound<K>) -> bool {
    match end {
        Bound::Included(e) => key.key_cmp(e) == Ordering::Greater,
        Bound::Excluded(e) => key.key_cmp(e) != Ordering::Less,
        Bound::Unbounded => false,
    }
}

#[cfg(test)]
mod tests;
