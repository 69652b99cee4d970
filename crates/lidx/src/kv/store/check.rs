//! `check`: reads every block, log record and model of a store, without opening it for
//! writing, and names the file and block of any damage.
//!
//! It compares what the manifest names with what is on disk (issue 30, class 5): a file the
//! manifest names (a table, a checkpoint image, the page file) or the log that must cover
//! the records after the manifest's `static_seq` that is missing is damage; a file of another
//! store, or an older generation of the store's own ([`Error::ForeignFile`]), is damage; a
//! file in the store's directory that the store does not name (not one it wrote, or a
//! leftover of an interrupted merge that the next open removes) is reported as unknown: lidx
//! never reads it, and it is not damage.
//!
//! What a power loss leaves on a sound store is reported, not called damage: a torn tail of
//! the log (the next open cuts it), and a `btree` page file's header slot torn while a
//! checkpoint after the committed one stamped it, the other slot holding the committed
//! checkpoint's stamp ([`ByteBTree::check_pages_slots`]; the next checkpoint rewrites it). A
//! damaged header slot whose partner does not hold the committed stamp is damage.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use crate::disk::byte_btree::{ByteBTree, Image};
use crate::disk::byte_table::{ByteTable, ByteTableKind};
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::{DeviceKind, Storage};
use crate::kv::manifest::{manifest_path, Manifest, ManifestStore};
use crate::kv::wal::{
    check_owner, list_segments, scan_segment, segment_seq, Record, Seq, WalRecovery,
};

use super::batch::decode_ops;
use super::btree::{check_pages, PAGES_FILE};
use super::dir::{
    check_file, check_meta, decode_meta, lock, read_identity, FileIdentity, ValueRefs, LOCK_FILE,
    STORE_FILE, WAL_DIR,
};
use super::log::check_checkpoint;
use super::log::record as log_record;
use super::lsm::{
    check_disjoint, decode_ref, is_ref, parse_run_name, parse_segment_name, plan_levels,
    plan_values, Collected,
};
use super::options::Engine;
use super::staged_read::{named, untag};

/// One damaged thing a check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The file.
    pub file: String,
    /// The block, when the damage is in one block of a block file.
    pub block: Option<u64>,
    /// What is wrong (the error's message).
    pub what: String,
}

/// A header slot of a page file torn by an interrupted checkpoint
/// ([`CheckReport::torn_pages_slot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornSlot {
    /// The page file.
    pub file: String,
    /// The slot's block.
    pub block: u64,
}

/// What [`crate::kv::Store::check`] read and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Table files read (`hybrid`), or 1 for the tree (`btree`: its page file through the
    /// last checkpoint's image).
    pub tables: usize,
    /// Records in them, each found through its table's model or the tree's separators.
    pub table_records: u64,
    /// Log segments read.
    pub log_segments: usize,
    /// Log records read (a batch counts once).
    pub log_records: u64,
    /// A torn tail at the end of the log (bytes), with the segments after a segment sealed
    /// unsynced that a power loss left short (see the log's "Sealing unsynced"): not damage,
    /// the next open cuts them (sets them aside).
    pub torn_tail_bytes: u64,
    /// The header slot of a `btree` store's page file that a checkpoint was stamping when it
    /// was interrupted (torn, while the other slot holds the committed checkpoint's stamp):
    /// not damage, the store opens through the other slot and the next checkpoint rewrites
    /// it.
    pub torn_pages_slot: Option<TornSlot>,
    /// Everything damaged; empty when the store is sound. A missing file is here too.
    pub damage: Vec<Damage>,
    /// Files the store needs (the manifest names them, or the log that must cover the
    /// records after its tables) that are not on disk; each is in `damage` too.
    pub missing: Vec<String>,
    /// Files and directories in the store's directory (and its log's) that the store does
    /// not name: not written by it, or leftovers the next open removes. Never read, and not
    /// damage.
    pub unknown: Vec<String>,
}

