//! File-level faults between a store's opens, for the model-based store targets (issue 30):
//! with the store closed, one of its files is swapped for the same file of another store, put
//! back as an older copy of its own, deleted, or has its first block zeroed; then the store
//! is opened. The model says what must happen:
//!
//! * a file of another store, a deleted file the store needs, a zeroed header: the open is
//!   refused with a typed error (never answered), and `Store::check` calls the store damaged;
//! * an older copy of its own table, checkpoint image or page file: refused the same way, or
//!   (only when the copy is still valid for the live checkpoint: a page file copied after the
//!   checkpoint the manifest names, whose blocks of that checkpoint are intact) opened, and
//!   then every answer is the model's;
//! * a deleted page file of a `btree` store that never checkpointed: the next open makes a new
//!   one and the log holds everything, so every answer is the model's;
//! * a zeroed first block of a page file: its second header slot may hold the live stamp, so
//!   the open may go on, and then every answer is the model's.
//!
//! Then the file is put back and the store reopened, and the run goes on.
//!
//! What is not faulted, because the store cannot tell (documented limits): an older copy of a
//! log segment (a prefix of the live one) and a deleted last segment when several remain: the
//! manifest does not record where the log ends.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lidx::kv::{CreateOptions, Engine, Store, StoreOptions};
use lidx::Error;

/// What a fault does to the file it picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFault {
    /// Copies the same file of another store over it.
    Foreign,
    /// Puts back the copy of it saved at an earlier fault.
    Older,
    /// Removes it (all of the log's segments, for the log).
    Delete,
    /// Zeroes its first 4096 bytes.
    ZeroHeader,
}

impl FileFault {
    /// The fault an input byte picks.
    pub fn from_byte(b: u8) -> FileFault {
        [
            FileFault::Foreign,
            FileFault::Older,
            FileFault::Delete,
            FileFault::ZeroHeader,
        ][usize::from(b % 4)]
    }
}

/// The roles of a store's files: their name prefix, in the store's directory (`log-`: a `log`
/// store's checkpoint; `run-`: an `lsm` store's runs) or (`wal-`) in its log's.
const ROLES: [&str; 6] = ["table-", "pages.lbp", "inner-", "log-", "run-", "wal-"];

/// How a file of `role` ends its name (a log's kept-aside `.dropped` copies are not segments).
fn suffix(role: &str) -> &'static str {
    match role {
        "table-" | "run-" => ".lbt",
        "inner-" => ".lbi",
        "log-" => ".ckpt",
        "wal-" => ".log",
        _ => "",
    }
}

/// The files of `role` in the store `dir`, sorted (log segments oldest first).
pub fn files_of(dir: &Path, role: &str) -> Vec<PathBuf> {
    let within = if role == "wal-" {
        dir.join("wal")
    } else {
        dir.to_path_buf()
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(&within)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    let name = p
                        .file_name()
                        .map_or(String::new(), |n| n.to_string_lossy().into());
                    name.starts_with(role) && name.ends_with(suffix(role))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The copies of each role's first file saved at the last fault, for [`FileFault::Older`].
#[derive(Default)]
pub struct Saved(HashMap<&'static str, Vec<u8>>);

impl Saved {
    /// Saves each role's first file of `dir` as it is now (not the log: see the module docs).
    pub fn save(&mut self, dir: &Path) {
        self.0.clear();
        for role in &ROLES[..4] {
            if let Some(path) = files_of(dir, role).first() {
                if let Ok(bytes) = std::fs::read(path) {
                    self.0.insert(role, bytes);
                }
            }
        }
    }
}

/// A second store of `engine` with a few records, folded into its files: where foreign files
/// come from.
pub fn foreign_store(engine: Engine) -> tempfile::TempDir {
    let dir = super::store_ops::run_dir();
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    let store = Store::create(dir.path(), &create, &StoreOptions::default())
        .expect("creating the foreign store");
    for i in 0..20u8 {
        store
            .put(&[b'a', i], &[i; 9])
            .expect("writing the foreign store");
    }
    store.compact().expect("compacting the foreign store");
    store.close().expect("closing the foreign store");
    dir
}

/// The files a fault changed, with their bytes before it (to put back).
pub type Changed = Vec<(PathBuf, Vec<u8>)>;

/// Applies `fault` to the closed store in `dir` on the file of the role `pick` chooses among
/// those present; returns the files changed with their bytes before (to put back), and
/// whether the store may still open (then answering as the model). `None` when the fault has
/// nothing to act on.
pub fn apply(
    fault: FileFault,
    pick: u8,
    dir: &Path,
    foreign: &Path,
    saved: &Saved,
) -> Option<(Changed, bool)> {
    let roles: Vec<&'static str> = ROLES
        .iter()
        .copied()
        .filter(|role| !files_of(dir, role).is_empty())
        .filter(|role| match fault {
            FileFault::Foreign => !files_of(foreign, role).is_empty(),
            FileFault::Older => saved.0.contains_key(role),
            FileFault::Delete | FileFault::ZeroHeader => true,
        })
        .collect();
    let role = *roles.get(usize::from(pick) % roles.len().max(1))?;
    let files = files_of(dir, role);
    let victims: Vec<PathBuf> = if fault == FileFault::Delete && role == "wal-" {
        files
    } else {
        files[..1].to_vec()
    };
    let before: Changed = victims
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).expect("reading a store file")))
        .collect();
    let first = &victims[0];
    let mut may_open = false;
    match fault {
        FileFault::Foreign => {
            let from = &files_of(foreign, role)[0];
            std::fs::copy(from, first).expect("copying a foreign file");
        }
        FileFault::Older => {
            let old = &saved.0[role];
            if *old == before[0].1 {
                return None;
            }
            // A page file copied after the live checkpoint is still valid for it.
            may_open = role == "pages.lbp";
            std::fs::write(first, old).expect("putting back an older file");
        }
        FileFault::Delete => {
            // A btree store that never checkpointed makes a new page file at its next open.
            may_open = role == "pages.lbp" && files_of(dir, "inner-").is_empty();
            for v in &victims {
                std::fs::remove_file(v).expect("removing a store file");
            }
        }
        FileFault::ZeroHeader => {
            // A page file has two header slots: the other one may hold the live stamp.
            may_open = role == "pages.lbp";
            let mut bytes = before[0].1.clone();
            let n = bytes.len().min(4096);
            bytes[..n].fill(0);
            std::fs::write(first, bytes).expect("zeroing a header");
        }
    }
    Some((before, may_open))
}

/// Puts back the files [`apply`] changed.
pub fn restore(before: &[(PathBuf, Vec<u8>)]) {
    for (path, bytes) in before {
        std::fs::write(path, bytes).expect("putting a store file back");
    }
}

/// Asserts that `e`, the refusal of an open after `fault`, is typed: a file of another
/// store, or an older one of its own, is named as such.
pub fn check_refusal(fault: FileFault, e: &Error) {
    if matches!(fault, FileFault::Foreign | FileFault::Older) {
        assert!(
            matches!(e, Error::ForeignFile { .. }),
            "{fault:?}: refused, but not as a foreign file: {e:?}"
        );
        return;
    }
    assert!(
        matches!(
            e,
            Error::ForeignFile { .. }
                | Error::Corrupt { .. }
                | Error::BadMagic { .. }
                | Error::Truncated { .. }
                | Error::ChecksumMismatch { .. }
                | Error::UnsupportedVersion { .. }
                | Error::Io { .. }
        ),
        "{fault:?}: an untyped refusal: {e:?}"
    );
}
