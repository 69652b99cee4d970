//! [`DiskPgm`]: open, build, reads (get, scan across levels), writes (insert, delete, merges)
//! and flush.

use std::sync::Arc;

use crate::disk::header_fields::check_built_block_size;
use crate::disk::{DiskIndex, DiskMap, PhaseClock, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::check_strictly_sorted;

use super::level::{write_level, Level};
use crate::disk::flagged_records::{decode_records, encode_records, per_block_for, Run};

use super::manifest::{capacity, decode_manifest, region_blocks, LevelEntry, Manifest, MAX_LEVELS};
use super::params::DiskPgmParams;

/// The PGM on disk: level 0 in memory, levels of static PGM files on disk. See the
/// module docs.
pub struct DiskPgm {
    storage: Storage,
    name: String,
    manifest_device: Arc<dyn BlockDevice>,
    manifest: Manifest,
    level0: Run,
    /// Disk levels, newest (smallest level number) first.
    levels: Vec<Level>,
    writable: bool,
    dirty: bool,
    timing: WriteBreakdown,
}

impl DiskPgm {
    /// Builds the index `name` in `storage` (its manifest `name`, its level files
    /// `name.L<i>.<generation>`) from strictly ascending `keys`; `payload_of(i, &keys[i], out)`
    /// fills entry `i`'s payload. Everything goes into the smallest level that holds it (level
    /// 0, in memory, for at most `base` keys). Open for writing afterwards.
    ///
    /// `storage` is cloned for the level files merges create (a [`Storage`] is a handle: the
    /// clone shares its devices and counters).
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidParameter`], I/O.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[u64],
        mut payload_of: impl FnMut(usize, &u64, &mut [u8]),
        params: DiskPgmParams,
    ) -> Result<Self> {
        params.check()?;
        check_strictly_sorted(keys)?;
        let block_size = storage.block_size();
        per_block_for(block_size, params.payload_size)?;
        let ps = params.payload_size;
        let mut run = Run {
            keys: keys.to_vec(),
            dead: vec![false; keys.len()],
            payloads: vec![0u8; keys.len() * ps],
        };
        for (i, key) in keys.iter().enumerate() {
            payload_of(i, key, &mut run.payloads[i * ps..(i + 1) * ps]);
        }
        let manifest_device = storage.create(name)?;
        let mut index = DiskPgm {
            storage: storage.clone(),
            name: name.to_string(),
            manifest_device,
            manifest: Manifest {
                params,
                block_size: block_size as u32,
                len: keys.len() as u64,
                sequence: 0,
                next_generation: 0,
                region: 1,
                level0: 0,
                levels: Vec::new(),
                keys_fingerprint: crate::codec::keys_fingerprint(keys),
            },
            level0: Run::default(),
            levels: Vec::new(),
            writable: true,
            dirty: true,
            timing: WriteBreakdown::default(),
        };
        if keys.len() <= params.base {
            index.level0 = run;
        } else {
            let level = (1..=MAX_LEVELS as u32)
                .find(|&l| capacity(params.base, l) >= keys.len() as u64)
                .ok_or_else(|| Error::InvalidParameter {
                    name: "keys",
                    value: keys.len().to_string(),
                    expected: "fewer keys than the largest level holds",
                })?;
            let entry = index.new_entry(level);
            let written = write_level(storage, name, entry, &params, &run, None, true)?;
            index.levels.extend(written);
        }
        index.flush()?;
        Ok(index)
    }

    /// Opens the index `name` of `storage`, for writes too when `writable`: reads the manifest
    /// (header and level 0) and opens every level file, reading its PGM into memory.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::KeyTypeMismatch`],
    /// [`Error::ChecksumMismatch`], [`Error::Truncated`], [`Error::Corrupt`] (naming the file
    /// and block), [`Error::IndexMismatch`] (a level file that is not the one the manifest
    /// names), and the level files' own errors.
    pub fn open(storage: &Storage, name: &str, writable: bool) -> Result<Self> {
        let device = storage.open(name, writable)?;
        let mut buf = AlignedBuf::zeroed(device.block_size());
        device.read_blocks(0, &mut buf, IoClass::Header)?;
        let manifest = decode_manifest(&buf[..device.payload_size()], device.name())?;
        check_built_block_size(
            device.name(),
            manifest.block_size,
            device.block_size(),
            false,
        )?;
        let ps = manifest.params.payload_size;
        let level0 = if manifest.level0 == 0 {
            Run::default()
        } else {
            let region = region_blocks(device.payload_size(), ps, manifest.params.base);
            let first = 1 + u64::from(manifest.region) * region;
            let per = super::manifest::records_per_block(device.payload_size(), ps);
            let blocks = (manifest.level0 as usize).div_ceil(per);
            let mut bytes = AlignedBuf::zeroed(blocks * device.block_size());
            device.read_blocks(first, &mut bytes, IoClass::Header)?;
            decode_records(
                &bytes,
                manifest.level0 as usize,
                ps,
                device.block_size(),
                first,
                device.name(),
            )?
        };
        let levels = manifest
            .levels
            .iter()
            .map(|e| Level::open(storage, name, *e, &manifest.params))
            .collect::<Result<Vec<_>>>()?;
        Ok(DiskPgm {
            storage: storage.clone(),
            name: name.to_string(),
            manifest_device: device,
            manifest,
            level0,
            levels,
            writable,
            dirty: false,
            timing: WriteBreakdown::default(),
        })
    }

    /// The build parameters the manifest records.
    pub fn params(&self) -> DiskPgmParams {
        self.manifest.params
    }

    /// Records per level, level 0 first, then each disk level as `(level, records)`.
    pub fn level_sizes(&self) -> (usize, Vec<(u32, u64)>) {
        (
            self.level0.len(),
            self.levels
                .iter()
                .map(|l| (l.entry.level, l.entry.records))
                .collect(),
        )
    }

    fn new_entry(&mut self, level: u32) -> LevelEntry {
        let generation = self.manifest.next_generation;
        self.manifest.next_generation += 1;
        LevelEntry {
            level,
            generation,
            records: 0,
        }
    }

    /// The newest record of `key`: `Some(true)` live (payload in `buf[1..]`), `Some(false)` a
    /// tombstone, `None` no record. Reads disk levels newest first until one holds the key.
    fn find(&self, key: u64, buf: &mut [u8]) -> Result<Option<bool>> {
        let ps = self.manifest.params.payload_size;
        if let Ok(i) = self.level0.find(key) {
            let live = !self.level0.dead[i];
            buf[1..1 + ps].copy_from_slice(self.level0.payload(i, ps));
            return Ok(Some(live));
        }
        for level in &self.levels {
            if let Some(live) = level.get(key, buf)? {
                return Ok(Some(live));
            }
        }
        Ok(None)
    }

    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    /// Puts a record of `key` into level 0, merging level 0 into the disk levels first when it
    /// is full and does not hold `key`.
    fn put(&mut self, key: u64, dead: bool, payload: &[u8], clock: &mut PhaseClock) -> Result<()> {
        let ps = self.manifest.params.payload_size;
        let mut at = self.level0.find(key);
        if at.is_err() && self.level0.len() >= self.manifest.params.base {
            self.merge_level0(clock)?;
            at = self.level0.find(key);
        }
        self.level0.put(at, key, dead, payload, ps);
        self.dirty = true;
        self.timing.insert_ns += clock.lap();
        Ok(())
    }

    /// Merges level 0 and the disk levels above the first that can take them all into that
    /// level (the LSM rule of the in-memory dynamic PGM: level `j` is the first whose capacity
    /// `base * 2^j` holds level 0 and levels `1..=j`). Writes the new level file, then the
    /// manifest naming it (a flush), then removes the files it replaced: see the crash rules in
    /// the [module docs](super).
    fn merge_level0(&mut self, clock: &mut PhaseClock) -> Result<()> {
        let ps = self.manifest.params.payload_size;
        let base = self.manifest.params.base;
        let mut total = self.level0.len() as u64;
        let mut target = None;
        for j in 1..=MAX_LEVELS as u32 {
            total += self
                .levels
                .iter()
                .find(|l| l.entry.level == j)
                .map_or(0, |l| l.entry.records);
            if total <= capacity(base, j) {
                target = Some(j);
                break;
            }
        }
        let target = target.ok_or_else(|| Error::InvalidParameter {
            name: "keys",
            value: total.to_string(),
            expected: "fewer records than the largest level holds",
        })?;
        // Newer levels over older ones; the target level itself is streamed while writing.
        let mut newer = std::mem::take(&mut self.level0);
        let merged: Vec<usize> = (0..self.levels.len())
            .filter(|&i| self.levels[i].entry.level <= target)
            .collect();
        let older = merged
            .last()
            .filter(|&&i| self.levels[i].entry.level == target)
            .copied();
        for &i in &merged {
            if Some(i) != older {
                newer = newer.merge_over(&self.levels[i].read_all(ps)?, ps);
            }
        }
        let deepest = self.levels.iter().all(|l| l.entry.level <= target);
        let entry = self.new_entry(target);
        let written = write_level(
            &self.storage,
            &self.name,
            entry,
            &self.manifest.params,
            &newer,
            older.map(|i| &self.levels[i]),
            deepest,
        );
        let written = match written {
            Ok(w) => w,
            Err(e) => {
                self.level0 = newer;
                return Err(e);
            }
        };
        self.timing.smo_ns += clock.lap();
        let removed: Vec<Level> = merged
            .iter()
            .rev()
            .map(|&i| self.levels.remove(i))
            .collect();
        let at = self
            .levels
            .iter()
            .position(|l| l.entry.level > target)
            .unwrap_or(self.levels.len());
        if let Some(level) = written {
            self.levels.insert(at, level);
        }
        self.flush()?;
        for level in removed {
            let name = level.name.clone();
            drop(level);
            self.storage.remove(&name)?;
        }
        self.timing.maintenance_ns += clock.lap();
        Ok(())
    }

    /// Writes level 0 into the region the header on disk does not name, syncs, then writes the
    /// header naming it and the levels, and syncs again (module docs).
    fn write_manifest(&mut self) -> Result<()> {
        let device = self.manifest_device.as_ref();
        let ps = self.manifest.params.payload_size;
        let bs = device.block_size();
        let region = 1 - self.manifest.region;
        let region_len = region_blocks(device.payload_size(), ps, self.manifest.params.base);
        let first = 1 + u64::from(region) * region_len;
        if !self.level0.is_empty() {
            let per = super::manifest::records_per_block(device.payload_size(), ps);
            let blocks = self.level0.len().div_ceil(per);
            let mut bytes = AlignedBuf::zeroed(blocks * bs);
            encode_records(&self.level0, ps, bs, &mut bytes);
            device.write_blocks(first, &mut bytes, IoClass::Header)?;
        }
        device.sync()?;
        self.manifest.region = region;
        self.manifest.level0 = self.level0.len() as u32;
        self.manifest.levels = self.levels.iter().map(|l| l.entry).collect();
        self.manifest.sequence += 1;
        let mut buf = AlignedBuf::zeroed(bs);
        self.manifest.encode(&mut buf[..device.payload_size()]);
        device.write_blocks(0, &mut buf, IoClass::Header)?;
        device.sync()
    }

    fn check_payload(&self, payload: &[u8]) -> Result<()> {
        if payload.len() != self.manifest.params.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly payload_size() bytes",
            });
        }
        Ok(())
    }

    fn record_buf(&self) -> Vec<u8> {
        vec![0u8; self.manifest.params.payload_size + 1]
    }
}

