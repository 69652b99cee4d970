//! I/O accounting: what every device and cache counts, exactly.
//!
//! A device owns an [`IoCounters`] (atomics, so readers on several threads share it) and records
//! every request it serves: requests, blocks and bytes each way, whether the request started
//! where the previous one of the same direction ended (sequential) or not (random), and the
//! [`IoClass`] of the blocks read and written, so paper 003 Table 4's split of fetched blocks
//! into inner and leaf (and the same split of written ones) comes from the device itself, not from the index's own bookkeeping. A [`crate::io::PageCache`]
//! counts hits and misses in blocks; only misses reach the device. Simulated devices add the
//! modeled latency and transfer time of each request.
//!
//! [`IoStats`] is a plain snapshot. Take one before and after an operation and subtract to get
//! the operation's own numbers ("per operation"); the counters themselves are the totals.

use std::ops::{Add, Sub};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a block holds, for accounting. Structures pass it with every read and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoClass {
    /// File headers, manifests, superblocks.
    Header = 0,
    /// Inner (non-leaf) nodes of a tree.
    Inner = 1,
    /// Leaf nodes, or the sorted data blocks a learned index points into.
    Leaf = 2,
    /// Serialized models read at open.
    Model = 3,
    /// Table records and other bulk data streamed in order.
    Data = 4,
    /// Write-ahead log records.
    Log = 5,
}

/// Number of [`IoClass`] values.
pub(crate) const IO_CLASSES: usize = 6;

impl IoClass {
    /// Every class, in index order.
    pub const ALL: [IoClass; IO_CLASSES] = [
        IoClass::Header,
        IoClass::Inner,
        IoClass::Leaf,
        IoClass::Model,
        IoClass::Data,
        IoClass::Log,
    ];

    /// Lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            IoClass::Header => "header",
            IoClass::Inner => "inner",
            IoClass::Leaf => "leaf",
            IoClass::Model => "model",
            IoClass::Data => "data",
            IoClass::Log => "log",
        }
    }
}

/// A snapshot of I/O counters. Subtract two snapshots for the I/O between them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Read requests served by the device.
    pub read_requests: u64,
    /// Read requests that started where the previous read ended.
    pub sequential_reads: u64,
    /// Blocks read from the device.
    pub read_blocks: u64,
    /// Bytes read from the device.
    pub read_bytes: u64,
    /// Write requests.
    pub write_requests: u64,
    /// Write requests that started where the previous write ended.
    pub sequential_writes: u64,
    /// Blocks written.
    pub write_blocks: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// `sync` calls.
    pub syncs: u64,
    /// Read requests per [`IoClass`] (index = class as usize).
    pub class_read_requests: [u64; IO_CLASSES],
    /// Blocks read per [`IoClass`].
    pub class_read_blocks: [u64; IO_CLASSES],
    /// Blocks written per [`IoClass`].
    pub class_write_blocks: [u64; IO_CLASSES],
    /// Blocks a page cache answered without the device.
    pub cache_hits: u64,
    /// Blocks a page cache had to fetch from the device.
    pub cache_misses: u64,
    /// Blocks handed to the OS as soon to be read ([`crate::io::BlockDevice::will_need`]);
    /// the reads that follow are counted as reads.
    pub hinted_blocks: u64,
    /// Simulated devices: modeled per-request latency, summed over requests, in ns.
    pub modeled_latency_ns: u64,
    /// Simulated devices: modeled transfer time (bytes / bandwidth), summed, in ns.
    pub modeled_transfer_ns: u64,
}

impl IoStats {
    /// Read requests that did not continue the previous read.
    pub fn random_reads(&self) -> u64 {
        self.read_requests - self.sequential_reads
    }

    /// Write requests that did not continue the previous write.
    pub fn random_writes(&self) -> u64 {
        self.write_requests - self.sequential_writes
    }

    /// Blocks read of one class.
    pub fn blocks_read(&self, class: IoClass) -> u64 {
        self.class_read_blocks[class as usize]
    }

