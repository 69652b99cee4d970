//! Paper 003's six workloads on updatable on-disk indexes (§5.2), as a plan of operations.
//!
//! * **lookup** and **scan** run on an index bulk loaded with every key: a lookup is `get` of
//!   an existing key, a scan the start key's lower bound and the next items, 100 in all
//!   ([`DiskWorkload`], the read-only runner's workloads).
//! * **write-only**, **read-heavy**, **write-heavy**, **balanced** run on an index bulk loaded
//!   with part of the keys and insert keys held out of the load. The paper repeats groups of 20
//!   operations: 20 inserts (write-only), 2 inserts and 18 lookups (read-heavy), 18 inserts and
//!   2 lookups (write-heavy), 10 and 10 (balanced), inserts first; so do we. Its lookups are
//!   "evenly distributed": ours choose uniformly among the keys present when the lookup runs,
//!   the bulk-loaded ones and those inserted earlier in the run, so a lookup often asks for a
//!   key the run itself inserted.
//!
//! **What is bulk loaded** ([`BULK_FRACTION`]): paper 003 bulk-loads 10M random keys of a 200M
//! dataset and inserts 10M more (write-only: the index doubles) or runs 10M mixed operations.
//! We shuffle the dataset's distinct keys (ChaCha8, seeded) and bulk-load the first half,
//! sorted; the inserts take the other half in shuffled order. The loaded keys are a uniform
//! sample, as the paper's, and the held-out half is as large as the load, so a write-only run of
//! `n / 2` operations doubles the index as the paper's does; fewer operations insert less.
//! Another fraction can be asked for ([`UpdateWorkload::plan`]); a plan that needs more inserts
//! than the held-out part holds is refused.
//!
//! Every operation's true answer follows from the plan: a lookup asks for a key present at
//! that point (found, with [`crate::disk_workload::payload_of`] its payload), an insert adds a
//! key absent until then, and the keys present at the end are [`OpPlan::final_keys`].

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::disk_workload::{DiskWorkload, DISK_WORKLOAD_FORMS};
use crate::error::{BenchError, Result};

/// Accepted spellings of an updatable-index workload.
pub const UPDATE_WORKLOAD_FORMS: &str =
    "write-only, read-heavy, write-heavy, balanced, or the read-only ones: ";

/// Fraction of the distinct keys bulk loaded before a write workload (module docs).
pub const BULK_FRACTION: f64 = 0.5;

/// Operations per group of a mixed workload (paper 003 §5.2: "2 inserts and 18 lookups").
pub const GROUP: u32 = 20;

/// A workload of paper 003 §5.2 on an updatable index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UpdateWorkload {
    /// Lookups or scans on an index loaded with every key.
    Read(DiskWorkload),
    /// Groups of [`GROUP`] operations, `inserts` inserts then lookups, on a partly loaded index.
    Mixed {
        /// Inserts per group of 20: 20 write-only, 2 read-heavy, 18 write-heavy, 10 balanced.
        inserts: u32,
    },
}

/// One operation of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `get` of a key present at this point.
    Get(u64),
    /// A scan from this start key.
    Scan(u64),
    /// Insert of a key absent until now.
    Insert(u64),
}

/// The keys to bulk load, the operations, and the keys present at the end.
#[derive(Debug, Clone)]
pub struct OpPlan {
    /// Keys bulk loaded, sorted.
    pub bulk: Vec<u64>,
    /// The operations, in order.
    pub ops: Vec<Op>,
    /// Sorted keys present after the operations, when inserts changed them (else `bulk`).
    inserted_final: Option<Vec<u64>>,
}

impl OpPlan {
    /// The keys present after every operation, sorted: the truth scans and the final check
    /// compare with.
    pub fn final_keys(&self) -> &[u64] {
        self.inserted_final.as_deref().unwrap_or(&self.bulk)
    }

    /// Inserts among the operations.
    pub fn inserts(&self) -> usize {
        self.ops
            .iter()
            .filter(|op| matches!(op, Op::Insert(_)))
            .count()
    }
}

