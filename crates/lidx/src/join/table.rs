//! Join tables: a 16-byte header, then fixed-size `(key, value)` records in blocks.
//!
//! Paper 000 §5.1 stores a table as "a dense array with a 16-byte header at the start of the
//! file", divided logically into 4 KiB blocks; readers keep "a set of blocks" in memory large
//! enough for a search window and load "the set of contiguous blocks, starting with the block
//! containing the key" when the key is not there; writers buffer records and flush when the
//! buffer is full. We keep the header and the record format, and differ where our I/O layer
//! asks us to:
//!
//! * Every block ends with the io layer's 4-byte crc32c trailer ([`crate::io::checksum`]), so a
//!   block has `block_size - 4` payload bytes. Records never straddle two blocks: a block holds
//!   `floor(payload / record_size)` records (255 of 16 bytes in a 4 KiB block, 12 bytes unused),
//!   so a record is read with the block that holds it and no copy.
//! * The header has block 0 to itself (the rest of its payload is zero): record `i` is then in
//!   block `1 + i / per_block` at byte `(i % per_block) * record_size`, with no special first
//!   block. That costs one block per table.
//! * The header is exactly the paper's 16 bytes, with no magic number: a table is recognised by
//!   its name. Its checks are the block checksums, the key size (8 = `u64`, 16 = `str16`, the
//!   two key types a table holds), and the file size: a file with fewer blocks than the count
//!   needs is [`Error::Truncated`], one with more is [`Error::Corrupt`].
//! * The writer writes the header last (in [`TableWriter::finish`]), so a table whose writer
//!   never finished fails its header block's checksum instead of looking empty.
//!
//! Header layout (block 0, little-endian):
//!
//! | offset | size | field                         |
//! |--------|------|-------------------------------|
//! | 0      | 8    | record count                  |
//! | 8      | 4    | key size in bytes (8 or 16)   |
//! | 12     | 4    | value size in bytes           |
//!
//! Tables carry no order flag: the sorted joins check order while they stream
//! ([`crate::key::check_next`]), and unsorted tables are plain tables too.

use std::hash::Hash;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::{check_next, Key, Str16};

/// Bytes of the table header.
pub const HEADER_BYTES: usize = 16;

/// Blocks a sequential scan reads per request (4 MiB of 4 KiB blocks; fewer for a smaller
/// table). Larger means fewer, longer requests and more memory: on the virtio disk we measure
/// on, reading two 50M-record tables took 2.5 s in 1 MiB requests and 1.0 s in 4 MiB ones.
pub const READ_BLOCKS: usize = 1024;

/// Blocks a writer buffers before one write request (1 MiB of 4 KiB blocks); a writer on a
/// background thread holds two such buffers.
pub const WRITE_BLOCKS: usize = 1024;

/// Largest value a table accepts, in bytes (a record must fit one block in any case).
pub const MAX_VALUE_SIZE: u32 = 1 << 16;

/// The key types a table holds: 8-byte integers and 16-byte strings (paper 000 §6.2). `Hash`
/// and `Eq` serve the hash joins.
pub trait TableKey: Key + Hash + Eq {}

impl TableKey for u64 {}
impl TableKey for Str16 {}

/// The key type name recorded by a key size, as [`Key::NAME`] spells it.
pub fn key_name_of_size(key_size: u32) -> Option<&'static str> {
    match key_size {
        8 => Some(<u64 as Key>::NAME),
        16 => Some(<Str16 as Key>::NAME),
        _ => None,
    }
}

/// The 16-byte table header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHeader {
    /// Number of records.
    pub count: u64,
    /// Key size in bytes: 8 (`u64`) or 16 (`str16`).
    pub key_size: u32,
    /// Value size in bytes (may be 0).
    pub value_size: u32,
}

impl TableHeader {
    /// Bytes of one record.
    pub fn record_size(&self) -> usize {
        self.key_size as usize + self.value_size as usize
    }

    /// Records in one block of `payload` usable bytes (0 when a record does not fit).
    pub fn records_per_block(&self, payload: usize) -> usize {
        payload / self.record_size().max(1)
    }

    /// Blocks of the whole file: the header block and the record blocks.
    pub fn blocks(&self, payload: usize) -> u64 {
        let per = self.records_per_block(payload).max(1) as u64;
        1 + self.count.div_ceil(per)
    }

    /// The key type's name (`u64`, `str16`), or `?` for a key size no table has.
    pub fn key_name(&self) -> &'static str {
        key_name_of_size(self.key_size).unwrap_or("?")
    }

    /// Writes the 16 header bytes to `out[..16]`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.count.to_le_bytes());
        out[8..12].copy_from_slice(&self.key_size.to_le_bytes());
        out[12..16].copy_from_slice(&self.value_size.to_le_bytes());
    }

    /// Decodes and checks a header from the payload of block 0 of `file`, for a device whose
    /// blocks have `payload` usable bytes: a key size of 8 or 16, a value size up to
    /// [`MAX_VALUE_SIZE`] with the record fitting one block, and a record count whose blocks
    /// fit in a `u64`. Never panics.
    #[doc(hidden)]
    pub fn decode(file: &str, bytes: &[u8], payload: usize) -> Result<TableHeader> {
        let corrupt = |what: String| Error::Corrupt {
            file: file.to_string(),
            block: Some(0),
            what,
        };
        if bytes.len() < HEADER_BYTES {
            return Err(Error::Truncated {
                file: file.to_string(),
                what: format!("table header of {} bytes, need {HEADER_BYTES}", bytes.len()),
            });
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let header = TableHeader {
            count: u64::from_le_bytes(bytes[0..8].try_into().expect("8 bytes")),
            key_size: u32_at(8),
            value_size: u32_at(12),
        };
        if key_name_of_size(header.key_size).is_none() {
            return Err(corrupt(format!(
                "key size {} (a table holds u64 keys of 8 bytes or str16 keys of 16)",
                header.key_size
            )));
        }
        if header.value_size > MAX_VALUE_SIZE || header.records_per_block(payload) == 0 {
            return Err(corrupt(format!(
                "value size {} does not fit a block of {payload} usable bytes",
                header.value_size
            )));
        }
        if header.count > (1 << 48) {
            return Err(corrupt(format!(
                "record count {} is implausible",
                header.count
            )));
        }
        Ok(header)
    }
}

