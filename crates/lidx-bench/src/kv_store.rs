//! [`KvStore`]: what the YCSB runner ([`crate::kv_runner`]) needs of an updatable on-disk
//! index, and its implementations: the disk B+-tree baseline and the hybrid index.
//!
//! Paper 002 §10 compares its hybrid indexes with a disk B+-tree whose inner nodes stay in
//! memory (paper 003's "hybrid case"); that B+-tree's memory is the "equal memory" reference
//! the hybrid's budget is stated against. [`LockedBTree`] is that baseline:
//! [`DiskBTree`] takes `&mut self` to insert, so it sits behind a reader-writer lock (reads
//! share it, inserts hold it exclusively), the usual way a single-writer B+-tree is shared.
//! The hybrid index ([`lidx::kv::HybridIndex`]) is concurrent itself and needs no wrapper.
//!
//! [`StoreSpec`] names what to build (parsed from the command line) and builds it on a fresh
//! [`Storage`] from the initial keys, every payload [`crate::disk_workload::payload_of`] of
//! its key.

use std::sync::Arc;

use lidx::disk::btree::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::DiskIndex;
use lidx::io::Storage;
use lidx::key::Key;
use parking_lot::RwLock;

use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};

/// Merge figures of a store that merges in the background (zero for others).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Merges completed.
    pub merges: u64,
    /// Time spent merging, summed over merges, in ns.
    pub merge_nanos: u64,
    /// Writes that had to wait for a merge (the dynamic stage was full).
    pub write_stalls: u64,
}

/// An updatable on-disk key-value index, shared by the benchmark's threads.
pub trait KvStore<K: Key>: Send + Sync {
    /// Copies `key`'s payload into `payload` (exactly [`KvStore::payload_size`] bytes) and
    /// returns true, or returns false when the key is absent.
    fn get(&self, key: &K, payload: &mut [u8]) -> lidx::Result<bool>;
    /// Inserts `key` with `payload`, or replaces its payload.
    fn put(&self, key: K, payload: &[u8]) -> lidx::Result<()>;
    /// Bytes of payload per key.
    fn payload_size(&self) -> usize;
    /// Bytes held in memory (inner nodes, models, dynamic stages), exact.
    fn memory_bytes(&self) -> usize;
    /// Bytes of the store's files.
    fn disk_bytes(&self) -> u64;
    /// One line for reports.
    fn describe(&self) -> String;
    /// Merges and write stalls so far.
    fn merge_stats(&self) -> MergeStats {
        MergeStats::default()
    }
    /// Blocks until no background work is running or pending; surfaces its errors.
    fn wait_for_merges(&self) -> lidx::Result<()> {
        Ok(())
    }
}

/// The disk B+-tree behind a reader-writer lock: reads shared, inserts exclusive.
pub struct LockedBTree<K: Key> {
    tree: RwLock<DiskBTree<K>>,
}

impl<K: Key> LockedBTree<K> {
    /// Wraps an open, writable tree.
    pub fn new(tree: DiskBTree<K>) -> Self {
        LockedBTree {
            tree: RwLock::new(tree),
        }
    }
}

impl<K: Key> KvStore<K> for LockedBTree<K> {
    fn get(&self, key: &K, payload: &mut [u8]) -> lidx::Result<bool> {
        self.tree.read().get(key, payload)
    }

    fn put(&self, key: K, payload: &[u8]) -> lidx::Result<()> {
        self.tree.write().insert(key, payload).map(|_| ())
    }

    fn payload_size(&self) -> usize {
        self.tree.read().payload_size()
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<DiskBTree<K>>()
            + self.tree.read().memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.tree.read().disk_bytes()
    }

    fn describe(&self) -> String {
        self.tree.read().describe()
    }
}

/// The hybrid's memory budget: bytes, or a percentage of the equal-memory B+-tree's memory
/// in the same run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryBudget {
    /// Bytes (dynamic stage + static models).
    Bytes(u64),
    /// Percent of the all-inner B+-tree's memory.
    Percent(f64),
}

/// Accepted spellings of a memory budget.
pub const BUDGET_FORMS: &str = "bytes (1000000, 500K, 2M) or a percentage of the B+-tree's \
                                memory (10%)";

impl MemoryBudget {
    /// Parses `<bytes>` (with K/M/G suffixes, powers of 1000) or `<x>%` (x > 0).
    pub fn parse(spec: &str) -> Result<MemoryBudget> {
        let bad = || BenchError::BadSpec {
            what: "memory budget",
            got: spec.to_string(),
            expected: BUDGET_FORMS.to_string(),
        };
        let spec_t = spec.trim();
        if let Some(pct) = spec_t.strip_suffix('%') {
            let x: f64 = pct.parse().map_err(|_| bad())?;
            return if x.is_finite() && x > 0.0 {
                Ok(MemoryBudget::Percent(x))
            } else {
                Err(bad())
            };
        }
        match crate::count::parse_count(spec_t) {
            Some(n) if n > 0 => Ok(MemoryBudget::Bytes(n)),
            _ => Err(bad()),
        }
    }

