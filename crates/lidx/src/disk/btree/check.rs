//! Whole-tree checks: the structure [`DiskBTree::verify`] and the tests check, and the free
//! list's disjointness from the tree that opening checks.
//!
//! Paper 003 has nothing to say here; these are the invariants our write path keeps
//! ([`super::update`], [`super::merge`]) and that a file damaged under valid checksums breaks:
//! every node is reached once, at the level its parent expects, with keys in the range its
//! parents give it; the leaves' sibling links chain them in key order from the header's first
//! leaf; the header's counts are the tree's; no free block is reachable; every block of the
//! tree is the header, a node or free; and each resident node is its block's copy.

use std::collections::{HashMap, HashSet};

use crate::disk::header_fields::corrupt_at as corrupt;
use crate::error::Result;
use crate::io::IoClass;
use crate::key::Key;

use super::merge::{min_children, min_entries};
use super::node::Inner;
use super::tree::{narrow, Bounds, DiskBTree};

/// What [`DiskBTree::check`] found in a sound tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeCheck {
    /// Entries in the leaves.
    pub entries: u64,
    /// Leaves reached.
    pub leaves: u64,
    /// Inner nodes reached.
    pub inners: u64,
    /// Blocks on the free list.
    pub free: u64,
    /// Nodes other than the root under the minimum fill (`super::merge`): none once every
    /// node was written by an update, some after a bulk load with a fill factor under 1/2.
    pub under_min: u64,
}

/// What the walk collects.
struct Walk<K> {
    seen: HashSet<u64>,
    /// Leaves in key order, with their sibling links.
    leaves: Vec<(u64, Option<u64>)>,
    inners: HashMap<u64, Inner<K>>,
    entries: u64,
    under_min: u64,
}

fn same<K: Key>(a: &[K], b: &[K]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| !x.key_lt(y) && !y.key_lt(x))
}

impl<K: Key> DiskBTree<K> {
    /// Reads every node from disk (resident ones too) and checks the tree's invariants (module
    /// docs): what `lidx verify` runs. Returns the entries.
    pub fn verify(&self) -> Result<u64> {
        Ok(self.check()?.entries)
    }

    /// [`Self::verify`] with what it found: counts, and nodes under the minimum fill.
    #[doc(hidden)]
    pub fn check(&self) -> Result<TreeCheck> {
        let file = self.file();
        let mut walk = Walk {
            seen: HashSet::new(),
            leaves: Vec::new(),
            inners: HashMap::new(),
            entries: 0,
            under_min: 0,
        };
        self.visit(
            self.header.root,
            self.header.height - 1,
            (None, None),
            true,
            &mut walk,
        )?;
        let first = walk.leaves.first().map(|l| l.0);
        if first != Some(self.header.first_leaf) {
            return Err(corrupt(
                file,
                0,
                format!(
                    "first leaf {} in the header, {first:?} in the tree",
                    self.header.first_leaf
                ),
            ));
        }
        for pair in walk.leaves.windows(2) {
            if pair[0].1 != Some(pair[1].0) {
                return Err(corrupt(
                    file,
                    pair[0].0,
                    format!(
                        "the leaf's right sibling link names {:?}, the next leaf is block {}",
                        pair[0].1, pair[1].0
                    ),
                ));
            }
        }
        if let Some(&(last, Some(link))) = walk.leaves.last() {
            return Err(corrupt(
                file,
                last,
                format!("the last leaf links to block {link}"),
            ));
        }
        let found = (
            walk.leaves.len() as u64,
            walk.inners.len() as u64,
            walk.entries,
        );
        let header = (self.header.leaves, self.header.inners, self.header.entries);
        if found != header {
            return Err(corrupt(
                file,
                0,
                format!(
                    "(leaves, inner nodes, entries) {found:?} in the tree, {header:?} in the header"
                ),
            ));
        }
        self.check_free_against(|b| walk.seen.contains(&b))?;
        if 1 + found.0 + found.1 + self.free.len() != self.header.blocks {
            return Err(corrupt(
                file,
                0,
                format!(
                    "{} blocks, but the header, {} nodes and {} free blocks",
                    self.header.blocks,
                    found.0 + found.1,
                    self.free.len()
                ),
            ));
        }
        self.check_resident(&walk.inners)?;
        Ok(TreeCheck {
            entries: walk.entries,
            leaves: found.0,
            inners: found.1,
            free: self.free.len(),
            under_min: walk.under_min,
        })
    }

