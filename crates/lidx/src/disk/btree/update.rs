//! Inserts, flush and what a crash leaves: the write path of [`DiskBTree`] (deletes are in
//! `super::merge`).
//!
//! Paper 003 Table 2 charges a B+-tree insert `2 log_B N` blocks: the descent reads one block
//! per level and a split writes nodes back up the path. Ours: an insert reads what a lookup
//! reads, then writes the leaf (one block) when it has room. A full leaf splits in two halves;
//! the right half goes to a new block, the lowest one on the free list (`super::free`: blocks
//! that merges gave back) or else one appended at the end of the file, and the separator (its
//! first key) goes into the parent, which may split in turn, up to the root; a root split adds
//! a new root and the tree grows one level, and flushes (below). Nodes are written new right
//! halves first, bottom-up, then the parent that takes the last separator, then the left
//! halves, top-down (so a split costs no more writes than before, in another order: see the
//! crash rules below), and resident nodes are changed in memory and written through, so the
//! resident levels and the file stay the same tree.
//!
//! **What survives a crash.** This tree has no write-ahead log. (The `Store`'s `btree` engine,
//! which has one, does not use it: it runs on `crate::disk::byte_btree`, copy on write, and
//! replays its log from a checkpoint. Paper 003's indexes have no log either.) Every node write
//! goes to the device at once; the header (root, height, counts, free list) is written only by
//! [`DiskBTree::flush`] (and by `drop` when something changed), after the free list's chain and
//! a sync. After a crash the file opens with the header of the last flush over the nodes as the
//! writes since left them:
//!
//! * nothing written since the last flush: the tree of the last flush;
//! * inserts, updates and deletes that changed leaves in place: the new entries, with a stale
//!   entry count;
//! * a split, merge, borrow or root collapse since the last flush: each writes the node that
//!   receives entries first, then the parent, then the node that gives them (a split's new
//!   right half receives, its left half gives; see `super::merge` for the others). An
//!   interrupted one leaves nodes whose keys lie outside the range their parent gives them,
//!   which every read checks, while the moved entries are still where the parent routes to:
//!   reads answer as before or after the operation, or fail with [`Error::Corrupt`] naming the
//!   block (at open, when the node is resident), and no entry is lost silently. A root split
//!   flushes between the new root and the left halves, since the old header names the old
//!   root: one header write and two syncs per level the tree grows. Nodes a split appended
//!   past the old header's block count are [`Error::Corrupt`] when a read reaches them; a block
//!   the last flush listed as free and a split reused since is reachable from the root, and
//!   opening refuses the file with [`Error::Corrupt`] naming the block. Blocks freed since the
//!   last flush are not on the persisted free list: they leak until a rebuild.
//!
//! **Where a write's time goes** ([`DiskMap::write_breakdown`], paper 003 Figure 6, read by a
//! [`PhaseClock`]): *search* is the descent and the search in the leaf, with their reads;
//! *insert* the change of the leaf and its one block written; *smo* a split, from the leaf up
//! to the new root (for a delete: a merge, borrow or root collapse); *maintenance* the header
//! and free-list writes of the flush a root split makes, and after a delete's structural
//! change, reading resident levels again. A write that fails counts the phases before the
//! failure only.
//!
//! A torn block write is a checksum error. `crates/lidx/tests/disk_btree_merge.rs` kills the
//! device at random writes of a run of merging deletes and of a run of splitting inserts and
//! checks these claims; call `flush` after a batch of updates whose durability matters.

use crate::disk::{DiskMap, PhaseClock, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, IoClass};
use crate::key::Key;

use super::free::FreeLayout;
use super::merge::Entries;
use super::node::{encode_inner, encode_leaf, leaf_insert, leaf_payload_mut, NodeLayout};
use super::resident::ResidentNode;
use super::tree::{DiskBTree, Step};

/// The left half of a split (its block, encoded, and its class), written after the parent that
/// names the right half.
type Trimmed = (u64, AlignedBuf, IoClass);

impl<K: Key> DiskBTree<K> {
    pub(super) fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    pub(super) fn write_block(
        &self,
        block: u64,
        buf: &mut AlignedBuf,
        class: IoClass,
    ) -> Result<()> {
        let class = if class == IoClass::Leaf {
            self.leaf_class
        } else {
            class
        };
        self.device.write_blocks(block, buf, class)
    }

    /// A block for a new node: the lowest free one, else one appended to the file.
    fn allocate(&mut self) -> u64 {
        self.free.take().unwrap_or_else(|| {
            let block = self.header.blocks;
            self.header.blocks += 1;
            block
        })
    }

    /// Encodes resident node `idx` into `buf`; returns its block.
    fn encode_resident(&self, idx: usize, buf: &mut AlignedBuf) -> u64 {
        let node = &self.levels.nodes[idx];
        let children = (0..node.children.len()).map(|i| self.levels.child_block(idx, i));
        encode_inner(buf, &self.layout, node.level, &node.keys, children);
        node.block
    }

