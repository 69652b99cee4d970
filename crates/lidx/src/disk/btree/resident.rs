//! The memory-resident top of the tree: the levels [`super::Resident`] keeps in RAM.
//!
//! Paper 003 §6.2 keeps the B+-tree's inner nodes in an STX B+-tree in memory and its leaves on
//! disk. We keep the same nodes, decoded once (at build or open): each resident node holds its
//! separators and children in two exactly sized `Vec`s, nothing else but its block id and level,
//! so memory is about the size of the keys and ids, not of whole 4 KiB blocks. A resident
//! node's children are indexes into the arena when the level below is resident too, and block
//! ids otherwise; a descent walks the arena without I/O and reads from disk only below it.
//!
//! Updates write through: a resident node that changes is rewritten to its block as well, so
//! the file always holds the whole tree and reopening with any [`super::Resident`] works. A
//! merge that removes a resident node leaves it dead in the arena until the delete ends, so the
//! arena indexes on its path stay valid; then [`ResidentLevels::compact`] drops it.

use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass};
use crate::key::Key;

use super::header::Header;
use super::node::{check_separators, decode_node, expect_inner, NodeLayout};

/// One resident inner node.
#[derive(Debug)]
pub(super) struct ResidentNode<K> {
    /// Its block in the file.
    pub block: u64,
    /// Its level (1 = parent of leaves).
    pub level: u32,
    /// Separators.
    pub keys: Vec<K>,
    /// Arena indexes of the children when their level is resident, else their block ids.
    pub children: Vec<u64>,
}

/// The resident levels: an arena of nodes, the root's index and the lowest resident level.
#[derive(Debug)]
pub(super) struct ResidentLevels<K> {
    pub nodes: Vec<ResidentNode<K>>,
    pub root: usize,
    pub lowest: u32,
    /// Nodes removed by merges and not yet compacted away.
    pub dead: usize,
}

impl<K: Key> ResidentLevels<K> {
    pub(super) fn empty() -> Self {
        ResidentLevels::from_arena(Vec::new(), 0, 0)
    }

    /// Levels over `nodes` with the root at `root` and `lowest` the lowest resident level.
    pub(super) fn from_arena(nodes: Vec<ResidentNode<K>>, root: usize, lowest: u32) -> Self {
        ResidentLevels {
            nodes,
            root,
            lowest,
            dead: 0,
        }
    }

    /// Marks node `idx` removed (a merge gave its block back); its memory goes now, its slot
    /// at the next [`Self::compact`].
    pub(super) fn remove(&mut self, idx: usize) {
        let node = &mut self.nodes[idx];
        node.keys = Vec::new();
        node.children = Vec::new();
        self.dead += 1;
    }

    /// Drops the removed nodes: rebuilds the arena from the root, breadth first, remapping
    /// child indexes. Costs a pass over the resident nodes; merges of inner nodes are rare
    /// (one per about a quarter of a node's children in merges below it).
    pub(super) fn compact(&mut self) {
        if self.dead == 0 || self.nodes.is_empty() {
            self.dead = 0;
            return;
        }
        let lowest = self.lowest;
        let mut old: Vec<Option<ResidentNode<K>>> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(Some)
            .collect();
        let mut order = vec![self.root];
        let mut i = 0;
        while i < order.len() {
            let node = old[order[i]].as_ref().expect("a live node");
            if node.level > lowest {
                order.extend(node.children.iter().map(|&c| c as usize));
            }
            i += 1;
        }
        let mut remap = vec![usize::MAX; old.len()];
        for (new, &idx) in order.iter().enumerate() {
            remap[idx] = new;
        }
        self.nodes = order
            .iter()
            .map(|&idx| {
                let mut node = old[idx].take().expect("each node once");
                if node.level > lowest {
                    for c in &mut node.children {
                        *c = remap[*c as usize] as u64;
                    }
                }
                node
            })
            .collect();
        self.root = 0;
        self.dead = 0;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// True when nodes of `level` (>= 1) live in the arena.
    #[inline]
    pub(super) fn holds_level(&self, level: u32) -> bool {
        !self.nodes.is_empty() && level >= 1 && level >= self.lowest
    }

    /// Number of resident levels given the root's level.
    pub(super) fn count(&self) -> u32 {
        if self.nodes.is_empty() {
            0
        } else {
            self.nodes[self.root].level - self.lowest + 1
        }
    }

    /// Block id of child `i` of node `node`.
    pub(super) fn child_block(&self, node: usize, i: usize) -> u64 {
        let n = &self.nodes[node];
        if self.holds_level(n.level - 1) {
            self.nodes[n.children[i] as usize].block
        } else {
            n.children[i]
        }
    }

    /// Heap bytes held: the arena and every node's two vectors, by capacity.
    pub(super) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<ResidentNode<K>>()
            + self
                .nodes
                .iter()
                .map(|n| {
                    n.keys.capacity() * std::mem::size_of::<K>()
                        + n.children.capacity() * std::mem::size_of::<u64>()
                })
                .sum::<usize>()
    }