impl CheckReport {
    /// True when nothing is damaged.
    pub fn is_sound(&self) -> bool {
        self.damage.is_empty()
    }

    fn note(&mut self, e: Error) {
        let (file, block) = match &e {
            Error::Corrupt { file, block, .. } => (file.clone(), *block),
            Error::ChecksumMismatch { file, block, .. } => (file.clone(), Some(*block)),
            Error::Truncated { file, .. }
            | Error::BadMagic { file, .. }
            | Error::UnsupportedVersion { file, .. }
            | Error::ForeignFile { file, .. }
            | Error::Io { file, .. } => (file.clone(), None),
            _ => (String::new(), None),
        };
        self.damage.push(Damage {
            file,
            block,
            what: e.to_string(),
        });
    }

    /// Notes that `path`, which the store needs, is missing (`what`: why it is needed).
    fn missing(&mut self, path: &Path, what: &str) {
        let file = path.display().to_string();
        self.damage.push(Damage {
            file: file.clone(),
            block: None,
            what: format!("missing: {what}"),
        });
        self.missing.push(file);
    }
}

/// Checks the store in `dir` (see the module docs). Errors only when `dir` is not a store or
/// is open for writing elsewhere; damage goes into the report.
pub(crate) fn check_dir(dir: &Path) -> Result<CheckReport> {
    let (identity, store) = read_identity(dir)?;
    let _lock = lock(dir, false)?;
    let mut report = CheckReport::default();
    let storage = Storage::new(dir, DeviceKind::File { direct: false }, identity.block_size)?;
    let mut named: Vec<String> = [STORE_FILE, LOCK_FILE, "CURRENT", WAL_DIR]
        .map(String::from)
        .to_vec();
    let mut static_seq = 0;
    match ManifestStore::open(dir) {
        Err(e) => report.note(e),
        Ok((manifest_store, manifest)) => {
            let path = manifest_path(dir, manifest_store.number());
            named.push(
                path.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into()),
            );
            named.extend(manifest.static_files.iter().cloned());
            static_seq = manifest.static_seq;
            let file = path.display().to_string();
            let recorded = decode_meta(&file, &manifest.meta).and_then(|meta| {
                check_meta(&file, &meta, store, manifest.static_files.len())?;
                Ok(meta)
            });
            match recorded {
                Ok(meta) => {
                    if matches!(identity.engine, Engine::BTree) {
                        named.push(PAGES_FILE.to_string());
                    }
                    check_files(
                        dir,
                        &storage,
                        &identity.engine,
                        store,
                        &manifest,
                        (&meta.files, &meta.value_refs),
                        &mut report,
                    );
                }
                Err(e) => report.note(e),
            }
        }
    }
    check_log(dir, &identity.engine, store, static_seq, &mut report);
    report.unknown = unknown_files(dir, &named);
    Ok(report)
}

