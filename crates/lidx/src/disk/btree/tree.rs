//! [`DiskBTree`]: the structure, open, and the read path (get, lower_bound, scan).
//!
//! Paper 003 §4.3 / Table 2: a lookup reads `log_B N` blocks (one per level), a scan of `z`
//! entries `log_B N + z/B`; with the inner nodes in memory (§6.2, the hybrid case) a lookup
//! reads one block, its leaf, and Table 4 counts exactly those blocks per class. Here every read
//! names its [`IoClass`] (`Header`, `Inner`, `Leaf`), so the device's counters give that split.
//!
//! A descent starts in the resident levels (no I/O), then reads one inner block per remaining
//! level and finally the leaf. It is bounded by the header's height: every node must carry the
//! level the descent expects, and every node's keys must lie inside the key range its parent
//! gave it, so a corrupt child pointer is reported as [`Error::Corrupt`] instead of answering
//! wrongly or looping. A scan follows right-sibling links, reading each next leaf with one
//! request; it stops with `Corrupt` when the chain is longer than the leaf count (a cycle) or
//! its keys stop ascending. When every inner node is resident (the default), each link is also
//! checked against the tree at no I/O cost: it must name the leaf the tree routes the keys
//! after the current leaf to, and that leaf's keys must lie in the range its parents give it,
//! so a link edited under a valid checksum cannot skip leaves silently. With inner nodes on
//! disk that check would cost inner reads per leaf, changing what a scan reads (paper 003
//! Table 2: `log_B N + z/B`), so there a scan trusts links that keep the keys ascending.

use std::sync::Arc;

