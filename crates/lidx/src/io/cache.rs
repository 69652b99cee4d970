//! [`PageCache`]: an LRU cache of blocks in front of any device (paper 003 §6.6), write-through
//! or write-back; or a view of a CLOCK cache shared by many devices (below).
//!
//! Paper 003 §6.6 puts an LRU buffer of N pages between the indexes and the disk and counts how
//! many fetched blocks it absorbs (a lookup-only study: the buffer only ever serves reads). Here
//! the cache is itself a [`BlockDevice`], so any structure runs with or without it unchanged,
//! and N = 0 passes every request through. A read request whose blocks are all cached is
//! answered from memory (hits); otherwise the blocks from the first missing one
//! to the last missing one are fetched from the device in ONE request (so an all-at-once fetch
//! stays one request), the missing ones are cached and counted as misses, and cached ones
//! inside that span count as hits (and are answered from the cache, not from the fetched
//! span). Write-back splits that request at every cached dirty block inside the span: its
//! device copy may not be valid (never written yet). Blocks in the cache
//! were verified when fetched, or sealed when written.
//!
//! Two ways to treat writes ([`CacheMode`]):
//!
//! * **Write-through** ([`PageCache::new`]), paper 003's buffer: a write goes to the device at
//!   once and refreshes cached copies. What the device counts is exactly what the structure
//!   wrote; this is how the disk indexes are measured.
//! * **Write-back** ([`PageCache::write_back`]), what we add: a write seals its blocks (as a
//!   device would) and puts them in the cache marked dirty, with no device write; reads see
//!   them. A dirty block reaches the device when it is evicted (together with the dirty blocks
//!   cached right before and after it, up to [`MAX_RUN_BLOCKS`], in one request; those stay
//!   cached, now clean) or at [`BlockDevice::sync`], which writes every dirty block in block
//!   order, each run of consecutive dirty blocks as one request (at most [`MAX_RUN_BLOCKS`]
//!   each, so the copy it needs stays small), then syncs the device. A write of more blocks
//!   than the cache holds goes straight to the device and refreshes cached copies (now clean).
//!   Why: paper 000 §6.3 builds its unclustered B-tree by streaming inserts whose leaf writes
//!   go through the OS page cache (the kernel flushes them later, under memory pressure from
//!   the cgroup limit); a tree whose every insert writes its leaf with `O_DIRECT` pays one
//!   device write per insert, which the paper's tree never did. A write-back cache sized by the
//!   join's memory budget is the buffer pool a storage engineer would give that tree.
//!
//! Errors are never swallowed: a failed eviction write fails the read or write that needed the
//! room, and the block stays cached and dirty (it is not lost; a later sync retries it); a
//! failed sync leaves the blocks it could not write dirty. A write-back cache serializes its
//! requests (it holds its lock across device I/O, so no reader can fetch a stale copy of a
//! block being evicted); its users build one structure on one thread. A multi-block write that
//! fails part way may leave some of its blocks written, as on a real device.
//!
//! Dropping a write-back cache writes its dirty blocks (best effort: no device sync, and errors
//! are lost, like the kernel's writeback of a process that never called fsync). Call `sync` and
//! check its result when the data matters.
//!
//! [`BlockDevice::stats`] of a cache is the device's counters (what really reached the disk)
//! plus the cache's hits and misses; writes the cache absorbs appear nowhere.
//!
//! **Shared** ([`SharedBlocks`], write-through only): one cache of blocks for every file of a
//! [`crate::io::Storage`] (`with_shared_cache`), each file's blocks keyed by a tag the storage
//! gives its name, so a structure of many files (the `lsm` engine's runs, a table and the one a
//! merge writes) holds at most the cache's blocks in all, as a block cache shared by a storage
//! engine's files does (RocksDB's), rather than that many per file. It evicts by CLOCK rather
//! than exact LRU, so a hit moves nothing ([`crate::io::block_map`] says why and what it
//! measured); a private cache stays an exact LRU, the buffer paper 003 §6.6 counts.
//!
//! **Fill on write** (shared only): a written block of records or leaves ([`IoClass::Data`],
//! [`IoClass::Leaf`]: a run's or a table's data blocks) is cached as it is written while the
//! shared cache has free room, never evicting another block for it; headers, models and logs
//! are not. Why: a store's files are written through the cache, so without this the first
//! get of every block after a load or a merge reads it from the device, while LMDB (and any
//! engine that writes through the OS page cache) finds its pages in memory. Measured on the
//! `lsm` engine's YCSB-C after a load (750K records of 100 bytes, 128 MiB cache,
//! `O_DIRECT`), 3M zipf gets read 21K blocks from the device, the whole table once, about a
//! third of the run's time. RocksDB's `prepopulate_block_cache` (flush only) is the same idea;
//! ours takes merges' outputs too, but only into room nothing else needs (a merge's old runs
//! free theirs when removed), so a working set is never pushed out for it. Hits and misses
//! count reads only: a fill counts as neither. Measured (`lidx ycsb --dataset
//! gen:uniform-sparse:1M --payload-size 100 --memory-budget 16M --cache-blocks 32768 --ops 3M
//! --runs 3 --device file: --store lsm,lmdb --workload c`, 2-core EPYC VM shared with other
//! jobs, six invocations alternated with the build before): blocks read per get 0.007 to 0,
//! `lsm` 515 to 1,037 Kops/s (medians), 0.48x to 0.99x LMDB in the same invocations. The
//! cost is memory the cache was already allowed: it now holds a merge's output (and, until
//! they are removed, its inputs) rather than only what gets fetched, so the run's peak
//! resident memory rose from 85-88 MB to 105-122 MB, within the 128 MiB capacity the store's
//! statistics count as its cache's (`cache_bytes`) all along.