/// Reads the header of the table `name` without choosing a key type: what the CLI does to
/// dispatch on `u64` or `str16`.
pub fn read_header(storage: &Storage, name: &str) -> Result<TableHeader> {
    let device = storage.open(name, false)?;
    read_header_of(device.as_ref())
}

fn read_header_of(device: &dyn BlockDevice) -> Result<TableHeader> {
    if device.len_blocks() == 0 {
        return Err(Error::Truncated {
            file: device.name().to_string(),
            what: "empty file, no table header".to_string(),
        });
    }
    let mut block = AlignedBuf::zeroed(device.block_size());
    device.read_blocks(0, &mut block, IoClass::Header)?;
    let header = TableHeader::decode(
        device.name(),
        &block[..device.payload_size()],
        device.payload_size(),
    )?;
    let want = header.blocks(device.payload_size());
    let have = device.len_blocks();
    if have < want {
        return Err(Error::Truncated {
            file: device.name().to_string(),
            what: format!(
                "{have} blocks, the header's {} records need {want}",
                header.count
            ),
        });
    }
    if have > want {
        return Err(Error::Corrupt {
            file: device.name().to_string(),
            block: None,
            what: format!(
                "{have} blocks, more than the {want} the header's {} records need",
                header.count
            ),
        });
    }
    Ok(header)
}

/// Checks that two tables hold the same key type: [`Error::KeyTypeMismatch`] naming `file`
/// (the right side) otherwise.
pub fn check_same_key_type(left: &TableHeader, right: &TableHeader, file: &str) -> Result<()> {
    if left.key_size == right.key_size {
        return Ok(());
    }
    Err(Error::KeyTypeMismatch {
        file: file.to_string(),
        expected: left.key_name(),
        got: right.key_name().to_string(),
    })
}

/// An open table of `K` keys. Cheap to share between threads (`&Table` is all readers need).
pub struct Table<K> {
    device: Arc<dyn BlockDevice>,
    header: TableHeader,
    per_block: usize,
    /// The device's block size and the record size, kept here so that hot loops make no
    /// virtual call for them.
    block_size: usize,
    record_size: usize,
    _key: PhantomData<fn() -> K>,
}

impl<K: TableKey> Table<K> {
    /// Opens the table `name`: reads and checks the header (see [`TableHeader::decode`]), that
    /// the file has exactly the blocks the count needs, and that its key size is `K`'s
    /// ([`Error::KeyTypeMismatch`] otherwise).
    pub fn open(storage: &Storage, name: &str) -> Result<Self> {
        let device = storage.open(name, false)?;
        let header = read_header_of(device.as_ref())?;
        if header.key_size as usize != K::SIZE {
            return Err(Error::KeyTypeMismatch {
                file: name.to_string(),
                expected: K::NAME,
                got: header.key_name().to_string(),
            });
        }
        let per_block = header.records_per_block(device.payload_size());
        Ok(Table {
            block_size: device.block_size(),
            record_size: header.record_size(),
            device,
            header,
            per_block,
            _key: PhantomData,
        })
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.header.count
    }

    /// True when the table has no records.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The header.
    pub fn header(&self) -> TableHeader {
        self.header
    }

    /// Value size in bytes.
    pub fn value_size(&self) -> usize {
        self.header.value_size as usize
    }

    /// Record size in bytes.
    #[inline]
    pub fn record_size(&self) -> usize {
        self.record_size
    }

    /// Records per block.
    pub fn records_per_block(&self) -> usize {
        self.per_block
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        self.device.name()
    }

