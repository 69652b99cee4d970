//! Builds the updatable maps the catalog names ([`MapSpec`], as `lidx bench --index`, `lidx ycsb
//! --store log:<index>` and the store's `STORE` file spell them: `btree:leaf=16:inner=15`, `art`).
//!
//! A spec (parsed by [`MapSpec::parse`], printed back as its canonical [`MapSpec::label`])
//! builds a [`KeyMap`] empty ([`MapSpec::build_empty`]) or bulk-loaded
//! ([`MapSpec::build`]).
//!
//! # Adding a map
//!
//! One row in the catalog's table ([`crate::catalog`]) and one arm in [`MapSpec::build`]; the
//! map must implement [`BulkLoad<u64, u64>`].

use crate::catalog::MapSpec;
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

impl MapSpec {
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