use std::num::NonZeroUsize;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::Result;
use crate::io::aligned::AlignedBuf;
use crate::io::block_map::BlockMap;
use crate::io::checksum;
use crate::io::device::{request_blocks, visit_read, BlockDevice};
use crate::io::stats::{IoClass, IoCounters, IoStats};

/// Largest write request a write-back cache issues (eviction runs and sync runs), in blocks:
/// 1 MiB with 4 KiB blocks. Larger runs are split; this bounds the extra copy buffer.
pub(crate) const MAX_RUN_BLOCKS: usize = 256;

/// How a [`PageCache`] treats writes (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Every write goes to the device at once; cached copies are refreshed.
    WriteThrough,
    /// Writes stay in the cache, dirty, until evicted or synced.
    WriteBack,
}

pub(crate) struct Blocks {
    /// Keyed by the device's tag (high 64 bits; 0 for a private cache) and the block: an
    /// exact LRU for a private cache, CLOCK for a shared one ([`BlockMap`]).
    map: BlockMap,
    /// One past the highest block ever written into the cache (write-back blocks may lie past
    /// the device's end until they are written).
    end: u64,
}

/// The blocks of a cache shared by several devices' [`PageCache`]s, each keyed by its tag.
#[derive(Clone)]
pub(crate) struct SharedBlocks(Arc<Mutex<Blocks>>);

impl SharedBlocks {
    /// An empty shared cache of `capacity` (at least 1) blocks of `block_size` bytes.
    pub(crate) fn new(capacity: NonZeroUsize, block_size: usize) -> SharedBlocks {
        SharedBlocks(Arc::new(Mutex::new(Blocks {
            map: BlockMap::clock(capacity, block_size),
            end: 0,
        })))
    }

    /// Drops every block of the file tagged `tag` (removed or truncated), to free their room.
    /// A tag is never given again, so a handle still open on the old file (a reader that
    /// outlives the removal) caches under its own tag and never serves a newer file.
    pub(crate) fn forget(&self, tag: u64) {
        self.forget_where(|k| (k >> 64) as u64 == tag);
    }

    /// Drops the blocks whose keys `stale` picks.
    fn forget_where(&self, stale: impl Fn(u128) -> bool) {
        let mut blocks = self.0.lock();
        let mut picked: Vec<u128> = Vec::new();
        blocks.map.for_each(|k, _| {
            if stale(k) {
                picked.push(k);
            }
        });
        for k in picked {
            blocks.map.remove(&k);
        }
    }

    /// Drops every block: the cache a new process opening the same files starts with.
    pub(crate) fn clear(&self) {
        self.forget_where(|_| true);
    }
}

