//! [`Pages`]: one operation's view of the node file as bytes, and [`Appender`], the
//! sequential writer of a bulk load.
//!
//! A node is read and written by byte position, whatever blocks it spans. Each block is
//! fetched at most once per operation (paper 003 §6.1: "we check whether the last block
//! fetched can be reused"; we keep every block the operation fetched, which is the same for a
//! lookup's descent and spares an insert re-reading the blocks it changes), with the
//! [`IoClass`] the caller names: the block of a node's header (its model) is `Inner`, a block
//! fetched for a slot is `Leaf` (see [`super`] for why). Writes change the blocks in the view;
//! [`Pages::commit`] writes the changed ones, each run of consecutive blocks in one request, so
//! a caller orders its writes by committing between them. Blocks at or past the end of the
//! file are zeros and are not read.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::disk::block_batch::BlockBatch;
use crate::error::Result;
use crate::io::{AlignedBuf, BlockDevice, IoClass};

/// An operation's blocks of the node file. See the module docs.
pub(crate) struct Pages {
    dev: Arc<dyn BlockDevice>,
    usable: usize,
    block_size: usize,
    blocks: BTreeMap<u64, (AlignedBuf, bool)>,
}

impl Pages {
    /// A fresh view of `dev`.
    pub(crate) fn new(dev: &Arc<dyn BlockDevice>) -> Self {
        Pages {
            usable: dev.payload_size(),
            block_size: dev.block_size(),
            dev: Arc::clone(dev),
            blocks: BTreeMap::new(),
        }
    }

    /// The block holding position `pos`.
    pub(crate) fn block_of(&self, pos: u64) -> u64 {
        pos / self.usable as u64
    }

    /// Fetches blocks `first ..= last` not in the view yet, each run of missing blocks in one
    /// request counted as `class`; blocks past the end of the file are zeros.
    fn load(&mut self, first: u64, last: u64, class: IoClass) -> Result<()> {
        let end_of_file = self.dev.len_blocks();
        let mut b = first;
        while b <= last {
            if self.blocks.contains_key(&b) {
                b += 1;
                continue;
            }
            if b >= end_of_file {
                self.blocks
                    .insert(b, (AlignedBuf::zeroed(self.block_size), false));
                b += 1;
                continue;
            }
            let mut run = b;
            while run < last && run + 1 < end_of_file && !self.blocks.contains_key(&(run + 1)) {
                run += 1;
            }
            let count = (run - b + 1) as usize;
            let mut buf = AlignedBuf::zeroed(count * self.block_size);
            self.dev.read_blocks(b, &mut buf, class)?;
            for (i, chunk) in buf.chunks_exact(self.block_size).enumerate() {
                let mut one = AlignedBuf::zeroed(self.block_size);
                one.copy_from_slice(chunk);
                self.blocks.insert(b + i as u64, (one, false));
            }
            b = run + 1;
        }
        Ok(())
    }

    /// Calls `f(block, offset in block, range of out)` for each block piece of `len` bytes
    /// from `pos`.
    fn pieces(&self, pos: u64, len: usize, mut f: impl FnMut(u64, usize, std::ops::Range<usize>)) {
        let mut done = 0;
        while done < len {
            let at = pos + done as u64;
            let (block, offset) = (self.block_of(at), (at % self.usable as u64) as usize);
            let n = (self.usable - offset).min(len - done);
            f(block, offset, done..done + n);
            done += n;
        }
    }

