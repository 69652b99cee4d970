//! An owned in-memory B+-tree map in the style of the STX B+-tree (paper 000 §5.2 and §6.1 use
//! STX-BTree v0.9 as the B-tree every learned index is compared with; paper 001 §III-A too).
//!
//! What we keep from STX: values live only in leaves, inner nodes hold separator keys, leaves
//! are linked left to right for range scans, bulk loading builds full leaves bottom-up, and a
//! node's size is a byte budget (256 bytes by default, as in STX) from which slot counts follow.
//!
//! What we do differently, and why:
//!
//! * **Arena layout.** Nodes are not boxed. All leaves share one flat vector of slots, a slot
//!   being a key beside its value, with a fixed stride of `leaf_slots` per leaf (plus small
//!   per-leaf length and next-leaf vectors); all inner nodes share one flat vector of
//!   `(separator, child id)` pairs with a stride of `inner_slots + 1`. Node ids are `u32`
//!   indexes (at most 2^32 - 1 nodes of each kind; more is a capacity overflow, like `Vec`'s). A node is one contiguous block, so a descent touches one block per level (keys
//!   and child ids together, on one page), and freed nodes go to a free list for reuse.
//! * **Search inside a node.** Nodes of up to 64 slots (the default sizes included) are
//!   searched by counting the keys `< k` over the whole node: no dependent loads, so all of the
//!   node's cache lines are fetched at once. Larger nodes use a branchless binary search.
//!   Against a binary search inside every node, this halved lookup time on 100K `u64` keys.
//!   Measured against a branchless binary search over the sorted keys (random present keys,
//!   one thread, a 2-core VM shared with other jobs, so noisy): 1.7x faster on 100K keys, on
//!   par (0.9x to 1.1x) on 50M lognormal keys, where each of the lower levels costs a cache and
//!   TLB miss and the leaves, holding values beside keys, are twice the size of the key array.
//! * **Against a C++ B+-tree** (`tlx::btree_map<u64, u64>`, STX's successor, g++ -O3
//!   -march=native), same keys, same 2M uniform queries of present keys, each answer checked,
//!   one thread, both sides on transparent huge pages, alternated in one session on a 2-core
//!   Intel Xeon VM, median of 5 (thread CPU time per lookup, as the VM was shared): on 10M
//!   `lidx gen` lognormal keys our default tree took 445 ns against tlx's 814 ns with its
//!   default traits (16 leaf and 16 inner slots; its nodes exceed its 256-byte linear-search
//!   threshold, so it bisects inside them) and 626 ns with traits like ours (16/15 slots,
//!   linear search): 0.55x and 0.71x tlx's time. tlx searches a node with a loop that stops
//!   at the first key `>= k`, a branch mispredicted about once per node; our count has no
//!   branch. On 50M lognormal keys: 778 against 1374 ns (0.57x, median of 3); on 10M
//!   `zipf-gaps` keys: 344 against 711 ns (0.48x). Inserts (bulk load a random half of 10M
//!   lognormal keys, insert the other half in random order): 577 against 854 ns (0.68x); on
//!   50M, 958 against 1312 ns (0.73x, one run). tlx builds 10M sorted pairs about twice as
//!   fast (0.07-0.09 s against 0.15 s), 25M pairs at half our speed (1.45 s against 0.64 s).
//! * **Padding instead of lengths on the hot path.** Unused key slots hold `K::MAX`, and the
//!   pairs after an inner node's last separator hold `K::MAX` and its last child, so both
//!   searches run over the whole fixed-size block and a descent never reads a node's length.
//!   Separators are upper bounds: child `i` holds keys `k` with `sep[i-1] < k <= sep[i]`, so the
//!   child to follow is the number of separators `< k`, which padding never adds to. A leaf
//!   lookup reads the leaf's length only when the slot it lands on holds `K::MAX` (a padding
//!   slot or the key `K::MAX` itself).
//! * **Values are stored unpadded** (`MaybeUninit`), so a map of `u64` values takes 8 bytes per
//!   value slot, not the 16 of an `Option<u64>`; this is where the module's `unsafe` is, each
//!   block with its `SAFETY` note, and `Drop` drops exactly the live slots.
//! * **Underflow policy.** A node is underfull below half its slots (`leaf_slots / 2` entries,
//!   `inner_slots / 2` keys). After a removal leaves a node underfull, it is merged with a
//!   sibling when both fit in one node, and otherwise the two share their entries evenly (a
//!   borrow); an inner root with one child is replaced by that child. The root alone may be
//!   underfull. Removal therefore keeps every non-root node at least half full, like STX.
//! * **Invalid keys.** A NaN `f64` has no place in the order (see `lidx::key`): `bulk_load` and
//!   [`OrderedMap::insert`] refuse it with [`Error::InvalidKey`] and leave the map unchanged.
//!   Queries with NaN are answered consistently with `key_cmp` and never panic.
//!
//! Node size trades space and update cost for lookup depth: larger nodes make the tree shallower
//! (fewer cache misses per lookup, smaller inner levels) but cost more comparisons per node and
//! move more entries per insert or remove. See [`BTreeParams`].

use std::cmp::Ordering;
use std::fmt;
use std::mem::{size_of, MaybeUninit};
use std::ops::{Bound, RangeBounds};
use std::ptr;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::map::{BulkLoad, OrderedMap};

