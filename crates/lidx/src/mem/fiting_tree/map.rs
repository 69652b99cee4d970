//! [`FitingMap`]: the updatable FITing-tree (paper 001 §II-B.1, Fig. 5; paper 003 §2, Figure
//! 1(a)): segments of keys, each with a linear model of error `eps`, under a B+-tree, and an
//! insertion strategy ([`InsertStrategy`]) deciding how a segment takes new keys.
//!
//! Segments are cut by the greedy shrinking cone ([`greedy_pla`], the static
//! [`crate::mem::fiting`]'s segmentation) and each model is re-based to predict ranks from 0
//! within its segment. The segments partition the key space: the B+-tree ([`BTree`]) maps each
//! segment but the last to its exclusive upper bound, the first key of the segment after it,
//! and a key belongs to the segment of the first bound above it (the last segment when there
//! is none). The static index keys its tree by the largest model-space key a segment covers;
//! that needs a key's predecessor, which generic keys (`f64`, strings) do not offer, hence
//! the exclusive bound. Keys below a segment's first entry (inserted later) belong to it too;
//! its model predicts rank 0 for them.
//!
//! When a segment answers [`Insert::Full`], the map takes its entries and the new one and
//! re-segments them with the greedy cone (paper 003 §2's *resegment*): the first new segment
//! keeps the old one's place (and its lower bound), the others are linked after it and their
//! bounds added to the tree, and the last inherits the old upper bound. That is one retrain in
//! [`FitingMap::stats`]. A segment emptied by removes stays, empty, until a retrain of its own
//! (which happens only when it fills up again): the papers leave merging segments open, and
//! an empty segment costs one tree entry.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::key::{check_strictly_sorted, Key};
use crate::map::{BulkLoad, OrderedMap};
use crate::mem::btree::BTree;
use crate::mem::fiting_tree::params::FitingMapParams;
use crate::mem::fiting_tree::range::{Node, Range, NIL};
use crate::mem::fiting_tree::strategy::{Insert, InsertStrategy};
use crate::mem::retrain_stats::RetrainStats;
use crate::model::greedy_pla::greedy_pla;
use crate::model::linear::LinearModel;

/// The updatable FITing-tree with insertion strategy `S`. See the module docs.
pub struct FitingMap<K: Key, V, S: InsertStrategy<K, V>> {
    params: FitingMapParams,
    /// Segment 0 covers the smallest keys and stays first.
    nodes: Vec<Node<S>>,
    /// Exclusive upper bound of every segment but the last -> segment.
    tree: BTree<K, u32>,
    last: u32,
    len: usize,
    stats: RetrainStats,
    _values: PhantomData<fn() -> V>,
}

/// Sorted entries cut into greedy segments: each segment's model (ranks from 0), keys and
/// values. No entries give one empty segment.
type Pieces<K, V> = Vec<(LinearModel, Vec<K>, Vec<V>)>;

fn pieces<K: Key, V>(mut keys: Vec<K>, mut values: Vec<V>, eps: usize) -> Result<Pieces<K, V>> {
    let segments = greedy_pla(&keys, eps)?;
    if segments.is_empty() {
        return Ok(vec![(LinearModel::default(), keys, values)]);
    }
    let mut out = Vec::with_capacity(segments.len());
    for s in segments.iter().rev() {
        let model = LinearModel {
            intercept: s.model.intercept - s.first_rank as f64,
            ..s.model
        };
        out.push((
            model,
            keys.split_off(s.first_rank),
            values.split_off(s.first_rank),
        ));
    }
    out.reverse();
    Ok(out)
}

impl<K: Key, V, S: InsertStrategy<K, V>> FitingMap<K, V, S> {
    /// An empty map (one empty segment); `InvalidParameter` for bad `params`.
    pub fn new(params: FitingMapParams) -> Result<Self> {
        Self::bulk_load(Vec::new(), params)
    }

    /// The map over `entries`, which must have strictly increasing keys. Errors as
    /// [`BulkLoad::load_sorted`].
    pub fn bulk_load(entries: Vec<(K, V)>, params: FitingMapParams) -> Result<Self> {
        params.validate()?;
        let len = entries.len();
        let (keys, values): (Vec<K>, Vec<V>) = entries.into_iter().unzip();
        check_strictly_sorted(&keys)?;
        let pieces = pieces(keys, values, params.eps)?;
        let count = segment_id(pieces.len() - 1)?;
        let bounds: Vec<(K, u32)> = pieces
            .iter()
            .skip(1)
            .enumerate()
            .map(|(i, p)| (p.1[0], i as u32))
            .collect();
        let nodes = pieces
            .into_iter()
            .enumerate()
            .map(|(i, (model, keys, values))| Node {
                segment: S::build(keys, values, model, params.eps, params.reserve),
                next: if i as u32 == count { NIL } else { i as u32 + 1 },
            })
            .collect();
        Ok(FitingMap {
            params,
            nodes,
            tree: BTree::bulk_load(bounds, params.tree)?,
            last: count,
            len,
            stats: RetrainStats::default(),
            _values: PhantomData,
        })
    }

