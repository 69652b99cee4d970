//! What `lidx build` and `lidx bench --on-disk` share: the device option, the storage it
//! opens, and the keys an on-disk index is built on.
//!
//! The on-disk indexes of `lidx_bench::disk_registry` hold `u64` keys. A dataset of `u32`,
//! `i64` or `f64` keys is built on its order-preserving `u64` image (what every model learns
//! on, injective for these types), as the in-memory `lidx bench` runs it, and a note says so.
//! Strings have no such image: text and 16-byte strings go to the byte-key indexes of
//! `lidx_bench::byte_disk_registry` (the byte table, the byte B+-tree). Which kind a dataset
//! takes is read from its spec, so an index of the other kind is refused by name
//! ([`DiskIndexes::parse`]) before any data is read or directory created.

use std::path::PathBuf;

use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx_bench::byte_disk_registry::ByteIndexSpec;
use lidx_bench::dataset::{self, Dataset};
use lidx_bench::disk_registry::{disk_index_forms, DiskIndexSpec};
use lidx_bench::keyfile::Keys;
use lidx_bench::store_keys::RankedKeys;
use lidx_bench::BenchError;

use super::is_string_dataset;

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
        lidx::io::check_block_size(block_size, self.kind.is_file())
    }

    /// Creates a file device's directory when it does not exist yet, but only its last
    /// component: a missing parent is more likely a typo than a wish for a new tree, so it is
    /// refused with what to do. Call it once the inputs are checked, so that a failed command
    /// leaves no empty directory behind.
    pub fn create_dir(&self) -> Result<(), BenchError> {
        let Some(dir) = self.dir.as_ref().filter(|_| self.kind.is_file()) else {
            return Ok(());
        };
        if dir.is_dir() {
            return Ok(());
        }
        if dir.exists() {
            return Err(BenchError::BadSpec {
                what: "device directory",
                got: dir.display().to_string(),
                expected: "a directory: this is a file, not a directory; name another path"
                    .to_string(),
            });
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
            (None, DeviceKind::File { .. } | DeviceKind::FileCached) => {
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

/// The indexes of an `--index` list, of the kind the dataset's keys take.
#[derive(Debug)]
pub enum DiskIndexes {
    /// Indexes over numeric keys (on their `u64` image).
    Numeric(Vec<DiskIndexSpec>),
    /// Indexes over byte-string keys.
    Bytes(Vec<ByteIndexSpec>),
}

impl DiskIndexes {
    /// Parses `list` for the dataset `dataset` (its key type read from the spec, see
    /// [`is_string_dataset`]): byte-key indexes for strings, numeric ones otherwise. An index of
    /// the other kind is refused by name with [`BenchError::BadSpec`] (a usage error) listing
    /// the indexes that fit, before anything is read or created.
    pub fn parse(list: &str, dataset: &str) -> Result<DiskIndexes, BenchError> {
        let strings = is_string_dataset(dataset);
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if ByteIndexSpec::is_byte_name(item) != strings {
                let (what, expected) = if strings {
                    (
                        "on-disk index for string keys",
                        format!(
                            "{} ({dataset} holds byte-string keys; `{item}` indexes numeric ones)",
                            ByteIndexSpec::accepted_forms()
                        ),
                    )
                } else {
                    (
                        "on-disk index for numeric keys",
                        format!(
                            "{} ({dataset} holds numeric keys; `{item}` indexes byte strings: \
                             text or str16 datasets)",
                            disk_index_forms()
                        ),
                    )
                };
                return Err(BenchError::BadSpec {
                    what,
                    got: item.to_string(),
                    expected,
                });
            }
        }
        Ok(if strings {
            DiskIndexes::Bytes(ByteIndexSpec::parse_list(list)?)
        } else {
            DiskIndexes::Numeric(DiskIndexSpec::parse_list(list)?)
        })
    }
}

/// Loads a dataset for the numeric on-disk indexes (module docs) as `u64`; a string dataset
/// the spec did not show ([`is_string_dataset`]) is [`BenchError::KeyType`].
pub fn load_disk_dataset(spec: &str, seed: u64) -> anyhow::Result<Dataset> {
    super::loading(
        spec,
        || {
            let any = dataset::load_any(spec, seed)?;
            if let Keys::Str16(_) | Keys::Bytes(_) = any.keys {
                return Err(BenchError::KeyType {
                    dataset: any.name,
                    got: any.keys.type_name(),
                    expected: format!(
                        "the byte-key indexes take them: {}",
                        ByteIndexSpec::accepted_forms()
                    ),
                });
            }
            any.into_numeric_image()
        },
        |d: &Dataset| &d.notes,
    )
}

/// Loads a dataset of string keys for the byte-key indexes: its name and its sorted unique
/// keys (a `str16` key as its 16 bytes), with a note when duplicates were dropped. Numeric keys
/// are [`BenchError::KeyType`].
pub fn load_byte_keys(spec: &str, seed: u64) -> anyhow::Result<(String, RankedKeys)> {
    let any = super::load_any_dataset(spec, seed)?;
    if !matches!(any.keys, Keys::Str16(_) | Keys::Bytes(_)) {
        return Err(BenchError::KeyType {
            dataset: any.name,
            got: any.keys.type_name(),
            expected: format!(
                "the byte-key indexes ({}) take text or str16 keys",
                ByteIndexSpec::accepted_forms()
            ),
        }
        .into());
    }
    let keys = RankedKeys::encode(&any.keys);
    note_dropped(any.keys.len(), keys.len());
    Ok((any.name, keys))
}

/// Sorted keys without duplicates: on-disk indexes and stores hold each key once. Prints a
/// note when duplicates were dropped.
pub fn unique_keys(sorted: &[u64]) -> Vec<u64> {
    let mut keys = sorted.to_vec();
    keys.dedup();
    note_dropped(sorted.len(), keys.len());
    keys
}

/// Says how many duplicate keys of `all` were dropped, leaving `unique`.
fn note_dropped(all: usize, unique: usize) {
    if unique < all {
        note!(
            "note: {} duplicate keys dropped: on-disk indexes hold each key once ({unique} keys)",
            all - unique
        );
    }
}