    pub(super) fn write_resident(&self, idx: usize, buf: &mut AlignedBuf) -> Result<()> {
        let block = self.encode_resident(idx, buf);
        self.write_block(block, buf, IoClass::Inner)
    }

    /// Writes the left halves of a split, top-down, once the parents name the right halves.
    fn write_trimmed(&self, trimmed: Vec<Trimmed>) -> Result<()> {
        for (block, mut buf, class) in trimmed.into_iter().rev() {
            self.write_block(block, &mut buf, class)?;
        }
        Ok(())
    }

    /// Inserts `key` with `payload` (exactly [`crate::disk::DiskIndex::payload_size`] bytes).
    /// Returns true when the key was present and its payload was replaced, false when it was
    /// added. See the module docs for the blocks written and crash behavior.
    pub fn insert(&mut self, key: K, payload: &[u8]) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("insert")?;
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        if payload.len() != self.layout.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly payload_size() bytes",
            });
        }
        let mut path = Vec::with_capacity(self.header.height as usize);
        let mut buf = self.block_buf();
        let (block, bounds) = self.descend(&key, &mut buf, Some(&mut path))?;
        let (count, found, sibling) = {
            let leaf = self.leaf(&buf, block, &bounds)?;
            (leaf.len(), leaf.find(&key), leaf.sibling())
        };
        self.timing.search_ns += clock.lap();
        let layout = self.layout;
        match found {
            Ok(i) => {
                leaf_payload_mut(&mut buf, &layout, i).copy_from_slice(payload);
                self.write_block(block, &mut buf, IoClass::Leaf)?;
                self.timing.insert_ns += clock.lap();
                Ok(true)
            }
            Err(pos) if count < layout.leaf_cap => {
                leaf_insert(&mut buf, &layout, count, pos, &key, payload);
                self.write_block(block, &mut buf, IoClass::Leaf)?;
                self.header.entries += 1;
                self.dirty = true;
                self.timing.insert_ns += clock.lap();
                Ok(false)
            }
            Err(pos) => {
                self.header.entries += 1;
                self.dirty = true;
                // A root split's flush inside is maintenance, timed there (module docs).
                let maintenance = self.timing.maintenance_ns;
                self.split_leaf(block, &mut buf, pos, key, payload, sibling, path)?;
                let inside = self.timing.maintenance_ns - maintenance;
                self.timing.smo_ns += clock.lap().saturating_sub(inside);
                Ok(false)
            }
        }
    }

    /// Splits the full leaf in `buf` (block `block`) while inserting the entry at `pos`.
    #[allow(clippy::too_many_arguments)]
    fn split_leaf(
        &mut self,
        block: u64,
        buf: &mut AlignedBuf,
        pos: usize,
        key: K,
        payload: &[u8],
        sibling: Option<u64>,
        path: Vec<Step<K>>,
    ) -> Result<()> {
        let layout: NodeLayout = self.layout;
        let ps = layout.payload_size;
        let Entries {
            mut keys,
            mut payloads,
            ..
        } = self.entries(buf, block, &(None, None))?;
        keys.insert(pos, key);
        payloads.splice(pos * ps..pos * ps, payload.iter().copied());
        let left = keys.len().div_ceil(2);
        let right_block = self.allocate();
        self.header.leaves += 1;
        let mut right = self.block_buf();
        encode_leaf(
            &mut right,
            &layout,
            &keys[left..],
            &payloads[left * ps..],
            sibling,
        );
        self.write_block(right_block, &mut right, IoClass::Leaf)?;
        let mut trimmed = self.block_buf();
        encode_leaf(
            &mut trimmed,
            &layout,
            &keys[..left],
            &payloads[..left * ps],
            Some(right_block),
        );
        let trimmed = vec![(block, trimmed, IoClass::Leaf)];
        self.insert_separator(path, keys[left], right_block, buf, trimmed)
    }

    /// Adds child `right_block` with separator `sep` to the parent at the end of `path`,
    /// splitting parents up to the root as needed; `trimmed` holds the left halves split so
    /// far, written after the parent that names their right halves (module docs).
    fn insert_separator(
        &mut self,
        mut path: Vec<Step<K>>,
        mut sep: K,
        mut right_block: u64,
        buf: &mut AlignedBuf,
        mut trimmed: Vec<Trimmed>,
    ) -> Result<()> {
        let cap = self.layout.inner_cap;
        // Arena index of the new right node when its level is resident.
        let mut right_idx: Option<usize> = None;
        while let Some(step) = path.pop() {
            match step {
                Step::Resident { node, pos } => {
                    let child = right_idx.map_or(right_block, |i| i as u64);
                    let n = &mut self.levels.nodes[node];
                    let level = n.level;
                    let Some((up, keys, children)) =
                        insert_child(&mut n.keys, &mut n.children, pos, sep, child, cap)
                    else {
                        self.write_resident(node, buf)?;
                        return self.write_trimmed(trimmed);
                    };
                    let new_block = self.allocate();
                    self.header.inners += 1;
                    self.levels.nodes.push(ResidentNode {
                        block: new_block,
                        level,
                        keys,
                        children,
                    });
                    let new_idx = self.levels.nodes.len() - 1;
                    self.write_resident(new_idx, buf)?;
                    let mut left = self.block_buf();
                    trimmed.push((self.encode_resident(node, &mut left), left, IoClass::Inner));
                    (sep, right_block, right_idx) = (up, new_block, Some(new_idx));
                }
                Step::Disk {
                    block,
                    node: mut n,
                    pos,
                } => {
                    let Some((up, keys, children)) =
                        insert_child(&mut n.keys, &mut n.children, pos, sep, right_block, cap)
                    else {
                        encode_inner(buf, &self.layout, n.level, &n.keys, n.children.into_iter());
                        self.write_block(block, buf, IoClass::Inner)?;
                        return self.write_trimmed(trimmed);
                    };
                    let new_block = self.allocate();
                    self.header.inners += 1;
                    encode_inner(buf, &self.layout, n.level, &keys, children.into_iter());
                    self.write_block(new_block, buf, IoClass::Inner)?;
                    let mut left = self.block_buf();
                    encode_inner(
                        &mut left,
                        &self.layout,
                        n.level,
                        &n.keys,
                        n.children.into_iter(),
                    );
                    trimmed.push((block, left, IoClass::Inner));
                    (sep, right_block, right_idx) = (up, new_block, None);
                }
            }
        }
        self.grow(sep, right_block, right_idx, buf)?;
        // The header must name the new root before the old one, now its left child, loses
        // the right half: a crash after it and before the flush would leave the old header
        // naming a trimmed root.
        let mut clock = PhaseClock::start();
        self.flush()?;
        self.timing.maintenance_ns += clock.lap();
        self.write_trimmed(trimmed)
    }

    /// The root split: a new root above it with two children; the tree grows one level.
    fn grow(
        &mut self,
        sep: K,
        right_block: u64,
        right_idx: Option<usize>,
        buf: &mut AlignedBuf,
    ) -> Result<()> {
        let old_root = self.header.root;
        let level = self.header.height;
        let root = self.allocate();
        self.header.inners += 1;
        self.header.height += 1;
        self.header.root = root;
        encode_inner(
            buf,
            &self.layout,
            level,
            &[sep],
            [old_root, right_block].into_iter(),
        );
        self.write_block(root, buf, IoClass::Inner)?;
        let target = self.resident.levels(self.header.height);
        if target > 0 {
            let (left, right) = match (self.levels.is_empty(), right_idx) {
                (false, Some(r)) => (self.levels.root as u64, r as u64),
                _ => (old_root, right_block),
            };
            self.levels.push_root(root, level, sep, left, right);
            while self.levels.count() > target {
                self.levels.drop_lowest();
            }
        }
        Ok(())
    }

    /// Writes the free list's chain (`super::free`), syncs, writes the header (root, height,
    /// counts, free list) to block 0 and syncs again: after it returns, the file opens as the
    /// tree as it is now, and a crash before the header is written leaves the previous header
    /// naming nodes and chain blocks that were synced. A no-op on a read-only tree.
    pub fn flush(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        let layout = FreeLayout {
            usable: self.layout.usable,
        };
        self.header.free_head = self.free.store(self.device.as_ref(), &layout)?;
        self.header.free_blocks = self.free.len();
        self.device.sync()?;
        let mut buf = self.block_buf();
        self.header.encode(&mut buf[..self.layout.usable]);
        self.write_block(0, &mut buf, IoClass::Header)?;
        self.device.sync()?;
        self.dirty = false;
        Ok(())
    }
}