/// A cache of `capacity` blocks over a device: its own exact LRU, or its share of a CLOCK cache
/// shared with other devices (a [`crate::io::Storage`] made `with_shared_cache`).
pub struct PageCache {
    device: Arc<dyn BlockDevice>,
    blocks: Option<Arc<Mutex<Blocks>>>,
    capacity: usize,
    mode: CacheMode,
    counters: IoCounters,
    /// The device's tag in a shared cache, shifted above the block's 64 bits (0 when private).
    tag: u128,
}

impl PageCache {
    /// A write-through cache of `capacity` blocks over `device`; 0 means no caching.
    pub fn new(device: Arc<dyn BlockDevice>, capacity: usize) -> PageCache {
        PageCache::with_mode(device, capacity, CacheMode::WriteThrough)
    }

    /// A write-back cache of `capacity` blocks over `device`; 0 means no caching (every
    /// request goes to the device).
    pub fn write_back(device: Arc<dyn BlockDevice>, capacity: usize) -> PageCache {
        PageCache::with_mode(device, capacity, CacheMode::WriteBack)
    }

    /// A cache of `capacity` blocks over `device` treating writes as `mode` says.
    pub fn with_mode(device: Arc<dyn BlockDevice>, capacity: usize, mode: CacheMode) -> PageCache {
        PageCache {
            device,
            blocks: NonZeroUsize::new(capacity).map(|n| {
                Arc::new(Mutex::new(Blocks {
                    map: BlockMap::lru(n),
                    end: 0,
                }))
            }),
            capacity,
            mode,
            counters: IoCounters::default(),
            tag: 0,
        }
    }

    /// A write-through cache over `device` in the shared cache `shared` of `capacity` blocks,
    /// its blocks keyed by `tag` (never given to another file of the storage).
    pub(crate) fn shared(
        device: Arc<dyn BlockDevice>,
        shared: &SharedBlocks,
        capacity: usize,
        tag: u64,
    ) -> PageCache {
        PageCache {
            device,
            blocks: Some(Arc::clone(&shared.0)),
            capacity,
            mode: CacheMode::WriteThrough,
            counters: IoCounters::default(),
            tag: u128::from(tag) << 64,
        }
    }

    /// The cache's key of block `block` of this device.
    #[inline]
    fn key(&self, block: u64) -> u128 {
        self.tag | u128::from(block)
    }

    /// Number of blocks the cache can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How the cache treats writes.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// Cached blocks newer than the device's copy (always 0 for write-through).
    pub fn dirty_blocks(&self) -> usize {
        self.blocks.as_ref().map_or(0, |b| {
            let mut dirty = 0;
            b.lock().map.for_each(|_, d| dirty += usize::from(d));
            dirty
        })
    }

    /// The cache's own counters: hits and misses only (the device counts the rest).
    pub fn cache_stats(&self) -> IoStats {
        self.counters.snapshot()
    }

    /// Bytes of memory the cached blocks take when the cache is full.
    pub fn memory_bytes(&self) -> usize {
        self.capacity * self.device.block_size()
    }

    /// Writes the run of consecutive dirty blocks around `victim` (at most [`MAX_RUN_BLOCKS`])
    /// in one request and marks them clean. Does not change their recency.
    fn write_run_around(&self, map: &mut BlockMap, victim: u64) -> Result<()> {
        let dirty = |map: &BlockMap, b: u64| map.peek(&u128::from(b)).is_some_and(|c| c.dirty);
        let (mut lo, mut hi) = (victim, victim + 1);
        while hi - lo < MAX_RUN_BLOCKS as u64 && hi < u64::MAX && dirty(map, hi) {
            hi += 1;
        }
        while hi - lo < MAX_RUN_BLOCKS as u64 && lo > 0 && dirty(map, lo - 1) {
            lo -= 1;
        }
        self.write_dirty(map, lo, hi)
    }

    /// Writes the cached (dirty) blocks `lo..hi` in one request and marks them clean.
    fn write_dirty(&self, map: &mut BlockMap, lo: u64, hi: u64) -> Result<()> {
        let size = self.block_size();
        let mut buf = AlignedBuf::zeroed((hi - lo) as usize * size);
        for (b, out) in (lo..hi).zip(buf.chunks_exact_mut(size)) {
            let cached = map.peek(&u128::from(b)).expect("run blocks are cached");
            out.copy_from_slice(cached.data);
        }
        self.device.write_blocks(lo, &mut buf, IoClass::Leaf)?;
        for b in lo..hi {
            map.mark_clean(&u128::from(b));
        }
        Ok(())
    }

