//! Leaf and inner node codec: one node per block, fixed capacities.
//!
//! Paper 003 §4 stores B+-tree nodes one per 4 KiB block with child addresses on disk; its I/O
//! cost (Table 2: `log_B N` blocks per lookup) assumes exactly that. We keep it: a node fills
//! the usable bytes of one block ([`crate::io::BlockDevice::payload_size`], the block size
//! minus the 4-byte checksum trailer the device owns), and capacities follow from the key and
//! payload sizes. Both arrays of a node sit at fixed offsets computed from the capacity, so an
//! insert into a leaf with room shifts bytes in place and rewrites that one block.
//!
//! Byte layout of a node (little-endian; `P` = usable bytes of a block, `ks` = key size,
//! `ps` = payload size, `L = (P - 16) / (ks + ps)` leaf entries, `I = (P - 16 + ks) / (ks + 8)`
//! inner children):
//!
//! | offset                      | size       | field                                        |
//! |-----------------------------|------------|----------------------------------------------|
//! | 0                           | 1          | kind: 1 = leaf, 2 = inner                    |
//! | 1                           | 1          | level: 0 for a leaf, 1 = parent of leaves, ...|
//! | 2                           | 2          | reserved, 0                                  |
//! | 4                           | 4          | count: entries (leaf) or children (inner)    |
//! | 8                           | 8          | leaf: right sibling block, `u64::MAX` = none; inner: `u64::MAX` |
//! | 16                          | `L * ks`   | leaf: keys, ascending                        |
//! | `16 + L * ks`               | `L * ps`   | leaf: payloads, entry `i` at `i * ps`        |
//! | 16                          | `(I-1)*ks` | inner: separators, ascending                 |
//! | `16 + (I - 1) * ks`         | `I * 8`    | inner: child block ids                       |
//!
//! Bytes past `count` are zero when written and ignored when read. An inner node with `c`
//! children holds `c - 1` separators: child `i` holds the keys `k` with `sep[i-1] <= k <
//! sep[i]` (separator `i - 1` is the smallest key that was in child `i` when it was created),
//! so the child to follow for `k` is the number of separators `<= k`.
//!
//! [`decode_node`] validates everything a search relies on (kind, level, count within the
//! capacity, keys strictly ascending, block ids inside the file) and returns
//! [`Error::Corrupt`](crate::Error::Corrupt) naming the block otherwise, so a block that passed its checksum but was
//! written wrong can never make a search panic or loop. The checks a descent adds on a decoded
//! node (its level, its keys inside the range its parent gives it: `expect_inner`,
//! `check_separators`) are here too, shared by the tree's reads and its resident levels.

use crate::disk::bptree::outside;
use crate::disk::header_fields::corrupt_at as corrupt;
use crate::error::Result;
use crate::key::Key;

/// Size of the node header in bytes.
pub(crate) const NODE_HEADER: usize = 16;
/// Sibling / link value meaning "none".
pub(crate) const NO_BLOCK: u64 = u64::MAX;
const KIND_LEAF: u8 = 1;
const KIND_INNER: u8 = 2;

/// Sizes that fix where everything sits in a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLayout {
    /// Usable bytes per block (block size minus the checksum trailer).
    pub usable: usize,
    /// Key size in bytes.
    pub key_size: usize,
    /// Payload size in bytes.
    pub payload_size: usize,
    /// Entries per leaf.
    pub leaf_cap: usize,
    /// Children per inner node.
    pub inner_cap: usize,
}

