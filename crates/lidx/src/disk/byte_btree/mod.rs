//! The byte B+-tree: a disk B+-tree over byte-string keys and values of any length, updated
//! in place of the data it replaces by copying pages on write, the `btree` engine of
//! [`crate::kv::store`].
//!
//! It is the structure every comparison of the store's engines runs against, so it follows
//! the equal-memory baseline of paper 002 §10 and paper 003 §6.2 (the "hybrid case"): every
//! inner node is in memory and a lookup reads exactly one block, its leaf; an insert reads
//! the leaf and writes it back, one block each, and a full leaf splits. What differs from
//! [`crate::disk::btree`] (fixed-size keys and payloads, written in place) is what byte
//! records and a store's durability need:
//!
//! * **Variable-length records** (`leaf.rs`): a leaf is a slot array over records of any
//!   length. A record larger than half a leaf (key and value together; about 2 KiB with
//!   4 KiB blocks) goes to an *overflow run* of consecutive blocks and leaves a reference and
//!   its key's first 64 bytes behind, so a leaf always holds two records or more, and a key
//!   longer than a block (up to the store's 4 KiB) is handled the same way: comparisons read
//!   the run only when the 64-byte prefix ties.
//! * **Inner nodes in memory only** (`node.rs`): separators are shortest prefixes, in one
//!   byte arena per node (about 12 bytes per leaf plus a few key bytes: the memory that the
//!   hybrid engine's budget is compared with). They are never written as blocks; a
//!   checkpoint writes the list of leaves and their separators as one image (`image.rs`), and
//!   opening rebuilds the nodes from it without reading a leaf.
//! * **Copy on write**: a changed leaf goes to a free block and its old block is retired
//!   (`space.rs`), so a crash never leaves a half-written leaf in the tree that recovery
//!   starts from (the last checkpoint's), and a snapshot or cursor keeps reading the blocks
//!   of the tree it started from. The writer changes inner nodes in place unless a reader
//!   holds them ([`std::sync::Arc::make_mut`]), so a write costs what the paper's B+-tree
//!   costs as long as no snapshot is open.
//! * **Durability through the store's log**: the tree itself logs nothing. The store appends
//!   every write to its write-ahead log before applying it, checkpoints the tree (sync the
//!   page file, write an image, commit the manifest) and then drops the log up to the
//!   checkpoint; recovery opens the last image and replays the log after it.
//!
//! Deletes remove the record from its leaf; a leaf left empty leaves the tree, but underfull
//! leaves are not merged (unlike [`crate::disk::btree`], which borrows and merges). Free blocks
//! are reused, first fit.
//!
//! The inner levels' build and the cut of an overflowing node (`node.rs`), and the key-range
//! check of the verification, are the typed tree's own code, shared in
//! [`crate::disk::bptree`]; the slot-array leaves, the in-memory inner nodes and the
//! copy-on-write policy are this tree's (see there why).

mod cursor;
mod image;
mod leaf;
mod node;
mod pages;
mod space;
mod tree;

pub use cursor::BTreeCursor;
pub use image::{Image, IMAGE_MAGIC, PAGES_MAGIC};
pub use tree::ByteBTree;
pub(crate) use tree::Op;

pub(crate) use node::Node;
pub(crate) use pages::PageIo;
pub(crate) use tree::get_in;

#[cfg(test)]
mod tests;
