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
//! module keeps it **coherent with writes**, so that a get never returns a value older than
//! one a get returned before it or than a write that has returned. Keys fall in
//! **stripes** (up to 4096, one per 4 KiB of the cache), each with a stamp (even: no write in
//! flight; odd: one is) and two locks: the *writer* lock, held by a write of keys of the
//! stripe for its whole length, and the *state* lock, held only to move the stamp or to fill.
//! - A write takes its stripes' writer locks in stripe order ([`RowCache::begin`]; so two
//!   writes of one stripe are applied and brought to the cache one after the other, never
//!   crossing) and makes each stamp odd. It is applied to the engine, then ([`Writing::end`])
//!   each of its keys that is cached gets its new value in place (a hot key stays cached
//!   through its updates, as YCSB-A's do, and keeps the hotness its reads gave it; a delete, a
//!   value too long to cache or a failed write removes it), and each stamp becomes even
//!   again.
//! - A get reads its key's stripe's stamp, then the cache, then the stamp again, and takes
//!   what the cache held only if both stamps are the same even one (a seqlock's read): so no
//!   write of the key was in flight while it read, and every write that had ended had
//!   brought the cache up to date. Otherwise, or on a miss, it reads the engine, which orders
//!   reads and writes itself.
//! - A get that misses takes the stamp of its key's stripe before it reads the engine
//!   ([`RowCache::ticket`]: none while a write is in flight), and fills the cache with what
//!   it read only if, under the state lock, the stamp is still the one it took.
//!
//! So a fill holds a value read while no write of its stripe was in flight, and one that no
//! write has changed since; a hit holds a value no older than the last write of its key that
//! ended before the hit began to read. Hits take no lock of this module. Snapshots and ranges
//! read the engine, never the cache. Values longer than
//! [`MAX_ROW_BYTES`] are not cached (a few large values would push out many small hot ones).
//! A put of a key that is not cached does not add it: a load or a write-only workload leaves
//! the cache to what is read. A record the cache holds is answered from it even when the
//! engine would fail (a damaged block read later): the cache is a copy of what was read or
//! acknowledged, checked when it was.
//!
//! Until session 70 a write removed its keys from the cache when it began and inserted the
//! new values when it ended: work the update does not need (the removal was 5-6% of the
//! writing thread's samples in YCSB-A over 3M records with a 64 MB cache, `perf`), and the
//! record came back with the reads it had counted forgotten, so a sweep of the cache that
//! reached it before its next read evicted it. Measured end to end the change is within the
//! VM's noise: YCSB-A medians 83.6 against 79.7 Kops/s beyond memory (3 rounds each, blocks
//! read per operation unchanged at 0.104: the gets' disk reads bound it) and 440 against 436
//! in memory (`docs/results/store-scale.md`, session 70).

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::batch::BatchOp;

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
const MAX_ROW_BYTES: usize = 16 << 10;
/// Stripes of keys at most (see the module docs): a write stops fills of its keys' stripes
/// only. A cache gets one stripe per 4 KiB it may hold, at least one.
const MAX_STRIPES: usize = 4096;

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

/// One stripe's locks and stamp (see the module docs).
#[derive(Default)]
struct Stripe {
    /// Held by a write of keys of the stripe, from [`RowCache::begin`] to [`Writing::end`].
    writer: Mutex<()>,
    /// Held to move the stamp, and by a fill while it checks the stamp and inserts.
    state: Mutex<()>,
    /// Even: no write in flight. Moved only under `state`; read without it by tickets and
    /// hits.
    stamp: AtomicU64,
}

/// The record cache; see the module docs.
pub(crate) struct RowCache {
    rows: Cache<Box<[u8]>, Arc<[u8]>, RowWeight>,
    stripes: Box<[Stripe]>,
}

impl RowCache {
    /// A cache of at most `bytes` (records counted with their overhead); `None` for 0.
    pub(crate) fn new(bytes: usize) -> Option<RowCache> {
        if bytes == 0 {
            return None;
        }
        let stripes: Box<[Stripe]> = (0..(bytes >> 12).clamp(1, MAX_STRIPES))
            .map(|_| Stripe::default())
            .collect();
        // The stripes count in the cache's bytes.
        let records = bytes.saturating_sub(std::mem::size_of_val::<[Stripe]>(&stripes));
        let typical = 256;
        Some(RowCache {
            rows: Cache::with_weighter((records / typical).max(1), records as u64, RowWeight),
            stripes,
        })
    }

