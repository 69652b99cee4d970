//! The random inputs of TPC-C (clauses 2.1.5-2.1.6, 4.3.2): uniform integers, NURand with its
//! C constants, a-strings and n-strings, from one seeded ChaCha generator (`rand_chacha`), so
//! a seed fixes the whole database and the whole transaction stream.
//!
//! NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (clause 2.1.6),
//! A = 255 for last names, 1023 for customer ids, 8191 for item ids. C is drawn once per run:
//! `C_LOAD` for the last names of the load, `C_RUN` for those of the transactions, with
//! `|C_RUN - C_LOAD|` in 65..=119 but neither 96 nor 112 (clause 2.1.6.1); the customer-id and
//! item-id constants are the same at load and run time (the clause allows it).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::keys::ALPHANUMERIC;

/// NURand's A for last names.
pub(crate) const A_LAST: u64 = 255;
/// NURand's A for customer ids.
pub(crate) const A_CUSTOMER: u64 = 1023;
/// NURand's A for item ids.
pub(crate) const A_ITEM: u64 = 8191;

/// The C constants of one run (clause 2.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Constants {
    /// C for last names while loading.
    pub(crate) last_load: u64,
    /// C for last names in transactions.
    pub(crate) last_run: u64,
    /// C for customer ids.
    pub(crate) customer: u64,
    /// C for item ids.
    pub(crate) item: u64,
}

impl Constants {
    /// Draws the constants, `last_run` at a delta clause 2.1.6.1 allows.
    pub(crate) fn draw(rng: &mut TpccRng) -> Constants {
        let last_load = rng.uniform(0, A_LAST);
        let delta = loop {
            let delta = rng.uniform(65, 119);
            if delta != 96 && delta != 112 {
                break delta;
            }
        };
        Constants {
            last_load,
            last_run: if last_load + delta <= A_LAST {
                last_load + delta
            } else {
                last_load - delta
            },
            customer: rng.uniform(0, A_CUSTOMER),
            item: rng.uniform(0, A_ITEM),
        }
    }
}

/// The seeded generator of every TPC-C input.
#[derive(Debug, Clone)]
pub(crate) struct TpccRng {
    rng: ChaCha8Rng,
}

impl TpccRng {
    /// A generator from `seed`; `stream` separates the load's draws from the transactions'.
    pub(crate) fn new(seed: u64, stream: u64) -> TpccRng {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        TpccRng { rng }
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.gen_range(lo..=hi)
    }

    /// Uniform in `lo..=hi`, as a `u32`.
    pub(crate) fn uniform32(&mut self, lo: u32, hi: u32) -> u32 {
        self.rng.gen_range(lo..=hi)
    }

    /// True with probability `percent` / 100.
    pub(crate) fn percent(&mut self, percent: u32) -> bool {
        self.rng.gen_range(0..100) < percent
    }

    /// NURand(A, x, y) with constant `c` (clause 2.1.6).
    pub(crate) fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// A random alphanumeric string of `lo..=hi` characters (an a-string, clause 4.3.2.2).
    pub(crate) fn a_string(&mut self, lo: usize, hi: usize) -> Vec<u8> {
        let len = self.rng.gen_range(lo..=hi);
        (0..len)
            .map(|_| ALPHANUMERIC[self.rng.gen_range(0..ALPHANUMERIC.len())])
            .collect()
    }

    /// An a-string of `lo..=hi` characters with "ORIGINAL" at a random place in 10% of the
    /// draws (I_DATA, S_DATA: clause 4.3.3.1); returns the string and whether it holds it.
    pub(crate) fn data_string(&mut self, lo: usize, hi: usize) -> (Vec<u8>, bool) {
        let mut data = self.a_string(lo, hi);
        let original = self.percent(10);
        if original {
            let at = self.rng.gen_range(0..=data.len() - 8);
            data[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
        (data, original)
    }

    /// A random permutation of `1..=n`.
    pub(crate) fn permutation(&mut self, n: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = (1..=n).collect();
        rand::seq::SliceRandom::shuffle(ids.as_mut_slice(), &mut self.rng);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NURand's exact distribution, by enumerating both uniform draws.
    fn exact(a: u64, x: u64, y: u64, c: u64) -> Vec<f64> {
        let mut counts = vec![0u64; (y - x + 1) as usize];
        for r1 in 0..=a {
            for r2 in x..=y {
                counts[((((r1 | r2) + c) % (y - x + 1)) + x - x) as usize] += 1;
            }
        }
        let total = ((a + 1) * (y - x + 1)) as f64;
        counts.iter().map(|&n| n as f64 / total).collect()
    }

    /// The draws follow clause 2.1.6's distribution: total variation distance from the exact
    /// one under 0.02 with 400,000 draws, while a uniform generator is far from it.
    #[test]
    fn nurand_follows_its_distribution() {
        let (a, x, y, c) = (A_LAST, 0, 999, 123);
        let truth = exact(a, x, y, c);
        let mut rng = TpccRng::new(7, 0);
        let n = 400_000;
        let mut seen = vec![0u64; truth.len()];
        for _ in 0..n {
            let v = rng.nurand(a, x, y, c);
            assert!((x..=y).contains(&v));
            seen[(v - x) as usize] += 1;
        }
        let distance = |p: &dyn Fn(usize) -> f64| -> f64 {
            truth
                .iter()
                .enumerate()
                .map(|(i, t)| (t - p(i)).abs())
                .sum::<f64>()
                / 2.0
        };
        let drawn = distance(&|i| seen[i] as f64 / n as f64);
        assert!(
            drawn < 0.02,
            "NURand draws are {drawn} from the distribution"
        );
        let uniform = distance(&|_| 1.0 / truth.len() as f64);
        assert!(uniform > 0.1, "the distribution is not skewed: {uniform}");
    }

    #[test]
    fn run_constant_keeps_the_allowed_delta() {
        for seed in 0..200 {
            let c = Constants::draw(&mut TpccRng::new(seed, 0));
            let delta = c.last_run.abs_diff(c.last_load);
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
            assert!(c.last_run <= A_LAST);
        }
    }
}