    /// Retrains so far (segments re-segmented), with their time.
    pub fn stats(&self) -> RetrainStats {
        self.stats
    }

    /// The parameters the map was built with.
    pub fn params(&self) -> FitingMapParams {
        self.params
    }

    /// Number of segments, empty ones included.
    pub fn segment_count(&self) -> usize {
        self.nodes.len()
    }

    /// The segment whose key range holds `key`.
    #[inline]
    pub(crate) fn segment_of(&self, key: &K) -> u32 {
        self.tree
            .range((Bound::Excluded(*key), Bound::Unbounded))
            .next()
            .map_or(self.last, |(_, &s)| s)
    }

    /// Re-segments segment `s` with the new entry `(key, value)`, which it has no room for.
    fn retrain(&mut self, s: u32, key: K, value: V) -> Result<()> {
        let start = Instant::now();
        let empty = S::build(Vec::new(), Vec::new(), LinearModel::default(), 0, 0);
        let old = std::mem::replace(&mut self.nodes[s as usize].segment, empty);
        let (mut keys, mut values) = old.into_sorted();
        let at = keys.partition_point(|k| k.key_lt(&key));
        keys.insert(at, key);
        values.insert(at, value);
        let pieces = pieces(keys, values, self.params.eps)?;
        segment_id(self.nodes.len() + pieces.len())?;
        let upper = self
            .tree
            .range((Bound::Excluded(key), Bound::Unbounded))
            .next()
            .map(|(bound, _)| *bound);
        let after = self.nodes[s as usize].next;
        let mut current = s;
        for (i, (model, keys, values)) in pieces.into_iter().enumerate() {
            let lower = keys[0];
            let segment = S::build(keys, values, model, self.params.eps, self.params.reserve);
            if i == 0 {
                self.nodes[s as usize].segment = segment;
                continue;
            }
            let id = self.nodes.len() as u32;
            self.tree.insert(lower, current)?;
            self.nodes[current as usize].next = id;
            self.nodes.push(Node {
                segment,
                next: after,
            });
            current = id;
        }
        match upper {
            Some(bound) if current != s => {
                self.tree.remove(&bound);
                self.tree.insert(bound, current)?;
            }
            None => self.last = current,
            Some(_) => {}
        }
        self.stats.record(start);
        Ok(())
    }
}

/// `i` as a segment id, or `InvalidParameter` when the map would outgrow `u32` ids.
fn segment_id(i: usize) -> Result<u32> {
    u32::try_from(i)
        .ok()
        .filter(|&i| i != NIL)
        .ok_or(Error::InvalidParameter {
            name: "eps",
            value: i.to_string(),
            expected: "an eps large enough for fewer than 2^32 - 1 segments",
        })
}

impl<K: Key, V, S: InsertStrategy<K, V>> BulkLoad<K, V> for FitingMap<K, V, S> {
    type Params = FitingMapParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &FitingMapParams) -> Result<Self> {
        Self::bulk_load(entries, *params)
    }
}

impl<K: Key, V, S: InsertStrategy<K, V>> OrderedMap<K, V> for FitingMap<K, V, S> {
    type Range<'a>
        = Range<'a, K, V, S>
    where
        Self: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        self.nodes[self.segment_of(key) as usize].segment.get(key)
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        let s = self.segment_of(&key);
        match self.nodes[s as usize].segment.insert(key, value) {
            Insert::Replaced(old) => return Ok(Some(old)),
            Insert::Added => {}
            Insert::Full(value) => self.retrain(s, key, value)?,
        }
        self.len += 1;
        Ok(None)
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let s = self.segment_of(key);
        let old = self.nodes[s as usize].segment.remove(key)?;
        self.len -= 1;
        Some(old)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Range<'_, K, V, S> {
        let start = range.start_bound().cloned();
        let first = match &start {
            Bound::Unbounded => 0,
            Bound::Included(k) | Bound::Excluded(k) => self.segment_of(k),
        };
        Range::new(&self.nodes, first, start, range.end_bound().cloned())
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        self.range((Bound::Included(*key), Bound::Unbounded)).next()
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<BTree<K, u32>>()
            + self.tree.size_in_bytes()
            + self.nodes.capacity() * std::mem::size_of::<Node<S>>()
            + self
                .nodes
                .iter()
                .map(|n| n.segment.heap_bytes())
                .sum::<usize>()
    }
}

