//! Data nodes on disk: a header with the model and statistics, the bitmap, then the gapped
//! array of key-payload slots, stored contiguously in `<name>.data` (a node may cross many
//! blocks, paper 003 §4.1: "a node in ALEX may cross multiple blocks, especially data nodes").
//!
//! Byte layout (little-endian) at the node's position:
//!
//! | offset              | size              | field                                      |
//! |---------------------|-------------------|--------------------------------------------|
//! | 0                   | 4                 | tag `b"ALXD"`                              |
//! | 4                   | 1                 | state: 1 live, 2 invalid                   |
//! | 5                   | 1                 | duplication (log2 of the parent's slots)   |
//! | 6                   | 2                 | reserved, 0                                |
//! | 8                   | 8                 | model slope `a` (`f64`, finite, >= 0)      |
//! | 16                  | 8                 | model intercept `b` (`f64`, finite)        |
//! | 24                  | 8                 | model base key                             |
//! | 32                  | 8                 | capacity: slots                            |
//! | 40                  | 8                 | keys held (at most the capacity)           |
//! | 48                  | 8                 | expansion threshold (keys)                 |
//! | 56                  | 8                 | contraction threshold (keys)               |
//! | 64                  | 8                 | previous data node's address, or `u64::MAX`|
//! | 72                  | 8                 | next data node's address, or `u64::MAX`    |
//! | 80                  | 8                 | inserts since built (statistics)           |
//! | 88                  | 8                 | shifts since built (statistics)            |
//! | 96                  | 8                 | search iterations since built (statistics) |
//! | 104                 | 8                 | expected cost (`f64`)                      |
//! | 112                 | 8                 | expected shifts per insert (`f64`)         |
//! | 120                 | 8                 | expected search iterations (`f64`)         |
//! | 128                 | 8 * ceil(cap/64)  | bitmap: bit `i` set when slot `i` holds a key |
//! | 128 + bitmap        | cap * (8 + payload) | slots: key, then payload                 |
//!
//! Gaps follow the in-memory node's rule (`crate::mem::alex::data_node`): a gap's key is the
//! next key to its right (`u64::MAX` past the last), so the slot keys are sorted and a lookup
//! never reads the bitmap; gap payloads are zeros. The bitmap sits between the header and the
//! slots, so a large node's bitmap spans whole blocks of its own (paper 003 §4.1: "the bitmap
//! for one data node can cover at most 32 blocks"); a scan reads it one block at a time as it
//! goes, through `NodePages`.
//!
//! The lookup and insert walk here is the in-memory node's (`upper_bound_from`,
//! `lower_bound_from`, `put`, `insert_with_shifts`, `closest_gap`, `refill_gaps_before`,
//! `take`) over a node read block by block: the in-memory code works on slices it holds
//! whole, and on disk reading the whole node per operation is exactly what must not happen
//! (paper 003 Table 2 charges a lookup `log(M/B) + 1` blocks of the node, not `M/B`). A node
//! that is rebuilt (expanded, shrunk, split) is read whole and handed to the in-memory code
//! (`DataNode::from_parts`, `resize`, `DataNode::fresh`), which places its keys; `encode`
//! writes the result back.

use crate::error::{Error, Result};
use crate::mem::alex::cost::NodeCost;
use crate::mem::alex::data_node::DataNode;
use crate::mem::alex::model::LinearModel;
use crate::mem::alex::params::Derived;

use super::addr::{Addr, NONE};
use super::inner_node::{INVALID, LIVE};
use crate::disk::node_pages::NodePages;

/// Tag of a data node.
pub(crate) const TAG: u32 = u32::from_le_bytes(*b"ALXD");
/// Bytes of the header.
pub const DATA_HEADER_BYTES: usize = 128;
/// Largest capacity accepted from a file.
const MAX_CAPACITY: u64 = 1 << 40;

/// A data node's header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    pub(crate) state: u8,
    pub(crate) duplication: u8,
    pub(crate) model: LinearModel,
    pub(crate) capacity: u64,
    pub(crate) num_keys: u64,
    pub(crate) expansion_threshold: u64,
    pub(crate) contraction_threshold: u64,
    pub(crate) prev: u64,
    pub(crate) next: u64,
    pub(crate) inserts: u64,
    pub(crate) shifts: u64,
    pub(crate) search_iterations: u64,
    pub(crate) expected: NodeCost,
}