    fn stripe(&self, key: &[u8]) -> usize {
        crc32c::crc32c(key) as usize % self.stripes.len()
    }

    /// The cached value of `key`; `None` when it is not cached, or when a write of its stripe
    /// was in flight when the cache was read or began since (see the module docs).
    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.get_racing(key, || ())
    }

    /// [`RowCache::get`], running `between` after the cache's read and before the stamp's
    /// second read: the tests' way into the window a write may begin in.
    fn get_racing(&self, key: &[u8], between: impl FnOnce()) -> Option<Vec<u8>> {
        let stamp = &self.stripes[self.stripe(key)].stamp;
        let before = stamp.load(Ordering::Acquire);
        if !before.is_multiple_of(2) {
            return None;
        }
        let value = self.rows.get(key)?;
        between();
        // The cache's read is done before the stamp is read again.
        fence(Ordering::Acquire);
        (stamp.load(Ordering::Relaxed) == before).then(|| value.to_vec())
    }

    /// What a get that missed takes before it reads the engine; `None` while a write of the
    /// key's stripe is in flight (what it reads is not cached).
    pub(crate) fn ticket(&self, key: &[u8]) -> Option<Ticket> {
        let stripe = self.stripe(key);
        let stamp = self.stripes[stripe].stamp.load(Ordering::Acquire);
        stamp.is_multiple_of(2).then_some(Ticket { stripe, stamp })
    }

    /// Caches `value`, read from the engine after `ticket` was taken, unless a write of the
    /// key's stripe began since.
    pub(crate) fn fill(&self, key: &[u8], value: &[u8], ticket: Ticket) {
        if value.len() > MAX_ROW_BYTES {
            return;
        }
        let stripe = &self.stripes[ticket.stripe];
        let _state = stripe.state.lock();
        if stripe.stamp.load(Ordering::Acquire) == ticket.stamp {
            self.rows.insert(key.into(), value.into());
        }
    }

    /// Begins a write of `ops`, before it is applied to the engine: see the module docs.
    pub(crate) fn begin<'c, 'o>(&'c self, ops: &'o [BatchOp<'o>]) -> Writing<'c, 'o> {
        let mut stripes: Vec<usize> = ops.iter().map(|op| self.stripe(op.key())).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let held = stripes
            .iter()
            .map(|&s| self.stripes[s].writer.lock())
            .collect();
        for &s in &stripes {
            self.bump(s);
        }
        Writing {
            cache: self,
            ops,
            stripes,
            _held: held,
        }
    }

    /// Moves the stamp of `stripe` on, from even to odd (a write begins) or back.
    fn bump(&self, stripe: usize) {
        let stripe = &self.stripes[stripe];
        let _state = stripe.state.lock();
        stripe.stamp.fetch_add(1, Ordering::Release);
    }

    /// Bytes the cache takes (its records with their overhead, and its stripes), and the
    /// records it holds.
    pub(crate) fn usage(&self) -> (usize, usize) {
        let stripes = std::mem::size_of_val::<[Stripe]>(&self.stripes);
        (self.rows.weight() as usize + stripes, self.rows.len())
    }
}

/// A write in flight ([`RowCache::begin`]) and its stripes' writer locks. Dropped without
/// [`Writing::end`] (a panic in the engine's write), it ends as a failed write.
pub(crate) struct Writing<'c, 'o> {
    cache: &'c RowCache,
    ops: &'o [BatchOp<'o>],
    stripes: Vec<usize>,
    _held: Vec<MutexGuard<'c, ()>>,
}

impl Writing<'_, '_> {
    /// Ends the write, which the engine `applied` (or failed part way): each of its keys that
    /// is cached gets its new value in place, in the order of the ops, or leaves the cache.
    pub(crate) fn end(mut self, applied: bool) {
        self.finish(applied);
    }