    /// Caches `data` under `id` ([`PageCache::key`]; dirty or not), evicting the least recently
    /// used block when full; a dirty victim is written first, and if that fails nothing is
    /// evicted or cached. Only a private write-back cache holds dirty blocks, whose keys are
    /// their block numbers.
    fn insert(&self, blocks: &mut Blocks, id: u128, data: &[u8], dirty: bool) -> Result<()> {
        if let Some(cached) = blocks.map.get_mut(&id) {
            cached.data.copy_from_slice(data);
            *cached.dirty |= dirty;
        } else {
            if blocks.map.len() >= self.capacity {
                let (victim, victim_dirty) =
                    blocks.map.victim().expect("a full cache has a victim");
                if victim_dirty {
                    self.write_run_around(&mut blocks.map, victim as u64)?;
                }
                blocks.map.evict();
            }
            blocks.map.push(id, data, dirty)?;
        }
        if dirty {
            blocks.end = blocks.end.max(id as u64 + 1);
        }
        Ok(())
    }

    /// Caches the blocks of `buf` (just written from block `first`, sealed) that are not cached
    /// yet, while the shared cache has free room: never evicting for them. See the module docs
    /// (fill on write).
    fn fill_free_room(&self, blocks: &mut Blocks, first: u64, buf: &[u8]) -> Result<()> {
        let size = self.block_size();
        for (i, block) in buf.chunks_exact(size).enumerate() {
            if blocks.map.len() >= self.capacity {
                return Ok(());
            }
            let key = self.key(first + i as u64);
            if !blocks.map.contains(&key) {
                blocks.map.push(key, block, false)?;
            }
        }
        Ok(())
    }

    /// Writes every dirty block in block order, runs of consecutive blocks as one request each.
    fn write_all_dirty(&self, blocks: &mut Blocks) -> Result<()> {
        let mut ids: Vec<u64> = Vec::new();
        blocks.map.for_each(|id, dirty| {
            if dirty {
                ids.push(id as u64);
            }
        });
        ids.sort_unstable();
        let mut i = 0;
        while i < ids.len() {
            let mut j = i + 1;
            while j < ids.len() && ids[j] == ids[j - 1] + 1 && j - i < MAX_RUN_BLOCKS {
                j += 1;
            }
            self.write_dirty(&mut blocks.map, ids[i], ids[j - 1] + 1)?;
            i = j;
        }
        Ok(())
    }

    fn read_through(
        &self,
        blocks: &Mutex<Blocks>,
        first: u64,
        buf: &mut [u8],
        class: IoClass,
    ) -> Result<()> {
        let size = self.block_size();
        let count = request_blocks(self.name(), size, buf.len())?;
        let missing = copy_cached(&mut blocks.lock(), self.key(first), count, buf);
        let (Some(&lo), Some(&hi)) = (missing.first(), missing.last()) else {
            self.counters.record_cache(count, 0);
            return Ok(());
        };
        let span = &mut buf[lo as usize * size..(hi as usize + 1) * size];
        self.device.read_blocks(first + lo, span, class)?;
        self.counters
            .record_cache(count - missing.len() as u64, missing.len() as u64);
        // A shared cache is a store's block cache: a stream over a whole file (a merge's or
        // a check's pass, `IoClass::Data`) reads around it rather than evicting the working
        // set for blocks it reads once (RocksDB's `fill_cache = false` for compactions).
        if self.tag != 0 && class == IoClass::Data {
            return Ok(());
        }
        let mut cache = blocks.lock();
        for &i in &missing {
            let at = i as usize * size;
            self.insert(&mut cache, self.key(first + i), &buf[at..at + size], false)?;
        }
        Ok(())
    }

