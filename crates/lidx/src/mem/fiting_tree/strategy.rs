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
//! ([`crate::model::greedy_pla`]) to the ranks its entries had then, from 0, within `eps`. A
//! segment knows how far its entries may have moved since (in place: one rank per insert or
//! remove; a buffer's base never moves), so a search reads the window of the prediction
//! widened by that drift, as PGM's last mile does (paper 003 §2: a binary search on
//! `[pred - error, pred + error]`; paper 003 §2's in-place bound `e + ε`). If the answer lands
//! on the window's edge with the key beyond it, a gallop from there finishes the search, so
//! the search stays exact even for a key whose model value is shared (`Str16`).

use std::ops::Bound;

use crate::index::ApproxPos;
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
    /// `model` (rank 0 is the first key) within `eps`, with room for `reserve` more entries.
    fn build(keys: Vec<K>, values: Vec<V>, model: LinearModel, eps: usize, reserve: usize) -> Self;

    /// The value stored under `key`.
    fn get(&self, key: &K) -> Option<&V>;

    /// Stores `value` under `key`; see [`Insert`].
    fn insert(&mut self, key: K, value: V) -> Insert<V>;

    /// Removes `key`, returning its value.
    fn remove(&mut self, key: &K) -> Option<V>;

    /// Number of entries.
    fn len(&self) -> usize;

    /// True when the segment holds no entry.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries in key order, consuming the segment (for a retrain).
    fn into_sorted(self) -> (Vec<K>, Vec<V>);

    /// Heap bytes the segment holds (its own struct is counted by the map).
    fn heap_bytes(&self) -> usize;

    /// A cursor on the first entry after `start`.
    fn seek(&self, start: Bound<&K>) -> Self::Cursor;

    /// The entry at `cursor` (`None` past the last), moving the cursor on.
    fn next<'a>(&'a self, cursor: &mut Self::Cursor) -> Option<(&'a K, &'a V)>;
}

/// Lower bound of `key` in `keys` by the segment's `model`, whose prediction is within `err`
/// of the rank: a branchless search of the window, a gallop if the answer lies beyond it.
#[inline]
pub(crate) fn model_lower_bound<K: Key>(
    model: &LinearModel,
    keys: &[K],
    key: &K,
    err: usize,
) -> usize {
    let w = ApproxPos::from_prediction(model.predict(key.to_model()), err, keys.len());
    let window = &keys[w.lo..w.hi];
    search::prefetch_window(window);
    let at = w.lo + search::branchless_lower_bound(window, *key);
    let left_ok = at > w.lo || at == 0 || keys[at - 1].key_lt(key);
    let right_ok = at < w.hi || at == keys.len() || !keys[at].key_lt(key);
    if left_ok && right_ok {
        at
    } else {
        search::exponential(keys, *key, at)
    }
}

/// The first position of sorted `keys` after `start` (`model` within `err` as above).
pub(crate) fn start_position<K: Key>(
    model: &LinearModel,
    keys: &[K],
    start: Bound<&K>,
    err: usize,
) -> usize {
    match start {
        Bound::Unbounded => 0,
        Bound::Included(k) => model_lower_bound(model, keys, k, err),
        Bound::Excluded(k) => {
            let at = model_lower_bound(model, keys, k, err);
            at + usize::from(at < keys.len() && keys[at].key_cmp(k).is_eq())
        }
    }
}
