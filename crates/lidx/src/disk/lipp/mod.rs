//! LIPP on disk: paper 003's on-disk LIPP (§2.2, §4.2, §4.3), sharing the in-memory LIPP's
//! decisions ([`crate::mem::lipp`]: FMCD fitting, bulk-load plan, rebuild policy).
//!
//! # What the paper does
//!
//! Paper 003 §4.2 stores LIPP with ALEX's on-disk layout (§4.1): nodes stored contiguously,
//! a node may cross blocks, several small nodes may share a block, a child pointer is 8 bytes
//! (block number and offset), and a meta block first in the file records the root, "with the
//! exception of the node bitmaps, which are replaced with a slot flag to identify the type".
//! LIPP has one node type, so we keep Layout #2's idea in one file: block 0 the meta block
//! ([`meta`]), nodes from block 1 on ([`node`]). Table 2 charges a lookup `2 log N` blocks (the
//! model in the header and the slot may lie in different blocks), an insert `(2 + 2N/B) log N`
//! (a rebuild reads and writes a subtree); §6.1.3 and O7 say every insert rewrites the
//! statistics of every node on its path, and §6.3 that replaced nodes' space is not reused.
//!
//! # What we do, a file per concept
//!
//! * `node.rs`: the node codec: header (model, statistics) and slots, each a flag byte and its
//!   content; addresses. `meta.rs`: the meta block codec.
//! * an operation's blocks, read once each, written in runs, and the bulk load's sequential
//!   appender are `disk::node_pages`'s, shared with ALEX.
//! * `build.rs`: subtrees laid out breadth first with the in-memory LIPP's plan; the bulk
//!   load ([`DiskLipp::build`]).
//! * `tree.rs`: [`DiskLipp`], open, lookups and scans ([`crate::disk::DiskIndex`]).
//! * `update.rs`: insert (conflict-driven child creation), delete, rebuilds, flush, the write
//!   breakdown ([`crate::disk::DiskMap`]) and what a crash leaves (no log, as the paper).
//! * `params.rs`: [`DiskLippParams`].
//!
//! # Inner and leaf blocks, and "inner nodes in memory"
//!
//! LIPP does not tell inner nodes from leaves: every node holds entries and children side by
//! side (paper 003 Table 4 reports LIPP's node count and its blocks as one figure, "-" for
//! inner blocks; §6.2 leaves LIPP out of the inner-nodes-in-memory study for that reason and
//! because its root alone would be gigabytes). We split a node's reads by what they are for:
//! the block holding a node's *header* (its model, needed to route) is read as
//! [`crate::io::IoClass::Inner`]; a block fetched for a *slot*, when it is not the header's
//! block, is [`crate::io::IoClass::Leaf`]. So per lookup *inner* counts the nodes visited (the
//! paper's LIPP "node count", less where two visited nodes share a block) and *leaf* the extra
//! blocks paid because the slot lies away from its model (paper 003 S1), and their sum is
//! Table 4's block count for LIPP. `open(.., inner_in_memory: true)` keeps every node's header
//! in memory (64 bytes a node, read at open with one pass over the tree and written through on
//! every change): a descent then reads only slot blocks, one per node visited. Keeping the
//! slot arrays in memory too would be keeping the whole index, since they hold the entries.
//!
//! # Differences from paper 003, on purpose
//!
//! * Deletes (neither LIPP nor the paper has them) follow the in-memory LIPP's: drop empty
//!   children, fold one-entry children, rebuild sparse subtrees.
//! * An insert of a present key updates its payload (LIPP would build a child of two equal
//!   keys).
//! * Dead space is counted (meta block) and reported, not reused, as the paper.

//!
//! # Measured (`cargo run --release -p lidx-bench --example disk_lipp_blocks`)
//!
//! One run, 2-core VM shared with other jobs (block counts do not depend on the load): 1M
//! lognormal keys bulk loaded, 200k held-out inserts, `sim:sata-ssd` in memory, 4 KiB blocks,
//! no cache. Per lookup LIPP reads 2.14 inner + 1.46 leaf = 3.60 blocks (headers in memory:
//! 2.13 leaf), the B+-tree 2 + 1 = 3 (1 with inner nodes in memory); per insert LIPP reads
//! 3.80 and writes 3.36 blocks, the B+-tree 3.00 and 1.04; the file is 144.7 MiB after the
//! build and 155.3 MiB after the inserts, the B+-tree's 15.5 and 30.9. Paper 003 agrees on
//! the writes (O7: statistics on every node of the path) and the size (O11, O16: LIPP
//! largest); its O2 (LIPP reads fewest blocks) is at 200M keys, where the B+-tree has 4
//! levels; at 1M ours has 3, and LIPP's 2.1 nodes a lookup at 1.7 blocks a node (Table 4:
//! 1.65 or more) cost more than the B+-tree's 3.

mod build;
pub(crate) mod meta;
pub(crate) mod node;
mod params;
mod tree;
mod update;

#[cfg(test)]
mod tests;
pub use meta::decode_meta;
pub use node::{decode_node_header, decode_slot};
pub use params::DiskLippParams;
pub use tree::DiskLipp;