impl UpdateWorkload {
    /// Parses one of [`UPDATE_WORKLOAD_FORMS`] or of the read-only [`DISK_WORKLOAD_FORMS`].
    pub fn parse(spec: &str) -> Result<UpdateWorkload> {
        let mixed = |inserts| Ok(UpdateWorkload::Mixed { inserts });
        match spec.trim() {
            "write-only" => mixed(20),
            "read-heavy" => mixed(2),
            "write-heavy" => mixed(18),
            "balanced" => mixed(10),
            other => DiskWorkload::parse(other)
                .map(UpdateWorkload::Read)
                .map_err(|_| BenchError::BadSpec {
                    what: "workload",
                    got: spec.to_string(),
                    expected: format!("{UPDATE_WORKLOAD_FORMS}{DISK_WORKLOAD_FORMS}"),
                }),
        }
    }

    /// True for the workloads that write.
    pub fn writes(&self) -> bool {
        matches!(self, UpdateWorkload::Mixed { .. })
    }

    /// The canonical spelling.
    pub fn label(&self) -> String {
        match self {
            UpdateWorkload::Read(read) => read.label(),
            UpdateWorkload::Mixed { inserts: 20 } => "write-only".to_string(),
            UpdateWorkload::Mixed { inserts: 2 } => "read-heavy".to_string(),
            UpdateWorkload::Mixed { inserts: 18 } => "write-heavy".to_string(),
            UpdateWorkload::Mixed { inserts: 10 } => "balanced".to_string(),
            UpdateWorkload::Mixed { inserts } => format!("mixed:{inserts}/{GROUP}"),
        }
    }

