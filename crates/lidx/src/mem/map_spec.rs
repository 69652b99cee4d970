//! [`MapSpec`]: the updatable maps by name, as `lidx bench --index`, `lidx ycsb --store
//! log:<index>` and the store's `STORE` file spell them (`btree:leaf=16:inner=15`, `art`).
//!
//! A spec parses from `name[:param=value]...` ([`MapSpec::parse`]), prints back as its canonical
//! [`MapSpec::label`], and builds a [`KeyMap`] empty ([`MapSpec::build_empty`]) or bulk-loaded
//! ([`MapSpec::build`]). Parameters are whole numbers; fractions are written in percent.
//!
//! # Adding a map
//!
//! One row in the table below (variant, name, parameters with types and defaults, docs) and one
//! arm in [`MapSpec::build`]; the map must implement [`BulkLoad<u64, u64>`].

use crate::error::{Error, Result};
use crate::map::BulkLoad;
use crate::mem::alex::{Alex, AlexParams};
use crate::mem::art::Art;
use crate::mem::btree::{BTree, BTreeParams};
use crate::mem::dynamic_pgm::{DynamicPgm, DynamicPgmParams};
use crate::mem::fiting_tree::{FitingBuffer, FitingGap, FitingInplace, FitingMapParams};
use crate::mem::hash_map::HashKeyMap;
use crate::mem::key_map::KeyMap;
use crate::mem::lipp::{Lipp, LippParams};
use crate::mem::skiplist::SkipListMap;
use crate::mem::xindex::{XIndexMap, XIndexParams};

crate::param_specs! {
    /// One updatable map with its parameters. See the module docs.
    pub enum MapSpec {
        /// lidx's in-memory B+-tree (`mem::btree`): the traditional baseline.
        Btree = "btree" {
            /// Entries per leaf: larger is fewer, bigger leaves.
            leaf: usize = 16,
            /// Separators per inner node: larger is fewer levels and longer in-node searches.
            inner: usize = 15,
        },
        /// The adaptive radix tree (`mem::art`): the trie baseline.
        Art = "art" {},
        /// XIndex (`mem::xindex`), the concurrent learned index, through its single-threaded
        /// view.
        Xindex = "xindex" {
            /// Records per group at bulk load (a group splits past four times this).
            group: usize = 1024,
            /// Mean model error (positions) before a model or group is split.
            error: usize = 32,
            /// Records a group's delta buffer takes before a compaction.
            buffer: usize = 256,
            /// Mean error (groups) of the root RMI before it gets more models.
            root_error: usize = 32,
        },
        /// `crossbeam-skiplist`'s concurrent skip list (`mem::skiplist`): the skip-list baseline.
        Skiplist = "skiplist" {},
        /// A `hashbrown` hash map (`mem::hash_map`): point lookups only; its `lower_bound` and
        /// `scan` pass over every entry (`KeyMap::ordered` is false).
        Hash = "hash" {},
        /// The dynamic PGM-index (`mem::dynamic_pgm`): LSM-style levels of static PGMs.
        Dpgm = "dpgm" {
            /// Error of each level's PGM: larger is smaller models, wider windows per level.
            eps: usize = 64,
            /// Error of the PGMs' upper levels: larger is fewer levels, wider windows in each.
            eps_rec: usize = 8,
            /// Entries of the first level (the insert buffer): larger is fewer merges and
            /// levels, a longer shift per insert.
            base: usize = 256,
        },
        /// The updatable FITing-tree inserting in place (`mem::fiting_tree::Inplace`).
        FitingInplace = "fiting-inplace" {
            /// Segment error: larger is fewer segments, longer searches within one.
            eps: usize = 64,
            /// Free slots per segment, split between its ends: larger is fewer retrains,
            /// more keys shifted per insert.
            reserve: usize = 256,
        },
        /// The updatable FITing-tree with a delta buffer per segment
        /// (`mem::fiting_tree::Buffer`).
        FitingBuffer = "fiting-buffer" {
            /// Segment error: larger is fewer segments, longer searches within one.
            eps: usize = 64,
            /// Delta buffer capacity per segment: larger is fewer retrains, longer buffer
            /// inserts.
            reserve: usize = 256,
        },
        /// The updatable FITing-tree with gapped-array segments (`mem::fiting_tree::Gap`,
        /// ALEX's data node): paper 001's Gap insertion strategy.
        FitingGap = "fiting-gap" {
            /// Segment error: larger is fewer segments, longer searches within one.
            eps: usize = 64,
            /// Gap slots spread through each segment: larger is fewer retrains and fewer
            /// keys shifted per insert, more memory.
            reserve: usize = 256,
        },
        /// LIPP (`mem::lipp`): learned, precise positions, conflicts make child nodes.
        Lipp = "lipp" {
            /// 1: fit nodes with FMCD; 0: the middle-thirds line (more conflicts, deeper).
            fmcd: usize = 1,
            /// Rebuild a subtree at this many times its built size: larger is fewer rebuilds.
            growth: usize = 4,
            /// ... if this percent of its inserts made a child: larger is fewer rebuilds.
            conflicts: usize = 10,
            /// Nodes built from more entries never rebuild on insert: larger is more rebuilds.
            fixed: usize = 1000000,
            /// Rebuild a subtree removes left under 1/shrink of its built size: larger is later.
            shrink: usize = 4,
        },
        /// ALEX (`mem::alex`): gapped-array data nodes under model-routed inner nodes.
        Alex = "alex" {
            /// Largest node in bytes: larger is a shallower tree, slower worst-case inserts.
            node_bytes: usize = 16777216,
            /// Density after a data node grows, percent: lower is fewer shifts, more memory.
            min_density: u32 = 60,
            /// Density after the bulk load, percent.
            init_density: u32 = 70,
            /// Density at which a data node grows or splits, percent.
            max_density: u32 = 80,
            /// Expected share of inserts the cost model plans for, percent.
            inserts: u32 = 100,
        },
    }
}

