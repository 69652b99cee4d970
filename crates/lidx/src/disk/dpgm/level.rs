//! One disk level of a [`super::DiskPgm`]: a static learned file with a PGM
//! ([`crate::disk::static_learned`], reused as it is), whose records carry a flag byte before
//! the payload (0 live, 1 tombstone), and the merge of sorted runs newest-first.

use crate::disk::static_learned::{Fetch, StaticLearned, StaticLearnedParams, StaticLearnedWriter};
use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::mem::pgm::Pgm;

use crate::disk::flagged_records::Run;

use super::manifest::LevelEntry;
use super::params::DiskPgmParams;

/// Records a merge reads from a level per request.
const MERGE_BATCH_BLOCKS: usize = 64;

/// The file name of a level.
pub(super) fn level_name(name: &str, entry: &LevelEntry) -> String {
    format!("{name}.L{}.{}", entry.level, entry.generation)
}

/// An open disk level.
pub(super) struct Level {
    pub entry: LevelEntry,
    pub name: String,
    pub file: StaticLearned<u64, Pgm<u64>>,
}

impl Level {
    /// Opens the level `entry` of index `name`, checking that its file is what the manifest
    /// says: the flagged payload size, the PGM's errors and the record count.
    pub(super) fn open(
        storage: &Storage,
        name: &str,
        entry: LevelEntry,
        params: &DiskPgmParams,
    ) -> Result<Level> {
        let file_name = level_name(name, &entry);
        let file =
            StaticLearned::<u64, Pgm<u64>>::open(storage, &file_name, Some(Fetch::AllAtOnce))?;
        let built = file.params();
        if built.payload_size != params.payload_size + 1
            || built.model_params != params.model_params()
            || file.len() != entry.records
        {
            return Err(Error::IndexMismatch {
                file: file_name,
                holds: format!(
                    "{} with {} records of {}-byte payloads",
                    built.model_params,
                    file.len(),
                    built.payload_size
                ),
                asked: format!(
                    "{} with {} records of {}-byte payloads",
                    params.model_params(),
                    entry.records,
                    params.payload_size + 1
                ),
            });
        }
        Ok(Level {
            entry,
            name: file_name,
            file,
        })
    }

    /// Looks `key` up: `None` when the level has no record of it, else whether the record is
    /// live, its payload in `buf[1..]`.
    pub(super) fn get(&self, key: u64, buf: &mut [u8]) -> Result<Option<bool>> {
        Ok(self.file.get(&key, buf)?.then_some(buf[0] == 0))
    }

    /// Up to `limit` records from `start` on, appended to `run`.
    pub(super) fn scan_into(
        &self,
        start: u64,
        limit: usize,
        run: &mut Run,
        ps: usize,
    ) -> Result<usize> {
        let mut keys = Vec::with_capacity(limit.min(4096));
        let mut payloads = Vec::with_capacity(limit.min(4096) * (ps + 1));
        let n = self.file.scan(&start, limit, &mut keys, &mut payloads)?;
        for (i, key) in keys.into_iter().enumerate() {
            let rec = &payloads[i * (ps + 1)..(i + 1) * (ps + 1)];
            run.push(key, rec[0] != 0, &rec[1..], &self.name)?;
        }
        Ok(n)
    }

    /// Every record, in key order (a merge's read of a smaller level).
    pub(super) fn read_all(&self, ps: usize) -> Result<Run> {
        let mut run = Run::default();
        self.for_each(
            |key, dead, payload| run.push(key, dead, payload, &self.name),
            ps,
        )?;
        Ok(run)
    }

    /// Hands every record to `f` in key order, read in large sequential requests.
    pub(super) fn for_each(
        &self,
        mut f: impl FnMut(u64, bool, &[u8]) -> Result<()>,
        ps: usize,
    ) -> Result<()> {
        let name = &self.name;
        self.file
            .for_each_record(MERGE_BATCH_BLOCKS, |key, rec| match rec.first() {
                Some(&flag @ (0 | 1)) if rec.len() == ps + 1 => f(*key, flag == 1, &rec[1..]),
                _ => Err(Error::Corrupt {
                    file: name.clone(),
                    block: None,
                    what: format!("record of key {key} has no valid flag byte"),
                }),
            })
    }
}

/// Writes level `entry` of index `name`: `newer` merged over `older` (a level file streamed,
/// or none), newest wins, tombstones dropped when `drop_tombstones` (no older level below).
/// Returns the open level, or `None` when nothing is left. The file is complete and synced
/// before this returns; the manifest does not name it yet.
pub(super) fn write_level(
    storage: &Storage,
    name: &str,
    entry: LevelEntry,
    params: &DiskPgmParams,
    newer: &Run,
    older: Option<&Level>,
    drop_tombstones: bool,
) -> Result<Option<Level>> {
    let ps = params.payload_size;
    let file_name = level_name(name, &entry);
    let mut writer = StaticLearnedWriter::<u64>::create(
        storage,
        &file_name,
        StaticLearnedParams {
            payload_size: ps + 1,
            model_params: params.model_params(),
            ..StaticLearnedParams::default()
        },
    )?;
    let mut rec = vec![0u8; ps + 1];
    let mut emit = |writer: &mut StaticLearnedWriter<u64>, key: u64, dead: bool, payload: &[u8]| {
        if dead && drop_tombstones {
            return Ok(());
        }
        rec[0] = u8::from(dead);
        rec[1..].copy_from_slice(payload);
        writer.push(key, &rec)
    };
    let mut i = 0;
    // The record `i` of the newer run.
    let newer_at = |i: usize| (newer.keys[i], newer.dead[i], newer.payload(i, ps));
    let written = (|| -> Result<()> {
        if let Some(older) = older {
            older.for_each(
                |key, dead, payload| {
                    while i < newer.len() && newer.keys[i] < key {
                        let (key, dead, payload) = newer_at(i);
                        emit(&mut writer, key, dead, payload)?;
                        i += 1;
                    }
                    if i < newer.len() && newer.keys[i] == key {
                        return Ok(());
                    }
                    emit(&mut writer, key, dead, payload)
                },
                ps,
            )?;
        }
        while i < newer.len() {
            let (key, dead, payload) = newer_at(i);
            emit(&mut writer, key, dead, payload)?;
            i += 1;
        }
        Ok(())
    })();
    if let Err(e) = written {
        drop(writer);
        let _ = storage.remove(&file_name);
        return Err(e);
    }
    if writer.is_empty() {
        drop(writer);
        storage.remove(&file_name)?;
        return Ok(None);
    }
    let records = writer.len() as u64;
    let model = Pgm::build(writer.model_keys(), params.pgm)?;
    let file = writer.finish(model)?;
    Ok(Some(Level {
        entry: LevelEntry { records, ..entry },
        name: file_name,
        file,
    }))
}
