//! [`XIndexMap`]: XIndex as a single-threaded [`OrderedMap`] and [`BulkLoad`], so that it runs
//! the shared conformance suite and is reachable by name (`MapSpec` `xindex`).
//!
//! `OrderedMap` hands out references (`get -> Option<&V>`, `range` yielding `(&K, &V)`), while
//! XIndex's values sit in cells that concurrent writers update in place. The view reconciles
//! the two by owning its [`XIndex`] alone: the index is private, never shared, and every write
//! goes through `&mut self`, so while `&self` is borrowed nothing in the index is written,
//! moved or freed, and references into it stay valid for that borrow. That argument is the
//! `SAFETY` of the two `unsafe` blocks below; the trait's shape requires them, not speed.
//! `range` is lazy, one group at a time: it collects the group's records in range (array and
//! buffer merged) and yields them, then moves to the next group.

use std::ops::{Bound, RangeBounds};

use super::cell::ValueCell;
use super::group::{merge_sorted, Group};
use super::index::XIndex;
use super::params::XIndexParams;
use super::root::Root;
use crate::error::Result;
use crate::key::Key;
use crate::map::{BulkLoad, OrderedMap};

/// XIndex behind `&mut self` writes. See the module docs.
#[derive(Debug)]
pub struct XIndexMap<K: Key, V: Copy> {
    index: XIndex<K, V>,
}

/// Extends a borrow of something inside the view's index to the view's own borrow.
///
/// The caller passes a reference reached from `&'a XIndexMap` through the index's shared
/// pointers (root, slot, group, array or buffer).
fn held<'a, T: ?Sized>(r: &T) -> &'a T {
    // SAFETY: `r` points into a root, group, array or buffer that the view's index keeps
    // alive: every pointer from the index to them is only replaced or dropped by a write, and
    // writes need `&mut XIndexMap`, which cannot exist while the `&'a XIndexMap` the caller
    // holds is alive (see the module docs). So `*r` stays where it is, unchanged, for `'a`.
    unsafe { &*(r as *const T) }
}

/// The value of a live cell, for the view's lifetime `'a` (as [`held`]).
fn value_of<'a, V: Copy>(cell: &ValueCell<V>) -> &'a V {
    // SAFETY: as in `held`: no write to the cell can happen while the view is borrowed, so
    // reading the cell's value through a shared reference races with nothing; the cell lives
    // in an array or buffer the index keeps for `'a`.
    unsafe { &*cell.value_ptr() }
}

impl<K: Key, V: Copy + Send + Sync + 'static> XIndexMap<K, V> {
    /// An empty map.
    pub fn new(params: XIndexParams) -> Result<Self> {
        Ok(XIndexMap {
            index: XIndex::new(params)?,
        })
    }

    /// The concurrent index inside, for sharing between threads.
    pub fn into_concurrent(self) -> XIndex<K, V> {
        self.index
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.index.group_count()
    }

    fn root(&self) -> &Root<K, V> {
        held(&**self.index.root())
    }

    fn group<'a>(&'a self, root: &'a Root<K, V>, i: usize) -> &'a Group<K, V> {
        held(&**root.slots[i].group.load())
    }

    /// The live records of group `i` with keys in `[lo, hi)`, in key order.
    fn group_records<'a>(
        &'a self,
        root: &'a Root<K, V>,
        i: usize,
        lo: Bound<&K>,
    ) -> Vec<(&'a K, &'a V)> {
        let group = self.group(root, i);
        let hi = root.pivots.get(i + 1);
        let array = &*group.array;
        let start = match lo {
            Bound::Included(k) => array.lower_bound(k),
            Bound::Excluded(k) => {
                let p = array.lower_bound(k);
                p + usize::from(p < array.len() && array.keys[p].key_cmp(k).is_eq())
            }
            Bound::Unbounded => 0,
        };
        let mut from_array = Vec::new();
        for (k, cell) in array.keys[start..].iter().zip(&array.cells[start..]) {
            if hi.is_some_and(|hi| !k.key_lt(hi)) {
                break;
            }
            if cell.is_live() {
                from_array.push((held(k), value_of(cell)));
            }
        }
        let mut from_buffer = Vec::new();
        for buffer in std::iter::once(&group.buffer).chain(&group.temp) {
            buffer.visit(lo, hi, |k, cell| {
                if cell.is_live() {
                    from_buffer.push((held(k), value_of(cell)));
                }
                true
            });
        }
        from_buffer.sort_by(|a, b| a.0.key_cmp(b.0));
        let mut out = Vec::with_capacity(from_array.len() + from_buffer.len());
        merge_sorted(from_array, from_buffer, usize::MAX, &mut out, |a, b| {
            a.0.key_cmp(b.0)
        });
        out
    }
}

