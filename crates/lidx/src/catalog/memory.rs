//! The in-memory structures: the static indexes over sorted `u64` keys ([`IndexSpec`],
//! [`Role::StaticIndex`]) and the updatable ordered maps ([`MapSpec`], [`Role::Map`]), which are
//! static indexes too. `lidx bench --index` spells them; a `log` store's `STORE` file records a
//! map's [`MapSpec::label`]. Parameters are whole numbers; fractions are written in percent.
//!
//! # Adding a structure
//!
//! One row in a table below (variant, name, parameters with types and defaults, docs) gives its
//! parsing, label and help line; then one arm where the role is built: [`MapSpec::build`] for a
//! map, the benchmark's static-index registry for an index.

use super::role::{parse_list, BadSpec, Role};
use crate::error::{Error, Result};

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

crate::param_specs! {
    /// One index of an `--index` list, with its parameters. See the module docs.
    pub enum IndexSpec {
        /// Binary search over the whole array: the baseline every speedup is measured against.
        Sorted = "sorted" {},
        /// PGM-index (paper 001): optimal piecewise linear segments with error `eps`, recursively.
        Pgm = "pgm" {
            /// Maximum error in positions: smaller is faster lookups and more segments (memory).
            eps: usize = 64,
            /// Error of the upper levels: smaller is more upper segments and shorter level scans.
            eps_rec: usize = 8,
        },
        /// RadixSpline (Kipf et al., the learned index paper 000 §2.2 evaluates): a spline with error `err` and a radix table on its points.
        Rs = "rs" {
            /// Radix table bits: more bits is a larger table and a narrower spline search.
            bits: u32 = 18,
            /// Spline error in positions: smaller is faster lookups and more spline points.
            err: usize = 32,
        },
        /// Two-stage recursive model index (RMI): a root model choosing one of `leaves` linear
        /// models.
        Rmi = "rmi" {
            /// Second-stage models: more is smaller errors and more memory (the library's default,
            /// 2^20, is measured in `crate::mem::rmi`).
            leaves: usize = 1048576,
        },
        /// B+-tree over the sorted keys (the classic structure learned indexes must beat).
        Btree = "btree" {
            /// Key-position slots per leaf (16 bytes each): larger is fewer, bigger leaves.
            leaf: usize = 16,
            /// Separators per inner node: larger is fewer levels and longer in-node searches.
            inner: usize = 15,
        },
        /// Sampled PGM: a PGM over every `every`-th key with error `eps` on the sample.
        Spgm = "spgm" {
            /// Sampling stride: larger is a smaller index and wider windows.
            every: usize = 128,
            /// Error on the sample: smaller is more segments and narrower windows.
            eps: usize = 2,
        },
        /// B+-tree over every `every`-th key, used as a model: the window is one stride.
        BtreeModel = "btree-model" {
            /// Sampling stride: larger is a smaller tree and wider windows.
            every: usize = 256,
        },
        /// FITing-tree: greedy segments with error `eps` in a B+-tree.
        Fiting = "fiting" {
            /// Maximum error in positions: smaller is faster lookups and more segments.
            eps: usize = 64,
        },
        /// Adaptive radix tree (paper 004's baseline) over the distinct keys, exact answers.
        Art = "art" {},
        /// START (paper 004): ART tuned by the dynamic program with the cost model of
        /// `$LIDX_START_COST_MODEL` (written by `lidx start calibrate`), else the paper's Table I.
        Start = "start" {
            /// Space budget of a multilevel node, in times the ART nodes it replaces: larger is
            /// more multilevel nodes (shallower, more memory).
            budget: usize = 1,
            /// 1: the tuned tree's leaves and ART nodes move into a huge-page arena (no page walk
            /// per level, up to one huge page more memory); 0: they stay on the global allocator.
            arena: usize = 1,
        },
        /// START tuned by the greedy bottom-up variant instead of the dynamic program.
        StartGreedy = "start-greedy" {
            /// As for `start`.
            budget: usize = 1,
            /// As for `start`.
            arena: usize = 1,
        },
    }
    extra
    /// An updatable map ([`MapSpec`]) used as a static index: each distinct key maps to
    /// its first position, found by `get` (present) or `lower_bound` (absent).
    Map(MapSpec)
}

impl MapSpec {
    /// Parses one spec such as `btree:leaf=32`; anything else is
    /// [`Error::InvalidParameter`] listing every accepted form.
    pub fn parse(item: &str) -> Result<MapSpec> {
        MapSpec::parse_item(item).ok_or_else(|| Error::InvalidParameter {
            name: "map",
            value: item.to_string(),
            expected: "one of the forms `lidx bench --help` lists under --index",
        })
    }

    /// Every accepted form with its defaults, comma-separated.
    pub fn accepted_forms() -> String {
        MapSpec::forms().join(", ")
    }
}

impl IndexSpec {
    /// Parses one item such as `rs:bits=18:err=32`.
    pub fn parse(item: &str) -> std::result::Result<IndexSpec, BadSpec> {
        IndexSpec::parse_item(item)
            .ok_or_else(|| BadSpec::new("index", item, IndexSpec::accepted_forms()))
    }

    /// Parses a comma-separated list; it must name at least one index.
    pub fn parse_list(list: &str) -> std::result::Result<Vec<IndexSpec>, BadSpec> {
        parse_list(
            list,
            "index list",
            &IndexSpec::accepted_forms(),
            IndexSpec::parse,
        )
    }

    /// The parameters alone in plain digits for machine reading, `bits=18:err=32` (empty when
    /// there are none).
    pub fn params_text(&self) -> String {
        self.params()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(":")
    }

    /// True for the binary-search baseline that speedups are measured against.
    pub fn is_baseline(&self) -> bool {
        matches!(self, IndexSpec::Sorted {})
    }

    /// True for the learned models a static learned disk index is built with (its
    /// `crate::disk::static_learned` model): `pgm`, `spgm`, `rs`, `rmi`, `btree-model`,
    /// `fiting`.
    pub fn is_disk_model(&self) -> bool {
        matches!(
            self,
            IndexSpec::Pgm { .. }
                | IndexSpec::Spgm { .. }
                | IndexSpec::Rs { .. }
                | IndexSpec::Rmi { .. }
                | IndexSpec::BtreeModel { .. }
                | IndexSpec::Fiting { .. }
        )
    }

    /// The names of the [`Self::is_disk_model`] specs.
    pub fn disk_model_names() -> Vec<&'static str> {
        IndexSpec::names()
            .iter()
            .filter_map(|&name| IndexSpec::from_parts(name, &[]))
            .filter(IndexSpec::is_disk_model)
            .map(|spec| spec.name())
            .collect()
    }

    /// The updatable map this spec names, if it is one: a map used as a static index, or a
    /// static index that is a map's bulk load (`btree`, `art`).
    pub fn as_map(&self) -> Option<MapSpec> {
        match *self {
            IndexSpec::Map(spec) => Some(spec),
            IndexSpec::Btree { leaf, inner } => Some(MapSpec::Btree { leaf, inner }),
            IndexSpec::Art {} => Some(MapSpec::Art {}),
            _ => None,
        }
    }

    /// Every accepted form of [`Role::StaticIndex`], for error messages and help text.
    pub fn accepted_forms() -> String {
        format!(
            "one of {} (numbers accept K/M/G and Ki/Mi/Gi suffixes)",
            Role::StaticIndex.forms().join(", ")
        )
    }
}
