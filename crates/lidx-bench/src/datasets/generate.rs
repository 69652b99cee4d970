//! Seeded synthetic key generators: sorted `u64` keys, each named as `--dataset gen:<name>:<count>`
//! takes it (the table below; GRE's hardness generator is `gre.rs`).
//!
//! Every generator draws from `ChaCha8Rng::seed_from_u64(seed)`, so the same name, count and
//! seed always give the same keys, on every platform. Keys are returned sorted ascending.
//! Duplicates are kept when the distribution produces them (they are part of the data's
//! difficulty, as in SOSD's real datasets); each generator says below whether they occur.
//!
//! | name             | keys                                                                   | duplicates |
//! |------------------|------------------------------------------------------------------------|------------|
//! | `uniform-dense`  | `offset + 0..n`, `offset` uniform in `[0, 2^32)`: no gaps at all        | never      |
//! | `uniform-sparse` | uniform over the whole `u64` range                                      | essentially never (about `n^2 / 2^65` expected) |
//! | `normal`         | `2^63 + z * 2^59`, `z ~ N(0, 1)`, saturated into `u64`                  | essentially never |
//! | `lognormal`      | `trunc(x * 1e9)`, `x ~ lognormal(mu = 0, sigma = 2)` (SOSD's recipe)    | a few, among the smallest keys |
//! | `zipf-gaps`      | running sum of gaps `g ~ Zipf(n = 2^20, s = 1.5)`, `g >= 1`, from a uniform start in `[0, 2^32)` | never |
//! | `cells`          | geographic-like cell ids: `max(n / 1000, 16)` clusters at uniform centres, each key in cluster `Zipf(s = 1.1)`-chosen, at `centre + z * 2^w` (`z ~ N(0, 1)`, `w` uniform in `[20, 40)` per cluster), lowest bit set | rarely, inside the tightest clusters |
//!
//! The normal's scale puts 16 standard deviations on either side of the middle of the range, so
//! saturation is practically never hit. The lognormal follows SOSD's synthetic dataset (a
//! lognormal with sigma 2, multiplied by 10^9 and truncated to an integer); its heavy right
//! tail is what makes it hard for linear models (paper 000 §6.6). Zipf gaps make most
//! neighbours close and a few very far apart, at every scale.
//!
//! `cells` stands in for real geographic keys such as SOSD's S2 cell ids of OpenStreetMap
//! points (`osm_cellids`), which are not shipped with lidx: points cluster in cities of very
//! different sizes and spreads, and a leaf cell id (level 30, lowest bit set) numbers them
//! along a space-filling curve, so the keys come as many tight clusters of heavy-tailed sizes
//! separated by large empty gaps. A cluster's spread of `2^20` to `2^40` ids is, at level 30, a
//! square of roughly 30 m to 30 km on a side. It is a shape, not a copy of any map: issue 35
//! uses it to check that an index's speed on real-like keys is not an artefact of smooth
//! synthetic ones.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal, StandardNormal, Zipf};

use crate::error::{BenchError, Result};

/// A named key generator. See the module docs for the distributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// `offset + 0..n`.
    UniformDense,
    /// Uniform over all of `u64`.
    UniformSparse,
    /// Normal around `2^63`.
    Normal,
    /// SOSD's lognormal(0, 2) times 10^9.
    Lognormal,
    /// Zipf-distributed gaps between consecutive keys.
    ZipfGaps,
    /// Geographic-like cell ids: tight clusters of heavy-tailed sizes, large gaps.
    Cells,
}

impl Generator {
    /// Every generator, in the order of the module docs.
    pub const ALL: [Generator; 6] = [
        Generator::UniformDense,
        Generator::UniformSparse,
        Generator::Normal,
        Generator::Lognormal,
        Generator::ZipfGaps,
        Generator::Cells,
    ];

