//! Consecutive blocks written in large requests.
//!
//! A file laid out as one ascending run of blocks (a B+-tree build, a static learned file's
//! data, a byte table's records) is written by filling the blocks of one buffer and writing
//! [`BATCH_BLOCKS`] of them per request. The buffer is an [`AlignedBuf`], so a file device
//! opened with `O_DIRECT` writes it as it is: from an unaligned `Vec` the device copies each
//! request into a fresh bounce buffer, and the page faults of those copies were a sixth of a
//! byte-table merge's time.
//!
//! The buffer grows with the blocks handed out, from [`FIRST_BLOCKS`] to [`BATCH_BLOCKS`],
//! doubling: a writer of a small file (a store's flush of a small memtable, a tiny index)
//! zeroes and faults in about what it writes, not a whole 1 MiB batch. A full-size buffer for
//! every writer put a quarter of the samples of a test of many small merges in `memset`
//! (session 62, when each merge wrote a few blocks); in that test as it is now (larger
//! budgets), `memset` went from 0.68% to 0.12% of `perf`'s samples with the growing buffer
//! (session 64, Zen 5 VM), and its time (2.2-2.7 s) did not move beyond the noise.

use crate::error::Result;
use crate::io::{AlignedBuf, BlockDevice, IoClass};

/// Blocks per write request (1 MiB requests with 4 KiB blocks).
pub(crate) const BATCH_BLOCKS: usize = 256;

/// Blocks of a batch's first buffer (32 KiB with 4 KiB blocks); it doubles up to
/// [`BATCH_BLOCKS`].
const FIRST_BLOCKS: usize = 8;

/// A batch of consecutive blocks being filled; the device is passed to each call, so a writer
/// can own both.
pub(crate) struct BlockBatch {
    buf: AlignedBuf,
    block_size: usize,
    /// Blocks of `buf` handed out and not written yet.
    filled: usize,
    /// The device block the batch's first block goes to.
    next: u64,
    /// The first block the batch was created at.
    first: u64,
    class: IoClass,
}

impl BlockBatch {
    /// A batch whose first block goes to device block `first`, its writes counted as `class`.
    pub(crate) fn new(block_size: usize, first: u64, class: IoClass) -> Self {
        BlockBatch {
            buf: AlignedBuf::zeroed(block_size * FIRST_BLOCKS),
            block_size,
            filled: 0,
            next: first,
            first,
            class,
        }
    }

    /// The next block to fill (the whole block, trailer included), zeroed; a full batch is
    /// written first.
    pub(crate) fn block(&mut self, device: &dyn BlockDevice) -> Result<&mut [u8]> {
        if self.filled == BATCH_BLOCKS {
            self.flush(device)?;
        }
        let at = self.filled * self.block_size;
        if at == self.buf.len() {
            self.grow();
        }
        self.filled += 1;
        let block = &mut self.buf[at..at + self.block_size];
        block.fill(0);
        Ok(block)
    }

    /// Doubles the buffer (up to [`BATCH_BLOCKS`] blocks), keeping the blocks handed out.
    #[cold]
    fn grow(&mut self) {
        let blocks = (self.buf.len() / self.block_size * 2).clamp(FIRST_BLOCKS, BATCH_BLOCKS);
        let mut bigger = AlignedBuf::zeroed(blocks * self.block_size);
        let used = self.filled * self.block_size;
        bigger[..used].copy_from_slice(&self.buf[..used]);
        self.buf = bigger;
    }

    /// Writes the blocks handed out and not written yet, in one request.
    pub(crate) fn flush(&mut self, device: &dyn BlockDevice) -> Result<()> {
        if self.filled > 0 {
            let len = self.filled * self.block_size;
            device.write_blocks(self.next, &mut self.buf[..len], self.class)?;
            self.next += self.filled as u64;
            self.filled = 0;
        }
        Ok(())
    }

    /// The device block the next [`Self::block`] goes to.
    pub(crate) fn next_block(&self) -> u64 {
        self.next + self.filled as u64
    }

    /// Blocks handed out so far, written or not.
    pub(crate) fn blocks(&self) -> u64 {
        self.next - self.first + self.filled as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{SimDevice, SimProfile};

    #[test]
    fn blocks_land_in_order_across_batches() {
        let device = SimDevice::new("t", 4096, SimProfile::named("nvme").unwrap()).unwrap();
        let mut batch = BlockBatch::new(4096, 1, IoClass::Data);
        assert_eq!(batch.buf.len(), 4096 * FIRST_BLOCKS);
        let n = BATCH_BLOCKS + 3;
        for i in 0..n {
            batch.block(&device).unwrap()[0] = i as u8;
        }
        assert_eq!(batch.blocks(), n as u64);
        // The buffer grew to a whole batch, and no further.
        assert_eq!(batch.buf.len(), 4096 * BATCH_BLOCKS);
        batch.flush(&device).unwrap();
        assert_eq!(device.len_blocks(), 1 + n as u64);
        let mut back = AlignedBuf::zeroed(4096);
        for i in [
            0,
            FIRST_BLOCKS - 1,
            FIRST_BLOCKS,
            2 * FIRST_BLOCKS,
            BATCH_BLOCKS - 1,
            BATCH_BLOCKS,
            n - 1,
        ] {
            device
                .read_blocks(1 + i as u64, &mut back, IoClass::Data)
                .unwrap();
            assert_eq!(back[0], i as u8);
        }
    }
}
