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
use crate::mem::key_map::KeyMap;

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
