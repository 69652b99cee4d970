//! Paper 001 §IV-A's first design dimension, the approximation algorithm (`lidx dims approx`):
//! LSA, Opt-PLA and LSA-gap on the same keys, each at several settings: leaf count, average and
//! maximum error, and the time of the lookup inside a leaf against the average error (Fig.
//! 17a-b).
//!
//! - **LSA** (XIndex): fixed partitions of `size` keys, a least-squares line each
//!   ([`lidx::model::lsa`]); no error bound, so the leaf search gallops from the prediction.
//! - **Opt-PLA** (PGM): [`lidx::model::optimal_pla`] with maximum error `eps`; the leaf search is a
//!   binary search of the `2 eps + 2` window around the prediction.
//! - **LSA-gap** (ALEX): the LSA partitions, each laid out in a gapped array of `size /
//!   density` slots: the line is scaled to the slots, every key goes to its predicted slot or
//!   the first free one after it (keeping room for the keys after it), and gaps repeat the next
//!   key, as ALEX's data nodes do; the leaf search gallops from the predicted slot. The error
//!   is the distance from the prediction to the slot the key got.
//!
//! What is timed: the search inside the leaf only (the leaf of each query is found before the
//! clock starts, so the structure above the leaves is not in it: that is §IV-B's dimension),
//! over uniform queries of present keys, a tight loop whose answers are folded and checked to
//! be the key's position; `lookup_ns` is the median of `runs` loops. Errors are measured over
//! every key. Where the paper is silent: ALEX's initial density is 0.7 (its default), used
//! here; the paper does not say which partition sizes or eps it swept, so both take powers of
//! two.

use std::hint::black_box;
use std::time::Instant;

use lidx::model::lsa;
use lidx::model::optimal_pla;
use lidx::model::Segment;
use lidx::search::{branchless_binary, exponential};
use lidx::Key;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::records::ApproxRecord;
use crate::report::Machine;
use crate::runner::{check_positive, median, Progress};

/// ALEX's initial data-node density: keys per slot of a gapped array.
pub const GAP_DENSITY: f64 = 0.7;

/// The leaves of one algorithm at one setting, ready to search.
struct Leaves {
    segments: Vec<Segment>,
    /// First position of each leaf (and one past the last), in keys or in slots.
    starts: Vec<usize>,
    /// The array searched: the keys, or the gapped arrays back to back.
    array: Vec<u64>,
    /// Each key's position in `array`.
    position: Vec<usize>,
    /// The maximum error for a bounded window (`opt-pla`), none for a gallop.
    window: Option<usize>,
    /// Per leaf, the factor from rank offsets to slots (1 without gaps).
    scale: Vec<f64>,
    errors: (f64, u64),
}

impl Leaves {
    /// The predicted position of `key` in leaf `leaf`.
    #[inline]
    fn predict(&self, leaf: usize, key: u64) -> usize {
        let s = &self.segments[leaf];
        let offset = (s.model.predict(key) - s.first_rank as f64) * self.scale[leaf];
        let (lo, hi) = (self.starts[leaf], self.starts[leaf + 1]);
        (lo as f64 + offset.max(0.0)).min((hi - 1) as f64) as usize
    }

    #[inline]
    fn lookup(&self, leaf: usize, key: u64) -> usize {
        let (lo, hi) = (self.starts[leaf], self.starts[leaf + 1]);
        let p = self.predict(leaf, key);
        match self.window {
            Some(eps) => {
                let (a, b) = (p.saturating_sub(eps + 1).max(lo), (p + eps + 2).min(hi));
                a + branchless_binary(&self.array[a..b], key)
            }
            None => lo + exponential(&self.array[lo..hi], key, p - lo),
        }
    }
}

/// Builds leaves over sorted distinct `keys` from `segments` (each predicting ranks); with
/// `density`, lays each leaf out as a gapped array.
fn leaves(
    keys: &[u64],
    segments: Vec<Segment>,
    window: Option<usize>,
    density: Option<f64>,
) -> Leaves {
    let mut starts = Vec::with_capacity(segments.len() + 1);
    let mut array = Vec::with_capacity(keys.len());
    let mut position = Vec::with_capacity(keys.len());
    let mut scale = Vec::with_capacity(segments.len());
    let (mut sum, mut max) = (0.0f64, 0u64);
    for (i, s) in segments.iter().enumerate() {
        let (first, end) = (
            s.first_rank,
            segments.get(i + 1).map_or(keys.len(), |n| n.first_rank),
        );
        let m = end - first;
        let slots = density.map_or(m, |d| ((m as f64 / d).ceil() as usize).max(m));
        let factor = slots as f64 / m.max(1) as f64;
        let lo = array.len();
        starts.push(lo);
        scale.push(factor);
        array.resize(lo + slots, u64::MAX);
        let mut next_free = 0;
        for (j, &key) in keys[first..end].iter().enumerate() {
            let pred = (s.model.predict(key) - first as f64) * factor;
            let slot = if density.is_some() {
                (pred.round().max(0.0) as usize)
                    .max(next_free)
                    .min(slots - (m - j))
            } else {
                j
            };
            next_free = slot + 1;
            array[lo + slot] = key;
            position.push(lo + slot);
            let err = (pred - slot as f64).abs();
            sum += err;
            max = max.max(err.ceil() as u64);
        }
        // Gaps repeat the next key, so a search lands on the key's own slot or a copy before it.
        let mut next = u64::MAX;
        for slot in (lo..lo + slots).rev() {
            if position_holds(&position, lo, slot) {
                next = array[slot];
            } else {
                array[slot] = next;
            }
        }
    }
    starts.push(array.len());
    Leaves {
        segments,
        starts,
        array,
        position,
        window,
        scale,
        errors: (sum / keys.len().max(1) as f64, max),
    }
}

