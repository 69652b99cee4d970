//! Reading a byte table: open, point lookups through the separator model, cursors in both
//! directions, and a full check.

use std::ops::{Bound, Deref};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::checksum::BLOCK_TRAILER;
use crate::io::scratch::{self, Scratch};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::mem::string_index::escape;

use super::filter::KeyFilter;
use super::format::{
    decode_header, stream_cap, ByteTableHeader, BLOCK_PREFIX, HEADER_BYTES, NO_START,
};
use super::locator::{Locator, Positions};
use super::slots;
use crate::codec::get_varint;
use crate::key::cmp_bytes;

/// An open byte table; see the module docs. `Send + Sync`.
pub struct ByteTable {
    device: Arc<dyn BlockDevice>,
    header: ByteTableHeader,
    /// Record-stream bytes per data block.
    cap: usize,
    /// Whether data blocks end with a point index's footer (version 4 on, [`slots`]).
    indexed: bool,
    /// Stream position of the first record starting in each entry's block.
    positions: Positions,
    locator: Locator,
    /// The key filter, when the table has one.
    filter: Option<KeyFilter>,
}

impl std::fmt::Debug for ByteTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteTable")
            .field("file", &self.device.name())
            .field("records", &self.header.records)
            .finish()
    }
}

impl ByteTable {
    /// Opens `name` in `storage`: reads and checks the header, reads the separators and
    /// builds the model over them. Damage is a typed error naming the file (and block).
    pub fn open(storage: &Storage, name: &str) -> Result<ByteTable> {
        let device = storage.open(name, false)?;
        let bs = device.block_size();
        if device.len_blocks() == 0 {
            return Err(Error::Truncated {
                file: device.name().to_string(),
                what: "an empty file: the header was never written".into(),
            });
        }
        let mut head = vec![0u8; bs];
        device.read_blocks(0, &mut head, IoClass::Header)?;
        let header = decode_header(
            device.name(),
            &head[..bs - BLOCK_TRAILER],
            bs,
            device.len_blocks(),
        )?;
        let file = device.name().to_string();
        let bad = |block: u64, what: String| Error::Corrupt {
            file: file.clone(),
            block: Some(block),
            what,
        };
        let mut index = Vec::with_capacity(header.index_bytes as usize);
        let blocks = header.index_blocks();
        let first = 1 + header.data_blocks;
        if blocks > 0 {
            let mut buf = vec![0u8; blocks as usize * bs];
            device.read_blocks(first, &mut buf, IoClass::Model)?;
            for b in buf.chunks(bs) {
                index.extend_from_slice(&b[..bs - BLOCK_TRAILER]);
            }
            index.truncate(header.index_bytes as usize);
        }
        let mut separators = Vec::new();
        let mut sep_offsets = vec![0u32];
        let mut positions = Vec::with_capacity(header.entries as usize);
        let mut at = 0usize;
        let mut pos = 0u64;
        let payload = bs - BLOCK_TRAILER;
        for i in 0..header.entries {
            let block = first + (at / payload) as u64;
            let (delta, n) = get_varint(&index[at..])
                .ok_or_else(|| bad(block, format!("separator {i} ends early")))?;
            at += n;
            let (len, n) = get_varint(&index[at..])
                .ok_or_else(|| bad(block, format!("separator {i} ends early")))?;
            at += n;
            if len == 0 || len > (index.len() - at) as u64 {
                return Err(bad(block, format!("separator {i} claims {len} bytes")));
            }
            let sep = &index[at..at + len as usize];
            at += len as usize;
            pos = pos
                .checked_add(delta)
                .filter(|&p| p < header.stream_bytes && (i == 0 || delta > 0))
                .ok_or_else(|| bad(block, format!("separator {i} points outside the records")))?;
            if i == 0 && pos != 0 {
                return Err(bad(
                    block,
                    "the first separator does not point at record 0".into(),
                ));
            }
            if i > 0 {
                let prev = &separators[sep_offsets[i as usize - 1] as usize..];
                if sep <= prev {
                    return Err(bad(
                        block,
                        format!(
                            "separator {i} ({}) is not above the one before",
                            escape(sep)
                        ),
                    ));
                }
            }
            separators.extend_from_slice(sep);
            if separators.len() > u32::MAX as usize {
                return Err(bad(block, "separators over 4 GiB".into()));
            }
            sep_offsets.push(separators.len() as u32);
            positions.push(pos);
        }
        if at != index.len() {
            return Err(bad(
                first,
                format!("{} bytes after the last separator", index.len() - at),
            ));
        }
        let filter = match header.filter {
            Some(shape) => {
                let first = first + blocks;
                let n = header.filter_blocks() as usize;
                let mut buf = vec![0u8; n * bs];
                device.read_blocks(first, &mut buf, IoClass::Model)?;
                // Words run on across blocks: the payloads joined, then read 8 bytes a word.
                let bytes: Vec<u8> = buf
                    .chunks(bs)
                    .flat_map(|b| &b[..payload])
                    .copied()
                    .collect();
                let words: Vec<u64> = bytes
                    .chunks_exact(8)
                    .take(shape.words as usize)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                    .collect();
                Some(KeyFilter::from_words(&file, words, shape.hashes)?)
            }
            None => None,
        };
        ByteTable::assemble(device, header, separators, sep_offsets, positions, filter)
    }