    /// Bytes of the file.
    pub fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }

    /// A sequential reader over records `range` (clamped to the table), reading
    /// [`READ_BLOCKS`] blocks per request.
    pub fn scan(&self, range: Range<u64>) -> Result<Scan<'_, K>> {
        Scan::new(self, range, READ_BLOCKS)
    }

    /// Bytes of buffers a [`Table::scan`] over the whole table holds: one request's worth, and
    /// [`PREFETCH_DEPTH`] more when the table is longer than one request and a background
    /// reader fills them.
    pub fn scan_memory(&self) -> usize {
        let blocks = self.len().div_ceil(self.per_block as u64);
        let chunk = blocks.min(READ_BLOCKS as u64) as usize * self.block_size();
        if blocks > READ_BLOCKS as u64 {
            (PREFETCH_DEPTH + 1) * chunk
        } else {
            chunk
        }
    }

    /// A reader for windows that move forward (paper 000 §5.1-5.2); see [`WindowReader`].
    pub fn window_reader(&self) -> WindowReader<'_, K> {
        WindowReader {
            table: self,
            buf: AlignedBuf::zeroed(0),
            origin: 0,
            first: 0,
            loaded: 0,
            ahead: 0,
            run_last: 0,
            run_last_key: K::MIN,
            found: None,
            next_pos: u64::MAX,
            next_at: 0,
            next_block_end: 0,
            stream: None,
            lo_block: 0,
        }
    }

    /// Every key, in table order (what an index over the table is built from).
    pub fn read_keys(&self) -> Result<Vec<K>> {
        let mut keys = Vec::with_capacity(self.len() as usize);
        let mut scan = self.scan(0..self.len())?;
        while let Some(key) = scan.key() {
            keys.push(key);
            scan.advance()?;
        }
        Ok(keys)
    }

    /// The key of record `pos` by reading its block (one request); for partitioning work
    /// between threads, not for hot loops.
    pub fn key_at(&self, pos: u64) -> Result<K> {
        let mut block = AlignedBuf::zeroed(self.device.block_size());
        let (b, slot) = self.locate(pos);
        self.device.read_blocks(1 + b, &mut block, IoClass::Data)?;
        Ok(K::read_from(&block[slot * self.record_size()..]))
    }

    /// First position whose key is `>= key` (the table must be sorted), by a binary search
    /// over blocks that reads about `log2(blocks)` single blocks. For splitting the inner
    /// table of a merge between threads.
    pub fn lower_bound_on_disk(&self, key: K) -> Result<u64> {
        // Find the first block whose first key is >= key, then search the block before it.
        let blocks = self.len().div_ceil(self.per_block as u64);
        let (mut lo, mut hi) = (0u64, blocks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid * self.per_block as u64)?.key_lt(&key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return Ok(0);
        }
        let start = (lo - 1) * self.per_block as u64;
        let end = (lo * self.per_block as u64).min(self.len());
        let mut scan = self.scan(start..end)?;
        while let Some(k) = scan.key() {
            if !k.key_lt(&key) {
                return Ok(scan.position());
            }
            scan.advance()?;
        }
        Ok(end)
    }

    /// Record block and slot of position `pos`.
    #[inline]
    fn locate(&self, pos: u64) -> (u64, usize) {
        let per = self.per_block as u64;
        (pos / per, (pos % per) as usize)
    }

    #[inline]
    fn block_size(&self) -> usize {
        self.block_size
    }
}

/// Reads a run of blocks chunk by chunk on a background thread, up to [`PREFETCH_DEPTH`]
/// chunks ahead of its consumer, so that a scan's CPU work and its next reads overlap and a
/// slow request does not stall the scan. `PREFETCH_DEPTH + 1` buffers circulate: the one the
/// consumer reads records from and the ones being filled or waiting. Each buffer has `prefix`
/// blocks of room before the chunk, which the reader leaves alone, so that a consumer can
/// put the blocks it still needs in front of a new chunk instead of copying the chunk after
/// them (the [`WindowReader`]'s stream).
struct Prefetcher {
    filled: Option<Receiver<Result<AlignedBuf>>>,
    empty: Option<Sender<AlignedBuf>>,
    worker: Option<JoinHandle<()>>,
    name: String,
    /// Bytes of every buffer: `(prefix + chunk)` blocks.
    buffer_bytes: usize,
}

/// Chunks a [`Prefetcher`] reads ahead of its consumer. On the virtio disk we measure on, one
/// chunk ahead left a ratio-1 INLJ waiting for reads 0.7 s of 3 s (requests vary in latency
/// under a concurrent write stream); three ahead removed the wait.
pub const PREFETCH_DEPTH: usize = 3;

impl Prefetcher {
    /// Starts reading device blocks `first .. first + blocks`, `chunk` blocks per request, each
    /// into a buffer after `prefix` blocks of room.
    fn start(
        device: Arc<dyn BlockDevice>,
        (first, blocks): (u64, u64),
        chunk: usize,
        prefix: usize,
        class: IoClass,
    ) -> Prefetcher {
        let bs = device.block_size();
        let buffer_bytes = (prefix + chunk) * bs;
        let name = device.name().to_string();
        let (full_tx, filled) = sync_channel::<Result<AlignedBuf>>(PREFETCH_DEPTH);
        let (empty, empty_rx) = channel::<AlignedBuf>();
        let worker = std::thread::spawn(move || {
            let mut next = first;
            let end = first + blocks;
            while next < end {
                let Ok(mut buf) = empty_rx.recv() else {
                    return;
                };
                let n = (end - next).min(chunk as u64) as usize;
                let at = prefix * bs;
                let read = device
                    .read_blocks(next, &mut buf[at..at + n * bs], class)
                    .map(|()| buf);
                let failed = read.is_err();
                if full_tx.send(read).is_err() || failed {
                    return;
                }
                next += n as u64;
            }
        });
        for _ in 0..=PREFETCH_DEPTH {
            let _ = empty.send(AlignedBuf::zeroed(buffer_bytes));
        }
        Prefetcher {
            filled: Some(filled),
            empty: Some(empty),
            worker: Some(worker),
            name,
            buffer_bytes,
        }
    }

    /// Hands a buffer back for refilling, if it is one of this reader's (others are dropped).
    fn give_back(&self, done: AlignedBuf) {
        if done.len() == self.buffer_bytes {
            if let Some(empty) = &self.empty {
                // The worker may have finished the run; then nobody needs the buffer.
                let _ = empty.send(done);
            }
        }
    }

