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
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::{check_next, Key, Str16};

/// Bytes of the table header.
pub const HEADER_BYTES: usize = 16;

/// Blocks a writer buffers before one write request (1 MiB of 4 KiB blocks), and blocks a
/// sequential scan reads per request. Larger means fewer, longer requests and more memory.
pub const STREAM_BLOCKS: usize = 256;

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
    pub fn record_size(&self) -> usize {
        self.header.record_size()
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
    /// [`STREAM_BLOCKS`] blocks per request.
    pub fn scan(&self, range: Range<u64>) -> Result<Scan<'_, K>> {
        Scan::new(self, range, STREAM_BLOCKS)
    }

    /// A reader for windows that move forward (paper 000 §5.1-5.2); see [`WindowReader`].
    pub fn window_reader(&self) -> WindowReader<'_, K> {
        WindowReader {
            table: self,
            buf: AlignedBuf::zeroed(0),
            first: 0,
            loaded: 0,
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

    fn block_size(&self) -> usize {
        self.device.block_size()
    }
}

/// A sequential reader over a range of records: [`Scan::key`] and [`Scan::value`] of the
/// current record, [`Scan::advance`] to the next. Reads many blocks per request.
pub struct Scan<'t, K> {
    table: &'t Table<K>,
    buf: AlignedBuf,
    /// Record block held at the start of `buf`, and how many are held.
    first: u64,
    loaded: usize,
    /// Current position, its block index within `buf` and slot within the block.
    pos: u64,
    at_block: usize,
    slot: usize,
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
        let mut scan = Scan {
            table,
            buf: AlignedBuf::zeroed(chunk * table.block_size()),
            first,
            loaded: 0,
            pos,
            at_block: 0,
            slot,
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
        self.table
            .device
            .read_blocks(1 + self.first, &mut self.buf[..bytes], IoClass::Data)?;
        self.loaded = blocks;
        self.at_block = 0;
        Ok(())
    }

    #[inline(always)]
    fn offset(&self) -> usize {
        self.at_block * self.table.block_size() + self.slot * self.table.record_size()
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
    #[inline]
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
    #[inline]
    pub fn advance(&mut self) -> Result<()> {
        if self.pos >= self.end {
            return Ok(());
        }
        self.pos += 1;
        self.slot += 1;
        if self.slot == self.table.per_block {
            self.slot = 0;
            self.at_block += 1;
            if self.at_block == self.loaded && self.pos < self.end {
                self.first += self.loaded as u64;
                self.fill()?;
            }
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
/// `hi` itself, and the join then needs its key. The buffer grows to the widest window seen.
pub struct WindowReader<'t, K> {
    table: &'t Table<K>,
    buf: AlignedBuf,
    /// Record block at the start of `buf`, and how many blocks are held.
    first: u64,
    loaded: usize,
}

impl<'t, K: TableKey> WindowReader<'t, K> {
    /// The first position in `[lo, hi]` whose key is `>= key`, for a window that holds the
    /// lower bound (`lo <= lower_bound(key) <= hi`, the [`crate::ApproxPos`] contract) of a
    /// sorted table; `hi` is clamped to the table. Afterwards the record at the answer is in
    /// memory when the answer is below `len()`: see [`WindowReader::key`], [`WindowReader::value`].
    pub fn lower_bound(&mut self, lo: u64, hi: u64, key: K) -> Result<u64> {
        let len = self.table.len();
        let hi = hi.min(len);
        let lo = lo.min(hi);
        if lo == len {
            return Ok(len);
        }
        let per = self.table.per_block as u64;
        let lo_block = lo / per;
        let held = lo_block >= self.first && lo_block < self.first + self.loaded as u64;
        if held {
            let run_end = ((self.first + self.loaded as u64) * per).min(len);
            let last = run_end - 1;
            if !self.key_unchecked(last).key_lt(&key) {
                return Ok(self.search(lo, last.min(hi), key));
            }
        }
        let last = hi.min(len - 1);
        self.load(lo_block, last / per)?;
        Ok(self.search(lo, last, key))
    }

    /// Makes record blocks `from ..= to` the run in memory with one read request at most.
    fn load(&mut self, from: u64, to: u64) -> Result<()> {
        let bs = self.table.block_size();
        let want = (to - from + 1) as usize;
        if self.buf.len() < want * bs {
            let mut bigger = AlignedBuf::zeroed(want * bs);
            let keep = self.kept(from, to);
            if keep > 0 {
                let src = (from - self.first) as usize * bs;
                bigger[..keep * bs].copy_from_slice(&self.buf[src..src + keep * bs]);
            }
            self.buf = bigger;
            return self.finish_load(from, keep, want);
        }
        let keep = self.kept(from, to);
        if keep > 0 {
            let src = (from - self.first) as usize * bs;
            self.buf.copy_within(src..src + keep * bs, 0);
        }
        self.finish_load(from, keep, want)
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

    fn finish_load(&mut self, from: u64, keep: usize, want: usize) -> Result<()> {
        let bs = self.table.block_size();
        self.first = from;
        self.loaded = keep;
        if keep < want {
            self.table.device.read_blocks(
                1 + from + keep as u64,
                &mut self.buf[keep * bs..want * bs],
                IoClass::Leaf,
            )?;
        }
        self.loaded = want;
        Ok(())
    }

    /// Lower bound of `key` in `[lo, last]`, all held; `last + 1` when every key there is
    /// smaller (only possible when `last` is the table's last record or the window's end).
    #[inline]
    fn search(&self, lo: u64, last: u64, key: K) -> u64 {
        let per = self.table.per_block as u64;
        let rs = self.table.record_size();
        let bs = self.table.block_size();
        let mut start = lo;
        // Skip whole blocks whose last key in range is smaller than the key.
        loop {
            let block_last = ((start / per + 1) * per - 1).min(last);
            if block_last == last || !self.key_unchecked(block_last).key_lt(&key) {
                break;
            }
            start = block_last + 1;
        }
        let block_last = ((start / per + 1) * per - 1).min(last);
        let base = (start / per - self.first) as usize * bs;
        let first_slot = (start % per) as usize;
        let mut n = (block_last - start + 1) as usize;
        let mut at = 0usize;
        while n > 1 {
            let half = n / 2;
            let k = K::read_from(&self.buf[base + (first_slot + at + half - 1) * rs..]);
            if k.key_lt(&key) {
                at += half;
            }
            n -= half;
        }
        let k = K::read_from(&self.buf[base + (first_slot + at) * rs..]);
        start + at as u64 + u64::from(k.key_lt(&key))
    }

    #[inline(always)]
    fn byte_offset(&self, pos: u64) -> usize {
        let per = self.table.per_block as u64;
        (pos / per - self.first) as usize * self.table.block_size()
            + (pos % per) as usize * self.table.record_size()
    }

    #[inline(always)]
    fn key_unchecked(&self, pos: u64) -> K {
        K::read_from(&self.buf[self.byte_offset(pos)..])
    }

    /// True when record `pos` is in memory.
    pub fn holds(&self, pos: u64) -> bool {
        let b = pos / self.table.per_block as u64;
        pos < self.table.len() && b >= self.first && b < self.first + self.loaded as u64
    }

    /// The key of record `pos`, if it is in memory.
    pub fn key(&self, pos: u64) -> Option<K> {
        self.holds(pos).then(|| self.key_unchecked(pos))
    }

    /// The value of record `pos`, if it is in memory.
    pub fn value(&self, pos: u64) -> Option<&[u8]> {
        self.holds(pos).then(|| {
            let at = self.byte_offset(pos) + K::SIZE;
            &self.buf[at..at + self.table.value_size()]
        })
    }

    /// Bytes of the block buffer.
    pub fn memory_bytes(&self) -> usize {
        self.buf.len()
    }
}

/// Writes a table: records are packed into blocks in a buffer of [`STREAM_BLOCKS`] blocks that
/// is written in one request when full; [`TableWriter::finish`] writes the last blocks and then
/// the header.
pub struct TableWriter<K> {
    device: Arc<dyn BlockDevice>,
    header: TableHeader,
    per_block: usize,
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
        Self::with_buffer(storage, name, value_size, STREAM_BLOCKS)
    }

    /// [`TableWriter::create`] with a buffer of `blocks` blocks (at least 1): fewer blocks save
    /// memory when many writers are open at once (the Grace hash join's partitions) at the
    /// price of more, smaller write requests.
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
        Ok(TableWriter {
            per_block: header.records_per_block(payload),
            buf: AlignedBuf::zeroed(blocks.max(1) * storage.block_size()),
            device,
            header,
            first: 0,
            full_blocks: 0,
            slot: 0,
            _key: PhantomData,
        })
    }

    /// Appends a record. `value.len()` must be the table's value size.
    #[inline]
    pub fn push(&mut self, key: &K, value: &[u8]) -> Result<()> {
        let rs = self.header.record_size();
        if value.len() != self.header.value_size as usize {
            return Err(Error::InvalidParameter {
                name: "value",
                value: format!("{} bytes", value.len()),
                expected: "exactly the table's value size",
            });
        }
        let at = self.full_blocks * self.device.block_size() + self.slot * rs;
        key.write_to(&mut self.buf[at..at + K::SIZE]);
        self.buf[at + K::SIZE..at + rs].copy_from_slice(value);
        self.bump()
    }

    /// Appends a record given as its bytes (key then value), as [`Scan::record`] returns it.
    #[inline]
    pub fn push_record(&mut self, record: &[u8]) -> Result<()> {
        let rs = self.header.record_size();
        if record.len() != rs {
            return Err(Error::InvalidParameter {
                name: "record",
                value: format!("{} bytes", record.len()),
                expected: "exactly the table's record size",
            });
        }
        let at = self.full_blocks * self.device.block_size() + self.slot * rs;
        self.buf[at..at + rs].copy_from_slice(record);
        self.bump()
    }

    /// Appends a record from a key and several value parts whose lengths add up to the value
    /// size (a join's output: left value, then right value).
    #[inline]
    pub fn push_parts(&mut self, key: &K, parts: &[&[u8]]) -> Result<()> {
        let rs = self.header.record_size();
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total != self.header.value_size as usize {
            return Err(Error::InvalidParameter {
                name: "value",
                value: format!("{total} bytes"),
                expected: "exactly the table's value size",
            });
        }
        let mut at = self.full_blocks * self.device.block_size() + self.slot * rs;
        key.write_to(&mut self.buf[at..at + K::SIZE]);
        at += K::SIZE;
        for part in parts {
            self.buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        self.bump()
    }

    #[inline]
    fn bump(&mut self) -> Result<()> {
        self.header.count += 1;
        self.slot += 1;
        if self.slot == self.per_block {
            self.slot = 0;
            self.full_blocks += 1;
            if self.full_blocks * self.device.block_size() == self.buf.len() {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes the buffered blocks (the partial last one included) in one request.
    fn flush(&mut self) -> Result<()> {
        let blocks = self.full_blocks + usize::from(self.slot > 0);
        if blocks == 0 {
            return Ok(());
        }
        let bytes = blocks * self.device.block_size();
        self.device
            .write_blocks(1 + self.first, &mut self.buf[..bytes], IoClass::Data)?;
        self.first += self.full_blocks as u64;
        self.full_blocks = 0;
        self.buf[..bytes].fill(0);
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
    pub fn finish(mut self) -> Result<TableHeader> {
        if self.slot > 0 {
            // The partial block is written and the slot reset so that `flush` counts it once.
            self.flush()?;
            self.slot = 0;
        } else {
            self.flush()?;
        }
        let mut block = AlignedBuf::zeroed(self.device.block_size());
        self.header.encode(&mut block);
        self.device.write_blocks(0, &mut block, IoClass::Header)?;
        self.device.sync()?;
        Ok(self.header)
    }
}
