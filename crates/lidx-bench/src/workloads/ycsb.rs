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
//!
//! # YCSB's core workloads A-F (paper 001 §III)
//!
//! `a`-`f` are YCSB's core workloads over the same 75% initial load: A 50% reads, 50% updates;
//! B 95% reads, 5% updates; C reads only; D 95% reads of the latest keys, 5% inserts; E 95%
//! short scans (a start key and 1 to 100 items, uniform, as YCSB's default), 5% inserts; F 50%
//! reads, 50% read-modify-writes. Keys are chosen by YCSB's scrambled zipfian (`a` = `a:zipf`)
//! or uniformly (`a:uniform`) among the keys present from the stream's point of view; D reads
//! "latest": a zipfian rank counted back from the stream's newest key (the initial keys count
//! as older than every insert, in load order). An update writes a new version of the key's
//! value ([`crate::disk_workload::versioned_payload`]), so a read checks that the value is one
//! the key was ever given, whatever the threads' interleaving.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{BenchError, Result};
use crate::workload::{fnv1a64, Zipfian, YCSB_ZIPF_THETA};

/// Accepted spellings of a YCSB workload.
pub const YCSB_FORMS: &str = "read-only, write-only or balanced (paper 002), or YCSB's a, b, c, \
                              e, f (zipfian keys; :uniform for uniform ones) and d (latest), \
                              comma-separated";

/// Fraction of the (unique, shuffled) keys bulk-loaded before the run (paper 002 §10.1).
pub const INIT_FRACTION: f64 = 0.75;

/// The most items a workload E scan asks for (YCSB's default `maxscanlength`).
pub const MAX_SCAN: u32 = 100;

/// How a core workload chooses the keys it reads, updates or scans from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyDist {
    /// Every present key equally likely.
    Uniform,
    /// YCSB's scrambled zipfian over the present keys (theta 0.99).
    Zipf,
    /// YCSB's "latest": a zipfian rank counted back from the newest key.
    Latest,
}

/// One of paper 002's three read/write mixes, or one of YCSB's core workloads A-F.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YcsbWorkload {
    /// Reads only.
    ReadOnly,
    /// Inserts only.
    WriteOnly,
    /// 50% inserts, 50% reads.
    Balanced,
    /// YCSB's workload `letter` (`a`-`f`) with keys chosen by `dist`.
    Core {
        /// `a` to `f`.
        letter: char,
        /// How keys are chosen.
        dist: KeyDist,
    },
}

/// One operation of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `get` of a key the index holds; the payload is checked.
    Read(u64),
    /// `put` of a key the index does not hold yet.
    Insert(u64),
    /// `put` of a new version of a key the index holds.
    Update(u64, u64),
    /// `get` of a key the index holds, then `put` of its value's new version.
    ReadModifyWrite(u64, u64),
    /// The first `len` entries from a key the index holds.
    Scan(u64, u32),
}

