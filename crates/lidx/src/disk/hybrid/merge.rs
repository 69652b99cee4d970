//! The merge: the frozen dynamic stage and the static stage become new static files.
//!
//! Paper 002 §9.1: "It scans the leaf pages of the static learned index on disk and merges the
//! key-value pairs from the dynamic stage with a simple linear algorithm similar to the merge
//! step in a merge-sort. New learned models are then trained on the merged leaf nodes before
//! they are written back to the disk." [`merge_into`] is that linear merge: the static files
//! are read in large sequential requests ([`crate::io::IoClass::Data`], so merges do not count
//! as lookups' leaf reads); a frozen entry replaces the static record of its key, and a
//! tombstone drops it (the static stage is the full state, so no tombstone survives a merge).
//!
//! The merged records stream into a [`PartsWriter`], which splits them into at most
//! `merge_threads` key ranges of about equal counts (§9.1's partitioned merge) and writes each
//! range's data blocks as they fill, in large sequential requests, through a
//! [`StaticLearnedWriter`]. Payloads are never held in memory; the keys a model is fitted on
//! are (`K::SIZE` bytes per record, the models being fitted on a slice), until the end of the
//! merge, when the parts' models are fitted in parallel, one thread per part. What differs from
//! the paper: it splits the key range before merging and gives each thread its own range to
//! merge; we merge in one sequential pass (the reads and writes are sequential I/O either way)
//! and parallelize the model fitting, the part that costs CPU.

use std::sync::Arc;

use crate::disk::static_learned::StaticLearnedWriter;
use crate::error::Result;
use crate::io::Storage;
use crate::key::Key;

use super::dynamic::{DynamicMap, Slot, Stage};
use super::options::StageOptions;
use super::static_set::{
    static_file_name, AnyStatic, HybridFile, StaticPart, StaticSet, MERGE_READ_BLOCKS,
};

/// Streams the merge of the static stage with the frozen stage's `entries` (from
/// [`Stage::entries`]) into `out`: the full state in key order, tombstones applied.
pub(crate) fn merge_into<K: Key, D: DynamicMap<K>>(
    out: &mut PartsWriter<'_, K>,
    statics: &StaticSet<K>,
    frozen: &Stage<K, D>,
    entries: &[(K, Slot)],
) -> Result<()> {
    let mut next = 0;
    let push_frozen = |out: &mut PartsWriter<'_, K>, i: usize| match frozen.entry(entries[i].1) {
        Some(p) => out.push(entries[i].0, p),
        None => Ok(()),
    };
    for part in &statics.parts {
        part.index.for_each_record(MERGE_READ_BLOCKS, |k, p| {
            while next < entries.len() && entries[next].0.key_lt(k) {
                push_frozen(out, next)?;
                next += 1;
            }
            if next < entries.len() && !k.key_lt(&entries[next].0) {
                push_frozen(out, next)?;
                next += 1;
                Ok(())
            } else {
                out.push(*k, p)
            }
        })?;
    }
    while next < entries.len() {
        push_frozen(out, next)?;
        next += 1;
    }
    Ok(())
}

/// Writes records pushed in strictly increasing key order into at most
/// `options.merge_threads` static files of one generation, a new file starting once the
/// current one holds `expected / merge_threads` records.
pub(crate) struct PartsWriter<'a, K> {
    storage: &'a Arc<Storage>,
    options: &'a StageOptions,
    generation: u64,
    per_part: usize,
    open: Vec<(String, StaticLearnedWriter<K>)>,
}

impl<'a, K: Key> PartsWriter<'a, K> {
    fn new(
        storage: &'a Arc<Storage>,
        options: &'a StageOptions,
        generation: u64,
        expected: usize,
    ) -> Self {
        let parts = options.merge_threads.max(1);
        PartsWriter {
            storage,
            options,
            generation,
            per_part: expected.div_ceil(parts).max(1),
            open: Vec::with_capacity(parts),
        }
    }

    /// Appends a record. Errors: the writer's (`OutOfOrder`, `DuplicateKey`, I/O).
    pub(crate) fn push(&mut self, key: K, payload: &[u8]) -> Result<()> {
        let room = self.open.len() < self.options.merge_threads.max(1);
        if let Some((_, w)) = self.open.last_mut() {
            if w.len() < self.per_part || !room {
                return w.push(key, payload);
            }
        }
        let name = static_file_name(self.generation, self.open.len());
        let params = <AnyStatic<K> as HybridFile<K>>::params(self.options);
        let mut writer = StaticLearnedWriter::create(self.storage, &name, params)?;
        writer.reserve(self.per_part);
        let pushed = writer.push(key, payload);
        self.open.push((name, writer));
        pushed
    }

    /// Fits the parts' models, one thread per part, and completes the files. On error every
    /// file of the generation is removed.
    fn finish(mut self) -> Result<Vec<Arc<StaticPart<K>>>> {
        let storage = self.storage;
        let options = self.options;
        let open = std::mem::take(&mut self.open);
        let names: Vec<String> = open.iter().map(|(n, _)| n.clone()).collect();
        let complete = |(name, writer): (String, StaticLearnedWriter<K>)| {
            let first = writer.model_keys().first().copied();
            let index = AnyStatic::finish(writer, options)?;
            let part = StaticPart::new(Arc::clone(storage), name, index, first)?;
            Ok(part.map(Arc::new))
        };
        let results: Vec<Result<Option<Arc<StaticPart<K>>>>> = if open.len() <= 1 {
            open.into_iter().map(complete).collect()
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = open
                    .into_iter()
                    .map(|w| s.spawn(move || complete(w)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a merge thread panicked"))
                    .collect()
            })
        };
        let mut parts = Vec::with_capacity(results.len());
        let mut error = None;
        for r in results {
            match r {
                Ok(Some(p)) => parts.push(p),
                Ok(None) => {}
                Err(e) => {
                    error.get_or_insert(e);
                }
            }
        }
        match error {
            None => Ok(parts),
            Some(e) => {
                drop(parts);
                remove_all(storage, &names);
                Err(e)
            }
        }
    }
}

fn remove_all(storage: &Storage, names: &[String]) {
    for name in names {
        // A file left behind is not named by any manifest, so the next open removes it.
        let _ = storage.remove(name);
    }
}

/// Builds the static files of generation `generation` from the records `fill` pushes (in
/// strictly increasing key order; about `expected` of them, which sets the parts' sizes). No
/// file for no record. On error, every file of the generation is removed.
pub(crate) fn write_parts<K: Key>(
    storage: &Arc<Storage>,
    options: &StageOptions,
    generation: u64,
    expected: usize,
    fill: impl FnOnce(&mut PartsWriter<'_, K>) -> Result<()>,
) -> Result<Vec<Arc<StaticPart<K>>>> {
    let mut writer = PartsWriter::new(storage, options, generation, expected);
    if let Err(e) = fill(&mut writer) {
        let names: Vec<String> = writer.open.drain(..).map(|(n, _)| n).collect();
        remove_all(storage, &names);
        return Err(e);
    }
    writer.finish()
}