    pub(crate) fn assemble(
        device: Arc<dyn BlockDevice>,
        header: ByteTableHeader,
        separators: Vec<u8>,
        sep_offsets: Vec<u32>,
        positions: Vec<u64>,
        filter: Option<KeyFilter>,
    ) -> Result<ByteTable> {
        let locator = Locator::build(&header, separators, sep_offsets)?;
        let cap = stream_cap(device.block_size(), header.version);
        Ok(ByteTable {
            device,
            indexed: header.version >= 4,
            header,
            cap,
            positions: Positions::new(&positions)?,
            locator,
            filter,
        })
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        self.device.name()
    }

    /// What the header records.
    pub fn header(&self) -> &ByteTableHeader {
        &self.header
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.header.records
    }

    /// True for a table of no record.
    pub fn is_empty(&self) -> bool {
        self.header.records == 0
    }

    /// Bytes of memory: the separators' index, the runs' positions and the key filter.
    pub fn memory_bytes(&self) -> usize {
        self.locator.memory_bytes(&self.positions) + self.filter_bytes()
    }

    /// The locator's form, for tests: whether 8-byte separators stayed a plain array.
    #[cfg(test)]
    pub(crate) fn plain_separators(&self) -> bool {
        matches!(self.locator, Locator::Plain8(_))
    }

    /// Bytes of memory of the key filter (0 without one).
    pub fn filter_bytes(&self) -> usize {
        self.filter.as_ref().map_or(0, KeyFilter::memory_bytes)
    }

    /// Takes the key filter out of the table, which then answers [`ByteTable::may_contain`]
    /// with true for every key: for an owner that holds the filter itself, or not at all
    /// (the `lsm` engine, under its memory budget).
    pub(crate) fn take_filter(&mut self) -> Option<KeyFilter> {
        self.filter.take()
    }

