//! [`BTreeLearned`]: the structure, build, open, and the read path (get, scan).
//!
//! A lookup computes its leaf in memory (the model's slot, then the split list) and reads that
//! one block, counted as [`IoClass::Leaf`]; no [`IoClass::Inner`] block is ever read, so paper
//! 003 Table 4's split is "0 inner, 1 leaf" for every lookup, as the B+-tree with every inner
//! node resident, at the model's memory instead of the inner nodes'. A scan reads the start
//! leaf, then follows right-sibling links, one block per next leaf (Table 2: `1 + z/B`).
//!
//! Every leaf read is checked against the route that led to it: its first and last keys must
//! be inside the split list's bounds and map to the slot the model gave, so a leaf block that
//! passed its checksum but holds the wrong keys is [`Error::Corrupt`] naming the block, never
//! a wrong answer. A scan checks that keys keep ascending along the chain and that the chain
//! is no longer than the leaf count.

use std::sync::Arc;

use crate::disk::block_batch::BlockBatch;
use crate::disk::btree::build::write_leaves;
use crate::disk::btree::free::{FreeLayout, FreeList};
use crate::disk::btree::node::{decode_node, Leaf, Node, NodeLayout, NO_BLOCK};
use crate::disk::header_fields::{check_built_block_size, check_header_blocks};
use crate::disk::{DiskIndex, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage, BLOCK_TRAILER};
use crate::key::{check_strictly_sorted, Key};

use super::header::{decode_header, Header};
use super::meta::{decode_meta, read_chain, Directory, Meta, SplitLeaf};
use super::model::LeafModel;
use super::params::BTreeLearnedParams;

/// An updatable on-disk index: B+-tree leaves on disk, a learned model over them in memory.
///
/// See the module docs for the design and what survives a crash.
pub struct BTreeLearned<K: Key> {
    pub(super) device: Arc<dyn BlockDevice>,
    pub(super) header: Header,
    pub(super) layout: NodeLayout,
    pub(super) meta: Meta<K>,
    /// Blocks of the meta chain the header on disk names.
    pub(super) meta_chain: Vec<u64>,
    pub(super) free: FreeList,
    pub(super) writable: bool,
    pub(super) breakdown: WriteBreakdown,
    /// Retrains since open.
    pub(super) retrains: u64,
}

/// Where a key's leaf is, and the key range the split list gives it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Route<K> {
    pub slot: u64,
    pub block: u64,
    /// Keys of the leaf are `>= lo` (a split leaf's first key).
    pub lo: Option<K>,
    /// Keys of the leaf are `< hi` (the next split leaf of the same slot).
    pub hi: Option<K>,
}

/// One leaf as a walk along the chain finds it.
#[derive(Clone, Copy, Debug)]
pub(super) struct LeafInfo<K> {
    pub block: u64,
    /// First and last keys, when it holds any.
    pub range: Option<(K, K)>,
    pub count: usize,
}

pub(super) fn corrupt(file: &str, block: u64, what: impl Into<String>) -> Error {
    Error::Corrupt {
        file: file.to_string(),
        block: Some(block),
        what: what.into(),
    }
}

fn check_key_type<K: Key>() -> Result<()> {
    if K::MODEL_INJECTIVE {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "key type",
            value: K::NAME.to_string(),
            expected: "a key type whose model values are distinct (u64, u32, i64, f64): the \
                       model tells leaves apart by them",
        })
    }
}