impl NodeLayout {
    /// The layout for blocks with `usable` bytes, or `None` when a leaf would hold fewer than 2
    /// entries or an inner node fewer than 3 children (splits need at least that) or a count
    /// would not fit the 32-bit field.
    pub fn new(usable: usize, key_size: usize, payload_size: usize) -> Option<NodeLayout> {
        if key_size == 0 || usable < NODE_HEADER {
            return None;
        }
        let leaf_cap = (usable - NODE_HEADER) / (key_size + payload_size);
        let inner_cap = (usable - NODE_HEADER + key_size) / (key_size + 8);
        (leaf_cap >= 2 && inner_cap >= 3 && leaf_cap <= u32::MAX as usize).then_some(NodeLayout {
            usable,
            key_size,
            payload_size,
            leaf_cap,
            inner_cap,
        })
    }

    #[inline]
    fn leaf_key_at(&self, i: usize) -> usize {
        NODE_HEADER + i * self.key_size
    }

    #[inline]
    fn leaf_payload_at(&self, i: usize) -> usize {
        NODE_HEADER + self.leaf_cap * self.key_size + i * self.payload_size
    }

    #[inline]
    fn inner_key_at(&self, i: usize) -> usize {
        NODE_HEADER + i * self.key_size
    }

    #[inline]
    fn inner_child_at(&self, i: usize) -> usize {
        NODE_HEADER + (self.inner_cap - 1) * self.key_size + i * 8
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn write_header(buf: &mut [u8], kind: u8, level: u8, count: usize, link: u64) {
    buf[0] = kind;
    buf[1] = level;
    buf[2..4].fill(0);
    buf[4..8].copy_from_slice(&(count as u32).to_le_bytes());
    buf[8..16].copy_from_slice(&link.to_le_bytes());
}

/// A decoded node.
#[derive(Debug)]
pub enum Node<'a, K: Key> {
    /// A leaf, read in place from the block's bytes.
    Leaf(Leaf<'a, K>),
    /// An inner node, copied out.
    Inner(Inner<K>),
}

/// A validated leaf over the bytes of its block.
#[derive(Debug)]
pub struct Leaf<'a, K: Key> {
    bytes: &'a [u8],
    layout: NodeLayout,
    count: usize,
    sibling: u64,
    _key: std::marker::PhantomData<K>,
}

impl<'a, K: Key> Leaf<'a, K> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the leaf holds no entry (possible after deletes).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The right sibling's block, or `None` for the last leaf.
    pub fn sibling(&self) -> Option<u64> {
        (self.sibling != NO_BLOCK).then_some(self.sibling)
    }

    /// Key of entry `i < len()`.
    #[inline]
    pub fn key(&self, i: usize) -> K {
        K::read_from(&self.bytes[self.layout.leaf_key_at(i)..])
    }

    /// Payload of entry `i < len()`.
    #[inline]
    pub fn payload(&self, i: usize) -> &'a [u8] {
        let at = self.layout.leaf_payload_at(i);
        &self.bytes[at..at + self.layout.payload_size]
    }

    /// Position of the first entry whose key is `>= key` (`len()` when none).
    pub fn lower_bound(&self, key: &K) -> usize {
        crate::search::lower_bound_by(self.count, |i| self.key(i).key_lt(key))
    }

    /// `Ok(i)` when entry `i` holds `key`, else `Err(i)` with the position it would take.
    pub fn find(&self, key: &K) -> std::result::Result<usize, usize> {
        let i = self.lower_bound(key);
        if i < self.count && !key.key_lt(&self.key(i)) {
            Ok(i)
        } else {
            Err(i)
        }
    }
}

/// A decoded inner node: `children.len() == keys.len() + 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct Inner<K> {
    /// Height of the node above the leaves (1 = its children are leaves).
    pub level: u32,
    /// Separators, strictly ascending.
    pub keys: Vec<K>,
    /// Child block ids.
    pub children: Vec<u64>,
}

/// Index of the child to follow for `key`: the number of separators `<= key`.
#[inline]
pub fn child_index<K: Key>(separators: &[K], key: &K) -> usize {
    separators.partition_point(|s| !key.key_lt(s))
}