    /// False when the table surely does not hold `key` (its key filter says so); true when
    /// it may, and always for a table without a filter.
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_hashed(slots::key_hash(key))
    }

    /// [`ByteTable::may_contain`] for the key whose [`key_hash`](slots::key_hash) is `hash`:
    /// a store that asks every run about one key hashes it once.
    #[inline]
    pub(crate) fn may_contain_hashed(&self, hash: u64) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.may_contain_hash(hash))
    }

    /// Bytes of the file.
    pub fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }

    /// The entry whose record run may hold `key`: the last separator `<= key`. `None` when
    /// `key` is below the table.
    fn locate(&self, key: &[u8]) -> Option<usize> {
        self.locator.locate(key, self.positions.len())
    }

    fn entry_end(&self, i: usize) -> u64 {
        if i + 1 < self.positions.len() {
            self.positions.get(i + 1)
        } else {
            self.header.stream_bytes
        }
    }

    /// The value stored under `key`, reading the block its run starts in (and the following
    /// blocks only when its record runs on into them).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_hashed(key, slots::key_hash(key))
    }

    /// [`ByteTable::get`] of the key whose [`key_hash`](slots::key_hash) is `hash` (the point
    /// index's), hashed once by a caller that asks several tables.
    pub(crate) fn get_hashed(&self, key: &[u8], hash: u64) -> Result<Option<Vec<u8>>> {
        let Some(i) = self.locate(key) else {
            return Ok(None);
        };
        // The thread's read buffers, not fresh ones per lookup (`crate::io::scratch`).
        let scratch = scratch::take();
        let mut r = Stream::new(self, self.positions.get(i), self.entry_end(i), false);
        r.raw = scratch.raw;
        r.buf = scratch.bytes;
        let found = match r.first_block_answer(key, hash) {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => find_in(&mut r, key),
            Err(e) => Err(e),
        };
        scratch::give_back(Scratch {
            raw: r.raw,
            bytes: r.buf,
        });
        found
    }

    /// A cursor over the records within `(start, end)`, ascending when `forward`, else
    /// descending.
    pub fn cursor(
        self: &Arc<Self>,
        start: Bound<Vec<u8>>,
        end: Bound<Vec<u8>>,
        forward: bool,
    ) -> TableCursor {
        TableCursor {
            table: Arc::clone(self),
            start,
            end,
            forward,
            state: CursorState::Unstarted,
        }
    }

    /// Every record in order, without copying: a merge's pass over the old table, whose
    /// reads count as [`IoClass::Data`].
    pub(crate) fn merge_records(self: &Arc<Self>) -> MergeRecords {
        let mut stream = Stream::new(Arc::clone(self), 0, self.header.stream_bytes, true);
        stream.class = IoClass::Data;
        MergeRecords {
            stream,
            read: 0,
            name: self.name().to_string(),
        }
    }

    /// The records whose start lies in entry `i`'s run, in order.
    fn entry_records(&self, i: usize) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut r = Stream::new(self, self.positions.get(i), self.entry_end(i), true);
        let mut out = Vec::new();
        while let Some((k, v)) = r.next_record()? {
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    /// Reads every block and checks everything: checksums, each data block's first-start
    /// field, record framing and order, the counts in the header, and that every key is found
    /// through the model in the run that holds it. Returns the number of records.
    pub fn check(&self) -> Result<u64> {
        let mut r = Stream::new(self, 0, self.header.stream_bytes, true);
        r.prefixes = Some(Vec::new());
        r.class = IoClass::Data;
        let mut previous: Option<Vec<u8>> = None;
        let (mut records, mut key_bytes, mut value_bytes) = (0u64, 0u64, 0u64);
        let mut starts: Vec<u64> = Vec::new();
        let file = self.name().to_string();
        // The records that start in the block being read: offset, end and key hash, for its
        // point index.
        let mut in_block: (u64, Vec<(u16, u16, u64)>) = (0, Vec::new());
        while let Some((k, vlen)) = r.next_record()?.map(|(k, v)| (k.to_vec(), v.len())) {
            let k = k.as_slice();
            let pos = r.record_start;
            let block = 1 + pos / self.cap as u64;
            if self.indexed {
                if block - 1 != in_block.0 {
                    self.check_indexes(&mut r.indexes, &in_block, block - 1)?;
                    in_block = (block - 1, Vec::new());
                }
                let start = pos - (block - 1) * self.cap as u64;
                let end = (r.pos - (block - 1) * self.cap as u64).min(self.cap as u64 + 1);
                in_block
                    .1
                    .push((start as u16, end as u16, slots::key_hash(k)));
            }
            let bad = |what: String| Error::Corrupt {
                file: file.clone(),
                block: Some(block),
                what,
            };
            if let Some(p) = &previous {
                if k <= p.as_slice() {
                    return Err(bad(format!(
                        "key {} follows {}: keys out of order",
                        escape(k),
                        escape(p)
                    )));
                }
            }
            if starts
                .last()
                .is_none_or(|&s| s / self.cap as u64 != pos / self.cap as u64)
            {
                starts.push(pos);
            }
            let entry = self.locate(k);
            let expect = self.positions.run_of(pos);
            if entry != expect {
                return Err(bad(format!(
                    "key {} is not found through the model: it routes to run {entry:?}, the \
                     record is in run {expect:?}",
                    escape(k)
                )));
            }
            if !self.may_contain(k) {
                return Err(bad(format!(
                    "key {} is not in the table's key filter, so a lookup would miss it",
                    escape(k)
                )));
            }
            records += 1;
            key_bytes += k.len() as u64;
            value_bytes += vlen as u64;
            previous = Some(k.to_vec());
        }
        if self.indexed {
            self.check_indexes(&mut r.indexes, &in_block, u64::MAX)?;
        }
        let prefixes = r.prefixes.take().unwrap_or_default();
        let mut s = starts.iter().peekable();
        for (b, &prefix) in prefixes.iter().enumerate() {
            let expected = match s.peek() {
                Some(&&p) if p / self.cap as u64 == b as u64 => {
                    s.next();
                    (p % self.cap as u64) as u16
                }
                _ => NO_START,
            };
            if prefix != expected {
                return Err(Error::Corrupt {
                    file,
                    block: Some(1 + b as u64),
                    what: format!("first record start recorded as {prefix}, it is {expected}"),
                });
            }
        }
        let h = &self.header;
        if starts != self.positions.to_vec()
            || records != h.records
            || key_bytes != h.key_bytes
            || value_bytes != h.value_bytes
        {
            return Err(Error::Corrupt {
                file,
                block: Some(0),
                what: format!(
                    "the header and separators describe {} records in {} runs, the data holds \
                     {records} in {}",
                    h.records,
                    self.positions.len(),
                    starts.len()
                ),
            });
        }
        Ok(records)
    }
}

