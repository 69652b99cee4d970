//! [`Gap`]: the gapped-array insert strategy (paper 001 §IV-D, "ALEX-gap: inplace gap
//! insertion"; §II-A.3 and Fig. 7 on ALEX's inserts) as a third FITing-tree strategy, so that
//! the three strategies of Fig. 18 (a) differ only in how a segment takes a key.
//!
//! A segment is one of ALEX's data nodes ([`crate::mem::alex`]'s `DataNode`, the same code,
//! not a copy) run without ALEX's own policy: `reserve` free slots are spread through the
//! segment when it is (re)built, each key laid out at the slot its model predicts (the
//! segment's greedy model scaled from ranks to `keys + reserve` slots, as ALEX scales a data
//! node's model to its capacity). An insert goes to the predicted slot when it is free and in
//! order, else the keys between it and the nearest free slot move one slot towards that gap;
//! a bitmap marks occupied slots and every gap holds a copy of the next key, so a search is an
//! exponential search from the prediction that never reads the bitmap. The model's error
//! bound `eps` is not needed to search, only to cut segments.
//!
//! Where we differ from ALEX, and why: ALEX grows a node at a density bound (80%) and decides
//! by its cost model whether to expand, retrain or split it; here a segment takes new keys
//! until its last gap is used, then answers [`Insert::Full`] and the FITing-tree re-segments
//! it (one retrain), exactly as a full in-place segment or delta buffer does. Paper 001 says
//! ALEX-gap's reserved space "is automatically generated"; making it `reserve` gap slots lets
//! Fig. 18 (a) and (c) compare the three strategies at equal reserved space and equal inserts
//! per retrain. A remove leaves a gap in its slot (the segment keeps its size), so a segment
//! that lost keys takes as many new ones before it is full.
//!
//! Keys must have injective model images ([`AlexKey`]: not `Str16`) and values `Default` (gap
//! slots hold one), as in ALEX.

use std::mem::size_of;
use std::ops::Bound;

use crate::mem::alex::data_node::DataNode;
use crate::mem::alex::model::LinearModel as SlotModel;
use crate::mem::alex::AlexKey;
use crate::mem::fiting_tree::strategy::{Insert, InsertStrategy};
use crate::model::linear::LinearModel;

/// A segment as a gapped array. See the module docs.
pub struct Gap<K, V> {
    node: DataNode<K, V>,
}

impl<K: AlexKey, V: Default> Gap<K, V> {
    /// Free slots (gaps) left before the segment is full.
    pub fn gaps(&self) -> usize {
        self.node.capacity() - self.node.num_keys
    }
}

impl<K: AlexKey, V: Default> InsertStrategy<K, V> for Gap<K, V> {
    /// The slot of the next entry (the capacity past the last).
    type Cursor = usize;

