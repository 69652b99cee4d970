//! Writing a byte table: records streamed into data blocks as they come, written 256 blocks
//! per request from an aligned buffer ([`crate::disk::block_batch`]), then the separators and
//! the header.
//!
//! A block keeps room for its point index ([`super::slots`]) while the index would take at
//! most a tenth of it: a record that would eat into that room starts the next block instead,
//! as one that does not fit the block's rest does. A block whose records outgrow the limit,
//! whose last record runs on into the next block or fills it exactly, or that holds a record
//! too large for a block with an index, has none. The room kept can cost up to a record's
//! length a block (values of a few hundred bytes); it is not measured.

use std::sync::Arc;

use crate::disk::block_batch::BlockBatch;
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::cmp_bytes;
use crate::mem::string_index::escape;

use super::filter::{max_words, KeyFilter, MAX_BITS_PER_KEY};
use super::format::{
    shortest_separator, stream_cap, ByteTableHeader, ByteTableKind, ByteTableParams, FilterShape,
    BLOCK_PREFIX, BYTE_TABLE_VERSION, NO_START,
};
use super::slots;
use super::table::ByteTable;
use crate::codec::{put_varint, varint_len};

/// Largest block size a byte table takes: in-block offsets are 16-bit.
const MAX_BLOCK_SIZE: usize = 1 << 16;

/// Writes a byte table from records given in strictly increasing key order.
pub struct ByteTableWriter {
    device: Arc<dyn BlockDevice>,
    params: ByteTableParams,
    block_size: usize,
    /// Record-stream bytes per data block.
    cap: usize,
    /// Completed data blocks, written a batch at a time.
    batch: BlockBatch,
    /// The data block being filled: its payload so far (prefix included).
    block: Vec<u8>,
    /// The in-block offset and key hash of each record that starts and ends in `block`.
    slots: Vec<(u16, u64)>,
    /// False once `block` can have no point index (a record ran on out of it, or its records
    /// outgrew the index's limit).
    indexing: bool,
    stream_bytes: u64,
    records: u64,
    key_bytes: u64,
    value_bytes: u64,
    /// Shortest and longest key so far.
    key_lens: (u32, u32),
    /// The last key added: where it lies in `block` when it is there whole (not copied per
    /// record, a merge adds every record of a table), else in `previous`.
    previous_in_block: Option<(usize, usize)>,
    previous: Vec<u8>,
    separators: Vec<u8>,
    sep_offsets: Vec<u32>,
    positions: Vec<u64>,
    scratch: Vec<u8>,
    owner: FileOwner,
    kind: ByteTableKind,
    filter: Option<KeyFilter>,
}

impl ByteTableWriter {
    /// Creates (or truncates) `name` in `storage`.
    pub fn create(storage: &Storage, name: &str, params: ByteTableParams) -> Result<Self> {
        if params.model.eps == 0 || params.model.threshold == 0 {
            return Err(Error::InvalidParameter {
                name: "byte table model",
                value: format!("{:?}", params.model),
                expected: "eps and threshold of at least 1",
            });
        }
        if storage.block_size() > MAX_BLOCK_SIZE {
            return Err(Error::InvalidParameter {
                name: "block size",
                value: storage.block_size().to_string(),
                expected: "at most 65536 bytes for a byte table (its offsets are 16-bit)",
            });
        }
        let device = storage.create(name)?;
        let block_size = device.block_size();
        let cap = stream_cap(block_size, BYTE_TABLE_VERSION);
        Ok(ByteTableWriter {
            device,
            params,
            block_size,
            cap,
            batch: BlockBatch::new(block_size, 1, IoClass::Data),
            block: new_block(),
            slots: Vec::new(),
            indexing: true,
            stream_bytes: 0,
            records: 0,
            key_bytes: 0,
            value_bytes: 0,
            key_lens: (u32::MAX, 0),
            previous_in_block: None,
            previous: Vec::new(),
            separators: Vec::new(),
            sep_offsets: vec![0],
            positions: Vec::new(),
            scratch: Vec::new(),
            owner: FileOwner::NONE,
            kind: ByteTableKind::Table,
            filter: None,
        })
    }

    /// Records `owner` in the table's header: the store and generation it belongs to.
    pub fn owned_by(mut self, owner: FileOwner) -> Self {
        self.owner = owner;
        self
    }

    /// Writes the table as `kind` (a plain table by default).
    pub fn of_kind(mut self, kind: ByteTableKind) -> Self {
        self.kind = kind;
        self
    }