impl DataHeader {
    /// Slots.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Keys held.
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// Bytes of the bitmap.
    pub fn bitmap_bytes(&self) -> u64 {
        self.capacity.div_ceil(64) * 8
    }

    /// Bytes of the node: header, bitmap and slots of `slot_bytes` each.
    pub fn node_bytes(&self, slot_bytes: usize) -> u64 {
        DATA_HEADER_BYTES as u64 + self.bitmap_bytes() + self.capacity * slot_bytes as u64
    }

    /// Writes the header into `out[..DATA_HEADER_BYTES]`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&TAG.to_le_bytes());
        out[4] = self.state;
        out[5] = self.duplication;
        out[6..8].fill(0);
        let fields = [
            self.model.a.to_bits(),
            self.model.b.to_bits(),
            self.model.base,
            self.capacity,
            self.num_keys,
            self.expansion_threshold,
            self.contraction_threshold,
            self.prev,
            self.next,
            self.inserts,
            self.shifts,
            self.search_iterations,
            self.expected.cost.to_bits(),
            self.expected.shifts.to_bits(),
            self.expected.search_iterations.to_bits(),
        ];
        for (i, v) in fields.iter().enumerate() {
            out[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
    }

    /// Measured shifts per insert since the node was built.
    fn shifts_per_insert(&self) -> f64 {
        if self.inserts == 0 {
            0.0
        } else {
            self.shifts as f64 / self.inserts as f64
        }
    }

    /// Whether the node's inserts shift so much that it must split whatever its size (the
    /// in-memory node's "catastrophic" rule, on the statistics kept in the header).
    pub(crate) fn catastrophic(&self) -> bool {
        use crate::mem::alex::data_node::CATASTROPHIC_SHIFTS;
        (self.model.a != 0.0 && self.shifts_per_insert() > CATASTROPHIC_SHIFTS)
            || self.expected.shifts > CATASTROPHIC_SHIFTS
    }
}

/// Decodes a data node's header from `bytes` (its first [`DATA_HEADER_BYTES`]), read from
/// `file` at `block`; any inconsistency is [`Error::Corrupt`] naming both.
pub fn decode_data_header(bytes: &[u8], file: &str, block: u64) -> Result<DataHeader> {
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(block),
        what: format!("data node: {what}"),
    };
    if bytes.len() < DATA_HEADER_BYTES {
        return Err(bad(format!(
            "{} bytes, header needs {DATA_HEADER_BYTES}",
            bytes.len()
        )));
    }
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
    let tag = u32::from_le_bytes(bytes[0..4].try_into().expect("4"));
    if tag != TAG {
        return Err(bad(format!("tag {tag:#x}, not a data node")));
    }
    let f = |at: usize| f64::from_bits(u64_at(at));
    let h = DataHeader {
        state: bytes[4],
        duplication: bytes[5],
        model: LinearModel {
            a: f(8),
            b: f(16),
            base: u64_at(24),
        },
        capacity: u64_at(32),
        num_keys: u64_at(40),
        expansion_threshold: u64_at(48),
        contraction_threshold: u64_at(56),
        prev: u64_at(64),
        next: u64_at(72),
        inserts: u64_at(80),
        shifts: u64_at(88),
        search_iterations: u64_at(96),
        expected: NodeCost {
            cost: f(104),
            shifts: f(112),
            search_iterations: f(120),
        },
    };
    if h.state != LIVE && h.state != INVALID {
        return Err(bad(format!("state {}", h.state)));
    }
    if h.duplication > 31 {
        return Err(bad(format!("duplication {}", h.duplication)));
    }
    if h.capacity == 0 || h.capacity > MAX_CAPACITY {
        return Err(bad(format!("capacity {}", h.capacity)));
    }
    if h.num_keys > h.capacity {
        return Err(bad(format!("{} keys in {} slots", h.num_keys, h.capacity)));
    }
    if h.expansion_threshold > h.capacity || h.contraction_threshold > h.capacity {
        return Err(bad("thresholds past the capacity".into()));
    }
    let finite = [
        h.expected.cost,
        h.expected.shifts,
        h.expected.search_iterations,
    ]
    .iter()
    .all(|v| v.is_finite());
    if !(h.model.a.is_finite() && h.model.a >= 0.0 && h.model.b.is_finite() && finite) {
        return Err(bad("model or expected cost not finite".into()));
    }
    Ok(h)
}