/// The iterator of [`XIndexMap::range`]: group by group, see the module docs.
pub struct XIndexRange<'a, K: Key, V: Copy> {
    map: &'a XIndexMap<K, V>,
    root: &'a Root<K, V>,
    next_group: usize,
    start: Bound<K>,
    end: Bound<K>,
    records: std::vec::IntoIter<(&'a K, &'a V)>,
    done: bool,
}

impl<'a, K: Key, V: Copy + Send + Sync + 'static> Iterator for XIndexRange<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if let Some((k, v)) = self.records.next() {
                let past_end = match &self.end {
                    Bound::Included(e) => e.key_lt(k),
                    Bound::Excluded(e) => !k.key_lt(e),
                    Bound::Unbounded => false,
                };
                if past_end {
                    self.done = true;
                    return None;
                }
                return Some((k, v));
            }
            if self.next_group >= self.root.slots.len() {
                self.done = true;
                return None;
            }
            let i = self.next_group;
            self.next_group += 1;
            let lo = if i == 0 {
                self.start.as_ref()
            } else {
                match &self.start {
                    Bound::Unbounded => Bound::Included(&self.root.pivots[i]),
                    Bound::Included(s) | Bound::Excluded(s) if s.key_lt(&self.root.pivots[i]) => {
                        Bound::Included(&self.root.pivots[i])
                    }
                    bound => bound.as_ref(),
                }
            };
            self.records = self.map.group_records(self.root, i, lo).into_iter();
        }
    }
}

impl<K: Key, V: Copy + Send + Sync + 'static> OrderedMap<K, V> for XIndexMap<K, V> {
    type Range<'a>
        = XIndexRange<'a, K, V>
    where
        Self: 'a,
        K: 'a,
        V: 'a;

    fn get(&self, key: &K) -> Option<&V> {
        let root = self.root();
        let group = self.group(root, root.locate(key));
        if let Some(pos) = group.array.find(key) {
            let cell = &group.array.cells[pos];
            if cell.is_live() {
                return Some(value_of(cell));
            }
        }
        let mut found = None;
        for buffer in std::iter::once(&group.buffer).chain(&group.temp) {
            buffer.visit(Bound::Included(key), None, |k, cell| {
                if k.key_cmp(key).is_eq() && cell.is_live() {
                    found = Some(value_of(cell));
                }
                false
            });
            if found.is_some() {
                break;
            }
        }
        found
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        self.index.insert(key, value)
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        self.index.remove(key)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Self::Range<'_> {
        let start = range.start_bound().cloned();
        let end = range.end_bound().cloned();
        let root = self.root();
        let first = match &start {
            Bound::Included(k) | Bound::Excluded(k) => root.locate(k),
            Bound::Unbounded => 0,
        };
        XIndexRange {
            map: self,
            root,
            next_group: first,
            start,
            end,
            records: Vec::new().into_iter(),
            done: false,
        }
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        self.range((Bound::Included(*key), Bound::Unbounded)).next()
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn size_in_bytes(&self) -> usize {
        self.index.size_in_bytes()
    }
}

impl<K: Key, V: Copy + Send + Sync + 'static> BulkLoad<K, V> for XIndexMap<K, V> {
    type Params = XIndexParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &XIndexParams) -> Result<Self> {
        Ok(XIndexMap {
            index: XIndex::bulk_load(entries, *params)?,
        })
    }
}

impl<K: Key, V: Copy + Send + Sync + 'static> From<XIndex<K, V>> for XIndexMap<K, V> {
    /// The view over an index no other thread uses any more.
    fn from(index: XIndex<K, V>) -> Self {
        XIndexMap { index }
    }
}
