//! [`BlockMap`]: the cached blocks of a [`crate::io::PageCache`] and the order it evicts them
//! in: exact LRU for a device's own cache, CLOCK for a cache shared by a store's files.
//!
//! Paper 003 §6.6 counts what an LRU buffer absorbs, so a private cache (every disk index's
//! figures) keeps an exact LRU: a hit moves its block to the front of a list. That move is
//! what a store's cached get pays most for: profiled on the `lsm` engine's in-memory YCSB-C
//! (1M records, 128 MiB cache, every block cached), the shared cache's lookup was a quarter of
//! the get, and most of it the cache misses of the list node and of its two neighbours, a
//! pointer chase on every hit. A cache shared by a store's files (RocksDB's block cache,
//! whose newer `HyperClockCache` drops the list for the same reason) takes CLOCK instead
//! (Corbató's second-chance): a hit only sets a bit in the block's own hash-table entry, next
//! to its key; eviction sweeps a hand over the blocks, clearing set bits and taking the first
//! clear one. A block read once and never again goes at the hand's first pass; one read again
//! since the hand last passed survives it. Hit rates track LRU's closely on skewed reads
//! (the store tests and `lidx ycsb` count them: blocks per read).

use std::num::NonZeroUsize;

use hashbrown::HashMap;
use lru::LruCache;

/// A cached block: its bytes (sealed) and whether the device has an older copy.
pub(crate) struct Cached {
    pub(crate) data: Box<[u8]>,
    pub(crate) dirty: bool,
}

/// Cached blocks by key (a device's tag above its block number) and their eviction order.
pub(crate) enum BlockMap {
    /// Exact LRU: a hit moves the block to the front.
    Lru(LruCache<u128, Cached>),
    /// CLOCK: a hit sets the block's bit; see the module docs.
    Clock(Clock),
}

/// A block in a [`Clock`]: its bytes, its second-chance bit and its place in the sweep.
struct Entry {
    cached: Cached,
    referenced: bool,
    slot: u32,
}

/// The CLOCK map: entries by key, and the ring of slots the hand sweeps (a slot is empty
/// after its block is evicted or removed, until a new block takes it).
pub(crate) struct Clock {
    entries: HashMap<u128, Entry>,
    ring: Vec<Option<u128>>,
    /// Empty slots of the ring; the last one freed is taken first.
    free: Vec<u32>,
    hand: usize,
}

impl BlockMap {
    /// An exact LRU of `capacity` blocks.
    pub(crate) fn lru(capacity: NonZeroUsize) -> BlockMap {
        BlockMap::Lru(LruCache::new(capacity))
    }

    /// A CLOCK of `capacity` blocks.
    pub(crate) fn clock(capacity: NonZeroUsize) -> BlockMap {
        BlockMap::Clock(Clock {
            entries: HashMap::with_capacity(capacity.get()),
            ring: Vec::with_capacity(capacity.get()),
            free: Vec::new(),
            hand: 0,
        })
    }

    /// Number of cached blocks.
    pub(crate) fn len(&self) -> usize {
        match self {
            BlockMap::Lru(l) => l.len(),
            BlockMap::Clock(c) => c.entries.len(),
        }
    }

    /// The block under `key`, counted as used (moved to the front, or its bit set).
    #[inline]
    pub(crate) fn get(&mut self, key: &u128) -> Option<&Cached> {
        self.get_mut(key).map(|c| &*c)
    }

    /// The block under `key`, mutable, counted as used.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: &u128) -> Option<&mut Cached> {
        match self {
            BlockMap::Lru(l) => l.get_mut(key),
            BlockMap::Clock(c) => c.entries.get_mut(key).map(|e| {
                e.referenced = true;
                &mut e.cached
            }),
        }
    }

    /// Whether `key` is cached, not counted as a use.
    pub(crate) fn contains(&self, key: &u128) -> bool {
        match self {
            BlockMap::Lru(l) => l.contains(key),
            BlockMap::Clock(c) => c.entries.contains_key(key),
        }
    }

    /// The block under `key`, not counted as a use.
    pub(crate) fn peek(&self, key: &u128) -> Option<&Cached> {
        match self {
            BlockMap::Lru(l) => l.peek(key),
            BlockMap::Clock(c) => c.entries.get(key).map(|e| &e.cached),
        }
    }

    /// The block under `key`, mutable, not counted as a use.
    pub(crate) fn peek_mut(&mut self, key: &u128) -> Option<&mut Cached> {
        match self {
            BlockMap::Lru(l) => l.peek_mut(key),
            BlockMap::Clock(c) => c.entries.get_mut(key).map(|e| &mut e.cached),
        }
    }

    /// The block eviction would take next (the least recently used; the first block the
    /// hand finds clear, clearing the set ones it passes), without taking it: a dirty one is
    /// written first. `None` when empty.
    pub(crate) fn victim(&mut self) -> Option<(u128, &Cached)> {
        match self {
            BlockMap::Lru(l) => l.peek_lru().map(|(&k, c)| (k, c)),
            BlockMap::Clock(c) => {
                let key = c.sweep()?;
                c.entries.get(&key).map(|e| (key, &e.cached))
            }
        }
    }

    /// Evicts the block [`BlockMap::victim`] names.
    pub(crate) fn evict(&mut self) {
        match self {
            BlockMap::Lru(l) => {
                l.pop_lru();
            }
            BlockMap::Clock(c) => {
                if let Some(key) = c.sweep() {
                    c.remove(&key);
                    c.hand += 1;
                }
            }
        }
    }

    /// Caches `cached` under `key` (not cached yet), as the most recently used (in a CLOCK,
    /// in the slot the last eviction freed, just behind the hand: the last the hand reaches);
    /// the caller has made room ([`BlockMap::evict`] while [`BlockMap::len`] is at the
    /// capacity).
    pub(crate) fn push(&mut self, key: u128, cached: Cached) {
        match self {
            BlockMap::Lru(l) => {
                l.push(key, cached);
            }
            BlockMap::Clock(c) => {
                debug_assert!(!c.entries.contains_key(&key), "pushed twice");
                let slot = match c.free.pop() {
                    Some(slot) => {
                        c.ring[slot as usize] = Some(key);
                        slot
                    }
                    None => {
                        c.ring.push(Some(key));
                        (c.ring.len() - 1) as u32
                    }
                };
                let entry = Entry {
                    cached,
                    referenced: false,
                    slot,
                };
                c.entries.insert(key, entry);
            }
        }
    }

    /// Drops the block under `key`, if cached.
    pub(crate) fn remove(&mut self, key: &u128) {
        match self {
            BlockMap::Lru(l) => {
                l.pop(key);
            }
            BlockMap::Clock(c) => c.remove(key),
        }
    }

    /// Every cached key with its block, in no particular order.
    pub(crate) fn for_each(&self, mut each: impl FnMut(u128, &Cached)) {
        match self {
            BlockMap::Lru(l) => l.iter().for_each(|(&k, c)| each(k, c)),
            BlockMap::Clock(c) => c.entries.iter().for_each(|(&k, e)| each(k, &e.cached)),
        }
    }
}