    /// Copies `out.len()` bytes from position `pos`, fetching missing blocks as `class`.
    pub(crate) fn read(&mut self, pos: u64, out: &mut [u8], class: IoClass) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let last = self.block_of(pos + out.len() as u64 - 1);
        self.load(self.block_of(pos), last, class)?;
        let blocks = &self.blocks;
        self.pieces(pos, out.len(), |block, offset, range| {
            let n = range.len();
            out[range].copy_from_slice(&blocks[&block].0[offset..offset + n]);
        });
        Ok(())
    }

    /// Writes `bytes` at position `pos` into the view (committed by [`Pages::commit`]); a
    /// block the write does not cover whole is fetched first, counted as `class`.
    pub(crate) fn write(&mut self, pos: u64, bytes: &[u8], class: IoClass) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut pieces = Vec::new();
        self.pieces(pos, bytes.len(), |block, offset, range| {
            pieces.push((block, offset, range));
        });
        for (block, offset, range) in &pieces {
            if *offset != 0 || range.len() != self.usable {
                self.load(*block, *block, class)?;
            } else if !self.blocks.contains_key(block) {
                self.blocks
                    .insert(*block, (AlignedBuf::zeroed(self.block_size), false));
            }
        }
        let blocks = &mut self.blocks;
        for (block, offset, range) in pieces {
            let entry = blocks.get_mut(&block).expect("loaded above");
            let n = range.len();
            entry.0[offset..offset + n].copy_from_slice(&bytes[range]);
            entry.1 = true;
        }
        Ok(())
    }

    /// Writes the changed blocks, each run of consecutive ones in one request.
    pub(crate) fn commit(&mut self) -> Result<()> {
        let dirty: Vec<u64> = self
            .blocks
            .iter()
            .filter(|(_, (_, d))| *d)
            .map(|(&b, _)| b)
            .collect();
        let mut i = 0;
        while i < dirty.len() {
            let mut j = i + 1;
            while j < dirty.len() && dirty[j] == dirty[j - 1] + 1 {
                j += 1;
            }
            let mut buf = AlignedBuf::zeroed((j - i) * self.block_size);
            for (k, b) in dirty[i..j].iter().enumerate() {
                let at = k * self.block_size;
                buf[at..at + self.block_size].copy_from_slice(&self.blocks[b].0);
            }
            self.dev.write_blocks(dirty[i], &mut buf, IoClass::Leaf)?;
            for (k, b) in dirty[i..j].iter().enumerate() {
                let at = k * self.block_size;
                let entry = self.blocks.get_mut(b).expect("dirty block in the view");
                entry.0.copy_from_slice(&buf[at..at + self.block_size]);
                entry.1 = false;
            }
            i = j;
        }
        Ok(())
    }
}

/// Writes bytes one after another from a position, in large sequential requests: the bulk
/// load's writer. The block the first position falls in must be a fresh one (position at a
/// block start) or be given with its bytes so far.
pub(crate) struct Appender {
    batch: BlockBatch,
    usable: usize,
    /// The block being filled (a copy; handed to the batch when full).
    current: Vec<u8>,
    offset: usize,
    pos: u64,
}

impl Appender {
    /// An appender whose first byte goes to position `pos`, the start of a block.
    pub(crate) fn new(dev: &dyn BlockDevice, pos: u64) -> Self {
        let usable = dev.payload_size();
        debug_assert!(pos.is_multiple_of(usable as u64));
        Appender {
            batch: BlockBatch::new(dev.block_size(), pos / usable as u64, IoClass::Leaf),
            usable,
            current: vec![0; usable],
            offset: 0,
            pos,
        }
    }

    /// The position the next byte goes to.
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// Appends `bytes`.
    pub(crate) fn write(&mut self, dev: &dyn BlockDevice, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let n = (self.usable - self.offset).min(bytes.len());
            self.current[self.offset..self.offset + n].copy_from_slice(&bytes[..n]);
            self.offset += n;
            self.pos += n as u64;
            bytes = &bytes[n..];
            if self.offset == self.usable {
                self.batch.block(dev)?[..self.usable].copy_from_slice(&self.current);
                self.current.fill(0);
                self.offset = 0;
            }
        }
        Ok(())
    }

    /// Writes what is left (the last block padded with zeros).
    pub(crate) fn finish(mut self, dev: &dyn BlockDevice) -> Result<()> {
        if self.offset > 0 {
            self.batch.block(dev)?[..self.usable].copy_from_slice(&self.current);
        }
        self.batch.flush(dev)
    }
}
