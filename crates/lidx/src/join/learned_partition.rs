//! The learned route for joins on UNSORTED tables: partition both tables into key-range buckets
//! by the rank a PGM fitted on a 1% sample predicts, then join bucket pairs in key order,
//! sorting each bucket in memory, so the output comes out sorted by key.
//!
//! Paper 000 §5.4 and §6.3: sample keys from each unsorted table, sort the sample, fit a PGM on
//! it, scale the rank it predicts to the full table, and send every key to bucket
//! `rank * P / N`, with `P` chosen so a bucket is about one 4 KiB page; buckets are flushed to
//! disk 8 keys at a time and are sorted only when loaded for the join. Two passes over each
//! table: one to sample, one to partition. The join then walks the smaller table's buckets in
//! order and, for each key, looks up the bucket of the other table through that table's own
//! PGM and bucket map. The paper measures partitioning 4-8x faster than building a B+-tree by
//! random inserts.
//!
//! What we do differently, and why:
//!
//! * **One model for both tables.** We sample both tables (Bernoulli, rate
//!   [`LearnedPartitionParams::sample_rate`], seeded, so reruns are identical), fit ONE PGM on the
//!   union of the samples and partition both tables with it. Bucket `i` of the left table then
//!   holds exactly the key range of bucket `i` of the right one: the join needs no lookups into
//!   the other table's model, bucket pairs are independent (threads take contiguous ranges of
//!   them), and the overflow fallback below works on one pair at a time. `P` is sized on the
//!   larger table ([`LearnedPartitionParams::bucket_blocks`] blocks per bucket), so when the
//!   tables differ in size the smaller one's buckets are smaller, not more numerous.
//! * **A monotone bucket function.** The PGM's bottom segments each predict a rank; we clamp a
//!   segment's prediction to the ranks between its first point and the next segment's first
//!   point. Each clamped line is non-decreasing, and consecutive segments cover consecutive rank
//!   ranges, so the bucket of a key never decreases as the key grows: buckets ARE key ranges
//!   (the paper's precondition "as long as the rank is monotonic"). Segments are found by a
//!   binary search over their first keys (the sample's PGM is small).
//! * **Flushing.** The paper flushes 8 keys per bucket into page-sized regions through the OS
//!   page cache, and reports that under memory pressure the kernel's write-back dominates. Here
//!   the `--memory` budget is explicit: records are buffered in one arena shared by all buckets
//!   and, when it is full, written as one *run* in bucket order, in large sequential requests
//!   (a counting sort by bucket id puts them in place). The in-memory directory of a run is one
//!   offset per bucket. A bucket is the concatenation of its pieces in every run; the join
//!   reads the runs forward through one read-ahead window each, so with buckets visited in
//!   order every run is read sequentially, and a bucket nobody needs is not read at all.
//! * **Oversized buckets.** A skewed key range (or many 16-byte strings sharing their first 8
//!   bytes, which the model cannot tell apart) can put more records in one bucket pair than the
//!   memory budget holds. Then the pair is joined in key sub-ranges: read both buckets, keep the
//!   records of `[lo, hi)`, and whenever the kept records exceed the budget lower `hi` to the
//!   median kept key and drop the records at or above it; after both buckets are read the kept
//!   records are exactly those of `[lo, hi)`: sort, join, continue from `lo = hi`. Each round
//!   re-reads the pair, so a pair of `k` budgets costs about `2k` reads of it; only if records
//!   with ONE key exceed the budget is the join refused ([`Error::InvalidParameter`] on
//!   `memory`).
//! * **String keys** ([`crate::Str16`]) reach the model through [`Key::to_model`], their first 8
//!   bytes big-endian: order-preserving but not injective. That only costs balance, never
//!   exactness: the bucket function is non-decreasing in the key whatever the model's
//!   precision, so equal keys always share a bucket and buckets are key ranges, and inside a
//!   bucket pair keys are compared in full. (The paper's base-256 `f64` mapping loses order
//!   information past ~7 bytes in the same way; ours loses it past 8.)
//! * **Duplicate keys** are allowed in either table: a key with `a` records on the left and `b`
//!   on the right gives `a * b` output records. Records with equal keys are ordered by their
//!   bytes, so the output does not depend on the order the records arrived in.
//!
//! Module contents: [`BucketMap`] (the fitted partition function), [`Partitioned`] (one table's
//! bucket file and directory), [`BucketReader`], [`join_bucket`] (one bucket pair, with the
//! fallback), and the sampling and partitioning passes.

use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::join::table::{Table, TableKey, WRITE_BLOCKS};
use crate::join::table_index::IndexLoad;
use crate::join::unsorted_btree::{remove_scratch, scratch_name, DEFAULT_MEMORY};
use crate::join::{OutputSpec, Sides, TableRef};
use crate::key::Key;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::model::linear::LinearModel;