impl MapSpec {
    /// Parses one spec such as `btree:leaf=32`; anything else is
    /// [`Error::InvalidParameter`] listing every accepted form.
    pub fn parse(item: &str) -> Result<MapSpec> {
        crate::spec::split_item(item)
            .and_then(|(name, pairs)| MapSpec::from_parts(name, &pairs))
            .ok_or_else(|| Error::InvalidParameter {
                name: "map",
                value: item.to_string(),
                expected: "one of the forms `lidx bench --help` lists under --index",
            })
    }

    /// Every accepted form with its defaults, comma-separated.
    pub fn accepted_forms() -> String {
        MapSpec::forms().join(", ")
    }

    /// An empty map.
    pub fn build_empty(&self) -> Result<Box<dyn KeyMap>> {
        self.build(Vec::new())
    }

    /// The map bulk-loaded with `entries` (strictly increasing keys; errors as
    /// [`BulkLoad::load_sorted`]).
    pub fn build(&self, entries: Vec<(u64, u64)>) -> Result<Box<dyn KeyMap>> {
        Ok(match *self {
            MapSpec::Btree { leaf, inner } => Box::new(BTree::load_sorted(
                entries,
                &BTreeParams::with_slots(leaf, inner),
            )?),
            MapSpec::Art {} => Box::new(Art::load_sorted(entries, &())?),
            MapSpec::Xindex {
                group,
                error,
                buffer,
                root_error,
            } => Box::new(XIndexMap::load_sorted(
                entries,
                &XIndexParams {
                    group_size: group,
                    error_bound: error,
                    buffer_size: buffer,
                    root_error_bound: root_error,
                },
            )?),
            MapSpec::Skiplist {} => Box::new(SkipListMap::load_sorted(entries, &())?),
            MapSpec::Hash {} => Box::new(HashKeyMap::load_sorted(entries)?),
            MapSpec::Dpgm { eps, eps_rec, base } => Box::new(DynamicPgm::load_sorted(
                entries,
                &DynamicPgmParams::new(eps, eps_rec, base),
            )?),
            MapSpec::FitingInplace { eps, reserve } => Box::new(FitingInplace::load_sorted(
                entries,
                &FitingMapParams::new(eps, reserve),
            )?),
            MapSpec::FitingBuffer { eps, reserve } => Box::new(FitingBuffer::load_sorted(
                entries,
                &FitingMapParams::new(eps, reserve),
            )?),
            MapSpec::FitingGap { eps, reserve } => Box::new(FitingGap::load_sorted(
                entries,
                &FitingMapParams::new(eps, reserve),
            )?),
            MapSpec::Lipp {
                fmcd,
                growth,
                conflicts,
                fixed,
                shrink,
            } => {
                let params = LippParams {
                    fmcd: match fmcd {
                        0 => false,
                        1 => true,
                        _ => {
                            return Err(Error::InvalidParameter {
                                name: "fmcd",
                                value: fmcd.to_string(),
                                expected: "0 (off) or 1 (on)",
                            })
                        }
                    },
                    growth,
                    conflict_percent: conflicts,
                    fixed_size: fixed,
                    shrink,
                    ..LippParams::default()
                };
                Box::new(Lipp::load_sorted(entries, &params)?)
            }
            MapSpec::Alex {
                node_bytes,
                min_density,
                init_density,
                max_density,
                inserts,
            } => Box::new(Alex::load_sorted(
                entries,
                &AlexParams {
                    max_node_bytes: node_bytes,
                    min_density_percent: min_density,
                    init_density_percent: init_density,
                    max_density_percent: max_density,
                    expected_insert_percent: inserts,
                },
            )?),
        })
    }
}