    /// Blocks written of one class.
    pub fn blocks_written(&self, class: IoClass) -> u64 {
        self.class_write_blocks[class as usize]
    }

    /// Modeled device time of a single thread issuing these requests one after another, in ns:
    /// each request's latency plus its transfer time (the affine model of paper 000 §3).
    pub fn modeled_serial_ns(&self) -> u64 {
        self.modeled_latency_ns + self.modeled_transfer_ns
    }
}

fn combine(a: IoStats, b: IoStats, op: fn(u64, u64) -> u64) -> IoStats {
    let arr = |x: [u64; IO_CLASSES], y: [u64; IO_CLASSES]| std::array::from_fn(|i| op(x[i], y[i]));
    IoStats {
        read_requests: op(a.read_requests, b.read_requests),
        sequential_reads: op(a.sequential_reads, b.sequential_reads),
        read_blocks: op(a.read_blocks, b.read_blocks),
        read_bytes: op(a.read_bytes, b.read_bytes),
        write_requests: op(a.write_requests, b.write_requests),
        sequential_writes: op(a.sequential_writes, b.sequential_writes),
        write_blocks: op(a.write_blocks, b.write_blocks),
        write_bytes: op(a.write_bytes, b.write_bytes),
        syncs: op(a.syncs, b.syncs),
        class_read_requests: arr(a.class_read_requests, b.class_read_requests),
        class_read_blocks: arr(a.class_read_blocks, b.class_read_blocks),
        class_write_blocks: arr(a.class_write_blocks, b.class_write_blocks),
        cache_hits: op(a.cache_hits, b.cache_hits),
        cache_misses: op(a.cache_misses, b.cache_misses),
        hinted_blocks: op(a.hinted_blocks, b.hinted_blocks),
        modeled_latency_ns: op(a.modeled_latency_ns, b.modeled_latency_ns),
        modeled_transfer_ns: op(a.modeled_transfer_ns, b.modeled_transfer_ns),
    }
}

impl Add for IoStats {
    type Output = IoStats;
    fn add(self, other: IoStats) -> IoStats {
        combine(self, other, u64::wrapping_add)
    }
}

impl Sub for IoStats {
    type Output = IoStats;
    /// The I/O between two snapshots of the same counters (`later - earlier`).
    fn sub(self, other: IoStats) -> IoStats {
        combine(self, other, u64::wrapping_sub)
    }
}

/// Live counters a device updates on every request; [`IoCounters::snapshot`] reads them.
#[derive(Debug, Default)]
pub struct IoCounters {
    read_requests: AtomicU64,
    sequential_reads: AtomicU64,
    read_blocks: AtomicU64,
    read_bytes: AtomicU64,
    write_requests: AtomicU64,
    sequential_writes: AtomicU64,
    write_blocks: AtomicU64,
    write_bytes: AtomicU64,
    syncs: AtomicU64,
    class_read_requests: [AtomicU64; IO_CLASSES],
    class_read_blocks: [AtomicU64; IO_CLASSES],
    class_write_blocks: [AtomicU64; IO_CLASSES],
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
    hinted_blocks: AtomicU64,
    modeled_latency_ns: AtomicU64,
    modeled_transfer_ns: AtomicU64,
    next_read: AtomicU64,
    next_write: AtomicU64,
}

impl IoCounters {
    /// Records a read request of `blocks` blocks of `block_size` bytes starting at `first`.
    pub fn record_read(&self, first: u64, blocks: u64, block_size: usize, class: IoClass) {
        let end = first + blocks;
        if self.next_read.swap(end, Relaxed) == first && first != 0 {
            self.sequential_reads.fetch_add(1, Relaxed);
        }
        self.read_requests.fetch_add(1, Relaxed);
        self.read_blocks.fetch_add(blocks, Relaxed);
        self.read_bytes
            .fetch_add(blocks * block_size as u64, Relaxed);
        self.class_read_requests[class as usize].fetch_add(1, Relaxed);
        self.class_read_blocks[class as usize].fetch_add(blocks, Relaxed);
    }

