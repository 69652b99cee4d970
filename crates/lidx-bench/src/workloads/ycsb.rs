//! The YCSB-derived read/write workloads of paper 002 §10.1: read-only, write-only (inserts)
//! and balanced (50% inserts, 50% reads).
//!
//! Paper 002 shuffles each dataset, bulk-loads the index with 75% of the keys and draws the
//! inserted keys from the remaining 25%; reads look up keys the index holds. We do the same,
//! with a fixed seed ([`YcsbPlan::generate`]):
//!
//! - the dataset's unique keys are shuffled (ChaCha8 seeded with `seed`); the first 75% (rounded
//!   down) sorted are the **initial** keys, the rest, in shuffled order, the **insert pool**;
//! - the run is split among `threads` streams ("each thread its own slice of the op stream"):
//!   stream `t` has its share of the operations and its own disjoint slice of the insert pool,
//!   so no key is inserted twice;
//! - within a stream, each operation is an insert or a read; the number of inserts is exact
//!   (`ops * insert fraction`, rounded) and their positions are shuffled. A read chooses
//!   uniformly among the keys present *at that moment from the stream's point of view*: the
//!   initial keys plus the keys this stream has already inserted. A read may therefore hit a
//!   key that only the hybrid's dynamic stage holds. Reading only the stream's own inserts
//!   (not another thread's) is what makes "present at that moment" exact with several
//!   threads, whose interleaving is not deterministic.
//!
//! Every read is checked by the runner against [`crate::disk_workload::payload_of`].
//!
//! What we do differently from YCSB: YCSB's workloads A-F mix reads with *updates* of existing
//! keys and choose keys by a zipfian distribution; paper 002's variants (and ours) insert new
//! keys and read uniformly, which is what stresses a learned index's static stage.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{BenchError, Result};

/// Accepted spellings of a YCSB workload.
pub const YCSB_FORMS: &str = "read-only, write-only or balanced, comma-separated";

/// Fraction of the (unique, shuffled) keys bulk-loaded before the run (paper 002 §10.1).
pub const INIT_FRACTION: f64 = 0.75;

/// One of paper 002's three read/write mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YcsbWorkload {
    /// Reads only.
    ReadOnly,
    /// Inserts only.
    WriteOnly,
    /// 50% inserts, 50% reads.
    Balanced,
}

/// One operation of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `get` of a key the index holds; the payload is checked.
    Read(u64),
    /// `put` of a key the index does not hold yet.
    Insert(u64),
}

impl YcsbWorkload {
    /// Parses one name of [`YCSB_FORMS`].
    pub fn parse(spec: &str) -> Result<YcsbWorkload> {
        match spec.trim() {
            "read-only" => Ok(YcsbWorkload::ReadOnly),
            "write-only" => Ok(YcsbWorkload::WriteOnly),
            "balanced" => Ok(YcsbWorkload::Balanced),
            _ => Err(BenchError::BadSpec {
                what: "workload",
                got: spec.to_string(),
                expected: YCSB_FORMS.to_string(),
            }),
        }
    }

    /// Parses a comma-separated list (at least one, no repeats).
    pub fn parse_list(spec: &str) -> Result<Vec<YcsbWorkload>> {
        let mut out: Vec<YcsbWorkload> = Vec::new();
        for part in spec.split(',') {
            let w = YcsbWorkload::parse(part)?;
            if out.contains(&w) {
                return Err(BenchError::BadSpec {
                    what: "workload list",
                    got: spec.to_string(),
                    expected: format!("{YCSB_FORMS}, each at most once"),
                });
            }
            out.push(w);
        }
        Ok(out)
    }

    /// The canonical spelling.
    pub fn label(self) -> &'static str {
        match self {
            YcsbWorkload::ReadOnly => "read-only",
            YcsbWorkload::WriteOnly => "write-only",
            YcsbWorkload::Balanced => "balanced",
        }
    }

    /// Fraction of the operations that are inserts.
    pub fn insert_fraction(self) -> f64 {
        match self {
            YcsbWorkload::ReadOnly => 0.0,
            YcsbWorkload::WriteOnly => 1.0,
            YcsbWorkload::Balanced => 0.5,
        }
    }
}

/// The initial keys and the per-thread operation streams of one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbPlan {
    /// The workload.
    pub workload: YcsbWorkload,
    /// Keys bulk-loaded before the run, sorted and unique.
    pub init: Vec<u64>,
    /// One operation stream per thread.
    pub streams: Vec<Vec<Op>>,
}

impl YcsbPlan {
    /// The plan for `workload` over the sorted unique `keys`: `ops` operations in all, split into
    /// `threads` streams (see the [module docs](self)). Same arguments, same plan.
    ///
    /// Errors: [`BenchError::NoKeys`] when reads are asked of an empty initial set;
    /// [`BenchError::BadSpec`] when a stream needs more inserts than its slice of the insert
    /// pool holds (at most 25% of the keys can be inserted in all).
    pub fn generate(
        workload: YcsbWorkload,
        keys: &[u64],
        ops: usize,
        threads: usize,
        seed: u64,
    ) -> Result<YcsbPlan> {
        let threads = threads.max(1);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut shuffled = keys.to_vec();
        shuffled.shuffle(&mut rng);
        let init_len = (keys.len() as f64 * INIT_FRACTION) as usize;
        let pool = shuffled.split_off(init_len);
        let mut init = shuffled;
        init.sort_unstable();

        let pool_share = pool.len() / threads;
        let mut streams = Vec::with_capacity(threads);
        for t in 0..threads {
            let t_ops = split(ops, threads, t + 1) - split(ops, threads, t);
            let inserts = (t_ops as f64 * workload.insert_fraction()).round() as usize;
            if inserts > pool_share {
                return Err(BenchError::BadSpec {
                    what: "operation count",
                    got: ops.to_string(),
                    expected: format!(
                        "at most {} operations for {} on {} keys with {threads} thread(s): \
                         inserts come from the {} keys held out of the initial load",
                        (pool_share * threads) as f64 / workload.insert_fraction(),
                        workload.label(),
                        keys.len(),
                        pool.len()
                    ),
                });
            }
            if t_ops > inserts && init.is_empty() {
                return Err(BenchError::NoKeys {
                    workload: workload.label().to_string(),
                });
            }
            let own = &pool[t * pool_share..t * pool_share + inserts];
            streams.push(stream(&init, own, t_ops, &mut rng));
        }
        Ok(YcsbPlan {
            workload,
            init,
            streams,
        })
    }

