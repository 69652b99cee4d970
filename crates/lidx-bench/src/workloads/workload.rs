//! Workloads: the seeded, reproducible query streams a benchmark runs.
//!
//! Today there is one kind, **lookup-only** over keys that exist in the dataset, with the key
//! chosen one of two ways:
//!
//! * `uniform`: every position of the sorted keys is equally likely (so a duplicated key is
//!   chosen as often as it occurs), as in SOSD's lookup workloads.
//! * `zipf`: YCSB's *scrambled zipfian* (Cooper et al., "Benchmarking Cloud Serving Systems
//!   with YCSB", §4.1, and YCSB's `ScrambledZipfianGenerator`): a rank `r` is drawn from a
//!   zipfian distribution with constant `theta = 0.99` by the method of Gray et al. ("Quickly
//!   Generating Billion-Record Synthetic Databases", §4), then scrambled by a 64-bit FNV-1a hash
//!   so that the popular items are spread over the key space instead of clustering at the
//!   smallest keys; the chosen key is `keys[fnv(r) % n]`.
//!
//! What we do differently from YCSB: YCSB draws ranks over a fixed item space of ten billion
//! (with a precomputed zeta constant) and reduces the hash modulo the record count. We draw
//! ranks over exactly the `n` keys, computing `zeta(n, theta)` with a short exact sum plus an
//! Euler–Maclaurin tail (accurate to about 1e-12 relative, O(1) beyond the first 4096 terms), so
//! the skew does not depend on an arbitrary constant. Like YCSB, two ranks may hash to the same
//! position; the distribution stays zipf-like with the hottest keys scattered.
//!
//! Spec strings: `lookup` (= `lookup:uniform`), `lookup:uniform`, `lookup:zipf`.
//!
//! Adding a workload (scans, inserts, YCSB A–F come later): add a variant to [`Workload`], its
//! spelling to [`Workload::parse`] and [`Workload::label`], and a generator function called from
//! [`Workload::generate`]. The same `seed` always produces the same queries.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{BenchError, Result};

/// The accepted workload spellings, for error messages and help text.
pub const WORKLOAD_FORMS: &str = "lookup, lookup:uniform or lookup:zipf";

/// YCSB's zipfian constant.
pub const YCSB_ZIPF_THETA: f64 = 0.99;

/// How a lookup workload chooses its keys among the existing ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyChoice {
    /// Every position equally likely.
    Uniform,
    /// YCSB's scrambled zipfian over ranks with constant `theta` (YCSB uses 0.99; larger is
    /// more skewed, must be in `(0, 1)`).
    Zipf {
        /// The zipfian constant.
        theta: f64,
    },
}

/// A workload: what operations a run issues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// Point lookups of keys present in the dataset (a static index's `lower_bound`, a map's
    /// `get`).
    Lookup(KeyChoice),
}

impl Default for Workload {
    fn default() -> Self {
        Workload::Lookup(KeyChoice::Uniform)
    }
}

impl Workload {
    /// Parses `lookup`, `lookup:uniform` or `lookup:zipf`.
    pub fn parse(spec: &str) -> Result<Self> {
        let bad = || BenchError::BadSpec {
            what: "workload",
            got: spec.to_string(),
            expected: WORKLOAD_FORMS.to_string(),
        };
        match spec.trim() {
            "lookup" | "lookup:uniform" => Ok(Workload::Lookup(KeyChoice::Uniform)),
            "lookup:zipf" => Ok(Workload::Lookup(KeyChoice::Zipf {
                theta: YCSB_ZIPF_THETA,
            })),
            _ => Err(bad()),
        }
    }

    /// The canonical spelling, for reports.
    pub fn label(&self) -> String {
        match self {
            Workload::Lookup(KeyChoice::Uniform) => "lookup:uniform".to_string(),
            Workload::Lookup(KeyChoice::Zipf { theta }) if *theta == YCSB_ZIPF_THETA => {
                "lookup:zipf".to_string()
            }
            Workload::Lookup(KeyChoice::Zipf { theta }) => format!("lookup:zipf:theta={theta}"),
        }
    }

    /// `count` lookup keys drawn from `keys` (sorted, the dataset) with `seed`.
    /// Fails with [`BenchError::NoKeys`] when `keys` is empty and `count > 0`.
    pub fn generate(&self, keys: &[u64], count: usize, seed: u64) -> Result<Vec<u64>> {
        if keys.is_empty() && count > 0 {
            return Err(BenchError::NoKeys {
                workload: self.label(),
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Ok(match *self {
            Workload::Lookup(KeyChoice::Uniform) => uniform_lookups(keys, count, &mut rng),
            Workload::Lookup(KeyChoice::Zipf { theta }) => {
                zipf_lookups(keys, count, theta, &mut rng)
            }
        })
    }
}

fn uniform_lookups(keys: &[u64], count: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
    (0..count)
        .map(|_| keys[rng.gen_range(0..keys.len())])
        .collect()
}

fn zipf_lookups(keys: &[u64], count: usize, theta: f64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let zipf = Zipfian::new(keys.len() as u64, theta);
    (0..count)
        .map(|_| {
            let rank = zipf.sample(rng);
            keys[(fnv1a64(rank) % keys.len() as u64) as usize]
        })
        .collect()
}

/// Gray et al.'s zipfian generator over ranks `0..n` (rank 0 most popular), the method YCSB's
/// `ZipfianGenerator` uses.
#[derive(Debug, Clone, Copy)]
pub struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zeta_n: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl Zipfian {
    /// A generator over `n >= 1` ranks with constant `theta` in `(0, 1)`.
    pub fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1);
        let zeta_n = zeta(n, theta);
        let zeta_2 = zeta(2, theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
        Zipfian {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta_n,
            eta,
            half_pow_theta: 0.5f64.powf(theta),
        }
    }

    /// One rank in `0..n`.
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.gen();
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta {
            return 1.min(self.n - 1);
        }
        let rank = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n - 1)
    }

    /// The constant this generator was built with.
    pub fn theta(&self) -> f64 {
        self.theta
    }
}

/// `zeta(n, theta) = sum_{i=1..n} i^-theta`: exact for the first terms, then the
/// Euler–Maclaurin formula for the tail (the next correction term is below 1e-15 at i = 4096).
fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 4096;
    let head: f64 = (1..=n.min(EXACT)).map(|i| (i as f64).powf(-theta)).sum();
    if n <= EXACT {
        return head;
    }
    // Tail sum_{i=a..b} f(i) with f(x) = x^-theta, a = EXACT + 1, b = n.
    let (a, b) = ((EXACT + 1) as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    head + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// 64-bit FNV-1a over the little-endian bytes of `x`: the scrambling hash.
#[inline]
pub fn fnv1a64(x: u64) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    x.to_le_bytes()
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeta_tail_matches_the_exact_sum() {
        for n in [4097u64, 10_000, 123_457] {
            let exact: f64 = (1..=n).map(|i| (i as f64).powf(-0.99)).sum();
            let approx = zeta(n, 0.99);
            assert!(
                ((exact - approx) / exact).abs() < 1e-10,
                "n={n}: {exact} vs {approx}"
            );
        }
    }

    #[test]
    fn zipfian_ranks_stay_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [1u64, 2, 3, 100] {
            let z = Zipfian::new(n, 0.99);
            for _ in 0..1000 {
                assert!(z.sample(&mut rng) < n);
            }
        }
    }
}
