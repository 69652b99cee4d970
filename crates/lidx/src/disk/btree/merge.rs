//! Deletes that keep the tree full enough: borrowing from and merging with siblings, up to
//! the root, and the root's collapse.
//!
//! Paper 003's workloads have no deletes (§5.2), so it specifies none; issue 16 needs them to
//! measure storage after writes (§6.3). Ours are the textbook B+-tree delete with one choice
//! the paper leaves open, the **minimum fill: a quarter of a node's capacity** (at least one
//! entry in a leaf, two children in an inner node), not the textbook half. With half, a node
//! just split (two halves) underflows at the next delete and merges back into a full node that
//! the next insert splits again: alternating inserts and deletes at that boundary would write
//! three nodes each. With a quarter, a split leaves both halves a quarter above the minimum, a
//! merge happens only when two siblings hold together less than half a node (so the merged node
//! is at most half full), and a borrow leaves both between a quarter and five eighths: every
//! split, merge or borrow is at least a quarter of a node's operations away from the next one
//! on the same node. The price: a tree that only shrank may be a quarter full, where half
//! would guarantee half (paper 003 §6.3 measures storage: `DiskBTree::storage_bytes` reports it).
//!
//! A delete removes the entry from its leaf. When the leaf keeps at least the minimum (or is
//! the root) that is one block written, as before. Otherwise, with a sibling under the same
//! parent (the left one, or the right one for a first child):
//!
//! * **merge** when the two hold fewer than twice the minimum: the right node's entries move
//!   into the left node, which takes over the right one's sibling link, and the right node's
//!   block goes to the free list ([`super::free`]); the parent loses the separator and the
//!   child, and may underflow in turn: an inner node is rebalanced the same way with its own
//!   sibling (the parent's separator moves down into the merged node), up to the root;
//! * **borrow** otherwise: the two share their entries evenly and the parent's separator
//!   becomes the new right node's first key (for inner nodes, the separators rotate through
//!   the parent).
//!
//! A root left with one child is freed and the child becomes the root: the tree is one level
//! lower. The left node of a pair always keeps its block, so the first leaf never moves and
//! the link into a merged leaf from its left neighbour stays valid.
//!
//! Blocks a delete reads and writes, beyond the lookup's reads: none when the leaf keeps the
//! minimum (1 leaf written); a merge or borrow reads the sibling (1 block) and writes the
//! receiving node, the parent and, for a borrow, the sibling (2 or 3 blocks) per level it
//! reaches; a root collapse rewrites the old root once (with its one child) before it frees
//! it. Resident nodes are changed in memory and written through like every other change
//! (`resident.rs`); a root collapse that takes a resident level away under
//! [`super::Resident::TopLevels`] reads the levels again, one request per node.
//!
//! **Write order** (the tree has no log, see [`super::update`]): the node that receives
//! entries is written first, then the parent, then the node that gave entries. Between two of
//! these writes the receiver holds keys outside the range its parent gives it (and, after the
//! parent's write, the giver does), which every descent checks, and the entries it received are
//! still in the giver: a crash between them leaves reads that answer as before the delete, or
//! as after it, or fail with [`crate::Error::Corrupt`] naming the block, never an entry lost
//! silently. A merged-away block is only reused after the free list holds it, so it is never
//! written while the parent on disk still points to it.
//!
//! A node without a sibling under its parent (only a bulk load with a fill factor under 2 /
//! inner capacity makes a one-child inner node) stays under the minimum; a bulk load with a
//! fill factor under one half leaves nodes under it until a delete reaches them.

use crate::disk::PhaseClock;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, IoClass};
use crate::key::Key;

use super::node::{encode_inner, encode_leaf, leaf_remove};
use super::resident::ResidentLevels;
use super::tree::{Bounds, DiskBTree, Step};

/// Minimum entries of a leaf that is not the root: a quarter of the capacity, at least 1.
pub(super) fn min_entries(leaf_cap: usize) -> usize {
    (leaf_cap / 4).max(1)
}

/// Minimum children of an inner node that is not the root: a quarter of the capacity, at
/// least 2.
pub(super) fn min_children(inner_cap: usize) -> usize {
    (inner_cap / 4).max(2)
}

/// Where an inner node being changed lives.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// In the resident arena, at this index.
    Resident(usize),
    /// On disk only, in this block.
    Disk(u64),
}