/// Checks the engine's files the manifest names against what it `recorded` of them.
fn check_files(
    dir: &Path,
    storage: &Storage,
    engine: &Engine,
    store: u128,
    manifest: &Manifest,
    (recorded, value_refs): (&[FileIdentity], &[ValueRefs]),
    report: &mut CheckReport,
) {
    let mut present = Vec::new();
    for (name, id) in manifest.static_files.iter().zip(recorded) {
        if storage.exists(name) {
            present.push((name, id));
        } else {
            report.missing(&dir.join(name), "the manifest names it");
        }
    }
    match engine {
        Engine::Hybrid => {
            for (name, id) in present {
                report.tables += 1;
                let checked = ByteTable::open(storage, name).and_then(|t| {
                    check_file(storage, name, id, t.header().owner, store)?;
                    check_kind(name, &t, ByteTableKind::Table)?;
                    t.check()
                });
                match checked {
                    Ok(n) => report.table_records += n,
                    Err(e) => report.note(e),
                }
            }
        }
        Engine::Lsm(spec) => {
            let files: Vec<(String, FileIdentity)> = manifest
                .static_files
                .iter()
                .cloned()
                .zip(recorded.iter().copied())
                .collect();
            let planned = plan_values(&files, value_refs).and_then(|(runs, segments)| {
                let named: Vec<(String, FileIdentity)> =
                    runs.iter().map(|(n, id, _)| (n.clone(), *id)).collect();
                plan_levels(&named)?;
                Ok((runs, segments))
            });
            // A manifest whose runs or references do not plan: noted, and every file it
            // names still checked as what its name says, references unchecked.
            let (runs, segments) = match planned {
                Ok((runs, segments)) => (
                    runs.into_iter()
                        .map(|(n, id, refs)| (n, id, Some(refs)))
                        .collect::<Vec<_>>(),
                    segments,
                ),
                Err(what) => {
                    report.note(Error::Corrupt {
                        file: dir.display().to_string(),
                        block: None,
                        what: format!("the manifest's runs: {what}"),
                    });
                    let (segments, runs): (Vec<_>, Vec<_>) = files
                        .into_iter()
                        .partition(|(n, _)| parse_segment_name(n).is_some());
                    (
                        runs.into_iter().map(|(n, id)| (n, id, None)).collect(),
                        segments,
                    )
                }
            };
            let here = |name: &String| present.iter().any(|(n, _)| *n == name);
            let mut tables = Vec::new();
            for (name, id) in segments.iter().filter(|(n, _)| here(n)) {
                report.tables += 1;
                let checked = open_owned(storage, name, id, store, ByteTableKind::Values)
                    .and_then(|t| t.check().map(|_| t));
                match checked {
                    Ok(table) => tables.push((id.generation, Arc::new(table))),
                    Err(e) => report.note(e),
                }
            }
            tables.sort_by_key(|(g, _)| *g);
            let mut ranges = Vec::new();
            for (name, id, refs) in runs.iter().filter(|(n, _, _)| here(n)) {
                report.tables += 1;
                let values = refs
                    .as_ref()
                    .map(|r| (r, Collected::of_tables(tables.clone())));
                match check_run(storage, name, id, store, values) {
                    Ok((n, first, last)) => {
                        report.table_records += n;
                        let level = parse_run_name(name).map_or(0, |(level, _)| level);
                        ranges.push((level, name.as_str(), first, last));
                    }
                    Err(e) => report.note(e),
                }
            }
            let runs = ranges
                .iter()
                .map(|(level, name, first, last)| (*level, *name, &first[..], &last[..]));
            if let (false, Err(what)) = (spec.tiered(), check_disjoint(runs)) {
                report.note(Error::Corrupt {
                    file: dir.display().to_string(),
                    block: None,
                    what: format!("the manifest's runs: {what}"),
                });
            }
        }
        Engine::BTree => {
            if manifest.static_files.len() != present.len() {
                return;
            }
            if !storage.exists(PAGES_FILE) {
                // Before its first checkpoint a store's log holds everything, and its next
                // open makes a new page file.
                if !present.is_empty() {
                    report.missing(&dir.join(PAGES_FILE), "the checkpoint's leaves are in it");
                }
                return;
            }
            report.tables += 1;
            let image = match present.first() {
                Some((name, id)) => Image::read(storage, name)
                    .and_then(|image| {
                        check_file(storage, name, id, image.owner, store)?;
                        Ok(image)
                    })
                    .map(Some),
                None => Ok(None),
            };
            let checkpoint = present.first().map_or(0, |(_, id)| id.generation);
            let committed = FileOwner {
                store,
                generation: checkpoint,
            };
            let checked = image.and_then(|image| {
                check_pages(storage, store, checkpoint)?;
                report.torn_pages_slot =
                    ByteBTree::check_pages_slots(storage, PAGES_FILE, committed)?.map(|block| {
                        TornSlot {
                            file: dir.join(PAGES_FILE).display().to_string(),
                            block,
                        }
                    });
                ByteBTree::open(storage, PAGES_FILE, image, manifest.static_seq, true)?.check()
            });
            match checked {
                Ok(n) => report.table_records += n,
                Err(e) => report.note(e),
            }
        }
        // A log store's records are its log, read by `check_log`; its checkpoint names the
        // place of each live key's newest record, each read here.
        Engine::Log(spec) => {
            for (name, id) in present {
                report.tables += 1;
                match check_checkpoint(dir, name, id, store, spec.keys) {
                    Ok(n) => report.table_records += n,
                    Err(e) => report.note(e),
                }
            }
        }
    }
}

