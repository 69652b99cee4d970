//! The meta chain: the in-memory part (model, directory, split list) as it is persisted.
//!
//! Paper 003 §6.2 keeps its indexes' inner parts in memory and leaves the question of reopening
//! them open; ours are rebuilt from the file without reading a leaf. [`Meta`] is encoded as one
//! byte stream ([`encode_meta`], [`decode_meta`]) written by every flush to a chain of fresh
//! *meta blocks* (the previous chain stays intact until the header naming the new one is
//! synced, then its blocks go to the free list).
//!
//! Byte layout of a meta block (usable bytes; the node header of
//! [`crate::disk::btree::node`] with kind 4):
//!
//! | offset | size      | field                                   |
//! |--------|-----------|-----------------------------------------|
//! | 0      | 1         | kind: 4 = meta block                    |
//! | 1      | 3         | reserved, 0                             |
//! | 4      | 4         | bytes of the stream in this block       |
//! | 8      | 8         | next meta block, `u64::MAX` = none      |
//! | 16     | `count`   | the stream's next bytes                 |
//!
//! The stream (little-endian, `ks` = key size):
//!
//! | size            | field                                                            |
//! |-----------------|------------------------------------------------------------------|
//! | 1               | directory kind: 0 = a run of blocks, 1 = a block per slot        |
//! | 8 or `4*slots`  | kind 0: the first slot's block (slot `j` is block `first + j`); kind 1: each slot's block, `u32` |
//! | 8               | segments `s`                                                     |
//! | `32 * s`        | per segment: first key (model space) `u64`, slope `f64`, intercept `f64`, smallest prediction `lo` `f64` |
//! | `4 * (slots-1)` | per boundary `j = 1..slots`: offset `g_j - j * 2^24`, `i32`; `i32::MAX` = never passed |
//! | 8               | ties `t`                                                         |
//! | `12 * t`        | per tie: slot `u32`, first key (model space) `u64`               |
//! | 8               | split leaves `d`                                                 |
//! | `(ks + 8) * d`  | per split leaf: first key, slot `u32`, block `u32`               |
//!
//! [`decode_meta`] checks everything a lookup relies on: segments ascending with finite, non-
//! negative slopes and non-decreasing `lo`; boundaries non-decreasing, the never-passed ones
//! only at the end; ties ascending by slot on passable boundaries; split leaves ascending by key with
//! non-decreasing slots; every block a leaf block of the file, none named twice; slots plus
//! split leaves equal to the header's leaves. Anything else is [`Error::Corrupt`] naming the
//! file and the chain's first block.

use crate::codec::{Decoder, Encoder};
use crate::disk::btree::node::{NODE_HEADER, NO_BLOCK};
use crate::disk::header_fields::corrupt_at as corrupt;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass};
use crate::key::Key;
use crate::model::linear::LinearModel;

use super::model::{LeafModel, ModelSegment, Tie, NEVER, UNITS};

/// Kind byte of a meta block.
pub(crate) const KIND_META: u8 = 4;

/// Where each slot's leaf lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directory {
    /// Slot `j` is block `first + j` (after a bulk load: the leaves are contiguous).
    Run {
        /// Block of slot 0.
        first: u64,
    },
    /// Slot `j` is block `blocks[j]` (after a retrain, when splits put leaves elsewhere).
    Blocks(Vec<u32>),
}

impl Directory {
    /// Block of slot `slot`.
    #[inline]
    pub fn block(&self, slot: u64) -> u64 {
        match self {
            Directory::Run { first } => first + slot,
            Directory::Blocks(blocks) => u64::from(blocks[slot as usize]),
        }
    }

    /// Heap bytes.
    pub fn memory_bytes(&self) -> usize {
        match self {
            Directory::Run { .. } => 0,
            Directory::Blocks(b) => b.capacity() * 4,
        }
    }
}

/// A leaf made by a split since the model was learned: its first key when it was made, the
/// slot the model sends its keys to, and its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitLeaf<K> {
    /// Its keys are `>= key` (and below the next split leaf of the same slot).
    pub key: K,
    /// The slot it belongs to.
    pub slot: u32,
    /// Its block.
    pub block: u32,
}

/// The in-memory part of the index.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta<K> {
    /// The model.
    pub model: LeafModel,
    /// Slot to block.
    pub directory: Directory,
    /// Split leaves by first key.
    pub splits: Vec<SplitLeaf<K>>,
}