    /// The generator's name, as [`Generator::parse`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            Generator::UniformDense => "uniform-dense",
            Generator::UniformSparse => "uniform-sparse",
            Generator::Normal => "normal",
            Generator::Lognormal => "lognormal",
            Generator::ZipfGaps => "zipf-gaps",
            Generator::Cells => "cells",
        }
    }

    /// The generator called `name`, or [`BenchError::BadSpec`].
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or_else(|| BenchError::BadSpec {
                what: "generator",
                got: name.to_string(),
                expected:
                    "one of uniform-dense, uniform-sparse, normal, lognormal, zipf-gaps, cells"
                        .into(),
            })
    }

    /// `n` sorted keys drawn with `seed`.
    pub fn generate(self, n: usize, seed: u64) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut keys: Vec<u64> = match self {
            Generator::UniformDense => {
                let offset = rng.gen_range(0..1u64 << 32);
                return (0..n as u64).map(|i| offset + i).collect();
            }
            Generator::UniformSparse => (0..n).map(|_| rng.gen()).collect(),
            Generator::Normal => (0..n)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    // `as` saturates out-of-range values at the ends of the range.
                    let offset = (z * (1u64 << 59) as f64) as i64;
                    (1u64 << 63).wrapping_add_signed(offset)
                })
                .collect(),
            Generator::Lognormal => {
                let dist = LogNormal::new(0.0, 2.0).expect("constant parameters are valid");
                (0..n)
                    .map(|_| (dist.sample(&mut rng) * 1e9) as u64)
                    .collect()
            }
            Generator::ZipfGaps => {
                let dist = Zipf::new(1 << 20, 1.5).expect("constant parameters are valid");
                let mut key = rng.gen_range(0..1u64 << 32);
                return (0..n)
                    .map(|_| {
                        let k = key;
                        key = key.saturating_add(dist.sample(&mut rng) as u64);
                        k
                    })
                    .collect();
            }
            Generator::Cells => cells(n, &mut rng),
        };
        keys.sort_unstable();
        keys
    }
}

/// `n` unsorted `cells` keys (see the module docs).
fn cells(n: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let clusters = (n / 1000).max(16);
    // Centre and spread of each cluster; a cluster's rank in the Zipf draw is independent of
    // where its centre lies, so the largest cities are scattered over the key space.
    let shape: Vec<(u64, f64)> = (0..clusters)
        .map(|_| {
            let spread = (1u64 << rng.gen_range(20..40)) as f64;
            (rng.gen(), spread)
        })
        .collect();
    let rank = Zipf::new(clusters as u64, 1.1).expect("constant parameters are valid");
    (0..n)
        .map(|_| {
            let (centre, spread) = shape[rank.sample(rng) as usize - 1];
            let z: f64 = StandardNormal.sample(rng);
            centre.wrapping_add_signed((z * spread) as i64) | 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for g in Generator::ALL {
            assert_eq!(Generator::parse(g.name()).unwrap(), g);
        }
        let err = Generator::parse("gaussian").unwrap_err();
        assert!(
            matches!(&err, BenchError::BadSpec { what: "generator", got, .. } if got == "gaussian"),
            "{err}"
        );
    }

    #[test]
    fn same_seed_same_keys_other_seed_other_keys() {
        for g in Generator::ALL {
            let a = g.generate(2000, 7);
            assert_eq!(a, g.generate(2000, 7), "{}", g.name());
            assert_ne!(a, g.generate(2000, 8), "{}", g.name());
            assert_eq!(a.len(), 2000);
            assert!(
                a.windows(2).all(|w| w[0] <= w[1]),
                "{} not sorted",
                g.name()
            );
        }
        for g in Generator::ALL {
            assert!(g.generate(0, 1).is_empty());
        }
    }

    #[test]
    fn cells_are_odd_tight_clusters_with_large_gaps() {
        let keys = Generator::Cells.generate(20_000, 3);
        assert!(keys.iter().all(|k| k & 1 == 1), "leaf cell ids are odd");
        let mut gaps: Vec<u64> = keys.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        let median = gaps[gaps.len() / 2];
        let mean = (keys[keys.len() - 1] - keys[0]) / gaps.len() as u64;
        assert!(median < mean / 100, "median gap {median}, mean {mean}");
        let big = gaps.iter().filter(|&&g| g > mean).count();
        assert!(
            (8..=200).contains(&big),
            "{big} gaps wider than the mean: the cluster breaks"
        );
    }

    #[test]
    fn shapes_match_their_descriptions() {
        let dense = Generator::UniformDense.generate(1000, 3);
        assert!(dense.windows(2).all(|w| w[1] == w[0] + 1));
        let gaps = Generator::ZipfGaps.generate(10_000, 3);
        assert!(gaps.windows(2).all(|w| w[1] > w[0]));
        let ones = gaps.windows(2).filter(|w| w[1] - w[0] == 1).count();
        assert!(ones > 2_000, "gap 1 is the most frequent: {ones}");
        let normal = Generator::Normal.generate(10_000, 3);
        let median = normal[5_000];
        assert!(median.abs_diff(1 << 63) < 1 << 57, "{median}");
        let logn = Generator::Lognormal.generate(10_000, 3);
        let median = logn[5_000];
        assert!((5e8 as u64..2e9 as u64).contains(&median), "{median}");
        assert!(logn[9_999] > 100 * median, "heavy right tail");
        let sparse = Generator::UniformSparse.generate(10_000, 3);
        assert!(sparse[5_000].abs_diff(1 << 63) < 1 << 60);
    }
}
