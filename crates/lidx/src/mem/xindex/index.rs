//! [`XIndex`]: the concurrent index (XIndex, Tang et al., PPoPP 2020; paper 001 §II-B4 and
//! Table I, the only learned index there with concurrent writes): lookups, inserts, updates,
//! removes and scans from any number of threads through `&self`.
//!
//! An operation loads the root, finds the group, loads the group from its slot and works on
//! it (see `group.rs`); a write that finds a record or buffer that moved on retries from the
//! root. Memory is reclaimed by reference counts (`arc-swap`): an old group or root lives
//! until the last operation that loaded it returns.
//!
//! Structure updates (XIndex §4.3): a write that leaves its group's buffer over
//! `buffer_size`, or its array with `buffer_size` removed records, maintains that group:
//! - a **compaction** (two-phase, `group.rs`) merges the buffer into a new array while other
//!   writers go on into the temporary buffer;
//! - a **group split** when the group has grown past `4 * group_size` records or its models
//!   still miss the error bound with the most models: the same two phases, with the temporary
//!   buffer split in two and a new root holding both halves published before the merge;
//! - a **group merge** after a compaction caused by removals, when the group and its right
//!   neighbour fit in `2 * group_size` records and both fit one model well (mean error within
//!   `error_bound / 4`, the paper's tolerance). Writers that need to add a record to either
//!   group wait (retry) during this merge's phase 1; updates and removes go on.
//!
//! What we do differently: the paper runs these in background threads that sweep every group
//! once a round; here the writer that crosses the bound does it, after its own write, and
//! one at a time (a lock taken with `try_lock`: a writer that finds maintenance in progress
//! simply returns, and its group is maintained at a later write). No background thread, no
//! registration of worker threads, and a single-threaded user sees a deterministic structure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use super::buffer::DeltaBuffer;
use super::cell::Op;
use super::group::{build_arrays, merge, Group, GroupArray, GroupWrite};
use super::model::MAX_MODELS;
use super::params::XIndexParams;
use super::root::{Root, Slot};
use crate::error::{Error, Result};
use crate::key::{check_next, Key};

/// The paper's `group_error_tolerance`: a group is merged only when its error is within
/// `error_bound / MERGE_TOLERANCE`.
const MERGE_TOLERANCE: f64 = 4.0;

/// Structure updates an index has made since it was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XIndexStats {
    /// Two-phase compactions of one group.
    pub compactions: usize,
    /// Group splits (each also a compaction, not counted above).
    pub splits: usize,
    /// Merges of two neighbouring groups.
    pub merges: usize,
}

/// A concurrent learned index from `K` to `V`. See the module docs.
pub struct XIndex<K: Key, V: Copy> {
    root: ArcSwap<Root<K, V>>,
    len: AtomicUsize,
    maintenance: Mutex<XIndexStats>,
    params: XIndexParams,
}