    fn read_back(
        &self,
        blocks: &Mutex<Blocks>,
        first: u64,
        buf: &mut [u8],
        class: IoClass,
    ) -> Result<()> {
        let size = self.block_size();
        let count = request_blocks(self.name(), size, buf.len())?;
        let mut cache = blocks.lock();
        let missing = copy_cached(&mut cache, self.key(first), count, buf);
        // From the first to the last missing block in one request, as write-through does, but
        // never across a cached dirty block: its device copy is stale and may never have been
        // written (a hole the device refuses with a checksum error). Cached blocks inside a
        // span answer from the cache.
        let mut i = 0;
        while i < missing.len() {
            let mut j = i + 1;
            while j < missing.len()
                && (missing[j - 1] + 1..missing[j]).all(|b| {
                    !cache
                        .map
                        .peek(&self.key(first + b))
                        .is_some_and(|c| c.dirty)
                })
            {
                j += 1;
            }
            let (lo, hi) = (missing[i], missing[j - 1] + 1);
            let span = &mut buf[lo as usize * size..hi as usize * size];
            self.device.read_blocks(first + lo, span, class)?;
            for b in (lo..hi).filter(|b| missing.binary_search(b).is_err()) {
                let block = cache
                    .map
                    .peek(&self.key(first + b))
                    .expect("held under the lock");
                let at = b as usize * size;
                buf[at..at + size].copy_from_slice(block.data);
            }
            i = j;
        }
        self.counters
            .record_cache(count - missing.len() as u64, missing.len() as u64);
        for &i in &missing {
            let at = i as usize * size;
            self.insert(&mut cache, self.key(first + i), &buf[at..at + size], false)?;
        }
        Ok(())
    }
}

/// Copies the cached blocks among `count` blocks from `first` into `buf` (hits refresh their
/// place in the LRU order); returns the indexes (from `first`) of the blocks not cached.
fn copy_cached(blocks: &mut Blocks, first: u128, count: u64, buf: &mut [u8]) -> Vec<u64> {
    let size = buf.len() / count.max(1) as usize;
    let mut missing = Vec::new();
    for i in 0..count {
        match blocks.map.get(&(first + u128::from(i))) {
            Some(block) => {
                let at = i as usize * size;
                buf[at..at + size].copy_from_slice(block);
            }
            None => missing.push(i),
        }
    }
    missing
}

/// Overwrites the cached copies of the blocks of `buf` (just written to the device from the
/// block keyed `first`),
/// which are now clean.
fn refresh(blocks: &mut Blocks, first: u128, buf: &[u8], size: usize) {
    for (i, block) in buf.chunks_exact(size).enumerate() {
        if let Some(cached) = blocks.map.get_mut(&(first + i as u128)) {
            cached.data.copy_from_slice(block);
            *cached.dirty = false;
        }
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
        let end = self.blocks.as_ref().map_or(0, |b| b.lock().end);
        self.device.len_blocks().max(end)
    }

    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        match (&self.blocks, self.mode) {
            (None, _) => self.device.read_blocks(first, buf, class),
            (Some(blocks), CacheMode::WriteThrough) => self.read_through(blocks, first, buf, class),
            (Some(blocks), CacheMode::WriteBack) => self.read_back(blocks, first, buf, class),
        }
    }

    fn visit_blocks(
        &self,
        first: u64,
        count: u64,
        class: IoClass,
        buf: &mut AlignedBuf,
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        // All cached: hand over the cached copies (verified when fetched, sealed when
        // written), no copy out; otherwise read them as `read_blocks` does. One block (a
        // lookup's) is looked up once.
        if let Some(blocks) = &self.blocks {
            let mut cache = blocks.lock();
            let key = self.key(first);
            if count == 1 {
                if let Some(block) = cache.map.get(&key) {
                    each(block);
                    drop(cache);
                    self.counters.record_cache(1, 0);
                    return Ok(());
                }
            } else if count > 0 && (0..count).all(|i| cache.map.contains(&(key + u128::from(i)))) {
                for i in 0..count {
                    if let Some(block) = cache.map.get(&(key + u128::from(i))) {
                        each(block);
                    }
                }
                drop(cache);
                self.counters.record_cache(count, 0);
                return Ok(());
            }
        }
        visit_read(self, first, count, class, buf, each)
    }

    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let Some(blocks) = &self.blocks else {
            return self.device.write_blocks(first, buf, class);
        };
        let size = self.block_size();
        let count = request_blocks(self.name(), size, buf.len())?;
        if self.mode == CacheMode::WriteThrough {
            self.device.write_blocks(first, buf, class)?;
            let mut cache = blocks.lock();
            refresh(&mut cache, self.key(first), buf, size);
            if self.tag != 0 && matches!(class, IoClass::Leaf | IoClass::Data) {
                self.fill_free_room(&mut cache, first, buf)?;
            }
            return Ok(());
        }
        let mut cache = blocks.lock();
        if count > self.capacity as u64 {
            self.device.write_blocks(first, buf, class)?;
            refresh(&mut cache, self.key(first), buf, size);
            return Ok(());
        }
        checksum::seal_run(buf, first, size);
        for (i, block) in buf.chunks_exact(size).enumerate() {
            self.insert(&mut cache, self.key(first + i as u64), block, true)?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        if let (Some(blocks), CacheMode::WriteBack) = (&self.blocks, self.mode) {
            self.write_all_dirty(&mut blocks.lock())?;
        }
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
        let mode = match self.mode {
            CacheMode::WriteThrough => "write-through",
            CacheMode::WriteBack => "write-back",
        };
        let kind = if self.tag == 0 { "LRU" } else { "shared CLOCK" };
        format!(
            "{} + {mode} {kind} cache of {} blocks",
            self.device.describe(),
            self.capacity
        )
    }
}