/// The B+-tree as one of paper 003's updatable indexes: its own `insert`, `delete` and `flush`.
impl<K: Key> DiskMap<K> for DiskBTree<K> {
    fn insert(&mut self, key: K, payload: &[u8]) -> Result<bool> {
        DiskBTree::insert(self, key, payload)
    }

    fn delete(&mut self, key: &K) -> Result<bool> {
        DiskBTree::delete(self, key)
    }

    fn flush(&mut self) -> Result<()> {
        DiskBTree::flush(self)
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.timing
    }
}

/// Puts separator `sep` and the child right of it at `pos` of an inner node's `keys` and
/// `children`. When the node then has more than `cap` children it splits in half: returns the
/// separator that goes up to the parent and the right half's separators and children.
fn insert_child<K: Copy, C>(
    keys: &mut Vec<K>,
    children: &mut Vec<C>,
    pos: usize,
    sep: K,
    child: C,
    cap: usize,
) -> Option<(K, Vec<K>, Vec<C>)> {
    keys.insert(pos, sep);
    children.insert(pos + 1, child);
    if children.len() <= cap {
        return None;
    }
    let half = children.len() / 2;
    let right_children = children.split_off(half);
    let right_keys = keys.split_off(half);
    let up = keys[half - 1];
    keys.truncate(half - 1);
    Some((up, right_keys, right_children))
}