impl YcsbWorkload {
    /// Parses one name of [`YCSB_FORMS`].
    pub fn parse(spec: &str) -> Result<YcsbWorkload> {
        let bad = || BenchError::BadSpec {
            what: "workload",
            got: spec.to_string(),
            expected: YCSB_FORMS.to_string(),
        };
        let spec = spec.trim();
        let (name, dist) = match spec.split_once(':') {
            Some((name, dist)) => (name, Some(dist)),
            None => (spec, None),
        };
        let core = |letter: char| {
            let dist = match (letter, dist) {
                ('d', None | Some("latest")) => KeyDist::Latest,
                ('d', Some(_)) => return Err(bad()),
                (_, None | Some("zipf")) => KeyDist::Zipf,
                (_, Some("uniform")) => KeyDist::Uniform,
                _ => return Err(bad()),
            };
            Ok(YcsbWorkload::Core { letter, dist })
        };
        match (name, dist) {
            ("read-only", None) => Ok(YcsbWorkload::ReadOnly),
            ("write-only", None) => Ok(YcsbWorkload::WriteOnly),
            ("balanced", None) => Ok(YcsbWorkload::Balanced),
            ("a" | "b" | "c" | "d" | "e" | "f", _) => core(name.chars().next().unwrap_or('a')),
            _ => Err(bad()),
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
        use KeyDist::*;
        match self {
            YcsbWorkload::ReadOnly => "read-only",
            YcsbWorkload::WriteOnly => "write-only",
            YcsbWorkload::Balanced => "balanced",
            YcsbWorkload::Core { letter, dist } => match (letter, dist) {
                ('a', Zipf) => "a:zipf",
                ('a', _) => "a:uniform",
                ('b', Zipf) => "b:zipf",
                ('b', _) => "b:uniform",
                ('c', Zipf) => "c:zipf",
                ('c', _) => "c:uniform",
                ('d', _) => "d:latest",
                ('e', Zipf) => "e:zipf",
                ('e', _) => "e:uniform",
                ('f', Zipf) => "f:zipf",
                _ => "f:uniform",
            },
        }
    }

    /// Fraction of the operations that are inserts.
    pub fn insert_fraction(self) -> f64 {
        match self {
            YcsbWorkload::ReadOnly => 0.0,
            YcsbWorkload::WriteOnly => 1.0,
            YcsbWorkload::Balanced => 0.5,
            YcsbWorkload::Core { letter, .. } => match letter {
                'd' | 'e' => 0.05,
                _ => 0.0,
            },
        }
    }

    /// True when the workload writes (inserts, updates or read-modify-writes).
    pub fn writes(self) -> bool {
        match self {
            YcsbWorkload::ReadOnly => false,
            YcsbWorkload::WriteOnly | YcsbWorkload::Balanced => true,
            YcsbWorkload::Core { letter, .. } => letter != 'c',
        }
    }

    /// True when the workload scans (E), which only stores with an ordered scan run.
    pub fn scans(self) -> bool {
        matches!(self, YcsbWorkload::Core { letter: 'e', .. })
    }

    /// The kind of a non-insert operation, from a uniform draw `u` in `[0, 1)` (the inserts are
    /// placed apart): `0` read, `1` update, `2` read-modify-write, `3` scan.
    fn other_kind(self, u: f64) -> u8 {
        match self {
            YcsbWorkload::Core { letter, .. } => match letter {
                'a' if u < 0.5 => 1,
                'b' if u < 0.05 => 1,
                'e' => 3,
                'f' if u < 0.5 => 2,
                _ => 0,
            },
            _ => 0,
        }
    }

    fn dist(self) -> KeyDist {
        match self {
            YcsbWorkload::Core { dist, .. } => dist,
            _ => KeyDist::Uniform,
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
            let picker = Picker::new(workload, init.len() + own.len());
            streams.push(stream(
                workload, &picker, &init, own, t as u64, t_ops, &mut rng,
            ));
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

/// Chooses keys among the `present` keys of a stream's view for one workload.
struct Picker {
    dist: KeyDist,
    zipf: Option<Zipfian>,
}

impl Picker {
    /// A picker for views of up to `most` keys.
    fn new(workload: YcsbWorkload, most: usize) -> Picker {
        let dist = workload.dist();
        Picker {
            dist,
            zipf: (dist != KeyDist::Uniform && most > 0)
                .then(|| Zipfian::new(most as u64, YCSB_ZIPF_THETA)),
        }
    }

    /// An index into the view's `present` keys (`present >= 1`), in insertion order (the
    /// initial keys first).
    fn pick(&self, present: usize, rng: &mut ChaCha8Rng) -> usize {
        match self.dist {
            KeyDist::Uniform => rng.gen_range(0..present),
            KeyDist::Zipf => (fnv1a64(self.rank(present, rng) as u64) % present as u64) as usize,
            KeyDist::Latest => present - 1 - self.rank(present, rng),
        }
    }

    /// A zipfian rank below `present`: ranks beyond the keys present so far are drawn again.
    fn rank(&self, present: usize, rng: &mut ChaCha8Rng) -> usize {
        loop {
            let r = self.zipf.map_or(0, |z| z.sample(rng)) as usize;
            if r < present {
                return r;
            }
        }
    }
}

/// `ops` operations of `workload` inserting `own` in order; the others choose among `init` +
/// what was inserted (see the module docs). Versions of updates are `thread`'s own.
fn stream(
    workload: YcsbWorkload,
    picker: &Picker,
    init: &[u64],
    own: &[u64],
    thread: u64,
    ops: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Op> {
    let mut is_insert = vec![false; ops];
    is_insert[..own.len()].fill(true);
    is_insert.shuffle(rng);
    let mut inserted = 0;
    let mut version = thread << 40;
    is_insert
        .into_iter()
        .map(|insert| {
            if insert {
                inserted += 1;
                return Op::Insert(own[inserted - 1]);
            }
            let kind = workload.other_kind(rng.gen::<f64>());
            let i = picker.pick(init.len() + inserted, rng);
            let key = if i < init.len() {
                init[i]
            } else {
                own[i - init.len()]
            };
            version += 1;
            match kind {
                1 => Op::Update(key, version),
                2 => Op::ReadModifyWrite(key, version),
                3 => Op::Scan(key, rng.gen_range(1..=MAX_SCAN)),
                _ => Op::Read(key),
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
                    Op::Read(k) | Op::Update(k, _) | Op::ReadModifyWrite(k, _) | Op::Scan(k, _) => {
                        assert!(present.contains(&k), "{op:?} of an absent key")
                    }
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
        for bad in [
            "",
            "read",
            "balanced,balanced",
            "read-only,",
            "g",
            "a:latest",
            "d:zipf",
            "read-only:zipf",
        ] {
            assert!(YcsbWorkload::parse_list(bad).is_err(), "{bad}");
        }
        for (spec, label) in [
            ("a", "a:zipf"),
            ("b:uniform", "b:uniform"),
            ("d", "d:latest"),
            ("e:zipf", "e:zipf"),
            ("f", "f:zipf"),
        ] {
            let w = YcsbWorkload::parse(spec).unwrap();
            assert_eq!(w.label(), label);
            assert_eq!(YcsbWorkload::parse(label).unwrap(), w);
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

    /// Each core workload draws its mix of operations, and zipfian keys are skewed.
    #[test]
    fn core_workloads_have_their_mix() {
        let k = keys(40_000);
        let count =
            |plan: &YcsbPlan, f: fn(&Op) -> bool| plan.streams[0].iter().filter(|o| f(o)).count();
        for (spec, reads, updates, rmw, scans, inserts) in [
            ("a", 0.5, 0.5, 0.0, 0.0, 0.0),
            ("b", 0.95, 0.05, 0.0, 0.0, 0.0),
            ("c", 1.0, 0.0, 0.0, 0.0, 0.0),
            ("d", 0.95, 0.0, 0.0, 0.0, 0.05),
            ("e", 0.0, 0.0, 0.0, 0.95, 0.05),
            ("f", 0.5, 0.0, 0.5, 0.0, 0.0),
        ] {
            let w = YcsbWorkload::parse(spec).unwrap();
            let plan = YcsbPlan::generate(w, &k, 4000, 1, 3).unwrap();
            check(&plan, &k, 4000);
            let share = |n: usize| n as f64 / 4000.0;
            let near = |got: f64, want: f64| (got - want).abs() < 0.03;
            assert!(
                near(share(count(&plan, |o| matches!(o, Op::Read(_)))), reads),
                "{spec}"
            );
            assert!(
                near(
                    share(count(&plan, |o| matches!(o, Op::Update(..)))),
                    updates
                ),
                "{spec}"
            );
            assert!(
                near(
                    share(count(&plan, |o| matches!(o, Op::ReadModifyWrite(..)))),
                    rmw
                ),
                "{spec}"
            );
            assert!(
                near(share(count(&plan, |o| matches!(o, Op::Scan(..)))), scans),
                "{spec}"
            );
            assert!(
                near(share(count(&plan, |o| matches!(o, Op::Insert(_)))), inserts),
                "{spec}"
            );
        }
        let hottest = |spec: &str| {
            let plan =
                YcsbPlan::generate(YcsbWorkload::parse(spec).unwrap(), &k, 4000, 1, 3).unwrap();
            let mut seen = std::collections::HashMap::new();
            for op in &plan.streams[0] {
                if let Op::Read(k) = op {
                    *seen.entry(*k).or_insert(0) += 1;
                }
            }
            seen.into_values().max().unwrap_or(0)
        };
        assert!(
            hottest("c") > 10 * hottest("c:uniform").max(1),
            "zipfian reads are skewed"
        );
        let plan = YcsbPlan::generate(YcsbWorkload::parse("d").unwrap(), &k, 4000, 1, 3).unwrap();
        let fresh = plan.streams[0]
            .iter()
            .filter(|op| matches!(op, Op::Read(k) if plan.init.binary_search(k).is_err()))
            .count();
        assert!(fresh > 400, "latest reads go to fresh inserts: {fresh}");
    }

    proptest! {
        #[test]
        fn plans_keep_their_invariants(
            n in 4u64..600,
            ops in 0usize..300,
            threads in 1usize..5,
            which in 0usize..9,
            seed in any::<u64>(),
        ) {
            let workload = ["read-only", "write-only", "balanced", "a", "b:uniform", "c", "d", "e", "f"]
                .map(|w| YcsbWorkload::parse(w).unwrap())[which];
            let k = keys(n);
            let pool = (n as usize - n as usize * 3 / 4) / threads * threads;
            let f = workload.insert_fraction();
            let ops = if f == 0.0 {
                ops
            } else if f < 1.0 {
                ops.min(((pool as f64 / f) as usize).saturating_sub(2 * threads))
            } else {
                ops.min(pool)
            };
            let plan = YcsbPlan::generate(workload, &k, ops, threads, seed).unwrap();
            check(&plan, &k, ops);
            prop_assert_eq!(&plan, &YcsbPlan::generate(workload, &k, ops, threads, seed).unwrap());
        }
    }
}
