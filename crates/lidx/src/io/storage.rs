//! [`Storage`]: where an index's files live and what device serves them.
//!
//! An on-disk structure names its files (`"btree"`, `"data"`, ...) and asks its `Storage` to
//! create or open them; the storage decides the device: a real file with `O_DIRECT`
//! ([`DeviceKind::File`]), or a simulated device ([`DeviceKind::Sim`]) whose blocks are loaded
//! from, and written back to, the same file, or kept only in memory when the storage has no
//! directory. The same index files can therefore be built once and benchmarked on the real
//! device and under every simulated profile. With `cache_blocks > 0` every device is wrapped in
//! its own [`PageCache`] of that many blocks (write-through, or write-back with
//! [`Storage::with_write_back_cache`]). [`Storage::stats`] sums the counters of every
//! device the storage opened, so a benchmark takes one snapshot before and one after.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::io::cache::{CacheMode, PageCache, SharedBlocks};
use crate::io::device::{check_block_size, BlockDevice, DEFAULT_BLOCK_SIZE};
use crate::io::fault::{FaultDevice, FaultPlan};
use crate::io::file::{Caching, FileDevice, OpenMode};
use crate::io::sim::{SimDevice, SimProfile};
use crate::io::stats::IoStats;

/// What serves a storage's files.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceKind {
    /// Real files; `direct` asks for `O_DIRECT` (with the documented fallback).
    File {
        /// Use `O_DIRECT`.
        direct: bool,
    },
    /// Real files read and written through the OS page cache, which keeps their pages
    /// ([`Caching::Kept`]): warm reads, as an application reading files has them. Not a device
    /// to measure I/O on: a block read twice may not reach the disk.
    FileCached,
    /// Simulated devices charging time by a profile.
    Sim(SimProfile),
}

impl DeviceKind {
    /// True for the kinds that read and write real files ([`DeviceKind::File`] and
    /// [`DeviceKind::FileCached`]).
    pub fn is_file(&self) -> bool {
        self.caching().is_some()
    }

    /// What the file kinds let the OS page cache keep (`None` for a simulated device).
    pub(crate) fn caching(&self) -> Option<Caching> {
        match self {
            DeviceKind::File { direct: true } => Some(Caching::Direct),
            DeviceKind::File { direct: false } => Some(Caching::Dropped),
            DeviceKind::FileCached => Some(Caching::Kept),
            DeviceKind::Sim(_) => None,
        }
    }

    /// `file` (O_DIRECT), `file-buffered`, or `sim:<profile>` (see [`SimProfile::parse`]).
    pub fn parse(spec: &str) -> Result<DeviceKind> {
        match spec {
            "file" => Ok(DeviceKind::File { direct: true }),
            "file-buffered" => Ok(DeviceKind::File { direct: false }),
            _ => match spec.strip_prefix("sim:") {
                Some(profile) => Ok(DeviceKind::Sim(SimProfile::parse(profile)?)),
                None => Err(Error::InvalidParameter {
                    name: "device",
                    value: spec.to_string(),
                    expected: "file, file-buffered, or sim:<profile> with profile one of hdd, \
                               sata-ssd, nvme, optane, ram, lat=<dur>,bw=<bytes/s>,p=<n>",
                }),
            },
        }
    }
}

/// A directory of index files served by one kind of device.
///
/// Cloning gives another handle on the same storage: the clones share the in-memory files, the
/// devices opened and their counters ([`Storage::stats`] of either counts both), so a structure
/// that creates files after its build (the disk PGM's merges) keeps a clone of the storage it
/// was built on.
#[derive(Clone)]
pub struct Storage {
    dir: Option<PathBuf>,
    kind: DeviceKind,
    block_size: usize,
    cache_blocks: usize,
    cache_mode: CacheMode,
    /// One cache for every file (`with_shared_cache`), when shared.
    shared: Option<SharedBlocks>,
    faults: Option<Arc<FaultPlan>>,
    memory: Arc<Mutex<HashMap<String, Arc<SimDevice>>>>,
    opened: Arc<Mutex<Opened>>,
}

