//! Reading the buckets of a partitioned table: one forward read-ahead window per run
//! ([`BucketReader`]), so buckets visited in order read every run sequentially.

use super::partition::Partitioned;
use crate::error::Result;
use crate::io::{AlignedBuf, IoClass};

/// Largest read-ahead window per run, in blocks.
pub(super) const MAX_WINDOW_BLOCKS: usize = 64;

/// A read-ahead window over one run.
struct Window {
    buf: AlignedBuf,
    first: u64,
    blocks: usize,
}

/// Reads the buckets of a [`Partitioned`] table: one read-ahead window per run, each read
/// forward from the first block a bucket needs, up to `window_blocks` blocks per request.
pub(super) struct BucketReader<'p> {
    pub(super) part: &'p Partitioned,
    windows: Vec<Window>,
    window_blocks: usize,
}

impl<'p> BucketReader<'p> {
    /// A reader of `part` with windows of `window_blocks` blocks (1 to
    /// [`MAX_WINDOW_BLOCKS`]).
    pub(super) fn new(part: &'p Partitioned, window_blocks: usize) -> Self {
        let window_blocks = window_blocks.clamp(1, MAX_WINDOW_BLOCKS);
        let block_size = part.device.block_size();
        let windows = part
            .runs
            .iter()
            .map(|_| Window {
                buf: AlignedBuf::zeroed(window_blocks * block_size),
                first: 0,
                blocks: 0,
            })
            .collect();
        BucketReader {
            part,
            windows,
            window_blocks,
        }
    }

    /// Bytes of memory the windows take for `runs` runs.
    pub(super) fn memory_bytes_for(runs: usize, window_blocks: usize, block_size: usize) -> usize {
        runs * window_blocks.clamp(1, MAX_WINDOW_BLOCKS) * block_size
    }

    /// Calls `f` on every record of bucket `b`, run by run.
    pub(super) fn for_each(
        &mut self,
        b: usize,
        mut f: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let part = self.part;
        let block_size = part.device.block_size();
        let rs = part.record_size;
        let pb = part.per_block as u64;
        for (run, window) in part.runs.iter().zip(self.windows.iter_mut()) {
            let end_block = run.first_block + run.records().div_ceil(pb);
            for idx in run.offsets[b]..run.offsets[b + 1] {
                let block = run.first_block + idx / pb;
                if block < window.first || block >= window.first + window.blocks as u64 {
                    let blocks = (end_block - block).min(self.window_blocks as u64) as usize;
                    part.device.read_blocks(
                        block,
                        &mut window.buf[..blocks * block_size],
                        IoClass::Data,
                    )?;
                    window.first = block;
                    window.blocks = blocks;
                }
                let at = (block - window.first) as usize * block_size + (idx % pb) as usize * rs;
                f(&window.buf[at..at + rs])?;
            }
        }
        Ok(())
    }

    /// Appends every record of bucket `b` to `out`.
    pub(super) fn load(&mut self, b: usize, out: &mut Vec<u8>) -> Result<()> {
        self.for_each(b, |rec| {
            out.extend_from_slice(rec);
            Ok(())
        })
    }
}