    fn finish(&mut self, applied: bool) {
        let rows = &self.cache.rows;
        for op in self.ops {
            match *op {
                BatchOp::Put(key, value) if applied && value.len() <= MAX_ROW_BYTES => {
                    // No fill of the key lands while its stripe's stamp is odd, so a key not
                    // cached now stays out; a record evicted in between is not replaced.
                    // `soft`: an update keeps the record's hotness, which reads give.
                    if rows.contains_key(key) {
                        let _ = rows.replace(key.into(), value.into(), true);
                    }
                }
                _ => {
                    rows.remove(op.key());
                }
            }
        }
        for s in std::mem::take(&mut self.stripes) {
            self.cache.bump(s);
        }
    }
}

impl Drop for Writing<'_, '_> {
    fn drop(&mut self) {
        if !self.stripes.is_empty() {
            self.finish(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> [u8; 8] {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes()
    }

    fn put(c: &RowCache, key: &[u8], value: Option<&[u8]>, applied: bool) {
        let ops = [value.map_or(BatchOp::Delete(key), |v| BatchOp::Put(key, v))];
        c.begin(&ops).end(applied);
    }

    fn fill(c: &RowCache, key: &[u8], value: &[u8]) {
        let t = c.ticket(key).expect("no write in flight");
        c.fill(key, value, t);
    }

    #[test]
    fn a_put_updates_a_cached_key_and_a_delete_or_a_failure_forgets_it() {
        let c = RowCache::new(1 << 20).unwrap();
        assert!(RowCache::new(0).is_none());
        fill(&c, b"k", b"v1");
        assert_eq!(c.get(b"k").as_deref(), Some(&b"v1"[..]));
        put(&c, b"k", Some(b"v2"), true);
        assert_eq!(c.get(b"k").as_deref(), Some(&b"v2"[..]));
        put(&c, b"k", Some(b"v3"), false);
        assert_eq!(c.get(b"k"), None);
        fill(&c, b"k", b"v2");
        put(&c, b"k", None, true);
        assert_eq!(c.get(b"k"), None);
        // A put of a key not cached does not add it.
        put(&c, b"new", Some(b"v"), true);
        assert_eq!(c.get(b"new"), None);
        // Nor does a put of a value too long to cache keep the old one.
        fill(&c, b"k", b"v4");
        put(&c, b"k", Some(&vec![0; MAX_ROW_BYTES + 1]), true);
        assert_eq!(c.get(b"k"), None);
        // A batch that puts a key twice ends with the key out (or with its last value).
        fill(&c, b"k", b"v5");
        let ops = [BatchOp::Put(b"k", b"v6"), BatchOp::Put(b"k", b"v7")];
        c.begin(&ops).end(true);
        assert_ne!(c.get(b"k").as_deref(), Some(&b"v6"[..]));
    }

    #[test]
    fn a_fill_read_before_or_during_a_write_is_not_kept() {
        let c = RowCache::new(1 << 20).unwrap();
        // The write begins between the miss's ticket and its fill (and may have been applied
        // and returned before the fill).
        let t = c.ticket(b"k").unwrap();
        let ops = [BatchOp::Put(b"k", b"new")];
        let writing = c.begin(&ops);
        // While it is in flight, a miss takes no ticket, and the earlier one fills nothing.
        assert!(c.ticket(b"k").is_none());
        c.fill(b"k", b"old", t);
        assert_eq!(c.get(b"k"), None);
        writing.end(true);
        let t = c.ticket(b"k").unwrap();
        assert_eq!(c.get(b"k"), None);
        // A fill of a value read after the write ended is kept.
        c.fill(b"k", b"new", t);
        assert_eq!(c.get(b"k").as_deref(), Some(&b"new"[..]));
        // A fill of another stripe's key is kept across a write.
        let other = (0..)
            .map(key)
            .find(|k| c.stripe(k) != c.stripe(b"k"))
            .unwrap();
        let t = c.ticket(&other).unwrap();
        put(&c, b"k", Some(b"newer"), true);
        c.fill(&other, b"v", t);
        assert_eq!(c.get(&other).as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn a_hit_is_not_taken_while_a_write_of_its_stripe_is_in_flight_or_began_since() {
        let c = RowCache::new(1 << 20).unwrap();
        fill(&c, b"k", b"v1");
        let ops = [BatchOp::Put(b"k", b"v2")];
        let writing = c.begin(&ops);
        // The engine may already hold v2, and a get that read it may have returned.
        assert_eq!(c.get(b"k"), None);
        writing.end(true);
        assert_eq!(c.get(b"k").as_deref(), Some(&b"v2"[..]));
        // A whole write between the hit's read of the cache and its second look at the stamp:
        // what it read (v2) is older than what the write returned.
        assert_eq!(
            c.get_racing(b"k", || put(&c, b"k", Some(b"v3"), true)),
            None
        );
        assert_eq!(c.get(b"k").as_deref(), Some(&b"v3"[..]));
        // A write of another stripe's key does not turn the hit away.
        let other = (0..)
            .map(key)
            .find(|k| c.stripe(k) != c.stripe(b"k"))
            .unwrap();
        let got = c.get_racing(b"k", || put(&c, &other, Some(b"v"), true));
        assert_eq!(got.as_deref(), Some(&b"v3"[..]));
    }

    #[test]
    fn an_updated_record_keeps_its_place_among_the_hot_ones() {
        // Room for about 1,000 records of 100 bytes.
        let c = RowCache::new(1000 * 256).unwrap();
        let value = [1u8; 100];
        let hot = key(u64::MAX);
        fill(&c, &hot, b"v0");
        // 20 times the cache's records, each read twice, so that they are promoted and the
        // cache's hot records are swept again and again; meanwhile the hot key is read every
        // 200 records and updated every 5. It stays: its updates keep the reads it counted.
        // Had an update removed it and put it back with those reads forgotten, a sweep that
        // reached it before its next read would evict it (here the first sweep once the cache
        // is full does).
        let mut last = 0u64;
        for i in 0..20_000u64 {
            let k = key(i);
            fill(&c, &k, &value);
            assert!(c.get(&k).is_some());
            if i % 5 == 0 {
                last = i;
                put(&c, &hot, Some(&last.to_be_bytes()), true);
            }
            if i % 200 == 0 {
                assert_eq!(c.get(&hot).as_deref(), Some(&last.to_be_bytes()[..]), "{i}");
            }
        }
    }

    #[test]
    fn a_fill_whose_ticket_predates_a_whole_write_is_not_kept() {
        let c = RowCache::new(1 << 20).unwrap();
        let (t1, t2) = (c.ticket(b"k").unwrap(), c.ticket(b"k").unwrap());
        put(&c, b"k", Some(b"new"), true);
        c.fill(b"k", b"old", t1);
        assert_eq!(c.get(b"k"), None);
        // Nor over a newer fill.
        fill(&c, b"k", b"new");
        c.fill(b"k", b"old", t2);
        assert_eq!(c.get(b"k").as_deref(), Some(&b"new"[..]));
    }

    #[test]
    fn a_write_holds_each_stripe_of_its_keys_once_until_it_ends_or_drops() {
        let c = RowCache::new(1 << 20).unwrap();
        let other = (1..)
            .map(key)
            .find(|k| c.stripe(k) != c.stripe(&key(0)))
            .unwrap();
        let (k0, v) = (key(0), &b"v"[..]);
        let ops = [
            BatchOp::Put(&k0, v),
            BatchOp::Put(&other, v),
            BatchOp::Delete(&k0),
        ];
        let writing = c.begin(&ops);
        assert_eq!(writing.stripes.len(), 2, "one lock a stripe");
        let stripe = &c.stripes[c.stripe(&k0)];
        assert!(stripe.writer.try_lock().is_none());
        // Dropped without an end (the engine's write panicked): the stripes are released and
        // fills go on.
        drop(writing);
        assert!(stripe.writer.try_lock().is_some());
        fill(&c, &k0, b"v");
        assert_eq!(c.get(&k0).as_deref(), Some(&b"v"[..]));
    }

    #[test]
    fn large_values_are_not_cached() {
        let c = RowCache::new(1 << 20).unwrap();
        let big = vec![7u8; MAX_ROW_BYTES + 1];
        fill(&c, b"k", &big);
        assert_eq!(c.get(b"k"), None);
    }

    #[test]
    fn the_cache_holds_its_budget_and_counts_at_least_what_it_holds() {
        let bytes = 256 << 10;
        let c = RowCache::new(bytes).unwrap();
        let value = [1u8; 100];
        for i in 0..20_000 {
            fill(&c, &key(i), &value);
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