/// Id of "no node" in the leaf chain.
const NIL: u32 = u32::MAX;
/// Fewest slots a node may have: splits and merges need at least two entries per half.
const MIN_SLOTS: usize = 4;
/// Most slots a node may have.
const MAX_SLOTS: usize = 1 << 16;
/// Largest node searched by a linear count rather than a binary search (see `lower_bound_by`).
const LINEAR_MAX: usize = 64;

/// Node sizes of a [`BTree`].
///
/// Larger nodes give a shallower tree (fewer cache misses per lookup) and a smaller inner part,
/// at the price of more comparisons inside each node and more data moved by each insert and
/// remove; smaller nodes the reverse. STX's default, 256 bytes, is ours. Measured on 50M
/// lognormal `u64` keys (random lookups of present keys, one thread), 256 to 512-byte nodes
/// were the fastest; 1024 bytes and more were slower (the in-node search costs more than the
/// level it saves), and 128 bytes gave a deeper, larger tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BTreeParams {
    /// Byte budget of a node: a leaf gets `node_bytes / size_of::<(K, V)>()` slots, an inner
    /// node of `n` separators holds `n + 1` `(K, u32)` pairs (child ids are `u32`), so
    /// `n = node_bytes / size_of::<(K, u32)>() - 1`; each is raised to at least 4 and capped at
    /// 65536. Default 256 (16 leaf slots and 15 separators for `u64` keys and values). Must
    /// not be 0.
    pub node_bytes: usize,
    /// Leaf slot count, overriding `node_bytes` for leaves; 4 to 65536.
    pub leaf_slots: Option<usize>,
    /// Inner-node separator slot count, overriding `node_bytes` for inner nodes; 4 to 65536.
    pub inner_slots: Option<usize>,
}

impl Default for BTreeParams {
    fn default() -> Self {
        BTreeParams {
            node_bytes: 256,
            leaf_slots: None,
            inner_slots: None,
        }
    }
}

impl BTreeParams {
    /// Nodes of `node_bytes` bytes.
    pub fn with_node_bytes(node_bytes: usize) -> Self {
        BTreeParams {
            node_bytes,
            ..Self::default()
        }
    }

    /// Explicit slot counts for leaves and inner nodes.
    pub fn with_slots(leaf_slots: usize, inner_slots: usize) -> Self {
        BTreeParams {
            leaf_slots: Some(leaf_slots),
            inner_slots: Some(inner_slots),
            ..Self::default()
        }
    }

    /// `(leaf slots, inner slots)` for keys `K` and values `V`, or `InvalidParameter`.
    pub fn slots<K, V>(&self) -> Result<(usize, usize)> {
        if self.node_bytes == 0 {
            return Err(Error::InvalidParameter {
                name: "node_bytes",
                value: "0".into(),
                expected: "a positive node size in bytes, such as 256",
            });
        }
        // `extra` entries of the node are not slots: an inner node's last child pair.
        let from_bytes = |entry: usize, extra: usize| {
            (self.node_bytes / entry.max(1))
                .saturating_sub(extra)
                .clamp(MIN_SLOTS, MAX_SLOTS)
        };
        let check = |name: &'static str, slots: Option<usize>, default: usize| match slots {
            Some(s) if !(MIN_SLOTS..=MAX_SLOTS).contains(&s) => Err(Error::InvalidParameter {
                name,
                value: s.to_string(),
                expected: "a slot count from 4 to 65536",
            }),
            Some(s) => Ok(s),
            None => Ok(default),
        };
        Ok((
            check(
                "leaf_slots",
                self.leaf_slots,
                from_bytes(size_of::<Slot<K, V>>(), 0),
            )?,
            check(
                "inner_slots",
                self.inner_slots,
                from_bytes(size_of::<(K, u32)>(), 1),
            )?,
        ))
    }
}

/// An owned B+-tree map. See the module docs for the layout and the underflow policy.
pub struct BTree<K: Key, V> {
    leaf_cap: usize,
    inner_cap: usize,
    /// `leaf_cap` slots per leaf; the first `leaf_len[leaf]` are initialized, the others
    /// vacant with key `K::MAX`.
    leaves: Vec<Slot<K, V>>,
    leaf_len: Vec<u32>,
    leaf_next: Vec<u32>,
    /// `inner_cap + 1` (separator, child) pairs per inner node; see `write_inner`.
    inners: Vec<(K, u32)>,
    inner_len: Vec<u32>,
    free_leaves: Vec<u32>,
    free_inners: Vec<u32>,
    root: u32,
    /// Number of inner levels above the leaves (0: the root is a leaf).
    height: usize,
    first_leaf: u32,
    len: usize,
}

/// A leaf slot: a key and, below the leaf's length, its value.
struct Slot<K, V> {
    key: K,
    val: MaybeUninit<V>,
}

impl<K: Key, V> Slot<K, V> {
    fn vacant() -> Self {
        Slot {
            key: K::MAX,
            val: MaybeUninit::uninit(),
        }
    }
}

