//! [`StaticLearned`]: sorted records in data blocks on disk, a learned model in memory.
//!
//! See the module docs of [`super`] for the design and the papers' sections.

use std::marker::PhantomData;
use std::sync::{mpsc, Arc};

use crate::codec::{Decoder, KeysFingerprint};
use crate::disk::DiskIndex;
use crate::error::{Error, Result};
use crate::index::ApproxPos;
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::Key;
use crate::mem::persist::Persist;

use super::data_block::{check_follows, decode_data_block, FIRST_DATA_BLOCK};
use super::fetch::{Fetch, Leaves};
use super::header::{decode_header, Header};
use super::params::{Granularity, StaticLearnedParams};

/// The disk-resident static learned index: records on disk, model `M` in memory.
pub struct StaticLearned<K, M> {
    built: StaticLearnedParams,
    device: Arc<dyn BlockDevice>,
    model: M,
    len: usize,
    per_block: usize,
    group: usize,
    payload_size: usize,
    granularity: Granularity,
    fetch: Fetch,
    data_blocks: u64,
    model_bytes: u64,
    disk_bytes: u64,
    /// The keys' fingerprint the header records.
    keys_fingerprint: u64,
    _key: PhantomData<fn() -> K>,
}

/// Reads and validates the header of the static learned index file `name`.
pub fn read_header(storage: &Storage, name: &str) -> Result<Header> {
    let device = storage.open(name, false)?;
    header_of(device.as_ref())
}

/// The model kind (`Persist::KIND`) of the static learned index file `name`, so a caller can
/// pick the model type to open it with.
pub fn read_kind(storage: &Storage, name: &str) -> Result<u32> {
    Ok(read_header(storage, name)?.model_kind)
}

fn header_of(device: &dyn BlockDevice) -> Result<Header> {
    let mut buf = AlignedBuf::zeroed(device.block_size());
    device.read_blocks(0, &mut buf, IoClass::Header)?;
    decode_header(device.name(), &buf[..device.payload_size()])
}

impl<K: Key, M: Persist<K>> StaticLearned<K, M> {
    /// Opens the index file `name`: reads the header and the model (kept in memory). `fetch`
    /// overrides the strategy recorded at build time. Errors: `BadMagic`,
    /// `UnsupportedVersion`, `KeyTypeMismatch` (file built for another key type),
    /// `ModelKindMismatch` (another model type), `Truncated`, `ChecksumMismatch`, `Corrupt`.
    pub fn open(storage: &Storage, name: &str, fetch: Option<Fetch>) -> Result<Self> {
        let device = storage.open(name, false)?;
        let header = header_of(device.as_ref())?;
        let file = device.name().to_string();
        crate::key::check_key_type::<K>(&file, &header.key_name, header.key_size)?;
        if header.block_size as usize != device.block_size() {
            return Err(Error::Corrupt {
                file,
                block: Some(0),
                what: format!(
                    "header: written with {}-byte blocks, opened with {}-byte blocks",
                    header.block_size,
                    device.block_size()
                ),
            });
        }
        if header.model_kind != M::KIND {
            return Err(Error::ModelKindMismatch {
                file,
                expected: M::KIND,
                got: header.model_kind,
            });
        }
        if device.len_blocks() < header.total_blocks() {
            return Err(Error::Truncated {
                file,
                what: format!(
                    "{} blocks, the header describes {}",
                    device.len_blocks(),
                    header.total_blocks()
                ),
            });
        }
        let model = read_model::<K, M>(device.as_ref(), &header)?;
        let points = usize::try_from(header.model_points()).ok();
        if usize::try_from(header.len).is_err() || points != Some(model.len()) {
            return Err(Error::Corrupt {
                file,
                block: Some(header.model_first_block()),
                what: format!(
                    "model covers {} keys, the header says {}",
                    model.len(),
                    header.model_points()
                ),
            });
        }
        let fetch = fetch.unwrap_or(header.fetch);
        Ok(Self::assemble(device, model, header, fetch))
    }