impl<K: Key, V: Copy + Send + Sync + 'static> XIndex<K, V> {
    /// An empty index.
    pub fn new(params: XIndexParams) -> Result<Self> {
        Self::bulk_load(Vec::new(), params)
    }

    /// Builds the index from `entries` in strictly increasing key order: groups of
    /// `group_size` records, halved where their models miss the error bound.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidKey`] (NaN),
    /// [`Error::InvalidParameter`].
    pub fn bulk_load(entries: Vec<(K, V)>, params: XIndexParams) -> Result<Self> {
        params.validate()?;
        for (i, (k, _)) in entries.iter().enumerate() {
            check_next(i, i.checked_sub(1).map(|p| &entries[p].0), k, true)?;
        }
        let bound = params.error_bound as f64;
        let mut groups = Vec::new();
        for chunk in entries.chunks(params.group_size) {
            Self::build_groups(chunk, bound, &mut groups);
        }
        if groups.is_empty() {
            groups.push((K::MIN, Arc::new(GroupArray::new(&[], bound))));
        }
        let (pivots, slots) = groups
            .into_iter()
            .map(|(pivot, array)| {
                let buffer = Arc::new(DeltaBuffer::new());
                (pivot, Slot::new(Group::new(array, buffer)))
            })
            .unzip();
        Ok(XIndex {
            root: ArcSwap::from_pointee(Root::new(pivots, slots, params.root_error_bound as f64)),
            len: AtomicUsize::new(entries.len()),
            maintenance: Mutex::new(XIndexStats::default()),
            params,
        })
    }

    /// One group for `entries`, or halves of it while the models miss the bound.
    fn build_groups(entries: &[(K, V)], bound: f64, out: &mut Vec<(K, Arc<GroupArray<K, V>>)>) {
        let array = GroupArray::new(entries, bound);
        if entries.len() >= 2
            && array.models.count() == MAX_MODELS
            && array.models.mean_error > bound
        {
            let (left, right) = entries.split_at(entries.len() / 2);
            Self::build_groups(left, bound, out);
            Self::build_groups(right, bound, out);
        } else {
            out.push((entries[0].0, Arc::new(array)));
        }
    }

    /// The parameters.
    pub fn params(&self) -> &XIndexParams {
        &self.params
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: &K) -> Option<V> {
        let root = self.root.load();
        let group = root.slots[root.locate(key)].group.load();
        group.get(key)
    }

    /// Stores `value` under `key`, returning the value it replaces; a NaN key is
    /// [`Error::InvalidKey`].
    pub fn insert(&self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        let previous = self.write(&key, Op::Put(value));
        if previous.is_none() {
            self.len.fetch_add(1, Ordering::Relaxed);
        }
        Ok(previous)
    }

    /// Removes `key`, returning its value (`None`: it was absent, nothing changed).
    pub fn remove(&self, key: &K) -> Option<V> {
        let previous = self.write(key, Op::Remove);
        if previous.is_some() {
            self.len.fetch_sub(1, Ordering::Relaxed);
        }
        previous
    }

    fn write(&self, key: &K, op: Op<V>) -> Option<V> {
        let mut attempts = 0u32;
        loop {
            let outcome = {
                let root = self.root.load();
                let group = root.slots[root.locate(key)].group.load();
                group.write(key, op, self.params.buffer_size)
            };
            match outcome {
                GroupWrite::Done { previous, maintain } => {
                    if maintain {
                        self.maintain(key);
                    }
                    return previous;
                }
                GroupWrite::Retry => {
                    attempts += 1;
                    if attempts < 64 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }

    /// The first entry whose key is `>= key`.
    pub fn lower_bound(&self, key: &K) -> Option<(K, V)> {
        let mut out = Vec::with_capacity(1);
        self.scan(key, 1, &mut out);
        out.pop()
    }

    /// Appends to `out` up to `limit` entries with keys `>= from`, in key order. Each value is
    /// one that was current during the call; records written meanwhile may or may not appear
    /// (a scan is not a snapshot, as in the paper).
    pub fn scan(&self, from: &K, limit: usize, out: &mut Vec<(K, V)>) {
        let root = self.root.load_full();
        let target = out.len().saturating_add(limit);
        let mut i = root.locate(from);
        while out.len() < target && i < root.slots.len() {
            let group = root.slots[i].group.load_full();
            let lo = if i == 0 || root.pivots[i].key_lt(from) {
                from
            } else {
                &root.pivots[i]
            };
            group.collect(lo, root.pivots.get(i + 1), target - out.len(), out);
            i += 1;
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// True when the index holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.root.load().slots.len()
    }

    /// Bytes held: root, groups (arrays, models, buffers).
    pub fn size_in_bytes(&self) -> usize {
        let root = self.root.load_full();
        std::mem::size_of::<Self>()
            + root.size_in_bytes()
            + root
                .slots
                .iter()
                .map(|s| s.group.load().size_in_bytes())
                .sum::<usize>()
    }

    /// Structure updates so far (waits for one in progress to finish).
    pub fn stats(&self) -> XIndexStats {
        *self.maintenance.lock()
    }

    /// The root, for the single-threaded view.
    pub(crate) fn root(&self) -> arc_swap::Guard<Arc<Root<K, V>>> {
        self.root.load()
    }

    /// Maintains the group that holds `key` if it still needs it (see the module docs).
    fn maintain(&self, key: &K) {
        let Some(mut stats) = self.maintenance.try_lock() else {
            return;
        };
        let p = &self.params;
        let root = self.root.load_full();
        let i = root.locate(key);
        let group = root.slots[i].group.load_full();
        let overflow = group.buffer.len() > p.buffer_size;
        let removals = group.array.removed.load(Ordering::Relaxed) >= p.buffer_size;
        if !overflow && !removals {
            return;
        }
        let records = group.array.len() + group.buffer.len();
        let misfit = group.array.models.count() == MAX_MODELS
            && group.array.models.mean_error > p.error_bound as f64;
        if overflow && (records > p.max_group() || misfit) {
            if let Some(cut) = self.split_key(&root, i, &group) {
                self.split(&root, i, &group, cut);
                stats.splits += 1;
                return;
            }
        }
        self.compact(&root.slots[i], &group);
        stats.compactions += 1;
        if removals && self.merge_neighbours(key) {
            stats.merges += 1;
        }
    }

    /// Two-phase compaction of one group.
    fn compact(&self, slot: &Slot<K, V>, group: &Group<K, V>) {
        let temp = Arc::new(DeltaBuffer::new());
        group.buffer.freeze();
        slot.group
            .store(Arc::new(group.with_temp(Arc::clone(&temp))));
        let merged = merge(&[group]);
        let array = build_arrays(merged, &[group], &[], self.params.error_bound as f64)
            .pop()
            .unwrap_or_else(|| Arc::new(GroupArray::new(&[], self.params.error_bound as f64)));
        slot.group
            .store(Arc::new(Group::new(Arc::clone(&array), temp)));
        array.settle();
    }

    /// A key strictly inside group `i`'s range to split it at: the middle of its array, or of
    /// its buffer when the array is too small.
    fn split_key(&self, root: &Root<K, V>, i: usize, group: &Group<K, V>) -> Option<K> {
        let above_pivot = |k: &K| root.pivots[i].key_lt(k);
        let keys = &group.array.keys;
        let mut candidates = Vec::new();
        if keys.len() >= 2 {
            candidates.push(keys[keys.len() / 2]);
        }
        let buffered = group.buffer.live_records();
        if buffered.len() >= 2 {
            candidates.push(buffered[buffered.len() / 2].0);
        }
        candidates.into_iter().find(above_pivot)
    }

    /// Two-phase split of group `i` at `cut`: a root with both halves (each taking inserts into
    /// its own temporary buffer) is published before the merge.
    fn split(&self, root: &Root<K, V>, i: usize, group: &Group<K, V>, cut: K) {
        let bound = self.params.error_bound as f64;
        let temps = [Arc::new(DeltaBuffer::new()), Arc::new(DeltaBuffer::new())];
        group.buffer.freeze();
        let halves = [
            Slot::new(group.with_temp(Arc::clone(&temps[0]))),
            Slot::new(group.with_temp(Arc::clone(&temps[1]))),
        ];
        let replacement = vec![
            (root.pivots[i], Arc::clone(&halves[0])),
            (cut, Arc::clone(&halves[1])),
        ];
        self.root.store(Arc::new(root.replace(
            i..i + 1,
            replacement,
            self.params.root_error_bound as f64,
        )));
        let arrays = build_arrays(merge(&[group]), &[group], &[cut], bound);
        for ((slot, temp), array) in halves.iter().zip(temps).zip(&arrays) {
            slot.group
                .store(Arc::new(Group::new(Arc::clone(array), temp)));
        }
        for array in &arrays {
            array.settle();
        }
    }

    /// Merges the group holding `key` with its left or else its right neighbour when both are
    /// small and fit one model well; true when it did.
    fn merge_neighbours(&self, key: &K) -> bool {
        let p = &self.params;
        let root = self.root.load_full();
        let at = root.locate(key);
        let fits = |g: &Group<K, V>| {
            g.array.models.count() == 1
                && g.array.models.mean_error <= p.error_bound as f64 / MERGE_TOLERANCE
        };
        let pair = [at.checked_sub(1), Some(at)]
            .into_iter()
            .flatten()
            .find_map(|i| {
                let left = root.slots.get(i)?.group.load_full();
                let right = root.slots.get(i + 1)?.group.load_full();
                let records =
                    left.array.len() + left.buffer.len() + right.array.len() + right.buffer.len();
                (records <= 2 * p.group_size && fits(&left) && fits(&right))
                    .then_some((i, left, right))
            });
        let Some((i, left, right)) = pair else {
            return false;
        };
        left.buffer.freeze();
        right.buffer.freeze();
        let groups = [&*left, &*right];
        let array = build_arrays(merge(&groups), &groups, &[], p.error_bound as f64)
            .pop()
            .unwrap_or_else(|| Arc::new(GroupArray::new(&[], p.error_bound as f64)));
        let slot = Slot::new(Group::new(Arc::clone(&array), Arc::new(DeltaBuffer::new())));
        self.root.store(Arc::new(root.replace(
            i..i + 2,
            vec![(root.pivots[i], slot)],
            p.root_error_bound as f64,
        )));
        array.settle();
        true
    }
}

impl<K: Key, V: Copy> std::fmt::Debug for XIndex<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XIndex")
            .field("len", &self.len.load(Ordering::Relaxed))
            .field("groups", &self.root.load().slots.len())
            .field("params", &self.params)
            .finish()
    }
}
