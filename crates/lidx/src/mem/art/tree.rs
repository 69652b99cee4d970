//! The [`Art`] map: lookup, insertion and removal over the nodes of `node.rs` (ART paper,
//! Leis et al., ICDE 2013, §III-C lazy expansion and path compression, §III-D search, insert
//! and delete; paper 004 §II).
//!
//! Every algorithm walks down from the root consuming key bytes: at an inner node, first its
//! compressed path (`prefix_len` bytes), then one byte to pick the child (for START's
//! multilevel kinds, the node's [`NodeRef::span`] bytes, read as one fragment). `depth` always
//! counts the key bytes consumed above the current node.
//!
//! * **Lookup** checks the stored prefix bytes (at most [`MAX_PREFIX`]) and skips the rest of a
//!   longer path unchecked; the full-key comparison at the leaf catches any mismatch there
//!   (the paper's hybrid of pessimistic and optimistic path compression).
//! * **Insert** needs the exact point where the new key leaves a compressed path. When the
//!   path is longer than what is stored, its remaining bytes are read from the leftmost leaf
//!   of the subtree (any leaf below a node shares the node's path). A new key that leaves a
//!   path splits it: a new `Node4` takes the common part, the old node keeps the rest after
//!   the branching byte. A new key that meets a leaf (lazy expansion: a single key's subtree is
//!   just its leaf) turns the leaf into a `Node4` over both keys, its prefix being their
//!   common bytes.
//! * **Remove** deletes the leaf from its parent, which shrinks or merges (see `node.rs`).

use std::cmp::Ordering;
use std::fmt;
use std::mem::{self, size_of};

use super::key_bytes::{ArtKey, MAX_KEY_BYTES};
use super::multilevel::{demote, fragment};
use super::node::{Leaf, NodeKind, NodeRef, View, ViewMut, MAX_PREFIX};
use crate::error::{Error, Result};
use crate::map::OrderedMap;

/// An adaptive radix tree mapping keys to values. See the module docs of `lidx::mem::art`.
pub struct Art<K: ArtKey, V> {
    root: NodeRef<K, V>,
    len: usize,
}

/// What [`Art::visit_post_order`] reports about one inner node.
pub struct NodeInfo<'a, K, V> {
    /// The node itself: its children, header and leaves can be read through it.
    pub node: &'a NodeRef<K, V>,
    /// Its kind.
    pub kind: NodeKind,
    /// Key bytes consumed above it (before its compressed path).
    pub depth: usize,
    /// Length of its compressed path.
    pub prefix_len: usize,
    /// Number of children.
    pub children: usize,
    /// Key bytes the node consumes after its prefix (1 for ART's kinds).
    pub span: usize,
}

