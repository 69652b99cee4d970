//! A [`lidx::kv::Store`] as the rows of a [`crate::LidxTable`]: a snapshot of the store, its
//! exact statistics, the key boundaries its scans are split at, and the entries of a set of
//! key ranges as Arrow batches.
//!
//! The store is opened read-only (a shared lock: `lidx kv` and other readers may have it
//! open too, a writer may not) and one [`lidx::kv::Snapshot`] is taken when it is registered;
//! every scan reads that snapshot, so the statistics below stay exact for every query however
//! the store's files are merged meanwhile.
//!
//! A store keeps no record count (its engines know live and frozen stages, tombstones and
//! runs, not how many keys survive them), so registering reads the snapshot once from end to
//! end, keys and values: the count, the first and last key, the bytes, and every `k`-th key
//! (`k` doubling as the store grows, so at most `2 * SPLIT_SAMPLE` keys are kept) as the
//! boundaries that split a scan into parallel partitions of about equal entries. That pass
//! costs what a full scan costs; what a query then reads is only its key ranges, each a
//! [`lidx::kv::Snapshot::range`] (the engine's own seek: a learned model or inner nodes).

use std::ops::Bound;
use std::path::{Path, PathBuf};

use lidx::kv::{Snapshot, Store, StoreOptions};

use crate::batch::BatchBuilder;
use crate::ranges::{KeyRange, KeyRanges};

/// Boundary keys kept for splitting scans: enough for even partitions at any
/// `target_partitions` a machine has.
const SPLIT_SAMPLE: usize = 1024;

/// A store, the snapshot scans read, and what registering counted.
pub(crate) struct StoreSource {
    /// Declared before the store: dropped first.
    snapshot: Snapshot,
    _store: Store,
    path: PathBuf,
    rows: u64,
    bytes: u64,
    first_last: Option<(Vec<u8>, Vec<u8>)>,
    /// Every `k`-th key, ascending: where scans split.
    sample: Vec<Vec<u8>>,
}

impl StoreSource {
    /// Opens the store in the directory `path` read-only and counts its snapshot (module docs).
    pub(crate) fn open(path: &Path) -> lidx::Result<Self> {
        let options = StoreOptions {
            read_only: true,
            ..StoreOptions::default()
        };
        let store = Store::open(path, &options)?;
        let snapshot = store.snapshot();
        let (mut rows, mut bytes) = (0u64, 0u64);
        let (mut first, mut last) = (None, None);
        let (mut sample, mut every) = (Vec::new(), 1u64);
        for entry in snapshot.range(..) {
            let (key, value) = entry?;
            bytes += (key.len() + value.len()) as u64;
            if rows % every == 0 {
                sample.push(key.clone());
                if sample.len() == 2 * SPLIT_SAMPLE {
                    // Keep every other boundary: every `2k`-th key from here on.
                    sample = sample.into_iter().step_by(2).collect();
                    every *= 2;
                }
            }
            if first.is_none() {
                first = Some(key.clone());
            }
            last = Some(key);
            rows += 1;
        }
        Ok(StoreSource {
            snapshot,
            _store: store,
            path: path.to_path_buf(),
            rows,
            bytes,
            first_last: first.zip(last),
            sample,
        })
    }

    /// The store's directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Entries in the snapshot.
    pub(crate) fn len(&self) -> u64 {
        self.rows
    }

    /// Bytes of the snapshot's keys and values.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The first and last keys, `None` for an empty store.
    pub(crate) fn first_last(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        self.first_last.as_ref()
    }

    /// `ranges` split into at most `parts` sets of ranges, ascending, each holding about as
    /// many of the snapshot's entries as the others (by the sample); sets holding no sampled
    /// key beyond their start may still hold entries, and every entry of `ranges` is in one.
    pub(crate) fn split(
        &self,
        ranges: &KeyRanges<Vec<u8>>,
        parts: usize,
    ) -> Vec<KeyRanges<Vec<u8>>> {
        let inside: Vec<&Vec<u8>> = self
            .sample
            .iter()
            .filter(|k| ranges.ranges().iter().any(|r| r.contains(k)))
            .collect();
        let parts = parts.clamp(1, inside.len().max(1));
        let mut bounds: Vec<Vec<u8>> = (1..parts)
            .map(|i| inside[i * inside.len() / parts].clone())
            .collect();
        bounds.dedup();
        let mut out = Vec::with_capacity(bounds.len() + 1);
        let mut lo = Vec::new();
        for hi in bounds.into_iter().map(Some).chain([None]) {
            let slice = KeyRanges::of(vec![KeyRange {
                lo: std::mem::take(&mut lo),
                hi: hi.clone(),
            }]);
            out.push(ranges.intersect(&slice));
            lo = hi.unwrap_or_default();
        }
        out.retain(|set| !set.ranges().is_empty());
        out
    }

    /// Reads the entries of `ranges` into batches of at most `batch_rows` rows, giving each to
    /// `send` (false: no more are wanted), and stops after `limit` entries.
    pub(crate) fn read(
        &self,
        ranges: &KeyRanges<Vec<u8>>,
        limit: Option<usize>,
        out: &mut BatchBuilder<Vec<u8>>,
        batch_rows: usize,
        send: &mut dyn FnMut(&mut BatchBuilder<Vec<u8>>) -> bool,
    ) -> lidx::Result<()> {
        let mut left = limit.unwrap_or(usize::MAX);
        for range in ranges.ranges() {
            if left == 0 {
                break;
            }
            let hi = match &range.hi {
                Some(hi) => Bound::Excluded(hi.as_slice()),
                None => Bound::Unbounded,
            };
            for entry in self
                .snapshot
                .range((Bound::Included(range.lo.as_slice()), hi))
            {
                if left == 0 {
                    break;
                }
                let (key, value) = entry?;
                out.push(|| key, || &value);
                left -= 1;
                if out.rows() == batch_rows && !send(out) {
                    return Ok(());
                }
            }
        }
        if out.rows() > 0 {
            send(out);
        }
        Ok(())
    }
}
