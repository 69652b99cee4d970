//! The hybrid engine's dynamic stage over byte keys: versions of keys in one byte arena,
//! ordered by two sorted runs of offsets, so a snapshot reads the newest version at or below
//! its sequence number while writes go on.
//!
//! Paper 002 §9.1 uses a B+-tree of `u64` keys; its memory per entry decides how many writes
//! fit the memory budget between merges, so ours keeps entries packed: a write appends
//! `varint seq | varint key length | varint (value length + 1, or 0 for a tombstone) | key |
//! value` to the arena (the sequence number zigzag-coded relative to the stage's first, so
//! 1-3 bytes: writers of several threads may apply in a slightly different order than their
//! numbers) and its offset (5 bytes) to the **recent** run, kept sorted; when that run
//! reaches `max(1024, sqrt(2n))` offsets it is merged into the **main** run (while the main
//! run holds 16K offsets or more, each recent offset keeps beside it where its key goes in
//! the main run, found by its write's search, so the merge copies the main run between those
//! places without searching again). An 8-byte key
//! with an 8-byte value costs 24-26 bytes where a `BTreeMap<Box<[u8]>, _>` costs about 150
//! (the typed hybrid index's B+-tree about 48 and its sorted runs 20, key, slot and payload,
//! with no version kept), and a lookup is two binary searches. Keys written in order (a load)
//! skip both: a key above the largest held is appended, and a merge of the runs whose recent
//! keys all lie above the main run's is an append.
//! Both runs order entries by key, then newest first (sequence number, then arena offset: of
//! two operations on a key in one batch, the later wins).
//!
//! A write does not remove older versions of its key: they stay until a merge of the runs
//! drops those no reader needs (older than the newest version at or below `keep`, the oldest
//! live snapshot or what is visible now), and their arena bytes stay until the stage is
//! merged into the table. So rewriting the same keys fills the budget as new keys do.