    /// Operations in all streams.
    pub fn ops(&self) -> usize {
        self.streams.iter().map(Vec::len).sum()
    }
}

/// Item `j` of `n` items split evenly into `parts`: the first index of part `j`.
fn split(n: usize, parts: usize, j: usize) -> usize {
    (n as u128 * j as u128 / parts as u128) as usize
}

/// `ops` operations inserting `own` in order, reads uniform over `init` + what was inserted.
fn stream(init: &[u64], own: &[u64], ops: usize, rng: &mut ChaCha8Rng) -> Vec<Op> {
    let mut is_insert = vec![false; ops];
    is_insert[..own.len()].fill(true);
    is_insert.shuffle(rng);
    let mut inserted = 0;
    is_insert
        .into_iter()
        .map(|insert| {
            if insert {
                inserted += 1;
                Op::Insert(own[inserted - 1])
            } else {
                let r = rng.gen_range(0..init.len() + inserted);
                Op::Read(if r < init.len() {
                    init[r]
                } else {
                    own[r - init.len()]
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    fn keys(n: u64) -> Vec<u64> {
        (0..n).map(|i| i * 7 + 3).collect()
    }

    /// Replays every stream against its own view of the index and checks the invariants.
    fn check(plan: &YcsbPlan, keys: &[u64], ops: usize) {
        assert_eq!(plan.init.len(), keys.len() * 3 / 4);
        assert!(plan.init.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(plan.ops(), ops);
        let init: HashSet<u64> = plan.init.iter().copied().collect();
        let mut all_inserted = HashSet::new();
        for s in &plan.streams {
            let mut present = init.clone();
            for op in s {
                match *op {
                    Op::Read(k) => assert!(present.contains(&k), "read of absent {k}"),
                    Op::Insert(k) => {
                        assert!(keys.binary_search(&k).is_ok());
                        assert!(!init.contains(&k), "insert of an initial key {k}");
                        assert!(all_inserted.insert(k), "{k} inserted twice");
                        present.insert(k);
                    }
                }
            }
        }
        let want = (ops as f64 * plan.workload.insert_fraction()).round();
        assert!((all_inserted.len() as f64 - want).abs() <= plan.streams.len() as f64);
    }

    #[test]
    fn parses_and_labels() {
        for w in ["read-only", "write-only", "balanced"] {
            assert_eq!(YcsbWorkload::parse(w).unwrap().label(), w);
        }
        assert_eq!(
            YcsbWorkload::parse_list("balanced,read-only").unwrap(),
            vec![YcsbWorkload::Balanced, YcsbWorkload::ReadOnly]
        );
        for bad in ["", "read", "balanced,balanced", "read-only,"] {
            assert!(YcsbWorkload::parse_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn too_many_inserts_is_a_bad_spec() {
        let k = keys(100);
        assert!(YcsbPlan::generate(YcsbWorkload::WriteOnly, &k, 25, 1, 1).is_ok());
        assert!(matches!(
            YcsbPlan::generate(YcsbWorkload::WriteOnly, &k, 26, 1, 1),
            Err(BenchError::BadSpec { .. })
        ));
        assert!(YcsbPlan::generate(YcsbWorkload::ReadOnly, &k, 10_000, 3, 1).is_ok());
        assert!(matches!(
            YcsbPlan::generate(YcsbWorkload::ReadOnly, &[], 1, 1, 1),
            Err(BenchError::NoKeys { .. })
        ));
    }

    #[test]
    fn balanced_reads_hit_fresh_inserts() {
        let k = keys(2000);
        let plan = YcsbPlan::generate(YcsbWorkload::Balanced, &k, 800, 1, 9).unwrap();
        let init: HashSet<u64> = plan.init.iter().copied().collect();
        let fresh = plan.streams[0]
            .iter()
            .filter(|op| matches!(op, Op::Read(k) if !init.contains(k)))
            .count();
        assert!(fresh > 0);
    }

    proptest! {
        #[test]
        fn plans_keep_their_invariants(
            n in 4u64..600,
            ops in 0usize..300,
            threads in 1usize..5,
            which in 0usize..3,
            seed in any::<u64>(),
        ) {
            let workload = [YcsbWorkload::ReadOnly, YcsbWorkload::WriteOnly, YcsbWorkload::Balanced][which];
            let k = keys(n);
            let ops = if workload == YcsbWorkload::ReadOnly {
                ops
            } else {
                ops.min((n as usize - n as usize * 3 / 4) / threads * threads)
            };
            let plan = YcsbPlan::generate(workload, &k, ops, threads, seed).unwrap();
            check(&plan, &k, ops);
            prop_assert_eq!(&plan, &YcsbPlan::generate(workload, &k, ops, threads, seed).unwrap());
        }
    }
}