    /// Parses a comma-separated list.
    pub fn parse_list(spec: &str) -> Result<Vec<MemoryBudget>> {
        spec.split(',').map(MemoryBudget::parse).collect()
    }

    /// Bytes, percentages taken of `btree_memory`.
    pub fn bytes(self, btree_memory: u64) -> u64 {
        match self {
            MemoryBudget::Bytes(n) => n,
            MemoryBudget::Percent(p) => (btree_memory as f64 * p / 100.0).round() as u64,
        }
    }

    /// `2000000` or `10%`.
    pub fn label(self) -> String {
        match self {
            MemoryBudget::Bytes(n) => n.to_string(),
            MemoryBudget::Percent(p) => format!("{p}%"),
        }
    }
}

/// What the runner builds on each fresh storage.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreSpec {
    /// The disk B+-tree with the `resident` top levels in memory.
    BTree {
        /// Levels kept in memory ([`Resident::AllInner`] is the equal-memory baseline).
        resident: Resident,
        /// Bulk-load fill factor in `(0, 1]`.
        fill_factor: f64,
    },
}

impl StoreSpec {
    /// The equal-memory baseline: every inner node resident, full leaves.
    pub fn baseline() -> StoreSpec {
        StoreSpec::BTree {
            resident: Resident::AllInner,
            fill_factor: 1.0,
        }
    }

    /// The label in reports, e.g. `btree:resident=inner`.
    pub fn label(&self) -> String {
        match self {
            StoreSpec::BTree {
                resident,
                fill_factor,
            } => {
                let resident = match resident {
                    Resident::None => "none".to_string(),
                    Resident::AllInner => "inner".to_string(),
                    Resident::TopLevels(k) => k.to_string(),
                };
                if *fill_factor == 1.0 {
                    format!("btree:resident={resident}")
                } else {
                    format!("btree:resident={resident},fill={fill_factor}")
                }
            }
        }
    }

    /// The budget in bytes this store is built with, if it takes one.
    pub fn memory_budget(&self) -> Option<u64> {
        match self {
            StoreSpec::BTree { .. } => None,
        }
    }

    /// The same store with percentage budgets turned into bytes of `btree_memory`.
    pub fn resolve(&self, btree_memory: u64) -> StoreSpec {
        let _ = btree_memory;
        self.clone()
    }

    /// The same store with `budget`, when it takes one.
    pub fn with_budget(&self, budget: MemoryBudget) -> StoreSpec {
        let _ = budget;
        self.clone()
    }

    /// Builds the store in `storage` from the sorted unique `keys`, `payload_size`-byte
    /// payloads derived from each key.
    pub fn build(
        &self,
        storage: Arc<Storage>,
        keys: &[u64],
        payload_size: usize,
    ) -> Result<Box<dyn KvStore<u64>>> {
        let payloads = |_: usize, key: &u64, out: &mut [u8]| payload_of(*key, out);
        match *self {
            StoreSpec::BTree {
                resident,
                fill_factor,
            } => {
                let params = DiskBTreeParams {
                    payload_size,
                    fill_factor,
                    resident,
                };
                let tree = DiskBTree::build(&storage, "btree", keys, payloads, params)?;
                Ok(Box::new(LockedBTree::new(tree)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locked_btree_reads_what_it_was_given_and_inserts() {
        let storage = Arc::new(Storage::ram());
        let keys: Vec<u64> = (0..5000).map(|i| i * 2).collect();
        let store = StoreSpec::baseline()
            .build(Arc::clone(&storage), &keys, 8)
            .unwrap();
        let (mut got, mut want) = ([0u8; 8], [0u8; 8]);
        assert!(store.get(&40, &mut got).unwrap());
        payload_of(40, &mut want);
        assert_eq!(got, want);
        assert!(!store.get(&41, &mut got).unwrap());
        payload_of(41, &mut want);
        store.put(41, &want).unwrap();
        assert!(store.get(&41, &mut got).unwrap());
        assert_eq!(got, want);
        assert!(store.memory_bytes() > 0 && store.disk_bytes() > 0);
        assert_eq!(store.merge_stats(), MergeStats::default());
        assert_eq!(StoreSpec::baseline().label(), "btree:resident=inner");
    }
}
