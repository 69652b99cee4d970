//! Random access for an indexed nested-loop join's windows, which only move forward
//! (paper 000 §4.1 optimization 2, §5.1-5.2): [`WindowReader`], the [`WindowStream`] it
//! reads from in a dense walk, and the [`WindowHold`] it is put aside as between batches of
//! probes.

use std::sync::Arc;

use super::file::Table;
use super::header::TableKey;
use super::prefetch::Prefetcher;
use crate::error::Result;
use crate::io::{AlignedBuf, BlockDevice, IoClass};

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
/// `MAX_READAHEAD_BLOCKS`, so a dense walk reads the table in long requests as a scan does.
/// Once readahead is at its largest, the blocks after the run stream in from a background
/// reader (`PREFETCH_DEPTH` requests ahead, as a scan's); the few blocks of the run that the
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
    /// False when the caller hints its windows instead ([`WindowReader::set_readahead`]).
    readahead: bool,
}

/// A [`WindowReader`] put aside ([`WindowReader::into_hold`]): the blocks it holds, its
/// readahead and its background reader, without its borrow of the table.
/// [`Table::resume_window_reader`] puts it back to work where it left off.
///
/// Not in the paper, whose INLJ streams the whole outer table through one reader. A query
/// engine's join gets its probes in batches (DataFusion's, 8,192 rows): a reader per batch
/// starts its readahead over (doubling from one block) and drops what its background reader
/// had read ahead, up to `PREFETCH_DEPTH + 1` chunks of 4 MiB a batch. A 1/100 join over a
/// 10M-row table then read and zeroed about twice the table (`lidx-datafusion`'s index join;
/// `docs/results/datafusion.md`). A hold carries the run across batches instead: batches in
/// key order continue the dense walk, and a batch that starts behind the run reads its
/// windows afresh (the reader's loads handle windows that move back; they only cost more).
pub struct WindowHold {
    /// The device of the table the reader read: a hold resumes only on that table.
    device: Arc<dyn BlockDevice>,
    buf: AlignedBuf,
    origin: usize,
    first: u64,
    loaded: usize,
    ahead: usize,
    lo_block: u64,
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
pub(super) const MAX_READAHEAD_BLOCKS: usize = 1024;

impl<'t, K: TableKey> WindowReader<'t, K> {
    /// A reader over `table` holding nothing yet.
    fn new(table: &'t Table<K>) -> Self {
        WindowReader {
            table,
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
            readahead: true,
        }
    }

    /// Turns the reader's readahead and background stream (type docs) off, or back on. A
    /// caller that hints the blocks of its windows ahead of its lookups ([`Table::will_need`])
    /// turns them off: a readahead request over blocks the OS is already reading in small
    /// pieces waits on them piece by piece, and the hints have already asked for every block
    /// the windows need. Not in the paper (whose INLJ relies on the OS's own readahead). A
    /// reader starts with readahead on, and so does one resumed from a [`WindowHold`].
    pub fn set_readahead(&mut self, on: bool) {
        self.readahead = on;
        if !on {
            self.ahead = 0;
            self.stream = None;
        }
    }

    /// The first position in `[lo, hi]` whose key is `>= key`, for a window that holds the
    /// lower bound (`lo <= lower_bound(key) <= hi`, the [`crate::ApproxPos`] contract) of a
    /// sorted table; `hi` is clamped to the table. Afterwards the record at the answer, when
    /// the answer is below `len()`, is [`WindowReader::found`].
    ///
    /// Inlined is only the dense walk's case, `lo` at the record after the last answer and
    /// answering the key; the rest is `WindowReader::lower_bound_general`.
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
        self.ahead = if self.readahead && continues && self.loaded > 0 {
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

    /// Puts the reader aside, keeping what it holds and reads ahead (see [`WindowHold`]).
    pub fn into_hold(self) -> WindowHold {
        WindowHold {
            device: Arc::clone(&self.table.device),
            buf: self.buf,
            origin: self.origin,
            first: self.first,
            loaded: self.loaded,
            ahead: self.ahead,
            lo_block: self.lo_block,
            stream: self.stream,
        }
    }
}

impl<K: TableKey> Table<K> {
    /// A reader for windows that move forward (paper 000 §5.1-5.2); see [`WindowReader`].
    pub fn window_reader(&self) -> WindowReader<'_, K> {
        WindowReader::new(self)
    }

    /// The reader `hold` was put aside as, back at work with its blocks and readahead; a new
    /// reader when `hold` comes from a table on another device (another open of the same file
    /// through its own device included).
    pub fn resume_window_reader(&self, hold: WindowHold) -> WindowReader<'_, K> {
        let mut reader = WindowReader::new(self);
        if !Arc::ptr_eq(&hold.device, &self.device) {
            return reader;
        }
        reader.buf = hold.buf;
        reader.origin = hold.origin;
        reader.first = hold.first;
        reader.loaded = hold.loaded;
        reader.ahead = hold.ahead;
        reader.lo_block = hold.lo_block;
        reader.stream = hold.stream;
        if reader.loaded > 0 {
            reader.set_run_last();
        }
        reader
    }
}