    /// Hands back the buffer the consumer is done with and takes the next chunk (after the
    /// buffer's prefix).
    fn next(&mut self, done: AlignedBuf) -> Result<AlignedBuf> {
        self.give_back(done);
        match self.filled.as_ref().map(Receiver::recv) {
            Some(Ok(read)) => read,
            _ => Err(Error::Io {
                file: self.name.clone(),
                op: "prefetch".to_string(),
                kind: std::io::ErrorKind::BrokenPipe,
                message: "the reading thread stopped before the end of the scan".to_string(),
            }),
        }
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        // Closing both channels stops the worker at its next send or receive.
        self.filled.take();
        self.empty.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// A sequential reader over a range of records: [`Scan::key`] and [`Scan::value`] of the
/// current record, [`Scan::advance`] to the next. Reads [`READ_BLOCKS`] blocks per request;
/// a range longer than that is read by a background thread up to [`PREFETCH_DEPTH`] requests
/// ahead (so blocks read ahead of where a caller stops early are counted in the device's
/// statistics too).
pub struct Scan<'t, K> {
    table: &'t Table<K>,
    prefetch: Option<Prefetcher>,
    buf: AlignedBuf,
    /// Record block held at the start of `buf`, and how many are held.
    first: u64,
    loaded: usize,
    /// Current position, its block index within `buf`, slot within the block, and byte offset
    /// in `buf` (kept as records advance, so reading one costs no multiplication).
    pos: u64,
    at_block: usize,
    slot: usize,
    at: usize,
    end: u64,
    chunk: usize,
}

impl<'t, K: TableKey> Scan<'t, K> {
    fn new(table: &'t Table<K>, range: Range<u64>, chunk: usize) -> Result<Self> {
        let end = range.end.min(table.len());
        let pos = range.start.min(end);
        let (first, slot) = table.locate(pos);
        let total = table.len().div_ceil(table.per_block as u64);
        let chunk = (chunk.max(1) as u64).min(total.max(1)) as usize;
        let blocks = if pos < end {
            (end - 1) / table.per_block as u64 + 1 - first
        } else {
            0
        };
        let (prefetch, buf) = if blocks > chunk as u64 {
            let device = Arc::clone(&table.device);
            let p = Prefetcher::start(device, (1 + first, blocks), chunk, 0, IoClass::Data);
            (Some(p), AlignedBuf::zeroed(0))
        } else {
            (None, AlignedBuf::zeroed(chunk * table.block_size()))
        };
        let mut scan = Scan {
            table,
            prefetch,
            buf,
            first,
            loaded: 0,
            pos,
            at_block: 0,
            slot,
            at: 0,
            end,
            chunk,
        };
        if pos < end {
            scan.fill()?;
        }
        Ok(scan)
    }

    /// Reads the blocks from `first` on (as many as the buffer holds and the range needs).
    fn fill(&mut self) -> Result<()> {
        let last = (self.end - 1) / self.table.per_block as u64;
        let blocks = ((last + 1 - self.first) as usize).min(self.chunk);
        let bytes = blocks * self.table.block_size();
        match &mut self.prefetch {
            Some(p) => {
                let done = std::mem::replace(&mut self.buf, AlignedBuf::zeroed(0));
                self.buf = p.next(done)?;
            }
            None => self.table.device.read_blocks(
                1 + self.first,
                &mut self.buf[..bytes],
                IoClass::Data,
            )?,
        }
        self.loaded = blocks;
        self.at_block = 0;
        self.at = self.slot * self.table.record_size();
        Ok(())
    }

    #[inline(always)]
    fn offset(&self) -> usize {
        self.at
    }

    /// The current record's key, or `None` at the end of the range.
    #[inline]
    pub fn key(&self) -> Option<K> {
        (self.pos < self.end).then(|| K::read_from(&self.buf[self.offset()..]))
    }

    /// The current record's value (empty at the end of the range).
    #[inline]
    pub fn value(&self) -> &[u8] {
        if self.pos >= self.end {
            return &[];
        }
        let at = self.offset() + K::SIZE;
        &self.buf[at..at + self.table.value_size()]
    }

    /// The current record's bytes, key then value (empty at the end of the range).
    #[inline]
    pub fn record(&self) -> &[u8] {
        if self.pos >= self.end {
            return &[];
        }
        let at = self.offset();
        &self.buf[at..at + self.table.record_size()]
    }

    /// Position of the current record in the table.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Moves to the next record like [`Scan::advance`], and checks that its key is larger than
    /// the current one: [`Error::OutOfOrder`] or [`Error::DuplicateKey`] (with the position in
    /// the table) otherwise. What the joins on sorted tables stream with.
    #[inline(always)]
    pub fn advance_sorted(&mut self) -> Result<()> {
        let Some(previous) = self.key() else {
            return Ok(());
        };
        self.advance()?;
        if let Some(key) = self.key() {
            if !previous.key_lt(&key) {
                check_next(self.pos as usize, Some(&previous), &key, true)?;
            }
        }
        Ok(())
    }

    /// Moves to the next record, reading the next blocks when the buffer is used up.
    #[inline(always)]
    pub fn advance(&mut self) -> Result<()> {
        if self.pos >= self.end {
            return Ok(());
        }
        self.pos += 1;
        self.slot += 1;
        self.at += self.table.record_size();
        if self.slot == self.table.per_block {
            return self.next_block();
        }
        Ok(())
    }