impl ByteTable {
    /// [`ByteTable::check`]'s comparison of the point indexes of the blocks before `next`
    /// (the data block the check reads records of next) with their records: `in_block`'s
    /// block with its records, any other with none.
    fn check_indexes(
        &self,
        indexes: &mut std::collections::VecDeque<(u64, Vec<u8>)>,
        in_block: &(u64, Vec<(u16, u16, u64)>),
        next: u64,
    ) -> Result<()> {
        while let Some((block, payload)) = indexes.front() {
            if *block >= next {
                break;
            }
            let records = if *block == in_block.0 {
                &in_block.1[..]
            } else {
                &[]
            };
            slots::verify(payload, self.cap, records).map_err(|what| Error::Corrupt {
                file: self.name().to_string(),
                block: Some(1 + block),
                what,
            })?;
            indexes.pop_front();
        }
        Ok(())
    }
}

/// The value of `key` among the records `r` reads, which start at or before it.
fn find_in<T: Deref<Target = ByteTable>>(r: &mut Stream<T>, key: &[u8]) -> Result<Option<Vec<u8>>> {
    while let Some((k, v)) = r.next_record()? {
        match cmp_bytes(k, key) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => return Ok(Some(v.to_vec())),
            std::cmp::Ordering::Greater => return Ok(None),
        }
    }
    Ok(None)
}

/// How far ahead of a record [`scan_in_place`] asks for lines.
const PREFETCH_AHEAD: usize = 512;

/// [`Stream::first_block_answer`]'s scan of `records[at..]`, records with one-byte lengths
/// in key order: `Some(Some(value))` for `key`'s record, `Some(None)` at a greater key or
/// (when `run_ends` says the run ends at `records`' end) after the last record or at the
/// zero that pads the block's rest (`padded`: format version 2 on), `None` when the block
/// does not decide.
fn scan_in_place(
    records: &[u8],
    mut at: usize,
    key: &[u8],
    run_ends: bool,
    padded: bool,
) -> Option<Option<Vec<u8>>> {
    // Each record's lengths say where the next starts, so the scan's loads form a chain; the
    // lines it may walk are requested up front so their misses overlap.
    let ahead = records.len().min(at + PREFETCH_AHEAD);
    crate::search::prefetch_window(records.get(at..ahead).unwrap_or_default());
    while let Some(&[k, v]) = records.get(at..at + 2) {
        if let Some(line) = records.get(at + PREFETCH_AHEAD) {
            crate::search::prefetch(line);
        }
        let (klen, vlen) = (usize::from(k), usize::from(v));
        if k == 0 && padded && run_ends {
            return Some(None);
        }
        if k == 0 || k >= 0x80 || v >= 0x80 || at + 2 + klen + vlen > records.len() {
            return None;
        }
        let (found, value) = records[at + 2..at + 2 + klen + vlen].split_at(klen);
        match cmp_bytes(found, key) {
            std::cmp::Ordering::Less => at += 2 + klen + vlen,
            std::cmp::Ordering::Equal => return Some(Some(value.to_vec())),
            std::cmp::Ordering::Greater => return Some(None),
        }
    }
    (run_ends && at == records.len()).then_some(None)
}