    pub(super) fn assemble(
        device: Arc<dyn BlockDevice>,
        model: M,
        header: Header,
        fetch: Fetch,
    ) -> Self {
        StaticLearned {
            built: header.params(),
            disk_bytes: header.total_blocks() * u64::from(header.block_size),
            device,
            model,
            len: header.len as usize,
            per_block: header.per_block as usize,
            group: header.group() as usize,
            payload_size: header.payload_size as usize,
            granularity: header.granularity,
            fetch,
            data_blocks: header.data_blocks,
            model_bytes: header.model_bytes,
            keys_fingerprint: header.keys_fingerprint,
            _key: PhantomData,
        }
    }

    /// The build parameters the file records (its default fetch strategy among them; the one
    /// lookups use is [`Self::fetch`]) and the model's parameters as its builder named them:
    /// what a caller checks a file against before trusting that it is the index it asked for.
    pub fn params(&self) -> &StaticLearnedParams {
        &self.built
    }

    /// The in-memory model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Records per data block.
    pub fn per_block(&self) -> usize {
        self.per_block
    }

    /// Number of data blocks.
    pub fn data_blocks(&self) -> u64 {
        self.data_blocks
    }

    /// Length of the model's encoding on disk, in bytes.
    pub fn model_disk_bytes(&self) -> u64 {
        self.model_bytes
    }

    /// The prediction granularity the file was built with.
    pub fn granularity(&self) -> Granularity {
        self.granularity
    }

    /// The fetching strategy [`DiskIndex::get`] and [`DiskIndex::scan`] use.
    pub fn fetch(&self) -> Fetch {
        self.fetch
    }

    /// Changes the fetching strategy of [`DiskIndex::get`] and [`DiskIndex::scan`].
    pub fn set_fetch(&mut self, fetch: Fetch) {
        self.fetch = fetch;
    }

    /// The window of items that holds `key`'s lower bound: `lo <= lower_bound <= hi <= len`,
    /// `lo <= pos <= hi` (`pos` is where one-by-one fetching starts).
    ///
    /// At group size `G > 1` the model's window `[glo, ghi)` bounds the lower bound `j` of
    /// `key` among the group first keys. The first key of group `j` is `>= key`, so the item
    /// lower bound is at most `j G`; the first key of group `j - 1` is `< key`, so it is above
    /// `(j - 1) G`. Hence the item window `[(glo - 1) G, ghi G)`, clamped to `len`. The search
    /// starts in the middle of group `pos`: models floor an interpolated position (PGM,
    /// RadixSpline) or point at the group whose minimum is below the key (zone map), so `pos`
    /// is usually the group that holds the key, one less than its lower bound `j`.
    pub fn window(&self, key: &K) -> ApproxPos {
        let w = self.model.search(*key);
        let n = self.len;
        if self.group == 1 {
            let hi = w.hi.min(n);
            let lo = w.lo.min(hi);
            return ApproxPos {
                pos: w.pos.clamp(lo, hi),
                lo,
                hi,
            };
        }
        let g = self.group;
        let hi = w.hi.saturating_mul(g).min(n);
        let lo = w.lo.saturating_sub(1).saturating_mul(g).min(hi);
        let pos = w.pos.saturating_mul(g).saturating_add(g / 2);
        ApproxPos {
            pos: pos.clamp(lo, hi),
            lo,
            hi,
        }
    }

