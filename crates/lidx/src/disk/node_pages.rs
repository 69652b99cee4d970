//! [`NodePages`]: one operation's view of a node file as bytes, and [`Appender`], the
//! sequential writer of a bulk load; what the on-disk ALEX ([`super::alex`]) and LIPP
//! ([`super::lipp`]) share.
//!
//! Paper 003 §4.1-4.2 lays both out the same way: nodes of any size stored one after another
//! in the usable bytes of a file's blocks, addressed by block and offset, so a node may cross
//! blocks. A node is therefore read and written by byte *position* (`block * usable +
//! offset`), whatever blocks it spans. Each block is fetched from the device at most once per
//! operation (paper 003 §6.1: "we check whether the last block fetched can be reused"; we keep
//! every block the operation fetched, which is the same for a lookup's descent and spares an
//! insert or a shift across a block boundary its re-reads). A read is counted as the view's
//! [`IoClass`] (ALEX: one per file, inner or leaf) or as the class a caller names
//! ([`NodePages::read_as`]; LIPP: a node's header block is inner, a slot's block leaf), so the
//! device's counters split inner and leaf blocks as paper 003 Table 4.
//!
//! Writes change the blocks in the view; [`NodePages::commit`] writes the changed ones, each
//! run of consecutive blocks in one request, so a caller orders its writes by committing
//! between them. A block that a write covers whole, or that lies at or past the end of the
//! file, is not read first. When a file is kept in memory (ALEX's inner nodes, paper 003
//! §6.2), the view reads from the resident copy instead of the device and
//! [`NodePages::commit_blocks`] hands back what it wrote so the copy can follow.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::disk::block_batch::BlockBatch;
use crate::error::Result;
use crate::io::{AlignedBuf, BlockDevice, IoClass};

/// An operation's blocks of one node file. See the module docs.
pub(crate) struct NodePages<'a> {
    dev: Arc<dyn BlockDevice>,
    class: IoClass,
    resident: Option<&'a [Box<[u8]>]>,
    usable: usize,
    block_size: usize,
    /// Block number to its bytes (trailer included) and whether the view changed them.
    blocks: BTreeMap<u64, (Box<[u8]>, bool)>,
}

impl<'a> NodePages<'a> {
    /// A view of `dev` whose requests count as `class` unless a call names another, served
    /// from `resident` (whole blocks, index = block number) when given.
    pub(crate) fn new(
        dev: Arc<dyn BlockDevice>,
        class: IoClass,
        resident: Option<&'a [Box<[u8]>]>,
    ) -> Self {
        NodePages {
            usable: dev.payload_size(),
            block_size: dev.block_size(),
            dev,
            class,
            resident,
            blocks: BTreeMap::new(),
        }
    }

    /// The file's name, for errors.
    pub(crate) fn file(&self) -> &str {
        self.dev.name()
    }

    /// The block holding byte position `pos`.
    pub(crate) fn block_of(&self, pos: u64) -> u64 {
        pos / self.usable as u64
    }

    /// Fetches blocks `first ..= last` not in the view yet, as the view's class.
    pub(crate) fn load(&mut self, first: u64, last: u64) -> Result<()> {
        self.load_as(first, last, self.class)
    }

    /// Fetches blocks `first ..= last` not in the view yet, each run of missing blocks in one
    /// request counted as `class`; blocks past the end of the file are zeros.
    fn load_as(&mut self, first: u64, last: u64, class: IoClass) -> Result<()> {
        let end_of_file = match self.resident {
            Some(r) => r.len() as u64,
            None => self.dev.len_blocks(),
        };
        let mut b = first;
        while b <= last {
            if self.blocks.contains_key(&b) {
                b += 1;
                continue;
            }
            if b >= end_of_file {
                self.blocks.insert(b, (self.zeroed(), false));
                b += 1;
                continue;
            }
            if let Some(resident) = self.resident {
                self.blocks.insert(b, (resident[b as usize].clone(), false));
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
                self.blocks.insert(b + i as u64, (chunk.into(), false));
            }
            b = run + 1;
        }
        Ok(())
    }

    fn zeroed(&self) -> Box<[u8]> {
        vec![0u8; self.block_size].into_boxed_slice()
    }

