//! On-disk indexes: every structure whose data lives in blocks on a [`crate::io::BlockDevice`].
//!
//! Each one is opened from a [`crate::io::Storage`] (its files, its device kind, its cache),
//! answers lookups and scans through [`DiskIndex`], and reports what it keeps in memory and on
//! disk. Blocks read per operation, split into inner and leaf blocks as paper 003 Table 4 does,
//! come from the devices' own counters ([`crate::io::IoStats`] by [`crate::io::IoClass`]).
//!
//! `hybrid` holds the stages of paper 002's hybrid index (dynamic stage in memory, static
//! learned files on disk, the merge); the durable index built from them is
//! [`crate::kv::HybridIndex`].
//!
//! `byte_table` and `byte_btree` hold byte-string keys and values of any length: the
//! static stage and the B+-tree of the store's two engines (`crate::kv::store`).
//!
//! Every fixed-key index's header records the fingerprint of the keys it was built from
//! ([`keys_fingerprint`], [`DiskIndex::keys_fingerprint`]): a saved index is a
//! file derived from a dataset, and whoever opens it for one checks that binding with
//! [`check_built_from`] before trusting an answer (the key count alone binds nothing).
//!
//! Keys are unique in every on-disk index (map semantics): builders refuse duplicates with
//! [`crate::Error::DuplicateKey`]. The fixed-key indexes' payloads are fixed-size byte strings
//! (8 bytes by default).

pub(crate) mod alex;
pub(crate) mod block_batch;
pub(crate) mod bptree;
pub(crate) mod btree;
pub(crate) mod btree_learned;
pub(crate) mod byte_btree;
pub(crate) mod byte_table;
pub(crate) mod dpgm;
pub(crate) mod film;
pub(crate) mod fiting;
pub(crate) mod flagged_records;
pub(crate) mod header_fields;
pub(crate) mod hybrid;
pub(crate) mod lipp;
pub(crate) mod node_pages;
pub(crate) mod owner;
pub(crate) mod seq;
pub(crate) mod static_learned;
mod write_clock;

pub use crate::codec::keys_fingerprint;
pub use alex::{DiskAlex, DiskAlexParams, DiskAlexSmos};
pub use btree::{DiskBTree, DiskBTreeParams, Resident, TreeCheck};
pub use btree_learned::{BTreeLearned, BTreeLearnedParams};
pub use byte_btree::{BTreeCursor as ByteBTreeCursor, ByteBTree, Image as ByteBTreeImage};
pub use byte_table::{
    ByteTable, ByteTableHeader, ByteTableKind, ByteTableParams, ByteTableWriter, FilterShape,
    TableCursor as ByteTableCursor,
};
pub use dpgm::{DiskPgm, DiskPgmParams};
pub use film::{Film, FilmParams, FilmStats, CACHED_ITEM_OVERHEAD, MAX_LEAF};
pub use fiting::{DiskFiting, DiskFitingParams};
pub use hybrid::{DynamicMap, MergeTrigger, SortedRuns, StageOptions, StaticModel, StdMap};
pub use lipp::{DiskLipp, DiskLippParams};
pub use owner::FileOwner;
pub use static_learned::{
    AnyStaticLearned, Fetch, Granularity, StaticLearned, StaticLearnedParams, StaticLearnedWriter,
};
pub use write_clock::PhaseClock;

use crate::error::Result;
use crate::key::Key;

/// Where the time of an updatable index's writes went, summed over every write since it was
/// opened (paper 003 §6.1, Figure 6). Each index charges its own code to one part; the four
/// parts add up to the time spent inside `insert` and `delete`, as a [`PhaseClock`] reads it
/// (wall time plus the modeled time of a simulated device's requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteBreakdown {
    /// Finding where the key goes: the descent and the model's prediction, with their reads.
    pub search_ns: u64,
    /// Putting the entry in (or taking it out of) its node, buffer or slot, with that write.
    pub insert_ns: u64,
    /// Structural modifications: splits, expansions, merges of nodes, new child nodes.
    pub smo_ns: u64,
    /// Everything else the index does to stay in shape: retraining models, merging levels or
    /// buffers, rewriting metadata.
    pub maintenance_ns: u64,
}

impl WriteBreakdown {
    /// The four parts summed.
    pub fn total_ns(&self) -> u64 {
        self.search_ns + self.insert_ns + self.smo_ns + self.maintenance_ns
    }
}