    /// [`Scan::advance`] past the last record of a block.
    #[inline(never)]
    fn next_block(&mut self) -> Result<()> {
        self.slot = 0;
        self.at_block += 1;
        self.at = self.at_block * self.table.block_size();
        if self.at_block == self.loaded && self.pos < self.end {
            self.first += self.loaded as u64;
            self.fill()?;
        }
        Ok(())
    }
}

/// Random access for windows that only move forward, as an indexed nested-loop join makes
/// them (paper 000 §4.1 optimization 2, §5.1-5.2).
///
/// The reader keeps one contiguous run of blocks in memory. [`WindowReader::lower_bound`] for a
/// window `[lo, hi)` first tries the run: when it holds the block of `lo` and a key `>=` the
/// query at or after `lo`, the answer is in memory (the paper's "partially loaded" case).
/// Otherwise it loads the blocks of records `lo ..= hi` in ONE request, keeping the blocks of the
/// old run that the new one shares (moved to the front of the buffer), so a sequence of
/// overlapping windows reads each block once. Record `hi` is read too: the lower bound may be
/// `hi` itself, and the join then needs its key.
///
/// Readahead (not in the paper, which relies on the OS page cache's own): when a load starts
/// inside or right after the run it replaces, the probes are walking the table densely (a
/// table ratio near 1), and a window-sized request per few keys would cost a request latency
/// per block or two. The reader then reads ahead, doubling the extra blocks per such load up to
/// [`MAX_READAHEAD_BLOCKS`], so a dense walk reads the table in long requests as a scan does.
/// Once readahead is at its largest, the blocks after the run stream in from a background
/// reader ([`PREFETCH_DEPTH`] requests ahead, as a scan's); the few blocks of the run that the
/// next window still needs are copied in front of each streamed chunk, not the chunk after
/// them. A load that jumps past the run resets it: sparse probes (large ratios) read their
/// windows only. The buffer grows to the widest window plus readahead seen.
pub struct WindowReader<'t, K> {
    table: &'t Table<K>,
    buf: AlignedBuf,
    /// Byte offset in `buf` of the first block held: 0, or inside a streamed chunk's prefix.
    origin: usize,
    /// Record block held first, and how many blocks are held.
    first: u64,
    loaded: usize,
    /// Blocks read past the window by the next load that continues the run.
    ahead: usize,
    /// Position and key of the last record held (meaningless when nothing is held).
    run_last: u64,
    run_last_key: K,
    /// Byte offset in `buf` of the record at the last answer, if held.
    found: Option<usize>,
    /// The record after the last answer when it is held in the same block (`u64::MAX` when
    /// not): its position and byte offset, and the end of that block's records in `buf`. A
    /// dense walk asks for it next, and [`WindowReader::lower_bound`] then answers with one
    /// key comparison.
    next_pos: u64,
    next_at: usize,
    next_block_end: usize,
    /// Block of the last window's start: consecutive windows mostly start in one block, whose
    /// start then costs no division.
    lo_block: u64,
    /// Once readahead is at its largest, the blocks after the run stream in from a background
    /// reader.
    stream: Option<WindowStream>,
}

/// The background reader of a [`WindowReader`] in a dense walk: `next` is the first block it
/// has not delivered.
struct WindowStream {
    prefetch: Prefetcher,
    next: u64,
}

/// Blocks of room before each streamed chunk of a [`WindowReader`]: a run's last blocks that
/// the next window still needs (one or two in a dense walk, up to a 4096-record window's 17)
/// are copied there, in front of the chunk, instead of the chunk being copied after them.
const STREAM_PREFIX_BLOCKS: usize = 32;

/// Records a [`WindowReader`] compares one by one from the window's start before searching
/// (see `WindowReader::search`): more make dense walks cheaper and sparse probes dearer.
const DENSE_PROBES: usize = 2;

/// Most blocks a [`WindowReader`] reads past a window (1024 blocks: 4 MiB of 4 KiB blocks, as a
/// scan's request).
pub const MAX_READAHEAD_BLOCKS: usize = 1024;

impl<'t, K: TableKey> WindowReader<'t, K> {
    /// The first position in `[lo, hi]` whose key is `>= key`, for a window that holds the
    /// lower bound (`lo <= lower_bound(key) <= hi`, the [`crate::ApproxPos`] contract) of a
    /// sorted table; `hi` is clamped to the table. Afterwards the record at the answer, when
    /// the answer is below `len()`, is [`WindowReader::found`].
    ///
    /// Inlined is only the dense walk's case, `lo` at the record after the last answer and
    /// answering the key; the rest is [`WindowReader::lower_bound_general`].
    #[inline(always)]
    pub fn lower_bound(&mut self, lo: u64, hi: u64, key: K) -> Result<u64> {
        if lo == self.next_pos && lo <= hi {
            let at = self.next_at;
            if !K::read_from(&self.buf[at..]).key_lt(&key) {
                self.found = Some(at);
                self.next_pos = if lo + 1 < self.table.len()
                    && at + 2 * self.table.record_size() <= self.next_block_end
                {
                    self.next_at = at + self.table.record_size();
                    lo + 1
                } else {
                    u64::MAX
                };
                return Ok(lo);
            }
        }
        self.lower_bound_general(lo, hi, key)
    }