    /// The plan of `ops` operations over the sorted distinct `keys`; a write workload bulk
    /// loads `bulk_fraction` of them (module docs). Same arguments, same plan.
    ///
    /// Errors: [`BenchError::NoKeys`] for no keys to load; [`BenchError::BadSpec`] for a
    /// fraction outside `(0, 1)` or more inserts than the held-out keys.
    pub fn plan(&self, keys: &[u64], ops: usize, bulk_fraction: f64, seed: u64) -> Result<OpPlan> {
        let inserts_per_group = match *self {
            UpdateWorkload::Read(read) => {
                let starts = read.generate(keys, ops, seed)?;
                let scan = matches!(read, DiskWorkload::Scan { .. });
                return Ok(OpPlan {
                    bulk: keys.to_vec(),
                    ops: starts
                        .into_iter()
                        .map(|k| if scan { Op::Scan(k) } else { Op::Get(k) })
                        .collect(),
                    inserted_final: None,
                });
            }
            UpdateWorkload::Mixed { inserts } => inserts.min(GROUP) as usize,
        };
        if !(bulk_fraction > 0.0 && bulk_fraction < 1.0) {
            return Err(BenchError::BadSpec {
                what: "bulk-load fraction",
                got: bulk_fraction.to_string(),
                expected: "a fraction strictly between 0 and 1".to_string(),
            });
        }
        if keys.is_empty() {
            return Err(BenchError::NoKeys {
                workload: self.label(),
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut present = keys.to_vec();
        present.shuffle(&mut rng);
        let loaded = ((keys.len() as f64 * bulk_fraction) as usize).max(1);
        let pool = present.split_off(loaded);
        let group = GROUP as usize;
        let inserts = ops / group * inserts_per_group + (ops % group).min(inserts_per_group);
        if inserts > pool.len() {
            return Err(BenchError::BadSpec {
                what: "operation count",
                got: ops.to_string(),
                expected: format!(
                    "at most {} operations for {} on {} keys: its {inserts} inserts come from \
                     the {} keys held out of the bulk load",
                    pool.len() * group / inserts_per_group,
                    self.label(),
                    keys.len(),
                    pool.len()
                ),
            });
        }
        let mut bulk = present.clone();
        bulk.sort_unstable();
        let mut pool = pool.into_iter();
        let mut plan = Vec::with_capacity(ops);
        for i in 0..ops {
            if i % group < inserts_per_group {
                let key = pool.next().expect("inserts counted against the pool above");
                present.push(key);
                plan.push(Op::Insert(key));
            } else {
                plan.push(Op::Get(present[rng.gen_range(0..present.len())]));
            }
        }
        present.sort_unstable();
        Ok(OpPlan {
            bulk,
            ops: plan,
            inserted_final: Some(present),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn parses_and_labels() {
        for spec in [
            "write-only",
            "read-heavy",
            "write-heavy",
            "balanced",
            "lookup:uniform",
            "scan:100",
        ] {
            assert_eq!(UpdateWorkload::parse(spec).unwrap().label(), spec);
        }
        assert!(UpdateWorkload::parse("balanced").unwrap().writes());
        assert!(!UpdateWorkload::parse("scan").unwrap().writes());
        let err = UpdateWorkload::parse("insert").unwrap_err().to_string();
        assert!(err.contains("write-heavy") && err.contains("scan"), "{err}");
    }

    /// The mixes of paper 003 §5.2, the held-out inserts and lookups of present keys only.
    #[test]
    fn mixes_and_held_out_inserts() {
        let keys: Vec<u64> = (0..10_000u64).map(|k| k * 3 + 1).collect();
        for (spec, per_group) in [
            ("write-only", 20),
            ("read-heavy", 2),
            ("write-heavy", 18),
            ("balanced", 10),
        ] {
            let workload = UpdateWorkload::parse(spec).unwrap();
            let plan = workload.plan(&keys, 1010, BULK_FRACTION, 9).unwrap();
            assert_eq!(plan.bulk.len(), 5000, "{spec}");
            assert!(plan.bulk.windows(2).all(|w| w[0] < w[1]));
            assert_eq!(plan.ops.len(), 1010);
            // Every group of 20: the inserts first, then lookups.
            for (i, op) in plan.ops.iter().enumerate() {
                assert_eq!(
                    matches!(op, Op::Insert(_)),
                    i % 20 < per_group,
                    "{spec} op {i}"
                );
            }
            assert_eq!(plan.inserts(), 50 * per_group + per_group.min(10));
            let mut present: BTreeSet<u64> = plan.bulk.iter().copied().collect();
            let mut inserted_late = 0;
            for op in &plan.ops {
                match *op {
                    Op::Insert(k) => {
                        assert!(
                            keys.binary_search(&k).is_ok(),
                            "inserts come from the dataset"
                        );
                        assert!(present.insert(k), "{spec}: {k} inserted twice or loaded");
                    }
                    Op::Get(k) => {
                        assert!(present.contains(&k), "{spec}: lookup of absent {k}");
                        inserted_late += usize::from(plan.bulk.binary_search(&k).is_err());
                    }
                    Op::Scan(_) => panic!("no scans in {spec}"),
                }
            }
            if per_group < 20 {
                assert!(inserted_late > 0, "{spec}: lookups reach inserted keys");
            }
            assert!(present.iter().eq(plan.final_keys()), "{spec}");
            // The same seed gives the same plan, another seed another one.
            let again = workload.plan(&keys, 1010, BULK_FRACTION, 9).unwrap();
            assert_eq!(again.ops, plan.ops);
            assert_ne!(
                workload.plan(&keys, 1010, BULK_FRACTION, 10).unwrap().ops,
                plan.ops
            );
        }
    }

    #[test]
    fn read_workloads_load_every_key_and_refusals() {
        let keys: Vec<u64> = (0..1000u64).collect();
        let plan = UpdateWorkload::parse("scan")
            .unwrap()
            .plan(&keys, 50, BULK_FRACTION, 1)
            .unwrap();
        assert_eq!(
            (plan.bulk.as_slice(), plan.final_keys()),
            (&keys[..], &keys[..])
        );
        assert!(plan.ops.iter().all(|op| matches!(op, Op::Scan(_))));
        let write = UpdateWorkload::parse("write-only").unwrap();
        assert!(write.plan(&keys, 500, BULK_FRACTION, 1).is_ok());
        let err = write.plan(&keys, 501, BULK_FRACTION, 1).unwrap_err();
        assert!(err.to_string().contains("at most 500 operations"), "{err}");
        for bad in [0.0, 1.0, f64::NAN] {
            assert!(write.plan(&keys, 10, bad, 1).is_err());
        }
        assert!(write.plan(&[], 10, BULK_FRACTION, 1).is_err());
    }
}