impl Clock {
    /// Moves the hand to the first block whose bit is clear, clearing the set bits it
    /// passes and skipping empty slots (within two turns); returns that block's key.
    fn sweep(&mut self) -> Option<u128> {
        if self.entries.is_empty() {
            return None;
        }
        loop {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            if let Some(key) = self.ring[self.hand] {
                let entry = self
                    .entries
                    .get_mut(&key)
                    .expect("the ring's keys are cached");
                if !entry.referenced {
                    return Some(key);
                }
                entry.referenced = false;
            }
            self.hand += 1;
        }
    }

    /// Drops `key`, emptying its slot.
    fn remove(&mut self, key: &u128) {
        if let Some(entry) = self.entries.remove(key) {
            self.ring[entry.slot as usize] = None;
            self.free.push(entry.slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(byte: u8) -> Cached {
        Cached {
            data: vec![byte; 8].into(),
            dirty: false,
        }
    }

    /// Fills `map` (capacity `cap`) with keys as a cache does: room first, then the push.
    fn put(map: &mut BlockMap, cap: usize, key: u128) {
        if map.get(&key).is_some() {
            return;
        }
        if map.len() == cap {
            map.evict();
        }
        map.push(key, block(key as u8));
    }

    #[test]
    fn clock_gives_a_second_chance_to_blocks_read_since_the_hand_passed() {
        let cap = 4;
        let mut map = BlockMap::clock(NonZeroUsize::new(cap).unwrap());
        for k in 0..4 {
            put(&mut map, cap, k);
        }
        // 0 and 2 are read again; 1 and 3 are not: the hand evicts 1, then 3.
        assert!(map.get(&0).is_some() && map.get(&2).is_some());
        put(&mut map, cap, 10);
        assert!(!map.contains(&1), "the first clear block goes");
        put(&mut map, cap, 11);
        assert!(!map.contains(&3));
        for k in [0, 2, 10, 11] {
            assert_eq!(map.peek(&k).map(|c| c.data[0]), Some(k as u8));
        }
        assert_eq!(map.len(), cap);
        // The block just cached is the last the hand reaches: four more misses evict the
        // four older ones (their bits cleared by the last sweep) before it.
        put(&mut map, cap, 20);
        for k in 21..24 {
            put(&mut map, cap, k);
            assert!(map.contains(&20), "the newest block is not the next victim");
        }
    }

    #[test]
    fn clock_and_lru_agree_with_a_model_on_contents_and_size() {
        use rand::{Rng, SeedableRng};
        let cap = 16;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for mut map in [
            BlockMap::clock(NonZeroUsize::new(cap).unwrap()),
            BlockMap::lru(NonZeroUsize::new(cap).unwrap()),
        ] {
            let mut live = std::collections::BTreeSet::new();
            for _ in 0..5_000 {
                let key = u128::from(rng.gen_range(0u8..40));
                if rng.gen_ratio(1, 8) {
                    map.remove(&key);
                    live.remove(&key);
                    continue;
                }
                if map.get(&key).is_none() {
                    if map.len() == cap {
                        let (victim, _) = map.victim().expect("full");
                        map.evict();
                        assert!(live.remove(&victim), "evicts what victim named");
                    }
                    map.push(key, block(key as u8));
                    live.insert(key);
                }
                assert_eq!(map.len(), live.len());
                assert!(map.len() <= cap);
            }
            let mut seen = std::collections::BTreeSet::new();
            map.for_each(|k, c| {
                assert_eq!(c.data[0], k as u8);
                seen.insert(k);
            });
            assert_eq!(seen, live);
        }
    }
}