/// An on-disk index that takes writes: paper 003's updatable indexes and the B+-tree.
///
/// Writes go through `&mut self` (one writer, as in paper 003); reads through the shared
/// [`DiskIndex`] methods. Nothing is durable until [`flush`](DiskMap::flush) returns.
pub trait DiskMap<K: Key>: DiskIndex<K> {
    /// Inserts `key` with `payload` (exactly [`DiskIndex::payload_size`] bytes). Returns true
    /// when the key was present and its payload was replaced, false when it was added.
    fn insert(&mut self, key: K, payload: &[u8]) -> Result<bool>;

    /// Removes `key`; returns true when it was present.
    fn delete(&mut self, key: &K) -> Result<bool>;

    /// Makes every write so far durable: after it returns, reopening the files gives the index
    /// as it is now.
    fn flush(&mut self) -> Result<()>;

    /// Where the writes' time went so far (paper 003 Figure 6).
    fn write_breakdown(&self) -> WriteBreakdown;
}

/// [`crate::Error::StaleIndex`] naming `file` unless `index` (opened from it) was built from
/// exactly `keys`: the fingerprint its header records against theirs. A caller that opens a
/// saved index for a dataset calls it before trusting any answer (the key count alone binds
/// nothing: another dataset of the same size passes it).
pub fn check_built_from<K: Key>(file: &str, index: &dyn DiskIndex<K>, keys: &[K]) -> Result<()> {
    check_fingerprint(file, index, crate::codec::keys_fingerprint(keys))
}

/// [`check_built_from`] against the keys' fingerprint `expected`
/// ([`keys_fingerprint`]), for a caller that checks several indexes of one
/// dataset and hashes its keys once.
pub fn check_fingerprint<K: Key>(
    file: &str,
    index: &dyn DiskIndex<K>,
    expected: u64,
) -> Result<()> {
    let found = index.keys_fingerprint();
    if found != expected {
        return Err(crate::Error::StaleIndex {
            file: file.to_string(),
            expected,
            found,
        });
    }
    Ok(())
}

/// Payload size when none is given: 8 bytes, as in paper 002 §3 and paper 003 §6.
pub const DEFAULT_PAYLOAD_SIZE: usize = 8;

/// An index's files by use: what paper 003 §6.3 (Figure 10) reports after the write
/// workloads. `allocated >= used + free`; the rest (if any) are blocks past what the index
/// records, such as those a crash left after its last flush.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StorageBytes {
    /// Bytes of the files, as the file system holds them.
    pub allocated: u64,
    /// Bytes of the blocks that hold the index: headers, nodes, data.
    pub used: u64,
    /// Bytes of blocks the index freed and reuses before its files grow.
    pub free: u64,
}

/// What every on-disk index answers.
pub trait DiskIndex<K: Key>: Send + Sync {
    /// Number of entries.
    fn len(&self) -> u64;

    /// The fingerprint of the keys the index was built from, as its files record it
    /// ([`keys_fingerprint`]; writes after the build do not change it): what binds
    /// a saved index to its dataset ([`check_built_from`]).
    fn keys_fingerprint(&self) -> u64;

    /// True when the index holds no entry.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of every payload in bytes.
    fn payload_size(&self) -> usize;

    /// Copies the payload stored under `key` into `payload[..payload_size]` and returns true,
    /// or returns false when the key is absent.
    fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool>;

    /// Appends to `keys` and `payloads` (payloads concatenated) the first `limit` entries whose
    /// key is `>= start`, in key order; returns how many were appended. Paper 003's scan is
    /// `limit = 100`.
    fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize>;

    /// Bytes kept in memory: models, memory-resident nodes, buffers (not a page cache).
    fn memory_bytes(&self) -> usize;

    /// Bytes of the index's files on disk.
    fn disk_bytes(&self) -> u64;

    /// The files' bytes by use after the writes so far (paper 003 §6.3). An index that never
    /// frees space uses all it allocated, the default.
    fn storage_bytes(&self) -> StorageBytes {
        let bytes = self.disk_bytes();
        StorageBytes {
            allocated: bytes,
            used: bytes,
            free: 0,
        }
    }

    /// A short description for reports: structure and parameters.
    fn describe(&self) -> String;
}