impl DiskIndex<u64> for DiskPgm {
    fn len(&self) -> u64 {
        self.manifest.len
    }

    fn keys_fingerprint(&self) -> u64 {
        self.manifest.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.manifest.params.payload_size
    }

    fn get(&self, key: &u64, payload: &mut [u8]) -> Result<bool> {
        let ps = self.manifest.params.payload_size;
        if payload.len() < ps {
            return Err(Error::InvalidParameter {
                name: "payload buffer",
                value: format!("{} bytes for {ps}-byte payloads", payload.len()),
                expected: "a buffer of at least payload_size() bytes",
            });
        }
        let mut buf = self.record_buf();
        if self.find(*key, &mut buf)? == Some(true) {
            payload[..ps].copy_from_slice(&buf[1..]);
            return Ok(true);
        }
        Ok(false)
    }

    /// Merges the levels' runs from `start`, newest record of each key first, skipping
    /// tombstones: each disk level is read `limit` records at a time (one lookup, then the
    /// blocks after it), again from past its last record when the merge needs more.
    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        let ps = self.manifest.params.payload_size;
        if limit == 0 {
            return Ok(0);
        }
        // One cursor per source, newest first: level 0, then the disk levels.
        struct Cursor {
            run: Run,
            at: usize,
            /// The level may hold records past the run.
            more: bool,
        }
        let from0 = self.level0.find(*start).unwrap_or_else(|i| i);
        let mut cursors = vec![Cursor {
            run: Run {
                keys: self.level0.keys[from0..].to_vec(),
                dead: self.level0.dead[from0..].to_vec(),
                payloads: self.level0.payloads[from0 * ps..].to_vec(),
            },
            at: 0,
            more: false,
        }];
        for level in &self.levels {
            let mut run = Run::default();
            let n = level.scan_into(*start, limit, &mut run, ps)?;
            cursors.push(Cursor {
                run,
                at: 0,
                more: n == limit,
            });
        }
        let mut n = 0;
        while n < limit {
            // Refill exhausted disk cursors that may have more.
            for (c, cursor) in cursors.iter_mut().enumerate().skip(1) {
                if cursor.at == cursor.run.len() && cursor.more {
                    let Some(next) = cursor.run.keys.last().and_then(|k| k.checked_add(1)) else {
                        cursor.more = false;
                        continue;
                    };
                    let mut run = Run::default();
                    let got = self.levels[c - 1].scan_into(next, limit, &mut run, ps)?;
                    *cursor = Cursor {
                        run,
                        at: 0,
                        more: got == limit,
                    };
                }
            }
            let Some(min) = cursors
                .iter()
                .filter(|c| c.at < c.run.len())
                .map(|c| c.run.keys[c.at])
                .min()
            else {
                break;
            };
            let mut taken = false;
            for cursor in cursors.iter_mut() {
                if cursor.at < cursor.run.len() && cursor.run.keys[cursor.at] == min {
                    if !taken {
                        taken = true;
                        if !cursor.run.dead[cursor.at] {
                            keys.push(min);
                            payloads.extend_from_slice(cursor.run.payload(cursor.at, ps));
                            n += 1;
                        }
                    }
                    cursor.at += 1;
                }
            }
        }
        Ok(n)
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.level0.keys.capacity() * 8
            + self.level0.dead.capacity()
            + self.level0.payloads.capacity()
            + self
                .levels
                .iter()
                .map(|l| l.file.memory_bytes() + l.name.capacity())
                .sum::<usize>()
    }

    fn disk_bytes(&self) -> u64 {
        self.storage.file_bytes(&self.name)
            + self.levels.iter().map(|l| l.file.disk_bytes()).sum::<u64>()
    }

    fn storage_bytes(&self) -> StorageBytes {
        let bytes = self.disk_bytes();
        StorageBytes {
            allocated: bytes,
            used: bytes,
            free: 0,
        }
    }

    fn describe(&self) -> String {
        let p = &self.manifest.params;
        format!(
            "disk PGM (eps {}, eps_rec {}, level 0 of {} in memory, {} disk levels, {}-byte \
             payloads, {})",
            p.pgm.eps,
            p.pgm.eps_recursive,
            p.base,
            self.levels.len(),
            p.payload_size,
            self.manifest_device.describe()
        )
    }
}