/// Decodes and validates the node in `bytes` (a block's usable bytes), read from block `block`
/// of `file`, a file of `blocks` blocks: child and sibling ids must lie in `1..blocks`.
pub fn decode_node<'a, K: Key>(
    bytes: &'a [u8],
    layout: &NodeLayout,
    block: u64,
    blocks: u64,
    file: &str,
) -> Result<Node<'a, K>> {
    if bytes.len() < layout.usable || layout.key_size != K::SIZE {
        return Err(corrupt(
            file,
            block,
            format!(
                "node of {} bytes read with a layout for {}-byte nodes of {}-byte keys",
                bytes.len(),
                layout.usable,
                layout.key_size
            ),
        ));
    }
    let id_ok = |id: u64| id >= 1 && id < blocks;
    let (kind, level) = (bytes[0], bytes[1]);
    let count = read_u32(bytes, 4) as usize;
    let link = read_u64(bytes, 8);
    match kind {
        KIND_LEAF => {
            if level != 0 {
                return Err(corrupt(file, block, format!("leaf at level {level}")));
            }
            if count > layout.leaf_cap {
                return Err(corrupt(
                    file,
                    block,
                    format!(
                        "leaf count {count} exceeds the capacity {}",
                        layout.leaf_cap
                    ),
                ));
            }
            if link != NO_BLOCK && (!id_ok(link) || link == block) {
                return Err(corrupt(
                    file,
                    block,
                    format!(
                        "right sibling {link} is not a node block of the file ({blocks} blocks)"
                    ),
                ));
            }
            let leaf: Leaf<K> = Leaf {
                bytes,
                layout: *layout,
                count,
                sibling: link,
                _key: std::marker::PhantomData,
            };
            for i in 1..count {
                if !leaf.key(i - 1).key_lt(&leaf.key(i)) {
                    return Err(corrupt(
                        file,
                        block,
                        format!("leaf keys {} and {} are out of order", i - 1, i),
                    ));
                }
            }
            Ok(Node::Leaf(leaf))
        }
        KIND_INNER => {
            if level == 0 {
                return Err(corrupt(file, block, "inner node at level 0"));
            }
            if count == 0 || count > layout.inner_cap {
                return Err(corrupt(
                    file,
                    block,
                    format!(
                        "inner node has {count} children; expected 1 to {}",
                        layout.inner_cap
                    ),
                ));
            }
            let keys: Vec<K> = (0..count - 1)
                .map(|i| K::read_from(&bytes[layout.inner_key_at(i)..]))
                .collect();
            if let Some(i) = (1..keys.len()).find(|&i| !keys[i - 1].key_lt(&keys[i])) {
                return Err(corrupt(
                    file,
                    block,
                    format!("separators {} and {i} are out of order", i - 1),
                ));
            }
            let children: Vec<u64> = (0..count)
                .map(|i| read_u64(bytes, layout.inner_child_at(i)))
                .collect();
            if let Some(&bad) = children.iter().find(|&&c| !id_ok(c) || c == block) {
                return Err(corrupt(
                    file,
                    block,
                    format!("child {bad} is not a node block of the file ({blocks} blocks)"),
                ));
            }
            Ok(Node::Inner(Inner {
                level: u32::from(level),
                keys,
                children,
            }))
        }
        other => Err(corrupt(file, block, format!("unknown node kind {other}"))),
    }
}

/// Writes a leaf header (kind, count, sibling) into `buf`.
pub(crate) fn write_leaf_header(buf: &mut [u8], count: usize, sibling: Option<u64>) {
    write_header(buf, KIND_LEAF, 0, count, sibling.unwrap_or(NO_BLOCK));
}

/// Writes entry `i` of a leaf (key and payload) into `buf`.
#[inline]
pub(crate) fn write_leaf_entry<K: Key>(
    buf: &mut [u8],
    layout: &NodeLayout,
    i: usize,
    key: &K,
    payload: &[u8],
) {
    key.write_to(&mut buf[layout.leaf_key_at(i)..]);
    let at = layout.leaf_payload_at(i);
    buf[at..at + layout.payload_size].copy_from_slice(payload);
}

