//! `check`: reads every block, log record and model of a store, without opening it for
//! writing, and names the file and block of any damage.

use std::path::Path;

use crate::disk::byte_btree::{ByteBTree, Image};
use crate::disk::byte_table::ByteTable;
use crate::error::{Error, Result};
use crate::io::{DeviceKind, Storage};
use crate::kv::manifest::ManifestStore;
use crate::kv::wal::{list_segments, scan_segment, Record, WalRecovery};

use super::batch::decode_ops;
use super::btree::PAGES_FILE;
use super::dir::{lock, read_identity, WAL_DIR};
use super::log_record;
use super::options::Engine;

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

/// What [`crate::kv::store::Store::check`] read and found.
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
    /// A torn tail at the end of the log (bytes): not damage, the next open cuts it.
    pub torn_tail_bytes: u64,
    /// Everything damaged; empty when the store is sound.
    pub damage: Vec<Damage>,
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
            | Error::Io { file, .. } => (file.clone(), None),
            _ => (String::new(), None),
        };
        self.damage.push(Damage {
            file,
            block,
            what: e.to_string(),
        });
    }
}

/// Checks the store in `dir` (see the module docs). Errors only when `dir` is not a store or
/// is open for writing elsewhere; damage goes into the report.
pub(crate) fn check_dir(dir: &Path) -> Result<CheckReport> {
    let identity = read_identity(dir)?;
    let _lock = lock(dir, false)?;
    let mut report = CheckReport::default();
    let storage = Storage::new(dir, DeviceKind::File { direct: false }, identity.block_size)?;
    match ManifestStore::open(dir) {
        Err(e) => report.note(e),
        Ok((_, manifest)) => match identity.engine {
            Engine::Hybrid => {
                for name in &manifest.static_files {
                    report.tables += 1;
                    match ByteTable::open(&storage, name).and_then(|t| t.check()) {
                        Ok(n) => report.table_records += n,
                        Err(e) => report.note(e),
                    }
                }
            }
            Engine::BTree => {
                report.tables += 1;
                let image = match manifest.static_files.first() {
                    Some(name) => Image::read(&storage, name).map(Some),
                    None => Ok(None),
                };
                let checked = image.and_then(|image| {
                    ByteBTree::open(&storage, PAGES_FILE, image, manifest.static_seq, true)?.check()
                });
                match checked {
                    Ok(n) => report.table_records += n,
                    Err(e) => report.note(e),
                }
            }
            // A log store's records are its log, read below.
            Engine::Log(_) => {}
        },
    }
    let wal_dir = dir.join(WAL_DIR);
    let segments = match list_segments(&wal_dir) {
        Ok(s) => s,
        Err(e) => {
            report.note(e);
            Vec::new()
        }
    };
    for (i, (_, path)) in segments.iter().enumerate() {
        report.log_segments += 1;
        let file = path.display().to_string();
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                report.note(Error::io(&file, "read", &e));
                continue;
            }
        };
        let mut records = 0u64;
        let last = i + 1 == segments.len();
        let log_keys = match identity.engine {
            Engine::Log(spec) => Some(spec.keys),
            _ => None,
        };
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
            Ok(s) => report.torn_tail_bytes += (bytes.len() - s.valid_len) as u64,
            Err(e) => report.note(e),
        }
    }
    Ok(report)
}
