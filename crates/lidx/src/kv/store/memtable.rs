//! The hybrid engine's dynamic stage over byte keys: versions of keys in one byte arena,
//! ordered by two sorted runs of offsets, so a snapshot reads the newest version at or below
//! its sequence number while writes go on.
//!
//! Paper 002 §9.1 uses a B+-tree of `u64` keys; its memory per entry decides how many writes
//! fit the memory budget between merges, so ours keeps entries packed: a write appends
//! `varint seq | varint key length | varint (value length + 1, or 0 for a tombstone) | key |
//! value` to the arena (the sequence number zigzag-coded relative to the stage's first, so
//! 1-3 bytes: writers of several threads may apply in a slightly different order than their
//! numbers) and its offset (5 bytes) with its key's first eight bytes (8 bytes, the
//! **prefix**) to the **recent** run, kept sorted; when that run reaches `max(1024,
//! sqrt(2n))` offsets it is merged into the **main** run (while the main run holds 16K
//! offsets or more, each recent offset keeps beside it where its key goes in the main run,
//! found by its write's search, so the merge moves the main run between those places without
//! searching again). An 8-byte key with an 8-byte value costs 32-34 bytes where a
//! `BTreeMap<Box<[u8]>, _>` costs about 150 (the typed hybrid index's B+-tree about 48 and its
//! sorted runs 20, key, slot and payload, with no version kept), and a lookup is two binary
//! searches of the prefixes, which read the arena only among entries whose prefix is the
//! key's. Keys written in order (a load) skip both: a key above the largest held is appended,
//! and a merge of the runs whose recent keys all lie above the main run's is an append.
//! Both runs order entries by key, then newest first (sequence number, then arena offset: of
//! two operations on a key in one batch, the later wins).
//!
//! **Why the prefixes** (session 69): the arena holds entries in write order, so each probe of
//! a search of the main run by offsets alone is a cache miss (and, in a memtable of tens of
//! MB, a TLB miss): over 1M random inserts at equal memory the main run's search was 14% of
//! the samples of the whole `lidx ycsb` run and a quarter of the writing thread's (`perf`).
//! The prefixes of a 170K-entry main run are 1.4 MB, searched like an array of `u64`. Eight
//! bytes an entry is 7% of an entry with a 100-byte value and a quarter of one with an 8-byte
//! key and value.
//!
//! A write does not remove older versions of its key: they stay until a merge of the runs
//! drops those no reader needs (older than the newest version at or below `keep`, the oldest
//! live snapshot or what is visible now), and their arena bytes stay until the stage is
//! merged into the table. So rewriting the same keys fills the budget as new keys do.

use std::cmp::Ordering;
use std::ops::{Bound, Range};

use crate::codec::{get_varint, put_varint, varint_bytes};
use crate::key::cmp_bytes;
use crate::kv::wal::Seq;

/// An arena offset in 5 bytes (the arena stays below 1 TiB: the memory budget is at most
/// [`super::options::MAX_MEMORY_BUDGET`]); 3 bytes an entry less than a `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Off([u8; OFF_BYTES]);

const OFF_BYTES: usize = 5;

impl Off {
    fn new(at: usize) -> Off {
        let at = at as u64;
        assert!(at >> (8 * OFF_BYTES) == 0, "a dynamic stage of over 1 TiB");
        let b = at.to_le_bytes();
        Off([b[0], b[1], b[2], b[3], b[4]])
    }

    #[inline]
    fn get(self) -> u64 {
        let [a, b, c, d, e] = self.0;
        u64::from_le_bytes([a, b, c, d, e, 0, 0, 0])
    }
}

/// A key's first eight bytes, big-endian, zero-padded. Of two keys `a < b`, `prefix(a) <=
/// prefix(b)` (they differ in a byte among the first eight, or their first eight are equal, or
/// `a` is a prefix of `b` and pads with zeros), so a run's prefixes are sorted as its keys and
/// an entry whose prefix differs from a key's is on that side of the key.
#[inline]
fn prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// A sorted run: arena offsets and, beside each, its key's [`prefix`].
#[derive(Default)]
struct Run {
    offs: Vec<Off>,
    pre: Vec<u64>,
}

impl Run {
    fn len(&self) -> usize {
        self.offs.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.offs.is_empty()
    }

    /// Entries the run holds without growing.
    fn capacity(&self) -> usize {
        self.offs.capacity()
    }

    fn memory_bytes(&self) -> usize {
        OFF_BYTES * self.offs.capacity() + size_of::<u64>() * self.pre.capacity()
    }