/// The bytes of payload `i` of a leaf in `buf`, to fill in place.
#[inline]
pub(crate) fn leaf_payload_mut<'b>(
    buf: &'b mut [u8],
    layout: &NodeLayout,
    i: usize,
) -> &'b mut [u8] {
    let at = layout.leaf_payload_at(i);
    &mut buf[at..at + layout.payload_size]
}

/// Writes key `i` of a leaf into `buf`.
#[inline]
pub(crate) fn write_leaf_key<K: Key>(buf: &mut [u8], layout: &NodeLayout, i: usize, key: &K) {
    key.write_to(&mut buf[layout.leaf_key_at(i)..]);
}

/// Inserts an entry at position `pos` of a validated leaf in `buf` holding `count < leaf_cap`
/// entries, shifting the entries after it.
pub(crate) fn leaf_insert<K: Key>(
    buf: &mut [u8],
    layout: &NodeLayout,
    count: usize,
    pos: usize,
    key: &K,
    payload: &[u8],
) {
    let (ks, ps) = (layout.key_size, layout.payload_size);
    let k = layout.leaf_key_at(pos);
    buf.copy_within(k..layout.leaf_key_at(count), k + ks);
    let p = layout.leaf_payload_at(pos);
    buf.copy_within(p..layout.leaf_payload_at(count), p + ps);
    write_leaf_entry(buf, layout, pos, key, payload);
    buf[4..8].copy_from_slice(&(count as u32 + 1).to_le_bytes());
}

/// Removes entry `pos` of a validated leaf in `buf` holding `count > pos` entries.
pub(crate) fn leaf_remove(buf: &mut [u8], layout: &NodeLayout, count: usize, pos: usize) {
    let (ks, ps) = (layout.key_size, layout.payload_size);
    let k = layout.leaf_key_at(pos);
    let k_end = layout.leaf_key_at(count);
    buf.copy_within(k + ks..k_end, k);
    buf[k_end - ks..k_end].fill(0);
    let p = layout.leaf_payload_at(pos);
    let p_end = layout.leaf_payload_at(count);
    buf.copy_within(p + ps..p_end, p);
    buf[p_end - ps..p_end].fill(0);
    buf[4..8].copy_from_slice(&(count as u32 - 1).to_le_bytes());
}

/// Encodes a whole leaf from its keys and concatenated payloads.
pub(crate) fn encode_leaf<K: Key>(
    buf: &mut [u8],
    layout: &NodeLayout,
    keys: &[K],
    payloads: &[u8],
    sibling: Option<u64>,
) {
    buf[..layout.usable].fill(0);
    write_leaf_header(buf, keys.len(), sibling);
    let ps = layout.payload_size;
    for (i, key) in keys.iter().enumerate() {
        write_leaf_entry(buf, layout, i, key, &payloads[i * ps..(i + 1) * ps]);
    }
}

/// Encodes an inner node at `level` with `keys.len() + 1 == children.len() <= inner_cap`.
pub(crate) fn encode_inner<K: Key>(
    buf: &mut [u8],
    layout: &NodeLayout,
    level: u32,
    keys: &[K],
    children: impl ExactSizeIterator<Item = u64>,
) {
    buf[..layout.usable].fill(0);
    write_header(buf, KIND_INNER, level as u8, children.len(), NO_BLOCK);
    for (i, key) in keys.iter().enumerate() {
        key.write_to(&mut buf[layout.inner_key_at(i)..]);
    }
    for (i, child) in children.enumerate() {
        let at = layout.inner_child_at(i);
        buf[at..at + 8].copy_from_slice(&child.to_le_bytes());
    }
}

