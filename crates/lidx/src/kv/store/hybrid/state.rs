//! The hybrid engine's state and its life: create, open and recovery, writes, the freeze
//! and the merge thread. Its reads are in `read`.
//!
//! The order of a merge and what a crash at each step leaves is the one of
//! [`crate::kv::hybrid`] (freeze and rotate the log, write the new table, commit the manifest,
//! swap the version, retire the old table, drop the merged log segments); here the stages hold
//! byte keys and values, the static stage is one [`ByteTable`], and every write is one log
//! record (a [`WriteBatch`](super::WriteBatch) is one `Batch` record), so a batch is recovered
//! whole or not at all.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::disk::byte_table::{ByteTable, ByteTableKind, ByteTableParams, ByteTableWriter};
use crate::disk::owner::FileOwner;
use crate::error::Result;
use crate::key::cmp_bytes;
use crate::kv::manifest::Manifest;
use crate::kv::store::check::check_kind;
use crate::kv::store::dir::{check_file, encode_meta, identify, StoreMeta, WAL_DIR};
use crate::kv::store::engine::KeyRange;
use crate::kv::store::memtable::MemTable;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::{StoreOptions, MIN_RATIO_ENTRIES};
use crate::kv::store::staged::{self, apply_record, commit, Files, Staged, TableFile};
use crate::kv::store::staged_read::FileCursor;
use crate::kv::wal::{Record, Seq};

/// The name of table generation `g`.
pub(crate) fn table_name(g: u64) -> String {
    format!("table-{g:010}.lbt")
}

fn is_table_name(name: &str) -> bool {
    name.starts_with("table-") && name.ends_with(".lbt")
}

/// The hybrid engine's files: its one table, if any.
pub(crate) type Table = Option<Arc<TableFile>>;

/// The hybrid engine's state.
pub(crate) type Inner = Staged<Table>;

/// One consistent set of the hybrid engine's stages.
pub(crate) type Version = staged::Version<Table>;

/// An open hybrid engine: its state and merge thread.
pub(crate) struct HybridEngine {
    pub(super) inner: Arc<Inner>,
    worker: Option<JoinHandle<()>>,
}

/// What the hybrid engine's log is replayed into: the dynamic stage, over the table.
pub(crate) struct Replay {
    mem: MemTable,
    table: Option<Arc<TableFile>>,
    log_name: String,
}

impl Recover for HybridEngine {
    const FILES: &'static str = "tables";
    const LEFTOVERS: Option<fn(&str) -> bool> = Some(is_table_name);
    const SEALS_LOG_UNSYNCED: bool = true;
    type Replay = Replay;

    fn load(dir: &Path, _: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        let storage = &opened.storage;
        let table = match &opened.file {
            Some((name, recorded)) => {
                let table = ByteTable::open(storage, name)?;
                check_file(storage, name, recorded, table.header().owner, opened.store)?;
                check_kind(name, &table, ByteTableKind::Table)?;
                Some(Arc::new(TableFile::new(table, name.clone(), storage)))
            }
            None => None,
        };
        let replay = Replay {
            mem: MemTable::default(),
            table,
            log_name: dir.join(WAL_DIR).display().to_string(),
        };
        Ok((replay, opened.manifest.static_seq))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        apply_record(&mut state.mem, &state.log_name, seq, record, seq)
    }

    fn finish(state: Replay, r: Recovered) -> Result<HybridEngine> {
        let inner = Staged::new(r, state.mem, state.table);
        let worker = inner.start_merges();
        Ok(HybridEngine { inner, worker })
    }
}

impl HybridEngine {
    pub(super) fn stop_worker(&mut self) {
        self.inner.stop_merges(self.worker.take());
    }
}

impl Drop for HybridEngine {
    /// Stops the merge thread after the merge it is running; a frozen stage not merged yet
    /// stays in the log and is replayed at the next open.
    fn drop(&mut self) {
        self.stop_worker();
    }
}

