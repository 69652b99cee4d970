//! START's multilevel node kinds inside ART's node dispatch (paper 004 §III), and the two
//! conversions between them and ART's one-byte nodes.
//!
//! What the paper says: a multilevel node consumes several key bytes at once. MultiNode4
//! (§III-B) is a Node4 whose four keys are up to four bytes long, in one cache line;
//! Node64K/Node16M (§III-A) index 2 or 3 key bytes into a virtual array of child pointers whose
//! sparse pages share physical pages (rewiring), with tagged slots. The tree keeps working on
//! them: inserts go into multilevel nodes, "when too many updates occur in multilevel nodes, it
//! falls back to regular ART nodes" (§I).
//!
//! What we do:
//! * [`Multi4`] wraps [`MultiNode4`]; ART's 12-byte [`Header`] lives in its 14 free header
//!   bytes, so every ART walk reads the kind and the compressed path as for any node. Child
//!   words are [`NodeRef`] words, read in place.
//! * [`RewiredNode`] is ART's header, the span (2 or 3) and a [`RewiredArray`] of `2^16` or
//!   `2^24` tagged slots; the header is separate from the rewired slots, as in the paper (§V).
//!   A child is read in place from its slot (the tag in the top 16 bits is masked by
//!   `NodeRef`); a slot is written only through the array (`set` may unshare a page), so a
//!   child is modified by taking it out and putting it back ([`RewiredNode::with_child`]).
//! * A Node64K/Node16M over a dense window may instead be *flat*
//!   ([`RewiredArray::flat`]): the same node and slot encoding over one huge-page array, no
//!   rewiring (the optimizer decides, see `optimizer.rs`).
//! * A *fragment* is a node's span of key bytes read big-endian ([`fragment`]); for ART's kinds
//!   it is one byte.
//! * [`demote`] turns a multilevel node back into ART nodes over the same key bytes (path
//!   compression included). It runs when a full MultiNode4 gets a new fragment, when a rewired
//!   node degrades (its memory passes its budget, see [`RewiredNode::degraded`]), when a
//!   multilevel node is left with one child, and before every `retune`.
//! * [`promote`] cuts the ART nodes of a subtree that lie within a window of key bytes and
//!   replaces them by one multilevel node whose children are the subtrees below the window
//!   (their compressed paths trimmed to start after it). The optimizer decides where.

use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop};

use super::multinode::{Insert, MultiNode4};
use super::node::{Header, NodeKind, NodeRef, MAX_PREFIX};
use super::rewired::{RewiredArray, NODE16M_SLOTS_LOG2, NODE64K_SLOTS_LOG2};
use super::ArtKey;
use crate::error::Result;

/// The key bytes `bytes` (1 to 4 of them) as one big-endian fragment.
#[inline(always)]
pub(crate) fn fragment(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |f, &b| (f << 8) | u32::from(b))
}

/// Byte `i` (from the left) of a fragment of `span` bytes.
fn fragment_byte(frag: u32, span: usize, i: usize) -> u8 {
    (frag >> (8 * (span - 1 - i))) as u8
}

/// A MultiNode4 as an ART node: ART's header in the node's first bytes.
#[repr(C, align(64))]
pub struct Multi4<K, V> {
    node: MultiNode4,
    _owns: PhantomData<NodeRef<K, V>>,
}

impl<K, V> Multi4<K, V> {
    fn new_ref(prefix: &[u8], prefix_len: usize, span: usize) -> Result<NodeRef<K, V>> {
        let mut node = MultiNode4::new(span as u8)?;
        let header = Header::new(NodeKind::MultiNode4, prefix, prefix_len);
        const { assert!(size_of::<Header>() <= super::multinode::HEADER_BYTES) };
        // SAFETY: the header area is the first 14 bytes of a 64-aligned node, so it is aligned
        // for `Header` (align 2) and large enough (checked above).
        unsafe {
            node.header_mut()
                .as_mut_ptr()
                .cast::<Header>()
                .write(header)
        };
        let boxed = Box::new(Multi4::<K, V> {
            node,
            _owns: PhantomData,
        });
        // SAFETY: `repr(C)` with the `MultiNode4` first, whose header bytes start with a
        // `Header` of kind `MultiNode4`; `Drop` below drops the children.
        Ok(unsafe { NodeRef::from_box(boxed) })
    }