use crate::disk::bptree::outside;
use crate::disk::header_fields::corrupt_at as corrupt;
use crate::disk::{DiskIndex, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::Key;

use super::free::{FreeLayout, FreeList};
use super::header::{decode_header, Header};
use super::node::{
    check_separators, child_index, decode_node, expect_inner, Inner, Leaf, Node, NodeLayout,
};
use super::params::{DiskBTreeParams, Resident};
use super::resident::ResidentLevels;

/// A B+-tree whose nodes are blocks of one file, with a chosen number of top levels in memory.
///
/// See the module docs for the layout, the update rules and what survives a crash.
pub struct DiskBTree<K: Key> {
    pub(super) device: Arc<dyn BlockDevice>,
    pub(super) header: Header,
    pub(super) layout: NodeLayout,
    /// The class leaf reads and writes are counted as ([`DiskBTree::set_leaf_class`]).
    pub(super) leaf_class: IoClass,
    pub(super) resident: Resident,
    pub(super) levels: ResidentLevels<K>,
    pub(super) free: FreeList,
    pub(super) writable: bool,
    pub(super) dirty: bool,
    /// Where the writes' time went since open ([`crate::disk::DiskMap::write_breakdown`]).
    pub(super) timing: WriteBreakdown,
}

/// One step of a descent, kept for inserts that split nodes on the way back up.
pub(super) enum Step<K> {
    /// Through resident node `node`, to its child `pos`.
    Resident { node: usize, pos: usize },
    /// Through the inner node read from `block`, to its child `pos`.
    Disk {
        block: u64,
        node: Inner<K>,
        pos: usize,
    },
}

/// Key range a node's keys must lie in: `lo <= k < hi` (`None` = unbounded).
pub(super) type Bounds<K> = (Option<K>, Option<K>);

/// Narrows `bounds` to child `pos` of a node with separators `keys`.
#[inline]
pub(super) fn narrow<K: Key>(bounds: &mut Bounds<K>, keys: &[K], pos: usize) {
    if pos > 0 {
        bounds.0 = Some(keys[pos - 1]);
    }
    if pos < keys.len() {
        bounds.1 = Some(keys[pos]);
    }
}

impl<K: Key> DiskBTree<K> {
    /// Opens the tree in the file `name` of `storage`, keeping the `resident` levels in memory
    /// (read now, one request per node). With `writable`, inserts and deletes are allowed.
    ///
    /// Reads the free list's chain too, and when it is not empty checks that no free block is
    /// reachable from the root, reading every inner node that is not resident (the leaves'
    /// ids come from their parents): see `super::free`.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::KeyTypeMismatch`]
    /// (built for another key type), [`Error::Truncated`] (file shorter than its header says),
    /// [`Error::ChecksumMismatch`], [`Error::Corrupt`] (header, resident nodes or free list
    /// inconsistent).
    pub fn open(storage: &Storage, name: &str, resident: Resident, writable: bool) -> Result<Self> {
        let device = storage.open(name, writable)?;
        let file = device.name().to_string();
        let mut buf = AlignedBuf::zeroed(device.block_size());
        device.read_blocks(0, &mut buf, IoClass::Header)?;
        let header = decode_header(&buf[..device.payload_size()], &file)?;
        header.check_key::<K>(&file)?;
        if header.block_size as usize != device.block_size() {
            return Err(Error::Corrupt {
                file,
                block: Some(0),
                what: format!(
                    "built with {}-byte blocks but opened with {}-byte blocks; open it with a \
                     Storage of the block size it was built with",
                    header.block_size,
                    device.block_size()
                ),
            });
        }
        if device.len_blocks() < header.blocks {
            return Err(Error::Truncated {
                file,
                what: format!(
                    "{} blocks, the header says {}",
                    device.len_blocks(),
                    header.blocks
                ),
            });
        }
        let layout = header.layout().ok_or_else(|| Error::Corrupt {
            file: file.clone(),
            block: Some(0),
            what: "sizes give no node layout".to_string(),
        })?;
        let levels = ResidentLevels::load(
            device.as_ref(),
            &layout,
            &header,
            resident.levels(header.height),
        )?;
        let free = FreeList::load(
            device.as_ref(),
            &FreeLayout {
                usable: layout.usable,
            },
            header.free_head,
            header.free_blocks,
            header.blocks,
        )?;
        let tree = DiskBTree {
            device,
            header,
            layout,
            leaf_class: IoClass::Leaf,
            resident,
            levels,
            free,
            writable,
            dirty: false,
            timing: WriteBreakdown::default(),
        };
        if tree.free.len() > 0 {
            tree.check_free_unreachable()?;
        }
        Ok(tree)
    }

    /// The build parameters the file records (payload size and fill factor), with the
    /// resident levels it is open with: what a caller checks a file against before trusting
    /// that it is the tree it asked for.
    pub fn params(&self) -> DiskBTreeParams {
        DiskBTreeParams {
            resident: self.resident,
            ..self.header.params()
        }
    }

    /// Counts the leaves' reads and writes as `class` from now on ([`IoClass::Leaf`] by
    /// default): [`IoClass::Inner`] when this tree is the inner part of another index, as the
    /// FITing-tree on disk (`crate::disk::fiting`) uses it, so that paper 003 Table 4's split
    /// of blocks into inner and leaf comes out right for that index.
    pub fn set_leaf_class(&mut self, class: IoClass) {
        self.leaf_class = class;
    }

    /// Levels including the leaves (1 when the root is a leaf).
    pub fn height(&self) -> u32 {
        self.header.height
    }

    /// Leaf nodes (blocks).
    pub fn leaf_count(&self) -> u64 {
        self.header.leaves
    }

    /// Inner nodes (blocks).
    pub fn inner_count(&self) -> u64 {
        self.header.inners
    }

    /// Bytes the inner nodes take on disk (`inner_count() * block size`): what a learned model
    /// replacing them would be compared with.
    pub fn inner_bytes_on_disk(&self) -> u64 {
        self.header.inners * u64::from(self.header.block_size)
    }

    /// The file's blocks by use: allocated (the file), used by the tree (header and nodes), and
    /// free (left by merges, reused by splits before the file grows). What paper 003 §6.3
    /// (Figure 10) reports after the write workloads.
    pub fn storage_bytes(&self) -> StorageBytes {
        let block = u64::from(self.header.block_size);
        StorageBytes {
            allocated: self.device.len_blocks() * block,
            used: (1 + self.header.leaves + self.header.inners) * block,
            free: self.free.len() * block,
        }
    }

    /// How many levels are in memory now.
    pub fn resident_levels(&self) -> u32 {
        self.levels.count()
    }

    /// Entries per leaf and children per inner node.
    pub fn capacities(&self) -> (usize, usize) {
        (self.layout.leaf_cap, self.layout.inner_cap)
    }

    pub(super) fn file(&self) -> &str {
        self.device.name()
    }

    pub(super) fn block_buf(&self) -> AlignedBuf {
        AlignedBuf::zeroed(self.device.block_size())
    }

    /// Reads one inner node from disk, checking its level and its key range.
    pub(super) fn read_inner(
        &self,
        block: u64,
        level: u32,
        bounds: &Bounds<K>,
        buf: &mut AlignedBuf,
    ) -> Result<Inner<K>> {
        self.device.read_blocks(block, buf, IoClass::Inner)?;
        let node = self.decode(buf, block)?;
        let inner = expect_inner(node, level, block, self.file())?;
        check_separators(
            &inner.keys,
            bounds.0.as_ref(),
            bounds.1.as_ref(),
            block,
            self.file(),
        )?;
        Ok(inner)
    }

    fn decode<'b>(&self, buf: &'b [u8], block: u64) -> Result<Node<'b, K>> {
        decode_node(
            &buf[..self.layout.usable],
            &self.layout,
            block,
            self.header.blocks,
            self.file(),
        )
    }

    /// Decodes the leaf in `buf` (read from `block`), checking its keys lie in `bounds`.
    pub(super) fn leaf<'b>(
        &self,
        buf: &'b [u8],
        block: u64,
        bounds: &Bounds<K>,
    ) -> Result<Leaf<'b, K>> {
        match self.decode(buf, block)? {
            Node::Leaf(leaf) => {
                if !leaf.is_empty()
                    && outside(
                        &leaf.key(0),
                        &leaf.key(leaf.len() - 1),
                        bounds.0.as_ref(),
                        bounds.1.as_ref(),
                        K::key_lt,
                    )
                {
                    return Err(corrupt(
                        self.file(),
                        block,
                        "leaf keys lie outside the key range its parent gives it",
                    ));
                }
                Ok(leaf)
            }
            Node::Inner(_) => Err(corrupt(
                self.file(),
                block,
                "an inner node where a leaf belongs",
            )),
        }
    }

    /// Descends to the leaf whose key range holds `key`, reads it into `buf`, and returns its
    /// block and key range. With `path`, records every inner step for a later split.
    pub(super) fn descend(
        &self,
        key: &K,
        buf: &mut AlignedBuf,
        path: Option<&mut Vec<Step<K>>>,
    ) -> Result<(u64, Bounds<K>)> {
        let routed = self.route(key, buf, path)?;
        self.device.read_blocks(routed.0, buf, self.leaf_class)?;
        Ok(routed)
    }

    /// The leaf block `key` routes to and the key range its parents give it, through the inner
    /// nodes only (no I/O when they are all resident); `buf` holds the last inner node read.
    fn route(
        &self,
        key: &K,
        buf: &mut AlignedBuf,
        mut path: Option<&mut Vec<Step<K>>>,
    ) -> Result<(u64, Bounds<K>)> {
        let mut bounds: Bounds<K> = (None, None);
        let mut block = self.header.root;
        let mut level = self.header.height - 1;
        if !self.levels.is_empty() {
            let mut idx = self.levels.root;
            loop {
                let node = &self.levels.nodes[idx];
                let pos = child_index(&node.keys, key);
                narrow(&mut bounds, &node.keys, pos);
                if let Some(path) = path.as_deref_mut() {
                    path.push(Step::Resident { node: idx, pos });
                }
                level = node.level - 1;
                if self.levels.holds_level(level) {
                    idx = node.children[pos] as usize;
                } else {
                    block = node.children[pos];
                    break;
                }
            }
        }
        while level > 0 {
            let inner = self.read_inner(block, level, &bounds, buf)?;
            let pos = child_index(&inner.keys, key);
            narrow(&mut bounds, &inner.keys, pos);
            let child = inner.children[pos];
            if let Some(path) = path.as_deref_mut() {
                path.push(Step::Disk {
                    block,
                    node: inner,
                    pos,
                });
            }
            block = child;
            level -= 1;
        }
        Ok((block, bounds))
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

    /// Calls `visit` on the entries with keys `>= start` in key order until it returns false or
    /// the entries end. Reads the leaf of `start`, then each right sibling with one request.
    fn walk(&self, start: &K, mut visit: impl FnMut(K, &[u8]) -> bool) -> Result<()> {
        let mut buf = self.block_buf();
        let (mut block, mut bounds) = self.descend(start, &mut buf, None)?;
        let mut first = true;
        let mut previous: Option<K> = None;
        let mut hops = 0u64;
        loop {
            let next = {
                let leaf = self.leaf(&buf, block, &bounds)?;
                let from = if first { leaf.lower_bound(start) } else { 0 };
                for i in from..leaf.len() {
                    let key = leaf.key(i);
                    let in_order = match &previous {
                        Some(p) => p.key_lt(&key),
                        None => !key.key_lt(start),
                    };
                    if !in_order {
                        return Err(corrupt(
                            self.file(),
                            block,
                            "leaf keys do not ascend along the sibling chain",
                        ));
                    }
                    previous = Some(key);
                    if !visit(key, leaf.payload(i)) {
                        return Ok(());
                    }
                }
                leaf.sibling()
            };
            // With every inner node in memory, the next leaf is checked against the tree: it must
            // be the leaf the tree routes the first key past this one's range to, so a sibling
            // link edited under a valid checksum cannot make a scan skip leaves silently.
            let routed = match &bounds.1 {
                Some(hi) if self.levels.holds_level(1) => Some(self.route(hi, &mut buf, None)?),
                _ => None,
            };
            let linked = |to: Option<u64>| match to {
                Some(b) => format!("block {b}"),
                None => "no leaf".to_string(),
            };
            if self.levels.holds_level(1) && routed.as_ref().map(|r| r.0) != next {
                return Err(corrupt(
                    self.file(),
                    block,
                    format!(
                        "the leaf's right sibling link names {}, the tree routes the keys after \
                         it to {}",
                        linked(next),
                        linked(routed.as_ref().map(|r| r.0))
                    ),
                ));
            }
            let Some(next) = next else { return Ok(()) };
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
            self.device.read_blocks(next, &mut buf, self.leaf_class)?;
            block = next;
            bounds = routed.map_or((None, None), |r| r.1);
            first = false;
        }
    }

    /// The first entry whose key is `>= key`: returns its key and copies its payload into
    /// `payload[..payload_size]`, or returns `None` when every key is smaller. Reads one leaf
    /// (plus a sibling when the leaf holds no such key) below the resident levels.
    pub fn lower_bound(&self, key: &K, payload: &mut [u8]) -> Result<Option<K>> {
        self.check_payload_len(payload.len())?;
        let ps = self.layout.payload_size;
        let mut found = None;
        self.walk(key, |k, p| {
            payload[..ps].copy_from_slice(p);
            found = Some(k);
            false
        })?;
        Ok(found)
    }
}

