//! The shared ordered-map conformance suite, used by `map_conformance.rs` and by each updatable
//! map's own conformance file: a seeded suite ([`run_map_suite`]: bulk load, then random
//! inserts, removes, gets, ranges and lower bounds with extreme keys, an empty map and a single
//! key) and proptest operation sequences ([`op`], [`apply`]), all against
//! `std::collections::BTreeMap` keyed by the key's order: `Key::to_model` for injective key types
//! (so `f64` works without `Ord`), the bytes themselves for `Str16`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ops::Bound;

use lidx::{BulkLoad, Key, OrderedMap, Str16};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One `#[test]` per key type, each running the generic `suite` for its key:
/// `key_tests!(run_alex_suite; alex_u64: u64, alex_f64: f64)`. Not every file that includes
/// the suite uses it.
#[allow(unused_macros)]
macro_rules! key_tests {
    ($suite:ident; $($name:ident: $key:ty),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                $suite::<$key>();
            }
        )+
    };
}
#[allow(unused_imports)]
pub(crate) use key_tests;

/// A key type the suite can generate from `u64` seeds, order-preserving, and a reference key.
pub trait MapKey: Key + PartialEq {
    type Ref: Ord + Copy + std::fmt::Debug;
    fn from_seed(v: u64) -> Self;
    fn reference(&self) -> Self::Ref;
}

impl MapKey for u64 {
    type Ref = u64;
    fn from_seed(v: u64) -> Self {
        v
    }
    fn reference(&self) -> u64 {
        *self
    }
}

impl MapKey for u32 {
    type Ref = u32;
    fn from_seed(v: u64) -> Self {
        (v >> 32) as u32
    }
    fn reference(&self) -> u32 {
        *self
    }
}

impl MapKey for i64 {
    type Ref = i64;
    fn from_seed(v: u64) -> Self {
        (v ^ (1 << 63)) as i64
    }
    fn reference(&self) -> i64 {
        *self
    }
}

impl MapKey for f64 {
    type Ref = u64;
    /// Inverts `to_model` on the non-NaN range, clamping into `[-inf, +inf]`.
    fn from_seed(v: u64) -> Self {
        let m = v.clamp(f64::NEG_INFINITY.to_model(), f64::INFINITY.to_model());
        f64::from_bits(if m >> 63 == 1 { m ^ (1 << 63) } else { !m })
    }
    fn reference(&self) -> u64 {
        self.to_model()
    }
}

impl MapKey for Str16 {
    type Ref = Str16;
    /// Strings sharing long prefixes: the first 8 bytes carry only the seed's top 24 bits.
    fn from_seed(v: u64) -> Self {
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&(v >> 40).to_be_bytes());
        s[8..].copy_from_slice(&v.to_be_bytes());
        s
    }
    fn reference(&self) -> Str16 {
        *self
    }
}

/// Node sizes the suite runs: the smallest (deep trees, many splits and merges), odd sizes,
/// and the default.
/// A map under test beside its reference; every check compares the two.
pub struct Checked<K: MapKey, M> {
    pub map: M,
    pub reference: BTreeMap<K::Ref, (K, u64)>,
    pub what: String,
}

impl<K: MapKey, M: OrderedMap<K, u64>> Checked<K, M> {
    pub fn insert(&mut self, k: K, v: u64) {
        let got = self.map.insert(k, v).unwrap();
        let want = self.reference.insert(k.reference(), (k, v)).map(|e| e.1);
        assert_eq!(got, want, "{}: insert {k:?}", self.what);
    }

    pub fn remove(&mut self, k: K) {
        let got = self.map.remove(&k);
        let want = self.reference.remove(&k.reference()).map(|e| e.1);
        assert_eq!(got, want, "{}: remove {k:?}", self.what);
    }

    pub fn get(&self, k: K) {
        let want = self.reference.get(&k.reference()).map(|e| e.1);
        assert_eq!(self.map.get(&k).copied(), want, "{}: get {k:?}", self.what);
    }

