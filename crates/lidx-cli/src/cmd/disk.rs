//! What `lidx build` and `lidx bench --on-disk` share: the device option, the storage it
//! opens, and the keys an on-disk index is built on.

use std::path::PathBuf;

use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx_bench::dataset::Dataset;
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

    /// Opens the storage with `block_size`-byte blocks and an LRU cache of `cache_blocks`.
    pub fn storage(&self, block_size: usize, cache_blocks: usize) -> lidx::Result<Storage> {
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

/// The dataset's keys without duplicates: on-disk indexes hold each key once. Prints a note
/// when duplicates were dropped.
pub fn unique_keys(dataset: &Dataset) -> Vec<u64> {
    let mut keys = dataset.keys.clone();
    keys.dedup();
    if keys.len() < dataset.keys.len() {
        eprintln!(
            "note: {} duplicate keys dropped: on-disk indexes hold each key once ({} keys)",
            dataset.keys.len() - keys.len(),
            keys.len()
        );
    }
    keys
}