    /// [`WindowReader::lower_bound`] outside the dense walk's case.
    #[inline(never)]
    fn lower_bound_general(&mut self, lo: u64, hi: u64, key: K) -> Result<u64> {
        let len = self.table.len();
        let hi = hi.min(len);
        let lo = lo.min(hi);
        self.found = None;
        self.next_pos = u64::MAX;
        if lo == len {
            return Ok(len);
        }
        let per = self.table.per_block as u64;
        if lo.wrapping_sub(self.lo_block * per) >= per {
            self.lo_block = lo / per;
        }
        let lo_block = self.lo_block;
        let lo_slot = (lo - lo_block * per) as usize;
        let run_end = self.first + self.loaded as u64;
        if lo_block >= self.first && lo_block < run_end && !self.run_last_key.key_lt(&key) {
            // The run's last key is >= key: the answer is held, at or before the run's end.
            let last = self.run_last.min(hi);
            return Ok(self.search(lo_block, lo_slot, last, key));
        }
        let last = hi.min(len - 1);
        let continues = lo_block >= self.first && lo_block <= run_end;
        self.ahead = if continues && self.loaded > 0 {
            (self.ahead * 2).clamp(1, MAX_READAHEAD_BLOCKS)
        } else {
            0
        };
        // A stream reads ahead on its own: ask it for the window only.
        let ahead = if self.stream.is_some() { 0 } else { self.ahead };
        let end_block = (last / per + ahead as u64).min((len - 1) / per);
        self.load(lo_block, end_block)?;
        Ok(self.search(lo_block, lo_slot, last, key))
    }

    /// Makes record blocks `from ..= to` the run in memory with one read request at most, or
    /// from the background stream when one continues the run.
    fn load(&mut self, from: u64, to: u64) -> Result<()> {
        let run_end = self.first + self.loaded as u64;
        if let Some(stream) = &self.stream {
            if stream.next == run_end && from >= self.first && from <= run_end {
                let streamed = self.load_streamed(from, to);
                if streamed.is_err() {
                    self.stream = None;
                    self.loaded = 0;
                }
                return streamed;
            }
            self.stream = None;
        }
        let bs = self.table.block_size();
        let want = (to - from + 1) as usize;
        let keep = self.kept(from, to);
        let src = if keep > 0 {
            self.origin + (from - self.first) as usize * bs
        } else {
            0
        };
        if self.buf.len() < want * bs {
            let mut bigger = AlignedBuf::zeroed(want * bs);
            bigger[..keep * bs].copy_from_slice(&self.buf[src..src + keep * bs]);
            self.buf = bigger;
        } else {
            self.buf.copy_within(src..src + keep * bs, 0);
        }
        self.origin = 0;
        self.finish_load(from, keep, want)?;
        let total = self.table.len().div_ceil(self.table.per_block as u64);
        let next = self.first + self.loaded as u64;
        if self.ahead >= MAX_READAHEAD_BLOCKS && next < total {
            self.stream = Some(WindowStream {
                prefetch: Prefetcher::start(
                    Arc::clone(&self.table.device),
                    (1 + next, total - next),
                    MAX_READAHEAD_BLOCKS,
                    STREAM_PREFIX_BLOCKS,
                    IoClass::Leaf,
                ),
                next,
            });
        }
        Ok(())
    }

    /// [`WindowReader::load`] from the stream: keeps the run from `from` on and appends
    /// streamed chunks until block `to` is held. The usual case, a few kept blocks and one
    /// chunk, copies only the kept blocks, into the chunk buffer's prefix; otherwise the run
    /// is gathered in `buf`.
    fn load_streamed(&mut self, from: u64, to: u64) -> Result<()> {
        let bs = self.table.block_size();
        let total = self.table.len().div_ceil(self.table.per_block as u64);
        let keep = (self.first + self.loaded as u64 - from) as usize;
        let src = self.origin + (from - self.first) as usize * bs;
        if from + keep as u64 > to {
            // Everything asked for is held (the table's last blocks): drop the blocks before.
            self.origin = src;
            self.first = from;
            self.loaded = keep;
            self.set_run_last();
            return Ok(());
        }
        let stream = self.stream.as_mut().expect("streaming");
        let n = (total - stream.next).min(MAX_READAHEAD_BLOCKS as u64) as usize;
        if keep <= STREAM_PREFIX_BLOCKS && from + (keep + n) as u64 > to {
            let mut chunk = stream.prefetch.next(AlignedBuf::zeroed(0))?;
            let origin = (STREAM_PREFIX_BLOCKS - keep) * bs;
            chunk[origin..origin + keep * bs].copy_from_slice(&self.buf[src..src + keep * bs]);
            stream
                .prefetch
                .give_back(std::mem::replace(&mut self.buf, chunk));
            stream.next += n as u64;
            self.origin = origin;
            self.first = from;
            self.loaded = keep + n;
            self.set_run_last();
            return Ok(());
        }
        if self.origin > 0 || self.buf.len() < keep * bs {
            // The run lives in a stream chunk: gather it in a buffer of our own.
            let mut own = AlignedBuf::zeroed((keep + n) * bs);
            own[..keep * bs].copy_from_slice(&self.buf[src..src + keep * bs]);
            stream
                .prefetch
                .give_back(std::mem::replace(&mut self.buf, own));
        } else {
            self.buf.copy_within(src..src + keep * bs, 0);
        }
        self.origin = 0;
        self.first = from;
        self.loaded = keep;
        while self.first + self.loaded as u64 <= to {
            let stream = self.stream.as_mut().expect("streaming");
            let n = (total - stream.next).min(MAX_READAHEAD_BLOCKS as u64) as usize;
            let chunk = stream.prefetch.next(AlignedBuf::zeroed(0))?;
            let need = (self.loaded + n) * bs;
            if self.buf.len() < need {
                let mut bigger = AlignedBuf::zeroed(need);
                bigger[..self.loaded * bs].copy_from_slice(&self.buf[..self.loaded * bs]);
                self.buf = bigger;
            }
            let at = STREAM_PREFIX_BLOCKS * bs;
            self.buf[self.loaded * bs..need].copy_from_slice(&chunk[at..at + n * bs]);
            stream.prefetch.give_back(chunk);
            self.loaded += n;
            stream.next += n as u64;
        }
        self.set_run_last();
        Ok(())
    }