impl DiskMap<u64> for DiskPgm {
    fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("insert")?;
        self.check_payload(payload)?;
        let mut buf = self.record_buf();
        let present = self.find(key, &mut buf)? == Some(true);
        self.timing.search_ns += clock.lap();
        self.put(key, false, payload, &mut clock)?;
        if !present {
            self.manifest.len += 1;
        }
        Ok(present)
    }

    fn delete(&mut self, key: &u64) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("delete")?;
        let mut buf = self.record_buf();
        let present = self.find(*key, &mut buf)? == Some(true);
        self.timing.search_ns += clock.lap();
        if !present {
            return Ok(false);
        }
        self.manifest.len -= 1;
        if self.levels.is_empty() {
            // Nothing older can hold the key: drop it from level 0 instead of a tombstone.
            if let Ok(i) = self.level0.find(*key) {
                self.level0.remove(i, self.manifest.params.payload_size);
            }
            self.dirty = true;
            self.timing.insert_ns += clock.lap();
            return Ok(true);
        }
        let zeros = vec![0u8; self.manifest.params.payload_size];
        self.put(*key, true, &zeros, &mut clock)?;
        Ok(true)
    }

    /// Writes level 0 and the level list to the manifest (module docs): after it returns,
    /// reopening gives the index as it is now. A no-op on a read-only index.
    fn flush(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        self.write_manifest()?;
        self.dirty = false;
        Ok(())
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.timing
    }
}

impl std::fmt::Debug for DiskPgm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskPgm")
            .field("name", &self.name)
            .field("manifest", &self.manifest)
            .field("writable", &self.writable)
            .finish()
    }
}

impl Drop for DiskPgm {
    /// Flushes what changed since the last flush; errors are lost here, so call
    /// [`DiskMap::flush`] to see them.
    fn drop(&mut self) {
        if self.dirty && self.writable {
            let _ = self.write_manifest();
        }
    }
}
