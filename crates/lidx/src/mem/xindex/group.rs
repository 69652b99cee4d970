//! A group node (XIndex §3; paper 001 §II-B4, Fig. 8): a sorted array of records with its
//! models ([`GroupArray`]), the delta buffer for inserts, and during a compaction the temporary
//! buffer that takes inserts instead (the paper's `buffer_temp`).
//!
//! A [`Group`] value is immutable; a compaction publishes a new one in the group's slot. The
//! two-phase compaction (XIndex §4.2): phase 1 freezes the buffer, publishes the group with a
//! temporary buffer, merges the array and the frozen buffer into a new array whose records
//! forward to the old cells ([`merge`]), and publishes the group over the new array with the
//! temporary buffer as its buffer; phase 2 ([`GroupArray::settle`]) copies the final values
//! into the new array and seals the old cells (see `cell.rs`).

use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;

use super::buffer::{DeltaBuffer, Inserted};
use super::cell::{Op, Outcome, ValueCell};
use super::model::GroupModels;
use crate::key::Key;
use crate::search;

/// Where a forwarded record's value lives until phase 2.
pub(crate) enum Source<V> {
    /// Position `pos` of the old array `arrays[array]`.
    Array { array: usize, pos: usize },
    /// A record of a frozen buffer.
    Buffer(Arc<ValueCell<V>>),
}

/// The old cells a new array forwards to, by position.
pub(crate) struct Forwarding<K, V> {
    arrays: Vec<Arc<GroupArray<K, V>>>,
    sources: Vec<Source<V>>,
}

impl<K: Key, V: Copy> Forwarding<K, V> {
    fn cell(&self, pos: usize) -> Option<&ValueCell<V>> {
        match self.sources.get(pos)? {
            Source::Array { array, pos } => Some(&self.arrays[*array].cells[*pos]),
            Source::Buffer(cell) => Some(cell),
        }
    }
}

/// A group's sorted array: keys, value cells and models.
pub(crate) struct GroupArray<K, V> {
    pub(crate) keys: Box<[K]>,
    pub(crate) cells: Box<[ValueCell<V>]>,
    pub(crate) models: GroupModels<K>,
    forwarding: ArcSwapOption<Forwarding<K, V>>,
    /// Records removed since the array was built: a compaction trigger.
    pub(crate) removed: AtomicUsize,
}

impl<K: Key, V: Copy> GroupArray<K, V> {
    /// An array of live records.
    pub(crate) fn new(entries: &[(K, V)], error_bound: f64) -> Self {
        let keys: Box<[K]> = entries.iter().map(|e| e.0).collect();
        GroupArray {
            models: GroupModels::fit(&keys, error_bound),
            cells: entries.iter().map(|e| ValueCell::live(e.1)).collect(),
            keys,
            forwarding: ArcSwapOption::empty(),
            removed: AtomicUsize::new(0),
        }
    }

