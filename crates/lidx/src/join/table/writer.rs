//! Writing a table: [`TableWriter`] packs records into blocks, sums the content fingerprint
//! (see [`super::header`]) and writes the header last; a [`BackgroundWriter`] writes full
//! buffers on another thread and sums there the fingerprint and, for a join's output, a hash
//! of each record (its checksum), with [`RecordDigest`].

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::header::{record_block_fingerprint, TableHeader, TableKey, MAX_VALUE_SIZE};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};

/// Blocks a writer buffers before one write request (1 MiB of 4 KiB blocks); a writer on a
/// background thread holds two such buffers.
pub(crate) const WRITE_BLOCKS: usize = 1024;

/// Writes full buffers on a background thread, in order, while the writer fills the next one;
/// buffers come back (not zeroed: see [`TableWriter::flush`]) through a channel, or the first
/// write error does. The thread also sums the table's content fingerprint over the blocks it
/// writes and, with a record hash, the hash of every record (a join's output checksum, see
/// `join::output`), off the writer's thread.
struct BackgroundWriter {
    jobs: Option<SyncSender<WriteJob>>,
    done: Receiver<Result<AlignedBuf>>,
    worker: Option<JoinHandle<()>>,
    spare: Option<AlignedBuf>,
    /// The sums of the record hashes and of the fingerprint terms of the blocks written.
    sums: Arc<[AtomicU64; 2]>,
}

/// Record blocks `first ..` from `buf[..bytes]`, which holds `records` records.
struct WriteJob {
    first: u64,
    buf: AlignedBuf,
    bytes: usize,
    records: usize,
}

/// How records are packed in a writer's buffer: what hashing a buffer's records needs.
#[derive(Clone, Copy)]
struct RecordDigest {
    record_size: usize,
    per_block: usize,
    block_size: usize,
}

impl RecordDigest {
    /// For the first `records` records packed in `buf`, whose first block is record block
    /// `first`: the wrapping sum of `hash` over every record (0 without one), and the sum of
    /// the blocks' fingerprint terms ([`record_block_fingerprint`]).
    fn sums(
        &self,
        buf: &[u8],
        first: u64,
        records: usize,
        hash: Option<fn(&[u8]) -> u64>,
    ) -> (u64, u64) {
        let rs = self.record_size;
        let (mut digest, mut fingerprint) = (0u64, 0u64);
        let mut left = records;
        for (b, block) in buf.chunks(self.block_size).enumerate() {
            if left == 0 {
                break;
            }
            let here = left.min(self.per_block);
            let bytes = &block[..here * rs];
            fingerprint =
                fingerprint.wrapping_add(record_block_fingerprint(first + b as u64, bytes));
            if let Some(hash) = hash {
                for record in bytes.chunks_exact(rs) {
                    digest = digest.wrapping_add(hash(record));
                }
            }
            left -= here;
        }
        (digest, fingerprint)
    }
}

impl BackgroundWriter {
    fn start(
        device: Arc<dyn BlockDevice>,
        buffer_bytes: usize,
        layout: RecordDigest,
        hash: Option<fn(&[u8]) -> u64>,
    ) -> BackgroundWriter {
        let (jobs, job_rx) = sync_channel::<WriteJob>(1);
        let (done_tx, done) = channel();
        let sums = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let add = Arc::clone(&sums);
        let worker = std::thread::spawn(move || {
            for mut job in job_rx {
                let (digest, fingerprint) =
                    layout.sums(&job.buf[..job.bytes], job.first, job.records, hash);
                add[0].fetch_add(digest, Ordering::Relaxed);
                add[1].fetch_add(fingerprint, Ordering::Relaxed);
                let written =
                    device.write_blocks(1 + job.first, &mut job.buf[..job.bytes], IoClass::Data);
                let failed = written.is_err();
                if done_tx.send(written.map(|()| job.buf)).is_err() || failed {
                    return;
                }
            }
        });
        BackgroundWriter {
            jobs: Some(jobs),
            done,
            worker: Some(worker),
            spare: Some(AlignedBuf::zeroed(buffer_bytes)),
            sums,
        }
    }

    fn closed(name: &str) -> Error {
        Error::Io {
            file: name.to_string(),
            op: "background write".to_string(),
            kind: std::io::ErrorKind::BrokenPipe,
            message: "the writing thread stopped".to_string(),
        }
    }