/// Encodes `meta` as the stream of the module docs.
pub fn encode_meta<K: Key>(meta: &Meta<K>) -> Vec<u8> {
    let mut e = Encoder::new();
    match &meta.directory {
        Directory::Run { first } => {
            e.u8(0);
            e.u64(*first);
        }
        Directory::Blocks(blocks) => {
            e.u8(1);
            blocks.iter().for_each(|&b| e.u32(b));
        }
    }
    e.u64(meta.model.segments.len() as u64);
    for s in &meta.model.segments {
        e.u64(s.model.x0);
        e.f64(s.model.slope);
        e.f64(s.model.intercept);
        e.f64(s.lo);
    }
    for &o in &meta.model.offsets {
        e.u32(o as u32);
    }
    e.u64(meta.model.ties.len() as u64);
    for t in &meta.model.ties {
        e.u32(t.slot as u32);
        e.u64(t.first);
    }
    e.u64(meta.splits.len() as u64);
    for d in &meta.splits {
        e.key(&d.key);
        e.u32(d.slot);
        e.u32(d.block);
    }
    e.into_bytes()
}

/// Decodes and validates a meta stream for a file of `blocks` blocks whose header records
/// `slots` slots and `leaves` leaves; errors name `file` and block `head`.
pub fn decode_meta<K: Key>(
    bytes: &[u8],
    file: &str,
    head: u64,
    slots: u64,
    leaves: u64,
    blocks: u64,
) -> Result<Meta<K>> {
    decode_inner(bytes, file, slots, leaves, blocks).map_err(|e| match e {
        Error::Corrupt {
            file,
            block: None,
            what,
        } => Error::Corrupt {
            file,
            block: Some(head),
            what: format!("meta stream: {what}"),
        },
        other => other,
    })
}

fn decode_inner<K: Key>(
    bytes: &[u8],
    file: &str,
    slots: u64,
    leaves: u64,
    blocks: u64,
) -> Result<Meta<K>> {
    let mut d = Decoder::new(file, bytes);
    let leaf_block = |b: u64| b >= 1 && b < blocks;
    let mut named: Vec<u64> = Vec::new();
    let directory = match d.u8()? {
        0 => {
            let first = d.u64()?;
            if !leaf_block(first) || first.checked_add(slots).is_none_or(|end| end > blocks) {
                return Err(d.corrupt(format!(
                    "a run of {slots} leaves from block {first} leaves the file"
                )));
            }
            named.extend(first..first + slots);
            Directory::Run { first }
        }
        1 => {
            if (d.remaining() as u64) < slots.saturating_mul(4) {
                return Err(d.corrupt(format!("{slots} slots do not fit the stream")));
            }
            let mut out = Vec::with_capacity(slots as usize);
            for _ in 0..slots {
                let b = d.u32()?;
                if !leaf_block(u64::from(b)) {
                    return Err(d.corrupt(format!("slot block {b} is not a block of the file")));
                }
                out.push(b);
            }
            named.extend(out.iter().map(|&b| u64::from(b)));
            Directory::Blocks(out)
        }
        other => return Err(d.corrupt(format!("unknown directory kind {other}"))),
    };
    let n = d.count(32, "segment count")?;
    let mut segments: Vec<ModelSegment> = Vec::with_capacity(n);
    for _ in 0..n {
        let x0 = d.u64()?;
        let slope = d.f64_finite("slope")?;
        let intercept = d.f64_finite("intercept")?;
        let lo = d.f64_finite("lo")?;
        if slope < 0.0 {
            return Err(d.corrupt(format!("segment with slope {slope}")));
        }
        if let Some(prev) = segments.last() {
            if prev.model.x0 >= x0 || prev.lo > lo {
                return Err(d.corrupt("segments out of order"));
            }
        }
        segments.push(ModelSegment {
            model: LinearModel {
                x0,
                slope,
                intercept,
            },
            lo,
        });
    }
    if slots == 0 || (d.remaining() as u64) < (slots - 1).saturating_mul(4) {
        return Err(d.corrupt(format!("{slots} slots' boundaries do not fit the stream")));
    }
    let mut offsets: Vec<i32> = Vec::with_capacity(slots as usize - 1);
    let mut last_g = i64::MIN;
    for j in 1..slots {
        let o = d.u32()? as i32;
        if let Some(&prev) = offsets.last() {
            if prev == NEVER && o != NEVER {
                return Err(d.corrupt(format!("boundary {j} passable after a never-passed one")));
            }
        }
        if o != NEVER {
            let g = (j * UNITS) as i64 + i64::from(o);
            if g < last_g {
                return Err(d.corrupt(format!("boundary {j} below the one before")));
            }
            last_g = g;
        }
        offsets.push(o);
    }
    let t = d.count(12, "tie count")?;
    let mut ties: Vec<Tie> = Vec::with_capacity(t);
    for _ in 0..t {
        let slot = u64::from(d.u32()?);
        let first = d.u64()?;
        let passable = slot >= 1 && slot < slots && offsets[slot as usize - 1] != NEVER;
        if !passable || ties.last().is_some_and(|p| p.slot >= slot) {
            return Err(d.corrupt(format!("tie on boundary {slot} of {slots}")));
        }
        ties.push(Tie { slot, first });
    }
    let n = d.count(K::SIZE + 8, "split leaf count")?;
    if slots.checked_add(n as u64) != Some(leaves) {
        return Err(d.corrupt(format!(
            "{slots} slots and {n} split leaves, the header says {leaves} leaves"
        )));
    }
    let mut splits: Vec<SplitLeaf<K>> = Vec::with_capacity(n);
    for _ in 0..n {
        let key: K = d.key()?;
        let (slot, block) = (d.u32()?, d.u32()?);
        if key.invalid_reason().is_some()
            || u64::from(slot) >= slots
            || !leaf_block(u64::from(block))
        {
            return Err(d.corrupt(format!(
                "split leaf {key:?} of slot {slot} in block {block}"
            )));
        }
        if let Some(prev) = splits.last() {
            if !prev.key.key_lt(&key) || prev.slot > slot {
                return Err(d.corrupt("split leaves out of order"));
            }
        }
        named.push(u64::from(block));
        splits.push(SplitLeaf { key, slot, block });
    }
    d.finish()?;
    named.sort_unstable();
    if let Some(w) = named.windows(2).find(|w| w[0] == w[1]) {
        return Err(d.corrupt(format!("block {} holds two leaves", w[0])));
    }
    let mut model = LeafModel {
        segments,
        slots,
        offsets,
        ties,
        max_dev: 0,
        reachable: 1,
    };
    model.finish_offsets();
    Ok(Meta {
        model,
        directory,
        splits,
    })
}