    /// Blocks of the old run that the run `from ..= to` starts with.
    fn kept(&self, from: u64, to: u64) -> usize {
        let old_end = self.first + self.loaded as u64;
        if from >= self.first && from < old_end {
            (old_end.min(to + 1) - from) as usize
        } else {
            0
        }
    }

    /// Reads blocks `from + keep .. from + want` after the `keep` blocks at the start of `buf`
    /// (`origin` is 0).
    fn finish_load(&mut self, from: u64, keep: usize, want: usize) -> Result<()> {
        let bs = self.table.block_size();
        self.first = from;
        self.loaded = keep;
        if keep < want {
            let read = self.table.device.read_blocks(
                1 + from + keep as u64,
                &mut self.buf[keep * bs..want * bs],
                IoClass::Leaf,
            );
            if read.is_err() {
                self.loaded = 0;
                return read;
            }
        }
        self.loaded = want;
        self.set_run_last();
        Ok(())
    }

    /// Notes the position and key of the last record held.
    fn set_run_last(&mut self) {
        let per = self.table.per_block as u64;
        self.run_last = ((self.first + self.loaded as u64) * per).min(self.table.len()) - 1;
        self.run_last_key = K::read_from(&self.buf[self.offset_of(self.run_last)..]);
    }

    /// Lower bound of `key` in `[lo, last]`, all held, where `lo` is slot `lo_slot` of block
    /// `lo_block`; `last + 1` when every key there is smaller (only possible when `last` is
    /// the table's last record or the window's end). Sets `found`. No division: the hot path
    /// of every INLJ.
    ///
    /// The first [`DENSE_PROBES`] records from `lo` are compared one by one before any
    /// search: in a dense walk (table ratio near 1, `lo` raised to the previous answer) the
    /// answer is almost always there, and the join degrades to a streaming merge with one or
    /// two key comparisons per probe instead of a binary search.
    #[inline]
    fn search(&mut self, lo_block: u64, lo_slot: usize, last: u64, key: K) -> u64 {
        let per = self.table.per_block as u64;
        let rs = self.table.record_size();
        let bs = self.table.block_size();
        let base = self.origin + (lo_block - self.first) as usize * bs;
        let lo = lo_block * per + lo_slot as u64;
        let probes = (per as usize - lo_slot)
            .min(DENSE_PROBES)
            .min((last + 1 - lo) as usize);
        for i in 0..probes {
            let at = base + (lo_slot + i) * rs;
            if !K::read_from(&self.buf[at..]).key_lt(&key) {
                self.answer(lo + i as u64, at, base);
                return lo + i as u64;
            }
        }
        if lo + probes as u64 > last {
            return last + 1;
        }
        let (mut b, mut slot) = (lo_block, lo_slot + probes);
        if slot == per as usize {
            b += 1;
            slot = 0;
        }
        // Skip whole blocks whose last key is smaller than the key.
        let end_slot = loop {
            let block_start = b * per;
            let base = self.origin + (b - self.first) as usize * bs;
            if block_start + per > last {
                break (last - block_start) as usize;
            }
            if !K::read_from(&self.buf[base + (per as usize - 1) * rs..]).key_lt(&key) {
                break per as usize - 1;
            }
            b += 1;
            slot = 0;
        };
        let base = self.origin + (b - self.first) as usize * bs;
        let mut n = end_slot + 1 - slot;
        let mut at = slot;
        while n > 1 {
            let half = n / 2;
            if K::read_from(&self.buf[base + (at + half - 1) * rs..]).key_lt(&key) {
                at += half;
            }
            n -= half;
        }
        if K::read_from(&self.buf[base + at * rs..]).key_lt(&key) {
            // Every key up to `last` is smaller: the answer is `last + 1`, not held.
            return b * per + at as u64 + 1;
        }
        self.answer(b * per + at as u64, base + at * rs, base);
        b * per + at as u64
    }

    /// Notes the answer: record `pos`, at byte offset `at` in the block at `base`.
    #[inline(always)]
    fn answer(&mut self, pos: u64, at: usize, base: usize) {
        self.found = Some(at);
        let rs = self.table.record_size();
        let block_end = base + self.table.per_block * rs;
        if pos + 1 < self.table.len() && at + 2 * rs <= block_end {
            self.next_pos = pos + 1;
            self.next_at = at + rs;
            self.next_block_end = block_end;
        }
    }

    /// True when record `pos` is in memory.
    pub fn holds(&self, pos: u64) -> bool {
        let b = pos / self.table.per_block as u64;
        pos < self.table.len() && b >= self.first && b < self.first + self.loaded as u64
    }

    /// Byte offset in `buf` of record `pos`, which must be held.
    fn offset_of(&self, pos: u64) -> usize {
        let per = self.table.per_block as u64;
        self.origin
            + (pos / per - self.first) as usize * self.table.block_size()
            + (pos % per) as usize * self.table.record_size()
    }

    /// The key of record `pos`, if it is in memory.
    pub fn key(&self, pos: u64) -> Option<K> {
        self.holds(pos)
            .then(|| K::read_from(&self.buf[self.offset_of(pos)..]))
    }

    /// The value of record `pos`, if it is in memory.
    pub fn value(&self, pos: u64) -> Option<&[u8]> {
        self.holds(pos).then(|| {
            let at = self.offset_of(pos) + K::SIZE;
            &self.buf[at..at + self.table.value_size()]
        })
    }