    /// Records a write request of `blocks` blocks of `block_size` bytes of `class` starting at
    /// `first`.
    pub fn record_write(&self, first: u64, blocks: u64, block_size: usize, class: IoClass) {
        let end = first + blocks;
        if self.next_write.swap(end, Relaxed) == first && first != 0 {
            self.sequential_writes.fetch_add(1, Relaxed);
        }
        self.write_requests.fetch_add(1, Relaxed);
        self.write_blocks.fetch_add(blocks, Relaxed);
        self.write_bytes
            .fetch_add(blocks * block_size as u64, Relaxed);
        self.class_write_blocks[class as usize].fetch_add(blocks, Relaxed);
    }

    /// Records a `sync`.
    pub fn record_sync(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }

    /// Records blocks a cache answered (`hits`) and fetched (`misses`).
    pub fn record_cache(&self, hits: u64, misses: u64) {
        self.cache_hits.fetch_add(hits, Relaxed);
        self.cache_misses.fetch_add(misses, Relaxed);
    }

    /// Records `blocks` blocks hinted as soon to be read.
    pub fn record_hint(&self, blocks: u64) {
        self.hinted_blocks.fetch_add(blocks, Relaxed);
    }

    /// Records the modeled cost of one request on a simulated device.
    pub fn record_model(&self, latency_ns: u64, transfer_ns: u64) {
        self.modeled_latency_ns.fetch_add(latency_ns, Relaxed);
        self.modeled_transfer_ns.fetch_add(transfer_ns, Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> IoStats {
        let arr = |x: &[AtomicU64; IO_CLASSES]| std::array::from_fn(|i| x[i].load(Relaxed));
        IoStats {
            read_requests: self.read_requests.load(Relaxed),
            sequential_reads: self.sequential_reads.load(Relaxed),
            read_blocks: self.read_blocks.load(Relaxed),
            read_bytes: self.read_bytes.load(Relaxed),
            write_requests: self.write_requests.load(Relaxed),
            sequential_writes: self.sequential_writes.load(Relaxed),
            write_blocks: self.write_blocks.load(Relaxed),
            write_bytes: self.write_bytes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            class_read_requests: arr(&self.class_read_requests),
            class_read_blocks: arr(&self.class_read_blocks),
            class_write_blocks: arr(&self.class_write_blocks),
            cache_hits: self.cache_hits.load(Relaxed),
            cache_misses: self.cache_misses.load(Relaxed),
            hinted_blocks: self.hinted_blocks.load(Relaxed),
            modeled_latency_ns: self.modeled_latency_ns.load(Relaxed),
            modeled_transfer_ns: self.modeled_transfer_ns.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sequential_random_and_classes() {
        let c = IoCounters::default();
        let before = c.snapshot();
        c.record_read(10, 2, 4096, IoClass::Leaf);
        c.record_read(12, 1, 4096, IoClass::Leaf);
        c.record_read(3, 1, 4096, IoClass::Inner);
        c.record_write(0, 4, 4096, IoClass::Leaf);
        c.record_write(4, 4, 4096, IoClass::Inner);
        let d = c.snapshot() - before;
        assert_eq!(d.read_requests, 3);
        assert_eq!(d.sequential_reads, 1);
        assert_eq!(d.random_reads(), 2);
        assert_eq!(d.read_blocks, 4);
        assert_eq!(d.read_bytes, 4 * 4096);
        assert_eq!(d.blocks_read(IoClass::Leaf), 3);
        assert_eq!(d.blocks_read(IoClass::Inner), 1);
        assert_eq!(d.write_blocks, 8);
        assert_eq!(d.blocks_written(IoClass::Leaf), 4);
        assert_eq!(d.blocks_written(IoClass::Inner), 4);
        assert_eq!(d.sequential_writes, 1);
        assert_eq!((d + d).read_blocks, 8);
        c.record_hint(3);
        assert_eq!((c.snapshot() - before).hinted_blocks, 3);
    }
}
