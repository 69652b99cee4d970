//! [`DynamicPgm`]: the dynamic PGM-index, an updatable map made of levels of static PGMs in
//! the manner of an LSM-tree (paper 001 §II-B's "LRS" structure with its offsite insertion:
//! sets `S_0, ..., S_b`, `b = Θ(log n)`, a new key merged with the full sets before the first
//! one with room; paper 003 §2, Figure 1(b)).
//!
//! Layout: level 0 is the buffer, a sorted array of at most `base` entries searched by a binary
//! search; level `i >= 1` is empty or a sorted run of at most `base * 2^i` entries with its own
//! PGM ([`super::level`]). When an insert fills the buffer, the buffer and levels `1..j` are
//! merged into level `j`, the first level that can hold them all with its own entries
//! (`DynamicPGMIndex`'s rule with base 2), the levels below are emptied and level `j`'s PGM is
//! rebuilt if it is large enough to have one: one retrain in [`DynamicPgm::stats`]. A bulk load puts everything in the smallest
//! level that holds it.
//!
//! What we do differently from the PGM-index's `DynamicPGMIndex`, and why: [`OrderedMap`]'s
//! `insert` and `remove` return the value they replace, so each must find the key's current
//! entry anyway; having found it, we update it where it is (a remove turns it into a tombstone
//! in place, an insert over a tombstone revives it) instead of adding a newer version to the
//! buffer. Hence the invariant: **no key has entries in two levels**. A tombstone then never
//! hides anything older, and every merge drops the tombstones it meets (in the reference a
//! tombstone survives merges until it reaches the last level); a lookup stops at the first
//! level holding the key, and `lower_bound` and `range` merge the levels' runs without
//! resolving versions. New keys still go to the buffer, so inserts keep the structure's
//! amortized `O(log n)` merge cost; the buffer drops a removed key at once rather than keeping
//! a tombstone. Level `i`'s capacity is `base * 2^i` rather than the sum of `base^j` the
//! reference uses for its buffer; the parameter is the buffer's size.

use std::ops::RangeBounds;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::key::{check_strictly_sorted, Key};
use crate::map::{BulkLoad, OrderedMap};
use crate::mem::dynamic_pgm::level::{merge_live, Level};
use crate::mem::dynamic_pgm::params::DynamicPgmParams;
use crate::mem::dynamic_pgm::range::Range;
use crate::mem::retrain_stats::RetrainStats;

/// The dynamic PGM-index over keys `K` and values `V`. See the module docs.
pub struct DynamicPgm<K: Key, V> {
    params: DynamicPgmParams,
    /// Level 0 is the buffer (no model); the others hold a PGM when not empty.
    levels: Vec<Level<K, V>>,
    len: usize,
    stats: RetrainStats,
}

impl<K: Key, V> DynamicPgm<K, V> {
    /// An empty map; `InvalidParameter` for bad `params`.
    pub fn new(params: DynamicPgmParams) -> Result<Self> {
        params.validate()?;
        Ok(DynamicPgm {
            params,
            levels: vec![Level::empty()],
            len: 0,
            stats: RetrainStats::default(),
        })
    }

    /// The map over `entries`, which must have strictly increasing keys. Errors as
    /// [`BulkLoad::load_sorted`].
    pub fn bulk_load(entries: Vec<(K, V)>, params: DynamicPgmParams) -> Result<Self> {
        let mut map = Self::new(params)?;
        let (keys, values): (Vec<K>, Vec<Option<V>>) =
            entries.into_iter().map(|(k, v)| (k, Some(v))).unzip();
        check_strictly_sorted(&keys)?;
        if keys.is_empty() {
            return Ok(map);
        }
        let target = (1..)
            .find(|&i| map.capacity(i) >= keys.len())
            .expect("a level holds any length");
        map.ensure_levels(target);
        map.len = keys.len();
        map.levels[target] = Level::sorted(keys, values, params.pgm_for(map.len))?;
        Ok(map)
    }

    /// Retrains so far: one per merge of levels, with its time.
    pub fn stats(&self) -> RetrainStats {
        self.stats
    }

    /// The parameters the map was built with.
    pub fn params(&self) -> DynamicPgmParams {
        self.params
    }

    /// Entries (live or tombstone) in each level, the buffer first.
    pub fn level_sizes(&self) -> Vec<usize> {
        self.levels.iter().map(Level::len).collect()
    }

    /// Most entries level `i >= 1` may hold: `base * 2^i`, saturating.
    fn capacity(&self, i: usize) -> usize {
        u32::try_from(i)
            .ok()
            .and_then(|i| self.params.base.checked_mul(1usize.checked_shl(i)?))
            .unwrap_or(usize::MAX)
    }

    fn ensure_levels(&mut self, last: usize) {
        while self.levels.len() <= last {
            self.levels.push(Level::empty());
        }
    }

    /// `(level, position)` of `key`'s entry, live or tombstone (at most one exists).
    #[inline]
    fn locate(&self, key: &K) -> Option<(usize, usize)> {
        self.levels
            .iter()
            .enumerate()
            .find_map(|(l, level)| level.find(key).map(|at| (l, at)))
    }