    fn push(&mut self, o: Off, p: u64) {
        self.offs.push(o);
        self.pre.push(p);
    }

    fn insert(&mut self, i: usize, o: Off, p: u64) {
        self.offs.insert(i, o);
        self.pre.insert(i, p);
    }

    /// Room for `more` entries, grown by a quarter, not doubled: the capacity counts against
    /// the budget.
    fn reserve(&mut self, more: usize) {
        if self.capacity() < self.len() + more {
            let step = (self.capacity() / 4).max(more);
            self.offs.reserve_exact(step);
            self.pre.reserve_exact(step);
        }
    }

    /// Room for one more entry, the room doubled when full but not past `most` entries (what
    /// the recent run takes before it is merged away): a few writes take a few bytes.
    fn grow(&mut self, most: usize) {
        if self.len() == self.capacity() {
            let want = (2 * self.capacity()).clamp(16, most.max(16));
            let more = want.max(self.len() + 1) - self.len();
            self.offs.reserve_exact(more);
            self.pre.reserve_exact(more);
        }
    }

    /// Empties the run, keeping its room.
    fn clear(&mut self) {
        self.offs.clear();
        self.pre.clear();
    }

    /// Moves the entries of `from` to start at `to`.
    fn copy_within(&mut self, from: Range<usize>, to: usize) {
        self.offs.copy_within(from.clone(), to);
        self.pre.copy_within(from, to);
    }

    fn truncate(&mut self, n: usize) {
        self.offs.truncate(n);
        self.pre.truncate(n);
    }
}

/// Of the first `end` entries of `run`, the first position `i` for which `before(run[i])` is
/// false, where `before` holds of every entry whose key is below `key` and of none whose key is
/// above it. Only entries with `key`'s prefix are passed to `before`.
#[inline]
fn search(run: &Run, end: usize, key: &[u8], before: impl Fn(Off) -> bool) -> usize {
    let (offs, pre) = (&run.offs[..end], &run.pre[..end]);
    let p = prefix(key);
    let lo = pre.partition_point(|&x| x < p);
    // Entries sharing a prefix are few unless keys share their first eight bytes: gallop.
    let rest = &pre[lo..];
    let mut n = 1;
    while n <= rest.len() && rest[n - 1] == p {
        n *= 2;
    }
    let hi = lo + n / 2 + rest[n / 2..n.min(rest.len())].partition_point(|&x| x == p);
    lo + offs[lo..hi].partition_point(|&o| before(o))
}

/// Fewest offsets the recent run holds before it is merged into the main run.
const RECENT: usize = 1024;

/// Fewest offsets of the main run for which the recent run keeps its keys' places in it
/// ([`MemTable::places`]). A smaller main run of small entries is a few MB of arena, which
/// the caches hold, so the merge's second search of it is cheap, while 4 bytes a recent
/// offset (4 KiB) would take an eighth of a 32 KiB memtable and so change when it flushes.
const PLACED: usize = 1 << 14;

/// The dynamic stage; see the module docs.
#[derive(Default)]
pub(crate) struct MemTable {
    arena: Vec<u8>,
    main: Run,
    recent: Run,
    /// While the main run holds at least [`PLACED`] offsets, for each recent offset where its
    /// key goes in the main run (the first main entry whose key is not below it), found when
    /// it was written: the main run does not change until the runs merge, and the merge takes
    /// these places instead of searching again. Empty below [`PLACED`].
    places: Vec<u32>,
    /// Distinct keys.
    keys: usize,
    /// The `keep` of the last write: what a merge of the runs may drop below.
    keep: Seq,
    /// The sequence number entries are coded relative to: the first one applied.
    base: Seq,
    /// Where the largest key's newest version is: a write above it appends to both runs.
    largest: Option<Off>,
}

/// What a stage says about a key at a sequence number.
pub(crate) enum Found<'a> {
    /// The stage has no version of the key at or below the sequence number.
    Absent,
    /// The key is deleted.
    Deleted,
    /// The key's value.
    Value(&'a [u8]),
}

/// One decoded entry.
#[derive(Clone, Copy)]
struct Entry<'a> {
    seq: Seq,
    key: &'a [u8],
    value: Option<&'a [u8]>,
    at: u64,
}

impl<'a> Entry<'a> {
    /// Key order, then newest first.
    fn order(&self, other: &Entry<'_>) -> Ordering {
        self.key
            .cmp(other.key)
            .then(other.seq.cmp(&self.seq))
            .then(other.at.cmp(&self.at))
    }