use std::cmp::Ordering;
use std::ops::Bound;

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
    main: Vec<Off>,
    recent: Vec<Off>,
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
            + OFF_BYTES * (self.main.capacity() + self.recent.capacity())
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
    fn seek(&self, run: &[Off], key: &[u8], at: Seq) -> usize {
        run.partition_point(|&o| match self.key(o).cmp(key) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => self.entry(o).seq > at,
        })
    }

    /// The newest version of `key` at or below `at` in `run`.
    fn newest_in(&self, run: &[Off], key: &[u8], at: Seq) -> Option<Entry<'_>> {
        let i = self.seek(run, key, at);
        run.get(i).map(|&o| self.entry(o)).filter(|e| e.key == key)
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
        if self.recent.capacity() == 0 {
            self.recent.reserve_exact(self.recent_capacity());
        }
        let placed = self.placed();
        if above {
            self.keys += 1;
            self.largest = Some(at);
            self.recent.push(at);
            if placed {
                self.places.push(self.main.len() as u32);
            }
        } else {
            let new = self.entry(at);
            let pos = self
                .recent
                .partition_point(|&o| match self.key(o).cmp(new.key) {
                    Ordering::Equal => self.entry(o).order(&new).is_lt(),
                    c => c.is_lt(),
                });
            // The key's other versions in the recent run lie next to where the new one goes,
            // so the search that places it also says whether the run holds the key and, from
            // theirs, where it goes in the main run; only a key the recent run lacks is looked
            // for there.
            let beside = |i: usize| self.recent.get(i).is_some_and(|&o| self.key(o) == key);
            let (held, place) = match (pos > 0 && beside(pos - 1), beside(pos)) {
                (true, _) => (true, self.places.get(pos - 1).copied()),
                (_, true) => (true, self.places.get(pos).copied()),
                _ => {
                    let place = self.main.partition_point(|&o| self.key(o) < key);
                    let in_main = self.main.get(place).is_some_and(|&o| self.key(o) == key);
                    (in_main, placed.then_some(place as u32))
                }
            };
            if !held {
                self.keys += 1;
            }
            self.recent.insert(pos, at);
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

    /// Empties the recent run (after a merge), its capacity for the main run's new size.
    fn clear_recent(&mut self) {
        self.recent = Vec::with_capacity(self.recent_capacity());
        self.places = match self.placed() {
            true => Vec::with_capacity(self.recent_capacity()),
            false => Vec::new(),
        };
    }

    /// True when every key of the recent run is above every key of the main run: the merge
    /// is an append.
    fn recent_above_main(&self) -> bool {
        match (self.main.last(), self.recent.first()) {
            (Some(&m), Some(&r)) => cmp_bytes(self.key(r), self.key(m)).is_gt(),
            _ => true,
        }
    }

    /// Merges the recent run into the main one, dropping versions no reader needs.
    ///
    /// Main runs between the recent run's keys are copied as blocks, cut at the places each
    /// write found ([`MemTable::places`]; below [`PLACED`], found by binary search), so a
    /// merge costs a copy of the offsets, not a comparison per entry (the entries sit in the
    /// arena in write order: comparing them is a cache miss each) nor, in a large main run,
    /// another search per recent key. Only the versions of keys the recent run holds are
    /// pruned.
    fn merge_runs(&mut self) {
        if self.recent_above_main() {
            // Appended, the recent run's own versions pruned as below.
            let mut kept = Vec::with_capacity(self.recent.len());
            let (mut last, mut settled) = (None, false);
            for &o in &self.recent {
                let e = self.entry(o);
                if last != Some(e.key) {
                    (last, settled) = (Some(e.key), false);
                }
                if !settled {
                    kept.push(o);
                    settled = e.seq <= self.keep;
                }
            }
            // Grown by a quarter, not doubled: the capacity counts against the budget.
            let need = self.main.len() + kept.len();
            if self.main.capacity() < need {
                let step = (self.main.capacity() / 4).max(kept.len());
                self.main.reserve_exact(step.max(need - self.main.len()));
            }
            self.main.extend_from_slice(&kept);
            self.clear_recent();
            return;
        }
        let mut merged = Vec::with_capacity(self.main.len() + self.recent.len());
        let (mut i, mut j) = (0, 0);
        while j < self.recent.len() {
            let key = self.key(self.recent[j]);
            let p = match self.places.get(j) {
                Some(&p) => p as usize,
                None => i + self.main[i..].partition_point(|&o| self.key(o) < key),
            };
            debug_assert!(p >= i && p == self.main.partition_point(|&o| self.key(o) < key));
            merged.extend_from_slice(&self.main[i..p]);
            let (mut a, mut b) = (p, j);
            let a_end = p + self.main[p..].partition_point(|&o| self.key(o) == key);
            let b_end = j + self.recent[j..].partition_point(|&o| self.key(o) == key);
            // Newest first: every version until the first at or below `keep` is kept.
            let mut settled = false;
            while !settled && (a < a_end || b < b_end) {
                let take_main = b == b_end
                    || (a < a_end
                        && self
                            .entry(self.main[a])
                            .order(&self.entry(self.recent[b]))
                            .is_le());
                let o = if take_main {
                    a += 1;
                    self.main[a - 1]
                } else {
                    b += 1;
                    self.recent[b - 1]
                };
                settled = self.entry(o).seq <= self.keep;
                merged.push(o);
            }
            (i, j) = (a_end, b_end);
        }
        merged.extend_from_slice(&self.main[i..]);
        self.main = merged;
        self.clear_recent();
    }

    /// Offsets the recent run takes before a merge: `sqrt(2n)` balances the shift of an
    /// insertion into it against the copy of the main run per merge.
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
    fn next_key<'a>(
        &'a self,
        run: &[Off],
        after: &Bound<&[u8]>,
        forward: bool,
    ) -> Option<&'a [u8]> {
        let pos = |k: &[u8], past: bool| {
            run.partition_point(|&o| {
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
            run.get(i).map(|&o| self.key(o))
        } else {
            let i = match *after {
                Bound::Unbounded => run.len(),
                Bound::Included(k) => pos(k, true),
                Bound::Excluded(k) => pos(k, false),
            };
            i.checked_sub(1).map(|i| self.key(run[i]))
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
            let take_main = match (self.main.get(i), self.recent.get(j)) {
                (Some(&a), Some(&b)) => self.entry(a).order(&self.entry(b)).is_le(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return None,
            };
            let o = if take_main {
                i += 1;
                self.main[i - 1]
            } else {
                j += 1;
                self.recent[j - 1]
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