    pub fn lower_bound(&self, k: K) {
        let want = self
            .reference
            .range(k.reference()..)
            .next()
            .map(|(_, e)| (e.0.reference(), e.1));
        let got = self.map.lower_bound(&k).map(|(k, v)| (k.reference(), *v));
        assert_eq!(got, want, "{}: lower_bound {k:?}", self.what);
    }

    pub fn range(&self, a: Bound<K>, b: Bound<K>, limit: usize) {
        let r = |b: Bound<K>| match b {
            Bound::Included(k) => Bound::Included(k.reference()),
            Bound::Excluded(k) => Bound::Excluded(k.reference()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let (ra, rb) = (r(a), r(b));
        let inverted = match (ra, rb) {
            (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
                x > y || (x == y && !matches!((ra, rb), (Bound::Included(_), Bound::Included(_))))
            }
            _ => false,
        };
        let want: Vec<(K::Ref, u64)> = if inverted {
            Vec::new()
        } else {
            self.reference
                .range((ra, rb))
                .take(limit)
                .map(|(_, e)| (e.0.reference(), e.1))
                .collect()
        };
        let got: Vec<(K::Ref, u64)> = self
            .map
            .range((a, b))
            .take(limit)
            .map(|(k, v)| (k.reference(), *v))
            .collect();
        assert_eq!(got, want, "{}: range {a:?}..{b:?}", self.what);
    }

    pub fn check_all(&self) {
        assert_eq!(self.map.len(), self.reference.len(), "{}: len", self.what);
        assert_eq!(self.map.is_empty(), self.reference.is_empty());
        let got: Vec<(K::Ref, u64)> = self
            .map
            .range(..)
            .map(|(k, v)| (k.reference(), *v))
            .collect();
        let want: Vec<(K::Ref, u64)> = self
            .reference
            .values()
            .map(|e| (e.0.reference(), e.1))
            .collect();
        assert_eq!(got, want, "{}: full scan", self.what);
        assert!(self.map.size_in_bytes() >= self.map.len() * (K::SIZE + 8));
    }
}

/// Runs the seeded suite twice: as `name` on maps bulk-loaded by `bulk`, and as
/// `{name}-inserted` on maps built by inserting the pairs one at a time into `empty()`.
pub fn run_bulk_and_inserted<K: MapKey, M: OrderedMap<K, u64>>(
    name: &str,
    bulk: impl Fn(Vec<(K, u64)>) -> lidx::Result<M>,
    empty: impl Fn() -> lidx::Result<M>,
) {
    run_map_suite::<K, _>(name, bulk);
    run_map_suite::<K, _>(&format!("{name}-inserted"), |pairs| {
        let mut t = empty()?;
        for (k, v) in pairs {
            t.insert(k, v)?;
        }
        Ok(t)
    });
}

pub fn seeds_with_extremes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
    let mut seeds: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    seeds.extend([0, 1, u64::MAX - 1, u64::MAX]);
    seeds
}

/// Runs the seeded suite for key type `K` on maps built by `build` from sorted unique pairs.
pub fn run_map_suite<K: MapKey, M: OrderedMap<K, u64>>(
    name: &str,
    build: impl Fn(Vec<(K, u64)>) -> lidx::Result<M>,
) {
    for (case, n) in [
        ("empty", 0usize),
        ("one", 1),
        ("small", 60),
        ("large", 3000),
    ] {
        let mut rng = ChaCha8Rng::seed_from_u64(0x3a9 + n as u64);
        let mut seeds = seeds_with_extremes(&mut rng, n);
        if n <= 1 {
            seeds.truncate(n);
        }
        let mut keys: Vec<K> = seeds.into_iter().map(K::from_seed).collect();
        keys.sort_by(|a, b| a.key_cmp(b));
        keys.dedup_by(|a, b| a.key_cmp(b).is_eq());
        let pairs: Vec<(K, u64)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, i as u64))
            .collect();
        let mut c = Checked {
            map: build(pairs.clone()).expect("bulk load"),
            reference: pairs
                .iter()
                .map(|&(k, v)| (k.reference(), (k, v)))
                .collect(),
            what: format!("{name}/{}/{case}", K::NAME),
        };
        c.check_all();
        let probes = seeds_with_extremes(&mut rng, 200);
        for &p in &probes {
            let k = K::from_seed(p);
            c.get(k);
            c.lower_bound(k);
        }
        for &k in &keys {
            c.get(k);
            c.lower_bound(k);
        }
        let ops = 4 * n + 200;
        for step in 0..ops {
            let k = if !keys.is_empty() && rng.gen_bool(0.5) {
                keys[rng.gen_range(0..keys.len())]
            } else {
                K::from_seed(probes[rng.gen_range(0..probes.len())] ^ rng.gen_range(0..4))
            };
            match rng.gen_range(0..10) {
                0..=3 => c.insert(k, step as u64),
                4..=6 => c.remove(k),
                7 => c.get(k),
                8 => c.lower_bound(k),
                _ => {
                    let other = K::from_seed(rng.gen());
                    let bound = |k: K, which: u8| match which {
                        0 => Bound::Included(k),
                        1 => Bound::Excluded(k),
                        _ => Bound::Unbounded,
                    };
                    c.range(
                        bound(k, rng.gen_range(0..3)),
                        bound(other, rng.gen_range(0..3)),
                        50,
                    );
                    c.range(Bound::Included(k), Bound::Excluded(other), 50);
                }
            }
            if step % 500 == 0 {
                c.check_all();
            }
        }
        c.check_all();
        let all: Vec<K> = c.reference.values().map(|e| e.0).collect();
        for k in all {
            c.remove(k);
        }
        c.check_all();
        for (i, &k) in keys.iter().enumerate().rev() {
            c.insert(k, i as u64);
        }
        c.check_all();
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    Insert(u16, u64),
    Remove(u16),
    Get(u16),
    LowerBound(u16),
    Range(u16, u16),
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u16>(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => any::<u16>().prop_map(Op::Remove),
        1 => any::<u16>().prop_map(Op::Get),
        1 => any::<u16>().prop_map(Op::LowerBound),
        1 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Op::Range(a, b)),
    ]
}