/// Parameters of the learned route. The memory budget itself is the join's (`--memory`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnedPartitionParams {
    /// Fraction of each table's records sampled to fit the model, in `(0, 1]` (default 0.01,
    /// the paper's 1%). More samples give more even buckets at the cost of a longer fit and a
    /// larger sample in memory; tables so small that this gives fewer than
    /// [`MIN_SAMPLE`] keys are sampled at a higher rate.
    pub sample_rate: f64,
    /// Seed of the sampling (default fixed, so two runs partition identically).
    pub seed: u64,
    /// Error of the PGM fitted on the sample, in sample positions (default 16). Smaller means
    /// more segments and buckets closer to their target size.
    pub eps: usize,
    /// Target size of a bucket of the larger table, in blocks (default 1: the paper's one
    /// page). Larger buckets mean fewer of them: smaller run directories, larger in-memory sorts.
    pub bucket_blocks: usize,
}

impl Default for LearnedPartitionParams {
    fn default() -> Self {
        LearnedPartitionParams {
            sample_rate: 0.01,
            seed: 0x5eed_0000_0000_0ba5,
            eps: 16,
            bucket_blocks: 1,
        }
    }
}

/// What a join does with one match: `emit(key, left record, right record)`.
pub type Emit<'a, K> = dyn FnMut(&K, &[u8], &[u8]) -> Result<()> + 'a;

/// What a pass over a table does with each record: `f(position, record bytes)`.
pub type RecordVisitor<'a> = dyn FnMut(u64, &[u8]) -> Result<()> + 'a;

/// Smallest sample fitted when the table has that many records.
pub const MIN_SAMPLE: u64 = 1024;

/// Blocks per write request when a run is written.
pub const WRITE_BATCH_BLOCKS: usize = 64;

/// Largest read-ahead window per run, in blocks.
pub const MAX_WINDOW_BLOCKS: usize = 64;

impl LearnedPartitionParams {
    /// [`Error::InvalidParameter`] for a sample rate outside `(0, 1]`, `eps == 0` or
    /// `bucket_blocks == 0`.
    pub fn check(&self) -> Result<()> {
        if !(self.sample_rate > 0.0 && self.sample_rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "sample_rate",
                value: self.sample_rate.to_string(),
                expected: "a fraction in (0, 1]",
            });
        }
        if self.eps == 0 {
            return Err(Error::InvalidParameter {
                name: "eps",
                value: "0".to_string(),
                expected: "at least 1",
            });
        }
        if self.bucket_blocks == 0 {
            return Err(Error::InvalidParameter {
                name: "bucket_blocks",
                value: "0".to_string(),
                expected: "at least 1",
            });
        }
        Ok(())
    }

    /// Sampling threshold (on a 64-bit hash) for a table of `n` records.
    fn threshold(&self, n: u64) -> u64 {
        let rate = if n == 0 {
            1.0
        } else {
            self.sample_rate.max(MIN_SAMPLE as f64 / n as f64).min(1.0)
        };
        if rate >= 1.0 {
            u64::MAX
        } else {
            (rate * u64::MAX as f64) as u64
        }
    }
}

/// splitmix64's finalizer: a fixed, well-mixed hash of the record index.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether record `index` of the table tagged `table` is in the sample.
#[inline]
fn sampled(seed: u64, table: u64, index: u64, threshold: u64) -> bool {
    threshold == u64::MAX
        || mix(seed
            ^ table.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ index.wrapping_mul(0xd6e8_feb8_6659_fd93))
            <= threshold
}

/// Appends to `sample` the keys of the sampled records among those `scan` yields (`index`,
/// record bytes, key first). `table` tags the table so two tables get independent samples.
/// Keys that cannot be ordered (NaN) are [`Error::InvalidKey`].
pub fn sample_keys<K: Key>(
    params: &LearnedPartitionParams,
    table: u64,
    n: u64,
    sample: &mut Vec<K>,
    scan: impl FnOnce(&mut RecordVisitor<'_>) -> Result<()>,
) -> Result<()> {
    let threshold = params.threshold(n);
    scan(&mut |index, rec| {
        let key = K::read_from(&rec[..K::SIZE]);
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey {
                index: index as usize,
                reason,
            });
        }
        if sampled(params.seed, table, index, threshold) {
            sample.push(key);
        }
        Ok(())
    })
}

/// The partition function: model-space key to bucket, non-decreasing in the key.
#[derive(Debug, Clone)]
pub struct BucketMap {
    /// First model-space key of every bottom segment of the sample's PGM.
    first_keys: Vec<u64>,
    /// Per segment: its line and the rank range `[lo, hi]` its prediction is clamped to.
    models: Vec<(LinearModel, f64, f64)>,
    /// `buckets / sample length`: turns a sample rank into a bucket.
    scale: f64,
    buckets: usize,
    pgm_bytes: usize,
}

