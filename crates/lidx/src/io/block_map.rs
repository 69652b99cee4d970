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
//!
//! A CLOCK keeps its blocks' bytes in an [`Arena`] (huge pages, a slot per place in the
//! ring) rather than a heap allocation each, and its hash table holds only each block's
//! slot and bits; the exact LRU keeps a boxed copy per block, as before (its order, and so
//! the counts paper 003 §6.6's figures rest on, do not change).

use std::num::NonZeroUsize;

use hashbrown::HashMap;
use lru::LruCache;

use crate::error::Result;
use crate::io::arena::Arena;

/// A block of an exact LRU: its bytes (sealed) and whether the device has an older copy.
pub(crate) struct Cached {
    data: Box<[u8]>,
    dirty: bool,
}

/// A cached block as a map hands it out: its bytes and whether the device has an older copy.
pub(crate) struct Block<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) dirty: bool,
}

/// A cached block to change in place.
pub(crate) struct BlockMut<'a> {
    pub(crate) data: &'a mut [u8],
    pub(crate) dirty: &'a mut bool,
}

/// Cached blocks by key (a device's tag above its block number) and their eviction order.
pub(crate) enum BlockMap {
    /// Exact LRU: a hit moves the block to the front.
    Lru(LruCache<u128, Cached>),
    /// CLOCK: a hit sets the block's bit; see the module docs.
    Clock(Clock),
}

/// A block in a [`Clock`]: its slot (in the ring and the arena), its second-chance bit and
/// whether the device has an older copy.
struct Entry {
    slot: u32,
    referenced: bool,
    dirty: bool,
}

/// The CLOCK map: entries by key, the ring of slots the hand sweeps (a slot is empty after
/// its block is evicted or removed, until a new block takes it), and the slots' bytes.
pub(crate) struct Clock {
    entries: HashMap<u128, Entry>,
    ring: Vec<Option<u128>>,
    /// Empty slots of the ring; the last one freed is taken first.
    free: Vec<u32>,
    hand: usize,
    /// Each slot's block bytes ([`Arena`]: huge pages, mapped as the ring grows).
    arena: Arena,
}

impl BlockMap {
    /// An exact LRU of `capacity` blocks.
    pub(crate) fn lru(capacity: NonZeroUsize) -> BlockMap {
        BlockMap::Lru(LruCache::new(capacity))
    }

    /// A CLOCK of `capacity` blocks of `block_size` bytes.
    pub(crate) fn clock(capacity: NonZeroUsize, block_size: usize) -> BlockMap {
        BlockMap::Clock(Clock {
            entries: HashMap::with_capacity(capacity.get()),
            ring: Vec::with_capacity(capacity.get()),
            free: Vec::new(),
            hand: 0,
            arena: Arena::new(capacity.get(), block_size),
        })
    }

    /// Number of cached blocks.
    pub(crate) fn len(&self) -> usize {
        match self {
            BlockMap::Lru(l) => l.len(),
            BlockMap::Clock(c) => c.entries.len(),
        }
    }

    /// The bytes of the block under `key`, counted as used (moved to the front, or its bit
    /// set).
    #[inline]
    pub(crate) fn get(&mut self, key: &u128) -> Option<&[u8]> {
        match self {
            BlockMap::Lru(l) => l.get(key).map(|c| &*c.data),
            BlockMap::Clock(c) => {
                let e = c.entries.get_mut(key)?;
                e.referenced = true;
                Some(c.arena.block(e.slot))
            }
        }
    }

    /// The block under `key`, mutable, counted as used.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: &u128) -> Option<BlockMut<'_>> {
        match self {
            BlockMap::Lru(l) => l.get_mut(key).map(|c| BlockMut {
                data: &mut c.data,
                dirty: &mut c.dirty,
            }),
            BlockMap::Clock(c) => {
                let e = c.entries.get_mut(key)?;
                e.referenced = true;
                Some(BlockMut {
                    data: c.arena.block_mut(e.slot),
                    dirty: &mut e.dirty,
                })
            }
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
    pub(crate) fn peek(&self, key: &u128) -> Option<Block<'_>> {
        match self {
            BlockMap::Lru(l) => l.peek(key).map(|c| Block {
                data: &c.data,
                dirty: c.dirty,
            }),
            BlockMap::Clock(c) => c.entries.get(key).map(|e| Block {
                data: c.arena.block(e.slot),
                dirty: e.dirty,
            }),
        }
    }

