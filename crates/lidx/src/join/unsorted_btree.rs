//! The B+-tree route for joins on UNSORTED tables: an unclustered disk B+-tree (key → record
//! position) per table, built by streaming inserts; the smaller table's tree is scanned in key
//! order and the larger one's probed, so the output comes out sorted by key.
//!
//! Paper 000 §5.4 and §6.3: "build complete B-tree for each input table by sequentially
//! inserting keys along with a pointer to its location in the table"; nodes are 4 KiB, inner
//! nodes in memory, leaves on disk; "do a range scan on the B-tree on the smaller table ... for
//! each key ... check if it exists in the large table by querying the B-tree on the larger
//! table", and fetch the records of the matches through the pointers. The paper finds this
//! route's index build 4-8x slower than learned partitioning, because every insert rewrites a
//! leaf (write amplification).
//!
//! Ours: [`DiskBTree`] with every inner level resident ([`Resident::AllInner`]), 8-byte
//! payloads (the record position, little-endian), built from empty by
//! [`DiskBTree::insert`] in table order. The trees' files are opened through write-back LRU
//! page caches ([`crate::io::PageCache::write_back`]): an insert changes its leaf in the cache,
//! and a dirty leaf reaches the disk when it is evicted or when the build ends with a sync,
//! which is timed as part of the build (the index is not built until it is on disk). Why
//! write-back: the paper's tree writes through the OS page cache, which the kernel flushes
//! later (§6.3 names the kernel's pressure "to flush writes out back to disk" under the memory
//! limit). A write-through tree that writes every insert's leaf with `O_DIRECT` was 300-500x
//! slower to build than learned partitioning, where the paper saw 4-8x: a strawman, not the
//! baseline. Write amplification remains, bounded by the cache: a leaf is written once per
//! eviction, not once per insert. The matched records are read through a second LRU over each
//! table. The memory budget is split in halves: one for the two trees (their resident inner
//! nodes, estimated before the build from the leaf and inner capacities at 69% fill, the
//! expected fill under random inserts, plus their caches), one for the two tables' caches
//! (shared in proportion to their sizes). What we do differently, and why:
//!
//! * Keys must be unique within each table: a tree is a map, and a second record with the same
//!   key is reported as [`Error::DuplicateKey`] during the build instead of being lost. The
//!   learned route ([`super::learned_partition`]) accepts duplicates.
//! * One thread: the work is a scan of one tree and ordered probes into the other; splitting it
//!   would need key ranges of a tree the paper's setup does not have. The learned route runs
//!   its bucket pairs on threads.
//! * The trees are files of the join's scratch storage, named per process and call
//!   ([`scratch_name`], so joins sharing a scratch storage do not collide; never beside the
//!   tables under names derived from theirs, issue 30) and removed after the join, like the
//!   bucket files of the learned route: both routes count building their indexes as part of
//!   the join (reported apart, as `index_seconds`).

use std::time::Instant;

use crate::disk::btree::{DiskBTree, DiskBTreeParams, Resident};
use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, DeviceKind, IoClass, IoStats, PageCache, Storage};
use crate::join::scratch::{remove_scratch, scratch_name};
use crate::join::sides::{Sides, TableRef};
use crate::join::table::{Table, TableKey};
use crate::join::table_index::IndexLoad;
use crate::key::Key;

/// Expected fill of B+-tree nodes built by random inserts (Yao's `ln 2`).
const RANDOM_INSERT_FILL: f64 = 0.69;

/// Entries a leaf scan of the smaller tree returns per call.
const SCAN_BATCH: usize = 4096;

/// A storage on `base`'s directory (the join's scratch storage: same device kind and block
/// size) whose files go through a write-back LRU cache of `cache_blocks` blocks each.
pub(crate) fn work_storage(base: &Storage, cache_blocks: usize) -> Result<Storage> {
    let storage = match (base.dir(), base.kind()) {
        (Some(dir), kind) => Storage::new(dir, kind.clone(), base.block_size())?,
        (None, DeviceKind::Sim(profile)) => Storage::in_memory(profile.clone(), base.block_size())?,
        (None, DeviceKind::File { .. } | DeviceKind::FileCached) => {
            return Err(Error::InvalidParameter {
                name: "storage",
                value: "a file device without a directory".to_string(),
                expected: "a storage with a directory, or an in-memory one",
            })
        }
    };
    Ok(storage.with_write_back_cache(cache_blocks))
}

/// Reads single records of a table by position, one block per request, through an LRU cache.
/// Relies on the table layout of [`crate::join::table`]: record `i` is in block
/// `1 + i / per_block` at byte `(i % per_block) * record_size`.
pub(crate) struct RecordFetcher {
    device: PageCache,
    per_block: u64,
    record_size: usize,
    buf: AlignedBuf,
    held: Option<u64>,
}

