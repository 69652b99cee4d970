//! The on-disk B+-tree: fixed-size nodes, one per block, leaves linked for scans, and a chosen
//! number of top levels kept in memory.
//!
//! This is the baseline of paper 003 (§4, Table 2; §6.1 entirely on disk, §6.2 the "hybrid
//! case" with inner nodes in memory) and the structure every disk learned index in lidx is
//! measured against: with [`Resident::AllInner`] a lookup reads exactly one block, its leaf, and
//! [`DiskBTree::inner_bytes_on_disk`] is the memory a learned model must undercut.
//!
//! * Layout: block 0 is the header ([`header`]); every other block is one node ([`node`]):
//!   leaves hold keys and fixed-size payloads (8 bytes by default) and their right sibling's
//!   block; inner nodes hold separators and child block ids. Capacities follow from the
//!   device's usable block bytes (block size minus the 4-byte checksum trailer).
//! * Build: a bulk load from sorted unique keys with a fill factor, written in large sequential
//!   requests ([`build`](DiskBTree::build)); reopen with [`DiskBTree::open`].
//! * Reads: [`DiskBTree`] implements [`crate::disk::DiskIndex`] (`get`, `scan`) and adds
//!   [`DiskBTree::lower_bound`]. Every read names its [`crate::io::IoClass`] (header, inner,
//!   leaf), so per-class block counts come from the device, as in paper 003 Table 4.
//! * Updates: [`DiskBTree::insert`] splits up to the root, [`DiskBTree::delete`] borrows from
//!   or merges with a sibling when a node falls under a quarter full, up to the root, which
//!   collapses when it is left with one child ([`merge`]); merged-away blocks go to a free list
//!   that splits take from before the file grows ([`free`]), and
//!   [`DiskBTree::storage_bytes`] reports the file's allocated, used and free bytes (paper 003
//!   §6.3). [`DiskBTree::flush`] makes updates durable. What survives a crash is in
//!   [`update`]'s docs.
//! * Bad files: wrong magic, version or key type, truncation, checksum failures, nodes that
//!   break the tree's invariants and a free list that is damaged or names a block of the tree
//!   are typed errors ([`crate::Error`]); nothing panics or loops. [`DiskBTree::verify`]
//!   checks the whole tree ([`check`]).
//!
//! What this tree shares with the byte B+-tree ([`crate::disk::byte_btree`]) is written once in
//! [`crate::disk::bptree`]: the bulk load's cut of each level into nodes and the bottom-up
//! build, and the key-range check of a node against its parents; the node format, the resident
//! levels and the in-place write policy are this tree's own (see there why).
//!
//! Differences from the paper: paper 003 keeps its in-memory inner nodes in an STX B+-tree
//! separate from the disk tree; ours are the disk tree's own top levels decoded into compact
//! vectors and written through on every change, so one file serves every [`Resident`] mode.

pub(crate) mod build;
pub(crate) mod check;
pub(crate) mod free;
pub(crate) mod header;
pub(crate) mod merge;
pub(crate) mod node;
mod params;
mod resident;
mod tree;
pub(crate) mod update;
pub use check::TreeCheck;
pub use header::decode_header;
pub use params::{DiskBTreeParams, Resident};
pub use tree::DiskBTree;
