//! Building subtrees: the bulk load, and every node a write creates (a conflict's two-entry
//! child, a rebuilt subtree).
//!
//! The decisions are the in-memory LIPP's ([`crate::mem::lipp::plan`]: slot count, FMCD model,
//! runs of keys sharing a slot), so both build the same tree from the same keys. A subtree is
//! laid out breadth first from its root's position: when a node is written, the size of every
//! child follows from its key count alone, so the children's positions are known and the
//! nodes go out in position order, one sequential stream (paper 003 §4.1: nodes stored
//! contiguously; breadth first also packs the small upper nodes of a subtree together). The
//! bulk load streams the whole file through an [`Appender`] in large requests and asks for a
//! payload (`payload_of(i, &keys[i], out)`) when its slot is written; a write's new subtree
//! goes through the operation's [`crate::disk::node_pages::NodePages`].

use std::collections::VecDeque;

use crate::error::Result;
use crate::io::{AlignedBuf, IoClass, Storage};
use crate::key::{check_strictly_sorted, Key};
use crate::mem::lipp::plan::{plan, runs, slot_count};
use crate::mem::lipp::LippParams;

use super::meta::Meta;
use super::node::{encode_addr, NodeHeader, DATA, NODE, NODE_HEADER};
use super::params::DiskLippParams;
use super::tree::{DiskLipp, Resident};
use crate::disk::node_pages::Appender;

/// What writing a subtree made.
pub(crate) struct Written {
    /// Nodes written.
    pub(crate) nodes: u64,
    /// Their bytes (the position after the last one is the start plus these).
    pub(crate) bytes: u64,
}

/// Writes the subtree of `keys` (sorted distinct) with its root at position `at`, giving each
/// node's bytes to `sink` in position order; `payload_of(i, out)` fills the payload of
/// `keys[i]`. `headers`, when given, receives every node's position and header.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_subtree(
    keys: &[u64],
    payload_of: &mut dyn FnMut(usize, &mut [u8]),
    params: &LippParams,
    at: u64,
    usable: usize,
    payload_size: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    mut headers: Option<&mut Resident>,
) -> Result<Written> {
    let slot_bytes = 9 + payload_size;
    let node_bytes = |n: usize| (NODE_HEADER + slot_count(n) * slot_bytes) as u64;
    let mut queue = VecDeque::from([(0usize, keys.len())]);
    let (mut pos, mut next) = (at, at + node_bytes(keys.len()));
    let mut written = Written { nodes: 0, bytes: 0 };
    let mut images = Vec::new();
    while let Some((start, end)) = queue.pop_front() {
        images.clear();
        images.extend(keys[start..end].iter().map(|k| k.to_model()));
        let (model, slots) = plan(&images, params);
        let header = NodeHeader {
            slots: slots as u64,
            model,
            size: (end - start) as u64,
            build_size: (end - start) as u64,
            inserts: 0,
            conflicts: 0,
        };
        let mut bytes = vec![0u8; NODE_HEADER + slots * slot_bytes];
        header.encode(&mut bytes);
        for (slot, s, e) in runs(&images, &model, slots) {
            let at = NODE_HEADER + slot * slot_bytes;
            let out = &mut bytes[at..at + slot_bytes];
            if e == s + 1 {
                out[0] = DATA;
                out[1..9].copy_from_slice(&keys[start + s].to_le_bytes());
                payload_of(start + s, &mut out[9..]);
            } else {
                out[0] = NODE;
                out[1..9].copy_from_slice(&encode_addr(next, usable).to_le_bytes());
                next += node_bytes(e - s);
                queue.push_back((start + s, start + e));
            }
        }
        if let Some(h) = headers.as_deref_mut() {
            h.insert(pos, header);
        }
        sink(&bytes)?;
        pos += bytes.len() as u64;
        written.nodes += 1;
        written.bytes += bytes.len() as u64;
    }
    debug_assert_eq!(pos, next);
    Ok(written)
}

impl DiskLipp {
    /// Builds the index in the file `name` of `storage` (created or truncated) from strictly
    /// ascending `keys`; `payload_of(i, &keys[i], out)` fills entry `i`'s payload
    /// (`out.len() == params.payload_size`). Open for writing afterwards, node headers on disk
    /// (reopen with `inner_in_memory` to keep them in memory).
    ///
    /// Errors: [`crate::Error::OutOfOrder`], [`crate::Error::DuplicateKey`],
    /// [`crate::Error::InvalidParameter`]
    /// (bad LIPP parameters, a payload so large a slot does not fit a block), and the device's
    /// I/O errors.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[u64],
        mut payload_of: impl FnMut(usize, &u64, &mut [u8]),
        params: DiskLippParams,
    ) -> Result<DiskLipp> {
        params.check(storage.block_size())?;
        check_strictly_sorted(keys)?;
        let dev = storage.create(name)?;
        let usable = dev.payload_size();
        let first = usable as u64;
        let mut appender = Appender::new(dev.as_ref(), first, IoClass::Leaf);
        let mut sink = |bytes: &[u8]| appender.write(dev.as_ref(), bytes);
        let mut payloads = |i: usize, out: &mut [u8]| payload_of(i, &keys[i], out);
        let written = write_subtree(
            keys,
            &mut payloads,
            &params.lipp,
            first,
            usable,
            params.payload_size,
            &mut sink,
            None,
        )?;
        let end = appender.pos();
        appender.finish(dev.as_ref())?;
        let meta = Meta {
            key_name: u64::NAME.to_string(),
            key_size: u64::SIZE as u32,
            payload_size: params.payload_size as u32,
            block_size: dev.block_size() as u32,
            params: params.lipp,
            root: first,
            end,
            entries: keys.len() as u64,
            nodes: written.nodes,
            live_bytes: written.bytes,
            dead_bytes: 0,
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
        };
        let mut block = AlignedBuf::zeroed(dev.block_size());
        meta.encode(&mut block[..usable]);
        dev.write_blocks(0, &mut block, IoClass::Header)?;
        dev.sync()?;
        Ok(DiskLipp::from_parts(dev, meta, None, true))
    }
}