    fn build(
        keys: Vec<K>,
        values: Vec<V>,
        model: LinearModel,
        _eps: usize,
        reserve: usize,
    ) -> Self {
        let n = keys.len();
        let capacity = (n + reserve).max(1);
        let mut slots = SlotModel {
            a: model.slope,
            b: model.intercept,
            base: model.x0,
        };
        if n > 0 {
            slots.scale(capacity as f64 / n as f64);
        }
        Gap {
            node: DataNode::gapped(n, keys.into_iter().zip(values), slots, capacity),
        }
    }

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        self.node.find(key).map(|at| &self.node.values[at])
    }

    fn insert(&mut self, key: K, value: V) -> Insert<V> {
        match self.node.insert_into_gap(key, value) {
            Ok(Some(old)) => Insert::Replaced(old),
            Ok(None) => Insert::Added,
            Err(value) => Insert::Full(value),
        }
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        self.node.take(key)
    }

    fn len(&self) -> usize {
        self.node.num_keys
    }

    fn into_sorted(mut self) -> (Vec<K>, Vec<V>) {
        self.node.drain()
    }

    fn heap_bytes(&self) -> usize {
        self.node.size_in_bytes() - size_of::<DataNode<K, V>>()
    }

    fn seek(&self, start: Bound<&K>) -> usize {
        let at = match start {
            Bound::Unbounded => self.node.next_occupied(0),
            Bound::Included(k) => self.node.seek(k, false),
            Bound::Excluded(k) => self.node.seek(k, true),
        };
        at.unwrap_or(self.node.capacity())
    }

    #[inline]
    fn next<'a>(&'a self, cursor: &mut usize) -> Option<(&'a K, &'a V)> {
        let at = *cursor;
        if at >= self.node.capacity() {
            return None;
        }
        *cursor = self
            .node
            .next_occupied(at + 1)
            .unwrap_or(self.node.capacity());
        Some((&self.node.keys[at], &self.node.values[at]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn entries(seg: &Gap<u64, u64>) -> Vec<(u64, u64)> {
        let mut c = seg.seek(Bound::Unbounded);
        std::iter::from_fn(|| seg.next(&mut c).map(|(k, v)| (*k, *v))).collect()
    }

    proptest! {
        /// The gapped array keeps its layout (sorted slots, gaps holding the next key, the
        /// bitmap counting the entries), its capacity (`keys + reserve` at build), and refuses
        /// a new key exactly when no gap is left; lookups, seeks and the entries in order match
        /// the reference after every operation.
        #[test]
        fn gaps_fill_in_order_and_run_out(
            initial in proptest::collection::btree_set(0u64..2000, 0..50),
            ops in proptest::collection::vec((any::<bool>(), 0u64..2000), 0..150),
            reserve in 0usize..12,
            slope_percent in 1u32..300,
        ) {
            let keys: Vec<u64> = initial.iter().copied().collect();
            let model = LinearModel {
                x0: keys.first().copied().unwrap_or(0),
                slope: f64::from(slope_percent) / 100.0 * keys.len() as f64 / 2000.0,
                intercept: 0.0,
            };
            let mut seg = Gap::build(keys.clone(), keys.clone(), model, 0, reserve);
            let capacity = (keys.len() + reserve).max(1);
            let mut want: BTreeMap<u64, u64> = keys.iter().map(|k| (*k, *k)).collect();
            for (insert, k) in ops {
                if insert {
                    let gaps = seg.gaps();
                    match seg.insert(k, k + 1) {
                        Insert::Replaced(old) => prop_assert_eq!(Some(old), want.insert(k, k + 1)),
                        Insert::Added => {
                            prop_assert!(gaps > 0);
                            prop_assert_eq!(want.insert(k, k + 1), None);
                        }
                        Insert::Full(v) => {
                            prop_assert!(gaps == 0 && !want.contains_key(&k));
                            prop_assert_eq!(v, k + 1);
                        }
                    }
                } else {
                    prop_assert_eq!(seg.remove(&k), want.remove(&k));
                }
                seg.node.check();
                prop_assert_eq!(seg.node.capacity(), capacity);
                prop_assert_eq!(seg.len() + seg.gaps(), capacity);
                prop_assert_eq!(seg.get(&k), want.get(&k));
                let mut c = seg.seek(Bound::Excluded(&k));
                prop_assert_eq!(
                    seg.next(&mut c).map(|(k, _)| *k),
                    want.range(k + 1..).next().map(|e| *e.0)
                );
                prop_assert_eq!(entries(&seg), want.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
            }
            let (keys, values) = seg.into_sorted();
            prop_assert_eq!(keys, want.keys().copied().collect::<Vec<_>>());
            prop_assert_eq!(values, want.values().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn keys_land_near_their_predicted_slots_with_gaps_between() {
        // 100 keys on a line, 100 gaps: the scaled model puts key i at slot 2i.
        let keys: Vec<u64> = (0..100).map(|k| k * 10).collect();
        let model = LinearModel {
            x0: 0,
            slope: 0.1,
            intercept: 0.0,
        };
        let seg = Gap::build(keys.clone(), keys, model, 0, 100);
        assert_eq!(seg.gaps(), 100);
        assert!((0..100).all(|i| seg.node.is_occupied(2 * i) && !seg.node.is_occupied(2 * i + 1)));
    }
}