/// Reads the record stream from a position, loading blocks as records need them.
struct Stream<T: Deref<Target = ByteTable>> {
    table: T,
    /// Next record's stream position.
    pos: u64,
    /// Where reading stops (a run's end or the stream's).
    end: u64,
    /// Stream bytes loaded: `buf[0]` is at stream position `buf_start`.
    buf: Vec<u8>,
    buf_start: u64,
    /// Blocks to read ahead beyond what a record needs (grows for scans).
    ahead: u64,
    scan: bool,
    /// What the reads are counted as: `Leaf` for lookups and ranges, `Data` for a merge's or
    /// a check's pass over the whole table.
    class: IoClass,
    /// When checking: every loaded block's first-start field, in block order.
    prefixes: Option<Vec<u16>>,
    /// When checking: the payloads of loaded blocks that have a point index, with their data
    /// block numbers, until the check has compared them with their records.
    indexes: std::collections::VecDeque<(u64, Vec<u8>)>,
    /// Where the last record [`Stream::next_record`] returned started (after any padding).
    record_start: u64,
    /// The blocks of the last read, kept for the next: aligned, so an `O_DIRECT` device
    /// reads into it without a bounce buffer of its own.
    raw: AlignedBuf,
}

impl<T: Deref<Target = ByteTable>> Stream<T> {
    fn new(table: T, pos: u64, end: u64, scan: bool) -> Stream<T> {
        let buf_start = pos - pos % table.cap as u64;
        Stream {
            table,
            pos,
            end,
            buf: Vec::new(),
            buf_start,
            ahead: 0,
            scan,
            class: IoClass::Leaf,
            prefixes: None,
            indexes: std::collections::VecDeque::new(),
            record_start: pos,
            raw: AlignedBuf::zeroed(0),
        }
    }

    fn corrupt(&self, what: String) -> Error {
        Error::Corrupt {
            file: self.table.name().to_string(),
            block: Some(1 + self.pos / self.table.cap as u64),
            what,
        }
    }

    /// A lookup's first block, read in place: the records of the run from `pos` to the
    /// block's end (or the run's) are compared with `key` where the cache holds them, with no
    /// copy of the block. `Some` is the answer when the block decides it (found; a greater key
    /// seen; the run ended, all smaller). `None` when it does not (the run or a record goes on
    /// past the block, a record with long lengths, padding): the block's payload is then in
    /// `buf`, as [`Stream::ensure`] would have loaded it, and the lookup goes on from `pos`
    /// through [`Stream::next_record`], which checks and reports what this scan passes over.
    /// Profiled on a store's cached gets (the `lsm` engine's in-memory YCSB-C), copying the
    /// whole block took a quarter of a get; a found key is half a block in on average. A block
    /// with a point index ([`slots`]) answers through it, without the scan.
    fn first_block_answer(&mut self, key: &[u8], hash: u64) -> Result<Option<Option<Vec<u8>>>> {
        let cap = self.table.cap as u64;
        let block = self.pos / cap;
        let from = (self.pos % cap) as usize;
        let run_ends_here = self.end <= (block + 1) * cap;
        let stop = (self.end.min((block + 1) * cap) - block * cap) as usize;
        if self.pos >= self.table.header.stream_bytes || !self.buf.is_empty() {
            return Ok(None);
        }
        let (buf, cap) = (&mut self.buf, self.table.cap);
        let padded = self.table.header.version >= 2;
        let footer = if self.table.indexed { slots::FOOTER } else { 0 };
        let hash = (self.table.indexed && run_ends_here).then_some(hash);
        let mut answer = None;
        self.table
            .device
            .visit_blocks(1 + block, 1, self.class, &mut self.raw, &mut |b| {
                let payload = &b[BLOCK_PREFIX..BLOCK_PREFIX + cap + footer];
                answer = hash
                    .and_then(|h| slots::probe(payload, cap, key, h))
                    .map(|found| found.map(|value| payload[value].to_vec()))
                    .or_else(|| scan_in_place(&payload[..stop], from, key, run_ends_here, padded));
                if answer.is_none() {
                    buf.extend_from_slice(&payload[..cap]);
                }
            })?;
        Ok(answer)
    }