/// Reads every segment of the log: each the store's own, in sequence, together covering
/// every record after `static_seq`, every record sound.
fn check_log(dir: &Path, engine: &Engine, store: u128, static_seq: Seq, report: &mut CheckReport) {
    let wal_dir = dir.join(WAL_DIR);
    if !wal_dir.is_dir() {
        report.missing(&wal_dir, "the store's log directory");
        return;
    }
    let segments = match list_segments(&wal_dir) {
        Ok(s) => s,
        Err(e) => {
            report.note(e);
            return;
        }
    };
    let log_name = wal_dir.display().to_string();
    if segments.is_empty() {
        // `create` starts the log before anything else and no merge removes its last
        // segment: a log without one was removed outside lidx.
        report.missing(
            &wal_dir.join("wal-*.log"),
            "the log has no segment (they were removed outside lidx); it holds every \
             record after the tables'",
        );
        return;
    }
    let log_keys = match engine {
        Engine::Log(spec) => Some(spec.keys),
        _ => None,
    };
    let mut next: Option<Seq> = None;
    // The segment before was sealed unsynced (a power loss may have kept a prefix of it), and
    // whether an open ends the log there: every segment from a gap after such a segment on is
    // set aside by an open, so its bytes count as a torn tail, not as damage.
    let (mut after_unsynced, mut set_aside) = (false, false);
    for (i, (_, path)) in segments.iter().enumerate() {
        report.log_segments += 1;
        let file = path.display().to_string();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                report.note(Error::io(&file, "read", &e));
                next = None;
                continue;
            }
        };
        if let Err(e) = check_owner(&file, &bytes, store) {
            report.note(e);
            next = None;
            continue;
        }
        let mut records = 0u64;
        let last = i + 1 == segments.len();
        let scanned = scan_segment(&file, &bytes, last, WalRecovery::TornTail, |seq, r| {
            records += 1;
            match (r, log_keys) {
                (Record::Batch { ops }, Some(keys)) => {
                    for op in log_record::decode_ops(&file, seq, ops, keys) {
                        op?;
                    }
                }
                (Record::Batch { ops }, None) => {
                    for op in decode_ops(&file, ops) {
                        op?;
                    }
                }
                (_, Some(_)) => {
                    return Err(Error::Corrupt {
                        file: file.clone(),
                        block: None,
                        what: format!("record {seq} is not a log engine record"),
                    })
                }
                _ => {}
            }
            Ok(())
        });
        report.log_records += records;
        match scanned {
            Ok(s) => {
                report.torn_tail_bytes += (bytes.len() - s.valid_len) as u64;
                // Records the tables (or a `log` store's checkpoint) hold may be missing: a
                // `log` store's collector removes segments its checkpoint covers.
                let gap = match next {
                    None if i == 0 && s.first_seq > static_seq + 1 => Some(static_seq + 1),
                    Some(n) if s.first_seq > n && s.first_seq <= static_seq + 1 => None,
                    Some(n) if s.first_seq != n => Some(n),
                    _ => None,
                };
                set_aside |= gap.is_some_and(|n| after_unsynced && s.first_seq > n);
                after_unsynced = s.sealed_unsynced;
                if set_aside {
                    report.torn_tail_bytes += s.valid_len as u64;
                } else if let Some(n) = gap {
                    report.note(Error::Corrupt {
                        file: file.clone(),
                        block: None,
                        what: format!(
                            "the segment starts at record {}, but the log must hold record {n} \
                             (the tables hold up to {static_seq}): log segments are missing",
                            s.first_seq
                        ),
                    });
                }
                if !set_aside {
                    next = Some(s.next_seq);
                }
            }
            Err(e) => {
                report.note(e);
                next = None;
            }
        }
    }
    if next.is_some_and(|n| n <= static_seq) {
        report.note(Error::Corrupt {
            file: log_name,
            block: None,
            what: format!(
                "the log ends before record {static_seq}, which the manifest says the tables \
                 hold: log segments are missing"
            ),
        });
    }
}

