//! Sequential reads of a table: [`Scan`] over a range of records (its next requests read on a
//! background thread by the [`Prefetcher`]), and the [`Table`] methods that read in order:
//! [`Table::scan`], [`Table::read_keys`], [`Table::lower_bound_on_disk`].

use std::ops::Range;
use std::sync::Arc;

use super::file::Table;
use super::header::TableKey;
use super::prefetch::{Prefetcher, PREFETCH_DEPTH};
use crate::error::Result;
use crate::io::{AlignedBuf, IoClass};
use crate::key::check_next;

/// Blocks a sequential scan reads per request (4 MiB of 4 KiB blocks; fewer for a smaller
/// table). Larger means fewer, longer requests and more memory: on the virtio disk we measure
/// on, reading two 50M-record tables took 2.5 s in 1 MiB requests and 1.0 s in 4 MiB ones.
pub(super) const READ_BLOCKS: usize = 1024;

/// A sequential reader over a range of records: [`Scan::key`] and [`Scan::value`] of the
/// current record, [`Scan::advance`] to the next. Reads `READ_BLOCKS` blocks per request (the
/// range's blocks when fewer);
/// a range longer than that is read by a background thread up to `PREFETCH_DEPTH` requests
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
        let blocks = if pos < end {
            (end - 1) / table.per_block as u64 + 1 - first
        } else {
            0
        };
        // A request is never longer than the range: a scan of a few records (a range query's,
        // `lidx-datafusion`'s) holds the blocks it reads, not a whole request's buffer.
        let chunk = (chunk.max(1) as u64).min(blocks.max(1)) as usize;
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
    /// the current one: [`Error::OutOfOrder`](crate::Error::OutOfOrder) or [`Error::DuplicateKey`](crate::Error::DuplicateKey) (with the position in
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

impl<K: TableKey> Table<K> {
    /// A sequential reader over records `range` (clamped to the table), reading
    /// `READ_BLOCKS` blocks per request.
    pub fn scan(&self, range: Range<u64>) -> Result<Scan<'_, K>> {
        Scan::new(self, range, READ_BLOCKS)
    }

    /// Bytes of buffers a [`Table::scan`] over the whole table holds: one request's worth, and
    /// `PREFETCH_DEPTH` more when the table is longer than one request and a background
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
}