/// A data node being read or changed through an operation's `NodePages`.
#[derive(Clone, Copy)]
pub(crate) struct Node {
    pub(crate) pos: u64,
    pub(crate) h: DataHeader,
    slot_bytes: usize,
}

/// Reads `pos..pos+len` bounds: a node must lie before the end of the file's nodes.
fn check_extent(pages: &NodePages, pos: u64, len: u64, end: u64, what: &str) -> Result<()> {
    if pos.checked_add(len).is_none_or(|e| e > end) {
        return Err(Error::Corrupt {
            file: pages.file().to_string(),
            block: Some(pages.block_of(pos)),
            what: format!("{what} of {len} bytes at {pos} runs past the nodes' end {end}"),
        });
    }
    Ok(())
}

impl Node {
    /// Reads the live data node at `pos` (its header only); `end` is where the file's nodes
    /// end.
    pub(crate) fn open(
        pages: &mut NodePages,
        pos: u64,
        slot_bytes: usize,
        end: u64,
    ) -> Result<Node> {
        let mut b = [0u8; DATA_HEADER_BYTES];
        check_extent(
            pages,
            pos,
            DATA_HEADER_BYTES as u64,
            end,
            "data node header",
        )?;
        pages.read(pos, &mut b)?;
        let block = pages.block_of(pos);
        let h = decode_data_header(&b, pages.file(), block)?;
        check_extent(pages, pos, h.node_bytes(slot_bytes), end, "data node")?;
        if h.state != LIVE {
            return Err(Error::Corrupt {
                file: pages.file().to_string(),
                block: Some(block),
                what: format!("the index points to the data node at {pos}, marked invalid"),
            });
        }
        Ok(Node { pos, h, slot_bytes })
    }

    fn cap(&self) -> usize {
        self.h.capacity as usize
    }

    fn bitmap_pos(&self) -> u64 {
        self.pos + DATA_HEADER_BYTES as u64
    }

    fn slot_pos(&self, i: usize) -> u64 {
        self.bitmap_pos() + self.h.bitmap_bytes() + (i * self.slot_bytes) as u64
    }

    /// The next data node, if any.
    pub(crate) fn next(&self, usable: usize) -> Option<Addr> {
        (self.h.next != NONE).then(|| Addr::decode(self.h.next, usable))?
    }

    /// Writes the header back (statistics, counts, links, state).
    pub(crate) fn write_header(&self, pages: &mut NodePages) -> Result<()> {
        let mut b = [0u8; DATA_HEADER_BYTES];
        self.h.encode(&mut b);
        pages.write(self.pos, &b)
    }

    /// The key in slot `i`.
    pub(crate) fn key(&self, pages: &mut NodePages, i: usize) -> Result<u64> {
        pages.u64(self.slot_pos(i))
    }

    /// Copies slot `i`'s payload into `out`.
    pub(crate) fn payload(&self, pages: &mut NodePages, i: usize, out: &mut [u8]) -> Result<()> {
        pages.read(self.slot_pos(i) + 8, &mut out[..self.slot_bytes - 8])
    }

    fn word(&self, pages: &mut NodePages, w: usize) -> Result<u64> {
        pages.u64(self.bitmap_pos() + 8 * w as u64)
    }

    fn set_word(&self, pages: &mut NodePages, w: usize, v: u64) -> Result<()> {
        pages.put_u64(self.bitmap_pos() + 8 * w as u64, v)
    }

    fn is_occupied(&self, pages: &mut NodePages, i: usize) -> Result<bool> {
        Ok(self.word(pages, i / 64)? >> (i % 64) & 1 == 1)
    }

    fn set_bit(&self, pages: &mut NodePages, i: usize, on: bool) -> Result<()> {
        let w = self.word(pages, i / 64)?;
        let bit = 1u64 << (i % 64);
        self.set_word(pages, i / 64, if on { w | bit } else { w & !bit })
    }