/// Branchless lower bound over items sorted by `key_of`: the number of items whose key is
/// `< key` (as [`crate::search::branchless_lower_bound`], over keys stored inside items).
///
/// Nodes of up to [`LINEAR_MAX`] slots are searched by counting the keys `< key` over the whole
/// node: no dependent loads, so the CPU fetches all of the node's cache lines at once, which
/// beats a binary search (one dependent load per step, often a miss each) on nodes of a few
/// cache lines. Larger nodes bisect first.
#[inline(always)]
fn lower_bound_by<T, K: Key>(items: &[T], key: &K, key_of: impl Fn(&T) -> &K) -> usize {
    if items.len() <= LINEAR_MAX {
        return items
            .iter()
            .map(|t| usize::from(key_of(t).key_lt(key)))
            .sum();
    }
    let mut len = items.len();
    if len == 0 {
        return 0;
    }
    let mut base = 0usize;
    while len > 1 {
        let half = len / 2;
        // SAFETY: base + len <= items.len() before the loop and after every step (base grows
        // by half while len shrinks by half), and half < len, so base + half is in bounds.
        // Bounds checks here cost about a tenth of a lookup (measured as in `search`).
        let probe = unsafe { items.get_unchecked(base + half) };
        base = if key_of(probe).key_lt(key) {
            base + half
        } else {
            base
        };
        len -= half;
    }
    // SAFETY: len == 1 and base + len <= items.len().
    base + usize::from(key_of(unsafe { items.get_unchecked(base) }).key_lt(key))
}

// Result of inserting into a subtree.
enum Inserted<K, V> {
    Replaced(V),
    Added,
    Split(K, u32),
}

impl<K: Key, V> BTree<K, V> {
    /// An empty map with nodes sized by `params`.
    pub fn new(params: BTreeParams) -> Result<Self> {
        let (leaf_cap, inner_cap) = params.slots::<K, V>()?;
        let mut tree = BTree {
            leaf_cap,
            inner_cap,
            leaves: Vec::new(),
            leaf_len: Vec::new(),
            leaf_next: Vec::new(),
            inners: Vec::new(),
            inner_len: Vec::new(),
            free_leaves: Vec::new(),
            free_inners: Vec::new(),
            root: 0,
            height: 0,
            first_leaf: 0,
            len: 0,
        };
        tree.root = tree.alloc_leaf();
        tree.first_leaf = tree.root;
        Ok(tree)
    }

    /// Builds a map from pairs sorted by strictly increasing key, filling leaves completely
    /// (the last two leaves share their entries so neither is underfull).
    ///
    /// Errors: [`Error::OutOfOrder`] for a descent, [`Error::DuplicateKey`] for a repeated key,
    /// [`Error::InvalidKey`] for a NaN, [`Error::InvalidParameter`] for bad `params`.
    pub fn bulk_load<I: IntoIterator<Item = (K, V)>>(
        pairs: I,
        params: BTreeParams,
    ) -> Result<Self> {
        let mut tree = Self::new(params)?;
        let pairs = pairs.into_iter();
        let leaves_hint = pairs.size_hint().0.div_ceil(tree.leaf_cap);
        tree.leaves.reserve(leaves_hint * tree.leaf_cap);
        let mut leaves = vec![(tree.root, K::MIN)];
        let mut prev: Option<K> = None;
        for (index, (key, value)) in pairs.enumerate() {
            crate::key::check_next(index, prev.as_ref(), &key, true)?;
            prev = Some(key);
            let mut leaf = leaves[leaves.len() - 1].0;
            if tree.leaf_len[leaf as usize] as usize == tree.leaf_cap {
                let next = tree.alloc_leaf();
                tree.leaf_next[leaf as usize] = next;
                leaves.push((next, K::MIN));
                leaf = next;
            }
            let at = tree.leaf_len[leaf as usize] as usize;
            tree.leaf_insert_at(leaf, at, key, value);
            tree.len += 1;
        }
        if leaves.len() >= 2 {
            let last = leaves[leaves.len() - 1].0;
            let before = leaves[leaves.len() - 2].0;
            tree.balance_leaves(before, last);
        }
        for entry in &mut leaves {
            entry.1 = tree.leaf_max(entry.0);
        }
        let mut level = leaves;
        while level.len() > 1 {
            level = tree.build_inner_level(&level);
            tree.height += 1;
        }
        tree.root = level[0].0;
        tree.shrink_to_fit();
        Ok(tree)
    }

    /// One level of inner nodes over `children` (id, largest key below it), children spread
    /// evenly so that every node is at least half full.
    fn build_inner_level(&mut self, children: &[(u32, K)]) -> Vec<(u32, K)> {
        let fanout = self.inner_cap + 1;
        let nodes = children.len().div_ceil(fanout);
        let (base, extra) = (children.len() / nodes, children.len() % nodes);
        let mut out = Vec::with_capacity(nodes);
        let mut start = 0;
        let mut keys = Vec::with_capacity(self.inner_cap);
        let mut ids = Vec::with_capacity(fanout);
        for n in 0..nodes {
            let group = &children[start..start + base + usize::from(n < extra)];
            start += group.len();
            keys.clear();
            ids.clear();
            keys.extend(group[..group.len() - 1].iter().map(|c| c.1));
            ids.extend(group.iter().map(|c| c.0));
            let node = self.alloc_inner();
            self.write_inner(node, &keys, &ids);
            out.push((node, group[group.len() - 1].1));
        }
        out
    }

    /// Number of levels, leaves included (1 for a tree that is a single leaf).
    pub fn height(&self) -> usize {
        self.height + 1
    }

    /// Number of leaves in use.
    pub fn leaf_count(&self) -> usize {
        self.leaf_len.len() - self.free_leaves.len()
    }