impl BucketMap {
    /// Fits the map on `sample` (sorted here) for `buckets` buckets.
    pub fn fit<K: Key>(sample: &mut [K], buckets: usize, eps: usize) -> Result<BucketMap> {
        let buckets = buckets.max(1);
        sample.sort_unstable_by(|a, b| a.key_cmp(b));
        if sample.is_empty() || buckets == 1 {
            return Ok(BucketMap {
                first_keys: Vec::new(),
                models: Vec::new(),
                scale: 0.0,
                buckets,
                pgm_bytes: 0,
            });
        }
        let pgm = Pgm::build(sample, PgmParams::new(eps, 8))?;
        let segments = pgm.segments();
        let n = sample.len() as f64;
        let models = segments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let hi = segments.get(i + 1).map_or(n, |next| next.first_rank as f64);
                (s.model, s.first_rank as f64, hi)
            })
            .collect();
        Ok(BucketMap {
            first_keys: segments.iter().map(|s| s.first_key).collect(),
            models,
            scale: buckets as f64 / n,
            buckets,
            pgm_bytes: pgm.size_in_bytes(),
        })
    }

    /// Number of buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Segments of the fitted model.
    pub fn segments(&self) -> usize {
        self.first_keys.len()
    }

    /// Bytes of the map in memory, plus the PGM it was taken from (which the fit held).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.first_keys.capacity() * 8
            + self.models.capacity() * std::mem::size_of::<(LinearModel, f64, f64)>()
            + self.pgm_bytes
    }

    /// The bucket of model-space key `v`.
    #[inline]
    pub fn bucket(&self, v: u64) -> usize {
        if self.first_keys.is_empty() {
            return 0;
        }
        let i = self
            .first_keys
            .partition_point(|&f| f <= v)
            .saturating_sub(1);
        let (model, lo, hi) = self.models[i];
        let rank = model.predict(v).clamp(lo, hi);
        ((rank * self.scale) as usize).min(self.buckets - 1)
    }
}

/// One run of a partitioned table: records in bucket order from `first_block` on.
#[derive(Debug, Clone)]
struct Run {
    first_block: u64,
    /// `offsets[b]..offsets[b + 1]`: bucket `b`'s records, numbered from the run's start.
    offsets: Vec<u64>,
}

impl Run {
    fn records(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }
}

/// One table partitioned into buckets: its bucket file (a device) and the runs' directory.
pub struct Partitioned {
    device: Arc<dyn BlockDevice>,
    record_size: usize,
    per_block: usize,
    buckets: usize,
    runs: Vec<Run>,
    records: u64,
}

impl std::fmt::Debug for Partitioned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitioned")
            .field("file", &self.device.name())
            .field("record_size", &self.record_size)
            .field("buckets", &self.buckets)
            .field("runs", &self.runs.len())
            .field("records", &self.records)
            .finish()
    }
}

impl Partitioned {
    /// Records in bucket `b`.
    pub fn bucket_len(&self, b: usize) -> u64 {
        self.runs
            .iter()
            .map(|r| r.offsets[b + 1] - r.offsets[b])
            .sum()
    }

    /// Number of buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Number of runs written (1 when the table fit the arena).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Records partitioned.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Size of a record in bytes.
    pub fn record_size(&self) -> usize {
        self.record_size
    }

    /// Bytes of the directory in memory.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .runs
                .iter()
                .map(|r| std::mem::size_of::<Run>() + r.offsets.capacity() * 8)
                .sum::<usize>()
    }

    /// Bytes of the bucket file.
    pub fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }

    /// Size of the largest bucket, in records.
    pub fn largest_bucket(&self) -> u64 {
        (0..self.buckets)
            .map(|b| self.bucket_len(b))
            .max()
            .unwrap_or(0)
    }
}

/// Writes records packed `per_block` to a block, in requests of [`WRITE_BATCH_BLOCKS`] blocks.
struct RunWriter {
    device: Arc<dyn BlockDevice>,
    buf: AlignedBuf,
    block_size: usize,
    record_size: usize,
    per_block: usize,
    /// Complete blocks in `buf`.
    filled: usize,
    /// Records in the block being filled.
    slot: usize,
    /// Device block of `buf`'s first block.
    next: u64,
}

