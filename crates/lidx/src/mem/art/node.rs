//! The nodes of the adaptive radix tree and the tagged reference that owns them.
//!
//! ART (Leis et al., ICDE 2013, §III-A and §III-B; paper 004 §II and its Fig. 2) has four inner node
//! kinds that differ only in how they map a key byte to a child:
//!
//! | kind      | children | byte -> child                                   | bytes (`u64` values) |
//! |-----------|----------|-------------------------------------------------|----------------------|
//! | `Node4`   | 2..=4    | sorted key bytes, linear search                 | 48                   |
//! | `Node16`  | 4..=16   | sorted key bytes, one SSE2 compare (x86_64)     | 160                  |
//! | `Node48`  | 13..=48  | 256-byte child index (`0` = none, else slot+1)  | 656                  |
//! | `Node256` | 37..=256 | flat array of 256 child references              | 2064                 |
//!
//! Every inner node starts with the same [`Header`]: its kind, its child count and its
//! compressed path (prefix). A child is a [`NodeRef`], one pointer-sized word: null (no child),
//! a pointer to an inner node (low bit 0; its header says which kind), or a pointer to a
//! [`Leaf`] with the low bit set (leaves are aligned to 2 bytes, so the bit is free). There is
//! no `Box<dyn>`: a traversal reads the tag bit, then the kind byte of the header, and casts.
//!
//! **Growth and shrinking.** A full node grows into the next kind when a child is added
//! (4 -> 16 -> 48 -> 256). A node shrinks into the previous kind when removals bring its count
//! down to three quarters of the smaller kind's capacity (16 -> 4 at 3 children, 48 -> 16 at
//! 12, 256 -> 48 at 36), not at the capacity itself: alternating inserts and removes at a
//! boundary would otherwise reallocate the node every time. A `Node4` left with one child is
//! merged into that child (path compression, see [`NodeRef::remove_child`]).
//!
//! **One place for kinds.** Every operation that depends on the node kind (`find_child`,
//! `child_at`, `add_child`, `remove_child`, drop, size) dispatches here, on [`NodeKind`]. New
//! kinds (START's multilevel nodes, paper 004 §III) are added to [`NodeKind`], to
//! [`View`]/[`ViewMut`] and to these functions; the tree algorithms in `tree.rs` and `iter.rs`
//! only go through them.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::mem::{self, size_of};

use super::arena::{self, Arena};
use super::multilevel::{demote, fragment, Multi4, RewiredNode};

/// Prefix bytes an inner node stores (the "pessimistic" part of path compression). A longer
/// compressed path keeps its length but only its first `MAX_PREFIX` bytes; the rest is read
/// from a leaf of the subtree when needed (the "optimistic" part, see the module docs of
/// `lidx::mem::art`). 8 bytes keep the header at 12 bytes and cover every `u64` path (a `u64`
/// key has at most 7 bytes above its last branching byte).
pub(crate) const MAX_PREFIX: usize = 8;

/// Tag of an inner node, stored in the first byte of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NodeKind {
    /// Up to 4 children, sorted key bytes.
    Node4 = 0,
    /// Up to 16 children, sorted key bytes searched with SIMD.
    Node16 = 1,
    /// Up to 48 children behind a 256-byte index.
    Node48 = 2,
    /// Up to 256 children, indexed directly by the key byte.
    Node256 = 3,
    /// START's multilevel Node4: up to 4 children keyed by fragments of 1 to 4 key bytes
    /// (paper 004 §III-B; `lidx::mem::art::multilevel`).
    MultiNode4 = 4,
    /// START's rewired 2-level node: children indexed by 2 key bytes (§III-A).
    Node64K = 5,
    /// START's rewired 3-level node: children indexed by 3 key bytes (§III-A).
    Node16M = 6,
}

impl NodeKind {
    /// Most children a node of this kind holds.
    pub const fn capacity(self) -> usize {
        match self {
            NodeKind::Node4 => 4,
            NodeKind::Node16 => 16,
            NodeKind::Node48 => 48,
            NodeKind::Node256 => 256,
            NodeKind::MultiNode4 => 4,
            NodeKind::Node64K => 1 << 16,
            NodeKind::Node16M => 1 << 24,
        }
    }

    /// Size of one node of this kind: its whole allocation (for the rewired kinds, the node
    /// without its rewired slot pages, see `NodeRef::node_bytes`).
    pub const fn size_in_bytes<K, V>(self) -> usize {
        match self {
            NodeKind::Node4 => size_of::<Node4<K, V>>(),
            NodeKind::Node16 => size_of::<Node16<K, V>>(),
            NodeKind::Node48 => size_of::<Node48<K, V>>(),
            NodeKind::Node256 => size_of::<Node256<K, V>>(),
            NodeKind::MultiNode4 => size_of::<Multi4<K, V>>(),
            NodeKind::Node64K | NodeKind::Node16M => size_of::<RewiredNode<K, V>>(),
        }
    }

    /// Key bytes a node of this kind consumes after its prefix: 1 for ART's kinds.
    pub const fn levels(self) -> usize {
        match self {
            NodeKind::Node64K => 2,
            NodeKind::Node16M => 3,
            NodeKind::MultiNode4 => 4,
            _ => 1,
        }
    }

    /// True for START's multilevel kinds.
    pub const fn is_multilevel(self) -> bool {
        matches!(
            self,
            NodeKind::MultiNode4 | NodeKind::Node64K | NodeKind::Node16M
        )
    }

    /// The smallest kind that holds `children` children (at most 256).
    pub const fn for_children(children: usize) -> NodeKind {
        if children <= 4 {
            NodeKind::Node4
        } else if children <= 16 {
            NodeKind::Node16
        } else if children <= 48 {
            NodeKind::Node48
        } else {
            NodeKind::Node256
        }
    }
}

/// The common start of every inner node.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Header {
    kind: NodeKind,
    /// Full length of the compressed path, which may exceed `MAX_PREFIX`.
    prefix_len: u8,
    count: u16,
    /// The first `min(prefix_len, MAX_PREFIX)` bytes of the compressed path.
    prefix: [u8; MAX_PREFIX],
}

