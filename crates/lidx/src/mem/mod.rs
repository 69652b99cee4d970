//! In-memory indexes: static indexes over sorted keys they do not own, and owned ordered maps.

pub mod alex;
pub mod art;
pub mod btree;
pub mod btree_index;
pub mod btree_model;
pub mod dynamic_pgm;
pub mod fiting;
pub mod fiting_tree;
pub mod hash_map;
pub mod key_map;
pub mod leco_zone_map;
pub mod lipp;
pub mod map_spec;
pub mod persist;
pub mod pgm;
pub mod pgm_compressed;
pub mod pgm_zero;
pub mod radix_spline;
pub mod radix_spline_zero;
pub mod rmi;
pub mod sampled_pgm;
pub mod skiplist;
pub mod smallest;
pub mod sorted;
pub mod start;
pub mod string_index;
pub mod trie_map;
pub mod xindex;
pub mod zone_map;

pub use crate::catalog::MapSpec;
pub use key_map::KeyMap;
pub use sorted::SortedArray;
pub use trie_map::TrieMap;