    /// Reads the top `count` levels of the tree described by `header` from `device`, top-down,
    /// one request per node, validating each node (level, separators inside the parent's key
    /// range, no more nodes than the header's inner count).
    pub(super) fn load(
        device: &dyn BlockDevice,
        layout: &NodeLayout,
        header: &Header,
        count: u32,
    ) -> Result<Self> {
        let mut out = ResidentLevels::empty();
        if count == 0 {
            return Ok(out);
        }
        let file = device.name();
        out.lowest = header.height - count;
        let mut buf = AlignedBuf::zeroed(device.block_size());
        type Pending<K> = (u64, u32, Option<K>, Option<K>, Option<(usize, usize)>);
        let mut queue: std::collections::VecDeque<Pending<K>> =
            [(header.root, header.height - 1, None, None, None)].into();
        while let Some((block, level, lo, hi, parent)) = queue.pop_front() {
            if out.nodes.len() as u64 >= header.inners {
                return Err(Error::Corrupt {
                    file: file.to_string(),
                    block: Some(block),
                    what: format!(
                        "more inner nodes are reachable than the header's {}: a node is \
                         referenced twice",
                        header.inners
                    ),
                });
            }
            device.read_blocks(block, &mut buf, IoClass::Inner)?;
            let node = decode_node::<K>(&buf[..layout.usable], layout, block, header.blocks, file)?;
            let inner = expect_inner(node, level, block, file)?;
            check_separators(&inner.keys, lo.as_ref(), hi.as_ref(), block, file)?;
            let idx = out.nodes.len();
            if let Some((p, pos)) = parent {
                out.nodes[p].children[pos] = idx as u64;
            }
            if level > out.lowest {
                for (i, &child) in inner.children.iter().enumerate() {
                    let clo = if i == 0 { lo } else { Some(inner.keys[i - 1]) };
                    let chi = inner.keys.get(i).copied().or(hi);
                    queue.push_back((child, level - 1, clo, chi, Some((idx, i))));
                }
            }
            out.nodes.push(ResidentNode {
                block,
                level,
                keys: inner.keys,
                children: inner.children,
            });
        }
        out.root = 0;
        out.nodes.shrink_to_fit();
        Ok(out)
    }

    /// Adds a new root above the current top (after the old root split): `left` and `right`
    /// are the two children as this arena refers to them.
    pub(super) fn push_root(&mut self, block: u64, level: u32, sep: K, left: u64, right: u64) {
        if self.nodes.is_empty() {
            self.lowest = level;
        }
        self.nodes.push(ResidentNode {
            block,
            level,
            keys: vec![sep],
            children: vec![left, right],
        });
        self.root = self.nodes.len() - 1;
    }

    /// Evicts the lowest resident level: its parents get block ids instead of arena indexes.
    pub(super) fn drop_lowest(&mut self) {
        let low = self.lowest;
        if self.count() <= 1 {
            *self = ResidentLevels::empty();
            return;
        }
        let blocks: Vec<u64> = self.nodes.iter().map(|n| n.block).collect();
        let mut remap = vec![usize::MAX; self.nodes.len()];
        let mut kept = Vec::with_capacity(self.nodes.len());
        for (i, node) in std::mem::take(&mut self.nodes).into_iter().enumerate() {
            if node.level != low {
                remap[i] = kept.len();
                kept.push(node);
            }
        }
        for node in &mut kept {
            let to_block = node.level == low + 1;
            for c in &mut node.children {
                *c = if to_block {
                    blocks[*c as usize]
                } else {
                    remap[*c as usize] as u64
                };
            }
        }
        kept.shrink_to_fit();
        self.root = remap[self.root];
        self.nodes = kept;
        self.lowest = low + 1;
    }
}
