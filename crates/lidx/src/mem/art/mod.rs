//! The adaptive radix tree (ART), an owned ordered map: the radix-tree baseline of paper 004
//! (Fent et al., *START*, §II) and the tree its self-tuning variant rebuilds.
//!
//! # What the design says
//!
//! ART (Leis, Kemper, Neumann, ICDE 2013) is a 256-way radix tree over binary-comparable key
//! bytes (§IV there) whose inner nodes adapt to how many children they have (§III-A; paper
//! 004 §II, Fig. 2): `Node4` and `Node16` keep sorted key bytes beside their child pointers
//! (Node16 searched with one SIMD compare), `Node48` maps a byte through a 256-byte index to
//! one of 48 child slots, `Node256` is a flat array. Two techniques keep it shallow and small
//! (§III-C): *lazy expansion* (a subtree holding one key is just that key's leaf) and *path
//! compression* (an inner node with one child is merged into its child, which stores the
//! skipped bytes as its prefix). Prefixes are checked *pessimistically* (stored and compared
//! at every node), *optimistically* (only their length is kept; the leaf's full key is compared
//! at the end) or a *hybrid* of both: the stored part is checked, a longer path is skipped.
//!
//! # What we do
//!
//! * **Keys** ([`ArtKey`]): the fixed-length big-endian encoding of every [`crate::Key`] type
//!   (`u64`, `u32`, `i64` and `f64` through their order-preserving `to_model`, [`crate::Str16`]
//!   as its 16 bytes). All keys of a type have one length, so no key is a prefix of another
//!   and every key ends in a leaf, never at an inner node.
//! * **Nodes** (`node.rs`): the four kinds with a 12-byte header (kind, child count, prefix
//!   length, first 8 prefix bytes); children are one-word tagged references (low bit set: a
//!   leaf), no `Box<dyn>`. Node16 search uses SSE2 on x86_64 and a branchless mask elsewhere;
//!   Node48 has its 256-byte child index. Nodes grow when full and shrink at three quarters of
//!   the smaller kind's capacity (hysteresis), a `Node4` with one child merges into it.
//! * **Path compression** is the hybrid: up to `node::MAX_PREFIX` = 8 prefix bytes are
//!   stored and checked (which covers every `u64`, `u32`, `i64` and `f64` path), longer paths
//!   (only 16-byte strings have them) are skipped by lookups and verified by the full-key
//!   comparison at the leaf. Insert and `lower_bound` need the skipped bytes themselves and read
//!   them from the subtree's leftmost leaf. 8 stored bytes keep the header at 12 bytes.
//! * **Lazy expansion**: a single key's subtree is its leaf; inserting a second key below it
//!   creates the `Node4` at their first differing byte.
//! * **Leaves** are separate allocations holding the key and the value ("single-value leaves",
//!   §III-B there), so any value type works and the leaf comparison has the whole key.
//! * **`lower_bound` and `range`**: `range` (`iter.rs`) seeks with a stack of frames,
//!   `lower_bound` (`tree.rs`) descends recursively without one; both compare each compressed
//!   path with the key over its full length, leaf bytes included, because a skipped optimistic
//!   prefix can be smaller or greater than the key (see `iter.rs`). If the path is greater, the
//!   answer is the subtree's smallest leaf; if smaller, or nothing in the matching child is
//!   large enough, it is the smallest leaf of the next child to the right.
//! * **Bulk load** ([`Art::bulk_load`]) builds top-down from sorted pairs, each node allocated
//!   once at its final kind.
//! * **Memory**: [`crate::OrderedMap::size_in_bytes`] is exact (the map, every leaf, every inner
//!   node) and checked against the allocator in `tests/memory_accounting.rs`; it walks the inner
//!   nodes to add them up.
//! * **Against a C++ ART**: libart (`armon/libart`, C, gcc -O3 -march=native), chosen because
//!   its leaves hold the key and the value as ours do (the authors' reference ART stores tuple
//!   ids and loads keys from a table). Same keys and 2M uniform queries of present keys, each
//!   answer checked, one thread, both on transparent huge pages, alternated in one session on a
//!   2-core Intel Xeon VM (thread CPU time): 10M `zipf-gaps` keys 405 against 366 ns (1.11x,
//!   median of 3); 10M lognormal keys 384 against 276 ns (median 1.39x over 4 pairs, 1.12x in
//!   the pair where the kernel gave our nodes huge pages, up to 2.0x where it did not); 50M
//!   lognormal keys 404 against 356 ns (1.13x) with huge pages, 542 against 354 ns without
//!   (two pairs). The profile is memory stalls at each node header and at the leaf; nothing
//!   cheap stood out.
//!
//! # Extension: START (paper 004 §III-IV)
//!
//! START adds multilevel node kinds (MultiNode4: four keys of up to four bytes in one cache
//! line; Node64K/Node16M: radix nodes over 2 or 3 key bytes in rewired memory) to this tree,
//! and an optimizer that walks it bottom-up and replaces subtrees. The hooks, all
//! `#[doc(hidden)] pub`:
//!
//! * `node::NodeKind` is the explicit tag in every inner node's `node::Header`; a new kind
//!   is a new variant, a new `node::View`/`node::ViewMut` arm, and new arms in the
//!   dispatching functions of `node::NodeRef` (`find_child`, `child_at`, `position_ge`,
//!   `add_child`, `remove_child`, `Drop`) and `node::NodeKind::size_in_bytes`. A multilevel
//!   kind's `find_child` consumes more than one byte; the walks in `tree.rs`/`iter.rs` add one
//!   byte per level today, which is where a consumed-bytes count from the node comes in.
//!   `get` has its own walk, `node::NodeRef::lookup`, the hot path: ART's four kinds are
//!   dispatched inline first and no page tag is masked except where a rewired slot is read, so
//!   a tree without multilevel nodes looks up as fast as before they existed (measured against
//!   the pre-START tree in one process: equal within 2% with the tree in cache).
//! * [`Art::visit_post_order`] reports every inner node bottom-up as a [`NodeInfo`]: kind,
//!   depth (key bytes consumed above it), prefix length, child count, and the node, whose
//!   `node::NodeRef::children` give the subtree shape.
//! * [`Art::root_mut`] and `node::NodeRef::find_child_mut` reach any subtree's slot;
//!   `std::mem::take` lifts the subtree out and assignment puts a replacement in.
//!   `node::NodeRef::new_inner`, `node::NodeRef::add_child`, `node::NodeRef::leaf`,
//!   `node::Header::set_prefix` and [`build_subtree`] build one.
//! * START may move nodes and leaves into its huge-page arena (`lidx::mem::start::arena`,
//!   `NodeRef::move_into`). The node code frees such a node by dropping it in place, and
//!   where it wants a node as a `Box` (growing, shrinking, demoting, removing a leaf) copies
//!   it out first; lookups do not know the difference. `Art` itself never uses the arena.
//!
//! # Layers: ART below START
//!
//! Every node kind lives here, START's multilevel ones included, because the node dispatch
//! (`node::NodeRef`) must know them all: `multilevel` (MultiNode4 and the rewired
//! Node64K/Node16M as node kinds, `promote`/`demote` between them and ART's nodes) and the
//! building blocks they are made of, which do not depend on ART's node layout: `rewired` (the
//! tagged slot array whose sparse pages share memfd pages), `multinode` (MultiNode4's cache
//! line), `arena` (the huge-page block a tuned tree is moved into) and `cache_control`
//! (flushes, serialized time stamps, medians). [`crate::mem::start`] builds on this module (the
//! cost model, the optimizer that decides where the multilevel kinds go, the tuned map); nothing
//! here imports it. These modules are the crate's own: START publishes the building blocks an
//! embedder can use (`MultiNode4`, `RewiredArray`) from [`crate::mem::start`].

pub(crate) mod arena;
pub(crate) mod cache_control;
mod iter;
mod key_bytes;
pub(crate) mod multilevel;
pub(crate) mod multinode;
pub(crate) mod node;
pub(crate) mod rewired;
mod tree;

#[cfg(test)]
mod tests;

pub use iter::Range;
pub use key_bytes::{ArtKey, MAX_KEY_BYTES};
pub(crate) use tree::full_prefix;
pub use tree::Art;