    /// Marks the block under `key` clean (its bytes written to the device), not counted as a
    /// use.
    pub(crate) fn mark_clean(&mut self, key: &u128) {
        match self {
            BlockMap::Lru(l) => {
                if let Some(c) = l.peek_mut(key) {
                    c.dirty = false;
                }
            }
            BlockMap::Clock(c) => {
                if let Some(e) = c.entries.get_mut(key) {
                    e.dirty = false;
                }
            }
        }
    }

    /// The block eviction would take next (the least recently used; the first block the
    /// hand finds clear, clearing the set ones it passes), without taking it: its key and
    /// whether it is dirty (then written first). `None` when empty.
    pub(crate) fn victim(&mut self) -> Option<(u128, bool)> {
        match self {
            BlockMap::Lru(l) => l.peek_lru().map(|(&k, c)| (k, c.dirty)),
            BlockMap::Clock(c) => {
                let key = c.sweep()?;
                c.entries.get(&key).map(|e| (key, e.dirty))
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

    /// Caches a copy of `data` under `key` (not cached yet), as the most recently used (in a
    /// CLOCK, in the slot the last eviction freed, just behind the hand: the last the hand
    /// reaches); the caller has made room ([`BlockMap::evict`] while [`BlockMap::len`] is at
    /// the capacity). Fails only when a CLOCK cannot map the memory of a new slot's chunk
    /// ([`Arena::reserve`]); nothing is cached then.
    pub(crate) fn push(&mut self, key: u128, data: &[u8], dirty: bool) -> Result<()> {
        match self {
            BlockMap::Lru(l) => {
                l.push(
                    key,
                    Cached {
                        data: data.into(),
                        dirty,
                    },
                );
            }
            BlockMap::Clock(c) => {
                debug_assert!(!c.entries.contains_key(&key), "pushed twice");
                let slot = match c.free.pop() {
                    Some(slot) => slot,
                    None => {
                        let slot = c.ring.len() as u32;
                        c.arena.reserve(slot)?;
                        c.ring.push(None);
                        slot
                    }
                };
                c.ring[slot as usize] = Some(key);
                c.arena.block_mut(slot).copy_from_slice(data);
                let entry = Entry {
                    slot,
                    referenced: false,
                    dirty,
                };
                c.entries.insert(key, entry);
            }
        }
        Ok(())
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

    /// Every cached key with whether its block is dirty, in no particular order.
    pub(crate) fn for_each(&self, mut each: impl FnMut(u128, bool)) {
        match self {
            BlockMap::Lru(l) => l.iter().for_each(|(&k, c)| each(k, c.dirty)),
            BlockMap::Clock(c) => c.entries.iter().for_each(|(&k, e)| each(k, e.dirty)),
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

    fn block(byte: u8) -> Vec<u8> {
        vec![byte; 8]
    }

    /// Fills `map` (capacity `cap`) with keys as a cache does: room first, then the push.
    fn put(map: &mut BlockMap, cap: usize, key: u128) {
        if map.get(&key).is_some() {
            return;
        }
        if map.len() == cap {
            map.evict();
        }
        map.push(key, &block(key as u8), false).unwrap();
    }

    #[test]
    fn clock_gives_a_second_chance_to_blocks_read_since_the_hand_passed() {
        let cap = 4;
        let mut map = BlockMap::clock(NonZeroUsize::new(cap).unwrap(), 8);
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
            BlockMap::clock(NonZeroUsize::new(cap).unwrap(), 8),
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
                    map.push(key, &block(key as u8), false).unwrap();
                    live.insert(key);
                }
                assert_eq!(map.len(), live.len());
                assert!(map.len() <= cap);
            }
            let mut seen = std::collections::BTreeSet::new();
            map.for_each(|k, dirty| {
                assert!(!dirty);
                assert_eq!(map.peek(&k).map(|c| c.data[0]), Some(k as u8));
                seen.insert(k);
            });
            assert_eq!(seen, live);
        }
    }
}
