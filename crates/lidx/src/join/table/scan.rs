//! Sequential reads of a table: [`Scan`] over a range of records, and the [`Prefetcher`] that
//! reads its next requests on a background thread (with `O_DIRECT` nothing reads ahead for
//! us; paper 000 reads through the OS page cache and its readahead).

use std::ops::Range;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::file::Table;
use super::header::TableKey;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass};
use crate::key::check_next;

/// Blocks a sequential scan reads per request (4 MiB of 4 KiB blocks; fewer for a smaller
/// table). Larger means fewer, longer requests and more memory: on the virtio disk we measure
/// on, reading two 50M-record tables took 2.5 s in 1 MiB requests and 1.0 s in 4 MiB ones.
pub const READ_BLOCKS: usize = 1024;

/// Reads a run of blocks chunk by chunk on a background thread, up to [`PREFETCH_DEPTH`]
/// chunks ahead of its consumer, so that a scan's CPU work and its next reads overlap and a
/// slow request does not stall the scan. `PREFETCH_DEPTH + 1` buffers circulate: the one the
/// consumer reads records from and the ones being filled or waiting. Each buffer has `prefix`
/// blocks of room before the chunk, which the reader leaves alone, so that a consumer can
/// put the blocks it still needs in front of a new chunk instead of copying the chunk after
/// them (the [`WindowReader`]'s stream).
pub(super) struct Prefetcher {
    filled: Option<Receiver<Result<AlignedBuf>>>,
    empty: Option<Sender<AlignedBuf>>,
    worker: Option<JoinHandle<()>>,
    name: String,
    /// Bytes of every buffer: `(prefix + chunk)` blocks.
    buffer_bytes: usize,
}

/// Chunks a `Prefetcher` reads ahead of its consumer. On the virtio disk we measure on, one
/// chunk ahead left a ratio-1 INLJ waiting for reads 0.7 s of 3 s (requests vary in latency
/// under a concurrent write stream); three ahead removed the wait.
pub const PREFETCH_DEPTH: usize = 3;

impl Prefetcher {
    /// Starts reading device blocks `first .. first + blocks`, `chunk` blocks per request, each
    /// into a buffer after `prefix` blocks of room.
    pub(super) fn start(
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
    pub(super) fn give_back(&self, done: AlignedBuf) {
        if done.len() == self.buffer_bytes {
            if let Some(empty) = &self.empty {
                // The worker may have finished the run; then nobody needs the buffer.
                let _ = empty.send(done);
            }
        }
    }

    /// Hands back the buffer the consumer is done with and takes the next chunk (after the
    /// buffer's prefix).
    pub(super) fn next(&mut self, done: AlignedBuf) -> Result<AlignedBuf> {
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
/// current record, [`Scan::advance`] to the next. Reads `READ_BLOCKS` blocks per request;
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
    pub(super) fn new(table: &'t Table<K>, range: Range<u64>, chunk: usize) -> Result<Self> {
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