impl Drop for PageCache {
    fn drop(&mut self) {
        // Only a write-back cache holds dirty blocks (and only a private one: a shared cache
        // is write-through, and its blocks are other files' too).
        if let (Some(blocks), CacheMode::WriteBack) = (&self.blocks, self.mode) {
            // Best effort (see the module docs): nobody is left to hear an error.
            let _ = self.write_all_dirty(&mut blocks.lock());
        }
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
        for mode in [CacheMode::WriteThrough, CacheMode::WriteBack] {
            let cache = PageCache::with_mode(device(8), 2, mode);
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
    }

    #[test]
    fn visits_hand_over_cached_blocks_and_read_the_rest() {
        for capacity in [0, 2, 8] {
            let cache = PageCache::new(device(8), capacity);
            let (mut scratch, mut want) = (AlignedBuf::default(), vec![0u8; 3 * 4096]);
            cache.read_blocks(2, &mut want, IoClass::Leaf).unwrap();
            let before = cache.stats();
            let mut seen = Vec::new();
            cache
                .visit_blocks(2, 3, IoClass::Leaf, &mut scratch, &mut |b| {
                    seen.extend_from_slice(b)
                })
                .unwrap();
            assert_eq!(seen, want, "capacity {capacity}");
            let s = cache.stats();
            // All three cached only with room for eight: then no request reaches the device.
            let requests = s.read_requests - before.read_requests;
            assert_eq!(requests, u64::from(capacity < 3), "capacity {capacity}");
            if capacity == 8 {
                assert_eq!(s.cache_hits - before.cache_hits, 3);
            }
        }
        let cache = PageCache::new(device(2), 4);
        let mut scratch = AlignedBuf::default();
        let past_the_end = cache.visit_blocks(1, 2, IoClass::Leaf, &mut scratch, &mut |_| {});
        assert!(past_the_end.is_err());
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

    #[test]
    fn write_back_coalesces_sync_and_grows_past_the_device() {
        let dev = device(2);
        let cache = PageCache::write_back(Arc::clone(&dev), 8);
        for b in [5u64, 3, 4, 0] {
            let mut block = vec![b as u8 + 10; 4096];
            cache.write_blocks(b, &mut block, IoClass::Leaf).unwrap();
        }
        assert_eq!(dev.stats().write_requests, 1, "only the setup write");
        assert_eq!((cache.len_blocks(), dev.len_blocks()), (6, 2));
        assert_eq!(cache.dirty_blocks(), 4);
        cache.sync().unwrap();
        let s = dev.stats();
        assert_eq!(s.write_requests, 3, "setup, block 0, blocks 3..6");
        assert_eq!((s.write_blocks, s.syncs), (2 + 4, 1));
        assert_eq!(cache.dirty_blocks(), 0);
        let mut one = vec![0u8; 4096];
        dev.read_blocks(4, &mut one, IoClass::Leaf).unwrap();
        assert_eq!(one[0], 14);
        assert!(cache.describe().contains("write-back"));
    }
}
