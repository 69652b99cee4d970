//! The shared conformance suite for static indexes: every index x key type x dataset is checked
//! against `slice::partition_point` on the same seeded data, present and absent keys alike.
//!
//! Use the [`static_suite!`] macro from a test file:
//!
//! ```ignore
//! static_suite!(pgm_eps_16, |keys| Pgm::build(keys, PgmParams::new(16, 4)), Some(2 * 16 + 2));
//! ```
//!
//! which writes one `#[test]` per key type. `max_width` bounds every window for key types whose
//! model map is injective (strings may legitimately exceed it, see `lidx::key`).
#![allow(dead_code)]

use lidx::{Key, StaticIndex, Str16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A key type the suite can generate: an order-preserving map from `u64` seeds.
pub trait TestKey: Key + PartialEq {
    /// Non-decreasing in `v`; covers the type's extremes at `0` and `u64::MAX`.
    fn from_seed(v: u64) -> Self;
}

impl TestKey for u64 {
    fn from_seed(v: u64) -> Self {
        v
    }
}

impl TestKey for u32 {
    fn from_seed(v: u64) -> Self {
        (v >> 32) as u32
    }
}

impl TestKey for i64 {
    fn from_seed(v: u64) -> Self {
        (v ^ (1 << 63)) as i64
    }
}

impl TestKey for f64 {
    /// Inverts `Key::to_model` on the non-NaN range, clamping into `[-inf, +inf]`.
    fn from_seed(v: u64) -> Self {
        let lowest = (f64::NEG_INFINITY).to_model();
        let highest = f64::INFINITY.to_model();
        let m = v.clamp(lowest, highest);
        let bits = if m >> 63 == 1 { m ^ (1 << 63) } else { !m };
        f64::from_bits(bits)
    }
}

impl TestKey for Str16 {
    /// The first 8 bytes carry only the top 24 bits of the seed, so strings often share a
    /// model value: this exercises the non-injective window widening.
    fn from_seed(v: u64) -> Self {
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&(v >> 40).to_be_bytes());
        s[8..].copy_from_slice(&v.to_be_bytes());
        s
    }
}

fn sorted_keys<K: TestKey>(seeds: impl IntoIterator<Item = u64>) -> Vec<K> {
    let mut keys: Vec<K> = seeds.into_iter().map(K::from_seed).collect();
    keys.sort_by(|a, b| a.key_cmp(b));
    keys
}

/// The named datasets every index is run on (seeded, a few thousand keys each).
pub fn datasets<K: TestKey>() -> Vec<(&'static str, Vec<K>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x11d7);
    let n = 5_000u64;
    let sets: Vec<(&'static str, Vec<K>)> = vec![
        ("empty", vec![]),
        ("one-zero", sorted_keys([0])),
        ("one-max", sorted_keys([u64::MAX])),
        ("one-middle", sorted_keys([1 << 40])),
        ("all-equal", sorted_keys(std::iter::repeat_n(1 << 50, 1000))),
        ("zero-and-max", sorted_keys([0, u64::MAX])),
        (
            "extremes-with-duplicates",
            sorted_keys([0, 0, 0, 1, 2, u64::MAX - 1, u64::MAX, u64::MAX, u64::MAX]),
        ),
        ("dense", sorted_keys(0..n)),
        ("dense-high", sorted_keys((0..n).map(|i| u64::MAX - i))),
        ("sparse", sorted_keys((0..n).map(|_| rng.gen::<u64>()))),
        (
            "lognormal-like",
            sorted_keys((0..n).map(|_| {
                let z: f64 = (0..4).map(|_| rng.gen::<f64>()).sum::<f64>() - 2.0;
                (z * 4.0).exp2().mul_add(1e12, 0.0) as u64
            })),
        ),
        (
            "duplicate-runs",
            sorted_keys((0..n).map(|i| (i / 37) * 1_000_003 + (i % 3) * ((i / 37) % 2))),
        ),
        (
            "steps",
            sorted_keys((0..n).map(|i| (i / 500) << 48 | (i % 500))),
        ),
        (
            "random-with-duplicates",
            sorted_keys((0..n).map(|_| rng.gen_range(0..n / 4) << 44)),
        ),
    ];
    sets
}