    fn visit(
        &self,
        block: u64,
        level: u32,
        bounds: Bounds<K>,
        root: bool,
        walk: &mut Walk<K>,
    ) -> Result<()> {
        if !walk.seen.insert(block) {
            return Err(corrupt(
                self.file(),
                block,
                "the node is reached twice from the root",
            ));
        }
        let mut buf = self.block_buf();
        if level == 0 {
            self.device.read_blocks(block, &mut buf, IoClass::Leaf)?;
            let leaf = self.leaf(&buf, block, &bounds)?;
            walk.under_min += u64::from(!root && leaf.len() < min_entries(self.layout.leaf_cap));
            walk.entries += leaf.len() as u64;
            walk.leaves.push((block, leaf.sibling()));
            return Ok(());
        }
        let inner = self.read_inner(block, level, &bounds, &mut buf)?;
        walk.under_min +=
            u64::from(!root && inner.children.len() < min_children(self.layout.inner_cap));
        for (i, &child) in inner.children.iter().enumerate() {
            let mut child_bounds = bounds;
            narrow(&mut child_bounds, &inner.keys, i);
            self.visit(child, level - 1, child_bounds, false, walk)?;
        }
        walk.inners.insert(block, inner);
        Ok(())
    }

    /// `Corrupt` naming the first free block that `reachable` says the tree reaches.
    fn check_free_against(&self, reachable: impl Fn(u64) -> bool) -> Result<()> {
        match self.free.sorted().into_iter().find(|&b| reachable(b)) {
            Some(block) => Err(corrupt(
                self.file(),
                block,
                "the block is on the free list and reachable from the root",
            )),
            None => Ok(()),
        }
    }

    /// Each resident node must be the copy of its block, and the arena must hold exactly the
    /// inner nodes of the resident levels.
    fn check_resident(&self, disk: &HashMap<u64, Inner<K>>) -> Result<()> {
        let levels = &self.levels;
        for (idx, node) in levels.nodes.iter().enumerate() {
            let children: Vec<u64> = (0..node.children.len())
                .map(|i| levels.child_block(idx, i))
                .collect();
            let matches = disk.get(&node.block).is_some_and(|d| {
                d.level == node.level && same(&d.keys, &node.keys) && d.children == children
            });
            if !matches {
                return Err(corrupt(
                    self.file(),
                    node.block,
                    "the resident copy of the node differs from its block",
                ));
            }
        }
        let expected = if levels.is_empty() {
            0
        } else {
            disk.values().filter(|d| d.level >= levels.lowest).count()
        };
        if levels.nodes.len() != expected {
            return Err(corrupt(
                self.file(),
                0,
                format!(
                    "{} resident nodes, the resident levels of the tree have {expected}",
                    levels.nodes.len()
                ),
            ));
        }
        Ok(())
    }

    /// Opening a tree with free blocks: no free block may be reachable from the root. The
    /// resident nodes and their children are known without I/O; inner nodes below them are
    /// read (one request each), leaves are not.
    pub(super) fn check_free_unreachable(&self) -> Result<()> {
        let mut reached: HashSet<u64> = HashSet::new();
        let (mut frontier, mut level) = if self.levels.is_empty() {
            (vec![self.header.root], self.header.height - 1)
        } else {
            let lowest = self.levels.lowest;
            reached.extend(self.levels.nodes.iter().map(|n| n.block));
            let below = self.levels.nodes.iter().filter(|n| n.level == lowest);
            (
                below.flat_map(|n| n.children.iter().copied()).collect(),
                lowest - 1,
            )
        };
        let mut buf = self.block_buf();
        while level > 0 {
            let mut next = Vec::new();
            for &block in &frontier {
                next.extend(
                    self.read_inner(block, level, &(None, None), &mut buf)?
                        .children,
                );
            }
            reached.extend(frontier);
            frontier = next;
            level -= 1;
        }
        reached.extend(frontier);
        self.check_free_against(|b| reached.contains(&b))
    }
}
