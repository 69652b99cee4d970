//! The bodies of the fuzz targets, as plain functions: each module's `check(data)` runs one
//! input and panics on a wrong answer. The fuzz crate builds this folder as its library (each
//! `fuzz_targets/<name>.rs` only hands libFuzzer's inputs to `<name>::check`), and the
//! workspace's `fuzz_corpus` test includes it with `#[path]` to replay every corpus in
//! `fuzz/corpus/<name>/` without libFuzzer or a nightly toolchain.
//!
//! Two kinds (as lsm-tree's `fuzz/` and redb's `fuzz_redb.rs`): one target per decoder of bytes
//! from disk (any bytes decode to something consistent or give a typed error), and model-based
//! targets that run operation sequences against a `BTreeMap` through the fault-injecting device
//! (`store_hybrid_ops`, `store_btree_ops`, `store_lsm_ops`, `disk_btree_ops`; `store_trie_ops`,
//! whose `log` store has no device; the store targets also fault whole files between opens:
//! `store_file_faults`).
//! Paths inside go through `super::`, so the folder works both as a crate root and as a module.

pub mod byte_table;
pub mod disk_alex_data_node;
pub mod disk_alex_inner_node;
pub mod disk_alex_meta;
pub mod disk_btree_header;
pub mod disk_btree_learned_header;
pub mod disk_btree_learned_meta;
pub mod disk_btree_node;
pub mod disk_btree_ops;
pub mod disk_data_block;
pub mod disk_dpgm_manifest;
pub mod disk_film_format;
pub mod disk_fiting_format;
pub mod disk_lipp_meta;
pub mod disk_lipp_node;
pub mod disk_static_header;
pub mod hybrid_meta;
mod input;
pub mod join_saved_index;
pub mod join_table_header;
pub mod log_checkpoint;
pub mod manifest_decode;
pub mod model_decode;
pub mod sosd_decode;
pub mod store_btree_ops;
mod store_file_faults;
pub mod store_hybrid_ops;
pub mod store_identity;
pub mod store_lsm_ops;
mod store_ops;
pub mod store_trie_ops;
pub mod wal_record;

/// A target's body: runs one input, panics on a wrong answer.
pub type Check = fn(&[u8]);

/// Every target by name, with its check: what the corpus replay runs.
pub const TARGETS: [(&str, Check); 29] = [
    ("byte_table", byte_table::check),
    ("disk_alex_data_node", disk_alex_data_node::check),
    ("disk_alex_inner_node", disk_alex_inner_node::check),
    ("disk_alex_meta", disk_alex_meta::check),
    ("disk_btree_header", disk_btree_header::check),
    (
        "disk_btree_learned_header",
        disk_btree_learned_header::check,
    ),
    ("disk_btree_learned_meta", disk_btree_learned_meta::check),
    ("disk_btree_node", disk_btree_node::check),
    ("disk_btree_ops", disk_btree_ops::check),
    ("disk_data_block", disk_data_block::check),
    ("disk_dpgm_manifest", disk_dpgm_manifest::check),
    ("disk_film_format", disk_film_format::check),
    ("disk_fiting_format", disk_fiting_format::check),
    ("disk_lipp_meta", disk_lipp_meta::check),
    ("disk_lipp_node", disk_lipp_node::check),
    ("disk_static_header", disk_static_header::check),
    ("hybrid_meta", hybrid_meta::check),
    ("join_saved_index", join_saved_index::check),
    ("join_table_header", join_table_header::check),
    ("log_checkpoint", log_checkpoint::check),
    ("manifest_decode", manifest_decode::check),
    ("model_decode", model_decode::check),
    ("sosd_decode", sosd_decode::check),
    ("store_btree_ops", store_btree_ops::check),
    ("store_hybrid_ops", store_hybrid_ops::check),
    ("store_identity", store_identity::check),
    ("store_lsm_ops", store_lsm_ops::check),
    ("store_trie_ops", store_trie_ops::check),
    ("wal_record", wal_record::check),
];