    /// The record at the last [`WindowReader::lower_bound`] answer, when it is in the table:
    /// its key and value.
    #[inline]
    pub fn found(&self) -> Option<(K, &[u8])> {
        self.found.map(|at| {
            let v = at + K::SIZE;
            (
                K::read_from(&self.buf[at..]),
                &self.buf[v..v + self.table.value_size()],
            )
        })
    }

    /// Bytes of the block buffer.
    pub fn memory_bytes(&self) -> usize {
        self.buf.len()
    }
}

/// Writes full buffers on a background thread, in order, while the writer fills the next one;
/// buffers come back (not zeroed: see [`TableWriter::flush`]) through a channel, or the first
/// write error does. With a [`RecordDigest`] the thread also sums a hash of every record it
/// writes, off the writer's thread (a join's output checksum, see `join::output`).
struct BackgroundWriter {
    jobs: Option<SyncSender<WriteJob>>,
    done: Receiver<Result<AlignedBuf>>,
    worker: Option<JoinHandle<()>>,
    spare: Option<AlignedBuf>,
    digest_sum: Arc<AtomicU64>,
}

/// Device blocks `first ..` from `buf[..bytes]`, which holds `records` records.
struct WriteJob {
    first: u64,
    buf: AlignedBuf,
    bytes: usize,
    records: usize,
}

/// What a [`BackgroundWriter`] needs to hash the records of a buffer: the hash and the layout.
#[derive(Clone, Copy)]
struct RecordDigest {
    hash: fn(&[u8]) -> u64,
    record_size: usize,
    per_block: usize,
    block_size: usize,
}

impl RecordDigest {
    /// The wrapping sum of the hashes of the first `records` records packed in `buf`.
    fn sum(&self, buf: &[u8], records: usize) -> u64 {
        let rs = self.record_size;
        let mut sum = 0u64;
        let mut left = records;
        for block in buf.chunks(self.block_size) {
            if left == 0 {
                break;
            }
            let here = left.min(self.per_block);
            for record in block[..here * rs].chunks_exact(rs) {
                sum = sum.wrapping_add((self.hash)(record));
            }
            left -= here;
        }
        sum
    }
}

impl BackgroundWriter {
    fn start(
        device: Arc<dyn BlockDevice>,
        buffer_bytes: usize,
        digest: Option<RecordDigest>,
    ) -> BackgroundWriter {
        let (jobs, job_rx) = sync_channel::<WriteJob>(1);
        let (done_tx, done) = channel();
        let digest_sum = Arc::new(AtomicU64::new(0));
        let sum = Arc::clone(&digest_sum);
        let worker = std::thread::spawn(move || {
            for mut job in job_rx {
                if let Some(d) = &digest {
                    let add = d.sum(&job.buf[..job.bytes], job.records);
                    sum.fetch_add(add, Ordering::Relaxed);
                }
                let written =
                    device.write_blocks(job.first, &mut job.buf[..job.bytes], IoClass::Data);
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
            digest_sum,
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

    /// Waits for every queued write; the first error if one failed, else the digest's sum.
    fn finish(&mut self, name: &str) -> Result<u64> {
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
        result.map(|()| self.digest_sum.load(Ordering::Relaxed))
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

/// Writes a table: records are packed into blocks in a buffer of [`WRITE_BLOCKS`] blocks that
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
        let digest = hash.map(|hash| RecordDigest {
            hash,
            record_size: writer.record_size,
            per_block: writer.per_block,
            block_size: writer.block_size,
        });
        writer.background = Some(BackgroundWriter::start(
            Arc::clone(&writer.device),
            writer.buf.len(),
            digest,
        ));
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
            _key: PhantomData,
        }
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
        writer.background = Some(BackgroundWriter::start(
            Arc::clone(&writer.device),
            writer.buf.len(),
            None,
        ));
        writer
    }

    /// Writes the last blocks of a [`TableWriter::stretch`] and waits for its writes; returns
    /// the records it wrote. Writes no header.
    #[doc(hidden)]
    pub fn finish_stretch(mut self) -> Result<u64> {
        self.flush()?;
        if let Some(bg) = &mut self.background {
            bg.finish(self.device.name())?;
        }
        Ok(self.header.count)
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

    /// Appends a record given as its bytes (key then value), as [`Scan::record`] returns it.
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
                    first: 1 + self.first,
                    buf: std::mem::replace(&mut self.buf, AlignedBuf::zeroed(0)),
                    bytes,
                    records: self.full_blocks * self.per_block + self.slot,
                };
                self.buf = bg.write(self.device.name(), job)?;
            }
            None => {
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

    /// Writes the last blocks, then the header block, and syncs. Returns the header.
    pub fn finish(self) -> Result<TableHeader> {
        self.finish_digest().map(|(header, _)| header)
    }

    /// [`TableWriter::finish`], also returning the sum of the record hashes of a writer from
    /// [`TableWriter::create_digest`] (0 for other writers).
    pub fn finish_digest(mut self) -> Result<(TableHeader, u64)> {
        self.flush()?;
        let digest = match &mut self.background {
            Some(bg) => bg.finish(self.device.name())?,
            None => 0,
        };
        write_table_header(self.device.as_ref(), &self.header)?;
        Ok((self.header, digest))
    }
}

/// Writes `header` as block 0 of `device` and syncs: the last step of writing a table.
#[doc(hidden)]
pub fn write_table_header(device: &dyn BlockDevice, header: &TableHeader) -> Result<()> {
    let mut block = AlignedBuf::zeroed(device.block_size());
    header.encode(&mut block);
    device.write_blocks(0, &mut block, IoClass::Header)?;
    device.sync()
}
