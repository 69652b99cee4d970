//! The blocks one operation touches, and the sequential writer of a build.
//!
//! [`Pages`] is an operation's view of one file as bytes: a node is read and written by byte
//! position ([`super::addr`]) whatever blocks it spans; each block is fetched from the device
//! at most once per operation (paper 003 §6: "we check whether the last block fetched can be
//! reused"; we keep every block the operation fetched, which is the same for a lookup and
//! spares a shift across a block boundary its re-reads), with the [`IoClass`] of the file,
//! so the device's counters split inner and leaf blocks as paper 003 Table 4. Writes change
//! the blocks in the view; [`Pages::commit`] writes the changed ones, runs of consecutive
//! blocks in one request each. A block that a write covers whole, or that lies past the end of
//! the file, is not read first.
//!
//! When the inner-node file is kept in memory (paper 003 §6.2), its view reads from the
//! resident copy instead of the device and [`Pages::commit`] hands back what it wrote so the
//! copy can follow.
//!
//! [`Appender`] writes a file's nodes one after another from block 1 in large requests (the
//! bulk load).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::disk::block_batch::{BlockBatch, BATCH_BLOCKS};
use crate::error::Result;
use crate::io::{BlockDevice, IoClass};

/// An operation's blocks of one file. See the module docs.
pub(crate) struct Pages<'a> {
    dev: Arc<dyn BlockDevice>,
    class: IoClass,
    resident: Option<&'a [Box<[u8]>]>,
    usable: usize,
    block_size: usize,
    blocks: BTreeMap<u64, (Box<[u8]>, bool)>,
}

impl<'a> Pages<'a> {
    /// A view of `dev`, its reads counted as `class`, served from `resident` (whole blocks,
    /// index = block number) when given.
    pub(crate) fn new(
        dev: Arc<dyn BlockDevice>,
        class: IoClass,
        resident: Option<&'a [Box<[u8]>]>,
    ) -> Self {
        Pages {
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

    /// Fetches blocks `first ..= last` not in the view yet: consecutive missing blocks in one
    /// request, blocks past the end of the file as zeros.
    pub(crate) fn load(&mut self, first: u64, last: u64) -> Result<()> {
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
                self.blocks
                    .insert(b, (vec![0u8; self.block_size].into_boxed_slice(), false));
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
            let mut buf = vec![0u8; count * self.block_size];
            self.dev.read_blocks(b, &mut buf, self.class)?;
            for (i, chunk) in buf.chunks_exact(self.block_size).enumerate() {
                self.blocks.insert(b + i as u64, (chunk.into(), false));
            }
            b = run + 1;
        }
        Ok(())
    }

    /// Copies `out.len()` bytes from position `pos`.
    pub(crate) fn read(&mut self, pos: u64, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let end = pos + out.len() as u64 - 1;
        self.load(self.block_of(pos), self.block_of(end))?;
        let mut done = 0;
        while done < out.len() {
            let at = pos + done as u64;
            let (block, offset) = (self.block_of(at), (at % self.usable as u64) as usize);
            let n = (self.usable - offset).min(out.len() - done);
            let bytes = &self.blocks[&block].0;
            out[done..done + n].copy_from_slice(&bytes[offset..offset + n]);
            done += n;
        }
        Ok(())
    }

    /// The little-endian `u64` at `pos`.
    pub(crate) fn u64(&mut self, pos: u64) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read(pos, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes `data` at `pos` in the view.
    pub(crate) fn write(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let mut done = 0;
        while done < data.len() {
            let at = pos + done as u64;
            let (block, offset) = (self.block_of(at), (at % self.usable as u64) as usize);
            let n = (self.usable - offset).min(data.len() - done);
            if n < self.usable {
                self.load(block, block)?;
            }
            let entry = self
                .blocks
                .entry(block)
                .or_insert_with(|| (vec![0u8; self.block_size].into_boxed_slice(), false));
            entry.0[offset..offset + n].copy_from_slice(&data[done..done + n]);
            entry.1 = true;
            done += n;
        }
        Ok(())
    }

    /// Writes a little-endian `u64` at `pos`.
    pub(crate) fn put_u64(&mut self, pos: u64, v: u64) -> Result<()> {
        self.write(pos, &v.to_le_bytes())
    }

    /// Writes the changed blocks (a request per run of consecutive ones) and returns them,
    /// sealed, by block number; the view keeps them, now clean.
    pub(crate) fn commit(&mut self) -> Result<Vec<(u64, Box<[u8]>)>> {
        let dirty: Vec<u64> = self
            .blocks
            .iter()
            .filter(|(_, b)| b.1)
            .map(|(&n, _)| n)
            .collect();
        let mut written = Vec::with_capacity(dirty.len());
        let mut i = 0;
        while i < dirty.len() {
            let mut j = i;
            while j + 1 < dirty.len() && dirty[j + 1] == dirty[j] + 1 {
                j += 1;
            }
            let mut buf = Vec::with_capacity((j - i + 1) * self.block_size);
            for b in &dirty[i..=j] {
                buf.extend_from_slice(&self.blocks[b].0);
            }
            self.dev.write_blocks(dirty[i], &mut buf, self.class)?;
            for (k, chunk) in buf.chunks_exact(self.block_size).enumerate() {
                let b = dirty[i + k];
                let entry = self
                    .blocks
                    .get_mut(&b)
                    .expect("a dirty block is in the view");
                entry.0.copy_from_slice(chunk);
                entry.1 = false;
                written.push((b, Box::<[u8]>::from(chunk)));
            }
            i = j + 1;
        }
        Ok(written)
    }
}

/// Writes a file's usable bytes from block 1 on, in [`BATCH_BLOCKS`]-block requests.
pub(crate) struct Appender {
    batch: BlockBatch,
    usable: usize,
    pending: Vec<u8>,
    /// Bytes appended so far, from the start of block 1.
    pub(crate) written: u64,
}

impl Appender {
    pub(crate) fn new(dev: &dyn BlockDevice, class: IoClass) -> Self {
        Appender {
            batch: BlockBatch::new(dev.block_size(), 1, class),
            usable: dev.payload_size(),
            pending: Vec::new(),
            written: 0,
        }
    }

    /// Appends `bytes`.
    pub(crate) fn push(&mut self, dev: &dyn BlockDevice, bytes: &[u8]) -> Result<()> {
        self.pending.extend_from_slice(bytes);
        self.written += bytes.len() as u64;
        if self.pending.len() >= BATCH_BLOCKS * self.usable {
            self.emit(dev, false)?;
        }
        Ok(())
    }

    fn emit(&mut self, dev: &dyn BlockDevice, last: bool) -> Result<()> {
        let whole = self.pending.len() / self.usable * self.usable;
        for chunk in self.pending[..whole].chunks_exact(self.usable) {
            self.batch.block(dev)?[..self.usable].copy_from_slice(chunk);
        }
        self.pending.drain(..whole);
        if last && !self.pending.is_empty() {
            let n = self.pending.len();
            self.batch.block(dev)?[..n].copy_from_slice(&self.pending);
            self.pending.clear();
        }
        Ok(())
    }

    /// Writes what is left (the last block zero-padded).
    pub(crate) fn finish(mut self, dev: &dyn BlockDevice) -> Result<()> {
        self.emit(dev, true)?;
        self.batch.flush(dev)
    }
}