    /// Key bytes per fragment.
    #[inline(always)]
    pub fn span(&self) -> usize {
        usize::from(self.node.span())
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    /// True without children (never in a tree).
    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }

    /// The child under `frag`.
    #[inline(always)]
    pub fn find(&self, frag: u32) -> Option<&NodeRef<K, V>> {
        let i = self.node.find(frag)?;
        // SAFETY: a used position holds a word made by `NodeRef::into_word`, owned by this node.
        Some(unsafe { NodeRef::from_word_ref(self.node.child_word(i)) })
    }

    /// The child under `frag`, mutably (MultiNode4 words carry no tag).
    pub fn find_mut(&mut self, frag: u32) -> Option<&mut NodeRef<K, V>> {
        let i = self.node.find(frag)?;
        // SAFETY: as in `find`; the caller may replace the child, never by nothing (an empty
        // child is only left behind by `remove`).
        Some(unsafe { NodeRef::from_word_mut(self.node.child_word_mut(i)) })
    }

    /// Position of the first child `>= frag`.
    pub fn position_ge(&self, frag: u32) -> usize {
        self.node.lower_bound(frag)
    }

    /// The child at position `pos`, if any.
    pub fn child_at(&self, pos: usize) -> Option<(usize, u32, &NodeRef<K, V>)> {
        let (frag, _) = self.node.entry(pos)?;
        // SAFETY: as in `find`.
        let child = unsafe { NodeRef::from_word_ref(self.node.child_word(pos)) };
        Some((pos, frag, child))
    }

    /// Adds a child under a new fragment; the node must not be full.
    pub fn add(&mut self, frag: u32, child: NodeRef<K, V>) {
        let word = child.into_word();
        match self.node.insert(frag, word) {
            Ok(Insert::Inserted) => {}
            other => unreachable!("a new fragment into a MultiNode4 with room: {other:?}"),
        }
    }

    /// Removes the child under `frag` (which must exist).
    pub fn remove(&mut self, frag: u32) -> NodeRef<K, V> {
        let word = self.node.remove(frag).expect("the removed child exists");
        // SAFETY: the word was made by `into_word` and is no longer in the node.
        unsafe { NodeRef::from_word(word) }
    }

    /// The children, taken out of the node (which is freed).
    fn into_children(self) -> Vec<(u32, NodeRef<K, V>)> {
        let me = ManuallyDrop::new(self);
        me.node
            .iter()
            // SAFETY: each word is owned by the node, which is forgotten, so by us only.
            .map(|(f, w)| (f, unsafe { NodeRef::from_word(w) }))
            .collect()
    }
}

impl<K, V> Drop for Multi4<K, V> {
    fn drop(&mut self) {
        for (_, word) in self.node.iter() {
            // SAFETY: the node owns its child words.
            drop(unsafe { NodeRef::<K, V>::from_word(word) });
        }
    }
}

/// A Node64K or Node16M: ART's header and a rewired array of tagged child slots.
#[repr(C)]
pub struct RewiredNode<K, V> {
    header: Header,
    span: u8,
    /// Bytes the node may grow to before it degrades (see [`RewiredNode::degraded`]).
    budget: usize,
    array: RewiredArray,
    _owns: PhantomData<NodeRef<K, V>>,
}

