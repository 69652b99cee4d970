//! Leaf-block fetching (paper 002 §4, guideline G1): how the blocks of a model's window are read.
//!
//! The model gives a window `[lo, hi)` of items that holds the key's lower bound. Paper 002 §4.1
//! counts the pages it spans, `R_p` (eq. 1), and the pages from the window's start to the one
//! holding the answer, `dist` (eq. 2); §4.2 compares two strategies:
//!
//! * [`Fetch::AllAtOnce`]: read all `R_p` blocks of the window in ONE request, then binary-search
//!   the records in the buffer. One latency, `R_p` blocks of transfer: best when a request's
//!   latency dominates (HDD, few threads), and the paper's recommendation "in most cases".
//! * [`Fetch::OneByOne`]: read one block per request, stopping as soon as the lower bound is
//!   decided. The paper scans from the window's start (`dist` requests); we start at the block
//!   holding the model's predicted position and move one block left or right toward the key,
//!   never leaving the window, so an accurate model usually needs one request whatever `R_p`
//!   is. Best on SSDs with many threads, where a large request costs bandwidth other lookups
//!   need (the paper: "dist less than 1.25 pages or much smaller than R_p").
//!
//! A block decides the lower bound of `k` when `first <= k <= last` (the answer is inside it),
//! when `k <= first` and the block starts the window or `k == first` (the answer is its first
//! record), or when `last < k` and the block ends the window (the answer is one past it: the
//! window contract `lower_bound <= hi` says nothing to its right can be smaller). The answer
//! may thus be the first record of the block after the window; a lookup that needs that
//! record (`get` of a key at the boundary, a scan) reads that one block
//! too, in its own request, with either strategy. Every data block is read with
//! [`IoClass::Leaf`].

use crate::error::{Error, Result};
use crate::index::ApproxPos;
use crate::io::{AlignedBuf, BlockDevice, IoClass};
use crate::key::Key;

use super::data_block::{check_follows, decode_data_block, DataBlock, FIRST_DATA_BLOCK};

/// How the data blocks of a lookup's window are read (paper 002 G1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fetch {
    /// Every block of the window in one request: one request latency, more blocks
    /// transferred. The default, as paper 002 §4.2 recommends for most cases.
    #[default]
    AllAtOnce,
    /// One block per request from the predicted position toward the key: fewer blocks
    /// transferred, one latency per block visited.
    OneByOne,
}

impl Fetch {
    /// The name used on command lines and in reports: `all-at-once` or `one-by-one`.
    pub fn name(self) -> &'static str {
        match self {
            Fetch::AllAtOnce => "all-at-once",
            Fetch::OneByOne => "one-by-one",
        }
    }

    /// Parses [`Fetch::name`].
    pub fn parse(s: &str) -> Result<Fetch> {
        match s {
            "all-at-once" => Ok(Fetch::AllAtOnce),
            "one-by-one" => Ok(Fetch::OneByOne),
            _ => Err(Error::InvalidParameter {
                name: "fetch",
                value: s.to_string(),
                expected: "all-at-once or one-by-one",
            }),
        }
    }

    /// The code stored in file headers.
    pub(super) fn code(self) -> u32 {
        match self {
            Fetch::AllAtOnce => 0,
            Fetch::OneByOne => 1,
        }
    }

    /// Inverse of [`Fetch::code`].
    pub(super) fn from_code(code: u32) -> Option<Fetch> {
        match code {
            0 => Some(Fetch::AllAtOnce),
            1 => Some(Fetch::OneByOne),
            _ => None,
        }
    }
}

/// The data blocks of one file: where they are and how many records each holds.
pub(super) struct Leaves<'a> {
    pub device: &'a dyn BlockDevice,
    /// Entries.
    pub len: usize,
    /// Records per full block.
    pub per_block: usize,
    /// Payload bytes per record.
    pub payload_size: usize,
}

/// Consecutive data blocks read in one request, each validated.
pub(super) struct Run {
    buf: AlignedBuf,
    /// Data block number (0-based, not the file block number) of the first block.
    first: usize,
    blocks: usize,
    block_size: usize,
    /// First entry of the first block.
    start: usize,
    /// One past the last entry of the last block.
    end: usize,
    per_block: usize,
    payload_size: usize,
}

impl Run {
    /// First entry held.
    pub(super) fn start(&self) -> usize {
        self.start
    }

    /// One past the last entry held.
    pub(super) fn end(&self) -> usize {
        self.end
    }

    /// Data block number of the last block held.
    pub(super) fn last_block(&self) -> usize {
        self.first + self.blocks - 1
    }

    /// True when entry `i` is held.
    pub(super) fn holds(&self, i: usize) -> bool {
        (self.start..self.end).contains(&i)
    }

