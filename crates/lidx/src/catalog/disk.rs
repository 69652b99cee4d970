//! The on-disk structures: the updatable disk maps of paper 003 ([`DiskMapSpec`],
//! [`Role::DiskMap`]; its disk B+-tree is also the read-only disk index `lidx build` and `lidx
//! bench --on-disk` run) and the on-disk indexes over byte-string keys ([`ByteIndexSpec`],
//! [`Role::ByteDiskIndex`]).
//!
//! Runtime choices are not part of a spec: how many levels stay in memory and how blocks are
//! fetched are given when a file is opened, so one file serves every setting.

use super::role::{one_of, parse_list, BadSpec};
#[cfg(doc)]
use super::Role;

crate::param_specs! {
    /// One updatable on-disk map (paper 003), with its parameters.
    pub enum DiskMapSpec {
        /// The disk B+-tree (paper 003 §4), bulk loaded with `fill`% full nodes; also the
        /// read-only disk index's baseline.
        BTree = "btree" {
            /// Bulk-load fill, percent of each node's capacity: lower leaves room for inserts
            /// before splits, in more blocks.
            fill: u32 = 100 in 1..=100 => "<percent>",
        },
        /// ALEX on disk (paper 003 §3, Layout #2).
        Alex = "alex" {},
        /// LIPP on disk.
        Lipp = "lipp" {},
        /// The FITing-tree on disk: segments with delta buffers.
        Dfiting = "dfiting" {
            /// Error bound of the segments (paper 003 §5.3's 64): larger is fewer segments,
            /// longer searches within one.
            eps: usize = 64 => "<n>",
        },
        /// The dynamic PGM on disk: LSM-style levels of static PGMs.
        Dpgm = "dpgm" {
            /// Error bound of each level's PGM (paper 003 §5.3's 64): larger is smaller models,
            /// more blocks per lookup.
            eps: usize = 64 => "<n>",
        },
        /// Paper 003 Table 5's hybrid design: B+-tree leaves under a learned model.
        BtreeLearned = "btree-learned" {},
    }
}

crate::param_specs! {
    /// One on-disk index over byte-string keys, with its parameters.
    pub enum ByteIndexSpec {
        /// `disk::byte_table`: sorted records in blocks, located by the string index over one
        /// separator per block, one block per lookup (paper 002 §9's static stage, over byte
        /// keys).
        Table = "byte-table" {
            /// The separator model's eps: smaller is narrower windows, more memory.
            eps: usize = 32 in 1.. => "<e>",
        },
        /// `disk::byte_btree`: the byte B+-tree, inner nodes in memory, one leaf read per
        /// lookup (paper 002 §10's equal-memory baseline).
        BTree = "byte-btree" {},
    }
}

impl DiskMapSpec {
    /// True for the B+-tree, the baseline every figure is a ratio to.
    pub fn is_btree(&self) -> bool {
        matches!(self, DiskMapSpec::BTree { .. })
    }

    /// True when `item` names a structure only this table has (not the disk B+-tree, which is
    /// a read-only disk index too), with or without parameters.
    pub fn is_updatable_name(item: &str) -> bool {
        let name = item.trim().split(':').next().unwrap_or_default();
        DiskMapSpec::names()
            .iter()
            .any(|&n| n == name && n != DiskMapSpec::BTree { fill: 100 }.name())
    }
}

impl ByteIndexSpec {
    /// True when `item` names a byte-key index (`byte-...`), whether or not it parses.
    pub fn is_byte_name(item: &str) -> bool {
        item.trim().starts_with("byte-")
    }
}

impl DiskMapSpec {
    /// Parses one item such as `btree:fill=70` or `dpgm:eps=32`.
    pub fn parse(item: &str) -> Result<DiskMapSpec, BadSpec> {
        DiskMapSpec::parse_item(item).ok_or_else(|| {
            BadSpec::new(
                "updatable on-disk index",
                item,
                DiskMapSpec::accepted_forms(),
            )
        })
    }

    /// Parses a comma-separated list (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<DiskMapSpec>, BadSpec> {
        parse_list(
            list,
            "on-disk index list",
            &DiskMapSpec::accepted_forms(),
            DiskMapSpec::parse,
        )
    }

    /// Every accepted form, for messages and help.
    pub fn accepted_forms() -> String {
        DiskMapSpec::forms().join(", ")
    }
}

impl ByteIndexSpec {
    /// Parses one item: `byte-table`, `byte-table:eps=16` or `byte-btree`.
    pub fn parse(item: &str) -> Result<ByteIndexSpec, BadSpec> {
        ByteIndexSpec::parse_item(item).ok_or_else(|| {
            BadSpec::new(
                "on-disk index for byte-string keys",
                item,
                ByteIndexSpec::accepted_forms(),
            )
        })
    }

    /// Parses a comma-separated list of byte-key indexes (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<ByteIndexSpec>, BadSpec> {
        parse_list(
            list,
            "on-disk index list",
            &ByteIndexSpec::accepted_forms(),
            ByteIndexSpec::parse,
        )
    }

    /// Every accepted form, for messages and help: `byte-table[:eps=<e>] or byte-btree`.
    pub fn accepted_forms() -> String {
        one_of(&ByteIndexSpec::forms())
    }
}