impl<K, V> RewiredNode<K, V> {
    fn new(prefix: &[u8], prefix_len: usize, span: usize, flat: bool) -> Result<Box<Self>> {
        let (kind, log2) = if span == 2 {
            (NodeKind::Node64K, NODE64K_SLOTS_LOG2)
        } else {
            (NodeKind::Node16M, NODE16M_SLOTS_LOG2)
        };
        Ok(Box::new(RewiredNode {
            header: Header::new(kind, prefix, prefix_len),
            span: span as u8,
            budget: usize::MAX,
            array: if flat {
                RewiredArray::flat(log2)?
            } else {
                RewiredArray::new(log2)?
            },
            _owns: PhantomData,
        }))
    }

    /// Key bytes per fragment: 2 or 3.
    #[inline(always)]
    pub fn span(&self) -> usize {
        usize::from(self.span)
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.array.len()
    }

    /// True without children (never in a tree).
    pub fn is_empty(&self) -> bool {
        self.array.is_empty()
    }

    /// The slot array (for reports: rewired or fallback, page counts).
    pub fn array(&self) -> &RewiredArray {
        &self.array
    }

    /// The slot array, mutably (to move a flat one into an arena).
    pub(crate) fn array_mut(&mut self) -> &mut RewiredArray {
        &mut self.array
    }

    /// This node's memory: the node, the resident slot pages and their bookkeeping.
    pub fn bytes(&self) -> usize {
        size_of::<Self>() + self.array.resident_bytes() + self.array.metadata_bytes()
    }

    /// True once the node uses more than its budget: twice the ART nodes it replaced (the
    /// space rule of §III, with slack for growth), or twice its size when built if larger.
    /// Inserts that find no page to share, and unsharing, are what grow it past that.
    pub fn degraded(&self) -> bool {
        self.bytes() > self.budget
    }

    /// The child under `frag`, read in place from its tagged slot.
    #[inline(always)]
    pub fn find(&self, frag: u32) -> Option<&NodeRef<K, V>> {
        let slot = self.array.slot_ref(frag as usize)?;
        // SAFETY: an own, non-empty slot holds a word made by `into_word` (plus the page tag,
        // which `NodeRef` masks), owned by this node; `&self` keeps the array unchanged.
        Some(unsafe { NodeRef::from_word_ref(slot) })
    }

    /// The child at the first non-empty slot `>= pos`.
    pub fn child_at(&self, pos: usize) -> Option<(usize, u32, &NodeRef<K, V>)> {
        let (idx, _) = self.array.iter_from(pos).next()?;
        Some((idx, idx as u32, self.find(idx as u32)?))
    }

    /// Adds a child under a new fragment.
    pub fn add(&mut self, frag: u32, child: NodeRef<K, V>) {
        self.array
            .set(frag as usize, child.into_word())
            .expect("fragments fit the array and user-space words fit 48 bits");
    }

    /// Removes the child under `frag` (which must exist).
    pub fn remove(&mut self, frag: u32) -> NodeRef<K, V> {
        let word = self
            .array
            .remove(frag as usize)
            .expect("the removed child exists");
        // SAFETY: the word was made by `into_word` and is no longer in the array.
        unsafe { NodeRef::from_word(word) }
    }

    /// Runs `f` on the child under `frag` taken out of its slot, then stores what `f` left
    /// (the slot is written only if the reference changed). `None` if there is no child.
    pub fn with_child<R>(
        &mut self,
        frag: u32,
        f: impl FnOnce(&mut NodeRef<K, V>) -> R,
    ) -> Option<R> {
        let idx = frag as usize;
        let word = self.array.get(idx);
        if word == 0 {
            return None;
        }
        // SAFETY: the slot's word is owned by the node; the local copy is forgotten below (the
        // slot still owns it) unless `f` replaced it, in which case the new word is stored.
        let mut child = ManuallyDrop::new(unsafe { NodeRef::<K, V>::from_word(word) });
        let out = f(&mut child);
        let new = ManuallyDrop::into_inner(child).into_word();
        if new != word {
            self.array
                .set(idx, new)
                .expect("user-space words fit 48 bits");
        }
        Some(out)
    }