/// Applies `op` to the map under test and to the reference, checking that they agree (and that
/// inclusive ranges agree too when `inclusive`).
pub fn apply<M: OrderedMap<u64, u64>>(
    t: &mut M,
    reference: &mut BTreeMap<u64, u64>,
    key: &impl Fn(u16) -> u64,
    op: Op,
    inclusive: bool,
) -> Result<(), TestCaseError> {
    match op {
        Op::Insert(k, v) => {
            prop_assert_eq!(t.insert(key(k), v).unwrap(), reference.insert(key(k), v))
        }
        Op::Remove(k) => prop_assert_eq!(t.remove(&key(k)), reference.remove(&key(k))),
        Op::Get(k) => prop_assert_eq!(t.get(&key(k)), reference.get(&key(k))),
        Op::LowerBound(k) => {
            prop_assert_eq!(t.lower_bound(&key(k)), reference.range(key(k)..).next())
        }
        Op::Range(a, b) => {
            let (a, b) = (key(a.min(b)), key(a.max(b)));
            prop_assert!(t.range(a..b).eq(reference.range(a..b)));
            if inclusive {
                prop_assert!(t.range(a..=b).eq(reference.range(a..=b)));
            }
        }
    }
    prop_assert_eq!(t.len(), reference.len());
    Ok(())
}

/// Checks that `M`'s bulk load refuses a descent, a repeated key and a NaN with typed errors.
pub fn check_bulk_refusals<M: BulkLoad<u64, u64>, F: BulkLoad<f64, u64>>(
    params: &M::Params,
    float_params: &F::Params,
) {
    assert!(matches!(
        M::load_sorted(vec![(1, 0), (3, 0), (2, 0)], params),
        Err(lidx::Error::OutOfOrder { index: 2, .. })
    ));
    assert!(matches!(
        M::load_sorted(vec![(1, 0), (1, 0)], params),
        Err(lidx::Error::DuplicateKey { index: 1, .. })
    ));
    assert!(matches!(
        F::load_sorted(vec![(1.0, 0), (f64::NAN, 0)], float_params),
        Err(lidx::Error::InvalidKey { index: 1, .. })
    ));
}