    fn block<K: Key>(&self, j: usize) -> DataBlock<'_, K> {
        let count = (self.end - self.start - j * self.per_block).min(self.per_block);
        let bytes = &self.buf[j * self.block_size..(j + 1) * self.block_size];
        DataBlock::view(bytes, count, self.payload_size)
    }

    /// Key and payload of entry `i` (held).
    pub(super) fn record<K: Key>(&self, i: usize) -> (K, &[u8]) {
        let off = i - self.start;
        let block = self.block::<K>(off / self.per_block);
        let j = off % self.per_block;
        (block.key(j), block.payload(j))
    }

    /// Lower bound of `key` among the held entries, as an entry number in
    /// `start() ..= end()`.
    pub(super) fn lower_bound<K: Key>(&self, key: &K) -> usize {
        let (mut lo, mut hi) = (0, self.blocks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let b = self.block::<K>(mid);
            if b.key(b.len() - 1).key_lt(key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == self.blocks {
            return self.end;
        }
        self.start + lo * self.per_block + self.block::<K>(lo).lower_bound(key)
    }
}

/// Where a lookup's lower bound is, with the blocks read to find it.
pub(super) struct Found {
    /// The lower bound, `0 ..= len`.
    pub pos: usize,
    /// Blocks that hold entry `pos` when the caller asked for the record and `pos < len`.
    pub run: Option<Run>,
}

impl Leaves<'_> {
    fn block_count(&self, b: usize) -> usize {
        (self.len - b * self.per_block).min(self.per_block)
    }

    /// Reads data blocks `first .. first + count` in one request and validates each block and
    /// the key order across the blocks' boundaries.
    pub(super) fn read<K: Key>(&self, first: usize, count: usize) -> Result<Run> {
        let block_size = self.device.block_size();
        let mut buf = AlignedBuf::zeroed(count * block_size);
        let file_block = FIRST_DATA_BLOCK + first as u64;
        self.device
            .read_blocks(file_block, &mut buf, IoClass::Leaf)?;
        let payload = self.device.payload_size();
        let mut previous_last: Option<K> = None;
        for j in 0..count {
            let bytes = &buf[j * block_size..j * block_size + payload];
            let block_no = file_block + j as u64;
            let expected = self.block_count(first + j);
            let block = decode_data_block::<K>(
                self.device.name(),
                block_no,
                bytes,
                expected,
                self.payload_size,
            )?;
            check_follows(self.device.name(), block_no, previous_last, block.key(0))?;
            previous_last = Some(block.key(expected - 1));
        }
        let start = first * self.per_block;
        Ok(Run {
            buf,
            first,
            blocks: count,
            block_size,
            start,
            end: (start + count * self.per_block).min(self.len),
            per_block: self.per_block,
            payload_size: self.payload_size,
        })
    }

    /// Data blocks spanned by the window `[lo, hi)` (at least the block of `lo`); `lo < len`.
    fn span(&self, w: &ApproxPos) -> (usize, usize) {
        let last_item = w.hi.max(w.lo + 1).min(self.len) - 1;
        (w.lo / self.per_block, last_item / self.per_block)
    }

    /// Finds the lower bound of `key` in the window `w` (`lo <= pos <= hi <= len`) with
    /// `fetch`; when `need_record`, the returned run also holds entry `pos` if `pos < len`.
    pub(super) fn find<K: Key>(
        &self,
        key: &K,
        w: &ApproxPos,
        fetch: Fetch,
        need_record: bool,
    ) -> Result<Found> {
        if w.lo >= self.len {
            return Ok(Found {
                pos: self.len,
                run: None,
            });
        }
        let mut found = match fetch {
            Fetch::AllAtOnce => self.all_at_once(key, w)?,
            Fetch::OneByOne => self.one_by_one(key, w)?,
        };
        let held = found.run.as_ref().is_some_and(|r| r.holds(found.pos));
        if need_record && found.pos < self.len && !held {
            found.run = Some(self.read::<K>(found.pos / self.per_block, 1)?);
        }
        Ok(found)
    }

    fn all_at_once<K: Key>(&self, key: &K, w: &ApproxPos) -> Result<Found> {
        let (first, last) = self.span(w);
        let run = self.read::<K>(first, last - first + 1)?;
        Ok(Found {
            pos: run.lower_bound(key),
            run: Some(run),
        })
    }

    fn one_by_one<K: Key>(&self, key: &K, w: &ApproxPos) -> Result<Found> {
        let (first, last) = self.span(w);
        let mut b = (w.pos.min(self.len - 1) / self.per_block).clamp(first, last);
        // The walk moves one way only. Moving right means the block to the left ends below
        // `key`; moving left keeps the block to the right (its first key is above `key`), which
        // holds the answer if this block ends below `key`.
        let mut moved_right = false;
        let mut right: Option<Run> = None;
        loop {
            let run = self.read::<K>(b, 1)?;
            let block = run.block::<K>(0);
            let first_key = block.key(0);
            let last_key = block.key(block.len() - 1);
            if !first_key.key_lt(key) {
                let equal = first_key.key_cmp(key) == std::cmp::Ordering::Equal;
                if equal || moved_right || b == first {
                    return Ok(Found {
                        pos: run.start(),
                        run: Some(run),
                    });
                }
                right = Some(run);
                b -= 1;
            } else if last_key.key_lt(key) {
                if let Some(right) = right {
                    return Ok(Found {
                        pos: run.end(),
                        run: Some(right),
                    });
                }
                if b == last {
                    return Ok(Found {
                        pos: run.end(),
                        run: Some(run),
                    });
                }
                moved_right = true;
                b += 1;
            } else {
                return Ok(Found {
                    pos: run.lower_bound(key),
                    run: Some(run),
                });
            }
        }
    }
}
