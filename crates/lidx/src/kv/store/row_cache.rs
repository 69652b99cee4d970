//! [`RowCache`]: the [`super::Store`]'s cache of records, key to value, in front of any
//! engine ([`super::StoreOptions::row_cache_bytes`], off by default).
//!
//! Why, beside the block cache: under a skewed workload the hot keys are scattered over the
//! table (YCSB's scrambled zipfian hashes each rank to a key), so a cached 4 KiB block holds
//! one hot record among about thirty cold ones. A record cache holds the hot records alone:
//! simulated on 3M keys at YCSB's zipf (theta 0.99), after warming, 48 MB of records miss
//! 0.20 of gets where 48 MB of blocks miss 0.40 and 95 MB of blocks 0.29. RocksDB has the
//! same structure (`row_cache`), off by default as here.
//!
//! The cache is `quick_cache`'s (sharded, S3-FIFO-like eviction, weighted by bytes); this
//! module keeps it **coherent with writes** without holding a lock across an engine's read:
//! - a get that misses takes a [`Ticket`] (the stamp of the key's stripe) *before* it reads
//!   the engine, and fills the cache with what it read only if the stamp has not moved by
//!   then, checking again after the fill (and taking the fill back if it has);
//! - a write is applied to the engine first, then bumps the stamp of each key it touches and
//!   removes the key.
//!
//! So a value read before a write can never stay cached after it: either the write's removal
//! comes after the fill and removes it, or the stamp moved before the fill's second check,
//! which takes the fill back. A filler may take back a newer reader's (correct) fill: a miss
//! later, never a wrong answer. Snapshots read the engine, never the cache. Values longer
//! than [`MAX_ROW_BYTES`] are not cached (a few large values would push out many small
//! hot ones).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

/// Bytes of memory counted per cached record beyond its key's and value's heap blocks
/// ([`heap_block`]): the cache's entry (a boxed slice and an `Arc`, 32 bytes, with its
/// eviction state), its hash table's slot with the table's spare room, and the hashes
/// `quick_cache` keeps of recently evicted keys. Measured: 1M records of 8-byte keys and
/// 100-byte values took 218 bytes each of resident memory when filled, and 255 each once
/// evictions had churned three times the cache's size through it; this counts 256.
const ROW_OVERHEAD: u64 = 96;

/// Bytes a heap allocation of `n` bytes takes: glibc's malloc rounds a request and its 8-byte
/// header up to 16 bytes, at least 32.
fn heap_block(n: usize) -> u64 {
    ((n + 8).div_ceil(16) * 16).max(32) as u64
}
/// The largest value the cache holds.
pub(crate) const MAX_ROW_BYTES: usize = 16 << 10;
/// Stripes of write stamps: a write moves one stripe's stamp, and only fills of keys in
/// that stripe that were in flight are dropped.
const STRIPES: usize = 4096;

/// What a record costs the cache.
#[derive(Clone, Copy)]
struct RowWeight;

impl Weighter<Box<[u8]>, Arc<[u8]>> for RowWeight {
    fn weight(&self, key: &Box<[u8]>, value: &Arc<[u8]>) -> u64 {
        // An `Arc`'s block holds its two counts before the value.
        heap_block(key.len()) + heap_block(16 + value.len()) + ROW_OVERHEAD
    }
}

/// The stamp a get's miss took before reading the engine ([`RowCache::ticket`]).
pub(crate) struct Ticket {
    stripe: usize,
    stamp: u64,
}

/// The record cache; see the module docs.
pub(crate) struct RowCache {
    rows: Cache<Box<[u8]>, Arc<[u8]>, RowWeight>,
    stamps: Box<[AtomicU64]>,
}