/// Probe keys for `keys`: every key, every key's seed neighbours, gaps, extremes, randoms.
pub fn probes<K: TestKey>(seeds_rng: u64, keys: &[K]) -> Vec<K> {
    let mut rng = ChaCha8Rng::seed_from_u64(seeds_rng);
    let mut out: Vec<K> = keys.to_vec();
    out.push(K::MIN);
    out.push(K::MAX);
    out.extend([0, 1, u64::MAX - 1, u64::MAX].map(K::from_seed));
    out.extend((0..500).map(|_| K::from_seed(rng.gen())));
    // Neighbours in model space become neighbours in key space for injective types.
    for k in keys.iter().step_by(3) {
        let m = k.to_model();
        out.push(K::from_seed(m.wrapping_add(1)));
        out.push(K::from_seed(m.wrapping_sub(1)));
    }
    out
}

/// Checks the window contract and the exact lower bound of `index` on every probe.
pub fn check_static_index<K: TestKey, I: StaticIndex<K>>(
    what: &str,
    keys: &[K],
    index: &I,
    max_width: Option<usize>,
) {
    assert_eq!(index.len(), keys.len(), "{what}: len");
    for probe in probes(keys.len() as u64, keys) {
        let truth = keys.partition_point(|k| k.key_lt(&probe));
        let w = index.search(probe);
        assert!(
            w.lo <= truth && truth <= w.hi && w.hi <= keys.len(),
            "{what}: probe {probe:?}: window {w:?} misses lower bound {truth} (len {})",
            keys.len()
        );
        assert!(
            w.lo <= w.pos && w.pos <= w.hi,
            "{what}: probe {probe:?}: pos outside window {w:?}"
        );
        if let (Some(max), true) = (max_width, K::MODEL_INJECTIVE) {
            assert!(
                w.width() <= max,
                "{what}: probe {probe:?}: window {w:?} wider than {max}"
            );
        }
        assert_eq!(index.lower_bound(keys, probe), truth, "{what}: {probe:?}");
    }
}

/// Runs `build` on every dataset of [`datasets`] and checks each index, then checks that
/// unsorted input is refused with `OutOfOrder`.
pub fn run_static_suite<K: TestKey, I: StaticIndex<K>>(
    name: &str,
    build: impl Fn(&[K]) -> lidx::Result<I>,
    max_width: Option<usize>,
) {
    for (set, keys) in datasets::<K>() {
        let what = format!("{name}/{}/{set}", K::NAME);
        let index = build(&keys).unwrap_or_else(|e| panic!("{what}: build failed: {e}"));
        check_static_index(&what, &keys, &index, max_width);
    }
    let unsorted: Vec<K> = [5u64 << 58, 9 << 58, 1 << 58]
        .into_iter()
        .map(K::from_seed)
        .collect();
    match build(&unsorted) {
        Err(lidx::Error::OutOfOrder { index: 2, .. }) => {}
        Err(e) => panic!("{name}/{}: unsorted input gave {e}", K::NAME),
        Ok(_) => panic!("{name}/{}: unsorted input was accepted", K::NAME),
    }
}

/// Writes one `#[test]` per key type running [`run_static_suite`].
#[macro_export]
macro_rules! static_suite {
    ($name:ident, $build:expr, $max_width:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn u64_keys() {
                $crate::common::run_static_suite::<u64, _>(stringify!($name), $build, $max_width);
            }
            #[test]
            fn u32_keys() {
                $crate::common::run_static_suite::<u32, _>(stringify!($name), $build, $max_width);
            }
            #[test]
            fn i64_keys() {
                $crate::common::run_static_suite::<i64, _>(stringify!($name), $build, $max_width);
            }
            #[test]
            fn f64_keys() {
                $crate::common::run_static_suite::<f64, _>(stringify!($name), $build, $max_width);
            }
            #[test]
            fn str16_keys() {
                $crate::common::run_static_suite::<lidx::Str16, _>(
                    stringify!($name),
                    $build,
                    $max_width,
                );
            }
        }
    };
}