/// The inner node of `node`, which must be at `level`.
pub(super) fn expect_inner<K: Key>(
    node: Node<'_, K>,
    level: u32,
    block: u64,
    file: &str,
) -> Result<Inner<K>> {
    match node {
        Node::Inner(inner) if inner.level == level => Ok(inner),
        Node::Inner(inner) => Err(corrupt(
            file,
            block,
            format!(
                "inner node at level {}, expected level {level}",
                inner.level
            ),
        )),
        Node::Leaf(_) => Err(corrupt(
            file,
            block,
            format!("a leaf where an inner node of level {level} belongs"),
        )),
    }
}

/// `Corrupt` unless every separator lies in `lo <= s < hi`.
pub(super) fn check_separators<K: Key>(
    keys: &[K],
    lo: Option<&K>,
    hi: Option<&K>,
    block: u64,
    file: &str,
) -> Result<()> {
    match (keys.first(), keys.last()) {
        (Some(first), Some(last)) if outside(first, last, lo, hi, K::key_lt) => Err(corrupt(
            file,
            block,
            "separators lie outside the key range the parent gives this node",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn layout() -> NodeLayout {
        NodeLayout::new(508, 8, 8).unwrap()
    }

    #[test]
    fn capacities_follow_from_sizes() {
        let l = NodeLayout::new(4092, 8, 8).unwrap();
        assert_eq!((l.leaf_cap, l.inner_cap), (254, 255));
        let s = NodeLayout::new(4092, 16, 8).unwrap();
        assert_eq!((s.leaf_cap, s.inner_cap), (169, 170));
        assert!(NodeLayout::new(508, 8, 300).is_none());
    }

    #[test]
    fn leaf_round_trip_insert_remove() {
        let l = layout();
        let mut buf = vec![0u8; 508];
        encode_leaf(&mut buf, &l, &[10u64, 30], &[1u8; 16], Some(7));
        leaf_insert(&mut buf, &l, 2, 1, &20u64, &[2u8; 8]);
        let Node::Leaf(leaf) = decode_node::<u64>(&buf, &l, 3, 10, "f").unwrap() else {
            panic!("not a leaf")
        };
        assert_eq!(
            (0..3).map(|i| leaf.key(i)).collect::<Vec<_>>(),
            [10, 20, 30]
        );
        assert_eq!(leaf.payload(1), &[2u8; 8]);
        assert_eq!((leaf.find(&20), leaf.find(&25)), (Ok(1), Err(2)));
        assert_eq!(leaf.sibling(), Some(7));
        leaf_remove(&mut buf, &l, 3, 0);
        let Node::Leaf(leaf) = decode_node::<u64>(&buf, &l, 3, 10, "f").unwrap() else {
            panic!("not a leaf")
        };
        assert_eq!(
            (leaf.len(), leaf.key(0), leaf.payload(0)),
            (2, 20, &[2u8; 8][..])
        );
    }

    #[test]
    fn inner_round_trip_and_validation() {
        let l = layout();
        let mut buf = vec![0u8; 508];
        encode_inner(&mut buf, &l, 2, &[5u64, 9], [1u64, 2, 3].into_iter());
        let Node::Inner(inner) = decode_node::<u64>(&buf, &l, 4, 10, "f").unwrap() else {
            panic!("not inner")
        };
        assert_eq!(inner.keys, [5, 9]);
        assert_eq!(inner.children, [1, 2, 3]);
        assert_eq!(child_index(&inner.keys, &5), 1);
        assert_eq!(child_index(&inner.keys, &4), 0);
        assert!(
            decode_node::<u64>(&buf, &l, 4, 3, "f").is_err(),
            "child 3 beyond 3 blocks"
        );
        encode_inner(&mut buf, &l, 2, &[9u64, 5], [1u64, 2, 3].into_iter());
        assert!(matches!(
            decode_node::<u64>(&buf, &l, 4, 10, "f"),
            Err(Error::Corrupt { block: Some(4), .. })
        ));
    }
}