/// Cuts sorted unique `keys` into leaves of `target` entries and learns the model over them
/// with `eps` ([`LeafModel::learn_ranks`]), writes them as one run of linked leaves from block
/// `first`, and returns the model, directory and split list over them, and the leaf count. A
/// slot given more keys than a leaf holds (`target` is at most the capacity, so only as a
/// guard) gets extra leaves on the split list.
pub(super) fn write_cut<K: Key>(
    device: &dyn BlockDevice,
    layout: &NodeLayout,
    keys: &[K],
    payload_of: &mut impl FnMut(usize, &K, &mut [u8]),
    eps: usize,
    target: usize,
    first: u64,
) -> Result<(Meta<K>, u64)> {
    let (model, starts) = LeafModel::learn_ranks(keys, eps, target);
    let cap = layout.leaf_cap;
    let mut leaf_starts: Vec<usize> = Vec::with_capacity(starts.len());
    let mut slot_blocks: Vec<u64> = Vec::with_capacity(starts.len());
    let mut splits = Vec::new();
    for (j, w) in starts.windows(2).enumerate() {
        slot_blocks.push(first + leaf_starts.len() as u64);
        leaf_starts.push(w[0]);
        for at in (w[0] + cap..w[1]).step_by(cap) {
            splits.push((keys[at], j, first + leaf_starts.len() as u64));
            leaf_starts.push(at);
        }
    }
    leaf_starts.push(keys.len());
    let leaves = leaf_starts.len() as u64 - 1;
    let to_u32 = |b: u64| {
        u32::try_from(b).map_err(|_| Error::InvalidParameter {
            name: "file size",
            value: format!("{} blocks", first + leaves),
            expected: "at most 2^32 blocks (the directory holds u32 block ids)",
        })
    };
    to_u32(first + leaves)?;
    let mut writer = BlockBatch::new(device.block_size(), first, IoClass::Leaf);
    write_leaves(device, &mut writer, layout, keys, payload_of, &leaf_starts)?;
    writer.flush(device)?;
    let directory = if splits.is_empty() {
        Directory::Run { first }
    } else {
        Directory::Blocks(slot_blocks.into_iter().map(to_u32).collect::<Result<_>>()?)
    };
    let splits = splits
        .into_iter()
        .map(|(key, slot, block)| {
            Ok(SplitLeaf {
                key,
                slot: slot as u32,
                block: to_u32(block)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok((
        Meta {
            model,
            directory,
            splits,
        },
        leaves,
    ))
}

impl<K: Key> BTreeLearned<K> {
    /// Builds the index in the file `name` of `storage` (created or truncated) from strictly
    /// ascending `keys`; `payload_of(i, &keys[i], out)` fills entry `i`'s payload
    /// (`out.len() == params.payload_size`). The model is learned over the keys first; it cuts
    /// them into leaves (the disk B+-tree's leaf blocks), written as one run from block 1.
    /// The index is open for writing afterwards.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidKey`],
    /// [`Error::InvalidParameter`] (parameters out of range, a payload too large for a block,
    /// a key type whose model values collide), and I/O errors.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[K],
        mut payload_of: impl FnMut(usize, &K, &mut [u8]),
        params: BTreeLearnedParams,
    ) -> Result<Self> {
        params.check()?;
        check_key_type::<K>()?;
        check_strictly_sorted(keys)?;
        let block_size = storage.block_size();
        let layout = NodeLayout::new(block_size - BLOCK_TRAILER, K::SIZE, params.payload_size)
            .ok_or_else(|| Error::InvalidParameter {
                name: "payload_size",
                value: format!("{} with {}-byte blocks", params.payload_size, block_size),
                expected: "small enough that a block holds at least 2 entries",
            })?;
        let device = storage.create(name)?;
        let target = params.leaf_target(layout.leaf_cap)?;
        let (meta, leaves) = write_cut(
            device.as_ref(),
            &layout,
            keys,
            &mut payload_of,
            params.eps,
            target,
            1,
        )?;
        let header = Header {
            key_name: K::NAME.to_string(),
            key_size: K::SIZE as u32,
            payload_size: params.payload_size as u32,
            block_size: block_size as u32,
            entries: keys.len() as u64,
            leaves,
            slots: meta.model.slots,
            blocks: 1 + leaves,
            fill_factor: params.fill_factor,
            retrain_ratio: params.retrain_ratio,
            first_leaf: 1,
            meta_head: NO_BLOCK,
            meta_blocks: 0,
            meta_bytes: 0,
            free_head: NO_BLOCK,
            free_blocks: 0,
            clean: false,
            eps: params.eps as u64,
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
        };
        let mut index = BTreeLearned {
            device,
            header,
            layout,
            meta,
            meta_chain: Vec::new(),
            free: FreeList::default(),
            writable: true,
            breakdown: WriteBreakdown::default(),
            retrains: 0,
        };
        index.flush()?;
        Ok(index)
    }

    /// Opens the index in the file `name` of `storage`; with `writable`, inserts and deletes
    /// are allowed. A file flushed last reads its header, meta chain and free list (no leaf);
    /// a file written since its last flush (a crash) is recovered from its leaves, one read
    /// per leaf (`super::update`).
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::KeyTypeMismatch`],
    /// [`Error::Truncated`], [`Error::ChecksumMismatch`], [`Error::Corrupt`] naming the block.
    pub fn open(storage: &Storage, name: &str, writable: bool) -> Result<Self> {
        check_key_type::<K>()?;
        let device = storage.open(name, writable)?;
        let file = device.name().to_string();
        let mut buf = AlignedBuf::zeroed(device.block_size());
        device.read_blocks(0, &mut buf, IoClass::Header)?;
        let header = decode_header(&buf[..device.payload_size()], &file)?;
        header.check_key::<K>(&file)?;
        check_built_block_size(&file, header.block_size, device.block_size(), true)?;
        check_header_blocks(&file, device.len_blocks(), header.blocks)?;
        let layout = header
            .layout()
            .ok_or_else(|| corrupt(&file, 0, "sizes give no leaf layout"))?;
        let mut index = BTreeLearned {
            device,
            header,
            layout,
            meta: Meta {
                model: LeafModel::default(),
                directory: Directory::Run { first: 1 },
                splits: Vec::new(),
            },
            meta_chain: Vec::new(),
            free: FreeList::default(),
            writable,
            breakdown: WriteBreakdown::default(),
            retrains: 0,
        };
        if index.header.clean {
            index.load_meta()?;
        } else {
            index.recover()?;
        }
        Ok(index)
    }

    /// Reads the meta chain and the free list a clean header names, and checks that no free
    /// block holds a leaf or the chain.
    fn load_meta(&mut self) -> Result<()> {
        let h = &self.header;
        let usable = self.layout.usable;
        let (stream, chain) = read_chain(
            self.device.as_ref(),
            usable,
            h.meta_head,
            h.meta_blocks,
            h.meta_bytes,
            h.blocks,
        )?;
        let meta = decode_meta::<K>(
            &stream,
            self.device.name(),
            h.meta_head,
            h.slots,
            h.leaves,
            h.blocks,
        )?;
        if meta.directory.block(0) != h.first_leaf {
            return Err(corrupt(
                self.device.name(),
                h.meta_head,
                format!(
                    "slot 0 is block {}, the header's first leaf is {}",
                    meta.directory.block(0),
                    h.first_leaf
                ),
            ));
        }
        let free = FreeList::load(
            self.device.as_ref(),
            &FreeLayout { usable },
            h.free_head,
            h.free_blocks,
            h.blocks,
        )?;
        let mut used: Vec<u64> = (0..meta.model.slots)
            .map(|s| meta.directory.block(s))
            .chain(meta.splits.iter().map(|d| u64::from(d.block)))
            .chain(chain.iter().copied())
            .collect();
        used.sort_unstable();
        if let Some(b) = free
            .sorted()
            .into_iter()
            .find(|b| used.binary_search(b).is_ok())
        {
            return Err(corrupt(
                self.device.name(),
                b,
                "the block is on the free list and in use",
            ));
        }
        self.meta = meta;
        self.meta_chain = chain;
        self.free = free;
        Ok(())
    }

    /// The build parameters the file records.
    pub fn params(&self) -> BTreeLearnedParams {
        self.header.params()
    }

    /// Leaves (blocks).
    pub fn leaf_count(&self) -> u64 {
        self.header.leaves
    }

    /// Segments of the model.
    pub fn segment_count(&self) -> usize {
        self.meta.model.segments.len()
    }

    /// Leaves split since the model was learned (the split list's length).
    pub fn split_count(&self) -> usize {
        self.meta.splits.len()
    }

    /// Retrains since the index was opened or built.
    pub fn retrain_count(&self) -> u64 {
        self.retrains
    }

    /// Entries per leaf.
    pub fn leaf_capacity(&self) -> usize {
        self.layout.leaf_cap
    }

    pub(super) fn file(&self) -> &str {
        self.device.name()
    }

    pub(super) fn block_buf(&self) -> AlignedBuf {
        AlignedBuf::zeroed(self.device.block_size())
    }

    /// The leaf of `key`: the model's slot, then the split list (no I/O).
    #[inline]
    pub(super) fn route(&self, key: &K) -> Route<K> {
        let slot = self.meta.model.slot_of(key);
        let splits = &self.meta.splits;
        let i = splits.partition_point(|d| !key.key_lt(&d.key));
        let hi = splits
            .get(i)
            .filter(|d| u64::from(d.slot) == slot)
            .map(|d| d.key);
        match i.checked_sub(1).map(|p| splits[p]) {
            Some(d) if u64::from(d.slot) == slot => Route {
                slot,
                block: u64::from(d.block),
                lo: Some(d.key),
                hi,
            },
            _ => Route {
                slot,
                block: self.meta.directory.block(slot),
                lo: None,
                hi,
            },
        }
    }

    /// Decodes the leaf in `buf`, read from `block` of a file of `blocks` blocks.
    pub(super) fn decode_leaf<'b>(
        &self,
        buf: &'b [u8],
        block: u64,
        blocks: u64,
    ) -> Result<Leaf<'b, K>> {
        match decode_node(
            &buf[..self.layout.usable],
            &self.layout,
            block,
            blocks,
            self.file(),
        )? {
            Node::Leaf(leaf) => Ok(leaf),
            Node::Inner(_) => Err(corrupt(
                self.file(),
                block,
                "an inner node where a leaf belongs",
            )),
        }
    }

    /// Decodes the leaf `route` led to and checks that its keys belong there.
    pub(super) fn leaf<'b>(&self, buf: &'b [u8], route: &Route<K>) -> Result<Leaf<'b, K>> {
        let leaf = self.decode_leaf(buf, route.block, self.header.blocks)?;
        if !leaf.is_empty() {
            let (first, last) = (leaf.key(0), leaf.key(leaf.len() - 1));
            let outside = route.lo.is_some_and(|lo| first.key_lt(&lo))
                || route.hi.is_some_and(|hi| !last.key_lt(&hi))
                || self.meta.model.slot_of(&first) != route.slot
                || self.meta.model.slot_of(&last) != route.slot;
            if outside {
                return Err(corrupt(
                    self.file(),
                    route.block,
                    format!(
                        "leaf keys {first:?}..={last:?} do not belong to slot {} where the model \
                         routes them",
                        route.slot
                    ),
                ));
            }
        }
        Ok(leaf)
    }

    /// Reads the leaf of `key` into `buf`.
    pub(super) fn read_leaf(&self, key: &K, buf: &mut AlignedBuf) -> Result<Route<K>> {
        let route = self.route(key);
        self.device.read_blocks(route.block, buf, IoClass::Leaf)?;
        Ok(route)
    }

    fn check_payload_len(&self, len: usize) -> Result<()> {
        if len < self.layout.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload buffer",
                value: format!("{len} bytes for {}-byte payloads", self.layout.payload_size),
                expected: "a buffer of at least payload_size() bytes",
            });
        }
        Ok(())
    }

    /// Walks the leaf chain from the first leaf in a file of `blocks` blocks, reading every
    /// leaf once, checking that keys ascend and the chain has no cycle.
    pub(super) fn walk_leaves(&self, blocks: u64) -> Result<Vec<LeafInfo<K>>> {
        let mut out: Vec<LeafInfo<K>> = Vec::new();
        let mut buf = self.block_buf();
        let mut next = Some(self.header.first_leaf);
        let mut previous: Option<K> = None;
        while let Some(block) = next {
            if out.len() as u64 >= blocks {
                return Err(corrupt(self.file(), block, "the leaf chain has a cycle"));
            }
            self.device.read_blocks(block, &mut buf, IoClass::Leaf)?;
            let leaf = self.decode_leaf(&buf, block, blocks)?;
            let range = (!leaf.is_empty()).then(|| (leaf.key(0), leaf.key(leaf.len() - 1)));
            if let Some((first, last)) = range {
                if previous.is_some_and(|p| !p.key_lt(&first)) {
                    return Err(corrupt(
                        self.file(),
                        block,
                        "leaf keys do not ascend along the sibling chain",
                    ));
                }
                previous = Some(last);
            }
            out.push(LeafInfo {
                block,
                range,
                count: leaf.len(),
            });
            next = leaf.sibling();
        }
        Ok(out)
    }
}

impl<K: Key> DiskIndex<K> for BTreeLearned<K> {
    fn len(&self) -> u64 {
        self.header.entries
    }

    fn keys_fingerprint(&self) -> u64 {
        self.header.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.layout.payload_size
    }

    fn get(&self, key: &K, payload: &mut [u8]) -> Result<bool> {
        self.check_payload_len(payload.len())?;
        let mut buf = self.block_buf();
        let route = self.read_leaf(key, &mut buf)?;
        let leaf = self.leaf(&buf, &route)?;
        match leaf.find(key) {
            Ok(i) => {
                payload[..self.layout.payload_size].copy_from_slice(leaf.payload(i));
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    fn scan(
        &self,
        start: &K,
        limit: usize,
        keys: &mut Vec<K>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        if limit == 0 {
            return Ok(0);
        }
        let mut buf = self.block_buf();
        let route = self.read_leaf(start, &mut buf)?;
        let mut block = route.block;
        let mut got = 0usize;
        let mut previous: Option<K> = None;
        let mut hops = 0u64;
        let mut first = true;
        loop {
            let next = {
                let leaf = if first {
                    self.leaf(&buf, &route)?
                } else {
                    self.decode_leaf(&buf, block, self.header.blocks)?
                };
                let from = if first { leaf.lower_bound(start) } else { 0 };
                for i in from..leaf.len() {
                    let key = leaf.key(i);
                    if previous.is_some_and(|p| !p.key_lt(&key)) {
                        return Err(corrupt(
                            self.file(),
                            block,
                            "leaf keys do not ascend along the sibling chain",
                        ));
                    }
                    previous = Some(key);
                    keys.push(key);
                    payloads.extend_from_slice(leaf.payload(i));
                    got += 1;
                    if got == limit {
                        return Ok(got);
                    }
                }
                leaf.sibling()
            };
            first = false;
            let Some(next) = next else { return Ok(got) };
            hops += 1;
            if hops >= self.header.leaves {
                return Err(corrupt(
                    self.file(),
                    next,
                    format!(
                        "the sibling chain is longer than the {} leaves: it has a cycle",
                        self.header.leaves
                    ),
                ));
            }
            self.device.read_blocks(next, &mut buf, IoClass::Leaf)?;
            block = next;
        }
    }

    fn memory_bytes(&self) -> usize {
        self.meta.model.memory_bytes()
            + self.meta.directory.memory_bytes()
            + self.meta.splits.capacity() * std::mem::size_of::<super::meta::SplitLeaf<K>>()
            + self.free.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * u64::from(self.header.block_size)
    }

    fn storage_bytes(&self) -> StorageBytes {
        let block = u64::from(self.header.block_size);
        StorageBytes {
            allocated: self.device.len_blocks() * block,
            used: (1 + self.header.leaves + self.meta_chain.len() as u64) * block,
            free: self.free.len() * block,
        }
    }

    fn describe(&self) -> String {
        format!(
            "btree-learned (leaves {}, {} per leaf, model {} segments over {} slots, {} split \
             leaves, fill {}, retrain ratio {})",
            self.header.leaves,
            self.layout.leaf_cap,
            self.meta.model.segments.len(),
            self.meta.model.slots,
            self.meta.splits.len(),
            self.header.fill_factor,
            self.header.retrain_ratio
        )
    }
}