impl RunWriter {
    fn push(&mut self, rec: &[u8]) -> Result<()> {
        let at = self.filled * self.block_size + self.slot * self.record_size;
        self.buf[at..at + self.record_size].copy_from_slice(rec);
        self.slot += 1;
        if self.slot == self.per_block {
            self.close_block();
            if self.filled == WRITE_BATCH_BLOCKS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Zeroes the unused tail of the block being filled and counts it as complete.
    fn close_block(&mut self) {
        let start = self.filled * self.block_size + self.slot * self.record_size;
        let end = (self.filled + 1) * self.block_size;
        self.buf[start..end].fill(0);
        self.filled += 1;
        self.slot = 0;
    }

    /// Ends the run: its last block is padded, everything is written.
    fn end_run(&mut self) -> Result<()> {
        if self.slot > 0 {
            self.close_block();
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        if self.filled > 0 {
            let len = self.filled * self.block_size;
            self.device
                .write_blocks(self.next, &mut self.buf[..len], IoClass::Data)?;
            self.next += self.filled as u64;
            self.filled = 0;
        }
        Ok(())
    }

    /// Block where the next run starts (after `end_run`).
    fn position(&self) -> u64 {
        self.next + self.filled as u64
    }
}

/// Bytes of memory the partitioning pass needs besides its arena and directories.
pub fn partition_overhead(block_size: usize) -> usize {
    WRITE_BATCH_BLOCKS * block_size
}

/// Bytes the arena needs per buffered record of `record_size` bytes (record, bucket id, and its
/// slot in the counting sort).
pub fn arena_bytes_per_record(record_size: usize) -> usize {
    record_size + 8
}

/// The partitioning pass: every record `scan` yields goes to its bucket under `map`, buffered
/// in an arena of `arena_records` records and written to `device` (created empty by the
/// caller) one run per full arena. Records are `record_size` bytes, key first.
pub fn partition<K: Key>(
    device: Arc<dyn BlockDevice>,
    map: &BucketMap,
    record_size: usize,
    arena_records: usize,
    scan: impl FnOnce(&mut RecordVisitor<'_>) -> Result<()>,
) -> Result<Partitioned> {
    let per_block = device.payload_size() / record_size;
    if per_block == 0 || arena_records == 0 {
        return Err(Error::InvalidParameter {
            name: "memory",
            value: format!("{arena_records} records of {record_size} bytes buffered"),
            expected: "room for at least one record in the partition arena, and records no \
                       larger than a block",
        });
    }
    let block_size = device.block_size();
    let buckets = map.buckets();
    let mut writer = RunWriter {
        device: Arc::clone(&device),
        buf: AlignedBuf::zeroed(WRITE_BATCH_BLOCKS * block_size),
        block_size,
        record_size,
        per_block,
        filled: 0,
        slot: 0,
        next: 0,
    };
    let mut arena: Vec<u8> = Vec::with_capacity(arena_records * record_size);
    let mut ids: Vec<u32> = Vec::with_capacity(arena_records);
    let mut order: Vec<u32> = Vec::new();
    let mut counts = vec![0u64; buckets + 1];
    let mut runs = Vec::new();
    let mut records = 0u64;
    let mut write_run = |arena: &mut Vec<u8>,
                         ids: &mut Vec<u32>,
                         runs: &mut Vec<Run>,
                         writer: &mut RunWriter|
     -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        counts.fill(0);
        for &b in ids.iter() {
            counts[b as usize + 1] += 1;
        }
        for b in 0..buckets {
            counts[b + 1] += counts[b];
        }
        let offsets = counts.clone();
        order.clear();
        order.resize(ids.len(), 0);
        for (i, &b) in ids.iter().enumerate() {
            let at = &mut counts[b as usize];
            order[*at as usize] = i as u32;
            *at += 1;
        }
        let first_block = writer.position();
        for &i in order.iter() {
            let at = i as usize * record_size;
            writer.push(&arena[at..at + record_size])?;
        }
        writer.end_run()?;
        runs.push(Run {
            first_block,
            offsets,
        });
        arena.clear();
        ids.clear();
        Ok(())
    };
    scan(&mut |_, rec| {
        let key = K::read_from(&rec[..K::SIZE]);
        ids.push(map.bucket(key.to_model()) as u32);
        arena.extend_from_slice(&rec[..record_size]);
        records += 1;
        if ids.len() == arena_records {
            write_run(&mut arena, &mut ids, &mut runs, &mut writer)?;
        }
        Ok(())
    })?;
    write_run(&mut arena, &mut ids, &mut runs, &mut writer)?;
    Ok(Partitioned {
        device,
        record_size,
        per_block,
        buckets,
        runs,
        records,
    })
}

/// A read-ahead window over one run.
struct Window {
    buf: AlignedBuf,
    first: u64,
    blocks: usize,
}

/// Reads the buckets of a [`Partitioned`] table: one read-ahead window per run, each read
/// forward from the first block a bucket needs, up to `window_blocks` blocks per request.
pub struct BucketReader<'p> {
    part: &'p Partitioned,
    windows: Vec<Window>,
    window_blocks: usize,
}

impl<'p> BucketReader<'p> {
    /// A reader of `part` with windows of `window_blocks` blocks (1 to
    /// [`MAX_WINDOW_BLOCKS`]).
    pub fn new(part: &'p Partitioned, window_blocks: usize) -> Self {
        let window_blocks = window_blocks.clamp(1, MAX_WINDOW_BLOCKS);
        let block_size = part.device.block_size();
        let windows = part
            .runs
            .iter()
            .map(|_| Window {
                buf: AlignedBuf::zeroed(window_blocks * block_size),
                first: 0,
                blocks: 0,
            })
            .collect();
        BucketReader {
            part,
            windows,
            window_blocks,
        }
    }

    /// Bytes of memory the windows take for `runs` runs.
    pub fn memory_bytes_for(runs: usize, window_blocks: usize, block_size: usize) -> usize {
        runs * window_blocks.clamp(1, MAX_WINDOW_BLOCKS) * block_size
    }

    /// Calls `f` on every record of bucket `b`, run by run.
    pub fn for_each(&mut self, b: usize, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let part = self.part;
        let block_size = part.device.block_size();
        let rs = part.record_size;
        let pb = part.per_block as u64;
        for (run, window) in part.runs.iter().zip(self.windows.iter_mut()) {
            let end_block = run.first_block + run.records().div_ceil(pb);
            for idx in run.offsets[b]..run.offsets[b + 1] {
                let block = run.first_block + idx / pb;
                if block < window.first || block >= window.first + window.blocks as u64 {
                    let blocks = (end_block - block).min(self.window_blocks as u64) as usize;
                    part.device.read_blocks(
                        block,
                        &mut window.buf[..blocks * block_size],
                        IoClass::Data,
                    )?;
                    window.first = block;
                    window.blocks = blocks;
                }
                let at = (block - window.first) as usize * block_size + (idx % pb) as usize * rs;
                f(&window.buf[at..at + rs])?;
            }
        }
        Ok(())
    }

    /// Appends every record of bucket `b` to `out`.
    pub fn load(&mut self, b: usize, out: &mut Vec<u8>) -> Result<()> {
        self.for_each(b, |rec| {
            out.extend_from_slice(rec);
            Ok(())
        })
    }
}

/// Records of one side, with their keys in sorted order.
fn sort_records<K: Key>(recs: &[u8], rs: usize, index: &mut Vec<(K, u32)>) {
    index.clear();
    index.extend(
        recs.chunks_exact(rs)
            .enumerate()
            .map(|(i, r)| (K::read_from(&r[..K::SIZE]), i as u32)),
    );
    index.sort_unstable_by(|a, b| {
        a.0.key_cmp(&b.0).then_with(|| {
            let (x, y) = (a.1 as usize * rs, b.1 as usize * rs);
            recs[x..x + rs].cmp(&recs[y..y + rs])
        })
    });
}

/// Reusable buffers of [`join_bucket`].
pub struct JoinScratch<K> {
    left: Vec<u8>,
    right: Vec<u8>,
    left_index: Vec<(K, u32)>,
    right_index: Vec<(K, u32)>,
}

impl<K> Default for JoinScratch<K> {
    fn default() -> Self {
        JoinScratch {
            left: Vec::new(),
            right: Vec::new(),
            left_index: Vec::new(),
            right_index: Vec::new(),
        }
    }
}

/// Bytes of memory one buffered record of a bucket pair costs in [`join_bucket`].
pub fn join_bytes_per_record<K: Key>(record_size: usize) -> usize {
    record_size + std::mem::size_of::<(K, u32)>()
}

/// Sorts the two sides and emits every pair of records with equal keys, in key order.
fn merge<K: Key>(
    s: &mut JoinScratch<K>,
    lrs: usize,
    rrs: usize,
    emit: &mut Emit<'_, K>,
) -> Result<()> {
    sort_records(&s.left, lrs, &mut s.left_index);
    sort_records(&s.right, rrs, &mut s.right_index);
    let (li, ri) = (&s.left_index, &s.right_index);
    let (mut i, mut j) = (0, 0);
    while i < li.len() && j < ri.len() {
        match li[i].0.key_cmp(&ri[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let key = li[i].0;
                let i_end = i + li[i..]
                    .iter()
                    .take_while(|e| e.0.key_cmp(&key).is_eq())
                    .count();
                let j_end = j + ri[j..]
                    .iter()
                    .take_while(|e| e.0.key_cmp(&key).is_eq())
                    .count();
                for &(_, l) in &li[i..i_end] {
                    let l = &s.left[l as usize * lrs..(l as usize + 1) * lrs];
                    for &(_, r) in &ri[j..j_end] {
                        emit(&key, l, &s.right[r as usize * rrs..(r as usize + 1) * rrs])?;
                    }
                }
                i = i_end;
                j = j_end;
            }
        }
    }
    Ok(())
}

/// The key at which to cut the kept records of both sides so that fewer remain: their median,
/// or, when the median is the smallest kept key, the next larger key. `None` when every kept
/// record has the same key.
fn cut_key<K: Key>(s: &JoinScratch<K>, lrs: usize, rrs: usize) -> Option<K> {
    let mut keys: Vec<K> = s
        .left
        .chunks_exact(lrs)
        .map(|r| K::read_from(&r[..K::SIZE]))
        .chain(
            s.right
                .chunks_exact(rrs)
                .map(|r| K::read_from(&r[..K::SIZE])),
        )
        .collect();
    let mid = keys.len() / 2;
    let (below, median, _) = keys.select_nth_unstable_by(mid, |a, b| a.key_cmp(b));
    let median = *median;
    if below.iter().any(|k| k.key_lt(&median)) {
        return Some(median);
    }
    keys.iter()
        .filter(|k| median.key_lt(k))
        .min_by(|a, b| a.key_cmp(b))
        .copied()
}

fn retain_below<K: Key>(recs: &mut Vec<u8>, rs: usize, hi: &K) {
    let mut w = 0;
    for r in 0..recs.len() / rs {
        let at = r * rs;
        if K::read_from(&recs[at..at + K::SIZE]).key_lt(hi) {
            recs.copy_within(at..at + rs, w);
            w += rs;
        }
    }
    recs.truncate(w);
}

/// Joins bucket `b` of `left` with bucket `b` of `right`, calling `emit(key, left record,
/// right record)` for every match in key order. At most `cap` records (both sides together)
/// are held; a larger pair is joined in key sub-ranges (see the module docs).
pub fn join_bucket<'p, K: Key>(
    left: &mut BucketReader<'p>,
    right: &mut BucketReader<'p>,
    b: usize,
    cap: usize,
    scratch: &mut JoinScratch<K>,
    emit: &mut Emit<'_, K>,
) -> Result<()> {
    let (lrs, rrs) = (left.part.record_size, right.part.record_size);
    let (ln, rn) = (left.part.bucket_len(b), right.part.bucket_len(b));
    if ln == 0 || rn == 0 {
        return Ok(());
    }
    scratch.left.clear();
    scratch.right.clear();
    if ln + rn <= cap as u64 {
        left.load(b, &mut scratch.left)?;
        right.load(b, &mut scratch.right)?;
        return merge(scratch, lrs, rrs, emit);
    }
    let cap = cap.max(2);
    let mut lo: Option<K> = None;
    loop {
        let mut hi: Option<K> = None;
        scratch.left.clear();
        scratch.right.clear();
        for side in [0, 1] {
            let reader = if side == 0 { &mut *left } else { &mut *right };
            reader.for_each(b, |rec| {
                let key = K::read_from(&rec[..K::SIZE]);
                if lo.is_some_and(|lo| key.key_lt(&lo)) || hi.is_some_and(|hi| !key.key_lt(&hi)) {
                    return Ok(());
                }
                let out = if side == 0 {
                    &mut scratch.left
                } else {
                    &mut scratch.right
                };
                out.extend_from_slice(rec);
                if scratch.left.len() / lrs + scratch.right.len() / rrs > cap {
                    let cut =
                        cut_key(scratch, lrs, rrs).ok_or_else(|| Error::InvalidParameter {
                            name: "memory",
                            value: format!("{cap} records for one bucket pair"),
                            expected: "room for every record of one key in both tables together",
                        })?;
                    retain_below(&mut scratch.left, lrs, &cut);
                    retain_below(&mut scratch.right, rrs, &cut);
                    hi = Some(cut);
                }
                Ok(())
            })?;
        }
        merge(scratch, lrs, rrs, emit)?;
        match hi {
            Some(h) => lo = Some(h),
            None => return Ok(()),
        }
    }
}

fn scan_records<K: TableKey>(table: &Table<K>, f: &mut RecordVisitor<'_>) -> Result<()> {
    let mut scan = table.scan(0..table.len())?;
    while scan.key().is_some() {
        f(scan.position(), scan.record())?;
        scan.advance()?;
    }
    Ok(())
}

fn too_little_memory(memory: usize, what: &str) -> Error {
    Error::InvalidParameter {
        name: "memory",
        value: format!("{memory} bytes ({what})"),
        expected: "a budget above the sample, the model, the run directories and the I/O \
                   buffers of the learned route (a few MiB for small tables)",
    }
}

/// Records the partition arena of a table of `n` records can buffer within `avail` bytes,
/// keeping room for the run directories it will write.
fn arena_records(avail: usize, n: u64, record_size: usize, buckets: usize) -> Option<usize> {
    let per = arena_bytes_per_record(record_size);
    let dir_per_run = (buckets + 1) * 8;
    let runs = (n as usize * per).div_ceil(avail.max(1)) + 1;
    let arena = avail.checked_sub(runs * dir_per_run)?;
    let records = (arena / per).min(n.max(1) as usize);
    (records > 0).then_some(records)
}

/// Splits buckets `0..weights.len()` into `parts` contiguous ranges of about equal weight.
fn split_ranges(weights: &[u64], parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: u64 = weights.iter().sum();
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut acc = 0u64;
    for (b, w) in weights.iter().enumerate() {
        acc += w;
        let done = ranges.len() as u64 + 1;
        if ranges.len() + 1 < parts && acc * parts as u64 >= total * done {
            ranges.push(start..b + 1);
            start = b + 1;
        }
    }
    ranges.push(start..weights.len());
    while ranges.len() < parts {
        ranges.push(weights.len()..weights.len());
    }
    ranges
}

/// Both tables partitioned: the index of the learned route.
struct Prepared {
    parts: (Partitioned, Partitioned),
    /// Bytes held in memory: the map and both directories.
    held: usize,
}

/// Samples both tables, fits the map and partitions both into the files `names` of `storage`
/// within `memory` bytes.
fn prepare<K: TableKey>(
    storage: &Storage,
    (lt, rt): (&Table<K>, &Table<K>),
    names: &(String, String),
    memory: usize,
    params: &LearnedPartitionParams,
) -> Result<Prepared> {
    params.check()?;
    let bs = storage.block_size();
    let scan_bytes = lt.scan_memory().max(rt.scan_memory());
    let mut sample = Vec::new();
    sample_keys::<K>(params, 0, lt.len(), &mut sample, |f| scan_records(lt, f))?;
    sample_keys::<K>(params, 1, rt.len(), &mut sample, |f| scan_records(rt, f))?;
    if sample.capacity() * K::SIZE + scan_bytes > memory {
        return Err(too_little_memory(memory, "the sample does not fit"));
    }
    let larger = if lt.len() >= rt.len() { lt } else { rt };
    let per_bucket = (larger.records_per_block() * params.bucket_blocks) as u64;
    let buckets = larger.len().div_ceil(per_bucket).clamp(1, u32::MAX as u64) as usize;
    let map = BucketMap::fit(&mut sample, buckets, params.eps)?;
    drop(sample);
    let mut held = map.memory_bytes();
    let mut parts = Vec::with_capacity(2);
    for (table, name) in [(lt, &names.0), (rt, &names.1)] {
        let records = memory
            .checked_sub(held + scan_bytes + partition_overhead(bs))
            .and_then(|avail| arena_records(avail, table.len(), table.record_size(), buckets))
            .ok_or_else(|| too_little_memory(memory, "no room for a partition arena"))?;
        let part = partition::<K>(
            storage.create(name)?,
            &map,
            table.record_size(),
            records,
            |f| scan_records(table, f),
        )?;
        held += part.memory_bytes();
        parts.push(part);
    }
    let right = parts.pop().expect("two tables");
    let left = parts.pop().expect("two tables");
    // The map is no longer needed: bucket ids are positions in the directories.
    held -= map.memory_bytes();
    Ok(Prepared {
        parts: (left, right),
        held,
    })
}

/// How the join phase spends the budget.
struct Plan {
    window: usize,
    cap: usize,
    output_blocks: usize,
    ranges: Vec<std::ops::Range<usize>>,
}

impl Prepared {
    fn plan<K: Key>(&self, threads: usize, memory: usize, block_size: usize) -> Result<Plan> {
        let (lp, rp) = (&self.parts.0, &self.parts.1);
        let per_thread = memory.saturating_sub(self.held) / threads.max(1);
        let runs = lp.runs() + rp.runs();
        let window = (per_thread / 4 / (runs.max(1) * block_size)).clamp(1, MAX_WINDOW_BLOCKS);
        let readers = BucketReader::memory_bytes_for(runs, window, block_size);
        let per_record =
            lp.record_size().max(rp.record_size()) + std::mem::size_of::<(K, u32)>() + K::SIZE;
        // Each thread's output writer holds two buffers; a tight budget gets smaller ones.
        let output_blocks = (per_thread / 8 / block_size).clamp(1, WRITE_BLOCKS);
        let output = 2 * output_blocks * block_size;
        let cap = per_thread.saturating_sub(readers + output) / per_record;
        if cap < 2 {
            return Err(too_little_memory(memory, "no room to hold a bucket pair"));
        }
        let weights: Vec<u64> = (0..lp.buckets())
            .map(|b| lp.bucket_len(b) + rp.bucket_len(b))
            .collect();
        Ok(Plan {
            window,
            cap,
            output_blocks,
            ranges: split_ranges(&weights, threads.max(1)),
        })
    }