    fn leaves(&self) -> Leaves<'_> {
        Leaves {
            device: self.device.as_ref(),
            len: self.len,
            per_block: self.per_block,
            payload_size: self.payload_size,
        }
    }

    /// Position of the first entry whose key is `>= key` (`len()` when none), fetching with
    /// `fetch`.
    pub fn lower_bound_with(&self, key: &K, fetch: Fetch) -> Result<u64> {
        let found = self.leaves().find(key, &self.window(key), fetch, false)?;
        Ok(found.pos as u64)
    }

    /// [`StaticLearned::lower_bound_with`] with the index's fetching strategy.
    pub fn lower_bound(&self, key: &K) -> Result<u64> {
        self.lower_bound_with(key, self.fetch)
    }

    /// [`DiskIndex::get`] fetching with `fetch`.
    pub fn get_with(&self, key: &K, payload: &mut [u8], fetch: Fetch) -> Result<bool> {
        self.check_payload_buffer(payload)?;
        let found = self.leaves().find(key, &self.window(key), fetch, true)?;
        let Some(run) = found.run.filter(|_| found.pos < self.len) else {
            return Ok(false);
        };
        let (k, p) = run.record::<K>(found.pos);
        if k.key_cmp(key) != std::cmp::Ordering::Equal {
            return Ok(false);
        }
        payload[..self.payload_size].copy_from_slice(p);
        Ok(true)
    }

    fn check_payload_buffer(&self, payload: &[u8]) -> Result<()> {
        if payload.len() < self.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("a buffer of {} bytes", payload.len()),
                expected: "a buffer of at least payload_size() bytes",
            });
        }
        Ok(())
    }

    /// [`DiskIndex::scan`] fetching the first entry with `fetch`; the blocks after the ones
    /// that lookup read are read in one more request.
    pub fn scan_with(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
        fetch: Fetch,
    ) -> Result<usize> {
        if limit == 0 {
            return Ok(0);
        }
        let leaves = self.leaves();
        let found = leaves.find(start, &self.window(start), fetch, true)?;
        let end = found.pos.saturating_add(limit).min(self.len);
        let Some(run) = found.run.filter(|_| found.pos < end) else {
            return Ok(0);
        };
        let mut append = |run: &super::fetch::Run, from: usize, to: usize| {
            for i in from..to {
                let (k, p) = run.record::<K>(i);
                keys.push(k);
                payloads.extend_from_slice(p);
            }
        };
        append(&run, found.pos, end.min(run.end()));
        if end > run.end() {
            let first = run.last_block() + 1;
            let last = (end - 1) / self.per_block;
            let more = leaves.read::<K>(first, last - first + 1)?;
            append(&more, more.start(), end);
        }
        Ok(end - found.pos)
    }
}

