//! What `lidx build` and `lidx bench --on-disk` share: the device option, the storage it
//! opens, and the keys an on-disk index is built on.
//!
//! The on-disk indexes of `lidx_bench::disk_registry` hold `u64` keys. A dataset of `u32`,
//! `i64` or `f64` keys is built on its order-preserving `u64` image (what every model learns
//! on, injective for these types), as the in-memory `lidx bench` runs it, and a note says so.
//! Strings have no such image: 16-byte strings and text are refused by key type, naming what
//! puts byte keys on disk (the store, through `lidx ycsb` or `lidx kv load`).

use std::path::PathBuf;

use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx_bench::dataset::{self, Dataset};
use lidx_bench::keyfile::Keys;
use lidx_bench::BenchError;

/// Where index files live and what device serves them, from `--device` and `--dir`.
#[derive(Debug, Clone)]
pub struct DeviceChoice {
    /// The directory of the index files; `None` keeps a simulated device in memory only.
    pub dir: Option<PathBuf>,
    /// The device kind.
    pub kind: DeviceKind,
}

/// The accepted `--device` forms.
pub const DEVICE_FORMS: &str = "file:<dir> (O_DIRECT), file-buffered:<dir>, or sim:<profile> \
    with profile one of hdd, sata-ssd, nvme, optane, ram, lat=<dur>,bw=<bytes/s>,p=<n>";

impl DeviceChoice {
    /// Parses `--device` (`file:<dir>`, `file-buffered:<dir>`, `sim:<profile>`) with the
    /// optional `--dir` (required by nothing; a simulated device without it stays in memory).
    pub fn parse(device: &str, dir: Option<PathBuf>) -> Result<DeviceChoice, BenchError> {
        let bad = || BenchError::BadSpec {
            what: "device",
            got: device.to_string(),
            expected: DEVICE_FORMS.to_string(),
        };
        let (kind, file_dir) = if let Some(path) = device.strip_prefix("file:") {
            (DeviceKind::File { direct: true }, path)
        } else if let Some(path) = device.strip_prefix("file-buffered:") {
            (DeviceKind::File { direct: false }, path)
        } else if let Some(profile) = device.strip_prefix("sim:") {
            let profile = SimProfile::parse(profile).map_err(|_| bad())?;
            return Ok(DeviceChoice {
                dir,
                kind: DeviceKind::Sim(profile),
            });
        } else {
            return Err(bad());
        };
        if file_dir.is_empty() {
            return Err(bad());
        }
        let file_dir = PathBuf::from(file_dir);
        if dir.as_ref().is_some_and(|d| d != &file_dir) {
            return Err(BenchError::BadSpec {
                what: "--dir",
                got: dir.unwrap_or_default().display().to_string(),
                expected: format!(
                    "nothing, or the directory --device names ({})",
                    file_dir.display()
                ),
            });
        }
        Ok(DeviceChoice {
            dir: Some(file_dir),
            kind,
        })
    }

    /// Checks `block_size` for this device without touching the file system.
    pub fn check_block_size(&self, block_size: usize) -> lidx::Result<()> {
        lidx::io::check_block_size(block_size, matches!(self.kind, DeviceKind::File { .. }))
    }

    /// Creates a file device's directory when it does not exist yet, but only its last
    /// component: a missing parent is more likely a typo than a wish for a new tree, so it is
    /// refused with what to do. Call it once the inputs are checked, so that a failed command
    /// leaves no empty directory behind.
    pub fn create_dir(&self) -> Result<(), BenchError> {
        let Some(dir) = self
            .dir
            .as_ref()
            .filter(|_| matches!(self.kind, DeviceKind::File { .. }))
        else {
            return Ok(());
        };
        if dir.is_dir() {
            return Ok(());
        }
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|p| !p.is_dir()) {
            return Err(BenchError::BadSpec {
                what: "device directory",
                got: dir.display().to_string(),
                expected: format!(
                    "a directory whose parent exists ({} does not: create it first)",
                    parent.map_or_else(String::new, |p| p.display().to_string())
                ),
            });
        }
        std::fs::create_dir(dir).map_err(|source| BenchError::Io {
            path: dir.clone(),
            source,
        })
    }

    /// Opens the storage with `block_size`-byte blocks and an LRU cache of `cache_blocks`
    /// (refused up front when a full cache would not fit the machine's memory).
    pub fn storage(&self, block_size: usize, cache_blocks: usize) -> anyhow::Result<Storage> {
        check_cache(block_size, cache_blocks)?;
        let storage = match (&self.dir, &self.kind) {
            (Some(dir), kind) => Storage::new(dir, kind.clone(), block_size)?,
            (None, DeviceKind::Sim(profile)) => Storage::in_memory(profile.clone(), block_size)?,
            (None, DeviceKind::File { .. }) => {
                unreachable!("parse gives every file device a directory")
            }
        };
        Ok(storage.with_cache_blocks(cache_blocks))
    }
}

/// Refuses a page cache of `blocks` blocks of `block_size` bytes that the machine could not
/// hold once full (each block also costs its slot, about 64 bytes).
pub fn check_cache(block_size: usize, blocks: usize) -> Result<(), BenchError> {
    lidx_bench::count::check_fits("--cache-blocks", blocks as u64, block_size as u64 + 64)
}

/// What `build` and `bench --on-disk` say to string keys.
const STRINGS_ON_DISK: &str = "the on-disk indexes hold numeric keys (u64; u32, i64 and f64 \
    on their order-preserving u64 image); byte-string keys go on disk through the store: \
    `lidx ycsb --store btree,hybrid --dataset <the same spec>` benchmarks it, `lidx kv load` \
    fills one from a .txt file";

/// Loads a dataset for the on-disk indexes (module docs): numeric keys as `u64`, strings
/// refused with [`BenchError::KeyType`].
pub fn load_disk_dataset(spec: &str, seed: u64) -> anyhow::Result<Dataset> {
    super::loading(
        spec,
        || {
            let any = dataset::load_any(spec, seed)?;
            if let Keys::Str16(_) | Keys::Bytes(_) = any.keys {
                return Err(BenchError::KeyType {
                    dataset: any.name,
                    got: any.keys.type_name(),
                    expected: STRINGS_ON_DISK.to_string(),
                });
            }
            any.into_numeric_image()
        },
        |d: &Dataset| &d.notes,
    )
}

/// Sorted keys without duplicates: on-disk indexes and stores hold each key once. Prints a
/// note when duplicates were dropped.
pub fn unique_keys(sorted: &[u64]) -> Vec<u64> {
    let mut keys = sorted.to_vec();
    keys.dedup();
    if keys.len() < sorted.len() {
        eprintln!(
            "note: {} duplicate keys dropped: on-disk indexes hold each key once ({} keys)",
            sorted.len() - keys.len(),
            keys.len()
        );
    }
    keys
}