impl<K: Key> DiskIndex<K> for DiskBTree<K> {
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
        let (block, bounds) = self.descend(key, &mut buf, None)?;
        let leaf = self.leaf(&buf, block, &bounds)?;
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
        let mut n = 0;
        self.walk(start, |k, p| {
            keys.push(k);
            payloads.extend_from_slice(p);
            n += 1;
            n < limit
        })?;
        Ok(n)
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.header.key_name.capacity()
            + self.levels.memory_bytes()
            + self.free.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64
    }

    fn storage_bytes(&self) -> StorageBytes {
        DiskBTree::storage_bytes(self)
    }

    fn describe(&self) -> String {
        let resident = match self.resident {
            Resident::None => "none".to_string(),
            Resident::AllInner => "all inner".to_string(),
            Resident::TopLevels(k) => format!("top {k}"),
        };
        format!(
            "disk B+-tree ({} keys, {}-byte blocks, {}-byte payloads, height {}, resident \
             levels: {resident}, {})",
            K::NAME,
            self.header.block_size,
            self.layout.payload_size,
            self.header.height,
            self.device.describe()
        )
    }
}

impl<K: Key> std::fmt::Debug for DiskBTree<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskBTree")
            .field("file", &self.file())
            .field("header", &self.header)
            .field("resident", &self.resident)
            .field("resident_levels", &self.levels.count())
            .field("writable", &self.writable)
            .finish()
    }
}

impl<K: Key> Drop for DiskBTree<K> {
    /// Writes the header if updates changed it since the last flush; errors are lost here, so
    /// call [`DiskBTree::flush`] to see them.
    fn drop(&mut self) {
        if self.dirty && self.writable {
            let _ = self.flush();
        }
    }
}