/// True when `slot` holds a key (not a gap): the positions of one leaf are increasing, so a
/// binary search over those at or after the leaf's start finds it.
fn position_holds(position: &[usize], lo: usize, slot: usize) -> bool {
    let from = position.partition_point(|&p| p < lo);
    position[from..].binary_search(&slot).is_ok()
}

/// Runs every algorithm at every setting on `dataset`.
pub fn run(
    dataset: &Dataset,
    sizes: &[usize],
    eps: &[usize],
    queries: usize,
    runs: usize,
    seed: u64,
    progress: &mut dyn Progress,
) -> Result<Vec<ApproxRecord>> {
    check_positive(&[("query count", queries), ("run count", runs)])?;
    let mut keys = dataset.keys.clone();
    keys.dedup();
    if keys.is_empty() {
        return Err(BenchError::NoKeys {
            workload: "dims approx".to_string(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let picks: Vec<usize> = (0..queries).map(|_| rng.gen_range(0..keys.len())).collect();
    let cpu = Machine::detect().cpu;
    let mut cases: Vec<(&str, usize)> = Vec::new();
    cases.extend(sizes.iter().map(|&s| ("lsa", s)));
    cases.extend(eps.iter().map(|&e| ("opt-pla", e)));
    cases.extend(sizes.iter().map(|&s| ("lsa-gap", s)));
    let mut records = Vec::with_capacity(cases.len());
    progress.begin("approximation algorithms", cases.len() as u64);
    for (algorithm, param) in cases {
        let built = match algorithm {
            "opt-pla" => leaves(&keys, optimal_pla(&keys, param)?, Some(param), None),
            _ => {
                let segments = lsa(&keys, param)?.into_iter().map(|s| s.segment).collect();
                let density = (algorithm == "lsa-gap").then_some(GAP_DENSITY);
                leaves(&keys, segments, None, density)
            }
        };
        records.push(measure(
            dataset, &keys, &picks, &built, algorithm, param, runs, &cpu,
        )?);
        progress.advance(1);
    }
    progress.end();
    Ok(records)
}

#[allow(clippy::too_many_arguments)]
fn measure(
    dataset: &Dataset,
    keys: &[u64],
    picks: &[usize],
    leaves: &Leaves,
    algorithm: &str,
    param: usize,
    runs: usize,
    cpu: &str,
) -> Result<ApproxRecord> {
    let leaf_of = |rank: usize| leaves.segments.partition_point(|s| s.first_rank <= rank) - 1;
    let queries: Vec<(usize, u64)> = picks.iter().map(|&r| (leaf_of(r), keys[r])).collect();
    for (&r, &(leaf, key)) in picks.iter().zip(&queries) {
        let got = leaves.lookup(leaf, key);
        if leaves.array[got] != key || got > leaves.position[r] {
            return Err(BenchError::WrongAnswer {
                index: format!("{algorithm}:{param}"),
                key,
                expected: leaves.position[r],
                got,
            });
        }
    }
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let mut folded = 0usize;
            for &(leaf, key) in &queries {
                folded = folded.wrapping_add(leaves.lookup(black_box(leaf), black_box(key)));
            }
            black_box(folded);
            start.elapsed().as_nanos() as f64 / queries.len() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let gap_slots = leaves.array.len() - keys.len();
    Ok(ApproxRecord {
        schema: crate::records::RecordKind::Approx.schema(),
        command: crate::records::command_line(),
        dataset: dataset.name.clone(),
        n: keys.len() as u64,
        algorithm: algorithm.to_string(),
        param: param as u64,
        leaves: leaves.segments.len() as u64,
        avg_error: leaves.errors.0,
        max_error: leaves.errors.1,
        lookup_ns: median(&times),
        bytes: (leaves.segments.len() * Segment::BYTES + gap_slots * u64::SIZE) as u64,
        queries: queries.len() as u64,
        runs: runs as u64,
        cpu: cpu.to_string(),
    })
}