    /// The first occupied slot at or after `from`.
    pub(crate) fn next_occupied(
        &self,
        pages: &mut NodePages,
        from: usize,
    ) -> Result<Option<usize>> {
        if from >= self.cap() {
            return Ok(None);
        }
        let words = self.cap().div_ceil(64);
        let mut word = from / 64;
        let mut bits = self.word(pages, word)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                return Ok((i < self.cap()).then_some(i));
            }
            word += 1;
            if word == words {
                return Ok(None);
            }
            bits = self.word(pages, word)?;
        }
    }

    /// The model's slot for `key`.
    fn predict(&self, key: u64) -> usize {
        self.h.model.slot(key, self.cap())
    }

    /// The first slot in `lo..hi` whose key fails `keep` (keys are sorted), by binary search.
    fn partition(
        &self,
        pages: &mut NodePages,
        mut lo: usize,
        mut hi: usize,
        keep: impl Fn(u64) -> bool,
    ) -> Result<usize> {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if keep(self.key(pages, mid)?) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The first slot whose key is `> key`, searching exponentially from `from`, and the
    /// doublings it took.
    fn upper_bound_from(
        &self,
        pages: &mut NodePages,
        from: usize,
        key: u64,
    ) -> Result<(usize, u32)> {
        let mut bound = 1;
        let mut iterations = 0;
        let (lo, hi) = if key < self.key(pages, from)? {
            while bound <= from && key < self.key(pages, from - bound)? {
                bound *= 2;
                iterations += 1;
            }
            (from - bound.min(from), from - bound / 2)
        } else {
            let size = self.cap() - from;
            while bound < size && key >= self.key(pages, from + bound)? {
                bound *= 2;
                iterations += 1;
            }
            (from + bound / 2 + 1, from + bound.min(size))
        };
        Ok((self.partition(pages, lo, hi, |k| k <= key)?, iterations))
    }

    /// The first slot whose key is `>= key`, searching exponentially from `from`.
    fn lower_bound_from(&self, pages: &mut NodePages, from: usize, key: u64) -> Result<usize> {
        let mut bound = 1;
        let (lo, hi) = if self.key(pages, from)? >= key {
            while bound <= from && self.key(pages, from - bound)? >= key {
                bound *= 2;
            }
            (from - bound.min(from), from - bound / 2)
        } else {
            let size = self.cap() - from;
            while bound < size && self.key(pages, from + bound)? < key {
                bound *= 2;
            }
            (from + bound / 2 + 1, from + bound.min(size))
        };
        self.partition(pages, lo, hi, |k| k < key)
    }

    /// The slot holding `key`, given `upper`, the first slot whose key is `> key`.
    fn holding(&self, pages: &mut NodePages, upper: usize, key: u64) -> Result<Option<usize>> {
        let Some(at) = upper.checked_sub(1) else {
            return Ok(None);
        };
        if self.key(pages, at)? != key {
            return Ok(None);
        }
        if key < u64::MAX {
            return Ok(Some(at));
        }
        for i in (0..=at).rev() {
            if self.is_occupied(pages, i)? {
                return Ok((self.key(pages, i)? == key).then_some(i));
            }
        }
        Ok(None)
    }

    /// The slot holding `key`.
    pub(crate) fn find(&self, pages: &mut NodePages, key: u64) -> Result<Option<usize>> {
        let (upper, _) = self.upper_bound_from(pages, self.predict(key), key)?;
        self.holding(pages, upper, key)
    }

    /// The first occupied slot whose key is `>= key`.
    pub(crate) fn seek(&self, pages: &mut NodePages, key: u64) -> Result<Option<usize>> {
        if self.h.num_keys == 0 {
            return Ok(None);
        }
        let pos = self.lower_bound_from(pages, self.predict(key), key)?;
        self.next_occupied(pages, pos)
    }

    /// Where `key` is or would go: `Ok(found slot)` or `Err((predicted, upper, iterations))`.
    pub(crate) fn locate(
        &self,
        pages: &mut NodePages,
        key: u64,
    ) -> Result<std::result::Result<usize, (usize, usize, u32)>> {
        let predicted = self.predict(key);
        let (upper, iterations) = self.upper_bound_from(pages, predicted, key)?;
        Ok(match self.holding(pages, upper, key)? {
            Some(at) => Ok(at),
            None => Err((predicted, upper, iterations)),
        })
    }

    /// Overwrites slot `at`'s payload.
    pub(crate) fn set_payload(
        &self,
        pages: &mut NodePages,
        at: usize,
        payload: &[u8],
    ) -> Result<()> {
        pages.write(self.slot_pos(at) + 8, payload)
    }

    /// Stores the new `key` (absent; the node below its expansion threshold) given
    /// `Node::locate`'s miss, shifting towards the closest gap when its slot is taken. The
    /// header's counts and statistics change in memory only (`Node::write_header`).
    pub(crate) fn put(
        &mut self,
        pages: &mut NodePages,
        (predicted, upper, iterations): (usize, usize, u32),
        key: u64,
        payload: &[u8],
    ) -> Result<()> {
        self.h.search_iterations += u64::from(iterations);
        let cap = self.cap();
        let pos = if predicted <= upper || upper == cap || self.is_occupied(pages, upper)? {
            upper
        } else {
            let next = self.next_occupied(pages, upper)?.unwrap_or(cap);
            predicted.min(next - 1)
        };
        if pos < cap && !self.is_occupied(pages, pos)? {
            self.write_slot(pages, pos, key, payload)?;
            self.set_bit(pages, pos, true)?;
            self.refill_gaps_before(pages, pos)?;
        } else {
            self.insert_with_shifts(pages, pos, key, payload)?;
        }
        self.h.num_keys += 1;
        self.h.inserts += 1;
        Ok(())
    }

    fn write_slot(&self, pages: &mut NodePages, i: usize, key: u64, payload: &[u8]) -> Result<()> {
        let mut b = Vec::with_capacity(self.slot_bytes);
        b.extend_from_slice(&key.to_le_bytes());
        b.extend_from_slice(payload);
        pages.write(self.slot_pos(i), &b)
    }

    /// Gaps just before `pos` take the key at `pos`.
    fn refill_gaps_before(&self, pages: &mut NodePages, pos: usize) -> Result<()> {
        let key = self.key(pages, pos)?;
        let mut j = pos;
        while j > 0 && !self.is_occupied(pages, j - 1)? {
            j -= 1;
            pages.put_u64(self.slot_pos(j), key)?;
        }
        Ok(())
    }

    /// Moves slots `from..to` by one slot (right when `right`), payloads with their keys.
    fn move_slots(&self, pages: &mut NodePages, from: usize, to: usize, right: bool) -> Result<()> {
        if from >= to {
            return Ok(());
        }
        let mut b = vec![0u8; (to - from) * self.slot_bytes];
        pages.read(self.slot_pos(from), &mut b)?;
        let dest = if right { from + 1 } else { from - 1 };
        pages.write(self.slot_pos(dest), &b)
    }

    /// Inserts `key` so that it ends just before the entry now at `pos`, moving entries one
    /// slot towards the closest gap.
    fn insert_with_shifts(
        &mut self,
        pages: &mut NodePages,
        pos: usize,
        key: u64,
        payload: &[u8],
    ) -> Result<()> {
        let gap = self.closest_gap(pages, pos)?;
        self.set_bit(pages, gap, true)?;
        if gap >= pos {
            self.move_slots(pages, pos, gap, true)?;
            self.h.shifts += (gap - pos) as u64;
            self.write_slot(pages, pos, key, payload)?;
            self.refill_gaps_before(pages, pos)
        } else {
            self.move_slots(pages, gap + 1, pos, false)?;
            self.h.shifts += (pos - gap - 1) as u64;
            self.write_slot(pages, pos - 1, key, payload)?;
            self.refill_gaps_before(pages, gap)
        }
    }

    /// The free slot nearest to `pos` (`pos <= capacity`); the node always has one.
    fn closest_gap(&self, pages: &mut NodePages, pos: usize) -> Result<usize> {
        let cap = self.cap();
        let words = cap.div_ceil(64);
        let mut right = None;
        if pos < cap {
            let mut word = pos / 64;
            let mut free = !self.word(pages, word)? & (u64::MAX << (pos % 64));
            while free == 0 && word + 1 < words {
                word += 1;
                free = !self.word(pages, word)?;
            }
            let i = word * 64 + free.trailing_zeros() as usize;
            right = (free != 0 && i < cap).then_some(i);
        }
        let limit = right.map_or(usize::MAX, |r| r - pos);
        let mut left = None;
        if pos > 0 {
            let mut word = (pos - 1) / 64;
            let shift = 63 - (pos - 1) % 64;
            let mut free = (!self.word(pages, word)?) << shift >> shift;
            while free == 0 && word > 0 && (pos - word * 64) <= limit {
                word -= 1;
                free = !self.word(pages, word)?;
            }
            left = (free != 0).then(|| word * 64 + 63 - free.leading_zeros() as usize);
        }
        match (left, right) {
            (Some(l), Some(r)) => Ok(if pos - l < r - pos { l } else { r }),
            (Some(l), None) => Ok(l),
            (None, Some(r)) => Ok(r),
            (None, None) => Err(Error::Corrupt {
                file: pages.file().to_string(),
                block: Some(pages.block_of(self.pos)),
                what: "data node without a free slot".into(),
            }),
        }
    }

    /// Removes the key in slot `pos`, leaving a gap; the header's count changes in memory.
    pub(crate) fn take(&mut self, pages: &mut NodePages, pos: usize) -> Result<()> {
        self.set_bit(pages, pos, false)?;
        let next = if pos + 1 < self.cap() {
            self.key(pages, pos + 1)?
        } else {
            u64::MAX
        };
        pages.write(self.slot_pos(pos), &next.to_le_bytes())?;
        pages.write(self.slot_pos(pos) + 8, &vec![0u8; self.slot_bytes - 8])?;
        self.refill_gaps_before(pages, pos)?;
        self.h.num_keys -= 1;
        Ok(())
    }

    /// Reads the whole node (one request) into an in-memory node whose values index
    /// `payloads` (`payload` bytes each), for the in-memory code to rebuild.
    pub(crate) fn read_whole(
        &self,
        pages: &mut NodePages,
        d: &Derived,
    ) -> Result<(DataNode<u64, u32>, Vec<u8>)> {
        let bytes = self.h.node_bytes(self.slot_bytes);
        pages.load(
            pages.block_of(self.pos),
            pages.block_of(self.pos + bytes - 1),
        )?;
        let cap = self.cap();
        let mut raw = vec![0u8; (bytes - DATA_HEADER_BYTES as u64) as usize];
        pages.read(self.bitmap_pos(), &mut raw)?;
        let (bitmap_raw, slots) = raw.split_at(self.h.bitmap_bytes() as usize);
        let bitmap: Box<[u64]> = bitmap_raw
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8")))
            .collect();
        let payload = self.slot_bytes - 8;
        let mut keys = Vec::with_capacity(cap);
        let mut values = vec![0u32; cap];
        let mut payloads = Vec::with_capacity(self.h.num_keys as usize * payload);
        for (i, slot) in slots.chunks_exact(self.slot_bytes).enumerate() {
            keys.push(u64::from_le_bytes(slot[..8].try_into().expect("8")));
            if bitmap[i / 64] >> (i % 64) & 1 == 1 {
                values[i] = (payloads.len() / payload.max(1)) as u32;
                payloads.extend_from_slice(&slot[8..]);
            }
        }
        let counted: u64 = bitmap.iter().map(|w| u64::from(w.count_ones())).sum();
        if counted != self.h.num_keys || keys.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::Corrupt {
                file: pages.file().to_string(),
                block: Some(pages.block_of(self.pos)),
                what: format!(
                    "data node at {}: {counted} bits set for {} keys, or slot keys out of order",
                    self.pos, self.h.num_keys
                ),
            });
        }
        let mut node = DataNode::from_parts(
            self.h.model,
            keys.into_boxed_slice(),
            values.into_boxed_slice(),
            bitmap,
            self.h.expected,
            d,
        );
        node.duplication = self.h.duplication;
        Ok((node, payloads))
    }
}