    /// Makes `buf` hold stream bytes `pos .. pos + n`.
    fn ensure(&mut self, n: u64) -> Result<()> {
        let want_end = self.pos + n;
        if want_end > self.table.header.stream_bytes {
            return Err(self.corrupt(format!(
                "a record at stream position {} runs past the end of the records",
                self.pos
            )));
        }
        let have_end = self.buf_start + self.buf.len() as u64;
        if want_end <= have_end {
            return Ok(());
        }
        let cap = self.table.cap as u64;
        // Drop what is consumed, keeping whole blocks aligned.
        let keep_from = (self.pos / cap) * cap;
        if keep_from > self.buf_start {
            let drop = ((keep_from - self.buf_start) as usize).min(self.buf.len());
            self.buf.drain(..drop);
            self.buf_start += drop as u64;
        }
        let have_end = self.buf_start + self.buf.len() as u64;
        let first = have_end / cap;
        let last = ((want_end - 1) / cap + self.ahead).min(self.table.header.data_blocks - 1);
        // Each block's payload straight into `buf`: from the page cache's own copy when it
        // holds the blocks, else through `raw`.
        let (buf, prefixes, cap) = (&mut self.buf, &mut self.prefixes, self.table.cap);
        let (indexes, indexed) = (&mut self.indexes, self.table.indexed);
        self.table.device.visit_blocks(
            1 + first,
            last + 1 - first,
            self.class,
            &mut self.raw,
            &mut |b| {
                if let Some(p) = prefixes.as_mut() {
                    if indexed && slots::buckets(&b[BLOCK_PREFIX..], cap) > 0 {
                        let payload = &b[BLOCK_PREFIX..BLOCK_PREFIX + cap + slots::FOOTER];
                        indexes.push_back((p.len() as u64, payload.to_vec()));
                    }
                    p.push(u16::from_le_bytes([b[0], b[1]]));
                }
                buf.extend_from_slice(&b[BLOCK_PREFIX..BLOCK_PREFIX + cap]);
            },
        )?;
        if self.scan {
            self.ahead = (self.ahead * 2).clamp(1, 64);
        }
        Ok(())
    }

    fn varint(&mut self) -> Result<u64> {
        let left = self.table.header.stream_bytes - self.pos;
        self.ensure(left.min(10))?;
        let at = (self.pos - self.buf_start) as usize;
        let (v, n) = get_varint(&self.buf[at..at + left.min(10) as usize])
            .ok_or_else(|| self.corrupt(format!("bad length at stream position {}", self.pos)))?;
        self.pos += n as u64;
        Ok(v)
    }

