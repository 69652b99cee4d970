//! An open table: its header, its device, and random access to single records (the blocks of
//! record `i` are computed, not searched: see [`super`]).
//!
//! The readers built on a table live with their own code, below it: `scan` adds
//! [`Table::scan`] and what reads the table in order, `window` adds [`Table::window_reader`].
//! This file imports neither.

use std::marker::PhantomData;
use std::sync::Arc;

use super::header::{not_a_table, read_header_of, record_block_fingerprint, TableHeader, TableKey};
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

    /// A hint that the records at positions `lo ..= hi` (a window, as
    /// [`super::WindowReader::lower_bound`] reads it) will be read soon: their blocks are read
    /// in the background where the device reads through the OS page cache
    /// ([`BlockDevice::will_need`]). Positions past the last record are left out.
    pub fn will_need(&self, lo: u64, hi: u64) {
        let Some(last) = self.len().checked_sub(1) else {
            return;
        };
        let (lo, hi) = (lo.min(last), hi.min(last));
        if lo <= hi {
            let (first, _) = self.locate(lo);
            let (end, _) = self.locate(hi);
            self.device.will_need(1 + first, end - first + 1);
        }
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
