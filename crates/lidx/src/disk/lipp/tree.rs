//! [`DiskLipp`]: the structure, open, and the read path (get, scan).
//!
//! A lookup follows the models from the root (paper 003 §2.2): read the node's header (its
//! model), predict the slot, read the slot; `NODE` descends, `DATA` answers with one key
//! comparison, `NULL` answers "absent". Per node that is the header's block and, when the slot
//! lies in another block, the slot's: paper 003 Table 2's `2 log N`. A scan descends the same
//! way to the first key `>= start`, then walks the slots in order, into each child and back up
//! (paper 003 §6.1.2), reading each block once per scan.
//!
//! Every read names its class: the block of a node's header is `Inner`, a block fetched for a
//! slot (not already read with the header) is `Leaf`; see [`super`]. Corruption that passes
//! the checksums is caught where it would mislead: a child address must lie past its parent
//! and inside the nodes (so a descent always ends), a header must decode, and a `DATA` slot's
//! key must be one its node's model puts in that slot; each failure is [`Error::Corrupt`]
//! naming the file and block.

use std::collections::HashMap;
use std::sync::Arc;

use crate::disk::header_fields::check_built_block_size;
use crate::disk::{DiskIndex, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::Key;

use super::meta::{decode_meta, Meta};
use super::node::{decode_node_header, decode_slot, NodeHeader, SlotKind, NODE_HEADER};
use crate::disk::header_fields::corrupt_at as corrupt;
use crate::disk::node_pages::NodePages;

/// Node headers kept in memory (`inner_in_memory`), by node position.
pub(crate) type Resident = HashMap<u64, NodeHeader>;

/// LIPP whose nodes live in one file of checksummed blocks. See the module docs.
pub struct DiskLipp {
    pub(super) dev: Arc<dyn BlockDevice>,
    pub(super) meta: Meta,
    pub(super) usable: usize,
    pub(super) slot_bytes: usize,
    pub(super) resident: Option<Resident>,
    pub(super) writable: bool,
    pub(super) dirty: bool,
    pub(super) timing: WriteBreakdown,
}

/// A slot as read: its content and, for `DATA`, the payload's bytes.
pub(super) struct ReadSlot {
    pub(super) kind: SlotKind,
    pub(super) bytes: Vec<u8>,
}

impl DiskLipp {
    /// A fresh view of the node file for one operation (its writes count as leaf blocks;
    /// each read names its class).
    pub(super) fn pages(&self) -> NodePages<'static> {
        NodePages::new(Arc::clone(&self.dev), IoClass::Leaf, None)
    }

    pub(super) fn from_parts(
        dev: Arc<dyn BlockDevice>,
        meta: Meta,
        resident: Option<Resident>,
        writable: bool,
    ) -> DiskLipp {
        DiskLipp {
            usable: dev.payload_size(),
            slot_bytes: 9 + meta.payload_size as usize,
            dev,
            meta,
            resident,
            writable,
            dirty: false,
            timing: WriteBreakdown::default(),
        }
    }

    /// Opens the index in the file `name` of `storage`; with `writable`, inserts and deletes
    /// are allowed. With `inner_in_memory` every node's header (model and statistics) is read
    /// now (one pass over the tree) and kept in memory, so a descent reads only slot blocks:
    /// what paper 003 §6.2's "inner nodes in memory" can mean for LIPP, whose every node holds
    /// entries (see `super`).
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::KeyTypeMismatch`],
    /// [`Error::Truncated`] (the file ends before its nodes), [`Error::ChecksumMismatch`],
    /// [`Error::Corrupt`] (meta block or a node inconsistent).
    pub fn open(
        storage: &Storage,
        name: &str,
        writable: bool,
        inner_in_memory: bool,
    ) -> Result<DiskLipp> {
        let dev = storage.open(name, writable)?;
        let file = dev.name().to_string();
        let mut block = AlignedBuf::zeroed(dev.block_size());
        dev.read_blocks(0, &mut block, IoClass::Header)?;
        let meta = decode_meta(&block[..dev.payload_size()], &file)?;
        meta.check_key::<u64>(&file)?;
        check_built_block_size(&file, meta.block_size, dev.block_size(), true)?;
        let blocks = meta.end.div_ceil(meta.usable() as u64);
        if dev.len_blocks() < blocks {
            return Err(Error::Truncated {
                file,
                what: format!(
                    "{} blocks, the meta block (block 0) says the nodes reach block {}",
                    dev.len_blocks(),
                    blocks - 1
                ),
            });
        }
        let mut lipp = DiskLipp::from_parts(dev, meta, None, writable);
        let mut pages = lipp.pages();
        let root = lipp.header(&mut pages, lipp.meta.root)?;
        lipp.meta.entries = root.size;
        if inner_in_memory {
            let mut resident = Resident::new();
            lipp.walk(
                lipp.meta.root,
                &mut |pos, header| {
                    resident.insert(pos, *header);
                },
                &mut |_, _| {},
            )?;
            lipp.resident = Some(resident);
        }
        Ok(lipp)
    }

    /// The LIPP parameters and payload size the file records.
    pub fn params(&self) -> super::DiskLippParams {
        super::DiskLippParams {
            lipp: self.meta.params,
            payload_size: self.meta.payload_size as usize,
        }
    }

    /// Live nodes.
    pub fn node_count(&self) -> u64 {
        self.meta.nodes
    }

    /// Bytes of nodes that rebuilds and removes replaced: never reused (paper 003 §6.3), part
    /// of the file's allocated bytes in [`DiskIndex::storage_bytes`].
    pub fn dead_bytes(&self) -> u64 {
        self.meta.dead_bytes
    }

    /// True when node headers are kept in memory.
    pub fn inner_in_memory(&self) -> bool {
        self.resident.is_some()
    }

    pub(super) fn file(&self) -> &str {
        self.dev.name()
    }

    /// Positions of the nodes: from block 1 to the end.
    pub(super) fn node_span(&self) -> (u64, u64) {
        (self.usable as u64, self.meta.end)
    }

    /// The header of the node at `pos`: from memory when resident, else read (`Inner`).
    pub(super) fn header(&self, pages: &mut NodePages, pos: u64) -> Result<NodeHeader> {
        if let Some(resident) = &self.resident {
            return resident.get(&pos).copied().ok_or_else(|| {
                corrupt(
                    self.file(),
                    pages.block_of(pos),
                    format!("no node at position {pos}"),
                )
            });
        }
        let mut bytes = [0u8; NODE_HEADER];
        pages.read_as(pos, &mut bytes, IoClass::Inner)?;
        decode_node_header(
            &bytes,
            pos,
            self.meta.end,
            self.slot_bytes,
            pages.block_of(pos),
            self.file(),
        )
    }

    /// Position of slot `i` of the node at `pos`.
    pub(super) fn slot_pos(&self, pos: u64, i: usize) -> u64 {
        pos + NODE_HEADER as u64 + (i * self.slot_bytes) as u64
    }

    /// Slot `i` of the node at `pos` (header `header`), read as `Leaf`; a `DATA` key must
    /// predict to `i`.
    pub(super) fn slot(
        &self,
        pages: &mut NodePages,
        pos: u64,
        header: &NodeHeader,
        i: usize,
    ) -> Result<ReadSlot> {
        let at = self.slot_pos(pos, i);
        let mut bytes = vec![0u8; self.slot_bytes];
        pages.read_as(at, &mut bytes, IoClass::Leaf)?;
        let block = pages.block_of(at);
        let kind = decode_slot(
            &bytes,
            pos,
            self.usable,
            self.node_span(),
            block,
            self.file(),
        )?;
        if let SlotKind::Data(k) = kind {
            if header.predict(k.to_model()) != i {
                return Err(corrupt(
                    self.file(),
                    block,
                    format!(
                        "key {k} in slot {i} of the node at {pos}, whose model puts it \
                             elsewhere"
                    ),
                ));
            }
        }
        Ok(ReadSlot { kind, bytes })
    }

    /// Walks the subtree at `pos` in key order, reading each node whole: `node(pos, header)`
    /// for every node before its slots, `data(key, payload)` for every entry. The walk keeps
    /// one node's bytes per level of the path, and reads each block once.
    pub(super) fn walk(
        &self,
        pos: u64,
        node: &mut dyn FnMut(u64, &NodeHeader),
        data: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<()> {
        let mut pages = self.pages();
        let mut stack: Vec<(u64, Vec<u8>, usize)> = Vec::new();
        let mut push = |pages: &mut NodePages, stack: &mut Vec<_>, pos: u64| -> Result<()> {
            let header = self.header(pages, pos)?;
            node(pos, &header);
            let mut slots = vec![0u8; header.slots as usize * self.slot_bytes];
            pages.read_as(pos + NODE_HEADER as u64, &mut slots, IoClass::Leaf)?;
            stack.push((pos, slots, 0));
            Ok(())
        };
        push(&mut pages, &mut stack, pos)?;
        while let Some((pos, slots, i)) = stack.last_mut() {
            let pos = *pos;
            let Some(slot) = slots.chunks_exact(self.slot_bytes).nth(*i) else {
                stack.pop();
                continue;
            };
            let at = self.slot_pos(pos, *i);
            *i += 1;
            let kind = decode_slot(
                slot,
                pos,
                self.usable,
                self.node_span(),
                pages.block_of(at),
                self.file(),
            )?;
            let next = match kind {
                SlotKind::Null => None,
                SlotKind::Data(k) => {
                    data(k, &slot[9..]);
                    None
                }
                SlotKind::Node(child) => Some(child),
            };
            if let Some(child) = next {
                push(&mut pages, &mut stack, child)?;
            }
        }
        Ok(())
    }

    fn check_payload_len(&self, len: usize) -> Result<()> {
        if len < self.meta.payload_size as usize {
            return Err(Error::InvalidParameter {
                name: "payload buffer",
                value: format!("{len} bytes for {}-byte payloads", self.meta.payload_size),
                expected: "a buffer of at least payload_size() bytes",
            });
        }
        Ok(())
    }
}

impl DiskIndex<u64> for DiskLipp {
    fn len(&self) -> u64 {
        self.meta.entries
    }

    fn keys_fingerprint(&self) -> u64 {
        self.meta.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.meta.payload_size as usize
    }

    fn get(&self, key: &u64, payload: &mut [u8]) -> Result<bool> {
        self.check_payload_len(payload.len())?;
        let m = key.to_model();
        let mut pages = self.pages();
        let mut pos = self.meta.root;
        loop {
            let header = self.header(&mut pages, pos)?;
            let slot = self.slot(&mut pages, pos, &header, header.predict(m))?;
            match slot.kind {
                SlotKind::Node(child) => pos = child,
                SlotKind::Data(k) if k == *key => {
                    let ps = self.meta.payload_size as usize;
                    payload[..ps].copy_from_slice(&slot.bytes[9..9 + ps]);
                    return Ok(true);
                }
                _ => return Ok(false),
            }
        }
    }

    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        if limit == 0 {
            return Ok(0);
        }
        let m = start.to_model();
        let mut pages = self.pages();
        // (node position, header, next slot), one frame per node on the path.
        let mut stack: Vec<(u64, NodeHeader, usize)> = Vec::new();
        let mut pos = self.meta.root;
        loop {
            let header = self.header(&mut pages, pos)?;
            let i = header.predict(m);
            match self.slot(&mut pages, pos, &header, i)?.kind {
                SlotKind::Node(child) => {
                    stack.push((pos, header, i + 1));
                    pos = child;
                }
                SlotKind::Data(k) if k >= *start => {
                    stack.push((pos, header, i));
                    break;
                }
                _ => {
                    stack.push((pos, header, i + 1));
                    break;
                }
            }
        }
        let ps = self.meta.payload_size as usize;
        let mut n = 0;
        let mut previous: Option<u64> = None;
        while let Some(top) = stack.last_mut() {
            let (pos, header, i) = *top;
            if i as u64 >= header.slots {
                stack.pop();
                continue;
            }
            top.2 += 1;
            let slot = self.slot(&mut pages, pos, &header, i)?;
            match slot.kind {
                SlotKind::Null => {}
                SlotKind::Data(k) => {
                    if previous.is_some_and(|p| p >= k) {
                        return Err(corrupt(
                            self.file(),
                            pages.block_of(self.slot_pos(pos, i)),
                            "keys do not ascend in slot order",
                        ));
                    }
                    previous = Some(k);
                    keys.push(k);
                    payloads.extend_from_slice(&slot.bytes[9..9 + ps]);
                    n += 1;
                    if n == limit {
                        break;
                    }
                }
                SlotKind::Node(child) => {
                    let header = self.header(&mut pages, child)?;
                    stack.push((child, header, 0));
                }
            }
        }
        Ok(n)
    }

    fn memory_bytes(&self) -> usize {
        let resident = self.resident.as_ref().map_or(0, |r| {
            r.capacity() * (std::mem::size_of::<(u64, NodeHeader)>() + 1)
        });
        std::mem::size_of::<Self>() + self.meta.key_name.capacity() + resident
    }

    fn disk_bytes(&self) -> u64 {
        self.dev.len_blocks() * self.dev.block_size() as u64
    }

    /// Allocated: the file. Used: the meta block and the live nodes' bytes. Free: 0, since
    /// space of replaced nodes is not reused (paper 003 §6.3); it is the rest of allocated,
    /// with [`DiskLipp::dead_bytes`] its exact count.
    fn storage_bytes(&self) -> StorageBytes {
        StorageBytes {
            allocated: self.disk_bytes(),
            used: self.meta.block_size as u64 + self.meta.live_bytes,
            free: 0,
        }
    }

    fn describe(&self) -> String {
        format!(
            "disk LIPP (u64 keys, {}-byte blocks, {}-byte payloads, {} nodes, headers {}, {})",
            self.meta.block_size,
            self.meta.payload_size,
            self.meta.nodes,
            if self.resident.is_some() {
                "in memory"
            } else {
                "on disk"
            },
            self.dev.describe()
        )
    }
}

impl std::fmt::Debug for DiskLipp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskLipp")
            .field("file", &self.file())
            .field("meta", &self.meta)
            .field("inner_in_memory", &self.resident.is_some())
            .field("writable", &self.writable)
            .finish()
    }
}

impl Drop for DiskLipp {
    /// Writes the meta block if writes changed it since the last flush; errors are lost here,
    /// so call `flush` to see them.
    fn drop(&mut self) {
        if self.dirty && self.writable {
            let _ = self.flush_meta();
        }
    }
}
