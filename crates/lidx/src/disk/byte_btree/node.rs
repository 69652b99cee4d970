//! Inner nodes, held in memory: separators in one byte arena per node, children as leaf
//! blocks (level 1) or shared nodes (above), copied on write.
//!
//! Child `i` holds the keys from separator `i - 1` (inclusive) up to separator `i`
//! (exclusive); the first child is open below, within the node's own range. Separators are
//! the shortest prefixes that route between two neighbouring leaves, so a node costs about
//! 12 bytes per child plus a few key bytes. Nodes are shared through `Arc`: a snapshot or a
//! cursor holds the root it started from, and a write copies only the nodes on its path that
//! someone else still holds ([`Arc::make_mut`]).

use std::convert::Infallible;
use std::sync::Arc;

use crate::disk::bptree::pack::{build_up, pack_level, Cut};

/// Most children of a node.
pub(crate) const MAX_KIDS: usize = 256;

/// A node's children.
#[derive(Clone, Debug)]
pub(crate) enum Kids {
    /// Leaf blocks of the page file (level 1). Block 0 stands for the empty leaf of an empty
    /// tree.
    Leaves(Vec<u64>),
    /// Nodes one level down.
    Nodes(Vec<Arc<Node>>),
}

/// Children with the separator below each (the first one's unused), while nodes are rebuilt.
pub(crate) type Pieces = Vec<(Vec<u8>, Kid)>;

/// One child, while a node is rebuilt.
#[derive(Clone, Debug)]
pub(crate) enum Kid {
    Leaf(u64),
    Node(Arc<Node>),
}

/// An inner node.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// 1 when the children are leaves.
    pub(crate) level: u8,
    seps: Vec<u8>,
    ends: Vec<u32>,
    pub(crate) kids: Kids,
}

impl Node {
    /// The root of an empty tree: one empty leaf.
    pub(crate) fn empty() -> Node {
        Node {
            level: 1,
            seps: Vec::new(),
            ends: Vec::new(),
            kids: Kids::Leaves(vec![0]),
        }
    }

    /// Builds a node of `level` from its children, each with the separator below it (the
    /// first one's is ignored). `list` must not be empty.
    pub(crate) fn from_list(level: u8, list: Pieces) -> Node {
        let mut seps = Vec::new();
        let mut ends = Vec::with_capacity(list.len().saturating_sub(1));
        let mut leaves = Vec::new();
        let mut nodes = Vec::new();
        for (i, (sep, kid)) in list.into_iter().enumerate() {
            if i > 0 {
                seps.extend_from_slice(&sep);
                ends.push(seps.len() as u32);
            }
            match kid {
                Kid::Leaf(b) => leaves.push(b),
                Kid::Node(n) => nodes.push(n),
            }
        }
        let kids = if level == 1 {
            Kids::Leaves(leaves)
        } else {
            Kids::Nodes(nodes)
        };
        Node {
            level,
            seps,
            ends,
            kids,
        }
    }

    /// Takes the node apart into its children with their separators (the first one empty).
    pub(crate) fn into_list(self) -> Pieces {
        let seps: Vec<Vec<u8>> = std::iter::once(Vec::new())
            .chain((0..self.ends.len()).map(|j| self.sep(j).to_vec()))
            .collect();
        let kids: Vec<Kid> = match self.kids {
            Kids::Leaves(l) => l.into_iter().map(Kid::Leaf).collect(),
            Kids::Nodes(n) => n.into_iter().map(Kid::Node).collect(),
        };
        seps.into_iter().zip(kids).collect()
    }

    /// Children.
    pub(crate) fn len(&self) -> usize {
        self.ends.len() + 1
    }

    /// Separator `j` (between children `j` and `j + 1`).
    pub(crate) fn sep(&self, j: usize) -> &[u8] {
        let start = if j == 0 { 0 } else { self.ends[j - 1] as usize };
        &self.seps[start..self.ends[j] as usize]
    }

    /// The child whose range holds `key`.
    pub(crate) fn child_index(&self, key: &[u8]) -> usize {
        crate::search::lower_bound_by(self.ends.len(), |j| self.sep(j) <= key)
    }