    /// The next record before `end`, or `None` at `end`.
    fn next_record(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        loop {
            if self.pos >= self.end {
                return Ok(None);
            }
            // The usual record: both lengths one byte each, the whole record loaded.
            let at = (self.pos - self.buf_start) as usize;
            if let Some(&[k, v]) = self.buf.get(at..at + 2) {
                let (klen, vlen) = (usize::from(k), usize::from(v));
                let len = 2 + klen + vlen;
                if k != 0
                    && k < 0x80
                    && v < 0x80
                    && at + len <= self.buf.len()
                    && self.pos + len as u64 <= self.end
                {
                    self.record_start = self.pos;
                    self.pos += len as u64;
                    let (key, value) = self.buf[at + 2..at + len].split_at(klen);
                    return Ok(Some((key, value)));
                }
            }
            if self.table.header.version < 2 {
                break;
            }
            // From version 2, a zero where a record would start pads the block's rest.
            self.ensure(1)?;
            if self.buf[(self.pos - self.buf_start) as usize] != 0 {
                break;
            }
            let cap = self.table.cap as u64;
            self.pos = (self.pos / cap + 1) * cap;
        }
        let start = self.pos;
        self.record_start = start;
        let klen = self.varint()?;
        let vlen = self.varint()?;
        let left = self.table.header.stream_bytes - self.pos;
        if klen == 0 || klen > left || vlen > left - klen {
            self.pos = start;
            return Err(self.corrupt(format!(
                "record at stream position {start} claims a {klen}-byte key and a {vlen}-byte \
                 value, {left} bytes are left"
            )));
        }
        self.ensure(klen + vlen)?;
        let at = (self.pos - self.buf_start) as usize;
        self.pos += klen + vlen;
        if self.pos > self.end {
            return Err(Error::Corrupt {
                file: self.table.name().to_string(),
                block: Some(1 + start / self.table.cap as u64),
                what: format!("record at stream position {start} runs into the next run"),
            });
        }
        let (k, rest) = self.buf[at..at + (klen + vlen) as usize].split_at(klen as usize);
        Ok(Some((k, rest)))
    }
}

const _: () = assert!(HEADER_BYTES <= 4096 - BLOCK_TRAILER);

/// [`ByteTable::merge_records`]: a table's records streamed in order, each borrowed from the
/// stream's buffer until the next.
pub(crate) struct MergeRecords {
    stream: Stream<Arc<ByteTable>>,
    read: u64,
    /// The file's name, for the error.
    name: String,
}

impl MergeRecords {
    /// The next record, `None` after the last. A stream that ends before the header's count of
    /// records (a damaged block that still passes its checksum) is `Corrupt`, so a merge never
    /// drops the rest of a table without a word.
    #[inline]
    pub(crate) fn next_record(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        let expected = self.stream.table.header.records;
        if self.read == expected {
            return Ok(None);
        }
        self.read += 1;
        let read = self.read;
        match self.stream.next_record()? {
            Some(r) => Ok(Some(r)),
            None => Err(Error::Corrupt {
                file: self.name.clone(),
                block: None,
                what: format!(
                    "the record stream ends after {} records, the header says {expected}",
                    read - 1
                ),
            }),
        }
    }
}

enum CursorState {
    Unstarted,
    /// Forward: one stream read on from the first run, so a block is read once.
    Forward(Stream<Arc<ByteTable>>),
    /// Backward: the run to load next and what is left of the current one (in key order,
    /// so `pop` gives the next).
    Backward {
        next_run: Option<usize>,
        buffered: Vec<(Vec<u8>, Vec<u8>)>,
    },
    Done,
}

/// A cursor over a byte table's records in a key range, in either direction; it holds the
/// table open. Forward it streams the blocks in order (with read-ahead); backward it reads a
/// run (the records starting in one block) at a time.
pub struct TableCursor {
    table: Arc<ByteTable>,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    forward: bool,
    state: CursorState,
}

fn above_start(k: &[u8], start: &Bound<Vec<u8>>) -> bool {
    match start {
        Bound::Included(s) => k >= s.as_slice(),
        Bound::Excluded(s) => k > s.as_slice(),
        Bound::Unbounded => true,
    }
}

fn below_end(k: &[u8], end: &Bound<Vec<u8>>) -> bool {
    match end {
        Bound::Included(e) => k <= e.as_slice(),
        Bound::Excluded(e) => k < e.as_slice(),
        Bound::Unbounded => true,
    }
}

impl TableCursor {
    fn start(&mut self) -> CursorState {
        let t = &self.table;
        let n = t.positions.len();
        if self.forward {
            let first = match &self.start {
                Bound::Included(s) | Bound::Excluded(s) => t.locate(s).unwrap_or(0),
                Bound::Unbounded => 0,
            };
            if first >= n {
                return CursorState::Done;
            }
            let from = t.positions.get(first);
            CursorState::Forward(Stream::new(
                Arc::clone(t),
                from,
                t.header.stream_bytes,
                true,
            ))
        } else {
            let last = match &self.end {
                Bound::Included(e) | Bound::Excluded(e) => t.locate(e),
                Bound::Unbounded => n.checked_sub(1),
            };
            match last {
                Some(i) => CursorState::Backward {
                    next_run: Some(i),
                    buffered: Vec::new(),
                },
                None => CursorState::Done,
            }
        }
    }