/// Entries of the store's directory (and of its log's) that the store does not name:
/// `named` in the directory, segments in the log.
fn unknown_files(dir: &Path, named: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let list = |d: &Path| -> Vec<(String, std::path::PathBuf)> {
        std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (name, path) in list(dir) {
        if !named.contains(&name) {
            out.push(path.display().to_string());
        }
    }
    for (name, path) in list(&dir.join(WAL_DIR)) {
        if segment_seq(&name).is_none() {
            out.push(path.display().to_string());
        }
    }
    out.sort();
    out
}

/// Checks the `lsm` run `name`: its identity and owner, its kind, every block and record
/// through the model and the key filter ([`ByteTable::check`]), every record's tag, and, with
/// `values` (what the manifest records of its references, and the value log's segments
/// that could be read), that each reference finds its value and that they add up to what
/// the manifest records. Returns its records.
fn check_run(
    storage: &Storage,
    name: &str,
    id: &FileIdentity,
    store: u128,
    mut values: Option<(&BTreeMap<u64, u64>, Collected)>,
) -> Result<(u64, Vec<u8>, Vec<u8>)> {
    let table = Arc::new(open_owned(storage, name, id, store, ByteTableKind::Run)?);
    let n = table.check()?;
    let mut cursor = table.cursor(Bound::Unbounded, Bound::Unbounded, true);
    let (mut key, mut value) = (Vec::new(), Vec::new());
    let mut found = BTreeMap::<u64, u64>::new();
    let mut first = None;
    while cursor.next_into(&mut key, &mut value)? {
        if first.is_none() {
            first = Some(key.clone());
        }
        if is_ref(&value) {
            let (segment, len) = decode_ref(&value).map_err(|e| named(e, name))?;
            *found.entry(segment).or_default() += u64::from(len);
            if let Some((_, segments)) = values.as_mut() {
                segments.value(segment, &key, len)?;
            }
        } else {
            untag(std::mem::take(&mut value)).map_err(|e| named(e, name))?;
        }
    }
    match values {
        Some((refs, _)) if found != *refs => Err(Error::Corrupt {
            file: name.to_string(),
            block: None,
            what: format!(
                "its records refer to {found:?} bytes of values by segment, the manifest \
                 records {refs:?}"
            ),
        }),
        _ => Ok((n, first.unwrap_or_default(), key)),
    }
}

/// Opens the byte table `name` of `kind` that the manifest records as `recorded`, checking
/// it is the store `store`'s, as recorded ([`check_file`]), and of that kind.
pub(crate) fn open_owned(
    storage: &Storage,
    name: &str,
    recorded: &FileIdentity,
    store: u128,
    kind: ByteTableKind,
) -> Result<ByteTable> {
    let table = ByteTable::open(storage, name)?;
    check_file(storage, name, recorded, table.header().owner, store)?;
    check_kind(name, &table, kind)?;
    Ok(table)
}

/// [`Error::Corrupt`] unless the table `name` is of `kind`: a run's tagged records read as
/// values (or values as tagged records) would be wrong answers.
pub(crate) fn check_kind(name: &str, table: &ByteTable, kind: ByteTableKind) -> Result<()> {
    if table.header().kind == kind {
        return Ok(());
    }
    Err(Error::Corrupt {
        file: table.name().to_string(),
        block: Some(0),
        what: format!(
            "{name} is a byte table of kind {:?} where one of kind {kind:?} belongs",
            table.header().kind
        ),
    })
}
