//! The partitioning pass: every record of a table goes to its bucket's piece of the current
//! *run*, a bucket-ordered stretch of the bucket file written when the arena is full
//! ([`Partitioned`], [`RunWriter`], [`partition`]).

use std::sync::Arc;

use super::sample::{BucketMap, RecordVisitor};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass};
use crate::key::Key;

/// Blocks per write request when a run is written.
pub(super) const WRITE_BATCH_BLOCKS: usize = 64;

/// One run of a partitioned table: records in bucket order from `first_block` on.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) first_block: u64,
    /// `offsets[b]..offsets[b + 1]`: bucket `b`'s records, numbered from the run's start.
    pub(super) offsets: Vec<u64>,
}

impl Run {
    pub(super) fn records(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }
}

/// One table partitioned into buckets: its bucket file (a device) and the runs' directory.
pub(super) struct Partitioned {
    pub(super) device: Arc<dyn BlockDevice>,
    pub(super) record_size: usize,
    pub(super) per_block: usize,
    pub(super) buckets: usize,
    pub(super) runs: Vec<Run>,
    pub(super) records: u64,
}

impl std::fmt::Debug for Partitioned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitioned")
            .field("file", &self.device.name())
            .field("record_size", &self.record_size)
            .field("buckets", &self.buckets)
            .field("runs", &self.runs.len())
            .field("records", &self.records)
            .finish()
    }
}

impl Partitioned {
    /// Records in bucket `b`.
    pub(super) fn bucket_len(&self, b: usize) -> u64 {
        self.runs
            .iter()
            .map(|r| r.offsets[b + 1] - r.offsets[b])
            .sum()
    }

    /// Number of buckets.
    pub(super) fn buckets(&self) -> usize {
        self.buckets
    }

    /// Number of runs written (1 when the table fit the arena).
    pub(super) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Size of a record in bytes.
    pub(super) fn record_size(&self) -> usize {
        self.record_size
    }

    /// Bytes of the directory in memory.
    pub(super) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .runs
                .iter()
                .map(|r| std::mem::size_of::<Run>() + r.offsets.capacity() * 8)
                .sum::<usize>()
    }

    /// Bytes of the bucket file.
    pub(super) fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }
}

/// Writes records packed `per_block` to a block, in requests of [`WRITE_BATCH_BLOCKS`] blocks.
struct RunWriter {
    device: Arc<dyn BlockDevice>,
    buf: AlignedBuf,
    block_size: usize,
    record_size: usize,
    per_block: usize,
    /// Complete blocks in `buf`.
    filled: usize,
    /// Records in the block being filled.
    slot: usize,
    /// Device block of `buf`'s first block.
    next: u64,
}

impl RunWriter {
    fn push(&mut self, rec: &[u8]) -> Result<()> {
        let at = self.filled * self.block_size + self.slot * self.record_size;
        self.buf[at..at + self.record_size].copy_from_slice(rec);
        self.slot += 1;
        if self.slot == self.per_block {
            self.close_block();
            if self.filled == WRITE_BATCH_BLOCKS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Zeroes the unused tail of the block being filled and counts it as complete.
    fn close_block(&mut self) {
        let start = self.filled * self.block_size + self.slot * self.record_size;
        let end = (self.filled + 1) * self.block_size;
        self.buf[start..end].fill(0);
        self.filled += 1;
        self.slot = 0;
    }

    /// Ends the run: its last block is padded, everything is written.
    fn end_run(&mut self) -> Result<()> {
        if self.slot > 0 {
            self.close_block();
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        if self.filled > 0 {
            let len = self.filled * self.block_size;
            self.device
                .write_blocks(self.next, &mut self.buf[..len], IoClass::Data)?;
            self.next += self.filled as u64;
            self.filled = 0;
        }
        Ok(())
    }

    /// Block where the next run starts (after `end_run`).
    fn position(&self) -> u64 {
        self.next + self.filled as u64
    }
}

/// Bytes of memory the partitioning pass needs besides its arena and directories.
pub(super) fn partition_overhead(block_size: usize) -> usize {
    WRITE_BATCH_BLOCKS * block_size
}

/// Bytes the arena needs per buffered record of `record_size` bytes (record, bucket id, and its
/// slot in the counting sort).
pub(super) fn arena_bytes_per_record(record_size: usize) -> usize {
    record_size + 8
}

/// The partitioning pass: every record `scan` yields goes to its bucket under `map`, buffered
/// in an arena of `arena_records` records and written to `device` (created empty by the
/// caller) one run per full arena. Records are `record_size` bytes, key first.
pub(super) fn partition<K: Key>(
    device: Arc<dyn BlockDevice>,
    map: &BucketMap,
    record_size: usize,
    arena_records: usize,
    scan: impl FnOnce(&mut RecordVisitor<'_>) -> Result<()>,
) -> Result<Partitioned> {
    let per_block = device.payload_size() / record_size;
    if per_block == 0 || arena_records == 0 {
        return Err(Error::InvalidParameter {
            name: "memory",
            value: format!("{arena_records} records of {record_size} bytes buffered"),
            expected: "room for at least one record in the partition arena, and records no \
                       larger than a block",
        });
    }
    let block_size = device.block_size();
    let buckets = map.buckets();
    let mut writer = RunWriter {
        device: Arc::clone(&device),
        buf: AlignedBuf::zeroed(WRITE_BATCH_BLOCKS * block_size),
        block_size,
        record_size,
        per_block,
        filled: 0,
        slot: 0,
        next: 0,
    };
    let mut arena: Vec<u8> = Vec::with_capacity(arena_records * record_size);
    let mut ids: Vec<u32> = Vec::with_capacity(arena_records);
    let mut order: Vec<u32> = Vec::new();
    let mut counts = vec![0u64; buckets + 1];
    let mut runs = Vec::new();
    let mut records = 0u64;
    let mut write_run = |arena: &mut Vec<u8>,
                         ids: &mut Vec<u32>,
                         runs: &mut Vec<Run>,
                         writer: &mut RunWriter|
     -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        counts.fill(0);
        for &b in ids.iter() {
            counts[b as usize + 1] += 1;
        }
        for b in 0..buckets {
            counts[b + 1] += counts[b];
        }
        let offsets = counts.clone();
        order.clear();
        order.resize(ids.len(), 0);
        for (i, &b) in ids.iter().enumerate() {
            let at = &mut counts[b as usize];
            order[*at as usize] = i as u32;
            *at += 1;
        }
        let first_block = writer.position();
        for &i in order.iter() {
            let at = i as usize * record_size;
            writer.push(&arena[at..at + record_size])?;
        }
        writer.end_run()?;
        runs.push(Run {
            first_block,
            offsets,
        });
        arena.clear();
        ids.clear();
        Ok(())
    };
    scan(&mut |_, rec| {
        let key = K::read_from(&rec[..K::SIZE]);
        ids.push(map.bucket(key.to_model()) as u32);
        arena.extend_from_slice(&rec[..record_size]);
        records += 1;
        if ids.len() == arena_records {
            write_run(&mut arena, &mut ids, &mut runs, &mut writer)?;
        }
        Ok(())
    })?;
    write_run(&mut arena, &mut ids, &mut runs, &mut writer)?;
    Ok(Partitioned {
        device,
        record_size,
        per_block,
        buckets,
        runs,
        records,
    })
}