    /// `(leaf slots, inner slots)` this tree was built with.
    pub fn slots(&self) -> (usize, usize) {
        (self.leaf_cap, self.inner_cap)
    }

    /// All entries in key order.
    pub fn iter(&self) -> Range<'_, K, V> {
        self.range(..)
    }

    /// Frees spare capacity of the node vectors.
    pub fn shrink_to_fit(&mut self) {
        self.leaves.shrink_to_fit();
        self.leaf_len.shrink_to_fit();
        self.leaf_next.shrink_to_fit();
        self.inners.shrink_to_fit();
        self.inner_len.shrink_to_fit();
        self.free_leaves.shrink_to_fit();
        self.free_inners.shrink_to_fit();
    }

    // ---- search -------------------------------------------------------------------------

    #[inline(always)]
    fn leaf_slots_of(&self, leaf: u32) -> &[Slot<K, V>] {
        let base = leaf as usize * self.leaf_cap;
        &self.leaves[base..base + self.leaf_cap]
    }

    /// Position of `key` among a leaf's slots: the number of keys `< key` (padding included
    /// only for keys above `K::MAX`, i.e. NaN).
    #[inline(always)]
    fn leaf_position(&self, leaf: u32, key: &K) -> usize {
        lower_bound_by(self.leaf_slots_of(leaf), key, |s| &s.key)
    }

    /// The child of `node` to follow for `key`.
    #[inline(always)]
    fn child_for(&self, node: u32, key: &K) -> (usize, u32) {
        let stride = self.inner_cap + 1;
        let base = node as usize * stride;
        let slots = &self.inners[base..base + stride];
        // Clamped for keys above `K::MAX` (NaN), which pass every padding slot.
        let i = lower_bound_by(slots, key, |s| &s.0).min(self.inner_cap);
        (i, slots[i].1)
    }

    #[inline(always)]
    fn child(&self, node: u32, index: usize) -> u32 {
        self.inners[node as usize * (self.inner_cap + 1) + index].1
    }

    #[inline(always)]
    fn find_leaf(&self, key: &K) -> u32 {
        let mut node = self.root;
        for _ in 0..self.height {
            node = self.child_for(node, key).1;
        }
        node
    }

    /// Leaf and slot of the first entry `>= key`.
    #[inline(always)]
    fn seek(&self, key: &K) -> Option<(u32, usize)> {
        let leaf = self.find_leaf(key);
        let slots = self.leaf_slots_of(leaf);
        let pos = lower_bound_by(slots, key, |s| &s.key);
        if pos < slots.len() && slots[pos].key.key_cmp(&K::MAX) != Ordering::Equal {
            return Some((leaf, pos));
        }
        if pos < self.leaf_len[leaf as usize] as usize {
            return Some((leaf, pos));
        }
        // Every key of the next leaf is above this leaf's separator, which is >= key.
        let next = self.leaf_next[leaf as usize];
        (next != NIL).then_some((next, 0))
    }

    #[inline(always)]
    fn entry(&self, leaf: u32, slot: usize) -> (&K, &V) {
        debug_assert!(slot < self.leaf_len[leaf as usize] as usize);
        let s = &self.leaves[leaf as usize * self.leaf_cap + slot];
        // SAFETY: callers pass a slot below the leaf's length, and the first `leaf_len` value
        // slots of a leaf are initialized.
        (&s.key, unsafe { s.val.assume_init_ref() })
    }

    // ---- node storage -------------------------------------------------------------------

    fn alloc_leaf(&mut self) -> u32 {
        if let Some(leaf) = self.free_leaves.pop() {
            self.leaf_next[leaf as usize] = NIL;
            return leaf;
        }
        let id = self.leaf_len.len();
        assert!(id < NIL as usize, "BTree: more than 2^32 - 1 leaves");
        self.leaves
            .resize_with((id + 1) * self.leaf_cap, Slot::vacant);
        self.leaf_len.push(0);
        self.leaf_next.push(NIL);
        id as u32
    }

    fn free_leaf(&mut self, leaf: u32) {
        debug_assert_eq!(self.leaf_len[leaf as usize], 0);
        self.free_leaves.push(leaf);
    }

    fn alloc_inner(&mut self) -> u32 {
        if let Some(node) = self.free_inners.pop() {
            return node;
        }
        let id = self.inner_len.len();
        assert!(id < NIL as usize, "BTree: more than 2^32 - 1 inner nodes");
        self.inners
            .resize((id + 1) * (self.inner_cap + 1), (K::MAX, NIL));
        self.inner_len.push(0);
        id as u32
    }

    fn free_inner(&mut self, node: u32) {
        self.inner_len[node as usize] = 0;
        self.free_inners.push(node);
    }

    fn read_inner(&self, node: u32) -> (Vec<K>, Vec<u32>) {
        let n = self.inner_len[node as usize] as usize;
        let base = node as usize * (self.inner_cap + 1);
        let slots = &self.inners[base..base + n + 1];
        (
            slots[..n].iter().map(|s| s.0).collect(),
            slots.iter().map(|s| s.1).collect(),
        )
    }

    /// Writes an inner node: pair `i` is (separator `i`, child `i`); the pairs after the last
    /// separator hold `K::MAX` and the last child.
    fn write_inner(&mut self, node: u32, keys: &[K], children: &[u32]) {
        debug_assert!(keys.len() <= self.inner_cap && children.len() == keys.len() + 1);
        let base = node as usize * (self.inner_cap + 1);
        let last = children[keys.len()];
        for (i, slot) in self.inners[base..base + self.inner_cap + 1]
            .iter_mut()
            .enumerate()
        {
            *slot = match keys.get(i) {
                Some(&k) => (k, children[i]),
                None => (K::MAX, last),
            };
        }
        self.inner_len[node as usize] = keys.len() as u32;
    }

    fn leaf_max(&self, leaf: u32) -> K {
        let n = self.leaf_len[leaf as usize] as usize;
        if n == 0 {
            K::MIN
        } else {
            self.leaves[leaf as usize * self.leaf_cap + n - 1].key
        }
    }

    /// Moves `count` slots from `from` to `to` (global slot indexes, ranges may overlap); the
    /// caller restores the invariants (vacant slots hold `K::MAX`, lengths).
    ///
    /// # Safety
    /// Both ranges must lie inside `self.leaves`; the source's initialized values move to the
    /// destination, whose previous values must be vacant or already moved out.
    unsafe fn move_slots(&mut self, from: usize, to: usize, count: usize) {
        debug_assert!(from.max(to) + count <= self.leaves.len());
        let p = self.leaves.as_mut_ptr();
        ptr::copy(p.add(from), p.add(to), count);
    }

    /// Marks slots `range` vacant (their values were moved out).
    fn vacate(&mut self, range: std::ops::Range<usize>) {
        for s in &mut self.leaves[range] {
            s.key = K::MAX;
        }
    }

    /// Inserts at `pos` of a leaf that is not full.
    fn leaf_insert_at(&mut self, leaf: u32, pos: usize, key: K, value: V) {
        let n = self.leaf_len[leaf as usize] as usize;
        debug_assert!(pos <= n && n < self.leaf_cap);
        let base = leaf as usize * self.leaf_cap;
        // SAFETY: slots base..base+n are initialized and n < leaf_cap, so moving
        // base+pos..base+n one slot right stays inside this leaf and overwrites only the vacant
        // slot base+n; the slot at base+pos is then vacant and gets the new entry.
        unsafe { self.move_slots(base + pos, base + pos + 1, n - pos) };
        self.leaves[base + pos] = Slot {
            key,
            val: MaybeUninit::new(value),
        };
        self.leaf_len[leaf as usize] += 1;
    }

    /// Removes and returns the entry at `pos`, which must be below the leaf's length.
    fn leaf_remove_at(&mut self, leaf: u32, pos: usize) -> V {
        let n = self.leaf_len[leaf as usize] as usize;
        debug_assert!(pos < n);
        let base = leaf as usize * self.leaf_cap;
        // SAFETY: pos < n, so the value is initialized; reading it moves it out, then the
        // initialized slots after it move one left over it, leaving slot n-1 vacant.
        let value = unsafe {
            let value = self.leaves[base + pos].val.assume_init_read();
            self.move_slots(base + pos + 1, base + pos, n - pos - 1);
            value
        };
        self.vacate(base + n - 1..base + n);
        self.leaf_len[leaf as usize] -= 1;
        value
    }

    /// Moves the entries of `src` from slot `from` on to the end of `dst` (another leaf, which
    /// has room for them).
    fn leaf_append_from(&mut self, src: u32, from: usize, dst: u32) {
        let (sn, dn) = (
            self.leaf_len[src as usize] as usize,
            self.leaf_len[dst as usize] as usize,
        );
        let count = sn - from;
        debug_assert!(src != dst && dn + count <= self.leaf_cap);
        let s = src as usize * self.leaf_cap + from;
        let d = dst as usize * self.leaf_cap + dn;
        // SAFETY: src != dst, so the ranges lie in different leaves; s..s+count are initialized
        // slots of src (below its length), d..d+count vacant slots of dst (from its length,
        // within its capacity). The source slots are vacated and the lengths updated below.
        unsafe { self.move_slots(s, d, count) };
        self.vacate(s..s + count);
        self.leaf_len[src as usize] = from as u32;
        self.leaf_len[dst as usize] = (dn + count) as u32;
    }

    /// Moves the first `count` entries of `right` to the end of `left` (another leaf).
    fn leaf_shift_to_left(&mut self, left: u32, right: u32, count: usize) {
        let (ln, rn) = (
            self.leaf_len[left as usize] as usize,
            self.leaf_len[right as usize] as usize,
        );
        debug_assert!(left != right && count <= rn && ln + count <= self.leaf_cap);
        let l = left as usize * self.leaf_cap + ln;
        let r = right as usize * self.leaf_cap;
        // SAFETY: left != right; right's first `count` initialized slots move to the vacant
        // slots after left's entries (within capacity); then right's remaining rn - count
        // initialized slots move to its front, and its last `count` slots are vacated.
        unsafe {
            self.move_slots(r, l, count);
            self.move_slots(r + count, r, rn - count);
        }
        self.vacate(r + rn - count..r + rn);
        self.leaf_len[left as usize] = (ln + count) as u32;
        self.leaf_len[right as usize] = (rn - count) as u32;
    }

    /// Moves the last `count` entries of `left` to the front of `right` (another leaf).
    fn leaf_shift_to_right(&mut self, left: u32, right: u32, count: usize) {
        let (ln, rn) = (
            self.leaf_len[left as usize] as usize,
            self.leaf_len[right as usize] as usize,
        );
        debug_assert!(left != right && count <= ln && rn + count <= self.leaf_cap);
        let l = left as usize * self.leaf_cap + ln - count;
        let r = right as usize * self.leaf_cap;
        // SAFETY: left != right; right's rn initialized slots move `count` slots right (within
        // capacity, over vacant slots), then left's last `count` initialized slots move into
        // the front of right, and are vacated in left.
        unsafe {
            self.move_slots(r, r + count, rn);
            self.move_slots(l, r, count);
        }
        self.vacate(l..l + count);
        self.leaf_len[left as usize] = (ln - count) as u32;
        self.leaf_len[right as usize] = (rn + count) as u32;
    }

    /// Shares the entries of two neighbouring leaves evenly.
    fn balance_leaves(&mut self, left: u32, right: u32) {
        let (ln, rn) = (
            self.leaf_len[left as usize] as usize,
            self.leaf_len[right as usize] as usize,
        );
        let target = (ln + rn) / 2;
        if rn < target {
            self.leaf_shift_to_right(left, right, target - rn);
        } else if ln < target {
            self.leaf_shift_to_left(left, right, target - ln);
        }
    }

    // ---- insert -------------------------------------------------------------------------

    fn insert_valid(&mut self, key: K, value: V) -> Option<V> {
        match self.insert_rec(self.root, self.height, key, value) {
            Inserted::Replaced(old) => Some(old),
            Inserted::Added => {
                self.len += 1;
                None
            }
            Inserted::Split(sep, right) => {
                let root = self.alloc_inner();
                self.write_inner(root, &[sep], &[self.root, right]);
                self.root = root;
                self.height += 1;
                self.len += 1;
                None
            }
        }
    }

    fn insert_rec(&mut self, node: u32, level: usize, key: K, value: V) -> Inserted<K, V> {
        if level == 0 {
            return self.insert_into_leaf(node, key, value);
        }
        let (i, child) = self.child_for(node, &key);
        match self.insert_rec(child, level - 1, key, value) {
            Inserted::Split(sep, right) => self.insert_into_inner(node, i, sep, right),
            done => done,
        }
    }

    fn insert_into_leaf(&mut self, leaf: u32, key: K, value: V) -> Inserted<K, V> {
        let n = self.leaf_len[leaf as usize] as usize;
        let pos = self.leaf_position(leaf, &key).min(n);
        if pos < n {
            let slot = &mut self.leaves[leaf as usize * self.leaf_cap + pos];
            if slot.key.key_cmp(&key) == Ordering::Equal {
                // SAFETY: pos < n, so the slot is initialized.
                let old = unsafe { slot.val.assume_init_mut() };
                return Inserted::Replaced(std::mem::replace(old, value));
            }
        }
        if n < self.leaf_cap {
            self.leaf_insert_at(leaf, pos, key, value);
            return Inserted::Added;
        }
        let right = self.alloc_leaf();
        let mid = self.leaf_cap / 2;
        self.leaf_append_from(leaf, mid, right);
        self.leaf_next[right as usize] = self.leaf_next[leaf as usize];
        self.leaf_next[leaf as usize] = right;
        if pos <= mid {
            self.leaf_insert_at(leaf, pos, key, value);
        } else {
            self.leaf_insert_at(right, pos - mid, key, value);
        }
        Inserted::Split(self.leaf_max(leaf), right)
    }

    fn insert_into_inner(&mut self, node: u32, i: usize, sep: K, right: u32) -> Inserted<K, V> {
        let (mut keys, mut children) = self.read_inner(node);
        keys.insert(i, sep);
        children.insert(i + 1, right);
        if keys.len() <= self.inner_cap {
            self.write_inner(node, &keys, &children);
            return Inserted::Added;
        }
        let mid = keys.len() / 2;
        let new = self.alloc_inner();
        self.write_inner(node, &keys[..mid], &children[..=mid]);
        self.write_inner(new, &keys[mid + 1..], &children[mid + 1..]);
        Inserted::Split(keys[mid], new)
    }

    // ---- remove -------------------------------------------------------------------------

    fn remove_rec(&mut self, node: u32, level: usize, key: &K) -> Option<V> {
        if level == 0 {
            let n = self.leaf_len[node as usize] as usize;
            let pos = self.leaf_position(node, key).min(n);
            let slot = node as usize * self.leaf_cap + pos;
            if pos < n && self.leaves[slot].key.key_cmp(key) == Ordering::Equal {
                return Some(self.leaf_remove_at(node, pos));
            }
            return None;
        }
        let (i, child) = self.child_for(node, key);
        let value = self.remove_rec(child, level - 1, key)?;
        let underfull = if level == 1 {
            (self.leaf_len[child as usize] as usize) < self.leaf_cap / 2
        } else {
            (self.inner_len[child as usize] as usize) < self.inner_cap / 2
        };
        if underfull {
            self.fix_underfull_child(node, i, level - 1);
        }
        Some(value)
    }

    /// Merges child `i` of `parent` with a sibling, or shares entries with it.
    fn fix_underfull_child(&mut self, parent: u32, i: usize, child_level: usize) {
        let parent_len = self.inner_len[parent as usize] as usize;
        let j = if i < parent_len { i } else { i - 1 };
        let (left, right) = (self.child(parent, j), self.child(parent, j + 1));
        let (mut pkeys, mut pchildren) = self.read_inner(parent);
        if child_level == 0 {
            let (ln, rn) = (
                self.leaf_len[left as usize] as usize,
                self.leaf_len[right as usize] as usize,
            );
            if ln + rn <= self.leaf_cap {
                self.leaf_append_from(right, 0, left);
                self.leaf_next[left as usize] = self.leaf_next[right as usize];
                self.free_leaf(right);
                pkeys.remove(j);
                pchildren.remove(j + 1);
            } else {
                self.balance_leaves(left, right);
                pkeys[j] = self.leaf_max(left);
            }
        } else {
            let (lk, lc) = self.read_inner(left);
            let (rk, rc) = self.read_inner(right);
            let keys: Vec<K> = lk.into_iter().chain([pkeys[j]]).chain(rk).collect();
            let children: Vec<u32> = lc.into_iter().chain(rc).collect();
            if keys.len() <= self.inner_cap {
                self.write_inner(left, &keys, &children);
                self.free_inner(right);
                pkeys.remove(j);
                pchildren.remove(j + 1);
            } else {
                let mid = keys.len() / 2;
                self.write_inner(left, &keys[..mid], &children[..=mid]);
                self.write_inner(right, &keys[mid + 1..], &children[mid + 1..]);
                pkeys[j] = keys[mid];
            }
        }
        self.write_inner(parent, &pkeys, &pchildren);
    }
}

