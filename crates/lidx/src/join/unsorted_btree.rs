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
//! [`DiskBTree::insert`] in table order. The trees' files are opened through an LRU page cache
//! (write-through: every insert still writes its leaf, which is the cost the paper measures),
//! and the matched records are read through a second LRU over each table. The memory budget is
//! split in halves: one for the two trees (their resident inner nodes, estimated before the
//! build from the leaf and inner capacities at 69% fill, the expected fill under random
//! inserts, plus their caches), one for the two tables' caches (shared in proportion to their
//! sizes). What we do differently, and why:
//!
//! * Keys must be unique within each table: a tree is a map, and a second record with the same
//!   key is reported as [`Error::DuplicateKey`] during the build instead of being lost. The
//!   learned route ([`super::learned_partition`]) accepts duplicates.
//! * One thread: the work is a scan of one tree and ordered probes into the other; splitting it
//!   would need key ranges of a tree the paper's setup does not have. The learned route runs
//!   its bucket pairs on threads.
//! * The trees are scratch files (removed after the join), like the bucket files of the learned
//!   route: both routes count building their indexes as part of the join (reported apart).

use std::path::PathBuf;

use crate::disk::btree::{DiskBTree, DiskBTreeParams, Resident};
use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, DeviceKind, IoClass, IoStats, PageCache, Storage};
use crate::join::table::{Table, TableKey, STREAM_BLOCKS};
use crate::key::Key;

/// Expected fill of B+-tree nodes built by random inserts (Yao's `ln 2`).
const RANDOM_INSERT_FILL: f64 = 0.69;

/// Entries a leaf scan of the smaller tree returns per call.
const SCAN_BATCH: usize = 4096;

/// A storage beside `base` (same directory, device kind and block size) whose files are read
/// through an LRU cache of `cache_blocks` blocks each: where a join keeps its scratch files.
pub fn work_storage(base: &Storage, cache_blocks: usize) -> Result<Storage> {
    let storage = match (base.dir(), base.kind()) {
        (Some(dir), kind) => Storage::new(dir, kind.clone(), base.block_size())?,
        (None, DeviceKind::Sim(profile)) => Storage::in_memory(profile.clone(), base.block_size())?,
        (None, DeviceKind::File { .. }) => {
            return Err(Error::InvalidParameter {
                name: "storage",
                value: "a file device without a directory".to_string(),
                expected: "a storage with a directory, or an in-memory one",
            })
        }
    };
    Ok(storage.with_cache_blocks(cache_blocks))
}

/// Removes the scratch file `name` of `storage` (nothing to do in memory).
pub fn remove_scratch(storage: &Storage, name: &str) {
    if let Some(dir) = storage.dir() {
        let path: PathBuf = dir.join(name);
        let _ = std::fs::remove_file(path);
    }
}

/// Reads single records of a table by position, one block per request, through an LRU cache.
/// Relies on the table layout of [`crate::join::table`]: record `i` is in block
/// `1 + i / per_block` at byte `(i % per_block) * record_size`.
pub struct RecordFetcher {
    device: PageCache,
    per_block: u64,
    record_size: usize,
    buf: AlignedBuf,
    held: Option<u64>,
}