    /// Queues `job`; returns an empty buffer.
    fn write(&mut self, name: &str, job: WriteJob) -> Result<AlignedBuf> {
        let jobs = self.jobs.as_ref().ok_or_else(|| Self::closed(name))?;
        if jobs.send(job).is_err() {
            return Err(self.done.recv().map_or_else(
                |_| Self::closed(name),
                |r| r.err().unwrap_or_else(|| Self::closed(name)),
            ));
        }
        match self.spare.take() {
            Some(buf) => Ok(buf),
            None => self.done.recv().map_err(|_| Self::closed(name))?,
        }
    }

    /// Waits for every queued write; the first error if one failed, else the sums of the
    /// record hashes and of the fingerprint terms.
    fn finish(&mut self, name: &str) -> Result<(u64, u64)> {
        self.jobs.take();
        let mut result = Ok(());
        for r in self.done.iter() {
            if let (Err(e), Ok(())) = (r, &result) {
                result = Err(e);
            }
        }
        if let Some(worker) = self.worker.take() {
            worker.join().map_err(|_| Self::closed(name))?;
        }
        result.map(|()| {
            (
                self.sums[0].load(Ordering::Relaxed),
                self.sums[1].load(Ordering::Relaxed),
            )
        })
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Writes a table: records are packed into blocks in a buffer of `WRITE_BLOCKS` blocks that
/// is written in one request when full; [`TableWriter::finish`] writes the last blocks and then
/// the header. Writers from [`TableWriter::create`] write full buffers on a background thread
/// while the next one fills (two buffers); [`TableWriter::with_buffer`] writes in place.
pub struct TableWriter<K> {
    device: Arc<dyn BlockDevice>,
    background: Option<BackgroundWriter>,
    header: TableHeader,
    per_block: usize,
    /// The device's block size and the record size (no virtual call per record).
    block_size: usize,
    record_size: usize,
    buf: AlignedBuf,
    /// Record block at the start of `buf`; blocks filled in `buf`; records in the current one.
    first: u64,
    full_blocks: usize,
    slot: usize,
    /// Fingerprint terms of the blocks written on this thread (a background writer sums its
    /// own).
    fingerprint: u64,
    _key: PhantomData<fn() -> K>,
}

impl<K: TableKey> TableWriter<K> {
    /// Creates (or truncates) the table `name` with `value_size`-byte values.
    /// [`Error::InvalidParameter`] when a record does not fit a block.
    pub fn create(storage: &Storage, name: &str, value_size: usize) -> Result<Self> {
        Self::create_background(storage, name, value_size, WRITE_BLOCKS, None)
    }

    /// [`TableWriter::create`] with buffers of `blocks` blocks that also sums `hash` over
    /// every record's bytes (key then value), on the background thread that writes them;
    /// [`TableWriter::finish_digest`] returns the wrapping sum. What a join's output checksum
    /// costs its probing thread: nothing.
    pub fn create_digest(
        storage: &Storage,
        name: &str,
        value_size: usize,
        blocks: usize,
        hash: fn(&[u8]) -> u64,
    ) -> Result<Self> {
        Self::create_background(storage, name, value_size, blocks, Some(hash))
    }

    fn create_background(
        storage: &Storage,
        name: &str,
        value_size: usize,
        blocks: usize,
        hash: Option<fn(&[u8]) -> u64>,
    ) -> Result<Self> {
        let mut writer = Self::with_buffer(storage, name, value_size, blocks)?;
        writer.start_background(hash);
        Ok(writer)
    }

    /// [`TableWriter::create`] with a buffer of `blocks` blocks (at least 1): fewer blocks save
    /// memory when many writers are open at once (the Grace hash join's partitions) at the
    /// price of more, smaller write requests. Writes happen on the caller's thread.
    pub fn with_buffer(
        storage: &Storage,
        name: &str,
        value_size: usize,
        blocks: usize,
    ) -> Result<Self> {
        let header = TableHeader {
            count: 0,
            key_size: K::SIZE as u32,
            value_size: u32::try_from(value_size).unwrap_or(u32::MAX),
            fingerprint: 0,
        };
        let payload = storage.block_size() - crate::io::BLOCK_TRAILER;
        if header.value_size > MAX_VALUE_SIZE || header.records_per_block(payload) == 0 {
            return Err(Error::InvalidParameter {
                name: "value_size",
                value: value_size.to_string(),
                expected: "a value size whose record (key + value) fits one block's payload",
            });
        }
        let device = storage.create(name)?;
        Ok(Self::on_device(device, header, blocks, 0))
    }

    fn on_device(
        device: Arc<dyn BlockDevice>,
        header: TableHeader,
        blocks: usize,
        first: u64,
    ) -> Self {
        let block_size = device.block_size();
        TableWriter {
            per_block: header.records_per_block(device.payload_size()),
            block_size,
            record_size: header.record_size(),
            buf: AlignedBuf::zeroed(blocks.max(1) * block_size),
            device,
            background: None,
            header,
            first,
            full_blocks: 0,
            slot: 0,
            fingerprint: 0,
            _key: PhantomData,
        }
    }

    /// How records are packed in this writer's buffer.
    fn layout(&self) -> RecordDigest {
        RecordDigest {
            record_size: self.record_size,
            per_block: self.per_block,
            block_size: self.block_size,
        }
    }

    /// Moves writes (and the fingerprint, and the sum of `hash` over records if given) to a
    /// background thread.
    fn start_background(&mut self, hash: Option<fn(&[u8]) -> u64>) {
        self.background = Some(BackgroundWriter::start(
            Arc::clone(&self.device),
            self.buf.len(),
            self.layout(),
            hash,
        ));
    }

    /// A writer of one stretch of a table that several writers fill at once: its records
    /// start at record block `first_block` (record `first_block * records_per_block`) of
    /// `device`, a table file with `header`'s key and value sizes (checked by the caller, as
    /// [`TableWriter::create`] checks them). Writes on a background thread. Finish it with
    /// [`TableWriter::finish_stretch`]; whoever made the file writes its header (see
    /// [`write_table_header`]). What threads use to copy their parts into a join's output at
    /// computed offsets (paper 000 §6.4).
    #[doc(hidden)]
    pub fn stretch(device: Arc<dyn BlockDevice>, header: TableHeader, first_block: u64) -> Self {
        let mut writer = Self::on_device(device, header, WRITE_BLOCKS, first_block);
        writer.header.count = 0;
        writer.start_background(None);
        writer
    }

    /// Writes the last blocks of a [`TableWriter::stretch`] and waits for its writes; returns
    /// the records it wrote and the sum of its blocks' fingerprint terms (the table's
    /// fingerprint is the sum over its stretches). Writes no header.
    #[doc(hidden)]
    pub fn finish_stretch(mut self) -> Result<(u64, u64)> {
        let (_, fingerprint) = self.finish_writes()?;
        Ok((self.header.count, fingerprint))
    }

    /// Writes the last blocks and waits for the background writes: the sums of the record
    /// hashes and of the fingerprint terms.
    fn finish_writes(&mut self) -> Result<(u64, u64)> {
        self.flush()?;
        let (digest, fingerprint) = match &mut self.background {
            Some(bg) => bg.finish(self.device.name())?,
            None => (0, 0),
        };
        Ok((digest, fingerprint.wrapping_add(self.fingerprint)))
    }

    /// Appends a record. `value.len()` must be the table's value size.
    #[inline]
    pub fn push(&mut self, key: &K, value: &[u8]) -> Result<()> {
        let rs = self.record_size;
        if value.len() != self.header.value_size as usize {
            return Err(Error::InvalidParameter {
                name: "value",
                value: format!("{} bytes", value.len()),
                expected: "exactly the table's value size",
            });
        }
        let at = self.full_blocks * self.block_size + self.slot * rs;
        key.write_to(&mut self.buf[at..at + K::SIZE]);
        self.buf[at + K::SIZE..at + rs].copy_from_slice(value);
        self.bump()
    }

    /// Appends a record given as its bytes (key then value), as [`super::Scan::record`] returns it.
    #[inline]
    pub fn push_record(&mut self, record: &[u8]) -> Result<()> {
        let rs = self.record_size;
        if record.len() != rs {
            return Err(Error::InvalidParameter {
                name: "record",
                value: format!("{} bytes", record.len()),
                expected: "exactly the table's record size",
            });
        }
        let at = self.full_blocks * self.block_size + self.slot * rs;
        self.buf[at..at + rs].copy_from_slice(record);
        self.bump()
    }

    /// Appends a record from a key and several value parts whose lengths add up to the value
    /// size (a join's output: left value, then right value).
    #[inline]
    pub fn push_parts(&mut self, key: &K, parts: &[&[u8]]) -> Result<()> {
        let rs = self.record_size;
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total != self.header.value_size as usize {
            return Err(Error::InvalidParameter {
                name: "value",
                value: format!("{total} bytes"),
                expected: "exactly the table's value size",
            });
        }
        let mut at = self.full_blocks * self.block_size + self.slot * rs;
        key.write_to(&mut self.buf[at..at + K::SIZE]);
        at += K::SIZE;
        for part in parts {
            self.buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        self.bump()
    }

    /// Appends a record that `fill` writes in place (key then value; `fill`'s slice is exactly
    /// one record, holding old bytes that `fill` must overwrite); returns what `fill` returns.
    /// Saves the copy through a record buffer that [`TableWriter::push_record`] costs.
    #[inline(always)]
    pub fn push_with<T>(&mut self, fill: impl FnOnce(&mut [u8]) -> T) -> Result<T> {
        let rs = self.record_size;
        let at = self.full_blocks * self.block_size + self.slot * rs;
        let out = fill(&mut self.buf[at..at + rs]);
        self.bump()?;
        Ok(out)
    }

    #[inline]
    fn bump(&mut self) -> Result<()> {
        self.header.count += 1;
        self.slot += 1;
        if self.slot == self.per_block {
            self.slot = 0;
            self.full_blocks += 1;
            if self.full_blocks * self.block_size == self.buf.len() {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes the buffered blocks (the partial last one included) in one request.
    ///
    /// Buffers are not zeroed between uses: every record lands at the same offset of its block
    /// in every buffer, so the bytes outside record slots are zero from the buffer's creation
    /// (the block trailer is rewritten by each write), and only the slots after the last record
    /// of a partial block can hold an older record; they are zeroed here.
    fn flush(&mut self) -> Result<()> {
        let blocks = self.full_blocks + usize::from(self.slot > 0);
        if blocks == 0 {
            return Ok(());
        }
        if self.slot > 0 {
            let block = self.full_blocks * self.block_size;
            let used = block + self.slot * self.record_size;
            self.buf[used..block + self.block_size].fill(0);
        }
        let bytes = blocks * self.block_size;
        match &mut self.background {
            Some(bg) => {
                let job = WriteJob {
                    first: self.first,
                    buf: std::mem::replace(&mut self.buf, AlignedBuf::zeroed(0)),
                    bytes,
                    records: self.full_blocks * self.per_block + self.slot,
                };
                self.buf = bg.write(self.device.name(), job)?;
            }
            None => {
                let records = self.full_blocks * self.per_block + self.slot;
                let (_, fingerprint) = self.layout().sums(&self.buf, self.first, records, None);
                self.fingerprint = self.fingerprint.wrapping_add(fingerprint);
                self.device
                    .write_blocks(1 + self.first, &mut self.buf[..bytes], IoClass::Data)?;
            }
        }
        self.first += self.full_blocks as u64;
        self.full_blocks = 0;
        Ok(())
    }

    /// Records written so far.
    pub fn len(&self) -> u64 {
        self.header.count
    }

    /// True when no record was written.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// Writes the last blocks, then the header block (with the records' fingerprint), and
    /// syncs. Returns the header.
    pub fn finish(self) -> Result<TableHeader> {
        self.finish_digest().map(|(header, _)| header)
    }

    /// [`TableWriter::finish`], also returning the sum of the record hashes of a writer from
    /// [`TableWriter::create_digest`] (0 for other writers).
    pub fn finish_digest(mut self) -> Result<(TableHeader, u64)> {
        let (digest, fingerprint) = self.finish_writes()?;
        self.header.fingerprint = fingerprint;
        write_table_header(self.device.as_ref(), &self.header)?;
        Ok((self.header, digest))
    }
}

/// Writes `header` as block 0 of `device` and syncs: the last step of writing a table.
pub(crate) fn write_table_header(device: &dyn BlockDevice, header: &TableHeader) -> Result<()> {
    let mut block = AlignedBuf::zeroed(device.block_size());
    header.encode(&mut block);
    device.write_blocks(0, &mut block, IoClass::Header)?;
    device.sync()
}