impl Header {
    pub(crate) fn new(kind: NodeKind, prefix: &[u8], prefix_len: usize) -> Self {
        let mut h = Header {
            kind,
            prefix_len: 0,
            count: 0,
            prefix: [0; MAX_PREFIX],
        };
        h.set_prefix(prefix, prefix_len);
        h
    }

    /// The node's kind.
    #[inline(always)]
    pub fn kind(&self) -> NodeKind {
        self.kind
    }

    /// Number of children.
    #[inline(always)]
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    /// Full length of the compressed path (key bytes this node skips before branching).
    #[inline(always)]
    pub fn prefix_len(&self) -> usize {
        usize::from(self.prefix_len)
    }

    /// The stored part of the compressed path: its first `min(prefix_len, MAX_PREFIX)` bytes.
    #[inline(always)]
    pub fn stored_prefix(&self) -> &[u8] {
        &self.prefix[..self.prefix_len().min(MAX_PREFIX)]
    }

    /// Sets the compressed path to `len` bytes whose first bytes are `bytes` (at least
    /// `min(len, MAX_PREFIX)` of them).
    pub fn set_prefix(&mut self, bytes: &[u8], len: usize) {
        let stored = len.min(MAX_PREFIX);
        self.prefix_len = u8::try_from(len).expect("a compressed path is shorter than a key");
        self.prefix[..stored].copy_from_slice(&bytes[..stored]);
    }
}

/// A leaf: one key and its value (ART's "single-value leaf", reached by a tagged pointer).
#[repr(C, align(2))]
pub struct Leaf<K, V> {
    /// The full key; lookups compare it, and optimistic prefixes are read from it.
    pub key: K,
    /// The value.
    pub value: V,
}

/// Inner node with up to 4 children.
#[repr(C)]
pub struct Node4<K, V> {
    header: Header,
    keys: [u8; 4],
    children: [NodeRef<K, V>; 4],
}

/// Inner node with up to 16 children.
#[repr(C)]
pub struct Node16<K, V> {
    header: Header,
    keys: [u8; 16],
    children: [NodeRef<K, V>; 16],
}

/// Inner node with up to 48 children.
#[repr(C)]
pub struct Node48<K, V> {
    header: Header,
    /// `index[byte]` is 0 for no child, else the child's slot + 1.
    index: [u8; 256],
    /// The first `count` slots are used.
    children: [NodeRef<K, V>; 48],
}

/// Inner node with up to 256 children.
#[repr(C)]
pub struct Node256<K, V> {
    header: Header,
    children: [NodeRef<K, V>; 256],
}

/// An inner node type: its kind tag, and an empty node of that kind.
trait Inner: Sized {
    const KIND: NodeKind;
    fn empty(prefix: &[u8], prefix_len: usize) -> Box<Self>;
}

impl<K, V> Inner for Node4<K, V> {
    const KIND: NodeKind = NodeKind::Node4;
    fn empty(prefix: &[u8], prefix_len: usize) -> Box<Self> {
        Box::new(Node4 {
            header: Header::new(Self::KIND, prefix, prefix_len),
            keys: [0; 4],
            children: [NodeRef::EMPTY; 4],
        })
    }
}

impl<K, V> Inner for Node16<K, V> {
    const KIND: NodeKind = NodeKind::Node16;
    fn empty(prefix: &[u8], prefix_len: usize) -> Box<Self> {
        Box::new(Node16 {
            header: Header::new(Self::KIND, prefix, prefix_len),
            keys: [0; 16],
            children: [NodeRef::EMPTY; 16],
        })
    }
}

impl<K, V> Inner for Node48<K, V> {
    const KIND: NodeKind = NodeKind::Node48;
    fn empty(prefix: &[u8], prefix_len: usize) -> Box<Self> {
        Box::new(Node48 {
            header: Header::new(Self::KIND, prefix, prefix_len),
            index: [0; 256],
            children: [NodeRef::EMPTY; 48],
        })
    }
}

impl<K, V> Inner for Node256<K, V> {
    const KIND: NodeKind = NodeKind::Node256;
    fn empty(prefix: &[u8], prefix_len: usize) -> Box<Self> {
        Box::new(Node256 {
            header: Header::new(Self::KIND, prefix, prefix_len),
            children: [NodeRef::EMPTY; 256],
        })
    }
}

/// Position of `byte` among the first `count` of `keys`, compared all at once.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn find16(keys: &[u8; 16], count: usize, byte: u8) -> Option<usize> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned load reads exactly the 16
    // bytes of `keys`.
    let hits = unsafe {
        let k = _mm_loadu_si128(keys.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(k, _mm_set1_epi8(byte as i8)))
    } as u32;
    let hits = hits & ((1u32 << count) - 1);
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// Position of `byte` among the first `count` of `keys`: a branchless compare of all 16
/// bytes into a bit mask (the portable form of the SSE2 search, vectorized by the compiler).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn find16_portable(keys: &[u8; 16], count: usize, byte: u8) -> Option<usize> {
    let mut hits = 0u32;
    for (i, &k) in keys.iter().enumerate() {
        hits |= u32::from(k == byte) << i;
    }
    let hits = hits & ((1u32 << count) - 1);
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

#[cfg(not(target_arch = "x86_64"))]
use find16_portable as find16;

/// Reference to a node or leaf; owns what it points to, like a `Box`. See the module docs.
///
/// `repr(transparent)`: a child word stored by START's multilevel nodes (a `u64`, possibly with
/// a page tag in its top 16 bits, see `lidx::mem::art::rewired`) is read in place as a
/// `NodeRef`; the address bits are masked with [`ADDR_MASK`] before every dereference.
#[repr(transparent)]
pub struct NodeRef<K, V> {
    ptr: *mut u8,
    _owns: PhantomData<Box<Leaf<K, V>>>,
}

// SAFETY: a `NodeRef` owns its node or leaf exclusively (like a `Box`), so it may move to or be
// shared with another thread when the keys and values it owns may.
unsafe impl<K: Send, V: Send> Send for NodeRef<K, V> {}
// SAFETY: as above; `&NodeRef` only gives shared access to what it owns.
unsafe impl<K: Sync, V: Sync> Sync for NodeRef<K, V> {}