    /// Gives the table a key filter of `bits_per_key` bits for each of up to `records` keys
    /// (more keys fill it past its false-positive rate, never to a wrong answer); 0 bits or
    /// 0 records is no filter. [`Error::InvalidParameter`] above 64 bits a key.
    pub fn with_filter(mut self, records: u64, bits_per_key: u32) -> Result<Self> {
        if bits_per_key > MAX_BITS_PER_KEY {
            return Err(Error::InvalidParameter {
                name: "filter bits per key",
                value: bits_per_key.to_string(),
                expected: "from 0 (no filter) to 64",
            });
        }
        self.filter =
            (bits_per_key > 0 && records > 0).then(|| KeyFilter::new(records, bits_per_key));
        Ok(self)
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends a record. Keys must be non-empty and strictly increasing (byte order):
    /// [`Error::OutOfOrder`] otherwise.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.is_empty() {
            return Err(Error::SizeLimit {
                what: "key",
                len: 0,
                min: 1,
                max: u32::MAX as usize,
            });
        }
        let previous = last_key(&self.block, &self.previous, self.previous_in_block);
        if self.records > 0 && !cmp_bytes(key, previous).is_gt() {
            return Err(Error::OutOfOrder {
                index: self.records as usize,
                previous: escape(previous),
                got: escape(key),
            });
        }
        let (klen, vlen) = (key.len() as u64, value.len() as u64);
        let len = varint_len(klen) + varint_len(vlen) + key.len() + value.len();
        let room = self.room();
        let fresh = self.cap - slots::index_bytes(1);
        let indexed_room = self
            .index_reserve()
            .map_or(room, |r| room.saturating_sub(r));
        if room < self.cap && len > indexed_room && (len <= fresh || len > room && len <= self.cap)
        {
            // It fits a block (with its index if it can have one) but not this one's rest:
            // it starts the next, the rest padding.
            self.stream_bytes += room as u64;
            self.complete_block()?;
        }
        let hash = slots::key_hash(key);
        if self
            .index_reserve()
            .is_none_or(|reserve| len + reserve > self.room())
        {
            self.indexing = false;
        }
        let previous = last_key(&self.block, &self.previous, self.previous_in_block);
        if u16::from_le_bytes([self.block[0], self.block[1]]) == NO_START {
            // The record starts in the block being filled, which has no start yet.
            let sep = if self.records == 0 {
                key
            } else {
                shortest_separator(previous, key)
            };
            self.separators.extend_from_slice(sep);
            self.sep_offsets.push(self.separators.len() as u32);
            self.positions.push(self.stream_bytes);
            let at = (self.block.len() - BLOCK_PREFIX) as u16;
            self.block[..BLOCK_PREFIX].copy_from_slice(&at.to_le_bytes());
        }
        if len < self.room() {
            // The usual case: the record fits in the block with room to spare. Its lengths go
            // straight into the block (written to a buffer and copied, the copy read bytes
            // just stored one by one: a stall that was two fifths of a merge's time).
            if self.indexing {
                let at = (self.block.len() - BLOCK_PREFIX) as u16;
                self.slots.push((at, hash));
            }
            put_varint(&mut self.block, klen);
            put_varint(&mut self.block, vlen);
            self.previous_in_block = Some((self.block.len(), key.len()));
            append(&mut self.block, key);
            append(&mut self.block, value);
            self.stream_bytes += len as u64;
        } else {
            self.scratch.clear();
            put_varint(&mut self.scratch, klen);
            put_varint(&mut self.scratch, vlen);
            let head = std::mem::take(&mut self.scratch);
            self.push_stream(&head)?;
            self.scratch = head;
            self.push_stream(key)?;
            self.push_stream(value)?;
            self.previous_in_block = None;
            self.previous.clear();
            self.previous.extend_from_slice(key);
        }
        if let Some(filter) = &mut self.filter {
            filter.insert_hash(hash);
        }
        self.records += 1;
        self.key_bytes += key.len() as u64;
        self.value_bytes += value.len() as u64;
        let len = key.len() as u32;
        self.key_lens = (self.key_lens.0.min(len), self.key_lens.1.max(len));
        Ok(())
    }

    /// Record-stream bytes left in the block being filled.
    fn room(&self) -> usize {
        self.cap - (self.block.len() - BLOCK_PREFIX)
    }

    /// The bytes the block's point index needs with one more record, `None` when the block
    /// will have none.
    fn index_reserve(&self) -> Option<usize> {
        let bytes = slots::index_bytes(self.slots.len() + 1);
        (self.indexing && bytes <= slots::index_limit(self.cap)).then_some(bytes)
    }

    fn push_stream(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let n = self.room().min(bytes.len());
            self.block.extend_from_slice(&bytes[..n]);
            self.stream_bytes += n as u64;
            bytes = &bytes[n..];
            if self.block.len() - BLOCK_PREFIX == self.cap {
                self.complete_block()?;
            }
        }
        Ok(())
    }

    fn complete_block(&mut self) -> Result<()> {
        if let Some((at, len)) = self.previous_in_block.take() {
            self.previous.clear();
            self.previous.extend_from_slice(&self.block[at..at + len]);
        }
        let block = self.batch.block(self.device.as_ref())?;
        block[..self.block.len()].copy_from_slice(&self.block);
        let used = self.block.len() - BLOCK_PREFIX;
        if self.indexing
            && !self.slots.is_empty()
            && used + slots::index_bytes(self.slots.len()) <= self.cap
        {
            slots::write(&mut block[BLOCK_PREFIX..], self.cap, &self.slots);
        }
        self.slots.clear();
        self.indexing = true;
        self.block.truncate(BLOCK_PREFIX);
        self.block[..BLOCK_PREFIX].copy_from_slice(&NO_START.to_le_bytes());
        Ok(())
    }

    /// Writes the last data block, the separators and the header, syncs the file and opens it.
    pub fn finish(mut self) -> Result<ByteTable> {
        if self.block.len() > BLOCK_PREFIX {
            self.complete_block()?;
        }
        self.batch.flush(self.device.as_ref())?;
        let data_blocks = self.batch.blocks();
        let mut index = Vec::new();
        let mut last = 0;
        for (i, &pos) in self.positions.iter().enumerate() {
            let sep =
                &self.separators[self.sep_offsets[i] as usize..self.sep_offsets[i + 1] as usize];
            put_varint(&mut index, pos - last);
            put_varint(&mut index, sep.len() as u64);
            index.extend_from_slice(sep);
            last = pos;
        }
        // A filter sized for far more records than were written (a merge that dropped most of
        // what it read) is not kept: see `filter::max_words`.
        if self
            .filter
            .as_ref()
            .is_some_and(|f| f.words().len() as u64 > max_words(self.records))
        {
            self.filter = None;
        }
        let header = ByteTableHeader {
            version: BYTE_TABLE_VERSION,
            block_size: self.block_size as u32,
            params: self.params,
            records: self.records,
            data_blocks,
            stream_bytes: self.stream_bytes,
            entries: self.positions.len() as u64,
            index_bytes: index.len() as u64,
            key_bytes: self.key_bytes,
            value_bytes: self.value_bytes,
            key_lens: if self.records == 0 {
                (0, 0)
            } else {
                self.key_lens
            },
            owner: self.owner,
            kind: self.kind,
            filter: self.filter.as_ref().map(|f| FilterShape {
                hashes: f.hashes(),
                words: f.words().len() as u64,
            }),
        };
        let payload = self.device.payload_size();
        if !index.is_empty() {
            let blocks = index.len().div_ceil(payload);
            let mut buf = AlignedBuf::zeroed(blocks * self.block_size);
            for (i, chunk) in index.chunks(payload).enumerate() {
                buf[i * self.block_size..i * self.block_size + chunk.len()].copy_from_slice(chunk);
            }
            self.device
                .write_blocks(1 + data_blocks, &mut buf, IoClass::Model)?;
        }
        if let Some(filter) = &self.filter {
            let bytes: Vec<u8> = filter
                .words()
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            let blocks = bytes.len().div_ceil(payload);
            let mut buf = AlignedBuf::zeroed(blocks * self.block_size);
            for (i, chunk) in bytes.chunks(payload).enumerate() {
                buf[i * self.block_size..i * self.block_size + chunk.len()].copy_from_slice(chunk);
            }
            let first = 1 + data_blocks + header.index_blocks();
            self.device.write_blocks(first, &mut buf, IoClass::Model)?;
        }
        let mut head = AlignedBuf::zeroed(self.block_size);
        header.encode(&mut head);
        self.device.write_blocks(0, &mut head, IoClass::Header)?;
        self.device.sync()?;
        ByteTable::assemble(
            self.device,
            header,
            self.separators,
            self.sep_offsets,
            self.positions,
            self.filter,
        )
    }
}

/// The last key added: in the block being filled at `at` (offset, length), else `previous`.
fn last_key<'a>(block: &'a [u8], previous: &'a [u8], at: Option<(usize, usize)>) -> &'a [u8] {
    match at {
        Some((at, len)) => &block[at..at + len],
        None => previous,
    }
}

/// `dst.extend_from_slice(src)`, with the length of 8-byte keys and values as a constant the
/// compiler copies inline instead of a call to `memcpy` per piece (most of the writer's
/// `memmove` samples in a merge of `u64` records).
#[inline]
fn append(dst: &mut Vec<u8>, src: &[u8]) {
    if let Ok(a) = <&[u8; 8]>::try_from(src) {
        dst.extend_from_slice(a);
    } else {
        dst.extend_from_slice(src);
    }
}

fn new_block() -> Vec<u8> {
    let mut b = Vec::with_capacity(4096);
    b.extend_from_slice(&NO_START.to_le_bytes());
    b
}