/// Stream bytes one meta block holds.
pub(crate) fn bytes_per_block(usable: usize) -> usize {
    usable - NODE_HEADER
}

/// Writes `stream` into `chain` (one block each, in order; `chain.len()` is enough blocks).
pub(crate) fn write_chain(
    device: &dyn BlockDevice,
    usable: usize,
    chain: &[u64],
    stream: &[u8],
) -> Result<()> {
    let per = bytes_per_block(usable);
    let mut buf = AlignedBuf::zeroed(device.block_size());
    for (i, &block) in chain.iter().enumerate() {
        let part = &stream[(i * per).min(stream.len())..((i + 1) * per).min(stream.len())];
        buf.fill(0);
        buf[0] = KIND_META;
        buf[4..8].copy_from_slice(&(part.len() as u32).to_le_bytes());
        let next = chain.get(i + 1).copied().unwrap_or(NO_BLOCK);
        buf[8..16].copy_from_slice(&next.to_le_bytes());
        buf[NODE_HEADER..NODE_HEADER + part.len()].copy_from_slice(part);
        device.write_blocks(block, &mut buf, IoClass::Model)?;
    }
    Ok(())
}

/// Decodes one meta block of a file of `blocks` blocks: its stream bytes and next block.
pub fn decode_meta_block<'a>(
    bytes: &'a [u8],
    usable: usize,
    block: u64,
    blocks: u64,
    file: &str,
) -> Result<(&'a [u8], Option<u64>)> {
    if bytes.len() < usable || usable <= NODE_HEADER {
        return Err(corrupt(file, block, "meta block shorter than a block"));
    }
    if bytes[0] != KIND_META || bytes[1..4] != [0, 0, 0] {
        return Err(corrupt(
            file,
            block,
            format!("kind {} where the meta chain has a block", bytes[0]),
        ));
    }
    let count = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")) as usize;
    if count > bytes_per_block(usable) {
        return Err(corrupt(
            file,
            block,
            format!("{count} stream bytes in one block"),
        ));
    }
    let next = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    if next != NO_BLOCK && (next == 0 || next >= blocks || next == block) {
        return Err(corrupt(
            file,
            block,
            format!("next meta block {next} is not in the file"),
        ));
    }
    Ok((
        &bytes[NODE_HEADER..NODE_HEADER + count],
        (next != NO_BLOCK).then_some(next),
    ))
}