const LEAF_TAG: usize = 1;

/// The address bits of a reference word; the bits above are a rewired slot's page tag.
pub(crate) const ADDR_MASK: usize = (1 << 48) - 1;

/// A node seen as its kind.
pub enum View<'a, K, V> {
    /// No child (only an empty tree's root, or a vacant slot).
    Empty,
    /// A leaf.
    Leaf(&'a Leaf<K, V>),
    /// A `Node4`.
    N4(&'a Node4<K, V>),
    /// A `Node16`.
    N16(&'a Node16<K, V>),
    /// A `Node48`.
    N48(&'a Node48<K, V>),
    /// A `Node256`.
    N256(&'a Node256<K, V>),
    /// A START MultiNode4.
    M4(&'a Multi4<K, V>),
    /// A START Node64K or Node16M.
    Rw(&'a RewiredNode<K, V>),
}

/// A node seen as its kind, mutably.
pub enum ViewMut<'a, K, V> {
    /// No child.
    Empty,
    /// A leaf.
    Leaf(&'a mut Leaf<K, V>),
    /// A `Node4`.
    N4(&'a mut Node4<K, V>),
    /// A `Node16`.
    N16(&'a mut Node16<K, V>),
    /// A `Node48`.
    N48(&'a mut Node48<K, V>),
    /// A `Node256`.
    N256(&'a mut Node256<K, V>),
    /// A START MultiNode4.
    M4(&'a mut Multi4<K, V>),
    /// A START Node64K or Node16M.
    Rw(&'a mut RewiredNode<K, V>),
}

impl<K, V> Default for NodeRef<K, V> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<K, V> NodeRef<K, V> {
    /// No node.
    pub const EMPTY: Self = NodeRef {
        ptr: std::ptr::null_mut(),
        _owns: PhantomData,
    };

    /// A new leaf.
    pub fn leaf(key: K, value: V) -> Self {
        let ptr = Box::into_raw(Box::new(Leaf { key, value })).cast::<u8>();
        ptr.expose_provenance();
        NodeRef {
            ptr: ptr.map_addr(|a| a | LEAF_TAG),
            _owns: PhantomData,
        }
    }

    fn from_inner<N: Inner>(node: Box<N>) -> Self {
        // SAFETY: `Inner` nodes are `repr(C)` with their header first, of kind `N::KIND`.
        unsafe { Self::from_box(node) }
    }

    /// Takes ownership of a boxed inner node.
    ///
    /// # Safety
    /// `N` is `repr(C)` (or `repr(transparent)` over such) with a [`Header`] first, whose kind
    /// is the kind whose [`View`] arm casts to `N`, and the node drops its own children.
    pub(crate) unsafe fn from_box<N>(node: Box<N>) -> Self {
        let ptr = Box::into_raw(node).cast::<u8>();
        ptr.expose_provenance();
        NodeRef {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Takes the node of kind `N` out of `self` (left empty).
    fn take_inner<N: Inner>(&mut self) -> Box<N> {
        assert_eq!(
            self.kind(),
            Some(N::KIND),
            "node kind checked before the cast"
        );
        // SAFETY: the pointer came from `Box::<N>::into_raw` in `from_inner` (the header's kind,
        // checked above, is `N::KIND`).
        unsafe { self.take_box::<N>() }
    }

    /// Takes the inner node out of `self` (left empty) as the box it was made from.
    ///
    /// # Safety
    /// `self` was made by [`Self::from_box`] from a `Box<N>`.
    pub(crate) unsafe fn take_box<N>(&mut self) -> Box<N> {
        let ptr = mem::take(self).into_raw();
        let node = std::ptr::with_exposed_provenance_mut::<N>(ptr.addr() & ADDR_MASK);
        if arena::contains(node.addr()) {
            // SAFETY: by the caller, a live `N` moved into an arena by `move_into`; `into_raw`
            // released ownership to us, and the arena's copy is never read or dropped again.
            return Box::new(unsafe { node.read() });
        }
        // SAFETY: by the caller, the address came from `Box::<N>::into_raw`, whose provenance
        // `from_box` exposed; `into_raw` released ownership to us.
        unsafe { Box::from_raw(node) }
    }

    /// The memory layout of this leaf or node, for moving it into an arena; `None` for no
    /// node and for a rewired node (which stays where it is: its slots are a mapping anyway).
    pub(crate) fn layout(&self) -> Option<Layout> {
        if self.is_leaf() {
            return Some(Layout::new::<Leaf<K, V>>());
        }
        Some(match self.kind()? {
            NodeKind::Node4 => Layout::new::<Node4<K, V>>(),
            NodeKind::Node16 => Layout::new::<Node16<K, V>>(),
            NodeKind::Node48 => Layout::new::<Node48<K, V>>(),
            NodeKind::Node256 => Layout::new::<Node256<K, V>>(),
            NodeKind::MultiNode4 => Layout::new::<Multi4<K, V>>(),
            NodeKind::Node64K | NodeKind::Node16M => return None,
        })
    }

    /// True if this leaf or node lives in an arena (`lidx::mem::art::arena`).
    pub(crate) fn in_arena(&self) -> bool {
        !self.is_empty() && arena::contains(self.ptr.addr() & ADDR_MASK)
    }

    /// Moves this leaf or node (not its children) into `arena` unless it is there already or
    /// is a rewired node; frees its heap allocation (a copy in an older arena is simply left
    /// behind). False if the arena is full.
    pub(crate) fn move_into(&mut self, arena: &mut Arena) -> bool {
        let Some(layout) = self.layout() else {
            return true;
        };
        let word = self.ptr.addr() & ADDR_MASK;
        let (at, tag) = (word & !LEAF_TAG, word & LEAF_TAG);
        if arena.owns(at) {
            return true;
        }
        let Some(dst) = arena.alloc(layout) else {
            return false;
        };
        let src = std::ptr::with_exposed_provenance_mut::<u8>(at);
        // SAFETY: `src` is the live node or leaf `self` owns, `layout` its type's layout (the
        // header's kind or the leaf tag says which), `dst` fresh arena memory of that layout:
        // the bytes move, and ownership with them (`self` is repointed below). A heap original
        // was allocated by `Box` with that same layout and is freed without being dropped.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, layout.size());
            if !arena::contains(at) {
                std::alloc::dealloc(src, layout);
            }
        }
        dst.expose_provenance();
        self.ptr = std::ptr::with_exposed_provenance_mut(dst.addr() | tag);
        true
    }

    /// Gives up ownership, returning the tagged pointer.
    fn into_raw(self) -> *mut u8 {
        let ptr = self.ptr;
        mem::forget(self);
        ptr
    }

    /// Gives up ownership, returning the reference as a child word for START's multilevel
    /// nodes (at most 48 bits on x86-64 and AArch64 user space).
    pub(crate) fn into_word(self) -> u64 {
        self.into_raw().addr() as u64
    }

    /// Takes ownership of a child word made by [`Self::into_word`] (any page tag in the top
    /// 16 bits is dropped).
    ///
    /// # Safety
    /// `word` came from `into_word` and is owned by nothing else from now on.
    pub(crate) unsafe fn from_word(word: u64) -> Self {
        NodeRef {
            ptr: std::ptr::with_exposed_provenance_mut(word as usize & ADDR_MASK),
            _owns: PhantomData,
        }
    }

    /// A child word stored in place (by a MultiNode4 or a rewired slot), seen as a reference.
    ///
    /// # Safety
    /// The word is 0 or was made by [`Self::into_word`], possibly with a page tag on top, and
    /// it owns its node for as long as the returned borrow lives.
    #[inline(always)]
    pub(crate) unsafe fn from_word_ref(word: &u64) -> &Self {
        // SAFETY: `NodeRef` is `repr(transparent)` over one pointer-sized field (64-bit targets
        // only reach this code: child words are `u64`), and every dereference masks the tag.
        unsafe { &*(word as *const u64).cast::<Self>() }
    }

    /// As [`Self::from_word_ref`], mutably. The word must carry no page tag (MultiNode4).
    ///
    /// # Safety
    /// As [`Self::from_word_ref`], and the word is not tagged.
    #[inline(always)]
    pub(crate) unsafe fn from_word_mut(word: &mut u64) -> &mut Self {
        // SAFETY: as in `from_word_ref`.
        unsafe { &mut *(word as *mut u64).cast::<Self>() }
    }

    /// The address this reference points to (tag bits off), with the provenance that
    /// `leaf`/`from_box` exposed.
    #[inline(always)]
    fn addr_ptr(&self) -> *mut u8 {
        std::ptr::with_exposed_provenance_mut(self.ptr.addr() & ADDR_MASK)
    }

    /// True when there is no node.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.ptr.is_null()
    }

    /// True for a leaf.
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        self.ptr.addr() & LEAF_TAG != 0
    }

    /// The kind of an inner node; `None` for a leaf or no node.
    #[inline(always)]
    pub fn kind(&self) -> Option<NodeKind> {
        self.header().map(Header::kind)
    }

    /// The header of an inner node.
    #[inline(always)]
    pub fn header(&self) -> Option<&Header> {
        if self.is_empty() || self.is_leaf() {
            return None;
        }
        // SAFETY: an untagged non-null pointer points to a live inner node owned by `self`,
        // and every inner node is `repr(C)` with its `Header` first.
        Some(unsafe { &*self.addr_ptr().cast::<Header>() })
    }

    /// The header of an inner node, mutably.
    #[inline(always)]
    pub fn header_mut(&mut self) -> Option<&mut Header> {
        if self.is_empty() || self.is_leaf() {
            return None;
        }
        // SAFETY: as in `header`, and `&mut self` gives exclusive access to the node.
        Some(unsafe { &mut *self.addr_ptr().cast::<Header>() })
    }

    /// The node as its kind: the one dispatch point of every read-only traversal.
    #[inline(always)]
    pub fn view(&self) -> View<'_, K, V> {
        if self.is_empty() {
            return View::Empty;
        }
        let addr = self.addr_ptr();
        if self.is_leaf() {
            // SAFETY: a tagged pointer is a `Box<Leaf>` pointer plus `LEAF_TAG`, owned by `self`.
            return View::Leaf(unsafe { &*addr.map_addr(|a| a & !LEAF_TAG).cast() });
        }
        // SAFETY (all arms): `addr` points to a live inner node owned by `self`, whose header
        // (first, `repr(C)`) holds the kind it was allocated as.
        unsafe {
            match (*addr.cast::<Header>()).kind {
                NodeKind::Node4 => View::N4(&*addr.cast()),
                NodeKind::Node16 => View::N16(&*addr.cast()),
                NodeKind::Node48 => View::N48(&*addr.cast()),
                NodeKind::Node256 => View::N256(&*addr.cast()),
                NodeKind::MultiNode4 => View::M4(&*addr.cast()),
                NodeKind::Node64K | NodeKind::Node16M => View::Rw(&*addr.cast()),
            }
        }
    }

    /// The node as its kind, mutably.
    #[inline(always)]
    pub fn view_mut(&mut self) -> ViewMut<'_, K, V> {
        if self.is_empty() {
            return ViewMut::Empty;
        }
        let addr = self.addr_ptr();
        if self.is_leaf() {
            // SAFETY: as in `view`; `&mut self` gives exclusive access.
            return ViewMut::Leaf(unsafe { &mut *addr.map_addr(|a| a & !LEAF_TAG).cast() });
        }
        // SAFETY (all arms): as in `view`; `&mut self` gives exclusive access.
        unsafe {
            match (*addr.cast::<Header>()).kind {
                NodeKind::Node4 => ViewMut::N4(&mut *addr.cast()),
                NodeKind::Node16 => ViewMut::N16(&mut *addr.cast()),
                NodeKind::Node48 => ViewMut::N48(&mut *addr.cast()),
                NodeKind::Node256 => ViewMut::N256(&mut *addr.cast()),
                NodeKind::MultiNode4 => ViewMut::M4(&mut *addr.cast()),
                NodeKind::Node64K | NodeKind::Node16M => ViewMut::Rw(&mut *addr.cast()),
            }
        }
    }

    /// The leaf, if this is one.
    #[inline(always)]
    pub fn as_leaf(&self) -> Option<&Leaf<K, V>> {
        match self.view() {
            View::Leaf(l) => Some(l),
            _ => None,
        }
    }

    /// Takes the leaf out of a leaf reference.
    pub fn into_leaf(self) -> Option<Box<Leaf<K, V>>> {
        if !self.is_leaf() {
            return None;
        }
        let addr = self.into_raw().addr() & ADDR_MASK & !LEAF_TAG;
        let leaf = std::ptr::with_exposed_provenance_mut::<Leaf<K, V>>(addr);
        if arena::contains(addr) {
            // SAFETY: a leaf moved into an arena by `move_into`, released to us by `into_raw`;
            // the arena's copy is never read or dropped again.
            return Some(Box::new(unsafe { leaf.read() }));
        }
        // SAFETY: a tagged pointer came from `Box::<Leaf>::into_raw` in `leaf`, which exposed
        // its provenance, and `into_raw` released ownership to us.
        Some(unsafe { Box::from_raw(leaf) })
    }

    /// Key bytes this inner node consumes after its prefix (1 for ART's kinds, the span of a
    /// MultiNode4, 2 or 3 for the rewired kinds); 1 for anything else.
    #[inline(always)]
    pub fn span(&self) -> usize {
        match self.view() {
            View::M4(n) => n.span(),
            View::Rw(n) => n.span(),
            _ => 1,
        }
    }

    /// Number of children of an inner node (0 otherwise).
    pub fn child_count(&self) -> usize {
        match self.view() {
            View::Rw(n) => n.len(),
            View::M4(n) => n.len(),
            View::Empty | View::Leaf(_) => 0,
            _ => self.header().map_or(0, Header::count),
        }
    }

    /// Bytes of this inner node alone: its allocation, plus the resident pages and bookkeeping
    /// of a rewired node's slot array. 0 for a leaf or no node.
    pub fn node_bytes(&self) -> usize {
        match self.view() {
            View::Rw(n) => n.bytes(),
            View::Empty | View::Leaf(_) => 0,
            _ => self.kind().map_or(0, NodeKind::size_in_bytes::<K, V>),
        }
    }

    /// The leaf that the key bytes `kb` lead to from this node (the root of a tree), checking
    /// each node's stored prefix; the caller compares the leaf's key (skipped prefix bytes
    /// are not checked here): the hot path of `get`.
    ///
    /// Unlike [`Self::view`], it never masks a page tag off: the root, the children of ART's
    /// kinds and of a MultiNode4 are untagged words, and the one tagged source, a rewired
    /// slot, is masked where it is read. ART's four kinds are dispatched first and inline;
    /// the multilevel kinds take the last arm.
    #[inline]
    pub fn lookup(&self, kb: &[u8]) -> Option<&Leaf<K, V>> {
        let mut p = self.addr_ptr();
        let mut depth = 0;
        loop {
            if p.addr() & LEAF_TAG != 0 {
                // SAFETY: a tagged pointer is a `Box<Leaf>` pointer plus `LEAF_TAG`, owned by
                // the tree `self` roots, which the returned borrow keeps alive and unchanged.
                return Some(unsafe { &*p.map_addr(|a| a & !LEAF_TAG).cast() });
            }
            if p.is_null() {
                return None;
            }
            // SAFETY: an untagged non-null word points to a live inner node of this tree,
            // `repr(C)` with its `Header` first.
            let h = unsafe { &*p.cast::<Header>() };
            let stored = h.stored_prefix();
            if !stored.iter().zip(&kb[depth..]).all(|(a, b)| a == b) {
                return None;
            }
            depth += h.prefix_len();
            let byte = *kb.get(depth)?;
            // SAFETY (all arms): `p` points to a live inner node whose header holds the kind
            // it was allocated as (see `view`).
            p = unsafe {
                match h.kind {
                    NodeKind::Node4 => {
                        let n = &*p.cast::<Node4<K, V>>();
                        let i = (0..n.header.count()).find(|&i| n.keys[i] == byte)?;
                        n.children[i].ptr
                    }
                    NodeKind::Node16 => {
                        let n = &*p.cast::<Node16<K, V>>();
                        n.children[find16(&n.keys, n.header.count(), byte)?].ptr
                    }
                    NodeKind::Node48 => {
                        let n = &*p.cast::<Node48<K, V>>();
                        match n.index[usize::from(byte)] {
                            0 => return None,
                            slot => n.children[usize::from(slot) - 1].ptr,
                        }
                    }
                    NodeKind::Node256 => {
                        (*p.cast::<Node256<K, V>>()).children[usize::from(byte)].ptr
                    }
                    NodeKind::MultiNode4 => {
                        let n = &*p.cast::<Multi4<K, V>>();
                        let span = n.span();
                        let child = n.find(fragment(kb.get(depth..depth + span)?))?;
                        depth += span - 1;
                        child.ptr
                    }
                    NodeKind::Node64K | NodeKind::Node16M => {
                        let n = &*p.cast::<RewiredNode<K, V>>();
                        let span = n.span();
                        let child = n.find(fragment(kb.get(depth..depth + span)?))?;
                        depth += span - 1;
                        child.addr_ptr()
                    }
                }
            };
            depth += 1;
        }
    }

    /// The child under fragment `frag` (a key byte for ART's kinds, [`Self::span`] key bytes
    /// read big-endian for the multilevel ones).
    #[inline(always)]
    pub fn find_child(&self, frag: u32) -> Option<&NodeRef<K, V>> {
        match self.view() {
            View::N4(n) => {
                let count = n.header.count();
                (0..count)
                    .find(|&i| u32::from(n.keys[i]) == frag)
                    .map(|i| &n.children[i])
            }
            View::N16(n) => {
                find16(&n.keys, n.header.count(), u8::try_from(frag).ok()?).map(|i| &n.children[i])
            }
            View::N48(n) => match *n.index.get(frag as usize)? {
                0 => None,
                slot => Some(&n.children[usize::from(slot) - 1]),
            },
            View::N256(n) => {
                let child = n.children.get(frag as usize)?;
                (!child.is_empty()).then_some(child)
            }
            View::M4(n) => n.find(frag),
            View::Rw(n) => n.find(frag),
            View::Empty | View::Leaf(_) => None,
        }
    }

    /// The child under fragment `frag`, mutably. `None` for a rewired node, whose slots are
    /// written through `RewiredNode::with_child` (they carry page tags).
    pub fn find_child_mut(&mut self, frag: u32) -> Option<&mut NodeRef<K, V>> {
        match self.view_mut() {
            ViewMut::N4(n) => {
                let count = n.header.count();
                (0..count)
                    .find(|&i| u32::from(n.keys[i]) == frag)
                    .map(|i| &mut n.children[i])
            }
            ViewMut::N16(n) => find16(&n.keys, n.header.count(), u8::try_from(frag).ok()?)
                .map(|i| &mut n.children[i]),
            ViewMut::N48(n) => match *n.index.get(frag as usize)? {
                0 => None,
                slot => Some(&mut n.children[usize::from(slot) - 1]),
            },
            ViewMut::N256(n) => {
                let child = n.children.get_mut(frag as usize)?;
                (!child.is_empty()).then_some(child)
            }
            ViewMut::M4(n) => n.find_mut(frag),
            ViewMut::Rw(_) | ViewMut::Empty | ViewMut::Leaf(_) => None,
        }
    }

    /// Ordered position of the first child whose fragment is `>= frag`, for
    /// [`Self::child_at`]. Positions are slot numbers for `Node4`/`Node16`/MultiNode4 and
    /// fragments for `Node48`/`Node256` and the rewired kinds.
    pub fn position_ge(&self, frag: u32) -> usize {
        match self.view() {
            View::N4(n) => n.keys[..n.header.count()]
                .iter()
                .filter(|&&k| u32::from(k) < frag)
                .count(),
            View::N16(n) => n.keys[..n.header.count()]
                .iter()
                .filter(|&&k| u32::from(k) < frag)
                .count(),
            View::M4(n) => n.position_ge(frag),
            View::N48(_) | View::N256(_) | View::Rw(_) => frag as usize,
            View::Empty | View::Leaf(_) => 0,
        }
    }

    /// The first child at ordered position `>= pos` (see [`Self::position_ge`]), as its
    /// position, its fragment and the child. Children come in fragment order.
    #[inline]
    pub fn child_at(&self, pos: usize) -> Option<(usize, u32, &NodeRef<K, V>)> {
        match self.view() {
            View::N4(n) => {
                (pos < n.header.count()).then(|| (pos, u32::from(n.keys[pos]), &n.children[pos]))
            }
            View::N16(n) => {
                (pos < n.header.count()).then(|| (pos, u32::from(n.keys[pos]), &n.children[pos]))
            }
            View::N48(n) => (pos..256)
                .find(|&b| n.index[b] != 0)
                .map(|b| (b, b as u32, &n.children[usize::from(n.index[b]) - 1])),
            View::N256(n) => (pos..256)
                .find(|&b| !n.children[b].is_empty())
                .map(|b| (b, b as u32, &n.children[b])),
            View::M4(n) => n.child_at(pos),
            View::Rw(n) => n.child_at(pos),
            View::Empty | View::Leaf(_) => None,
        }
    }

    /// All children with their fragments, in fragment order.
    pub fn children(&self) -> impl Iterator<Item = (u32, &NodeRef<K, V>)> {
        let mut pos = 0;
        std::iter::from_fn(move || {
            let (at, frag, child) = self.child_at(pos)?;
            pos = at + 1;
            Some((frag, child))
        })
    }

    /// The leftmost (smallest) leaf below this node.
    #[inline]
    pub fn min_leaf(&self) -> Option<&Leaf<K, V>> {
        let mut node = self;
        loop {
            match node.view() {
                View::Leaf(l) => return Some(l),
                View::Empty => return None,
                _ => node = node.child_at(0)?.2,
            }
        }
    }

    /// A new inner node of the smallest kind holding `children` children, with the given
    /// compressed path (`prefix` holds at least its first `min(prefix_len, MAX_PREFIX)` bytes)
    /// and no children yet. Add them, in any order, with [`Self::add_child`].
    pub fn new_inner(children: usize, prefix: &[u8], prefix_len: usize) -> Self {
        match NodeKind::for_children(children) {
            NodeKind::Node4 => Self::from_inner(Node4::<K, V>::empty(prefix, prefix_len)),
            NodeKind::Node16 => Self::from_inner(Node16::<K, V>::empty(prefix, prefix_len)),
            NodeKind::Node48 => Self::from_inner(Node48::<K, V>::empty(prefix, prefix_len)),
            _ => Self::from_inner(Node256::<K, V>::empty(prefix, prefix_len)),
        }
    }

    /// Adds `child` under fragment `frag` (which must not have a child yet), growing a full
    /// ART node into the next kind. A full MultiNode4 does not grow: callers demote it first
    /// (`lidx::mem::art::multilevel::demote`).
    pub fn add_child(&mut self, frag: u32, child: NodeRef<K, V>) {
        let h = self.header().expect("children are added to inner nodes");
        if !h.kind().is_multilevel() && h.count() == h.kind().capacity() {
            self.grow();
        }
        let byte = frag as u8;
        match self.view_mut() {
            ViewMut::N4(n) => {
                insert_sorted(&mut n.header, &mut n.keys, &mut n.children, byte, child)
            }
            ViewMut::N16(n) => {
                insert_sorted(&mut n.header, &mut n.keys, &mut n.children, byte, child)
            }
            ViewMut::N48(n) => {
                let slot = n.header.count();
                n.children[slot] = child;
                n.index[usize::from(byte)] = slot as u8 + 1;
                n.header.count += 1;
            }
            ViewMut::N256(n) => {
                n.children[usize::from(byte)] = child;
                n.header.count += 1;
            }
            ViewMut::M4(n) => n.add(frag, child),
            ViewMut::Rw(n) => n.add(frag, child),
            ViewMut::Empty | ViewMut::Leaf(_) => unreachable!("checked to be an inner node"),
        }
    }

    /// Replaces a full node by one of the next kind holding the same children.
    fn grow(&mut self) {
        match self.kind() {
            Some(NodeKind::Node4) => {
                let mut old = self.take_inner::<Node4<K, V>>();
                let mut new = Node16::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                new.header.count = old.header.count;
                new.keys[..4].copy_from_slice(&old.keys);
                for (to, from) in new.children.iter_mut().zip(&mut old.children) {
                    *to = mem::take(from);
                }
                *self = Self::from_inner(new);
            }
            Some(NodeKind::Node16) => {
                let mut old = self.take_inner::<Node16<K, V>>();
                let mut new = Node48::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                new.header.count = old.header.count;
                for (slot, from) in old.children.iter_mut().enumerate() {
                    new.index[usize::from(old.keys[slot])] = slot as u8 + 1;
                    new.children[slot] = mem::take(from);
                }
                *self = Self::from_inner(new);
            }
            Some(NodeKind::Node48) => {
                let mut old = self.take_inner::<Node48<K, V>>();
                let mut new = Node256::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                new.header.count = old.header.count;
                for byte in 0..256 {
                    if let Some(slot) = usize::from(old.index[byte]).checked_sub(1) {
                        new.children[byte] = mem::take(&mut old.children[slot]);
                    }
                }
                *self = Self::from_inner(new);
            }
            _ => unreachable!("only a full Node4/16/48 grows"),
        }
    }

    /// Removes and returns the child under fragment `frag` (which must exist). Shrinks the
    /// node when it falls to its shrink threshold (see the module docs), and replaces a
    /// `Node4` left with one child by that child, the child's compressed path becoming this
    /// node's path, then the key byte, then the child's own path. A multilevel node left with
    /// one child is demoted the same way (`lidx::mem::art::multilevel::demote`).
    pub fn remove_child(&mut self, frag: u32) -> NodeRef<K, V> {
        let byte = frag as u8;
        let removed = match self.view_mut() {
            ViewMut::M4(n) => {
                let removed = n.remove(frag);
                if n.len() <= 1 {
                    demote(self);
                }
                return removed;
            }
            ViewMut::Rw(n) => {
                let removed = n.remove(frag);
                if n.len() <= 1 {
                    demote(self);
                }
                return removed;
            }
            ViewMut::N4(n) => remove_sorted(&mut n.header, &mut n.keys, &mut n.children, byte),
            ViewMut::N16(n) => remove_sorted(&mut n.header, &mut n.keys, &mut n.children, byte),
            ViewMut::N48(n) => {
                let slot = usize::from(mem::take(&mut n.index[usize::from(byte)])) - 1;
                let last = n.header.count() - 1;
                let removed = mem::take(&mut n.children[slot]);
                if slot != last {
                    n.children[slot] = mem::take(&mut n.children[last]);
                    let moved = n.index.iter().position(|&i| usize::from(i) == last + 1);
                    n.index[moved.expect("the last slot is indexed")] = slot as u8 + 1;
                }
                n.header.count -= 1;
                removed
            }
            ViewMut::N256(n) => {
                n.header.count -= 1;
                mem::take(&mut n.children[usize::from(byte)])
            }
            ViewMut::Empty | ViewMut::Leaf(_) => unreachable!("children live in inner nodes"),
        };
        self.shrink_if_sparse();
        removed
    }

    /// Applies the shrink thresholds and the one-child merge after a removal.
    fn shrink_if_sparse(&mut self) {
        let h = self.header().expect("an inner node");
        match (h.kind(), h.count()) {
            (NodeKind::Node4, 1) => {
                let mut old = self.take_inner::<Node4<K, V>>();
                let byte = old.keys[0];
                let mut child = mem::take(&mut old.children[0]);
                if let Some(ch) = child.header_mut() {
                    let mut path = [0u8; MAX_PREFIX];
                    let mut n = 0;
                    for &b in old.header.stored_prefix().iter().chain([&byte]) {
                        if n < MAX_PREFIX {
                            path[n] = b;
                            n += 1;
                        }
                    }
                    for &b in ch.stored_prefix() {
                        if n < MAX_PREFIX {
                            path[n] = b;
                            n += 1;
                        }
                    }
                    let len = old.header.prefix_len() + 1 + ch.prefix_len();
                    ch.set_prefix(&path, len);
                }
                *self = child;
            }
            (NodeKind::Node16, 3) => {
                let mut old = self.take_inner::<Node16<K, V>>();
                let mut new = Node4::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                new.header.count = 3;
                new.keys[..3].copy_from_slice(&old.keys[..3]);
                for (to, from) in new.children.iter_mut().zip(&mut old.children) {
                    *to = mem::take(from);
                }
                *self = Self::from_inner(new);
            }
            (NodeKind::Node48, 12) => {
                let mut old = self.take_inner::<Node48<K, V>>();
                let mut new = Node16::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                let mut n = 0;
                for byte in 0..256 {
                    if let Some(slot) = usize::from(old.index[byte]).checked_sub(1) {
                        new.keys[n] = byte as u8;
                        new.children[n] = mem::take(&mut old.children[slot]);
                        n += 1;
                    }
                }
                new.header.count = n as u16;
                *self = Self::from_inner(new);
            }
            (NodeKind::Node256, 36) => {
                let mut old = self.take_inner::<Node256<K, V>>();
                let mut new = Node48::<K, V>::empty(&old.header.prefix, old.header.prefix_len());
                let mut n = 0;
                for byte in 0..256 {
                    if !old.children[byte].is_empty() {
                        new.index[byte] = n as u8 + 1;
                        new.children[n] = mem::take(&mut old.children[byte]);
                        n += 1;
                    }
                }
                new.header.count = n as u16;
                *self = Self::from_inner(new);
            }
            _ => {}
        }
    }
}

/// Inserts `child` under `byte` into sorted key and child arrays with room for one more.
fn insert_sorted<K, V, const N: usize>(
    header: &mut Header,
    keys: &mut [u8; N],
    children: &mut [NodeRef<K, V>; N],
    byte: u8,
    child: NodeRef<K, V>,
) {
    let count = header.count();
    let at = keys[..count].iter().filter(|&&k| k < byte).count();
    keys.copy_within(at..count, at + 1);
    children[at..=count].rotate_right(1);
    keys[at] = byte;
    children[at] = child;
    header.count += 1;
}

/// Removes the child under `byte` from sorted key and child arrays.
fn remove_sorted<K, V, const N: usize>(
    header: &mut Header,
    keys: &mut [u8; N],
    children: &mut [NodeRef<K, V>; N],
    byte: u8,
) -> NodeRef<K, V> {
    let count = header.count();
    let at = keys[..count]
        .iter()
        .position(|&k| k == byte)
        .expect("the removed child exists");
    let removed = mem::take(&mut children[at]);
    keys.copy_within(at + 1..count, at);
    children[at..count].rotate_left(1);
    header.count -= 1;
    removed
}

impl<K, V> Drop for NodeRef<K, V> {
    fn drop(&mut self) {
        if self.is_empty() {
            return;
        }
        if self.in_arena() {
            let ptr = mem::take(self).into_raw();
            let at = ptr.addr() & ADDR_MASK & !LEAF_TAG;
            let p = std::ptr::with_exposed_provenance_mut::<u8>(at);
            // SAFETY: an arena node or leaf (moved there by `move_into`) is dropped in place,
            // as the type its tag or header kind says; its memory goes with the arena.
            unsafe {
                if ptr.addr() & LEAF_TAG != 0 {
                    std::ptr::drop_in_place(p.cast::<Leaf<K, V>>());
                    return;
                }
                match (*p.cast::<Header>()).kind {
                    NodeKind::Node4 => std::ptr::drop_in_place(p.cast::<Node4<K, V>>()),
                    NodeKind::Node16 => std::ptr::drop_in_place(p.cast::<Node16<K, V>>()),
                    NodeKind::Node48 => std::ptr::drop_in_place(p.cast::<Node48<K, V>>()),
                    NodeKind::Node256 => std::ptr::drop_in_place(p.cast::<Node256<K, V>>()),
                    NodeKind::MultiNode4 => std::ptr::drop_in_place(p.cast::<Multi4<K, V>>()),
                    NodeKind::Node64K | NodeKind::Node16M => {
                        unreachable!("rewired nodes are never moved into an arena")
                    }
                }
            }
            return;
        }
        if self.is_leaf() {
            drop(mem::take(self).into_leaf());
            return;
        }
        // Each `Box` drops its children (an array of `NodeRef`, vacant slots being empty).
        match self.kind() {
            Some(NodeKind::Node4) => drop(self.take_inner::<Node4<K, V>>()),
            Some(NodeKind::Node16) => drop(self.take_inner::<Node16<K, V>>()),
            Some(NodeKind::Node48) => drop(self.take_inner::<Node48<K, V>>()),
            Some(NodeKind::Node256) => drop(self.take_inner::<Node256<K, V>>()),
            // SAFETY: START makes these kinds with `from_box` of exactly these types.
            Some(NodeKind::MultiNode4) => drop(unsafe { self.take_box::<Multi4<K, V>>() }),
            Some(NodeKind::Node64K | NodeKind::Node16M) => {
                drop(unsafe { self.take_box::<RewiredNode<K, V>>() })
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_sizes_are_as_documented() {
        assert_eq!(size_of::<Header>(), 12);
        assert_eq!(size_of::<NodeRef<u64, u64>>(), 8);
        assert_eq!(NodeKind::Node4.size_in_bytes::<u64, u64>(), 48);
        assert_eq!(NodeKind::Node16.size_in_bytes::<u64, u64>(), 160);
        assert_eq!(NodeKind::Node48.size_in_bytes::<u64, u64>(), 656);
        assert_eq!(NodeKind::Node256.size_in_bytes::<u64, u64>(), 2064);
        assert_eq!(std::mem::align_of::<Leaf<[u8; 16], u8>>(), 2);
    }

    #[test]
    fn simd_and_portable_node16_search_agree() {
        let keys: [u8; 16] = std::array::from_fn(|i| (i * 13 + 1) as u8);
        for count in 0..=16 {
            for byte in 0..=255u8 {
                let want = keys[..count].iter().position(|&k| k == byte);
                assert_eq!(find16(&keys, count, byte), want);
                assert_eq!(find16_portable(&keys, count, byte), want);
            }
        }
    }

    #[test]
    fn children_stay_in_byte_order_through_growth_and_shrinking() {
        let mut node = NodeRef::<u8, u32>::new_inner(2, &[], 0);
        let bytes: Vec<u8> = (0..=255u8).map(|b| b.wrapping_mul(97)).collect();
        for (i, &b) in bytes.iter().enumerate() {
            node.add_child(b.into(), NodeRef::leaf(b, i as u32));
            let got: Vec<u8> = node.children().map(|(b, _)| b as u8).collect();
            let mut want = bytes[..=i].to_vec();
            want.sort_unstable();
            assert_eq!(got, want);
        }
        for (i, &b) in bytes.iter().enumerate().take(254) {
            let leaf = node.remove_child(b.into()).into_leaf().unwrap();
            assert_eq!((leaf.key, leaf.value), (b, i as u32));
            for &rest in &bytes[i + 1..] {
                let child = node.find_child(rest.into()).unwrap();
                assert_eq!(child.as_leaf().unwrap().key, rest);
            }
            assert!(node.find_child(b.into()).is_none());
        }
        let leaf = node.remove_child(bytes[254].into());
        assert_eq!(leaf.as_leaf().unwrap().key, bytes[254]);
        assert_eq!(
            node.as_leaf().unwrap().key,
            bytes[255],
            "merged into its last child"
        );
    }
}