    /// Calls `f(block, offset in block, range of the bytes)` for each block piece of `len`
    /// bytes from `pos`.
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

    /// Copies `out.len()` bytes from position `pos`, fetching missing blocks as the view's
    /// class.
    pub(crate) fn read(&mut self, pos: u64, out: &mut [u8]) -> Result<()> {
        self.read_as(pos, out, self.class)
    }

    /// Copies `out.len()` bytes from position `pos`, fetching missing blocks as `class`.
    pub(crate) fn read_as(&mut self, pos: u64, out: &mut [u8], class: IoClass) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let last = self.block_of(pos + out.len() as u64 - 1);
        self.load_as(self.block_of(pos), last, class)?;
        let blocks = &self.blocks;
        self.pieces(pos, out.len(), |block, offset, range| {
            let n = range.len();
            out[range].copy_from_slice(&blocks[&block].0[offset..offset + n]);
        });
        Ok(())
    }

    /// The little-endian `u64` at `pos`.
    pub(crate) fn u64(&mut self, pos: u64) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read(pos, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes `bytes` at `pos` into the view; a block the write does not cover whole is fetched
    /// first as the view's class.
    pub(crate) fn write(&mut self, pos: u64, bytes: &[u8]) -> Result<()> {
        self.write_as(pos, bytes, self.class)
    }

    /// Writes `bytes` at position `pos` into the view (committed by [`NodePages::commit`]); a
    /// block the write does not cover whole is fetched first, counted as `class`.
    pub(crate) fn write_as(&mut self, pos: u64, bytes: &[u8], class: IoClass) -> Result<()> {
        let mut pieces = Vec::new();
        self.pieces(pos, bytes.len(), |block, offset, range| {
            pieces.push((block, offset, range));
        });
        for (block, offset, range) in pieces {
            let n = range.len();
            if n < self.usable {
                self.load_as(block, block, class)?;
            }
            let fresh = self.zeroed();
            let entry = self.blocks.entry(block).or_insert((fresh, false));
            entry.0[offset..offset + n].copy_from_slice(&bytes[range]);
            entry.1 = true;
        }
        Ok(())
    }

    /// Writes a little-endian `u64` at `pos`.
    pub(crate) fn put_u64(&mut self, pos: u64, v: u64) -> Result<()> {
        self.write(pos, &v.to_le_bytes())
    }

    /// Writes the changed blocks, each run of consecutive ones in one request counted as the
    /// view's class; the view keeps them, now clean.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.commit_with(|_, _| {})
    }

    /// [`NodePages::commit`], and returns the blocks it wrote, sealed, by block number (for a
    /// resident copy to follow).
    pub(crate) fn commit_blocks(&mut self) -> Result<Vec<(u64, Box<[u8]>)>> {
        let mut written = Vec::new();
        self.commit_with(|b, bytes| written.push((b, Box::from(bytes))))?;
        Ok(written)
    }

    fn commit_with(&mut self, mut wrote: impl FnMut(u64, &[u8])) -> Result<()> {
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
            self.dev.write_blocks(dirty[i], &mut buf, self.class)?;
            for (k, b) in dirty[i..j].iter().enumerate() {
                let sealed = &buf[k * self.block_size..(k + 1) * self.block_size];
                let entry = self
                    .blocks
                    .get_mut(b)
                    .expect("a dirty block is in the view");
                entry.0.copy_from_slice(sealed);
                entry.1 = false;
                wrote(*b, sealed);
            }
            i = j;
        }
        Ok(())
    }
}

/// Writes bytes one after another from a position, in large sequential requests: the bulk
/// load's writer. The first position must be the start of a fresh block.
pub(crate) struct Appender {
    batch: BlockBatch,
    usable: usize,
    /// The block being filled (a copy; handed to the batch when full).
    current: Vec<u8>,
    offset: usize,
    pos: u64,
}

impl Appender {
    /// An appender whose first byte goes to position `pos`, the start of a block, its
    /// requests counted as `class`.
    pub(crate) fn new(dev: &dyn BlockDevice, pos: u64, class: IoClass) -> Self {
        let usable = dev.payload_size();
        debug_assert!(pos.is_multiple_of(usable as u64));
        Appender {
            batch: BlockBatch::new(dev.block_size(), pos / usable as u64, class),
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