/// The bytes of an in-memory node as a live on-disk data node with the given neighbours;
/// `payload_of(value, out)` writes the payload of the entry whose value is `value`.
pub(crate) fn encode(
    node: &DataNode<u64, u32>,
    payload: usize,
    prev: u64,
    next: u64,
    payload_of: &mut dyn FnMut(u32, &mut [u8]),
) -> Vec<u8> {
    let h = DataHeader {
        state: LIVE,
        duplication: node.duplication,
        model: node.model,
        capacity: node.capacity() as u64,
        num_keys: node.num_keys as u64,
        expansion_threshold: node.expansion_threshold() as u64,
        contraction_threshold: node.contraction_threshold() as u64,
        prev,
        next,
        inserts: 0,
        shifts: 0,
        search_iterations: 0,
        expected: node.expected,
    };
    let slot = 8 + payload;
    let mut out = vec![0u8; h.node_bytes(slot) as usize];
    h.encode(&mut out);
    let bitmap = node.bitmap();
    let mut at = DATA_HEADER_BYTES;
    for w in bitmap {
        out[at..at + 8].copy_from_slice(&w.to_le_bytes());
        at += 8;
    }
    for (i, key) in node.keys.iter().enumerate() {
        out[at..at + 8].copy_from_slice(&key.to_le_bytes());
        if bitmap[i / 64] >> (i % 64) & 1 == 1 {
            payload_of(node.values[i], &mut out[at + 8..at + slot]);
        }
        at += slot;
    }
    out
}