impl<K: Key, V> BulkLoad<K, V> for BTree<K, V> {
    type Params = BTreeParams;

    fn load_sorted(entries: Vec<(K, V)>, params: &BTreeParams) -> Result<Self> {
        Self::bulk_load(entries, *params)
    }
}

impl<K: Key, V> OrderedMap<K, V> for BTree<K, V> {
    type Range<'a>
        = Range<'a, K, V>
    where
        V: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        let (leaf, slot) = self.seek(key)?;
        let (k, v) = self.entry(leaf, slot);
        (k.key_cmp(key) == Ordering::Equal).then_some(v)
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        Ok(self.insert_valid(key, value))
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let value = self.remove_rec(self.root, self.height, key)?;
        self.len -= 1;
        while self.height > 0 && self.inner_len[self.root as usize] == 0 {
            let old = self.root;
            self.root = self.child(old, 0);
            self.free_inner(old);
            self.height -= 1;
        }
        Some(value)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Range<'_, K, V> {
        let start = match range.start_bound() {
            Bound::Unbounded => (self.len > 0).then_some((self.first_leaf, 0)),
            Bound::Included(k) => self.seek(k),
            Bound::Excluded(k) => self.seek(k).and_then(|(leaf, slot)| {
                let here = self.entry(leaf, slot).0;
                if here.key_cmp(k) == Ordering::Equal {
                    self.step(leaf, slot)
                } else {
                    Some((leaf, slot))
                }
            }),
        };
        let (leaf, slot) = start.unwrap_or((NIL, 0));
        Range {
            tree: self,
            leaf,
            slot,
            end: range.end_bound().cloned(),
        }
    }

    #[inline]
    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        let (leaf, slot) = self.seek(key)?;
        Some(self.entry(leaf, slot))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        size_of::<Self>()
            + self.leaves.capacity() * size_of::<Slot<K, V>>()
            + (self.leaf_len.capacity() + self.leaf_next.capacity()) * size_of::<u32>()
            + self.inners.capacity() * size_of::<(K, u32)>()
            + self.inner_len.capacity() * size_of::<u32>()
            + (self.free_leaves.capacity() + self.free_inners.capacity()) * size_of::<u32>()
    }
}