impl RecordFetcher {
    /// A fetcher of the table `name` of `storage` (already opened as `table`) with a cache of
    /// `cache_blocks` blocks.
    pub fn new<K: TableKey>(
        storage: &Storage,
        name: &str,
        table: &Table<K>,
        cache_blocks: usize,
    ) -> Result<Self> {
        let device = storage.open(name, false)?;
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
    pub fn record(&mut self, pos: u64) -> Result<&[u8]> {
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

    /// Hits and misses of the cache.
    pub fn cache_stats(&self) -> IoStats {
        self.device.cache_stats()
    }
}

/// Builds the unclustered tree `name` in `work` over `table`: one [`DiskBTree::insert`] per
/// record, in table order, with the record's position as payload.
pub fn build_position_tree<K: TableKey>(
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
pub struct BTreeBudget {
    /// Cache blocks of each tree file.
    pub tree_cache_blocks: usize,
    /// Cache blocks of the left and right tables' fetchers.
    pub table_cache_blocks: (usize, usize),
}

impl BTreeBudget {
    /// Splits `memory` bytes for tables of `left` and `right` records (see the module docs).
    /// [`Error::InvalidParameter`] when the budget cannot hold the expected inner nodes and one
    /// scan buffer.
    pub fn split<K: Key>(memory: usize, left: u64, right: u64, block_size: usize) -> Result<Self> {
        let fixed = inner_estimate::<K>(left, block_size)
            + inner_estimate::<K>(right, block_size)
            + STREAM_BLOCKS * block_size;
        let half = memory / 2;
        if half <= fixed {
            return Err(Error::InvalidParameter {
                name: "memory",
                value: memory.to_string(),
                expected: "at least twice the trees' expected inner nodes plus a scan buffer",
            });
        }
        let tree_cache_blocks = ((half - fixed) / (2 * block_size)).max(1);
        let tables = (half / block_size).max(2);
        let total = (left + right).max(1) as f64;
        let left_blocks = ((tables as f64 * left as f64 / total) as usize).max(1);
        Ok(BTreeBudget {
            tree_cache_blocks,
            table_cache_blocks: (left_blocks, tables.saturating_sub(left_blocks).max(1)),
        })
    }
}

/// What the B+-tree route measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BTreeRouteStats {
    /// Seconds spent building both trees.
    pub index_seconds: f64,
    /// Seconds spent joining (scan, probes, record fetches, output).
    pub join_seconds: f64,
    /// Bytes of the two trees in memory (resident inner nodes), after the build.
    pub index_memory_bytes: usize,
    /// Bytes of the two tree files.
    pub index_disk_bytes: u64,
    /// I/O of the tree files (the tables' I/O is counted by their storage).
    pub index_io: IoStats,
    /// Output records.
    pub matches: u64,
}

/// Joins the unsorted tables `left` and `right` of `storage` by the B+-tree route, calling
/// `emit(key, left record, right record)` for every pair of records with equal keys, in key
/// order. `memory` bytes bound the trees' inner nodes and all caches (see [`BTreeBudget`]).
pub fn join_btree_route<K: TableKey>(
    storage: &Storage,
    left: &str,
    right: &str,
    memory: usize,
    emit: &mut dyn FnMut(&K, &[u8], &[u8]) -> Result<()>,
) -> Result<BTreeRouteStats> {
    let lt = Table::<K>::open(storage, left)?;
    let rt = Table::<K>::open(storage, right)?;
    let budget = BTreeBudget::split::<K>(memory, lt.len(), rt.len(), storage.block_size())?;
    let work = work_storage(storage, budget.tree_cache_blocks)?;
    let names = (
        format!("{left}.btree-route"),
        format!("{right}.btree-route"),
    );
    let result = run(
        storage,
        &work,
        (&lt, &rt),
        (left, right),
        &names,
        budget,
        emit,
    );
    remove_scratch(&work, &names.0);
    remove_scratch(&work, &names.1);
    result
}

fn run<K: TableKey>(
    storage: &Storage,
    work: &Storage,
    tables: (&Table<K>, &Table<K>),
    table_names: (&str, &str),
    names: &(String, String),
    budget: BTreeBudget,
    emit: &mut dyn FnMut(&K, &[u8], &[u8]) -> Result<()>,
) -> Result<BTreeRouteStats> {
    let started = std::time::Instant::now();
    let left_tree = build_position_tree(work, &names.0, tables.0)?;
    let right_tree = build_position_tree(work, &names.1, tables.1)?;
    let index_seconds = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let mut fetch = (
        RecordFetcher::new(
            storage,
            table_names.0,
            tables.0,
            budget.table_cache_blocks.0,
        )?,
        RecordFetcher::new(
            storage,
            table_names.1,
            tables.1,
            budget.table_cache_blocks.1,
        )?,
    );
    let left_smaller = tables.0.len() <= tables.1.len();
    let (small, large) = if left_smaller {
        (&left_tree, &right_tree)
    } else {
        (&right_tree, &left_tree)
    };
    let mut keys = Vec::with_capacity(SCAN_BATCH);
    let mut payloads = Vec::with_capacity(SCAN_BATCH * 8);
    let mut found = [0u8; 8];
    let mut start = K::MIN;
    let mut first = true;
    let mut matches = 0u64;
    loop {
        keys.clear();
        payloads.clear();
        let n = small.scan(&start, SCAN_BATCH, &mut keys, &mut payloads)?;
        let skip = usize::from(!first && n > 0 && keys[0].key_cmp(&start).is_eq());
        for i in skip..n {
            let key = keys[i];
            if !large.get(&key, &mut found)? {
                continue;
            }
            let small_pos = u64::from_le_bytes(payloads[i * 8..i * 8 + 8].try_into().expect("8"));
            let large_pos = u64::from_le_bytes(found);
            let (lpos, rpos) = if left_smaller {
                (small_pos, large_pos)
            } else {
                (large_pos, small_pos)
            };
            let lrec = fetch.0.record(lpos)?;
            let rrec = fetch.1.record(rpos)?;
            emit(&key, lrec, rrec)?;
            matches += 1;
        }
        if n < SCAN_BATCH {
            break;
        }
        start = keys[n - 1];
        first = false;
    }
    Ok(BTreeRouteStats {
        index_seconds,
        join_seconds: started.elapsed().as_secs_f64(),
        index_memory_bytes: left_tree.memory_bytes() + right_tree.memory_bytes(),
        index_disk_bytes: left_tree.disk_bytes() + right_tree.disk_bytes(),
        index_io: work.stats(),
        matches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::table::TableWriter;

    #[test]
    fn joins_in_key_order_and_refuses_duplicates() {
        let storage = Storage::ram();
        let mut w = TableWriter::<u64>::create(&storage, "l", 8).unwrap();
        for i in 0..5000u64 {
            let k = (i * 7919) % 5003;
            w.push(&k, &(k + 1).to_le_bytes()).unwrap();
        }
        w.finish().unwrap();
        let mut w = TableWriter::<u64>::create(&storage, "r", 4).unwrap();
        for i in 0..800u64 {
            let k = (i * 104_729) % 9001;
            w.push(&k, &(k as u32).to_le_bytes()).unwrap();
        }
        w.finish().unwrap();
        let mut got = Vec::new();
        let stats = join_btree_route::<u64>(&storage, "l", "r", 4 << 20, &mut |k, l, r| {
            got.push((*k, l.to_vec(), r.to_vec()));
            Ok(())
        })
        .unwrap();
        let right: std::collections::BTreeSet<u64> =
            (0..800u64).map(|i| (i * 104_729) % 9001).collect();
        let expected: Vec<u64> = right
            .into_iter()
            .filter(|k| *k < 5003 && (0..5000).any(|i| (i * 7919) % 5003 == *k))
            .collect();
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), expected);
        assert_eq!(stats.matches, expected.len() as u64);
        for (k, l, r) in &got {
            assert_eq!(&l[..8], &k.to_le_bytes());
            assert_eq!(&l[8..], &(k + 1).to_le_bytes());
            assert_eq!(&r[8..], &(*k as u32).to_le_bytes());
        }
        let mut w = TableWriter::<u64>::create(&storage, "d", 0).unwrap();
        for k in [3u64, 1, 3] {
            w.push(&k, &[]).unwrap();
        }
        w.finish().unwrap();
        let err = join_btree_route::<u64>(&storage, "d", "r", 4 << 20, &mut |_, _, _| Ok(()));
        assert!(matches!(err, Err(Error::DuplicateKey { index: 2, .. })));
    }
}
