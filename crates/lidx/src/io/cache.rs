//! [`PageCache`]: an LRU cache of blocks in front of any device (paper 003 §6.6).
//!
//! Paper 003 §6.6 puts an LRU buffer of N pages between the indexes and the disk and counts how
//! many fetched blocks it absorbs. Here the cache is itself a [`BlockDevice`], so any structure
//! runs with or without it unchanged, and N = 0 passes every request through. A read request
//! whose blocks are all cached is answered from memory (hits); otherwise the blocks from the
//! first missing one to the last missing one are fetched from the device in ONE request (so an
//! all-at-once fetch stays one request), the missing ones are cached and counted as misses, and
//! cached ones inside that span count as hits. Writes go through to the device and refresh
//! cached copies. Blocks in the cache were verified when fetched.
//!
//! [`BlockDevice::stats`] of a cache is the device's counters (what really reached the disk)
//! plus the cache's hits and misses.

use std::num::NonZeroUsize;
use std::sync::Arc;

use lru::LruCache;
use parking_lot::Mutex;

use crate::error::Result;
use crate::io::device::{request_blocks, BlockDevice};
use crate::io::stats::{IoClass, IoCounters, IoStats};

/// An LRU cache of `capacity` blocks over a device.
pub struct PageCache {
    device: Arc<dyn BlockDevice>,
    blocks: Option<Mutex<LruCache<u64, Box<[u8]>>>>,
    capacity: usize,
    counters: IoCounters,
}

impl PageCache {
    /// A cache of `capacity` blocks over `device`; 0 means no caching.
    pub fn new(device: Arc<dyn BlockDevice>, capacity: usize) -> PageCache {
        PageCache {
            device,
            blocks: NonZeroUsize::new(capacity).map(|n| Mutex::new(LruCache::new(n))),
            capacity,
            counters: IoCounters::default(),
        }
    }

    /// Number of blocks the cache can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The cache's own counters: hits and misses only (the device counts the rest).
    pub fn cache_stats(&self) -> IoStats {
        self.counters.snapshot()
    }

    /// Bytes of memory the cached blocks take when the cache is full.
    pub fn memory_bytes(&self) -> usize {
        self.capacity * self.device.block_size()
    }
}

impl BlockDevice for PageCache {
    fn name(&self) -> &str {
        self.device.name()
    }

    fn block_size(&self) -> usize {
        self.device.block_size()
    }

    fn len_blocks(&self) -> u64 {
        self.device.len_blocks()
    }

    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let Some(cache) = &self.blocks else {
            return self.device.read_blocks(first, buf, class);
        };
        let size = self.block_size();
        let count = request_blocks(self.name(), size, buf.len())?;
        let mut missing = Vec::new();
        {
            let mut cache = cache.lock();
            for i in 0..count {
                match cache.get(&(first + i)) {
                    Some(block) => {
                        let at = i as usize * size;
                        buf[at..at + size].copy_from_slice(block);
                    }
                    None => missing.push(i),
                }
            }
        }
        let (Some(&lo), Some(&hi)) = (missing.first(), missing.last()) else {
            self.counters.record_cache(count, 0);
            return Ok(());
        };
        let span = &mut buf[lo as usize * size..(hi as usize + 1) * size];
        self.device.read_blocks(first + lo, span, class)?;
        self.counters
            .record_cache(count - missing.len() as u64, missing.len() as u64);
        let mut cache = cache.lock();
        for &i in &missing {
            let at = i as usize * size;
            cache.put(first + i, buf[at..at + size].into());
        }
        Ok(())
    }

    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        self.device.write_blocks(first, buf, class)?;
        if let Some(cache) = &self.blocks {
            let size = self.block_size();
            let mut cache = cache.lock();
            for (i, block) in buf.chunks_exact(size).enumerate() {
                let id = first + i as u64;
                if let Some(cached) = cache.get_mut(&id) {
                    cached.copy_from_slice(block);
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.device.sync()
    }

    fn stats(&self) -> IoStats {
        let mut stats = self.device.stats();
        let own = self.counters.snapshot();
        stats.cache_hits += own.cache_hits;
        stats.cache_misses += own.cache_misses;
        stats
    }

    fn describe(&self) -> String {
        format!(
            "{} + LRU cache of {} blocks",
            self.device.describe(),
            self.capacity
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::sim::{SimDevice, SimProfile};

    fn device(blocks: usize) -> Arc<dyn BlockDevice> {
        let dev = SimDevice::new("c", 4096, SimProfile::named("ram").unwrap()).unwrap();
        let mut buf: Vec<u8> = (0..blocks * 4096).map(|i| (i / 4096) as u8).collect();
        dev.write_blocks(0, &mut buf, IoClass::Leaf).unwrap();
        Arc::new(dev)
    }

    #[test]
    fn hits_misses_and_eviction() {
        let cache = PageCache::new(device(8), 2);
        let mut one = vec![0u8; 4096];
        cache.read_blocks(1, &mut one, IoClass::Leaf).unwrap();
        cache.read_blocks(1, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(one[0], 1);
        let s = cache.stats();
        assert_eq!((s.cache_hits, s.cache_misses, s.read_requests), (1, 1, 1));

        let mut three = vec![0u8; 3 * 4096];
        cache.read_blocks(0, &mut three, IoClass::Leaf).unwrap();
        assert_eq!([three[0], three[4096], three[8192]], [0, 1, 2]);
        let s = cache.stats();
        assert_eq!(s.read_requests, 2, "the span 0..3 is one request");
        assert_eq!((s.cache_hits, s.cache_misses), (2, 3));

        cache.read_blocks(0, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(
            cache.stats().read_requests,
            2,
            "block 0 was fetched last, still cached"
        );
        cache.read_blocks(1, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(
            cache.stats().read_requests,
            3,
            "block 1 was least recent, evicted"
        );
    }

    #[test]
    fn zero_capacity_passes_through_and_writes_refresh() {
        let cache = PageCache::new(device(2), 0);
        let mut one = vec![0u8; 4096];
        cache.read_blocks(0, &mut one, IoClass::Leaf).unwrap();
        cache.read_blocks(0, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(cache.stats().read_requests, 2);

        let cache = PageCache::new(device(2), 4);
        cache.read_blocks(0, &mut one, IoClass::Leaf).unwrap();
        let mut new = vec![9u8; 4096];
        cache.write_blocks(0, &mut new, IoClass::Leaf).unwrap();
        cache.read_blocks(0, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(one[0], 9);
        assert_eq!(cache.stats().cache_hits, 1);
    }
}