impl<K: Key, M: Persist<K>> StaticLearned<K, M> {
    /// Hands every record, in key order, to `f`, reading `batch_blocks` data blocks (at least
    /// one) per request with [`IoClass::Data`]: a merge's sequential read, counted apart from the
    /// leaf reads of lookups. A reader thread reads the next batch while `f` consumes the
    /// current one (two buffers, reused), so the device and the CPU work at once. Every block is
    /// validated, and the key order across blocks checked (`Corrupt`). The first error `f`
    /// returns stops the scan and is returned.
    #[doc(hidden)]
    pub fn for_each_record(
        &self,
        batch_blocks: usize,
        mut f: impl FnMut(&K, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let batch = batch_blocks.max(1);
        let block_size = self.device.block_size();
        let data_blocks = self.data_blocks as usize;
        let device = &self.device;
        std::thread::scope(|s| {
            let (full_tx, full_rx) = mpsc::sync_channel::<Result<(usize, AlignedBuf)>>(1);
            let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
            for _ in 0..2 {
                let _ = free_tx.send(AlignedBuf::zeroed(
                    batch.min(data_blocks.max(1)) * block_size,
                ));
            }
            s.spawn(move || {
                let mut next = 0;
                while next < data_blocks {
                    let Ok(mut buf) = free_rx.recv() else { return };
                    let count = (data_blocks - next).min(batch);
                    let first = FIRST_DATA_BLOCK + next as u64;
                    let read =
                        device.read_blocks(first, &mut buf[..count * block_size], IoClass::Data);
                    let failed = read.is_err();
                    if full_tx.send(read.map(|()| (next, buf))).is_err() || failed {
                        return;
                    }
                    next += count;
                }
            });
            let mut previous: Option<K> = None;
            let mut consume = || -> Result<()> {
                for message in &full_rx {
                    let (next, buf) = message?;
                    let count = (data_blocks - next).min(batch);
                    self.decode_batch(next, &buf[..count * block_size], &mut previous, &mut f)?;
                    let _ = free_tx.send(buf);
                }
                Ok(())
            };
            let result = consume();
            drop(full_rx);
            result
        })
    }

    /// Decodes the data blocks in `buf`, the first being data block `next`, and hands their
    /// records to `f`; `previous` is the last key handed so far.
    fn decode_batch(
        &self,
        next: usize,
        buf: &[u8],
        previous: &mut Option<K>,
        f: &mut impl FnMut(&K, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let block_size = self.device.block_size();
        let payload = self.device.payload_size();
        for (j, bytes) in buf.chunks_exact(block_size).enumerate() {
            let block_no = FIRST_DATA_BLOCK + (next + j) as u64;
            let expected = (self.len - (next + j) * self.per_block).min(self.per_block);
            let block = decode_data_block::<K>(
                self.device.name(),
                block_no,
                &bytes[..payload],
                expected,
                self.payload_size,
            )?;
            check_follows(self.device.name(), block_no, *previous, block.key(0))?;
            for r in 0..expected {
                f(&block.key(r), block.payload(r))?;
            }
            *previous = Some(block.key(expected - 1));
        }
        Ok(())
    }
}

fn read_model<K: Key, M: Persist<K>>(device: &dyn BlockDevice, header: &Header) -> Result<M> {
    let block_size = device.block_size();
    let payload = device.payload_size();
    let blocks = header.model_blocks() as usize;
    let mut image = Vec::with_capacity(header.model_bytes as usize);
    if blocks > 0 {
        let mut buf = AlignedBuf::zeroed(blocks * block_size);
        device.read_blocks(header.model_first_block(), &mut buf, IoClass::Model)?;
        for block in buf.chunks_exact(block_size) {
            let take = (header.model_bytes as usize - image.len()).min(payload);
            image.extend_from_slice(&block[..take]);
        }
    }
    let mut decoder = Decoder::new(device.name(), &image);
    let model = M::decode(&mut decoder)?;
    decoder.finish()?;
    Ok(model)
}

impl<K: Key, M: Persist<K>> StaticLearned<K, M> {
    /// Reads every record ([`Self::for_each_record`]: every data block's checksum and layout,
    /// the key order across blocks) and checks that the model's window of each key holds the
    /// key's position (`lo <= pos <= hi`, the [`ApproxPos`] contract: a lookup of the key finds
    /// it), that the records are as many as the header says, and that their keys' fingerprint
    /// is the one the header recorded when they were written (a file is never written after its
    /// build, so a key changed under a valid checksum that keeps the order and the model's
    /// window is caught too): what `lidx verify` runs. Returns the records read; `Corrupt`
    /// names the first key the model misses.
    pub fn verify(&self) -> Result<u64> {
        let mut at = 0u64;
        let mut fingerprint = KeysFingerprint::default();
        self.for_each_record(256, |key, _| {
            fingerprint.push(key);
            let w = self.window(key);
            if !(w.lo as u64 <= at && at <= w.hi as u64) {
                return Err(Error::Corrupt {
                    file: self.device.name().to_string(),
                    block: Some(FIRST_DATA_BLOCK + at / self.per_block as u64),
                    what: format!(
                        "the model's window {}..{} for the key at position {at} does not hold it",
                        w.lo, w.hi
                    ),
                });
            }
            at += 1;
            Ok(())
        })?;
        if at != self.len as u64 {
            return Err(Error::Corrupt {
                file: self.device.name().to_string(),
                block: None,
                what: format!("{at} records read, the header says {}", self.len),
            });
        }
        let found = fingerprint.finish();
        if found != self.keys_fingerprint {
            return Err(Error::Corrupt {
                file: self.device.name().to_string(),
                block: None,
                what: format!(
                    "its keys' fingerprint is {found:#018x}, the header recorded {:#018x} when \
                     they were written: a record was changed since",
                    self.keys_fingerprint
                ),
            });
        }
        Ok(at)
    }
}

impl<K: Key, M: Persist<K>> DiskIndex<K> for StaticLearned<K, M> {
    fn len(&self) -> u64 {
        self.len as u64
    }

    fn keys_fingerprint(&self) -> u64 {
        self.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.payload_size
    }

    fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        self.get_with(key, payload, self.fetch)
    }

    fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        self.scan_with(start, limit, keys, payloads, self.fetch)
    }

    /// The model's [`crate::StaticIndex::size_in_bytes`] plus this struct (the model's inline part
    /// counted once).
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<M>() + self.model.size_in_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.disk_bytes
    }

    fn describe(&self) -> String {
        format!(
            "static-learned model={} granularity={} fetch={} payload={} per_block={} \
             model_bytes={}",
            self.model.name(),
            self.granularity.name(),
            self.fetch.name(),
            self.payload_size,
            self.per_block,
            self.model.size_in_bytes()
        )
    }
}