    /// Joins the bucket pairs of part `t` of `plan`.
    fn join_part<K: Key>(&self, plan: &Plan, t: usize, emit: &mut Emit<'_, K>) -> Result<()> {
        let mut a = BucketReader::new(&self.parts.0, plan.window);
        let mut b = BucketReader::new(&self.parts.1, plan.window);
        let mut scratch = JoinScratch::default();
        for bucket in plan.ranges[t].clone() {
            join_bucket(&mut a, &mut b, bucket, plan.cap, &mut scratch, emit)?;
        }
        Ok(())
    }
}

/// Runs the learned route for [`crate::join::join`]: samples, fits and partitions both tables
/// (timed as the index; the bucket files go beside the left table and are removed afterwards),
/// calls `before_join`, then joins the bucket pairs on `threads` threads, each a contiguous
/// range of pairs written as its own output part, so the output is in key order. `memory`
/// (default [`DEFAULT_MEMORY`]) bounds the sample, the directories and every buffer.
pub(crate) fn run<K: TableKey>(
    left: TableRef<'_>,
    right: TableRef<'_>,
    sides: &Sides<'_, K>,
    threads: usize,
    memory: Option<u64>,
    before_join: &mut dyn FnMut(),
) -> Result<(IndexLoad, (u64, u64))> {
    let (lt, rt) = if sides.outer_is_left {
        (sides.outer, sides.inner)
    } else {
        (sides.inner, sides.outer)
    };
    let memory = memory.unwrap_or(DEFAULT_MEMORY) as usize;
    let storage = left.storage;
    let names = (
        scratch_name(left.name, "left-buckets"),
        scratch_name(right.name, "right-buckets"),
    );
    let result = (|| {
        let started = Instant::now();
        let prepared = prepare(
            storage,
            (lt, rt),
            &names,
            memory,
            &LearnedPartitionParams::default(),
        )?;
        let load = IndexLoad {
            loaded: false,
            time: started.elapsed(),
            memory_bytes: prepared.held,
            file_bytes: prepared.parts.0.disk_bytes() + prepared.parts.1.disk_bytes(),
        };
        before_join();
        let plan = prepared.plan::<K>(threads, memory, storage.block_size())?;
        let sides = Sides {
            out: OutputSpec {
                write_blocks: plan.output_blocks,
                ..sides.out
            },
            ..*sides
        };
        let out = sides.write(plan.ranges.len(), |t, w| {
            prepared.join_part(&plan, t, &mut |k: &K, l: &[u8], r: &[u8]| {
                w.push(k, &l[K::SIZE..], &r[K::SIZE..])
            })
        })?;
        Ok((load, out))
    })();
    remove_scratch(storage, &names.0);
    remove_scratch(storage, &names.1);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Storage;

    fn records(keys: &[u64]) -> Vec<u8> {
        keys.iter()
            .flat_map(|k| {
                let mut r = [0u8; 16];
                r[..8].copy_from_slice(&k.to_le_bytes());
                r[8..].copy_from_slice(&(k ^ 0xabcd).to_le_bytes());
                r
            })
            .collect()
    }

    fn scan_of(recs: &[u8]) -> impl FnOnce(&mut RecordVisitor<'_>) -> Result<()> + '_ {
        move |f| {
            for (i, r) in recs.chunks_exact(16).enumerate() {
                f(i as u64, r)?;
            }
            Ok(())
        }
    }

    #[test]
    fn bucket_map_is_monotone_and_spreads() {
        let mut sample: Vec<u64> = (0..5000u64).map(|i| mix(i) >> 20).collect();
        let map = BucketMap::fit(&mut sample, 100, 4).unwrap();
        let mut prev = 0;
        let mut counts = [0usize; 100];
        for v in (0..(1u64 << 44)).step_by(1 << 30) {
            let b = map.bucket(v);
            assert!(b >= prev);
            prev = b;
        }
        for i in 0..50_000u64 {
            counts[map.bucket(mix(i + 1_000_000) >> 20)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 200 && c < 900), "{counts:?}");
    }

    proptest::proptest! {
        /// Buckets never decrease as keys grow and stay below the bucket count, for any sample
        /// (duplicates included) and any bucket count.
        #[test]
        fn bucket_map_is_monotone(
            mut sample in proptest::collection::vec(0u64..1 << 40, 0..400),
            mut probes in proptest::collection::vec(0u64..1 << 41, 1..200),
            buckets in 1usize..500,
            eps in 1usize..32,
        ) {
            let map = BucketMap::fit(&mut sample, buckets, eps).unwrap();
            probes.sort_unstable();
            let got: Vec<usize> = probes.iter().map(|&v| map.bucket(v)).collect();
            proptest::prop_assert!(got.windows(2).all(|w| w[0] <= w[1]));
            proptest::prop_assert!(got.iter().all(|&b| b < buckets));
        }
    }

    #[test]
    fn partition_then_join_small_arena_and_tiny_cap() {
        let storage = Storage::ram();
        let left_keys: Vec<u64> = (0..3000u64).map(|i| mix(i) % 10_000).collect();
        let right_keys: Vec<u64> = (0..2000u64).map(|i| mix(i + 77) % 10_000).collect();
        let (lr, rr) = (records(&left_keys), records(&right_keys));
        let params = LearnedPartitionParams::default();
        let mut sample = Vec::new();
        sample_keys::<u64>(&params, 0, 3000, &mut sample, scan_of(&lr)).unwrap();
        sample_keys::<u64>(&params, 1, 2000, &mut sample, scan_of(&rr)).unwrap();
        let map = BucketMap::fit(&mut sample, 20, 4).unwrap();
        let lp =
            partition::<u64>(storage.create("l").unwrap(), &map, 16, 700, scan_of(&lr)).unwrap();
        let rp =
            partition::<u64>(storage.create("r").unwrap(), &map, 16, 5000, scan_of(&rr)).unwrap();
        assert_eq!((lp.runs(), rp.runs()), (5, 1));
        let mut expected = Vec::new();
        for (i, l) in left_keys.iter().enumerate() {
            for (j, r) in right_keys.iter().enumerate() {
                if l == r {
                    expected.push((
                        *l,
                        lr[i * 16..i * 16 + 16].to_vec(),
                        rr[j * 16..j * 16 + 16].to_vec(),
                    ));
                }
            }
        }
        expected.sort();
        for cap in [usize::MAX / 2, 7] {
            let mut got = Vec::new();
            let (mut a, mut b) = (BucketReader::new(&lp, 2), BucketReader::new(&rp, 3));
            let mut scratch = JoinScratch::default();
            for bucket in 0..map.buckets() {
                join_bucket::<u64>(&mut a, &mut b, bucket, cap, &mut scratch, &mut |k, l, r| {
                    got.push((*k, l.to_vec(), r.to_vec()));
                    Ok(())
                })
                .unwrap();
            }
            assert_eq!(got, expected, "cap {cap}");
        }
    }

    #[test]
    fn one_key_larger_than_the_budget_is_refused() {
        let storage = Storage::ram();
        let recs = records(&[5; 10]);
        let map = BucketMap::fit::<u64>(&mut [5], 1, 4).unwrap();
        let lp =
            partition::<u64>(storage.create("l").unwrap(), &map, 16, 100, scan_of(&recs)).unwrap();
        let rp =
            partition::<u64>(storage.create("r").unwrap(), &map, 16, 100, scan_of(&recs)).unwrap();
        let (mut a, mut b) = (BucketReader::new(&lp, 1), BucketReader::new(&rp, 1));
        let err = join_bucket::<u64>(
            &mut a,
            &mut b,
            0,
            8,
            &mut JoinScratch::default(),
            &mut |_, _, _| Ok(()),
        );
        assert!(matches!(
            err,
            Err(Error::InvalidParameter { name: "memory", .. })
        ));
        let mut n = 0;
        join_bucket::<u64>(
            &mut a,
            &mut b,
            0,
            20,
            &mut JoinScratch::default(),
            &mut |_, _, _| {
                n += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(n, 100);
    }
}
