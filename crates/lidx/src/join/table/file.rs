//! An open table: its header, its device, and random access to single records (the blocks of
//! record `i` are computed, not searched: see [`super`]).

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use super::header::{not_a_table, read_header_of, record_block_fingerprint, TableHeader, TableKey};
use super::scan::{Scan, PREFETCH_DEPTH, READ_BLOCKS};
use super::window::WindowReader;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};

/// An open table of `K` keys. Cheap to share between threads (`&Table` is all readers need).
pub struct Table<K> {
    pub(super) device: Arc<dyn BlockDevice>,
    header: TableHeader,
    pub(super) per_block: usize,
    /// The device's block size and the record size, kept here so that hot loops make no
    /// virtual call for them.
    block_size: usize,
    record_size: usize,
    _key: PhantomData<fn() -> K>,
}

impl<K: TableKey> Table<K> {
    /// Opens the table `name`: reads and checks the header (see [`TableHeader::decode`]), that
    /// the file has exactly the blocks the count needs, and that its key size is `K`'s
    /// ([`Error::KeyTypeMismatch`] otherwise).
    pub fn open(storage: &Storage, name: &str) -> Result<Self> {
        let device = storage
            .open(name, false)
            .map_err(|e| not_a_table(storage, name, e))?;
        let header = read_header_of(device.as_ref()).map_err(|e| not_a_table(storage, name, e))?;
        if header.key_size as usize != K::SIZE {
            return Err(Error::KeyTypeMismatch {
                file: name.to_string(),
                expected: K::NAME,
                got: header.key_name().to_string(),
            });
        }
        let per_block = header.records_per_block(device.payload_size());
        Ok(Table {
            block_size: device.block_size(),
            record_size: header.record_size(),
            device,
            header,
            per_block,
            _key: PhantomData,
        })
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.header.count
    }

    /// True when the table has no records.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The header.
    pub fn header(&self) -> TableHeader {
        self.header
    }

    /// Value size in bytes.
    pub fn value_size(&self) -> usize {
        self.header.value_size as usize
    }

    /// Record size in bytes.
    #[inline]
    pub fn record_size(&self) -> usize {
        self.record_size
    }

    /// Records per block.
    pub fn records_per_block(&self) -> usize {
        self.per_block
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        self.device.name()
    }

    /// Bytes of the file.
    pub fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }

    /// A sequential reader over records `range` (clamped to the table), reading
    /// `READ_BLOCKS` blocks per request.
    pub fn scan(&self, range: Range<u64>) -> Result<Scan<'_, K>> {
        Scan::new(self, range, READ_BLOCKS)
    }

    /// Bytes of buffers a [`Table::scan`] over the whole table holds: one request's worth, and
    /// `PREFETCH_DEPTH` more when the table is longer than one request and a background
    /// reader fills them.
    pub fn scan_memory(&self) -> usize {
        let blocks = self.len().div_ceil(self.per_block as u64);
        let chunk = blocks.min(READ_BLOCKS as u64) as usize * self.block_size();
        if blocks > READ_BLOCKS as u64 {
            (PREFETCH_DEPTH + 1) * chunk
        } else {
            chunk
        }
    }

    /// A reader for windows that move forward (paper 000 §5.1-5.2); see [`WindowReader`].
    pub fn window_reader(&self) -> WindowReader<'_, K> {
        WindowReader::new(self)
    }

    /// Every key, in table order (what an index over the table is built from).
    pub fn read_keys(&self) -> Result<Vec<K>> {
        let mut keys = Vec::with_capacity(self.len() as usize);
        let mut scan = self.scan(0..self.len())?;
        while let Some(key) = scan.key() {
            keys.push(key);
            scan.advance()?;
        }
        Ok(keys)
    }

    /// Reads every record block (each block's checksum) and sums the content fingerprint over
    /// them, which must be the header's: what `lidx verify` runs. Returns the records read.
    pub fn verify(&self) -> Result<u64> {
        let blocks = self.len().div_ceil(self.per_block.max(1) as u64);
        let batch = 256u64;
        let mut buf = AlignedBuf::zeroed(batch as usize * self.block_size);
        let (mut fingerprint, mut left) = (0u64, self.len());
        let mut first = 0;
        while first < blocks {
            let count = (blocks - first).min(batch);
            let bytes = &mut buf[..count as usize * self.block_size];
            self.device.read_blocks(1 + first, bytes, IoClass::Data)?;
            for (b, block) in bytes.chunks(self.block_size).enumerate() {
                let here = left.min(self.per_block as u64);
                let records = &block[..here as usize * self.record_size];
                fingerprint =
                    fingerprint.wrapping_add(record_block_fingerprint(first + b as u64, records));
                left -= here;
            }
            first += count;
        }
        if fingerprint != self.header.fingerprint {
            return Err(Error::Corrupt {
                file: self.name().to_string(),
                block: None,
                what: format!(
                    "the records' content fingerprint is {fingerprint:#018x}, the header says \
                     {:#018x}: a block was changed under a valid checksum",
                    self.header.fingerprint
                ),
            });
        }
        Ok(self.len())
    }

    /// The key of record `pos` by reading its block (one request); for partitioning work
    /// between threads, not for hot loops.
    pub fn key_at(&self, pos: u64) -> Result<K> {
        let mut block = AlignedBuf::zeroed(self.device.block_size());
        let (b, slot) = self.locate(pos);
        self.device.read_blocks(1 + b, &mut block, IoClass::Data)?;
        Ok(K::read_from(&block[slot * self.record_size()..]))
    }

    /// First position whose key is `>= key` (the table must be sorted), by a binary search
    /// over blocks that reads about `log2(blocks)` single blocks. For splitting the inner
    /// table of a merge between threads.
    pub fn lower_bound_on_disk(&self, key: K) -> Result<u64> {
        // Find the first block whose first key is >= key, then search the block before it.
        let blocks = self.len().div_ceil(self.per_block as u64);
        let (mut lo, mut hi) = (0u64, blocks);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid * self.per_block as u64)?.key_lt(&key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return Ok(0);
        }
        let start = (lo - 1) * self.per_block as u64;
        let end = (lo * self.per_block as u64).min(self.len());
        let mut scan = self.scan(start..end)?;
        while let Some(k) = scan.key() {
            if !k.key_lt(&key) {
                return Ok(scan.position());
            }
            scan.advance()?;
        }
        Ok(end)
    }

    /// Record block and slot of position `pos`.
    #[inline]
    pub(super) fn locate(&self, pos: u64) -> (u64, usize) {
        let per = self.per_block as u64;
        (pos / per, (pos % per) as usize)
    }

    #[inline]
    pub(super) fn block_size(&self) -> usize {
        self.block_size
    }
}