    /// Empties the full buffer into the first level that holds it with the levels before.
    fn flush(&mut self) -> Result<()> {
        let start = Instant::now();
        let mut required = self.levels[0].live;
        let mut target = 1;
        while target < self.levels.len() {
            let here = self.levels[target].live;
            if required + here <= self.capacity(target) {
                break;
            }
            required += here;
            target += 1;
        }
        self.ensure_levels(target);
        let mut run = self.levels[0].take();
        for level in &mut self.levels[1..=target] {
            run = merge_live(run, level.take());
        }
        let pgm = self.params.pgm_for(run.0.len());
        self.levels[target] = Level::sorted(run.0, run.1, pgm)?;
        self.stats.record(start);
        Ok(())
    }
}

impl<K: Key, V> BulkLoad<K, V> for DynamicPgm<K, V> {
    type Params = DynamicPgmParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &DynamicPgmParams) -> Result<Self> {
        Self::bulk_load(entries, *params)
    }
}

impl<K: Key, V> OrderedMap<K, V> for DynamicPgm<K, V> {
    type Range<'a>
        = Range<'a, K, V>
    where
        V: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let (l, at) = self.locate(key)?;
        self.levels[l].values[at].as_ref()
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        if let Some((l, at)) = self.locate(&key) {
            let level = &mut self.levels[l];
            let old = level.values[at].replace(value);
            if old.is_none() {
                level.live += 1;
                self.len += 1;
            }
            return Ok(old);
        }
        let buffer = &mut self.levels[0];
        let at = buffer.position(&key);
        buffer.keys.insert(at, key);
        buffer.values.insert(at, Some(value));
        buffer.live += 1;
        self.len += 1;
        if buffer.len() >= self.params.base {
            self.flush()?;
        }
        Ok(None)
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let (l, at) = self.locate(key)?;
        let level = &mut self.levels[l];
        let old = if l == 0 {
            level.keys.remove(at);
            level.values.remove(at)
        } else {
            level.values[at].take()
        }?;
        level.live -= 1;
        self.len -= 1;
        Some(old)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Range<'_, K, V> {
        Range::new(
            &self.levels,
            range.start_bound().cloned(),
            range.end_bound().cloned(),
        )
    }

    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        let mut best: Option<(&K, &V)> = None;
        for level in self.levels.iter().filter(|l| l.live > 0) {
            let Some(at) = level.live_from(level.position(key)) else {
                continue;
            };
            let k = &level.keys[at];
            if best.is_none_or(|(b, _)| k.key_lt(b)) {
                best = Some((k, level.values[at].as_ref()?));
            }
            if k.key_cmp(key).is_eq() {
                break;
            }
        }
        best
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.levels.iter().map(Level::size_in_bytes).sum::<usize>()
    }
}

impl<K: Key, V> std::fmt::Debug for DynamicPgm<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicPgm")
            .field("params", &self.params)
            .field("len", &self.len)
            .field("levels", &self.level_sizes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every level within its capacity, keys sorted and in no two levels, live counts right.
    fn check_invariants(map: &DynamicPgm<u64, u64>) {
        let mut seen = std::collections::BTreeSet::new();
        let mut live = 0;
        for (i, level) in map.levels.iter().enumerate() {
            let cap = if i == 0 {
                map.params.base - 1
            } else {
                map.capacity(i)
            };
            assert!(level.len() <= cap, "level {i}: {} > {cap}", level.len());
            assert!(
                level.keys.windows(2).all(|w| w[0] < w[1]),
                "level {i} unsorted"
            );
            assert!(
                level.keys.iter().all(|k| seen.insert(*k)),
                "level {i}: a key twice"
            );
            assert_eq!(
                level.live,
                level.values.iter().filter(|v| v.is_some()).count()
            );
            assert!(
                i > 0 || level.live == level.len(),
                "tombstone in the buffer"
            );
            live += level.live;
        }
        assert_eq!(live, map.len());
    }

    proptest! {
        #[test]
        fn levels_stay_within_capacity_and_disjoint(
            initial in 0u64..300,
            ops in proptest::collection::vec((any::<bool>(), 0u64..2000), 0..600),
            base in 1usize..9,
        ) {
            let entries: Vec<(u64, u64)> = (0..initial).map(|k| (k * 3, k)).collect();
            let mut map = DynamicPgm::bulk_load(entries, DynamicPgmParams::new(4, 2, base).with_min_indexed(16)).unwrap();
            check_invariants(&map);
            for (insert, k) in ops {
                if insert {
                    map.insert(k, k).unwrap();
                } else {
                    map.remove(&k);
                }
                check_invariants(&map);
            }
        }
    }

    #[test]
    fn merges_are_counted_and_bad_params_refused() {
        let mut map = DynamicPgm::new(DynamicPgmParams::new(8, 4, 4)).unwrap();
        for k in 0..64u64 {
            map.insert(k, k).unwrap();
        }
        assert_eq!(map.stats().count, 16);
        assert_eq!(map.level_sizes().iter().sum::<usize>(), 64);
        assert!(matches!(
            DynamicPgm::<u64, u64>::new(DynamicPgmParams::new(8, 4, 0)),
            Err(Error::InvalidParameter { name: "base", .. })
        ));
        assert!(matches!(
            DynamicPgm::<u64, u64>::new(DynamicPgmParams::new(8, 0, 4)),
            Err(Error::InvalidParameter {
                name: "eps_recursive",
                ..
            })
        ));
    }
}