impl<K: Key, V, S: InsertStrategy<K, V>> std::fmt::Debug for FitingMap<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitingMap")
            .field("params", &self.params)
            .field("len", &self.len)
            .field("segments", &self.nodes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::fiting_tree::{Buffer, Gap, Inplace};
    use proptest::prelude::*;

    /// Segments chained in key order from segment 0 to `last`, each segment's keys inside the
    /// range its tree bounds give it, and the tree holding one bound per segment but the last.
    fn check_partition<S: InsertStrategy<u64, u64>>(map: &FitingMap<u64, u64, S>) {
        let bounds: Vec<(u64, u32)> = map.tree.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(bounds.len() + 1, map.nodes.len());
        let mut s = 0u32;
        let mut lower = None;
        let mut total = 0;
        for (i, &(upper, id)) in bounds.iter().chain([&(u64::MAX, map.last)]).enumerate() {
            assert_eq!(id, s, "segment {i} out of chain order");
            let node = &map.nodes[s as usize];
            let mut c = node.segment.seek(Bound::Unbounded);
            while let Some((k, _)) = node.segment.next(&mut c) {
                assert!(lower.is_none_or(|l| *k >= l), "{k} below its segment");
                assert!(i == bounds.len() || *k < upper, "{k} above its segment");
                total += 1;
            }
            lower = Some(upper);
            s = node.next;
        }
        assert_eq!(s, NIL);
        assert_eq!(total, map.len());
    }

    fn run<S: InsertStrategy<u64, u64>>(
        initial: u64,
        ops: &[(bool, u64)],
        eps: usize,
        reserve: usize,
    ) {
        let entries: Vec<(u64, u64)> = (0..initial).map(|k| (k * k, k)).collect();
        let mut map =
            FitingMap::<u64, u64, S>::bulk_load(entries, FitingMapParams::new(eps, reserve))
                .unwrap();
        check_partition(&map);
        for &(insert, k) in ops {
            if insert {
                map.insert(k, k).unwrap();
            } else {
                map.remove(&k);
            }
            check_partition(&map);
        }
    }

    proptest! {
        #[test]
        fn segments_partition_the_keys(
            initial in 0u64..200,
            ops in proptest::collection::vec((any::<bool>(), 0u64..50_000), 0..300),
            eps in 0usize..8,
            reserve in 0usize..6,
        ) {
            run::<Inplace<u64, u64>>(initial, &ops, eps, reserve);
            run::<Buffer<u64, u64>>(initial, &ops, eps, reserve);
            run::<Gap<u64, u64>>(initial, &ops, eps, reserve);
        }
    }

    #[test]
    fn a_full_segment_retrains_once_per_overflow() {
        // One segment (a line), reserve 4: the fifth new key retrains it.
        let entries: Vec<(u64, u64)> = (0..100).map(|k| (k * 10, k)).collect();
        for reserve in [0usize, 4] {
            let params = FitingMapParams::new(4, reserve);
            let mut inplace =
                FitingMap::<u64, u64, Inplace<u64, u64>>::bulk_load(entries.clone(), params)
                    .unwrap();
            let mut buffer =
                FitingMap::<u64, u64, Buffer<u64, u64>>::bulk_load(entries.clone(), params)
                    .unwrap();
            let mut gap =
                FitingMap::<u64, u64, Gap<u64, u64>>::bulk_load(entries.clone(), params).unwrap();
            assert_eq!(inplace.segment_count(), 1);
            assert_eq!(gap.segment_count(), 1);
            for k in 0..=reserve as u64 {
                assert_eq!(gap.stats().count, 0);
                inplace.insert(k * 10 + 5, 0).unwrap();
                buffer.insert(k * 10 + 5, 0).unwrap();
                gap.insert(k * 10 + 5, 0).unwrap();
            }
            assert_eq!(inplace.stats().count, 1);
            assert_eq!(buffer.stats().count, 1);
            assert_eq!(gap.stats().count, 1);
            assert_eq!(
                inplace.insert(5, 1).unwrap(),
                Some(0),
                "an update never retrains"
            );
            assert_eq!(inplace.stats().count, 1);
        }
        assert!(matches!(
            FitingMap::<u64, u64, Inplace<u64, u64>>::new(FitingMapParams::new(4, 1 << 25)),
            Err(Error::InvalidParameter {
                name: "reserve",
                ..
            })
        ));
    }
}