    fn into_children(self: Box<Self>) -> Vec<(u32, NodeRef<K, V>)> {
        let mut me = ManuallyDrop::new(*self);
        let children = me
            .array
            .iter()
            // SAFETY: each word is owned by the node, which is forgotten, so by us only.
            .map(|(i, w)| (i as u32, unsafe { NodeRef::from_word(w) }))
            .collect();
        // SAFETY: dropped once here; `me` is never used again (its words are now ours).
        unsafe { std::ptr::drop_in_place(&mut me.array) };
        children
    }
}

impl<K, V> Drop for RewiredNode<K, V> {
    fn drop(&mut self) {
        for (_, word) in self.array.iter() {
            // SAFETY: the node owns its child words.
            drop(unsafe { NodeRef::<K, V>::from_word(word) });
        }
    }
}

/// Prepends `len` path bytes (the first `min(len, MAX_PREFIX)` in `bytes`) to the compressed
/// path of inner `node`; leaves need none (their key is whole).
fn prepend_prefix<K, V>(node: &mut NodeRef<K, V>, bytes: &[u8], len: usize) {
    let Some(h) = node.header_mut() else { return };
    if len == 0 {
        return;
    }
    let mut path = [0u8; MAX_PREFIX];
    let ours = &bytes[..len.min(MAX_PREFIX)];
    for (to, &b) in path.iter_mut().zip(ours.iter().chain(h.stored_prefix())) {
        *to = b;
    }
    let total = len + h.prefix_len();
    h.set_prefix(&path, total);
}

/// ART nodes over the fragments of `items` (sorted, distinct, sharing their first `level`
/// bytes), each fragment `span` bytes; takes the children.
fn build_levels<K, V>(
    items: &mut [(u32, NodeRef<K, V>)],
    span: usize,
    level: usize,
) -> NodeRef<K, V> {
    let n = items.len();
    if n == 1 {
        let (frag, mut child) = (items[0].0, mem::take(&mut items[0].1));
        let rest: Vec<u8> = (level..span)
            .map(|i| fragment_byte(frag, span, i))
            .collect();
        prepend_prefix(&mut child, &rest, rest.len());
        return child;
    }
    let (first, last) = (items[0].0, items[n - 1].0);
    let common = (level..span)
        .take_while(|&i| fragment_byte(first, span, i) == fragment_byte(last, span, i))
        .count();
    let at = level + common;
    let byte = |f: u32| fragment_byte(f, span, at);
    let groups = 1 + items
        .windows(2)
        .filter(|w| byte(w[0].0) != byte(w[1].0))
        .count();
    let prefix: Vec<u8> = (level..at).map(|i| fragment_byte(first, span, i)).collect();
    let mut node = NodeRef::new_inner(groups, &prefix, common);
    let mut start = 0;
    while start < n {
        let b = byte(items[start].0);
        let end = start + items[start..].iter().take_while(|e| byte(e.0) == b).count();
        node.add_child(b.into(), build_levels(&mut items[start..end], span, at + 1));
        start = end;
    }
    node
}

/// Replaces a multilevel node in `slot` by ART nodes over the same key bytes (nothing for an
/// ART node). A node left with one child becomes that child, its path extended.
pub(crate) fn demote<K, V>(slot: &mut NodeRef<K, V>) {
    let Some(&header) = slot.header() else { return };
    let span = slot.span();
    let mut items = match header.kind() {
        // SAFETY: nodes of this kind are made by `Multi4::new` with `from_box`.
        NodeKind::MultiNode4 => unsafe { *slot.take_box::<Multi4<K, V>>() }.into_children(),
        NodeKind::Node64K | NodeKind::Node16M => {
            // SAFETY: nodes of these kinds are made by `promote` from a `Box<RewiredNode>`.
            unsafe { slot.take_box::<RewiredNode<K, V>>() }.into_children()
        }
        _ => return,
    };
    if items.is_empty() {
        return;
    }
    let mut node = build_levels(&mut items, span, 0);
    prepend_prefix(&mut node, header.stored_prefix(), header.prefix_len());
    *slot = node;
}