impl RowCache {
    /// A cache of at most `bytes` (records counted with their overhead); `None` for 0.
    pub(crate) fn new(bytes: usize) -> Option<RowCache> {
        if bytes == 0 {
            return None;
        }
        let typical = 256;
        Some(RowCache {
            rows: Cache::with_weighter((bytes / typical).max(1), bytes as u64, RowWeight),
            stamps: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    fn stripe(key: &[u8]) -> usize {
        crc32c::crc32c(key) as usize % STRIPES
    }

    /// The cached value of `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.rows.get(key).map(|v| v.to_vec())
    }

    /// What a get that missed takes before it reads the engine.
    pub(crate) fn ticket(&self, key: &[u8]) -> Ticket {
        let stripe = Self::stripe(key);
        Ticket {
            stripe,
            stamp: self.stamps[stripe].load(Ordering::SeqCst),
        }
    }

    /// Caches `value`, read from the engine after `ticket` was taken, unless a write to the
    /// key's stripe came between (then, or after the fill: see the module docs).
    pub(crate) fn fill(&self, key: &[u8], value: &[u8], ticket: Ticket) {
        if value.len() > MAX_ROW_BYTES {
            return;
        }
        let stamp = &self.stamps[ticket.stripe];
        if stamp.load(Ordering::SeqCst) != ticket.stamp {
            return;
        }
        self.rows.insert(key.into(), value.into());
        if stamp.load(Ordering::SeqCst) != ticket.stamp {
            self.rows.remove(key);
        }
    }

    /// Forgets `key`; called after a write to it is applied.
    pub(crate) fn invalidate(&self, key: &[u8]) {
        self.stamps[Self::stripe(key)].fetch_add(1, Ordering::SeqCst);
        self.rows.remove(key);
    }

    /// Bytes the cached records take (with their overhead), and how many there are.
    pub(crate) fn usage(&self) -> (usize, usize) {
        (self.rows.weight() as usize, self.rows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> [u8; 8] {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes()
    }

    #[test]
    fn a_fill_is_read_back_and_a_write_forgets_it() {
        let c = RowCache::new(1 << 20).unwrap();
        assert!(RowCache::new(0).is_none());
        let t = c.ticket(b"k");
        c.fill(b"k", b"v1", t);
        assert_eq!(c.get(b"k").as_deref(), Some(&b"v1"[..]));
        c.invalidate(b"k");
        assert_eq!(c.get(b"k"), None);
    }

    #[test]
    fn a_fill_read_before_a_write_is_not_kept() {
        let c = RowCache::new(1 << 20).unwrap();
        // The write lands between the miss's ticket and its fill.
        let t = c.ticket(b"k");
        c.invalidate(b"k");
        c.fill(b"k", b"old", t);
        assert_eq!(c.get(b"k"), None);
        // A fill of another stripe's key is kept.
        let other = (0..)
            .map(key)
            .find(|k| RowCache::stripe(k) != RowCache::stripe(b"k"));
        let other = other.unwrap();
        let t = c.ticket(&other);
        c.invalidate(b"k");
        c.fill(&other, b"v", t);
        assert_eq!(c.get(&other).as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn large_values_are_not_cached() {
        let c = RowCache::new(1 << 20).unwrap();
        let big = vec![7u8; MAX_ROW_BYTES + 1];
        let t = c.ticket(b"k");
        c.fill(b"k", &big, t);
        assert_eq!(c.get(b"k"), None);
    }

    #[test]
    fn the_cache_holds_its_budget_and_counts_at_least_what_it_holds() {
        let bytes = 256 << 10;
        let c = RowCache::new(bytes).unwrap();
        let value = [1u8; 100];
        for i in 0..20_000 {
            let t = c.ticket(&key(i));
            c.fill(&key(i), &value, t);
        }
        let (weight, rows) = c.usage();
        assert!(weight <= bytes, "{weight} > {bytes}");
        assert!(
            rows > bytes / 2 / (108 + ROW_OVERHEAD as usize),
            "{rows} rows"
        );
        // The count covers the keys and values on the heap and the cache's own structures.
        let structures = c.rows.memory_used().total();
        assert!(
            weight >= rows * 108 + structures,
            "{weight} < {rows} x 108 + {structures}"
        );
    }
}
