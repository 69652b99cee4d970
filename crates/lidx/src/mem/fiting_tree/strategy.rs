//! [`InsertStrategy`]: what a FITing-tree segment does with a new key — the insertion-strategy
//! dimension of paper 001 §IV-D, as a trait the map is assembled from.
//!
//! Paper 001 §II-B.1 and paper 003 §2 describe the FITing-tree's two strategies: *in place*
//! (empty slots reserved at both ends of each segment, keys shifted toward the nearer end to
//! open a slot; a full segment is re-segmented) and *delta* or *buffer* (a sorted buffer per
//! segment, merged with the segment and re-segmented when full). [`super::Inplace`] and
//! [`super::Buffer`] implement them; [`super::FitingMap`] locates the segment, hands it the
//! operation, and re-segments (retrains) when the segment answers [`Insert::Full`]. A segment
//! holds each key at most once (an insert of a present key updates it in place), so the map
//! never resolves versions.
//!
//! Every segment keeps its model from the last retrain: the line fitted by the greedy cone
//! ([`crate::model::greedy_pla`]) to the ranks its entries had then, from 0. Inserts and
//! removes since then move ranks by at most their count, so a search starts at the prediction
//! and gallops ([`crate::search::exponential`]): exact whatever the drift, `O(log(eps +
//! drift))` comparisons. The paper's window of `eps + reserve` would be the same bound made
//! explicit; the gallop needs no bound to stay correct.

use std::ops::Bound;

use crate::key::Key;
use crate::model::linear::LinearModel;
use crate::search;

/// A segment's answer to an insert of a key it may not hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Insert<V> {
    /// The key was present: its value was replaced, here is the old one.
    Replaced(V),
    /// The key was absent and is now stored.
    Added,
    /// The key is absent and the segment has no room: nothing was stored, the value comes back
    /// so the map can re-segment with it.
    Full(V),
}

/// How a FITing-tree segment stores its entries and takes new ones. See the module docs.
pub trait InsertStrategy<K: Key, V>: Sized {
    /// Position in a segment's entries, for [`InsertStrategy::next`].
    type Cursor: Copy;

    /// A segment over `keys` (sorted, distinct) and their `values`, predicting ranks with
    /// `model` (rank 0 is the first key), with room for `reserve` more entries.
    fn build(keys: Vec<K>, values: Vec<V>, model: LinearModel, reserve: usize) -> Self;

    /// The value stored under `key`.
    fn get(&self, key: &K) -> Option<&V>;

    /// Stores `value` under `key`; see [`Insert`].
    fn insert(&mut self, key: K, value: V) -> Insert<V>;

    /// Removes `key`, returning its value.
    fn remove(&mut self, key: &K) -> Option<V>;

    /// Number of entries.
    fn len(&self) -> usize;

    /// The entries in key order, consuming the segment (for a retrain).
    fn into_sorted(self) -> (Vec<K>, Vec<V>);

    /// Heap bytes the segment holds (its own struct is counted by the map).
    fn heap_bytes(&self) -> usize;

    /// A cursor on the first entry after `start`.
    fn seek(&self, start: Bound<&K>) -> Self::Cursor;

    /// The entry at `cursor` (`None` past the last), moving the cursor on.
    fn next<'a>(&'a self, cursor: &mut Self::Cursor) -> Option<(&'a K, &'a V)>;
}

/// Lower bound of `key` in `keys` by the segment's `model`: its prediction, then a gallop.
#[inline]
pub(crate) fn model_lower_bound<K: Key>(model: &LinearModel, keys: &[K], key: &K) -> usize {
    let hint = model.predict(key.to_model()) as usize;
    search::exponential(keys, *key, hint)
}

/// The first position of sorted `keys` after `start`.
pub(crate) fn start_position<K: Key>(model: &LinearModel, keys: &[K], start: Bound<&K>) -> usize {
    match start {
        Bound::Unbounded => 0,
        Bound::Included(k) => model_lower_bound(model, keys, k),
        Bound::Excluded(k) => {
            let at = model_lower_bound(model, keys, k);
            at + usize::from(at < keys.len() && keys[at].key_cmp(k).is_eq())
        }
    }
}