/// Every device a storage handed out, each counted once in [`Storage::stats`]: a file reopened
/// in memory is the same device again, and a cache's own counters are only its hits and misses.
#[derive(Default)]
struct Opened {
    devices: Vec<Arc<dyn BlockDevice>>,
    caches: Vec<Arc<PageCache>>,
    /// Final counters of the devices and caches of removed files.
    retired: IoStats,
    /// Each file's tag in the shared cache, and the last tag given (tags are never given
    /// again: a handle on a removed file may still read, and caches under its own tag).
    tags: HashMap<String, u64>,
    next_tag: u64,
    /// The earlier names of each file given another by [`Storage::link`], by its newest:
    /// the names its devices and caches may carry.
    aliases: HashMap<String, Vec<String>>,
}

impl Storage {
    /// Files in `dir` (created if missing), served by `kind`, with `block_size`-byte blocks.
    pub fn new(dir: &Path, kind: DeviceKind, block_size: usize) -> Result<Storage> {
        check_block_size(block_size, kind.is_file())?;
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(dir.display().to_string(), "create directory", &e))?;
        Ok(Storage::bare(Some(dir.to_path_buf()), kind, block_size))
    }

    /// Simulated devices with no files at all: everything lives in memory until dropped.
    pub fn in_memory(profile: SimProfile, block_size: usize) -> Result<Storage> {
        check_block_size(block_size, false)?;
        Ok(Storage::bare(None, DeviceKind::Sim(profile), block_size))
    }

    /// A storage with no cache, no faults and nothing opened yet (`block_size` already checked).
    fn bare(dir: Option<PathBuf>, kind: DeviceKind, block_size: usize) -> Storage {
        Storage {
            dir,
            kind,
            block_size,
            cache_blocks: 0,
            cache_mode: CacheMode::WriteThrough,
            shared: None,
            faults: None,
            memory: Arc::new(Mutex::new(HashMap::new())),
            opened: Arc::new(Mutex::new(Opened::default())),
        }
    }

    /// In-memory storage with free I/O and 4 KiB blocks, for tests.
    pub fn ram() -> Storage {
        Storage::in_memory(
            SimProfile::named("ram").expect("built-in profile"),
            DEFAULT_BLOCK_SIZE,
        )
        .expect("4096 is a valid block size")
    }

    /// Wraps every device opened from now on in a write-through LRU [`PageCache`] of `blocks`
    /// blocks.
    pub fn with_cache_blocks(mut self, blocks: usize) -> Storage {
        self.cache_blocks = blocks;
        self.cache_mode = CacheMode::WriteThrough;
        self.shared = None;
        self
    }

    /// Wraps every device opened from now on in a write-through cache, one LRU of `blocks`
    /// blocks shared by all the storage's files (a store's block cache: its memory is `blocks`
    /// blocks however many files the store has). 0 means no cache.
    pub fn with_shared_cache(mut self, blocks: usize) -> Storage {
        self.cache_blocks = blocks;
        self.cache_mode = CacheMode::WriteThrough;
        self.shared = NonZeroUsize::new(blocks).map(|n| SharedBlocks::new(n, self.block_size));
        self
    }

    /// True when one cache serves every file ([`Storage::with_shared_cache`]).
    pub fn cache_is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Empties the shared cache ([`Storage::with_shared_cache`]; nothing without one): every
    /// block is read from its file again on its next read, as by a new process opening the
    /// same files. A shared cache holds what was read and what was written while it had room,
    /// so a store reopened on the storage that loaded it would find its blocks cached; a
    /// benchmark that times the store a user opens empties it first.
    pub fn drop_cached_blocks(&self) {
        if let Some(shared) = &self.shared {
            shared.clear();
        }
    }

    /// Wraps every device opened from now on in a write-back LRU [`PageCache`] of `blocks`
    /// blocks ([`PageCache::write_back`]): writes reach the files at eviction or `sync`.
    pub fn with_write_back_cache(mut self, blocks: usize) -> Storage {
        self.cache_blocks = blocks;
        self.cache_mode = CacheMode::WriteBack;
        self.shared = None;
        self
    }

    /// Injects `plan`'s faults into every device opened from now on (under its cache, when it
    /// has one): for tests of what a structure does when its device fails.
    pub fn with_faults(mut self, plan: Arc<FaultPlan>) -> Storage {
        self.faults = Some(plan);
        self
    }

    /// The fault plan of [`Storage::with_faults`], if any.
    pub fn faults(&self) -> Option<&Arc<FaultPlan>> {
        self.faults.as_ref()
    }

    /// Cache blocks per file (0 = none): an LRU each, or one CLOCK for all when shared.
    pub fn cache_blocks(&self) -> usize {
        self.cache_blocks
    }

    /// Block size of every device.
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// The directory, if the storage has one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The device kind.
    pub fn kind(&self) -> &DeviceKind {
        &self.kind
    }

    /// Creates (or truncates) the file `name` and opens it for writing.
    pub fn create(&self, name: &str) -> Result<Arc<dyn BlockDevice>> {
        self.open_device(name, OpenMode::Create)
    }

    /// Opens the existing file `name`, for writing too when `writable`.
    pub fn open(&self, name: &str, writable: bool) -> Result<Arc<dyn BlockDevice>> {
        let mode = if writable {
            OpenMode::ReadWrite
        } else {
            OpenMode::ReadOnly
        };
        self.open_device(name, mode)
    }

    /// True when the file `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        match &self.dir {
            Some(dir) => dir.join(name).exists(),
            None => self.memory.lock().contains_key(name),
        }
    }

    /// True when `file` is one of the files of the index stored under `name` (the rule of
    /// [`Storage::files_of`]): `name` itself or one of its companion files
    /// ([`Storage::index_of`]). A user's file that merely starts with `name.`
    /// (`alex.lidx.data.orig`) is not one.
    pub fn is_file_of(file: &str, name: &str) -> bool {
        file == name || Self::index_of(file) == Some(name)
    }

    /// The name of the index that `file` is a companion file of, by the names indexes of
    /// several files give them after their main file: ALEX's `name.inner` and `name.data`, the
    /// FITing-tree's `name.inner`, the dynamic PGM's levels `name.L<level>.<generation>`.
    /// `None` for any other name.
    pub fn index_of(file: &str) -> Option<&str> {
        if let Some(index) = file
            .strip_suffix(".inner")
            .or_else(|| file.strip_suffix(".data"))
        {
            return Some(index);
        }
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (rest, generation) = file.rsplit_once('.')?;
        let (index, level) = rest.rsplit_once(".L")?;
        (digits(level) && digits(generation)).then_some(index)
    }

    /// The files of the index stored under `name`: `name` itself (if it exists) and its
    /// companion files (an index of several files, such as ALEX's `name.inner` and
    /// `name.data` or the dynamic PGM's level files `name.L<level>.<generation>`, names them
    /// after its main file: [`Storage::index_of`]), sorted. What a caller removes to remove the whole index,
    /// including files a crash left behind.
    pub fn files_of(&self, name: &str) -> Result<Vec<String>> {
        let belongs = |file: &str| Self::is_file_of(file, name);
        let mut files: Vec<String> = match &self.dir {
            Some(dir) => {
                let entries = std::fs::read_dir(dir)
                    .map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
                let mut files = Vec::new();
                for entry in entries {
                    let entry =
                        entry.map_err(|e| Error::io(dir.display().to_string(), "list", &e))?;
                    if let Some(file) = entry.file_name().to_str().filter(|f| belongs(f)) {
                        files.push(file.to_string());
                    }
                }
                files
            }
            None => self
                .memory
                .lock()
                .keys()
                .filter(|f| belongs(f))
                .cloned()
                .collect(),
        };
        files.sort();
        Ok(files)
    }

    /// Size in bytes of the file `name` (0 if it does not exist).
    pub fn file_bytes(&self, name: &str) -> u64 {
        match &self.dir {
            Some(dir) => std::fs::metadata(dir.join(name)).map_or(0, |m| m.len()),
            None => self
                .memory
                .lock()
                .get(name)
                .map_or(0, |d| d.len_blocks() * self.block_size as u64),
        }
    }

    /// Removes the file `name` (from the directory, or from memory) and lets go of the devices
    /// and caches opened on it; their counters stay in [`Storage::stats`]. Handles still held
    /// elsewhere keep working (an open file outlives its directory entry). A file that does not
    /// exist is not an error.
    pub fn remove(&self, name: &str) -> Result<()> {
        let path_name = self.remove_name(name)?;
        let mut opened = self.opened.lock();
        self.forget_cached(&mut opened, name);
        // A file linked under this name ([`Storage::link`]) may have devices under its others.
        let others = opened.aliases.remove(name).unwrap_or_default();
        let device_name = |d: &str| d == path_name || others.iter().any(|o| o == d);
        let Opened {
            devices,
            caches,
            retired,
            ..
        } = &mut *opened;
        devices.retain(|d| {
            let keep = !device_name(d.name());
            if !keep {
                *retired = *retired + d.stats();
            }
            keep
        });
        caches.retain(|c| {
            let keep = !device_name(c.name());
            if !keep {
                *retired = *retired + c.cache_stats();
            }
            keep
        });
        Ok(())
    }

    /// Gives each file `from` of `names` a second name, `to` (a hard link; in memory, the same
    /// device under both names): what moves `lsm` runs to another level without copying
    /// them, the new names committed before the old ones go, so that a crash between the two
    /// leaves names the manifest does not hold, removed at the next open without touching the
    /// files. The directory is synced once, after the last link (a failure part way leaves
    /// links of the same kind: names no manifest holds). The devices, caches and counters of
    /// `from` serve both names, and [`Storage::remove`] of either name after
    /// [`Storage::unlink`] of the other lets go of them (and of those opened under any earlier
    /// name of the file).
    pub fn link(&self, names: &[(&str, &str)]) -> Result<()> {
        for &(from, to) in names {
            self.link_one(from, to)?;
        }
        if let (Some(dir), false) = (&self.dir, names.is_empty()) {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(dir.display().to_string(), "sync directory", &e))?;
        }
        Ok(())
    }

    /// [`Storage::link`] of one name, without the directory's sync.
    fn link_one(&self, from: &str, to: &str) -> Result<()> {
        let from_device = match &self.dir {
            Some(dir) => {
                let (source, target) = (dir.join(from), dir.join(to));
                std::fs::hard_link(&source, &target)
                    .map_err(|e| Error::io(target.display().to_string(), "link", &e))?;
                source.display().to_string()
            }
            None => {
                let mut memory = self.memory.lock();
                let device = memory.get(from).cloned().ok_or_else(|| Error::Io {
                    file: from.to_string(),
                    op: "link".to_string(),
                    kind: std::io::ErrorKind::NotFound,
                    message: "no such in-memory file".to_string(),
                })?;
                memory.insert(to.to_string(), device);
                from.to_string()
            }
        };
        let mut opened = self.opened.lock();
        let mut names = opened.aliases.get(from).cloned().unwrap_or_default();
        names.push(from_device);
        opened.aliases.insert(to.to_string(), names);
        if let Some(&tag) = opened.tags.get(from) {
            opened.tags.insert(to.to_string(), tag);
        }
        Ok(())
    }

    /// Removes the name `name` of a file that lives on under another ([`Storage::link`]):
    /// its devices, caches, cached blocks and counters stay, for the other name. A name that
    /// does not exist is not an error.
    pub fn unlink(&self, name: &str) -> Result<()> {
        self.remove_name(name)?;
        let mut opened = self.opened.lock();
        opened.tags.remove(name);
        opened.aliases.remove(name);
        Ok(())
    }

    /// Removes the name `name` from the directory (or from memory; a name that does not exist
    /// is not an error), and returns the name its devices carry when opened under it.
    fn remove_name(&self, name: &str) -> Result<String> {
        match &self.dir {
            Some(dir) => {
                let path = dir.join(name);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(path.display().to_string(), "remove", &e)),
                }
                Ok(path.display().to_string())
            }
            None => {
                self.memory.lock().remove(name);
                Ok(name.to_string())
            }
        }
    }

    /// Drops the shared cache's blocks of the file `name` and its tag, so that a new file of
    /// the name (created anew after a removal or a truncation) gets a new tag.
    fn forget_cached(&self, opened: &mut Opened, name: &str) {
        if let (Some(shared), Some(tag)) = (&self.shared, opened.tags.remove(name)) {
            shared.forget(tag);
        }
    }

    fn open_device(&self, name: &str, mode: OpenMode) -> Result<Arc<dyn BlockDevice>> {
        let device: Arc<dyn BlockDevice> = match (&self.dir, &self.kind, self.kind.caching()) {
            (Some(dir), _, Some(caching)) => Arc::new(FileDevice::open(
                &dir.join(name),
                self.block_size,
                mode,
                caching,
            )?),
            (Some(dir), DeviceKind::Sim(profile), _) => Arc::new(SimDevice::open_file(
                &dir.join(name),
                self.block_size,
                profile.clone(),
                mode == OpenMode::Create,
            )?),
            (None, DeviceKind::Sim(profile), _) => {
                let mut memory = self.memory.lock();
                if mode == OpenMode::Create {
                    let fresh = Arc::new(SimDevice::new(name, self.block_size, profile.clone())?);
                    memory.insert(name.to_string(), Arc::clone(&fresh));
                    fresh
                } else {
                    let found = memory.get(name).ok_or_else(|| Error::Io {
                        file: name.to_string(),
                        op: "open".to_string(),
                        kind: std::io::ErrorKind::NotFound,
                        message: "no such in-memory file".to_string(),
                    })?;
                    Arc::clone(found) as Arc<dyn BlockDevice>
                }
            }
            _ => unreachable!("in-memory storage is simulated, and a file kind has a caching"),
        };
        let mut opened = self.opened.lock();
        if !opened.devices.iter().any(|d| Arc::ptr_eq(d, &device)) {
            opened.devices.push(Arc::clone(&device));
        }
        let device: Arc<dyn BlockDevice> = match &self.faults {
            Some(plan) => Arc::new(FaultDevice::new(device, Arc::clone(plan))),
            None => device,
        };
        if self.cache_blocks == 0 {
            return Ok(device);
        }
        let cache = Arc::new(match &self.shared {
            Some(shared) => {
                if mode == OpenMode::Create {
                    self.forget_cached(&mut opened, name);
                }
                let tag = match opened.tags.get(name) {
                    Some(&tag) => tag,
                    None => {
                        opened.next_tag += 1;
                        let tag = opened.next_tag;
                        opened.tags.insert(name.to_string(), tag);
                        tag
                    }
                };
                PageCache::shared(device, shared, self.cache_blocks, tag)
            }
            None => PageCache::with_mode(device, self.cache_blocks, self.cache_mode),
        });
        opened.caches.push(Arc::clone(&cache));
        Ok(cache)
    }

    /// The summed counters of every device this storage opened, each device once, plus the
    /// hits and misses of their caches.
    pub fn stats(&self) -> IoStats {
        let opened = self.opened.lock();
        let devices = opened
            .devices
            .iter()
            .fold(opened.retired, |sum, d| sum + d.stats());
        opened
            .caches
            .iter()
            .fold(devices, |sum, c| sum + c.cache_stats())
    }

    /// How the storage does I/O, for reports.
    pub fn describe(&self) -> String {
        let device = match (&self.kind, self.kind.caching()) {
            (DeviceKind::Sim(p), _) => format!("sim:{}", p.name),
            // An opened device says whether the file system refused `O_DIRECT`.
            (_, caching) => match self.opened.lock().devices.first() {
                Some(d) => d.describe(),
                None => caching.map_or("file", Caching::describe).to_string(),
            },
        };
        if self.cache_blocks > 0 {
            let mode = match self.cache_mode {
                CacheMode::WriteThrough => "",
                CacheMode::WriteBack => " write-back",
            };
            let (kind, scope) = if self.shared.is_some() {
                ("CLOCK", "shared by its files")
            } else {
                ("LRU", "per file")
            };
            format!(
                "{device},{mode} {kind} cache {} blocks {scope}",
                self.cache_blocks
            )
        } else {
            device
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::aligned::AlignedBuf;
    use crate::io::IoClass;

    /// A file linked under new names, each old one unlinked (a run moved down two levels,
    /// opened under its middle name as after a reopen), keeps its data under the newest name,
    /// and its removal lets go of every device opened under any of its names.
    #[test]
    fn a_linked_file_lives_under_its_newest_name_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::new(dir.path(), DeviceKind::parse("file").unwrap(), 4096)
            .unwrap()
            .with_shared_cache(8);
        let device = storage.create("a").unwrap();
        let mut block = AlignedBuf::zeroed(4096);
        device.write_blocks(0, &mut block, IoClass::Data).unwrap();
        device.sync().unwrap();
        storage.link(&[("a", "b")]).unwrap();
        storage.unlink("a").unwrap();
        assert!(!storage.exists("a") && storage.exists("b"));
        let reopened = storage.open("b", false).unwrap();
        storage.link(&[("b", "c")]).unwrap();
        storage.unlink("b").unwrap();
        assert_eq!(storage.file_bytes("c"), 4096);
        let mut read = AlignedBuf::zeroed(4096);
        reopened.read_blocks(0, &mut read, IoClass::Data).unwrap();
        let devices = || storage.opened.lock().devices.len();
        assert!(devices() >= 2);
        storage.remove("c").unwrap();
        assert!(!storage.exists("c"));
        assert_eq!(devices(), 0, "a device outlived its file's last name");
        assert!(storage.opened.lock().aliases.is_empty());
    }

    #[test]
    fn an_index_owns_its_name_and_the_names_after_it_only() {
        assert!(Storage::is_file_of("upd.alex", "upd.alex"));
        assert!(Storage::is_file_of("upd.alex.inner", "upd.alex"));
        assert!(Storage::is_file_of("upd.dpgm.L3.7", "upd.dpgm"));
        assert!(!Storage::is_file_of("upd.alexx", "upd.alex"));
        assert!(!Storage::is_file_of("upd.ale", "upd.alex"));
        assert!(!Storage::is_file_of("x.upd.alex", "upd.alex"));
        assert!(!Storage::is_file_of("upd.alex.data.orig", "upd.alex"));
        assert!(!Storage::is_file_of("upd.dpgm.L3.bak", "upd.dpgm"));
        assert_eq!(Storage::index_of("upd.dpgm.L3.7"), Some("upd.dpgm"));
        assert_eq!(Storage::index_of("upd.alex.notes"), None);
    }

    #[test]
    fn reopened_devices_and_caches_count_once() {
        for cache in [0, 4] {
            let storage = Storage::ram().with_cache_blocks(cache);
            let dev = storage.create("f").unwrap();
            let mut block = vec![0u8; 4096];
            dev.write_blocks(0, &mut block, IoClass::Leaf).unwrap();
            let again = storage.open("f", false).unwrap();
            again.read_blocks(0, &mut block, IoClass::Leaf).unwrap();
            again.read_blocks(0, &mut block, IoClass::Leaf).unwrap();
            let s = storage.stats();
            assert_eq!(s.write_blocks, 1, "cache {cache}");
            assert_eq!(
                s.read_blocks,
                if cache == 0 { 2 } else { 1 },
                "cache {cache}"
            );
            assert_eq!(
                s.cache_hits,
                if cache == 0 { 0 } else { 1 },
                "cache {cache}"
            );
        }
    }

    #[test]
    fn a_shared_cache_holds_its_blocks_for_all_files_and_forgets_a_removed_one() {
        let storage = Storage::ram().with_shared_cache(4);
        assert!(storage.cache_is_shared());
        let write = |name: &str, fill: u8| {
            let dev = storage.create(name).unwrap();
            for b in 0..3 {
                let mut block = vec![fill.wrapping_add(b as u8); 4096];
                dev.write_blocks(b, &mut block, IoClass::Leaf).unwrap();
            }
            dev
        };
        let (a, b) = (write("a", 10), write("b", 20));
        let read = |dev: &Arc<dyn BlockDevice>, block: u64| {
            let mut buf = vec![0u8; 4096];
            dev.read_blocks(block, &mut buf, IoClass::Leaf).unwrap();
            buf[0]
        };
        // Six blocks through a cache of four: the same block of two files is two entries, and
        // the cache never holds more than four in all.
        for _ in 0..2 {
            for blk in 0..3 {
                assert_eq!(read(&a, blk), 10 + blk as u8);
                assert_eq!(read(&b, blk), 20 + blk as u8);
            }
        }
        let s = storage.stats();
        assert_eq!(s.cache_hits + s.cache_misses, 12);
        assert!(s.cache_misses >= 6, "{s:?}");
        // The last four read are cached: reading them again is all hits.
        let before = storage.stats().cache_hits;
        for (dev, blk) in [(&a, 1), (&b, 1), (&a, 2), (&b, 2)] {
            read(dev, blk);
        }
        assert_eq!(storage.stats().cache_hits - before, 4);
        // A removed file's blocks are gone: a new file of its name with one block has no
        // block 2 (the old file's cached one is not served), and reads its own block 0. A
        // handle on the removed file still reads its old bytes and caches them under its own
        // tag, which no new file gets: the new file never sees them.
        let old_block = read(&a, 2);
        storage.remove("a").unwrap();
        let a = storage.create("a").unwrap();
        a.write_blocks(0, &mut vec![50u8; 4096], IoClass::Leaf)
            .unwrap();
        let mut buf = vec![0u8; 4096];
        assert!(a.read_blocks(2, &mut buf, IoClass::Leaf).is_err());
        assert_eq!(read(&a, 0), 50);
        assert_eq!(read(&b, 2), 22);
        assert_eq!(old_block, 12);
        storage.remove("a").unwrap();
        let c = storage.create("a").unwrap();
        c.write_blocks(0, &mut vec![60u8; 4096], IoClass::Leaf)
            .unwrap();
        // `a` (removed) reads its block 0 into the cache; `c` reads its own.
        assert_eq!(read(&a, 0), 50);
        assert_eq!(read(&c, 0), 60);
        assert!(c.read_blocks(2, &mut buf, IoClass::Leaf).is_err());
    }

    #[test]
    fn a_shared_cache_fills_free_room_with_written_data_but_evicts_nothing_for_it() {
        let storage = Storage::ram().with_shared_cache(4);
        let dev = storage.create("f").unwrap();
        // A header and a model block are not cached as written; three data blocks are.
        dev.write_blocks(0, &mut vec![0u8; 4096], IoClass::Header)
            .unwrap();
        dev.write_blocks(1, &mut vec![1u8; 4096], IoClass::Model)
            .unwrap();
        let mut three: Vec<u8> = (0..3 * 4096).map(|i| (2 + i / 4096) as u8).collect();
        dev.write_blocks(2, &mut three, IoClass::Data).unwrap();
        let read = |block: u64| {
            let mut buf = vec![0u8; 4096];
            dev.read_blocks(block, &mut buf, IoClass::Leaf).unwrap();
            buf[0]
        };
        for b in 2..5 {
            assert_eq!(read(b), b as u8);
        }
        let s = storage.stats();
        assert_eq!(
            (s.cache_hits, s.cache_misses),
            (3, 0),
            "written data is cached"
        );
        assert_eq!(s.read_requests, 0);
        // The header's read fills the last free block; then the cache is full, and a leaf
        // written now takes no room: the four cached blocks stay and the new one is read
        // from the device.
        assert_eq!(read(0), 0);
        dev.write_blocks(5, &mut vec![5u8; 4096], IoClass::Leaf)
            .unwrap();
        for b in [2, 3, 4, 0] {
            read(b);
        }
        assert_eq!(storage.stats().cache_hits, 3 + 4);
        assert_eq!(read(5), 5);
        let s = storage.stats();
        assert_eq!((s.cache_misses, s.read_requests), (2, 2));
        // A rewritten cached block is served as written.
        dev.write_blocks(3, &mut vec![33u8; 4096], IoClass::Data)
            .unwrap();
        assert_eq!(read(3), 33);
    }

    #[test]
    fn dropped_cached_blocks_are_read_from_the_device_again() {
        let storage = Storage::ram().with_shared_cache(4);
        let dev = storage.create("f").unwrap();
        dev.write_blocks(0, &mut vec![7u8; 2 * 4096], IoClass::Data)
            .unwrap();
        let mut buf = vec![0u8; 4096];
        dev.read_blocks(1, &mut buf, IoClass::Leaf).unwrap();
        assert_eq!(storage.stats().read_requests, 0, "written, so cached");
        storage.drop_cached_blocks();
        for b in 0..2 {
            dev.read_blocks(b, &mut buf, IoClass::Leaf).unwrap();
            assert_eq!(buf[0], 7);
        }
        let s = storage.stats();
        assert_eq!((s.cache_misses, s.read_requests), (2, 2));
        dev.read_blocks(0, &mut buf, IoClass::Leaf).unwrap();
        assert_eq!(storage.stats().read_requests, 2, "cached again once read");
    }

    #[test]
    fn a_shared_cache_serves_streams_but_does_not_fill_with_them() {
        let storage = Storage::ram().with_shared_cache(8);
        let dev = storage.create("f").unwrap();
        // Written as model blocks, which a write does not cache: the cache starts cold.
        for b in 0..2 {
            dev.write_blocks(b, &mut vec![b as u8; 4096], IoClass::Model)
                .unwrap();
        }
        let mut buf = vec![0u8; 4096];
        // A stream's read of block 0, twice: two misses, nothing cached.
        dev.read_blocks(0, &mut buf, IoClass::Data).unwrap();
        dev.read_blocks(0, &mut buf, IoClass::Data).unwrap();
        assert_eq!(storage.stats().cache_misses, 2);
        // A lookup's read of block 1 fills; a stream then finds it cached.
        dev.read_blocks(1, &mut buf, IoClass::Leaf).unwrap();
        dev.read_blocks(1, &mut buf, IoClass::Data).unwrap();
        let s = storage.stats();
        assert_eq!((s.cache_hits, s.cache_misses), (1, 3));
        assert_eq!(buf[0], 1);
    }
}