impl RecordFetcher {
    /// A fetcher of the table `at` (already opened as `table`) with a cache of `cache_blocks`
    /// blocks.
    pub(crate) fn new<K: TableKey>(
        at: TableRef<'_>,
        table: &Table<K>,
        cache_blocks: usize,
    ) -> Result<Self> {
        let device = at.storage.open(at.name, false)?;
        let block_size = device.block_size();
        Ok(RecordFetcher {
            device: PageCache::new(device, cache_blocks),
            per_block: table.records_per_block() as u64,
            record_size: table.record_size(),
            buf: AlignedBuf::zeroed(block_size),
            held: None,
        })
    }

    /// The bytes of record `pos` (key then value).
    pub(crate) fn record(&mut self, pos: u64) -> Result<&[u8]> {
        let block = 1 + pos / self.per_block;
        if self.held != Some(block) {
            self.held = None;
            self.device
                .read_blocks(block, &mut self.buf, IoClass::Data)?;
            self.held = Some(block);
        }
        let at = (pos % self.per_block) as usize * self.record_size;
        Ok(&self.buf[at..at + self.record_size])
    }
}

/// Builds the unclustered tree `name` in `work` over `table`: one [`DiskBTree::insert`] per
/// record, in table order, with the record's position as payload; ends with
/// [`DiskBTree::flush`], which syncs the device (through a write-back cache: writes every dirty
/// block), so the tree is on disk when this returns and a write error is returned here.
pub(crate) fn build_position_tree<K: TableKey>(
    work: &Storage,
    name: &str,
    table: &Table<K>,
) -> Result<DiskBTree<K>> {
    let params = DiskBTreeParams {
        payload_size: 8,
        fill_factor: 1.0,
        resident: Resident::AllInner,
    };
    let mut tree = DiskBTree::build(work, name, &[], |_, _, _| {}, params)?;
    let mut scan = table.scan(0..table.len())?;
    while let Some(key) = scan.key() {
        let pos = scan.position();
        if tree.insert(key, &pos.to_le_bytes())? {
            return Err(Error::DuplicateKey {
                index: pos as usize,
                key: format!("{key:?}"),
            });
        }
        scan.advance()?;
    }
    tree.flush()?;
    Ok(tree)
}

/// Bytes the resident inner nodes of a position tree over `n` keys are expected to take.
fn inner_estimate<K: Key>(n: u64, block_size: usize) -> usize {
    let entry = (K::SIZE + 8) as f64;
    let leaf_cap = block_size as f64 / entry;
    let inner_cap = block_size as f64 / entry;
    let leaves = n as f64 / (leaf_cap * RANDOM_INSERT_FILL);
    let mut level = leaves;
    let mut blocks = 0.0;
    while level > 1.0 {
        level /= inner_cap * RANDOM_INSERT_FILL;
        blocks += level.ceil();
    }
    (blocks * block_size as f64) as usize
}

/// How the B+-tree route spends a memory budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BTreeBudget {
    /// Cache blocks of each tree file.
    pub tree_cache_blocks: usize,
    /// Cache blocks of the left and right tables' fetchers.
    pub table_cache_blocks: (usize, usize),
}

impl BTreeBudget {
    /// Splits `memory` bytes for tables of `left` and `right` records (see the module docs).
    /// [`Error::InvalidParameter`] when the budget cannot hold the expected inner nodes and one
    /// scan buffer.
    pub(crate) fn split<K: TableKey>(
        memory: usize,
        lt: &Table<K>,
        rt: &Table<K>,
        block_size: usize,
    ) -> Result<Self> {
        let (left, right) = (lt.len(), rt.len());
        let fixed = inner_estimate::<K>(left, block_size)
            + inner_estimate::<K>(right, block_size)
            + lt.scan_memory().max(rt.scan_memory());
        let half = memory / 2;
        if half <= fixed {
            return Err(Error::InvalidParameter {
                name: "memory",
                value: memory.to_string(),
                expected: "at least twice the trees' expected inner nodes plus a scan buffer",
            });
        }
        // Caches no larger than what they can hold: the larger tree's leaves, each table.
        let leaves = (left.max(right) as f64 * (K::SIZE + 8) as f64
            / (block_size as f64 * RANDOM_INSERT_FILL)) as usize
            + 2;
        let tree_cache_blocks = ((half - fixed) / (2 * block_size)).clamp(1, leaves);
        let tables = (half / block_size).max(2);
        let total = (lt.disk_bytes() + rt.disk_bytes()).max(1) as f64;
        let left_share = ((tables as f64 * lt.disk_bytes() as f64 / total) as usize).max(1);
        let blocks_of = |t: &Table<K>| (t.disk_bytes() / block_size as u64) as usize + 1;
        Ok(BTreeBudget {
            tree_cache_blocks,
            table_cache_blocks: (
                left_share.min(blocks_of(lt)),
                tables.saturating_sub(left_share).clamp(1, blocks_of(rt)),
            ),
        })
    }
}

/// Memory budget of the unsorted joins when none is given: 1 GiB.
pub(crate) const DEFAULT_MEMORY: u64 = 1 << 30;