impl<K: Key, V> BTree<K, V> {
    /// The slot after `(leaf, slot)`, following the leaf chain.
    fn step(&self, leaf: u32, slot: usize) -> Option<(u32, usize)> {
        if slot + 1 < self.leaf_len[leaf as usize] as usize {
            return Some((leaf, slot + 1));
        }
        let next = self.leaf_next[leaf as usize];
        (next != NIL).then_some((next, 0))
    }
}

impl<K: Key, V> Drop for BTree<K, V> {
    fn drop(&mut self) {
        if !std::mem::needs_drop::<V>() {
            return;
        }
        for (leaf, &n) in self.leaf_len.iter().enumerate() {
            let base = leaf * self.leaf_cap;
            for slot in &mut self.leaves[base..base + n as usize] {
                // SAFETY: the first `leaf_len` slots of every leaf (free leaves have length 0)
                // are initialized, and each is dropped exactly once, here.
                unsafe { slot.val.assume_init_drop() };
            }
        }
    }
}

impl<K: Key, V: Clone> Clone for BTree<K, V> {
    fn clone(&self) -> Self {
        let mut leaves: Vec<Slot<K, V>> = Vec::with_capacity(self.leaves.len());
        leaves.resize_with(self.leaves.len(), Slot::vacant);
        for (leaf, &n) in self.leaf_len.iter().enumerate() {
            let base = leaf * self.leaf_cap;
            let live = base..base + n as usize;
            for (to, from) in leaves[live.clone()].iter_mut().zip(&self.leaves[live]) {
                // SAFETY: slots below a leaf's length are initialized. If a clone panics, the
                // values cloned so far sit in `MaybeUninit` slots and are leaked, not dropped
                // twice.
                let val = MaybeUninit::new(unsafe { from.val.assume_init_ref() }.clone());
                *to = Slot { key: from.key, val };
            }
        }
        BTree {
            leaf_cap: self.leaf_cap,
            inner_cap: self.inner_cap,
            leaves,
            leaf_len: self.leaf_len.clone(),
            leaf_next: self.leaf_next.clone(),
            inners: self.inners.clone(),
            inner_len: self.inner_len.clone(),
            free_leaves: self.free_leaves.clone(),
            free_inners: self.free_inners.clone(),
            root: self.root,
            height: self.height,
            first_leaf: self.first_leaf,
            len: self.len,
        }
    }
}