impl<K: ArtKey, V> Default for Art<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: ArtKey, V> Art<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Art {
            root: NodeRef::EMPTY,
            len: 0,
        }
    }

    /// Builds a map from pairs sorted by strictly increasing key, top-down: each node is
    /// allocated once, as the smallest kind that holds its children (no growth on the way).
    ///
    /// Errors: [`Error::OutOfOrder`] for a descent, [`Error::DuplicateKey`] for a repeated key,
    /// [`Error::InvalidKey`] for a NaN.
    pub fn bulk_load<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Result<Self> {
        let pairs = pairs.into_iter();
        let mut leaves: Vec<(K::Bytes, NodeRef<K, V>)> = Vec::with_capacity(pairs.size_hint().0);
        let mut prev: Option<K> = None;
        for (index, (key, value)) in pairs.enumerate() {
            crate::key::check_next(index, prev.as_ref(), &key, true)?;
            prev = Some(key);
            leaves.push((key.key_bytes(), NodeRef::leaf(key, value)));
        }
        let len = leaves.len();
        Ok(Art {
            root: build_subtree(&mut leaves, 0),
            len,
        })
    }

    /// All entries in key order.
    pub fn iter(&self) -> super::iter::Range<'_, K, V> {
        self.range(..)
    }

    /// The root (empty for an empty map). For the START optimizer and tests.
    #[doc(hidden)]
    pub fn root(&self) -> &NodeRef<K, V> {
        &self.root
    }

    /// The root, to replace subtrees in place (see `lidx::mem::art` on extension). The caller
    /// keeps the key set unchanged: the entry count is not recomputed.
    #[doc(hidden)]
    pub fn root_mut(&mut self) -> &mut NodeRef<K, V> {
        &mut self.root
    }

    /// Calls `f` on every inner node, children before their parent (bottom-up, as the START
    /// optimizer computes its costs, paper 004 §IV-B), children in key order.
    #[doc(hidden)]
    pub fn visit_post_order(&self, mut f: impl FnMut(&NodeInfo<'_, K, V>)) {
        fn walk<K, V>(node: &NodeRef<K, V>, depth: usize, f: &mut impl FnMut(&NodeInfo<'_, K, V>)) {
            let Some(h) = node.header() else { return };
            let (kind, prefix_len) = (h.kind(), h.prefix_len());
            let (children, span) = (node.child_count(), node.span());
            for (_, child) in node.children() {
                walk(child, depth + prefix_len + span, f);
            }
            f(&NodeInfo {
                node,
                kind,
                depth,
                prefix_len,
                children,
                span,
            });
        }
        walk(&self.root, 0, &mut f);
    }

    fn insert_valid(&mut self, key: K, value: V) -> Option<V> {
        let kb = key.key_bytes();
        let old = insert_at(&mut self.root, key, kb.as_ref(), 0, value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }
}

/// Builds the subtree over `items` (sorted, distinct, at least one), all sharing their first
/// `depth` key bytes; takes their leaves. Used by [`Art::bulk_load`] and to rebuild subtrees.
pub(super) fn build_subtree<B: AsRef<[u8]>, K, V>(
    items: &mut [(B, NodeRef<K, V>)],
    depth: usize,
) -> NodeRef<K, V> {
    let n = items.len();
    if n <= 1 {
        return items
            .first_mut()
            .map(|e| mem::take(&mut e.1))
            .unwrap_or_default();
    }
    let (first, last) = (items[0].0.as_ref(), items[n - 1].0.as_ref());
    let common = (depth..first.len())
        .take_while(|&i| first[i] == last[i])
        .count();
    let at = depth + common;
    let groups = 1 + items
        .windows(2)
        .filter(|w| w[0].0.as_ref()[at] != w[1].0.as_ref()[at])
        .count();
    let mut node = NodeRef::new_inner(groups, &first[depth..], common);
    let mut start = 0;
    while start < n {
        let byte = items[start].0.as_ref()[at];
        let end = start
            + items[start..]
                .iter()
                .take_while(|e| e.0.as_ref()[at] == byte)
                .count();
        node.add_child(byte.into(), build_subtree(&mut items[start..end], at + 1));
        start = end;
    }
    node
}

/// The first byte where `key` leaves the compressed path of inner `node` at `depth`, or the
/// path's length when the key follows all of it.
fn prefix_mismatch<K: ArtKey, V>(node: &NodeRef<K, V>, kb: &[u8], depth: usize) -> usize {
    let h = node.header().expect("an inner node");
    let stored = h.stored_prefix();
    if let Some(i) = (0..stored.len()).find(|&i| stored[i] != kb[depth + i]) {
        return i;
    }
    let len = h.prefix_len();
    if len <= MAX_PREFIX {
        return len;
    }
    let leaf = node
        .min_leaf()
        .expect("an inner node has leaves")
        .key
        .key_bytes();
    let lb = leaf.as_ref();
    (MAX_PREFIX..len)
        .find(|&i| lb[depth + i] != kb[depth + i])
        .unwrap_or(len)
}

/// The full compressed path of inner `node` at `depth` (bytes beyond the stored ones come from
/// its leftmost leaf), and how `key` compares with it over the path's length.
pub(super) fn prefix_cmp<K: ArtKey, V>(node: &NodeRef<K, V>, kb: &[u8], depth: usize) -> Ordering {
    let h = node.header().expect("an inner node");
    // A byte loop, not a slice comparison: a call to `memcmp` for at most 8 bytes costs more.
    for (&p, &k) in h.stored_prefix().iter().zip(&kb[depth..]) {
        if p != k {
            return p.cmp(&k);
        }
    }
    let len = h.prefix_len();
    if len <= MAX_PREFIX {
        return Ordering::Equal;
    }
    let leaf = node
        .min_leaf()
        .expect("an inner node has leaves")
        .key
        .key_bytes();
    let span = depth + MAX_PREFIX..depth + len;
    leaf.as_ref()[span.clone()].cmp(&kb[span])
}

/// The whole compressed path of inner `node` at `depth`, in the first `prefix_len` bytes.
pub(crate) fn full_prefix<K: ArtKey, V>(node: &NodeRef<K, V>, depth: usize) -> [u8; MAX_KEY_BYTES] {
    let h = node.header().expect("an inner node");
    let mut out = [0u8; MAX_KEY_BYTES];
    let len = h.prefix_len();
    if len <= MAX_PREFIX {
        out[..len].copy_from_slice(h.stored_prefix());
    } else {
        let leaf = node
            .min_leaf()
            .expect("an inner node has leaves")
            .key
            .key_bytes();
        out[..len].copy_from_slice(&leaf.as_ref()[depth..depth + len]);
    }
    out
}

/// Inserts below `slot`, which holds the subtree of keys sharing `kb[..depth]`.
fn insert_at<K: ArtKey, V>(
    slot: &mut NodeRef<K, V>,
    key: K,
    kb: &[u8],
    depth: usize,
    value: V,
) -> Option<V> {
    if slot.is_empty() {
        *slot = NodeRef::leaf(key, value);
        return None;
    }
    if let ViewMut::Leaf(leaf) = slot.view_mut() {
        if leaf.key.key_cmp(&key).is_eq() {
            return Some(mem::replace(&mut leaf.value, value));
        }
        // Lazy expansion ends here: the two keys get a Node4 at their first differing byte.
        let other = leaf.key.key_bytes();
        let ob = other.as_ref();
        let common = (depth..kb.len()).take_while(|&i| ob[i] == kb[i]).count();
        let at = depth + common;
        let mut node = NodeRef::new_inner(2, &kb[depth..], common);
        node.add_child(ob[at].into(), mem::take(slot));
        node.add_child(kb[at].into(), NodeRef::leaf(key, value));
        *slot = node;
        return None;
    }
    let prefix_len = slot.header().expect("an inner node").prefix_len();
    let mismatch = prefix_mismatch(slot, kb, depth);
    if mismatch < prefix_len {
        // The key leaves the compressed path: split it at the mismatch.
        let path = full_prefix(slot, depth);
        let mut node = NodeRef::new_inner(2, &path, mismatch);
        slot.header_mut()
            .expect("an inner node")
            .set_prefix(&path[mismatch + 1..], prefix_len - mismatch - 1);
        node.add_child(path[mismatch].into(), mem::take(slot));
        node.add_child(kb[depth + mismatch].into(), NodeRef::leaf(key, value));
        *slot = node;
        return None;
    }
    let at = depth + prefix_len;
    let span = slot.span();
    let frag = fragment(&kb[at..at + span]);
    if let ViewMut::Rw(node) = slot.view_mut() {
        let old = if node.find(frag).is_some() {
            node.with_child(frag, |child| insert_at(child, key, kb, at + span, value))
                .flatten()
        } else {
            node.add(frag, NodeRef::leaf(key, value));
            None
        };
        if node.degraded() {
            demote(slot);
        }
        return old;
    }
    if let Some(child) = slot.find_child_mut(frag) {
        return insert_at(child, key, kb, at + span, value);
    }
    if slot.kind() == Some(NodeKind::MultiNode4) && slot.child_count() == 4 {
        // A full MultiNode4 falls back to ART nodes (paper 004 §I), which take the key.
        demote(slot);
        return insert_at(slot, key, kb, depth, value);
    }
    slot.add_child(frag, NodeRef::leaf(key, value));
    None
}

/// Removes `key` from below inner `slot`; see [`NodeRef::remove_child`] for what happens to
/// the parent of the removed leaf.
fn remove_at<K: ArtKey, V>(
    slot: &mut NodeRef<K, V>,
    key: &K,
    kb: &[u8],
    depth: usize,
) -> Option<V> {
    let h = slot.header()?;
    let stored = h.stored_prefix();
    if stored != &kb[depth..depth + stored.len()] {
        return None;
    }
    let depth = depth + h.prefix_len();
    let span = slot.span();
    let frag = fragment(&kb[depth..depth + span]);
    let child = slot.find_child(frag)?;
    if let Some(leaf) = child.as_leaf() {
        if !leaf.key.key_cmp(key).is_eq() {
            return None;
        }
        let Leaf { value, .. } = *slot.remove_child(frag).into_leaf().expect("a leaf");
        return Some(value);
    }
    if let ViewMut::Rw(node) = slot.view_mut() {
        return node
            .with_child(frag, |child| remove_at(child, key, kb, depth + span))
            .flatten();
    }
    remove_at(slot.find_child_mut(frag)?, key, kb, depth + span)
}

/// The first leaf `>= key` below `node`, which holds keys sharing `kb[..depth]`; `None` when
/// all of them are smaller. The same descent as the seek of `iter.rs` (see its module docs on
/// optimistic prefixes), without building an iterator's stack: on the way back up, the answer
/// is the smallest leaf of the next child to the right.
fn lower_bound_in<'a, K: ArtKey, V>(
    node: &'a NodeRef<K, V>,
    key: &K,
    kb: &[u8],
    depth: usize,
) -> Option<&'a Leaf<K, V>> {
    match node.view() {
        View::Empty => return None,
        View::Leaf(leaf) => return (!leaf.key.key_lt(key)).then_some(leaf),
        _ => {}
    }
    match prefix_cmp(node, kb, depth) {
        Ordering::Greater => return node.min_leaf(),
        Ordering::Less => return None,
        Ordering::Equal => {}
    }
    let depth = depth + node.header()?.prefix_len();
    let span = node.span();
    let frag = fragment(&kb[depth..depth + span]);
    if let Some(found) = node
        .find_child(frag)
        .and_then(|child| lower_bound_in(child, key, kb, depth + span))
    {
        return Some(found);
    }
    let after = node.position_ge(frag.checked_add(1)?);
    node.child_at(after)?.2.min_leaf()
}

