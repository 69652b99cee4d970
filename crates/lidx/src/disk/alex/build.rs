//! Bulk load: the in-memory ALEX decides, the disk holds what it decided.
//!
//! Paper 003 bulk loads ALEX with the original algorithm (§5.2) and lays its nodes out on disk
//! (§4.1). We run the in-memory ALEX's bulk load (`crate::mem::alex::build`: the cost model,
//! the fanout tree, the models, every data node's gapped array) on the keys with their ranks as
//! values, with ALEX's limits derived for the on-disk slot size, then write its nodes: data
//! nodes in key order one after another from block 1 of `<name>.data` (a node continues into
//! the next block where the last one ends), inner nodes breadth first from block 1 of
//! `<name>.inner`, so the small upper levels share blocks, then the two header blocks. Both
//! files are written front to back in large requests; a payload is asked for
//! (`payload_of(i, &keys[i], out)`) when its data node is written.
//!
//! The in-memory tree needs about `12 / init_density` bytes per key while the files are
//! written (the ranks are `u32`: at most 2^32 - 1 keys).

use std::collections::VecDeque;

use crate::disk::WriteBreakdown;
use crate::error::{Error, Result};
use crate::io::{IoClass, Storage};
use crate::key::check_strictly_sorted;
use crate::mem::alex::build::bulk_load;
use crate::mem::alex::inner_node::LEAF;

use super::addr::{Addr, NONE};
use super::data_node::{self, DATA_HEADER_BYTES};
use super::inner_node::{InnerHeader, INNER_HEADER_BYTES, LIVE};
use super::meta::{encode_data_header, Meta, DATA_HEADER_BYTES as FILE_HEADER_BYTES};
use super::params::DiskAlexParams;
use super::tree::{data_file, inner_file, usable_of, DiskAlex, DiskAlexSmos};
use crate::disk::node_pages::Appender;

impl DiskAlex {
    /// Builds the index `name` in `storage` (files `<name>.inner` and `<name>.data`, created
    /// or truncated) from strictly ascending `keys`; `payload_of(i, &keys[i], out)` fills entry
    /// `i`'s payload (`out.len() == params.payload_size`). Open for writing afterwards, inner
    /// nodes on disk.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidParameter`]
    /// (bad parameters, more than 2^32 - 1 keys), and the devices' I/O errors.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[u64],
        mut payload_of: impl FnMut(usize, &u64, &mut [u8]),
        params: DiskAlexParams,
    ) -> Result<DiskAlex> {
        let derived = params.check(storage.block_size())?;
        check_strictly_sorted(keys)?;
        if keys.len() >= u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "keys",
                value: keys.len().to_string(),
                expected: "fewer than 2^32 - 1 keys",
            });
        }
        let entries = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        let parts = bulk_load(entries, derived);

        let usable = usable_of(storage.block_size()) as u64;
        let slot = params.slot_bytes() as u64;
        let mut data_pos = Vec::with_capacity(parts.leaves.len());
        let mut end = usable;
        for leaf in &parts.leaves {
            data_pos.push(end);
            end += DATA_HEADER_BYTES as u64
                + 8 * leaf.bitmap().len() as u64
                + leaf.capacity() as u64 * slot;
        }
        let data_end = end;
        let mut order = Vec::new();
        let mut inner_pos = vec![0u64; parts.inners.len()];
        let mut end = usable;
        if parts.root & LEAF == 0 {
            let mut queue = VecDeque::from([parts.root]);
            while let Some(id) = queue.pop_front() {
                inner_pos[id as usize] = end;
                order.push(id);
                let node = &parts.inners[id as usize];
                end += (INNER_HEADER_BYTES + 8 * node.children.len()) as u64;
                let mut last = None;
                for &c in &node.children {
                    if last != Some(c) && c & LEAF == 0 {
                        queue.push_back(c);
                    }
                    last = Some(c);
                }
            }
        }
        let inner_end = end;
        let child_addr = |c: u32| {
            if c & LEAF != 0 {
                Addr::data(data_pos[(c & !LEAF) as usize])
            } else {
                Addr::inner(inner_pos[c as usize])
            }
            .encode(usable as usize)
        };
        for end in [data_end, inner_end] {
            if end / usable > super::addr::MAX_BLOCK {
                return Err(Error::InvalidParameter {
                    name: "keys",
                    value: keys.len().to_string(),
                    expected: "few enough that each file stays under 2^31 blocks",
                });
            }
        }

        let data = storage.create(&data_file(name))?;
        let payload = params.payload_size;
        let mut out = Appender::new(data.as_ref(), usable, IoClass::Leaf);
        for (i, leaf) in parts.leaves.iter().enumerate() {
            let prev = i
                .checked_sub(1)
                .map_or(NONE, |p| Addr::data(data_pos[p]).encode(usable as usize));
            let next = data_pos
                .get(i + 1)
                .map_or(NONE, |&p| Addr::data(p).encode(usable as usize));
            let bytes = data_node::encode(leaf, payload, prev, next, &mut |v, buf| {
                payload_of(v as usize, &keys[v as usize], buf)
            });
            out.write(data.as_ref(), &bytes)?;
        }
        out.finish(data.as_ref())?;
        let file_id = file_id(keys);
        let mut block = vec![0u8; storage.block_size()];
        encode_data_header(
            &mut block[..FILE_HEADER_BYTES],
            storage.block_size() as u32,
            payload as u32,
            file_id,
        );
        data.write_blocks(0, &mut block, IoClass::Header)?;

        let inner = storage.create(&inner_file(name))?;
        let mut out = Appender::new(inner.as_ref(), usable, IoClass::Inner);
        for &id in &order {
            let node = &parts.inners[id as usize];
            let mut bytes = vec![0u8; INNER_HEADER_BYTES + 8 * node.children.len()];
            InnerHeader {
                state: LIVE,
                duplication: node.duplication,
                fanout: node.children.len() as u32,
                model: node.model,
            }
            .encode(&mut bytes);
            for (k, &c) in node.children.iter().enumerate() {
                let at = INNER_HEADER_BYTES + 8 * k;
                bytes[at..at + 8].copy_from_slice(&child_addr(c).to_le_bytes());
            }
            out.write(inner.as_ref(), &bytes)?;
        }
        out.finish(inner.as_ref())?;
        let meta = Meta {
            block_size: storage.block_size() as u32,
            params,
            file_id,
            len: keys.len() as u64,
            root_raw: child_addr(parts.root),
            inner_end,
            data_end,
            inner_nodes: parts.inners.len() as u64,
            data_nodes: parts.leaves.len() as u64,
            inner_invalid: 0,
            data_invalid: 0,
            first_leaf_raw: Addr::data(data_pos[0]).encode(usable as usize),
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
        };
        let mut alex = DiskAlex {
            inner,
            data,
            meta,
            derived,
            writable: true,
            resident: None,
            breakdown: WriteBreakdown::default(),
            smos: DiskAlexSmos::default(),
        };
        alex.write_meta()?;
        alex.data.sync()?;
        alex.inner.sync()?;
        Ok(alex)
    }
}

/// An id shared by the two files of one build: the build's time mixed with the keys' count
/// and ends.
fn file_id(keys: &[u64]) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ (keys.len() as u64).rotate_left(32);
    for k in [keys.first(), keys.last()].into_iter().flatten() {
        x = (x ^ k).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    x
}