impl<K: Key, V: fmt::Debug> fmt::Debug for BTree<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Iterator over a key range of a [`BTree`], in key order; see [`OrderedMap::range`].
pub struct Range<'a, K: Key, V> {
    tree: &'a BTree<K, V>,
    leaf: u32,
    slot: usize,
    end: Bound<K>,
}

impl<'a, K: Key, V> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.leaf == NIL {
            return None;
        }
        let (k, v) = self.tree.entry(self.leaf, self.slot);
        let inside = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => k.key_cmp(e) != Ordering::Greater,
            Bound::Excluded(e) => k.key_cmp(e) == Ordering::Less,
        };
        if !inside {
            self.leaf = NIL;
            return None;
        }
        (self.leaf, self.slot) = self.tree.step(self.leaf, self.slot).unwrap_or((NIL, 0));
        Some((k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_invariants<K: Key, V>(t: &BTree<K, V>) {
        let mut count = 0;
        let mut prev: Option<K> = None;
        for (k, _) in t.iter() {
            if let Some(p) = prev {
                assert!(p.key_lt(k), "{p:?} !< {k:?}");
            }
            prev = Some(*k);
            count += 1;
        }
        assert_eq!(count, t.len());
        check_node(t, t.root, t.height, None, None, true);
    }

    fn check_node<K: Key, V>(
        t: &BTree<K, V>,
        node: u32,
        level: usize,
        low: Option<K>,
        high: Option<K>,
        is_root: bool,
    ) {
        let in_bounds =
            |k: &K| low.is_none_or(|l| l.key_lt(k)) && high.is_none_or(|h| !h.key_lt(k));
        if level == 0 {
            let n = t.leaf_len[node as usize] as usize;
            if !is_root {
                assert!(n >= t.leaf_cap / 2, "leaf {node} underfull: {n}");
            }
            let slots = t.leaf_slots_of(node);
            assert!(slots[..n].iter().all(|s| in_bounds(&s.key)));
            assert!(slots[n..]
                .iter()
                .all(|s| s.key.key_cmp(&K::MAX) == Ordering::Equal));
            return;
        }
        let (keys, children) = t.read_inner(node);
        if !is_root {
            assert!(keys.len() >= t.inner_cap / 2, "inner {node} underfull");
        } else {
            assert!(!keys.is_empty());
        }
        for (i, &c) in children.iter().enumerate() {
            let lo = if i == 0 { low } else { Some(keys[i - 1]) };
            let hi = if i == keys.len() { high } else { Some(keys[i]) };
            check_node(t, c, level - 1, lo, hi, false);
        }
    }

    #[test]
    fn bulk_load_then_churn_keeps_invariants() {
        let params = BTreeParams::with_slots(4, 4);
        let mut t = BTree::bulk_load((0..1000u64).map(|i| (i * 2, i)), params).unwrap();
        check_invariants(&t);
        assert_eq!(t.height(), 5);
        for i in 0..1000u64 {
            assert_eq!(t.insert(i * 2 + 1, i).unwrap(), None);
            if i % 97 == 0 {
                check_invariants(&t);
            }
        }
        check_invariants(&t);
        for i in (0..2000u64).step_by(3) {
            assert!(t.remove(&i).is_some());
            if i % 101 == 0 {
                check_invariants(&t);
            }
        }
        check_invariants(&t);
        for i in 0..2000u64 {
            t.remove(&i);
        }
        check_invariants(&t);
        assert!(t.is_empty());
        assert_eq!(t.height(), 1);
    }

    #[test]
    fn values_are_dropped_once() {
        let rc = std::rc::Rc::new(());
        let mut t = BTree::bulk_load(
            (0..300u32).map(|i| (i, rc.clone())),
            BTreeParams::with_slots(4, 4),
        )
        .unwrap();
        for i in 300..600u32 {
            t.insert(i, rc.clone()).unwrap();
        }
        for i in (0..600u32).step_by(2) {
            t.remove(&i);
        }
        let copy = t.clone();
        assert_eq!(std::rc::Rc::strong_count(&rc), 1 + 600);
        drop(t);
        drop(copy);
        assert_eq!(std::rc::Rc::strong_count(&rc), 1);
    }

    #[test]
    fn nan_queries_are_answered_and_nan_inserts_refused() {
        let mut t = BTree::bulk_load(
            (0..100).map(|i| (i as f64, i)),
            BTreeParams::with_slots(4, 4),
        )
        .unwrap();
        assert!(t.get(&f64::NAN).is_none());
        assert!(t.lower_bound(&f64::NAN).is_none());
        assert_eq!(t.lower_bound(&-f64::NAN).map(|e| *e.1), Some(0));
        assert!(matches!(
            t.insert(f64::NAN, 1),
            Err(Error::InvalidKey { .. })
        ));
        assert_eq!(t.len(), 100);
    }
}