    /// The next record in the cursor's direction, `None` after the last.
    pub fn next_record(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let (mut key, mut value) = (Vec::new(), Vec::new());
        Ok(self
            .next_into(&mut key, &mut value)?
            .then_some((key, value)))
    }

    /// The next record in the cursor's direction into `key` and `value`, reusing their
    /// memory; false after the last.
    pub fn next_into(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<bool> {
        loop {
            match &mut self.state {
                CursorState::Done => return Ok(false),
                CursorState::Unstarted => {
                    self.state = self.start();
                    continue;
                }
                CursorState::Forward(stream) => match stream.next_record()? {
                    Some((k, v)) => {
                        key.clear();
                        key.extend_from_slice(k);
                        value.clear();
                        value.extend_from_slice(v);
                    }
                    None => {
                        self.state = CursorState::Done;
                        return Ok(false);
                    }
                },
                CursorState::Backward { next_run, buffered } => match buffered.pop() {
                    Some((k, v)) => (*key, *value) = (k, v),
                    None => {
                        let Some(i) = *next_run else {
                            self.state = CursorState::Done;
                            return Ok(false);
                        };
                        *buffered = self.table.entry_records(i)?;
                        *next_run = i.checked_sub(1);
                        continue;
                    }
                },
            }
            let (inside, past) = if self.forward {
                (above_start(key, &self.start), !below_end(key, &self.end))
            } else {
                (below_end(key, &self.end), !above_start(key, &self.start))
            };
            if past {
                self.state = CursorState::Done;
                return Ok(false);
            }
            if inside {
                return Ok(true);
            }
        }
    }
}

impl Iterator for TableCursor {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::scan_in_place;

    /// Records `(key, value)` framed with one-byte lengths, back to back.
    fn records(list: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (k, v) in list {
            out.extend_from_slice(&[k.len() as u8, v.len() as u8]);
            out.extend_from_slice(k);
            out.extend_from_slice(v);
        }
        out
    }

    #[test]
    fn the_in_place_scan_answers_only_what_the_block_decides() {
        let block = records(&[(b"b", b"1"), (b"d", b"22"), (b"f", b"")]);
        let found = |key: &[u8], ends| scan_in_place(&block, 0, key, ends, true);
        assert_eq!(found(b"d", false), Some(Some(b"22".to_vec())));
        assert_eq!(found(b"f", false), Some(Some(Vec::new())));
        // A greater key decides absence; past the last record only when the run ends here.
        assert_eq!(found(b"c", false), Some(None));
        assert_eq!(found(b"g", true), Some(None));
        assert_eq!(found(b"g", false), None);
        // From a later record: earlier ones are not seen.
        assert_eq!(scan_in_place(&block, 4, b"b", true, true), Some(None));
        // Padding: absence when the run ends in this block of a padded format, else undecided.
        let mut padded = block.clone();
        padded.extend_from_slice(&[0, 0, 0]);
        assert_eq!(scan_in_place(&padded, 0, b"g", true, true), Some(None));
        assert_eq!(scan_in_place(&padded, 0, b"g", false, true), None);
        assert_eq!(scan_in_place(&padded, 0, b"g", true, false), None);
        // A record cut by the block's end, or with a two-byte length: the stream decides.
        let cut = &block[..block.len() - 1];
        assert_eq!(scan_in_place(cut, 0, b"f", true, true), None);
        let mut long = records(&[(b"b", b"1")]);
        long.extend_from_slice(&[1, 0x80, 0x01, b'c']);
        assert_eq!(scan_in_place(&long, 0, b"c", true, true), None);
        assert_eq!(
            scan_in_place(&long, 0, b"b", true, true),
            Some(Some(b"1".to_vec()))
        );
    }
}