    fn forwarded(merged: Merged<K, V>, arrays: Vec<Arc<Self>>, error_bound: f64) -> Self {
        let keys: Box<[K]> = merged.keys.into();
        GroupArray {
            models: GroupModels::fit(&keys, error_bound),
            cells: merged
                .values
                .into_iter()
                .map(ValueCell::forwarded)
                .collect(),
            keys,
            forwarding: ArcSwapOption::from_pointee(Forwarding {
                arrays,
                sources: merged.sources,
            }),
            removed: AtomicUsize::new(0),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// First position whose key is `>= key`.
    #[inline]
    pub(crate) fn lower_bound(&self, key: &K) -> usize {
        search::exponential(&self.keys, *key, self.models.predict(key))
    }

    /// Position of `key`, live or not.
    #[inline]
    pub(crate) fn find(&self, key: &K) -> Option<usize> {
        let pos = self.lower_bound(key);
        (pos < self.keys.len() && self.keys[pos].key_cmp(key).is_eq()).then_some(pos)
    }

    /// The live value at `pos`, following a forward.
    #[inline]
    pub(crate) fn read(&self, pos: usize) -> Option<V> {
        let cell = &self.cells[pos];
        loop {
            match cell.read() {
                super::cell::CellRead::Live(v) => return Some(v),
                super::cell::CellRead::Removed => return None,
                super::cell::CellRead::Forwarded => {
                    // `None` only after phase 2 settled the cell: read it again.
                    if let Some(f) = &*self.forwarding.load() {
                        return f.cell(pos).and_then(|c| c.read().live());
                    }
                }
            }
        }
    }

    fn write(&self, pos: usize, op: Op<V>) -> Outcome<V> {
        self.cells[pos].write(op, |op| match &*self.forwarding.load() {
            Some(f) => f
                .cell(pos)
                .map_or(Outcome::Retry, |c| c.write(op, |_| Outcome::Retry)),
            None => Outcome::Retry,
        })
    }

    /// Phase 2: settles every forwarded record and drops the forwarding.
    pub(crate) fn settle(&self) {
        if let Some(f) = self.forwarding.load_full() {
            for (pos, cell) in self.cells.iter().enumerate() {
                if let Some(source) = f.cell(pos) {
                    cell.settle(source);
                }
            }
            self.forwarding.store(None);
        }
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + GroupModels::<K>::size_in_bytes()
            + self.keys.len() * (K::SIZE + std::mem::size_of::<ValueCell<V>>())
    }
}

/// What a write to a group did.
pub(crate) enum GroupWrite<V> {
    /// Applied; `previous` is the value replaced or removed.
    Done {
        previous: Option<V>,
        /// The group wants maintenance (its buffer or its removed records passed the bound).
        maintain: bool,
    },
    /// The record or buffer moved on: retry from the root.
    Retry,
}

/// A group: array, buffer and, while compacting, the temporary buffer.
pub(crate) struct Group<K, V> {
    pub(crate) array: Arc<GroupArray<K, V>>,
    pub(crate) buffer: Arc<DeltaBuffer<K, V>>,
    pub(crate) temp: Option<Arc<DeltaBuffer<K, V>>>,
}

impl<K: Key, V: Copy> Group<K, V> {
    pub(crate) fn new(array: Arc<GroupArray<K, V>>, buffer: Arc<DeltaBuffer<K, V>>) -> Self {
        Group {
            array,
            buffer,
            temp: None,
        }
    }

    /// The same group taking inserts into `temp` (phase 1).
    pub(crate) fn with_temp(&self, temp: Arc<DeltaBuffer<K, V>>) -> Self {
        Group {
            array: Arc::clone(&self.array),
            buffer: Arc::clone(&self.buffer),
            temp: Some(temp),
        }
    }

    /// The live value of `key`: array, then buffer, then temporary buffer.
    #[inline]
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        if let Some(v) = self.array.find(key).and_then(|pos| self.array.read(pos)) {
            return Some(v);
        }
        self.buffer
            .get(key)
            .or_else(|| self.temp.as_ref().and_then(|t| t.get(key)))
    }

    /// Applies `op` to `key` (XIndex §4.1: update in place, else insert into the buffer, or
    /// into the temporary buffer while the buffer is frozen).
    pub(crate) fn write(&self, key: &K, op: Op<V>, bound: usize) -> GroupWrite<V> {
        if let Some(pos) = self.array.find(key) {
            match self.array.write(pos, op) {
                Outcome::Replaced(old) => {
                    let mut maintain = false;
                    if matches!(op, Op::Remove) {
                        maintain = self.array.removed.fetch_add(1, Ordering::Relaxed) + 1 >= bound;
                    }
                    return GroupWrite::Done {
                        previous: Some(old),
                        maintain,
                    };
                }
                Outcome::Retry => return GroupWrite::Retry,
                Outcome::Absent => {}
            }
        }
        let inserted = |buffer: &DeltaBuffer<K, V>, value: V| match buffer.insert(*key, value) {
            Inserted::Frozen => GroupWrite::Retry,
            Inserted::Done { previous, len } => GroupWrite::Done {
                previous,
                maintain: len > bound,
            },
        };
        match (op, &self.temp) {
            (Op::Put(v), None) => inserted(&self.buffer, v),
            (Op::Put(v), Some(temp)) => match self.buffer.write_existing(key, op) {
                Outcome::Replaced(old) => GroupWrite::Done {
                    previous: Some(old),
                    maintain: false,
                },
                Outcome::Retry => GroupWrite::Retry,
                Outcome::Absent => inserted(temp, v),
            },
            (Op::Remove, temp) => {
                for buffer in std::iter::once(&self.buffer).chain(temp) {
                    match buffer.write_existing(key, op) {
                        Outcome::Replaced(old) => {
                            return GroupWrite::Done {
                                previous: Some(old),
                                maintain: false,
                            }
                        }
                        Outcome::Retry => return GroupWrite::Retry,
                        Outcome::Absent => {}
                    }
                }
                GroupWrite::Done {
                    previous: None,
                    maintain: false,
                }
            }
        }
    }

    /// Appends to `out` up to `limit` live records with keys in `[from, to)`, in key order.
    pub(crate) fn collect(&self, from: &K, to: Option<&K>, limit: usize, out: &mut Vec<(K, V)>) {
        let mut from_array = Vec::new();
        let mut pos = self.array.lower_bound(from);
        while from_array.len() < limit && pos < self.array.len() {
            let k = self.array.keys[pos];
            if to.is_some_and(|to| !k.key_lt(to)) {
                break;
            }
            if let Some(v) = self.array.read(pos) {
                from_array.push((k, v));
            }
            pos += 1;
        }
        let mut from_buffers = Vec::new();
        for buffer in std::iter::once(&self.buffer).chain(&self.temp) {
            let mut taken = 0;
            buffer.visit(Bound::Included(from), to, |k, cell| {
                if let Some(v) = cell.read().live() {
                    from_buffers.push((*k, v));
                    taken += 1;
                }
                taken < limit
            });
        }
        // A key removed from the array (or the buffer) and inserted again into the buffer (or
        // the temporary buffer) while this scan ran is seen in both: keep the value read last,
        // which was current later. The stable sort keeps the buffer's before the temporary's.
        from_buffers.sort_by(|a, b| a.0.key_cmp(&b.0));
        from_buffers.dedup_by(|later, earlier| {
            let same = later.0.key_cmp(&earlier.0).is_eq();
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        merge_sorted(from_array, from_buffers, limit, out, |a, b| {
            a.0.key_cmp(&b.0)
        });
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.array.size_in_bytes()
            + self.buffer.size_in_bytes()
            + self.temp.as_ref().map_or(0, |t| t.size_in_bytes())
    }
}

/// Appends the first `limit` items of the merge of sorted `a` and `b` (each without repeats)
/// to `out`; where both hold an item that compares equal, `b`'s is taken and `a`'s dropped.
pub(crate) fn merge_sorted<T>(
    a: Vec<T>,
    b: Vec<T>,
    limit: usize,
    out: &mut Vec<T>,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    for _ in 0..limit {
        let order = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp(x, y),
            (Some(_), None) => Less,
            (None, Some(_)) => Greater,
            (None, None) => break,
        };
        if order == Equal {
            a.next();
        }
        out.extend(if order == Less { a.next() } else { b.next() });
    }
}

/// Phase 1's merged records: keys, the values seen, and where each value lives.
pub(crate) struct Merged<K, V> {
    keys: Vec<K>,
    values: Vec<V>,
    sources: Vec<Source<V>>,
}

impl<K: Key, V: Copy> Merged<K, V> {
    /// Splits off the records from `at` on.
    fn split_off(&mut self, at: usize) -> Merged<K, V> {
        Merged {
            keys: self.keys.split_off(at),
            values: self.values.split_off(at),
            sources: self.sources.split_off(at),
        }
    }
}

/// Phase 1 of a compaction of `groups` (adjacent, in key order, their buffers frozen): their
/// live records merged in key order.
pub(crate) fn merge<K: Key, V: Copy>(groups: &[&Group<K, V>]) -> Merged<K, V> {
    let mut merged = Merged {
        keys: Vec::new(),
        values: Vec::new(),
        sources: Vec::new(),
    };
    for (g, group) in groups.iter().enumerate() {
        let array = &group.array;
        let mut buffered = group.buffer.live_records().into_iter().peekable();
        let mut push = |k: K, v: V, s: Source<V>| {
            merged.keys.push(k);
            merged.values.push(v);
            merged.sources.push(s);
        };
        for (pos, key) in array.keys.iter().enumerate() {
            while let Some((k, cell, v)) = buffered.next_if(|b| b.0.key_lt(key)) {
                push(k, v, Source::Buffer(cell));
            }
            if let Some(v) = array.read(pos) {
                push(*key, v, Source::Array { array: g, pos });
            }
        }
        for (k, cell, v) in buffered {
            push(k, v, Source::Buffer(cell));
        }
    }
    merged
}

/// Builds the forwarded arrays of a phase 1: one per cut, `cuts` being the keys where a new
/// group starts (none for a compaction, one for a split).
pub(crate) fn build_arrays<K: Key, V: Copy>(
    mut merged: Merged<K, V>,
    groups: &[&Group<K, V>],
    cuts: &[K],
    error_bound: f64,
) -> Vec<Arc<GroupArray<K, V>>> {
    let arrays: Vec<_> = groups.iter().map(|g| Arc::clone(&g.array)).collect();
    let mut parts = Vec::new();
    for cut in cuts.iter().rev() {
        let at = merged.keys.partition_point(|k| k.key_lt(cut));
        parts.push(merged.split_off(at));
    }
    parts.push(merged);
    parts
        .into_iter()
        .rev()
        .map(|part| Arc::new(GroupArray::forwarded(part, arrays.clone(), error_bound)))
        .collect()
}