impl Files for Table {
    type Shared = ();

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self {
            Some(t) => t.table.get(key),
            None => Ok(None),
        }
    }

    fn cursors(&self, bounds: &KeyRange, forward: bool) -> Vec<FileCursor> {
        self.iter()
            .map(|t| FileCursor {
                cursor: t
                    .table
                    .cursor(bounds.start.clone(), bounds.end.clone(), forward),
                then: Box::new(std::iter::empty()),
                tagged: false,
                name: t.name.clone(),
                values: None,
            })
            .collect()
    }

    /// Bytes and keys of the dynamic stage that trigger a freeze.
    fn full(inner: &Inner, version: &Version) -> bool {
        let mem = version.mem.read();
        if mem.len() == 0 {
            return false;
        }
        let table = version.files.as_ref().map(|t| &t.table);
        let records = table.map_or(0, |t| t.len());
        let model = table.map_or(0, |t| t.memory_bytes());
        let by_ratio = inner
            .base
            .options
            .merge_ratio
            .map(|r| ((records as f64 / r) as usize).max(MIN_RATIO_ENTRIES));
        mem.memory_bytes() + model >= inner.base.options.memory_budget
            || by_ratio.is_some_and(|n| mem.len() >= n)
    }

    /// Merges the frozen stage into a new table and publishes it.
    fn merge(inner: &Inner) -> Result<()> {
        let version = inner.current();
        let Some(frozen) = version.frozen.clone() else {
            return Ok(());
        };
        let frozen_seq = version.frozen_seq;
        let generation = inner.next_generation.fetch_add(1, Ordering::Relaxed);
        let name = table_name(generation);
        let params = ByteTableParams {
            model: inner.base.identity.model,
        };
        let owner = FileOwner {
            store: inner.base.store,
            generation,
        };
        let mut writer = ByteTableWriter::create(&inner.storage, &name, params)?.owned_by(owner);
        {
            // The old table's records drive the merge, borrowed from its stream: before each,
            // the new entries below it; then the record itself unless a new entry replaces it.
            let frozen = frozen.read();
            let mut new = frozen.newest_entries(Seq::MAX).peekable();
            if let Some(old) = &version.files {
                let mut old = old.table.merge_records();
                while let Some((ok, ov)) = old.next_record()? {
                    let mut replaced = false;
                    while let Some(&(k, v)) = new.peek() {
                        let order = cmp_bytes(k, ok);
                        if order.is_gt() {
                            break;
                        }
                        if let Some(v) = v {
                            writer.add(k, v)?;
                        }
                        new.next();
                        if order.is_eq() {
                            replaced = true;
                            break;
                        }
                    }
                    if !replaced {
                        writer.add(ok, ov)?;
                    }
                }
            }
            for (k, v) in new {
                if let Some(v) = v {
                    writer.add(k, v)?;
                }
            }
        }
        let empty = writer.records() == 0;
        let table = writer.finish()?;
        let (new_file, files) = if empty {
            drop(table);
            inner.storage.remove(&name)?;
            (None, Vec::new())
        } else {
            let identity = identify(&inner.storage, &name, generation)?;
            let file = Arc::new(TableFile::new(table, name.clone(), &inner.storage));
            (Some(file), vec![identity])
        };
        // The commit point.
        commit(
            &mut inner.manifest.lock(),
            &Manifest {
                static_files: new_file.iter().map(|f| f.name.clone()).collect(),
                wal_segments: Vec::new(),
                static_seq: frozen_seq,
                meta: encode_meta(&StoreMeta {
                    next_generation: generation + 1,
                    store: inner.base.store,
                    files,
                    value_refs: Vec::new(),
                }),
            },
        )?;
        inner.publish_files(new_file, true)?;
        if let Some(old) = &version.files {
            old.retire();
        }
        Ok(())
    }
}