/// Replaces every multilevel node below `slot` by ART nodes, bottom-up.
pub(crate) fn demote_all<K, V>(slot: &mut NodeRef<K, V>) {
    if slot.kind().is_some_and(NodeKind::is_multilevel) {
        demote(slot);
    }
    let frags: Vec<u32> = slot.children().map(|(f, _)| f).collect();
    for f in frags {
        if let Some(child) = slot.find_child_mut(f) {
            demote_all(child);
        }
    }
}

/// Takes out of the ART subtree in `node` (an inner node `node_depth` key bytes deep) the
/// subtrees below the window `from..to` of key bytes: leaves, and inner nodes that branch at or
/// after `to` (their compressed paths trimmed to start at `to`).
fn cut_frontier<K: ArtKey, V>(
    node: &mut NodeRef<K, V>,
    node_depth: usize,
    from: usize,
    to: usize,
    out: &mut Vec<(u32, NodeRef<K, V>)>,
) {
    let branch = node_depth + node.header().expect("an inner node").prefix_len();
    let frags: Vec<u32> = node.children().map(|(f, _)| f).collect();
    for f in frags {
        let child = node.find_child_mut(f).expect("listed child");
        let child_depth = branch + 1;
        let frag_of = |c: &NodeRef<K, V>| {
            let kb = c.min_leaf().expect("a subtree has leaves").key.key_bytes();
            fragment(&kb.as_ref()[from..to])
        };
        match child.header().map(Header::prefix_len) {
            None => out.push((frag_of(child), mem::take(child))),
            Some(plen) if child_depth + plen >= to => {
                let frag = frag_of(child);
                let cut = to - child_depth;
                if cut > 0 {
                    let path = super::full_prefix(child, child_depth);
                    child
                        .header_mut()
                        .expect("an inner node")
                        .set_prefix(&path[cut..], plen - cut);
                }
                out.push((frag, mem::take(child)));
            }
            Some(_) => cut_frontier(child, child_depth, from, to, out),
        }
    }
}

/// Replaces the ART subtree in `slot` (an inner node `depth` key bytes deep, branching within
/// the key) by one node of multilevel `kind` spanning `span` key bytes after its compressed
/// path. `replaced_bytes` (the ART nodes it replaces) sets a rewired node's budget; `flat`
/// backs a Node64K/Node16M by a flat huge-page array instead of rewired pages (dense nodes,
/// see [`RewiredArray::flat`]).
pub(crate) fn promote<K: ArtKey, V>(
    slot: &mut NodeRef<K, V>,
    depth: usize,
    kind: NodeKind,
    span: usize,
    replaced_bytes: usize,
    flat: bool,
) -> Result<()> {
    let header = *slot.header().expect("an inner node");
    let from = depth + header.prefix_len();
    let (prefix, plen) = (header.stored_prefix(), header.prefix_len());
    let mut rewired = None;
    let mut node = NodeRef::EMPTY;
    match kind {
        NodeKind::MultiNode4 => node = Multi4::new_ref(prefix, plen, span)?,
        _ => rewired = Some(RewiredNode::new(prefix, plen, span, flat)?),
    }
    let mut items = Vec::new();
    cut_frontier(slot, depth, from, from + span, &mut items);
    if let Some(mut rw) = rewired {
        for (f, c) in items.drain(..) {
            rw.add(f, c);
        }
        rw.budget = 2 * replaced_bytes.max(rw.bytes());
        // SAFETY: `repr(C)` with ART's header first, of a rewired kind; `Drop` drops the
        // children.
        node = unsafe { NodeRef::from_box(rw) };
    }
    for (f, c) in items {
        node.add_child(f, c);
    }
    *slot = node;
    Ok(())
}
