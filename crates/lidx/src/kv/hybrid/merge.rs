//! The merge: the frozen dynamic stage and the static stage become new static files.
//!
//! Paper 002 §9.1: "It scans the leaf pages of the static learned index on disk and merges the
//! key-value pairs from the dynamic stage with a simple linear algorithm similar to the merge
//! step in a merge-sort. New learned models are then trained on the merged leaf nodes before
//! they are written back to the disk." [`merge_records`] is that linear merge: the static
//! files are read in large sequential requests ([`crate::io::IoClass::Data`], so merges do not
//! count as lookups' leaf reads); a frozen entry replaces the static record of its key, and a
//! tombstone drops it (the static stage is the full state, so no tombstone survives a merge).
//! [`build_parts`] splits the merged records into `merge_threads` key ranges of equal counts
//! and builds one file per range, each on its own thread (§9.1's partitioned merge).
//!
//! What differs from the paper: the merged keys and payloads are held in memory while the new
//! files are built (the static learned builder fits its model on a slice of keys), so a merge
//! needs transient memory of about `(key size + payload size)` bytes per record; the models and
//! dynamic stage reported by `memory_bytes` do not include it.

use std::sync::Arc;

use crate::error::Result;
use crate::io::Storage;
use crate::key::Key;

use super::dynamic::{DynamicMap, Slot, Stage};
use super::options::HybridOptions;
use super::recovery::static_file_name;
use super::static_set::{AnyStatic, StaticPart, StaticSet};

/// Merges the static stage with the frozen stage's `entries` (from [`Stage::entries`]): the
/// full state in key order, tombstones applied.
pub fn merge_records<K: Key, D: DynamicMap<K>>(
    statics: &StaticSet<K>,
    frozen: &Stage<K, D>,
    entries: &[(K, Slot)],
    payload_size: usize,
) -> Result<(Vec<K>, Vec<u8>)> {
    let total = statics.len() + frozen.live();
    let mut keys = Vec::with_capacity(total);
    let mut payloads = Vec::with_capacity(total * payload_size);
    let mut next = 0;
    let push_frozen = |keys: &mut Vec<K>, payloads: &mut Vec<u8>, i: usize| {
        if let Some(p) = frozen.entry(entries[i].1) {
            keys.push(entries[i].0);
            payloads.extend_from_slice(p);
        }
    };
    for part in &statics.parts {
        part.index.for_each_record(|k, p| {
            while next < entries.len() && entries[next].0.key_lt(k) {
                push_frozen(&mut keys, &mut payloads, next);
                next += 1;
            }
            if next < entries.len() && !k.key_lt(&entries[next].0) {
                push_frozen(&mut keys, &mut payloads, next);
                next += 1;
            } else {
                keys.push(*k);
                payloads.extend_from_slice(p);
            }
        })?;
    }
    while next < entries.len() {
        push_frozen(&mut keys, &mut payloads, next);
        next += 1;
    }
    Ok((keys, payloads))
}

/// Builds the static stage of `keys` (strictly increasing) and `payloads`: at most
/// `options.merge_threads` files of generation `generation`, of equal record counts, built in
/// parallel. No file for no record. On error, the files already built are removed.
pub fn build_parts<K: Key>(
    storage: &Arc<Storage>,
    keys: &[K],
    payloads: &[u8],
    options: &HybridOptions,
    generation: u64,
) -> Result<Vec<Arc<StaticPart<K>>>> {
    let n = keys.len();
    let parts = options.merge_threads.min(n);
    let ps = options.payload_size;
    let bounds: Vec<(usize, usize)> = (0..parts)
        .map(|j| (j * n / parts, (j + 1) * n / parts))
        .collect();
    let build = |j: usize| -> Result<Arc<StaticPart<K>>> {
        let (a, b) = bounds[j];
        let name = static_file_name(generation, j);
        let index = AnyStatic::build(
            storage,
            &name,
            &keys[a..b],
            &payloads[a * ps..b * ps],
            options,
        );
        let index = match index {
            Ok(i) => i,
            Err(e) => {
                let _ = storage.remove(&name);
                return Err(e);
            }
        };
        let part = StaticPart::new(Arc::clone(storage), name, index, Some(keys[a]))?;
        Ok(Arc::new(part.expect("a part of at least one record")))
    };
    let results: Vec<Result<Arc<StaticPart<K>>>> = if parts <= 1 {
        (0..parts).map(build).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..parts).map(|j| s.spawn(move || build(j))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a merge thread panicked"))
                .collect()
        })
    };
    let mut out = Vec::with_capacity(parts);
    let mut error = None;
    for r in results {
        match r {
            Ok(p) => out.push(p),
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = error {
        for p in &out {
            p.retire();
        }
        return Err(e);
    }
    Ok(out)
}
