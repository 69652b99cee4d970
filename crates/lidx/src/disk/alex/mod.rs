//! ALEX on disk: paper 003's Layout #2 (Lan et al., SIGMOD 2023, §2.2, §4.1, §4.3).
//!
//! Paper 003 ports ALEX to disk by storing every node contiguously, inner nodes and data nodes
//! in two files ("Layout #2 ... creates one file for each type", preferred over one file
//! because small inner nodes then share blocks), child pointers as block number and offset,
//! a meta block first that records the root, data nodes as gapped arrays with a bitmap that a
//! scan reads one block at a time, model-based inserts, and structural modifications that
//! write new nodes to new space and mark the old ones invalid. This module does that:
//!
//! * `addr`: 8-byte child addresses (block, offset) and byte positions;
//! * the blocks one operation reads and writes, by [`crate::io::IoClass`], and the bulk
//!   load's appender are `disk::node_pages`'s, shared with LIPP;
//! * `meta`: the meta block and the data file's header (magic, version, kind, parameters);
//! * `inner_node`, `data_node`: the two node codecs, and the on-disk gapped-array walk;
//! * `build`: bulk load by the in-memory ALEX's cost model and fanout tree, laid out on disk;
//! * `tree`: [`DiskAlex`], open, lookups and scans; `update`: inserts, deletes, expansions,
//!   splits, contractions, and what a crash leaves.
//!
//! The node logic is the in-memory ALEX's (`crate::mem::alex`): its bulk load decides the
//! nodes, fanouts and models; its linear model routes and predicts; its data node places keys
//! whenever a node is (re)built; its split rule cuts nodes. What runs on blocks is the search
//! and the in-place insert and delete, which must read only the blocks they touch.
//!
//! Keys are `u64` (the paper's); payloads fixed-size bytes. Differences from the paper and the
//! in-memory ALEX are in `update` (no parent doubling, widening below the root too and to
//! the left, no cost-deviation retrain, no space reuse) and `tree` (statistics written by inserts only).

mod addr;
mod build;
pub(crate) mod data_node;
pub(crate) mod inner_node;
pub(crate) mod meta;
mod params;
mod tree;
mod update;

pub use data_node::{decode_data_header, DATA_HEADER_BYTES};
pub use inner_node::{decode_inner_header, INNER_HEADER_BYTES};
pub use meta::decode_meta;
pub use params::DiskAlexParams;
pub use tree::{DiskAlex, DiskAlexSmos};

#[cfg(test)]
mod tests;