/// Bytes of the inner nodes below `node`, itself included (rewired nodes by resident pages).
fn inner_bytes<K, V>(node: &NodeRef<K, V>) -> usize {
    match node.kind() {
        None => 0,
        Some(_) => node.node_bytes() + node.children().map(|(_, c)| inner_bytes(c)).sum::<usize>(),
    }
}

impl<K: ArtKey, V> crate::map::BulkLoad<K, V> for Art<K, V> {
    type Params = ();

    fn load_sorted(entries: Vec<(K, V)>, _params: &()) -> Result<Self> {
        Self::bulk_load(entries)
    }
}

impl<K: ArtKey, V> OrderedMap<K, V> for Art<K, V> {
    type Range<'a>
        = super::iter::Range<'a, K, V>
    where
        V: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let leaf = self.root.lookup(key.key_bytes().as_ref())?;
        leaf.key.key_cmp(key).is_eq().then_some(&leaf.value)
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        Ok(self.insert_valid(key, value))
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let kb = key.key_bytes();
        let value = if let Some(leaf) = self.root.as_leaf() {
            if !leaf.key.key_cmp(key).is_eq() {
                return None;
            }
            let Leaf { value, .. } = *mem::take(&mut self.root).into_leaf().expect("a leaf");
            value
        } else {
            remove_at(&mut self.root, key, kb.as_ref(), 0)?
        };
        self.len -= 1;
        Some(value)
    }

    fn range<R: std::ops::RangeBounds<K>>(&self, range: R) -> Self::Range<'_> {
        super::iter::Range::new(&self.root, range.start_bound(), range.end_bound().cloned())
    }

    #[inline]
    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        let kb = key.key_bytes();
        let leaf = lower_bound_in(&self.root, key, kb.as_ref(), 0)?;
        Some((&leaf.key, &leaf.value))
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Exact heap and inline bytes: the map itself, one allocation per leaf and per inner node.
    /// Walks the inner nodes (leaves are counted from `len`), so it costs a pass over them.
    fn size_in_bytes(&self) -> usize {
        size_of::<Self>() + self.len * size_of::<Leaf<K, V>>() + inner_bytes(&self.root)
    }
}

impl<K: ArtKey, V: fmt::Debug> fmt::Debug for Art<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