/// Runs the B+-tree route for [`crate::join::join`]: builds both trees (timed as the index),
/// calls `before_join`, then scans the smaller tree in key order, probes the larger, fetches
/// both records of every match and writes `(key, left value, right value)` in key order.
/// Returns the index figures, `(count, checksum)` and the I/O of the tree files during the
/// join (the tables' and the output's I/O is counted by their storages).
pub(crate) fn run<K: TableKey>(
    left: TableRef<'_>,
    right: TableRef<'_>,
    sides: &Sides<'_, K>,
    memory: Option<u64>,
    before_join: &mut dyn FnMut(),
) -> Result<(IndexLoad, (u64, u64), IoStats)> {
    let (lt, rt) = if sides.outer_is_left {
        (sides.outer, sides.inner)
    } else {
        (sides.inner, sides.outer)
    };
    let memory = memory.unwrap_or(DEFAULT_MEMORY) as usize;
    let bs = left.storage.block_size();
    let budget = BTreeBudget::split::<K>(memory, lt, rt, bs)?;
    let work = work_storage(sides.out.scratch, budget.tree_cache_blocks)?;
    let names = (scratch_name("left-btree"), scratch_name("right-btree"));
    let result = (|| {
        let started = Instant::now();
        let lb = build_position_tree(&work, &names.0, lt)?;
        let rb = build_position_tree(&work, &names.1, rt)?;
        let load = IndexLoad {
            rebuilt: None,
            loaded: false,
            time: started.elapsed(),
            memory_bytes: lb.memory_bytes() + rb.memory_bytes(),
            file_bytes: lb.disk_bytes() + rb.disk_bytes(),
            unsaved: false,
        };
        before_join();
        let io_before = work.stats();
        let out = sides.write(1, |_, w| {
            let mut lf = RecordFetcher::new(left, lt, budget.table_cache_blocks.0)?;
            let mut rf = RecordFetcher::new(right, rt, budget.table_cache_blocks.1)?;
            scan_and_probe(&lb, &rb, lt.len() <= rt.len(), &mut |key, lpos, rpos| {
                let l = lf.record(lpos)?;
                let r = rf.record(rpos)?;
                w.push(key, &l[K::SIZE..], &r[K::SIZE..])
            })
        })?;
        Ok((load, out, work.stats() - io_before))
    })();
    remove_scratch(&work, &names.0);
    remove_scratch(&work, &names.1);
    result
}

/// Walks the smaller of the two trees in key order and probes the other; calls
/// `matched(key, left position, right position)` for every key in both.
fn scan_and_probe<K: Key>(
    left: &DiskBTree<K>,
    right: &DiskBTree<K>,
    scan_left: bool,
    matched: &mut dyn FnMut(&K, u64, u64) -> Result<()>,
) -> Result<()> {
    let (small, large) = if scan_left {
        (left, right)
    } else {
        (right, left)
    };
    let mut keys = Vec::with_capacity(SCAN_BATCH);
    let mut payloads = Vec::with_capacity(SCAN_BATCH * 8);
    let mut found = [0u8; 8];
    let mut start = K::MIN;
    let mut first = true;
    loop {
        keys.clear();
        payloads.clear();
        let n = small.scan(&start, SCAN_BATCH, &mut keys, &mut payloads)?;
        let skip = usize::from(!first && n > 0 && keys[0].key_cmp(&start).is_eq());
        for (i, key) in keys.iter().enumerate().take(n).skip(skip) {
            if !large.get(key, &mut found)? {
                continue;
            }
            let small_pos = u64::from_le_bytes(payloads[i * 8..i * 8 + 8].try_into().expect("8"));
            let large_pos = u64::from_le_bytes(found);
            if scan_left {
                matched(key, small_pos, large_pos)?;
            } else {
                matched(key, large_pos, small_pos)?;
            }
        }
        if n < SCAN_BATCH {
            return Ok(());
        }
        start = keys[n - 1];
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::table::TableWriter;
    use crate::join::{join, JoinAlgo, JoinParams};

    #[test]
    fn duplicates_are_refused_and_memory_checked() {
        let storage = Storage::ram();
        let mut w = TableWriter::<u64>::create(&storage, "d", 0).unwrap();
        for k in [3u64, 1, 3] {
            w.push(&k, &[]).unwrap();
        }
        w.finish().unwrap();
        let at = |name| TableRef {
            storage: &storage,
            name,
        };
        let mut params = JoinParams {
            algo: JoinAlgo::UnsortedBTree,
            ..JoinParams::default()
        };
        let err = join::<u64>(at("d"), at("d"), at("o"), &params);
        assert!(matches!(err, Err(Error::DuplicateKey { index: 2, .. })));
        params.memory = Some(1000);
        let err = join::<u64>(at("d"), at("d"), at("o"), &params);
        assert!(matches!(
            err,
            Err(Error::InvalidParameter { name: "memory", .. })
        ));
    }
}