    /// Bytes of memory of this node and the nodes below it.
    pub(crate) fn memory_bytes(&self) -> usize {
        let own = std::mem::size_of::<Node>() + self.seps.capacity() + 4 * self.ends.capacity();
        own + match &self.kids {
            Kids::Leaves(l) => 8 * l.capacity(),
            Kids::Nodes(n) => {
                8 * n.capacity()
                    + n.iter()
                        .map(|c| c.memory_bytes() + 2 * std::mem::size_of::<usize>())
                        .sum::<usize>()
            }
        }
    }

    /// Calls `f` with every leaf block under this node, in key order, with the separator
    /// below it (`low`, empty for the first leaf of the tree).
    pub(crate) fn for_each_leaf(&self, low: &[u8], f: &mut impl FnMut(&[u8], u64)) {
        for i in 0..self.len() {
            let sep = if i == 0 { low } else { self.sep(i - 1) };
            match &self.kids {
                Kids::Leaves(l) => f(sep, l[i]),
                Kids::Nodes(n) => n[i].for_each_leaf(sep, f),
            }
        }
    }
}

/// Packs `list` (children with their separators) into nodes of `level` of at most
/// [`MAX_KIDS`] children: full ones when `rightmost` (appends fill the right edge), even ones
/// otherwise. Returns each node with the separator below it.
pub(crate) fn pack(level: u8, list: Pieces, rightmost: bool) -> Pieces {
    let cut = if rightmost {
        Cut::FullFromLeft
    } else {
        Cut::Even
    };
    let Ok(nodes) = pack_level(u32::from(level), list, MAX_KIDS, cut, &mut make);
    nodes
}

/// A root over `list` (children of `level`, in key order, each with the separator below it;
/// at least one): as many levels as they need, the right edge full.
pub(crate) fn build_up_from(level: u8, list: Pieces) -> Node {
    let Ok((_, root)) = build_up(u32::from(level), list, MAX_KIDS, Cut::FullFromLeft, make);
    match root {
        Kid::Node(node) => Arc::unwrap_or_clone(node),
        Kid::Leaf(_) => unreachable!("every level built is of nodes"),
    }
}

/// The node of `level` over `chunk` (children with their separators), with the separator
/// below it.
fn make(level: u32, mut chunk: Pieces) -> Result<(Vec<u8>, Kid), Infallible> {
    let low = std::mem::take(&mut chunk[0].0);
    // A level fits a byte: 256 children a node would need 256^255 leaves to pass it.
    Ok((
        low,
        Kid::Node(Arc::new(Node::from_list(level as u8, chunk))),
    ))
}

/// Builds a tree over `leaves` (in key order, each with the separator below it) and returns
/// its root.
pub(crate) fn build(leaves: Vec<(Vec<u8>, u64)>) -> Node {
    if leaves.is_empty() {
        return Node::empty();
    }
    build_up_from(
        1,
        leaves.into_iter().map(|(s, b)| (s, Kid::Leaf(b))).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: u64) -> Vec<(Vec<u8>, u64)> {
        (0..n)
            .map(|i| ((i * 10).to_be_bytes().to_vec(), i + 1))
            .collect()
    }

    #[test]
    fn a_built_tree_routes_every_key_to_its_leaf() {
        for n in [1, 2, 255, 256, 257, 70_000] {
            let root = build(leaves(n));
            let mut seen = Vec::new();
            root.for_each_leaf(&[], &mut |_, b| seen.push(b));
            assert_eq!(seen, (1..=n).collect::<Vec<_>>());
            for probe in [0u64, 5, 10, 15, n * 10 - 1, n * 10 + 100] {
                let key = probe.to_be_bytes();
                let mut node = &root;
                let leaf = loop {
                    let i = node.child_index(&key);
                    match &node.kids {
                        Kids::Leaves(l) => break l[i],
                        Kids::Nodes(c) => node = &c[i],
                    }
                };
                assert_eq!(leaf, (probe / 10).min(n - 1) + 1, "n {n} probe {probe}");
            }
        }
    }

    #[test]
    fn a_node_taken_apart_builds_back_the_same() {
        let root = build(leaves(100));
        let list = root.clone().into_list();
        assert_eq!(list.len(), 100);
        let again = Node::from_list(1, list);
        assert_eq!(again.len(), root.len());
        for j in 0..root.len() - 1 {
            assert_eq!(again.sep(j), root.sep(j));
        }
        assert!(root.memory_bytes() >= 100 * 12);
    }
}