    fn found(self) -> Found<'a> {
        match self.value {
            None => Found::Deleted,
            Some(v) => Found::Value(v),
        }
    }
}

impl MemTable {
    /// Distinct keys held (tombstones included).
    pub(crate) fn len(&self) -> usize {
        self.keys
    }

    /// Bytes of memory: the arena and both runs, as allocated.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.arena.capacity()
            + self.main.memory_bytes()
            + self.recent.memory_bytes()
            + size_of::<u32>() * self.places.capacity()
    }

    /// The key of the entry at `at`, decoding only what precedes it: what a search compares
    /// (the sequence number and the value only matter once the keys are equal).
    #[inline]
    fn key(&self, at: Off) -> &[u8] {
        let a = &self.arena[at.get() as usize..];
        let wrote = "an entry this stage wrote";
        let n0 = varint_bytes(a).expect(wrote);
        let (klen, n1) = get_varint(&a[n0..]).expect(wrote);
        let k = n0 + n1 + varint_bytes(&a[n0 + n1..]).expect(wrote);
        &a[k..k + klen as usize]
    }

    fn entry(&self, at: Off) -> Entry<'_> {
        let at = at.get();
        let a = &self.arena[at as usize..];
        let wrote = "an entry this stage wrote";
        let (zig, n0) = get_varint(a).expect(wrote);
        let delta = (zig >> 1) ^ (zig & 1).wrapping_neg();
        let seq = self.base.wrapping_add(delta);
        let (klen, n1) = get_varint(&a[n0..]).expect(wrote);
        let (tag, n2) = get_varint(&a[n0 + n1..]).expect(wrote);
        let k = n0 + n1 + n2;
        let key = &a[k..k + klen as usize];
        let value = tag
            .checked_sub(1)
            .map(|vlen| &a[k + klen as usize..k + klen as usize + vlen as usize]);
        Entry {
            seq,
            key,
            value,
            at,
        }
    }

    /// In `run`, the first position whose entry is not before (`key`, newest at or below
    /// `at`): the newest version of `key` at or below `at` when the key has one.
    fn seek(&self, run: &Run, key: &[u8], at: Seq) -> usize {
        search(run, run.len(), key, |o| match self.key(o).cmp(key) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => self.entry(o).seq > at,
        })
    }

    /// Whether the entry at position `i` of `run` (if any) is a version of `key`, whose prefix
    /// is `p`.
    fn holds(&self, run: &Run, i: usize, key: &[u8], p: u64) -> bool {
        run.pre.get(i) == Some(&p) && self.key(run.offs[i]) == key
    }

    /// The newest version of `key` at or below `at` in `run`.
    fn newest_in(&self, run: &Run, key: &[u8], at: Seq) -> Option<Entry<'_>> {
        let i = self.seek(run, key, at);
        self.holds(run, i, key, prefix(key))
            .then(|| self.entry(run.offs[i]))
    }

    fn newest(&self, key: &[u8], at: Seq) -> Option<Entry<'_>> {
        match (
            self.newest_in(&self.recent, key, at),
            self.newest_in(&self.main, key, at),
        ) {
            (Some(a), Some(b)) => Some(if a.order(&b).is_le() { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// Records a write of sequence number `seq`; versions older than the newest one at or
    /// below `keep` may be dropped (see the module docs).
    pub(crate) fn apply(&mut self, seq: Seq, key: &[u8], value: Option<&[u8]>, keep: Seq) {
        self.keep = self.keep.max(keep);
        // A key above every key held (a load in key order) is new and goes last in both runs:
        // no search.
        let above = self
            .largest
            .is_none_or(|o| cmp_bytes(key, self.key(o)).is_gt());
        if self.arena.is_empty() {
            self.base = seq;
        }
        let need = 10 + 10 + 10 + key.len() + value.map_or(0, <[u8]>::len);
        if self.arena.capacity() - self.arena.len() < need {
            let step = (self.arena.capacity() / 4).max(4096).max(need);
            self.arena.reserve_exact(step);
        }
        let at = Off::new(self.arena.len());
        let delta = seq.wrapping_sub(self.base) as i64;
        put_varint(&mut self.arena, ((delta << 1) ^ (delta >> 63)) as u64);
        put_varint(&mut self.arena, key.len() as u64);
        put_varint(&mut self.arena, value.map_or(0, |v| v.len() as u64 + 1));
        self.arena.extend_from_slice(key);
        if let Some(v) = value {
            self.arena.extend_from_slice(v);
        }
        self.recent.grow(self.recent_capacity());
        let placed = self.placed();
        let p = prefix(key);
        if above {
            self.keys += 1;
            self.largest = Some(at);
            self.recent.push(at, p);
            if placed {
                self.places.push(self.main.len() as u32);
            }
        } else {
            let new = self.entry(at);
            let pos = search(&self.recent, self.recent.len(), key, |o| {
                match self.key(o).cmp(new.key) {
                    Ordering::Equal => self.entry(o).order(&new).is_lt(),
                    c => c.is_lt(),
                }
            });
            // The key's other versions in the recent run lie next to where the new one goes,
            // so the search that places it also says whether the run holds the key and, from
            // theirs, where it goes in the main run; only a key the recent run lacks is looked
            // for there.
            let (held, place) = match (
                pos > 0 && self.holds(&self.recent, pos - 1, key, p),
                self.holds(&self.recent, pos, key, p),
            ) {
                (true, _) => (true, self.places.get(pos - 1).copied()),
                (_, true) => (true, self.places.get(pos).copied()),
                _ => {
                    let place = search(&self.main, self.main.len(), key, |o| self.key(o) < key);
                    let in_main = self.holds(&self.main, place, key, p);
                    (in_main, placed.then_some(place as u32))
                }
            };
            if !held {
                self.keys += 1;
            }
            self.recent.insert(pos, at, p);
            if let Some(place) = place {
                self.places.insert(pos, place);
            }
        }
        if self.recent.len() >= self.recent_capacity() {
            self.merge_runs();
        }
    }

    /// True when the recent run keeps its keys' places in the main run: from [`PLACED`]
    /// offsets up to the most a `u32` place can name (past those, the merge searches again).
    fn placed(&self) -> bool {
        (PLACED..=u32::MAX as usize).contains(&self.main.len())
    }

    /// Empties the recent run (after a merge), the places' capacity for the main run's new
    /// size.
    fn clear_recent(&mut self) {
        self.recent.clear();
        self.places.clear();
        match self.placed() {
            true => self.places.reserve_exact(self.recent_capacity()),
            false => self.places.shrink_to_fit(),
        }
    }

    /// True when every key of the recent run is above every key of the main run: the merge
    /// is an append.
    fn recent_above_main(&self) -> bool {
        match (self.main.offs.last(), self.recent.offs.first()) {
            (Some(&m), Some(&r)) => cmp_bytes(self.key(r), self.key(m)).is_gt(),
            _ => true,
        }
    }

    /// Merges the recent run into the main one, dropping versions no reader needs.
    ///
    /// The main run grows in place and is filled from its end: each recent key's versions go
    /// where its write found (or, below [`PLACED`], where a search finds) they belong, and the
    /// main entries between two such places move up by one block copy, so a merge costs a
    /// move of the offsets and prefixes, not a comparison per entry (the entries sit in the
    /// arena in write order: comparing them is a cache miss each), nor a new allocation of the
    /// runs (a fresh block of a few MB is faulted in and zeroed page by page), nor, in a large
    /// main run, another search per recent key. Only the versions of keys the recent run holds
    /// are pruned: each such key's versions are merged newest first and kept until the first
    /// at or below `keep`; the rest are cut out afterwards, moving the entries above them down.
    fn merge_runs(&mut self) {
        if self.recent_above_main() {
            // Appended, the recent run's own versions pruned as below.
            let mut kept = Vec::with_capacity(self.recent.len());
            let (mut last, mut settled) = (None, false);
            for (i, &o) in self.recent.offs.iter().enumerate() {
                let e = self.entry(o);
                if last != Some(e.key) {
                    (last, settled) = (Some(e.key), false);
                }
                if !settled {
                    kept.push(i);
                    settled = e.seq <= self.keep;
                }
            }
            self.main.reserve(kept.len());
            for i in kept {
                self.main.push(self.recent.offs[i], self.recent.pre[i]);
            }
            self.clear_recent();
            return;
        }
        let (n, r) = (self.main.len(), self.recent.len());
        self.main.reserve(r);
        self.main.offs.resize(n + r, Off::new(0));
        self.main.pre.resize(n + r, 0);
        // Main entries below `i` and recent ones below `j` are still to place; everything from
        // `dst` up is placed, so `dst == i + j`.
        let (mut i, mut j, mut dst) = (n, r, n + r);
        let mut group: Vec<Off> = Vec::new();
        let mut drops: Vec<Range<usize>> = Vec::new();
        while j > 0 {
            let (key, p) = (self.key(self.recent.offs[j - 1]), self.recent.pre[j - 1]);
            let mut b = j - 1;
            while b > 0 && self.holds(&self.recent, b - 1, key, p) {
                b -= 1;
            }
            let place = match self.places.get(b) {
                Some(&place) => place as usize,
                None => search(&self.main, i, key, |o| self.key(o) < key),
            };
            debug_assert!(place <= i && place == search(&self.main, i, key, |o| self.key(o) < key));
            let mut end = place;
            while end < i && self.holds(&self.main, end, key, p) {
                end += 1;
            }
            // The main entries above the key's versions move up past the recent ones to place.
            self.main.copy_within(end..i, dst - (i - end));
            dst -= i - end;
            // The key's versions, newest first, kept until the first at or below `keep`.
            group.clear();
            let (mut a, mut c) = (place, b);
            while a < end || c < j {
                let take_main = c == j
                    || (a < end
                        && self
                            .entry(self.main.offs[a])
                            .order(&self.entry(self.recent.offs[c]))
                            .is_le());
                let o = if take_main {
                    a += 1;
                    self.main.offs[a - 1]
                } else {
                    c += 1;
                    self.recent.offs[c - 1]
                };
                group.push(o);
            }
            let kept = group
                .iter()
                .position(|&o| self.entry(o).seq <= self.keep)
                .map_or(group.len(), |s| s + 1);
            let start = dst - group.len();
            for (k, &o) in group.iter().enumerate() {
                self.main.offs[start + k] = o;
                self.main.pre[start + k] = p;
            }
            if kept < group.len() {
                drops.push(start + kept..dst);
            }
            (i, j, dst) = (place, b, start);
        }
        debug_assert_eq!(dst, i);
        // Found from the last key to the first: cut out from the first.
        drops.reverse();
        if let Some(first) = drops.first() {
            let len = self.main.len();
            let mut to = first.start;
            for (k, d) in drops.iter().enumerate() {
                let next = drops.get(k + 1).map_or(len, |n| n.start);
                self.main.copy_within(d.end..next, to);
                to += next - d.end;
            }
            self.main.truncate(to);
        }
        self.clear_recent();
    }

    /// Offsets the recent run takes before a merge: `sqrt(2n)` balances the shift of an
    /// insertion into it against the move of the main run per merge.
    fn recent_capacity(&self) -> usize {
        RECENT.max((2 * self.main.len()).isqrt())
    }

    /// The key's newest version at or below `at`.
    pub(crate) fn get(&self, key: &[u8], at: Seq) -> Found<'_> {
        self.newest(key, at).map_or(Found::Absent, |e| e.found())
    }

    /// The key's newest version and its sequence number, `None` when the stage has none: what
    /// a read of the latest state takes, before it waits for that number to be visible.
    pub(crate) fn newest_version(&self, key: &[u8]) -> Option<(Found<'_>, Seq)> {
        self.newest(key, Seq::MAX).map(|e| (e.found(), e.seq))
    }

    /// In `run`, the first key past `after` in the given direction.
    fn next_key<'a>(&'a self, run: &Run, after: &Bound<&[u8]>, forward: bool) -> Option<&'a [u8]> {
        let pos = |k: &[u8], past: bool| {
            search(run, run.len(), k, |o| {
                let c = self.key(o).cmp(k);
                c.is_lt() || (past && c.is_eq())
            })
        };
        if forward {
            let i = match *after {
                Bound::Unbounded => 0,
                Bound::Included(k) => pos(k, false),
                Bound::Excluded(k) => pos(k, true),
            };
            run.offs.get(i).map(|&o| self.key(o))
        } else {
            let i = match *after {
                Bound::Unbounded => run.len(),
                Bound::Included(k) => pos(k, true),
                Bound::Excluded(k) => pos(k, false),
            };
            i.checked_sub(1).map(|i| self.key(run.offs[i]))
        }
    }

    /// The first key after `after` (from the start when `Unbounded`) in the given direction
    /// that has a version at or below `at`, with that version; `None` past the last.
    pub(crate) fn next_entry(
        &self,
        after: &Bound<Vec<u8>>,
        forward: bool,
        at: Seq,
    ) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        let mut bound = match after {
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        };
        loop {
            let a = self.next_key(&self.main, &bound, forward);
            let b = self.next_key(&self.recent, &bound, forward);
            let key = match (a, b) {
                (Some(a), Some(b)) => {
                    if (a <= b) == forward {
                        a
                    } else {
                        b
                    }
                }
                (a, b) => a.or(b)?,
            };
            match self.get(key, at) {
                Found::Absent => bound = Bound::Excluded(key),
                Found::Deleted => return Some((key.to_vec(), None)),
                Found::Value(v) => return Some((key.to_vec(), Some(v.to_vec()))),
            }
        }
    }

    /// Every key's newest version at or below `at`, in key order (what a merge writes).
    pub(crate) fn newest_entries(&self, at: Seq) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        let (mut i, mut j) = (0, 0);
        let mut last: Option<&[u8]> = None;
        std::iter::from_fn(move || loop {
            let take_main = match (self.main.offs.get(i), self.recent.offs.get(j)) {
                (Some(&a), Some(&b)) => self.entry(a).order(&self.entry(b)).is_le(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return None,
            };
            let o = if take_main {
                i += 1;
                self.main.offs[i - 1]
            } else {
                j += 1;
                self.recent.offs[j - 1]
            };
            let e = self.entry(o);
            // Newest first within a key: the first version at or below `at` answers.
            if last == Some(e.key) || e.seq > at {
                continue;
            }
            last = Some(e.key);
            return Some((e.key, e.value));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn value(m: &MemTable, k: &[u8], at: Seq) -> Option<Option<Vec<u8>>> {
        match m.get(k, at) {
            Found::Absent => None,
            Found::Deleted => Some(None),
            Found::Value(v) => Some(Some(v.to_vec())),
        }
    }

    #[test]
    fn versions_serve_snapshots_and_are_dropped_when_unneeded() {
        let mut m = MemTable::default();
        m.apply(1, b"k", Some(b"one"), 0);
        m.apply(3, b"k", Some(b"three"), 1); // a snapshot at 1 or 2 still reads "one"
        m.apply(2, b"j", None, 1);
        assert_eq!(value(&m, b"k", 2), Some(Some(b"one".to_vec())));
        assert_eq!(value(&m, b"k", 3), Some(Some(b"three".to_vec())));
        assert_eq!(value(&m, b"k", 0), None);
        assert_eq!(value(&m, b"j", 5), Some(None));
        m.apply(2, b"j", Some(b"later in the batch"), 1);
        assert_eq!(
            value(&m, b"j", 5),
            Some(Some(b"later in the batch".to_vec()))
        );
        assert_eq!(m.len(), 2);
        m.apply(4, b"k", Some(b"four"), 4);
        assert_eq!(value(&m, b"k", 4), Some(Some(b"four".to_vec())));
        assert_eq!(
            m.next_entry(&Bound::Excluded(b"j".to_vec()), true, 9),
            Some((b"k".to_vec(), Some(b"four".to_vec())))
        );
        assert_eq!(
            m.next_entry(&Bound::Excluded(b"k".to_vec()), false, 9),
            Some((b"j".to_vec(), Some(b"later in the batch".to_vec())))
        );
        assert_eq!(m.next_entry(&Bound::Unbounded, true, 0), None);
        let all: Vec<_> = m.newest_entries(9).collect();
        assert_eq!(
            all,
            vec![
                (&b"j"[..], Some(&b"later in the batch"[..])),
                (&b"k"[..], Some(&b"four"[..]))
            ]
        );
    }

    #[test]
    fn writers_applying_out_of_order_keep_the_higher_number_newest() {
        let mut m = MemTable::default();
        // Thread B's write (11) lands first, then a run merge, then thread A's (10).
        m.apply(11, b"k", Some(b"eleven"), 9);
        for i in 0..RECENT as u64 - 1 {
            m.apply(12 + i, &(1000 + i).to_be_bytes(), Some(b"x"), 9);
        }
        assert!(m.recent.is_empty(), "the runs merged");
        m.apply(10, b"k", Some(b"ten"), 9);
        assert_eq!(value(&m, b"k", u64::MAX), Some(Some(b"eleven".to_vec())));
        assert_eq!(value(&m, b"k", 10), Some(Some(b"ten".to_vec())));
        for i in 0..RECENT as u64 {
            m.apply(5000 + i, &(1000 + i).to_be_bytes(), Some(b"y"), 9);
        }
        assert_eq!(value(&m, b"k", u64::MAX), Some(Some(b"eleven".to_vec())));
        assert_eq!(value(&m, b"k", 10), Some(Some(b"ten".to_vec())));
        let newest: Vec<_> = m.newest_entries(u64::MAX).collect();
        assert_eq!(newest.len(), RECENT + 1);
        assert_eq!(newest.last(), Some(&(&b"k"[..], Some(&b"eleven"[..]))));
    }

    #[test]
    fn keys_in_order_append_and_rewrites_of_the_largest_are_pruned() {
        let mut m = MemTable::default();
        let n = 3 * RECENT as u64;
        let mut seq = 0;
        for i in 0..n {
            seq += 1;
            m.apply(seq, &i.to_be_bytes(), Some(&i.to_le_bytes()), seq);
            if i % 10 == 0 {
                // The largest key again: a snapshot at `seq - 1` must still read the old value.
                seq += 1;
                m.apply(seq, &i.to_be_bytes(), Some(b"again"), seq - 1);
                assert_eq!(
                    value(&m, &i.to_be_bytes(), seq - 1),
                    Some(Some(i.to_le_bytes().to_vec()))
                );
            }
        }
        assert_eq!(m.len(), n as usize);
        for i in 0..n {
            let want = if i % 10 == 0 {
                b"again".to_vec()
            } else {
                i.to_le_bytes().to_vec()
            };
            assert_eq!(value(&m, &i.to_be_bytes(), seq), Some(Some(want)));
        }
        let all: Vec<_> = m.newest_entries(seq).map(|(k, _)| k.to_vec()).collect();
        assert_eq!(
            all,
            (0..n).map(|i| i.to_be_bytes().to_vec()).collect::<Vec<_>>()
        );
        // Every merge of the runs was an append; the versions no snapshot needs are gone.
        assert!(m.main.len() + m.recent.len() < (n + n / 10) as usize);
        assert!(m.main.capacity() < m.main.len() + m.main.len() / 4 + RECENT);
    }

    #[test]
    fn runs_merge_and_keep_what_snapshots_need() {
        let mut m = MemTable::default();
        let n = 5 * RECENT as u64;
        for i in 0..n {
            let key = (i % 700).to_be_bytes();
            // A snapshot at 100 stays open: versions at or below it that it reads survive.
            m.apply(i + 1, &key, Some(&i.to_le_bytes()), 100.min(i));
        }
        assert_eq!(m.len(), 700);
        for k in 0..700u64 {
            let newest = (0..n).rev().find(|i| i % 700 == k).unwrap();
            let key = k.to_be_bytes();
            assert_eq!(
                value(&m, &key, n),
                Some(Some(newest.to_le_bytes().to_vec()))
            );
            let at_100 = (0..100).rev().find(|i| i % 700 == k);
            assert_eq!(
                value(&m, &key, 100),
                at_100.map(|i| Some(i.to_le_bytes().to_vec()))
            );
        }
        // Every version above the snapshot may be read by a newer one: none was dropped.
        assert_eq!(m.main.len() + m.recent.len(), n as usize);
        // The snapshot is gone: the next merges drop what nobody reads.
        for i in n..2 * n {
            m.apply(i + 1, &(i % 700).to_be_bytes(), Some(&i.to_le_bytes()), i);
        }
        assert!(m.main.len() + m.recent.len() < n as usize);
        let all: Vec<_> = m.newest_entries(2 * n).collect();
        assert_eq!(all.len(), 700);
        for (k, v) in all {
            let k = u64::from_be_bytes(k.try_into().unwrap());
            let newest = (n..2 * n).rev().find(|i| i % 700 == k).unwrap();
            assert_eq!(v, Some(&newest.to_le_bytes()[..]));
        }
        assert!(m.memory_bytes() < 2 * 40 * n as usize);
    }

    proptest! {
        /// Writes of keys of any length, tombstones among them, applied a little out of
        /// sequence order as concurrent writers do, in enough numbers to merge the runs: the
        /// stage counts the distinct keys it holds and reads every key's newest version as a
        /// map of (key, sequence number) does.
        #[test]
        fn counts_distinct_keys_and_reads_the_newest_version(
            writes in proptest::collection::vec(
                (0u16..600, 0usize..4, proptest::option::weighted(0.8, any::<u8>()), 0u64..25),
                0..3000,
            ),
        ) {
            let mut m = MemTable::default();
            let mut model: BTreeMap<Vec<u8>, BTreeMap<Seq, Option<Vec<u8>>>> = BTreeMap::new();
            for (i, &(k, extra, v, late)) in writes.iter().enumerate() {
                // Longer keys extend shorter ones, so prefixes of each other are held too.
                let key: Vec<u8> = k.to_be_bytes().into_iter().chain(vec![7; extra]).collect();
                let seq = 10 * (i as Seq + 3) - late;
                let value = v.map(|b| vec![b; 1 + b as usize % 9]);
                m.apply(seq, &key, value.as_deref(), seq);
                model.entry(key).or_default().insert(seq, value);
            }
            prop_assert_eq!(m.len(), model.len());
            for (key, versions) in &model {
                let (_, newest) = versions.last_key_value().unwrap();
                prop_assert_eq!(value(&m, key, Seq::MAX), Some(newest.clone()));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Keys whose first eight bytes tie (a shared head of 0-10 bytes, zero bytes after
        /// shorter keys, so `ab` and `ab\0` share a prefix), written out of order past
        /// [`PLACED`] main offsets with snapshots that keep some old versions: every read at
        /// every snapshot, every scan step both ways, and the newest entries in order are a
        /// map's.
        #[test]
        fn keys_sharing_their_prefixes_read_as_a_map_does(
            head in 0usize..11,
            writes in proptest::collection::vec(
                (0u16..40_000, 0usize..3, proptest::option::weighted(0.85, any::<u8>())),
                1..3000,
            ),
            snapshot_every in 50usize..400,
        ) {
            let mut m = MemTable::default();
            let mut model: BTreeMap<Vec<u8>, BTreeMap<Seq, Option<Vec<u8>>>> = BTreeMap::new();
            let key_of = |k: u16, zeros: usize| -> Vec<u8> {
                let mut key = vec![b'u'; head];
                key.extend_from_slice(&k.to_be_bytes());
                key.extend(std::iter::repeat_n(0, zeros));
                key
            };
            // A load of every odd key in order first, so the main run passes PLACED and the
            // writes fall between its keys and on them.
            let mut seq = 0;
            for k in 0..(PLACED as u16 + 500) {
                seq += 1;
                let key = key_of(2 * k + 1, 1);
                m.apply(seq, &key, Some(b"loaded"), seq);
                model.entry(key).or_default().insert(seq, Some(b"loaded".to_vec()));
            }
            let mut snapshot = seq;
            for (i, &(k, zeros, v)) in writes.iter().enumerate() {
                seq += 1;
                if i % snapshot_every == 0 {
                    snapshot = seq - 1;
                }
                let key = key_of(k, zeros);
                let value = v.map(|b| vec![b; 1 + b as usize % 5]);
                m.apply(seq, &key, value.as_deref(), snapshot);
                model.entry(key).or_default().insert(seq, value);
            }
            prop_assert_eq!(m.len(), model.len());
            let at = |versions: &BTreeMap<Seq, Option<Vec<u8>>>, s: Seq| {
                versions.range(..=s).next_back().map(|(_, v)| v.clone())
            };
            for (key, versions) in &model {
                for s in [snapshot, seq] {
                    prop_assert_eq!(value(&m, key, s), at(versions, s));
                }
            }
            let newest: Vec<_> = m
                .newest_entries(seq)
                .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
                .collect();
            let want: Vec<_> = model
                .iter()
                .map(|(k, versions)| (k.clone(), at(versions, seq).unwrap()))
                .collect();
            prop_assert_eq!(&newest, &want);
            for (i, (key, _)) in want.iter().enumerate().step_by(97) {
                let after = Bound::Excluded(key.clone());
                prop_assert_eq!(m.next_entry(&after, true, seq), want.get(i + 1).cloned());
                let before = i.checked_sub(1).and_then(|i| want.get(i).cloned());
                prop_assert_eq!(m.next_entry(&after, false, seq), before);
            }
        }
    }

    #[test]
    fn a_large_main_run_keeps_the_places_its_writes_found() {
        // A load in key order past PLACED offsets, then writes out of order (rewrites, new
        // keys between the loaded ones, deletes): each merge of the runs takes the places the
        // writes found (checked against a search in debug builds), and the result is what a
        // map holds.
        let mut m = MemTable::default();
        let mut model: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let mut seq = 0;
        let mut write = |m: &mut MemTable, key: u64, value: Option<Vec<u8>>| {
            seq += 1;
            let key = key.to_be_bytes().to_vec();
            m.apply(seq, &key, value.as_deref(), seq);
            model.insert(key, value);
        };
        let loaded = 2 * PLACED as u64;
        for k in 0..loaded {
            write(&mut m, 2 * k, Some(k.to_le_bytes().to_vec()));
        }
        assert!(m.main.len() >= PLACED && m.places.capacity() > 0);
        let mut x = 1u64;
        for i in 0..(6 * RECENT + RECENT / 2) as u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (x >> 33) % (2 * loaded + 100);
            write(&mut m, key, (i % 7 != 0).then(|| i.to_le_bytes().to_vec()));
        }
        assert!(!m.places.is_empty(), "the last runs kept their places");
        assert_eq!(m.len(), model.len());
        for (key, newest) in &model {
            assert_eq!(value(&m, key, Seq::MAX), Some(newest.clone()));
        }
    }
}