/// Reads the chain of `count` blocks from `head` holding `len` stream bytes; returns the
/// stream and the chain's blocks.
pub(crate) fn read_chain(
    device: &dyn BlockDevice,
    usable: usize,
    head: u64,
    count: u64,
    len: u64,
    blocks: u64,
) -> Result<(Vec<u8>, Vec<u64>)> {
    let file = device.name();
    let mut stream = Vec::with_capacity(len as usize);
    let mut chain = Vec::new();
    let mut buf = AlignedBuf::zeroed(device.block_size());
    let mut next = Some(head);
    while let Some(block) = next {
        if chain.len() as u64 >= count {
            return Err(corrupt(
                file,
                block,
                format!("the meta chain is longer than the header's {count} blocks"),
            ));
        }
        device.read_blocks(block, &mut buf, IoClass::Model)?;
        let (part, link) = decode_meta_block(&buf[..usable], usable, block, blocks, file)?;
        stream.extend_from_slice(part);
        chain.push(block);
        next = link;
    }
    if chain.len() as u64 != count || stream.len() as u64 != len {
        return Err(corrupt(
            file,
            head,
            format!(
                "the meta chain holds {} bytes in {} blocks, the header says {len} in {count}",
                stream.len(),
                chain.len()
            ),
        ));
    }
    Ok((stream, chain))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta<u64> {
        Meta {
            model: {
                let mut model = LeafModel {
                    segments: vec![ModelSegment {
                        model: LinearModel {
                            x0: 10,
                            slope: 0.5,
                            intercept: 1.0,
                        },
                        lo: 1.0,
                    }],
                    slots: 3,
                    offsets: vec![-3, 7],
                    ties: vec![Tie { slot: 2, first: 30 }],
                    max_dev: 0,
                    reachable: 1,
                };
                model.finish_offsets();
                model
            },
            directory: Directory::Blocks(vec![1, 2, 5]),
            splits: vec![SplitLeaf {
                key: 40,
                slot: 1,
                block: 4,
            }],
        }
    }

    #[test]
    fn round_trip_and_validation() {
        let bytes = encode_meta(&sample());
        assert_eq!(
            decode_meta::<u64>(&bytes, "f", 7, 3, 4, 8).unwrap(),
            sample()
        );
        let run = Meta {
            directory: Directory::Run { first: 1 },
            ..sample()
        };
        let bytes_run = encode_meta(&run);
        assert_eq!(
            decode_meta::<u64>(&bytes_run, "f", 7, 3, 4, 8).unwrap(),
            run
        );
        let err_block = |b: &[u8], leaves| match decode_meta::<u64>(b, "f", 7, 3, leaves, 8) {
            Err(Error::Corrupt { block, .. }) => block,
            other => panic!("{other:?}"),
        };
        assert_eq!(err_block(&bytes, 5), Some(7), "leaf count");
        let mut overlap = bytes_run.clone();
        overlap[1] = 2; // the run 2..5 holds the split leaf's block 4
        assert_eq!(err_block(&overlap, 4), Some(7));
        let mut bad = bytes.clone();
        bad[9] = 4; // slot 2's block is the split leaf's (directory from byte 1)
        assert_eq!(err_block(&bad, 4), Some(7));
        assert_eq!(err_block(&bytes[..bytes.len() - 1], 4), Some(7));
    }

    #[test]
    fn block_validation() {
        let mut buf = vec![0u8; 508];
        buf[0] = KIND_META;
        buf[4] = 3;
        buf[8..16].copy_from_slice(&NO_BLOCK.to_le_bytes());
        assert_eq!(decode_meta_block(&buf, 508, 2, 9, "f").unwrap().1, None);
        buf[4] = 255;
        buf[5] = 1;
        assert!(decode_meta_block(&buf, 508, 2, 9, "f").is_err());
    }
}