/// An inner node taken out of the arena or read from disk, to change and put back. Children
/// are as the arena holds them (indexes when the level below is resident) or block ids.
struct Work<K> {
    place: Place,
    level: u32,
    keys: Vec<K>,
    children: Vec<u64>,
}

/// A leaf's entries, copied out.
pub(super) struct Entries<K> {
    pub keys: Vec<K>,
    pub payloads: Vec<u8>,
    pub sibling: Option<u64>,
}

fn step_pos<K>(step: &Step<K>) -> usize {
    match step {
        Step::Resident { pos, .. } | Step::Disk { pos, .. } => *pos,
    }
}

impl<K: Key> DiskBTree<K> {
    /// Removes `key`; returns true when it was present. Rebalances the nodes it leaves under
    /// the minimum fill: see the module docs for the blocks it reads and writes and
    /// what a crash in the middle leaves.
    pub fn delete(&mut self, key: &K) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("delete")?;
        let mut path = Vec::with_capacity(self.header.height as usize);
        let mut buf = self.block_buf();
        let (block, bounds) = self.descend(key, &mut buf, Some(&mut path))?;
        let (count, found) = {
            let leaf = self.leaf(&buf, block, &bounds)?;
            (leaf.len(), leaf.find(key))
        };
        self.timing.search_ns += clock.lap();
        let Ok(pos) = found else { return Ok(false) };
        leaf_remove(&mut buf, &self.layout, count, pos);
        self.header.entries = self.header.entries.saturating_sub(1);
        self.dirty = true;
        let rebalance = count - 1 < min_entries(self.layout.leaf_cap)
            && path.last().is_some_and(|p| self.step_len(p) >= 2);
        if rebalance {
            self.rebalance_leaf(block, &buf, path)?;
            self.timing.smo_ns += clock.lap();
            self.finish_structure()?;
            self.timing.maintenance_ns += clock.lap();
        } else {
            self.write_block(block, &mut buf, IoClass::Leaf)?;
            self.timing.insert_ns += clock.lap();
        }
        Ok(true)
    }

    /// The entries of the leaf in `buf` (read from `block`), checked against `bounds`.
    pub(super) fn entries(&self, buf: &[u8], block: u64, bounds: &Bounds<K>) -> Result<Entries<K>> {
        let leaf = self.leaf(buf, block, bounds)?;
        let mut payloads = Vec::with_capacity((leaf.len() + 1) * self.layout.payload_size);
        (0..leaf.len()).for_each(|i| payloads.extend_from_slice(leaf.payload(i)));
        Ok(Entries {
            keys: (0..leaf.len()).map(|i| leaf.key(i)).collect(),
            payloads,
            sibling: leaf.sibling(),
        })
    }

    fn step_len(&self, step: &Step<K>) -> usize {
        match step {
            Step::Resident { node, .. } => self.levels.nodes[*node].children.len(),
            Step::Disk { node, .. } => node.children.len(),
        }
    }

    fn step_keys<'a>(&'a self, step: &'a Step<K>) -> &'a [K] {
        match step {
            Step::Resident { node, .. } => &self.levels.nodes[*node].keys,
            Step::Disk { node, .. } => &node.keys,
        }
    }

    /// Block id of child `i` of the node of `step`.
    fn step_child_block(&self, step: &Step<K>, i: usize) -> u64 {
        match step {
            Step::Resident { node, .. } => self.levels.child_block(*node, i),
            Step::Disk { node, .. } => node.children[i],
        }
    }

    /// The key range the node of `step` gives its child `i`, as far as that node knows it.
    fn child_bounds(&self, step: &Step<K>, i: usize) -> Bounds<K> {
        let keys = self.step_keys(step);
        ((i > 0).then(|| keys[i - 1]), keys.get(i).copied())
    }

    /// Merges or balances the leaf in `buf` (block `block`, one entry removed, not written)
    /// with a sibling under the parent at the end of `path`, which has two children or more.
    fn rebalance_leaf(&mut self, block: u64, buf: &AlignedBuf, path: Vec<Step<K>>) -> Result<()> {
        let parent = path.last().expect("a parent");
        let pos = step_pos(parent);
        let (left_pos, sib_pos) = if pos > 0 { (pos - 1, pos - 1) } else { (0, 1) };
        let sib_block = self.step_child_block(parent, sib_pos);
        let sib_bounds = self.child_bounds(parent, sib_pos);
        let mut sib_buf = self.block_buf();
        self.device
            .read_blocks(sib_block, &mut sib_buf, self.leaf_class)?;
        let node = self.entries(buf, block, &(None, None))?;
        let sibling = self.entries(&sib_buf, sib_block, &sib_bounds)?;
        let ((lb, mut left), (rb, right)) = if pos > 0 {
            ((sib_block, sibling), (block, node))
        } else {
            ((block, node), (sib_block, sibling))
        };
        if left.sibling != Some(rb) {
            return Err(Error::Corrupt {
                file: self.file().to_string(),
                block: Some(lb),
                what: format!(
                    "the leaf's right sibling link names {:?}, its parent's next child is block \
                     {rb}",
                    left.sibling
                ),
            });
        }
        let layout = self.layout;
        let ps = layout.payload_size;
        let total = left.keys.len() + right.keys.len();
        let left_had = left.keys.len();
        left.keys.extend(right.keys);
        left.payloads.extend(right.payloads);
        let (keys, payloads) = (left.keys, left.payloads);
        let mut out = self.block_buf();
        if total < 2 * min_entries(layout.leaf_cap) {
            encode_leaf(&mut out, &layout, &keys, &payloads, right.sibling);
            self.write_block(lb, &mut out, IoClass::Leaf)?;
            self.free.give(rb);
            self.header.leaves = self.header.leaves.saturating_sub(1);
            return self.remove_child(path, left_pos);
        }
        let half = total / 2;
        let write_left = |tree: &Self, out: &mut AlignedBuf| {
            encode_leaf(
                out,
                &layout,
                &keys[..half],
                &payloads[..half * ps],
                Some(rb),
            );
            tree.write_block(lb, out, IoClass::Leaf)
        };
        let write_right = |tree: &Self, out: &mut AlignedBuf| {
            encode_leaf(
                out,
                &layout,
                &keys[half..],
                &payloads[half * ps..],
                right.sibling,
            );
            tree.write_block(rb, out, IoClass::Leaf)
        };
        if half > left_had {
            write_left(self, &mut out)?;
            self.set_separator(path, left_pos, keys[half])?;
            write_right(self, &mut out)
        } else {
            write_right(self, &mut out)?;
            self.set_separator(path, left_pos, keys[half])?;
            write_left(self, &mut out)
        }
    }

    /// Sets separator `i` of the parent at the end of `path` to `key` and writes the parent.
    fn set_separator(&mut self, mut path: Vec<Step<K>>, i: usize, key: K) -> Result<()> {
        let mut work = self.take(path.pop().expect("a parent"));
        work.keys[i] = key;
        self.put(work)
    }

    /// Takes the node of `step` out to change it (a resident node's vectors are moved out of
    /// the arena until [`Self::put`]).
    fn take(&mut self, step: Step<K>) -> Work<K> {
        match step {
            Step::Resident { node, .. } => self.take_resident(node),
            Step::Disk { block, node, .. } => Work {
                place: Place::Disk(block),
                level: node.level,
                keys: node.keys,
                children: node.children,
            },
        }
    }

    fn take_resident(&mut self, idx: usize) -> Work<K> {
        let node = &mut self.levels.nodes[idx];
        Work {
            place: Place::Resident(idx),
            level: node.level,
            keys: std::mem::take(&mut node.keys),
            children: std::mem::take(&mut node.children),
        }
    }

    /// Puts `work` back and writes its block.
    fn put(&mut self, work: Work<K>) -> Result<()> {
        let mut buf = self.block_buf();
        match work.place {
            Place::Resident(idx) => {
                let node = &mut self.levels.nodes[idx];
                node.keys = work.keys;
                node.children = work.children;
                self.write_resident(idx, &mut buf)
            }
            Place::Disk(block) => {
                encode_inner(
                    &mut buf,
                    &self.layout,
                    work.level,
                    &work.keys,
                    work.children.into_iter(),
                );
                self.write_block(block, &mut buf, IoClass::Inner)
            }
        }
    }

    /// Gives the block of a merged-away inner node to the free list.
    fn discard(&mut self, place: Place) {
        let block = match place {
            Place::Resident(idx) => {
                let block = self.levels.nodes[idx].block;
                self.levels.remove(idx);
                block
            }
            Place::Disk(block) => block,
        };
        self.free.give(block);
        self.header.inners = self.header.inners.saturating_sub(1);
    }

    /// Removes separator `i` and child `i + 1` of the parent at the end of `path` (a child
    /// merged into its left sibling), then rebalances the parent if it underflows, or collapses
    /// the root when it is left with one child.
    fn remove_child(&mut self, mut path: Vec<Step<K>>, i: usize) -> Result<()> {
        let mut work = self.take(path.pop().expect("a parent"));
        work.keys.remove(i);
        work.children.remove(i + 1);
        let Some(grandparent) = path.last() else {
            if work.children.len() > 1 {
                return self.put(work);
            }
            let child = match work.place {
                Place::Resident(_) if self.levels.holds_level(work.level - 1) => {
                    let c = work.children[0] as usize;
                    (self.levels.nodes[c].block, Some(c))
                }
                _ => (work.children[0], None),
            };
            self.put(work)?;
            return self.collapse_root(child.0, child.1);
        };
        if work.children.len() >= min_children(self.layout.inner_cap)
            || self.step_len(grandparent) < 2
        {
            return self.put(work);
        }
        self.rebalance_inner(work, path)
    }

    /// Merges or balances the inner node `work` (under the minimum, not written) with a sibling
    /// under the parent at the end of `path`, which has two children or more.
    fn rebalance_inner(&mut self, work: Work<K>, path: Vec<Step<K>>) -> Result<()> {
        let parent = path.last().expect("a parent");
        let pos = step_pos(parent);
        let sep_pos = pos.saturating_sub(1);
        let sib_pos = if pos > 0 { pos - 1 } else { 1 };
        let sep = self.step_keys(parent)[sep_pos];
        let sibling = match parent {
            Step::Resident { node, .. } if self.levels.holds_level(work.level) => {
                let idx = self.levels.nodes[*node].children[sib_pos] as usize;
                self.take_resident(idx)
            }
            _ => {
                let block = self.step_child_block(parent, sib_pos);
                let bounds = self.child_bounds(parent, sib_pos);
                let inner = self.read_inner(block, work.level, &bounds, &mut self.block_buf())?;
                Work {
                    place: Place::Disk(block),
                    level: inner.level,
                    keys: inner.keys,
                    children: inner.children,
                }
            }
        };
        let (mut left, right) = if pos > 0 {
            (sibling, work)
        } else {
            (work, sibling)
        };
        let total = left.children.len() + right.children.len();
        let left_had = left.children.len();
        left.keys.push(sep);
        left.keys.extend(right.keys);
        left.children.extend(right.children);
        if total < 2 * min_children(self.layout.inner_cap) {
            self.put(left)?;
            self.discard(right.place);
            return self.remove_child(path, sep_pos);
        }
        let half = total / 2;
        let right = Work {
            place: right.place,
            level: right.level,
            children: left.children.split_off(half),
            keys: left.keys.split_off(half),
        };
        let up = left.keys.pop().expect("the separator between the halves");
        if half > left_had {
            self.put(left)?;
            self.set_separator(path, sep_pos, up)?;
            self.put(right)
        } else {
            self.put(right)?;
            self.set_separator(path, sep_pos, up)?;
            self.put(left)
        }
    }

    /// The root (already written with its one child) is freed; `child` (its block, and its
    /// arena index when resident) becomes the root.
    fn collapse_root(&mut self, child: u64, resident_child: Option<usize>) -> Result<()> {
        let old = self.header.root;
        self.free.give(old);
        self.header.inners = self.header.inners.saturating_sub(1);
        self.header.height = self.header.height.saturating_sub(1);
        self.header.root = child;
        if !self.levels.is_empty() {
            match resident_child {
                Some(c) => {
                    let root = self.levels.root;
                    self.levels.remove(root);
                    self.levels.root = c;
                }
                None => self.levels = ResidentLevels::empty(),
            }
        }
        Ok(())
    }

    /// After a structural change: drops removed resident nodes, and reads the resident levels
    /// again when a root collapse left fewer than the tree's [`super::Resident`] asks for.
    fn finish_structure(&mut self) -> Result<()> {
        self.levels.compact();
        let target = self.resident.levels(self.header.height);
        if self.levels.count() < target {
            self.levels =
                ResidentLevels::load(self.device.as_ref(), &self.layout, &self.header, target)?;
        }
        Ok(())
    }
}
