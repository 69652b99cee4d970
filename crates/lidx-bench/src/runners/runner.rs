//! The checked benchmark runner: build each index, prove every answer right, then time it.
//!
//! For one dataset and workload, [`Bench::prepare`] draws the queries and computes every true
//! answer with `partition_point` once, outside anything timed. Then, for each index:
//!
//! 1. **Build**, timed once with the wall clock: `build_s` and keys per second.
//! 2. **Check**: every query's answer is compared with the truth; the first wrong answer fails
//!    the run with [`BenchError::WrongAnswer`] ([`BenchError::WrongGet`] for a map). The same pass records the window widths
//!    (`mean_log2_window`) and warms the caches for the timed loops. The check always runs: no
//!    figure is reported for an index that was not proven right on every query.
//! 3. **Mean**: `runs` timed loops over all queries. A loop is a tight loop of the record's
//!    operation whose answers are folded into one value passed to `std::hint::black_box`, so no
//!    call can be optimised away; the clock is read once per chunk of 65 536 lookups, never per
//!    lookup, so the mean carries no timer overhead. The lookups are independent, so this is a
//!    throughput mean: the CPU may overlap the cache misses of consecutive lookups, as in SOSD.
//!    `mean_ns` is the median of the runs' means, with the fastest and slowest run's means
//!    beside it.
//! 4. **Latency percentiles**: one more pass times every `sample_every`-th lookup (16 by
//!    default) individually with [`Instant`], subtracting the timer's own median cost measured
//!    at preparation, into an HDR histogram (3 significant digits) that gives p50, p99, p99.9.
//!    Timing only a sample keeps the extra pass short; timing every lookup in the mean loop
//!    would add the timer's cost (tens of ns) to every lookup and serialise them.
//!
//! # What a lookup is ([`BenchRecord::operation`])
//!
//! * A static index (`pgm`, `rs`, `sorted`, ...): `lower_bound`, the exact position of the
//!   first key `>=` the query: the index's window, then the last-mile search inside it.
//! * An updatable map (`alex`, `lipp`, `dpgm`, ...; [`lidx::mem::MapSpec`]): `get`, the map's
//!   own point lookup, as paper 001 §VI times it and as the C++ references' `get_payload` /
//!   `at` do. The map is bulk-loaded with each distinct key mapped to its first position, so
//!   the answer checked is the same position `lower_bound` gives (every query is a present
//!   key); a map answering `None` or another position fails the run.
//!
//! Either way the timed loop makes exactly one indirect call per lookup (through
//! `&dyn StaticIndex<u64>` or `&dyn KeyMap`, hidden behind `black_box`, about a nanosecond), so
//! the compiler cannot specialise the loop for the one structure it happens to see built, and
//! nothing else is timed: no window for a map, no adapter between the map and the loop.
//!
//! Speedups: when the `sorted` baseline ran in the same benchmark, every record gets
//! `speedup_vs_binary = baseline mean_ns / its mean_ns` ([`fill_speedups`]).
//!
//! Progress goes through the [`Progress`] trait so this crate draws nothing itself; the CLI
//! plugs in progress bars, tests use [`Silent`].

use std::hint::black_box;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use lidx::mem::{KeyMap, MapSpec};
use lidx::{Shape, StaticIndex};

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::map_index::first_positions;
use crate::records::BenchRecord;
use crate::registry::{BuildIndex, IndexSpec};
use crate::report::Machine;
use crate::runners::core::new_histogram;
use crate::workload::Workload;

/// Lookups between two clock reads (and progress updates) in a timed loop.
pub(crate) const CHUNK: usize = 1 << 16;

/// Receives progress of long steps. `total == 0` means the length is unknown (a build).
pub trait Progress {
    /// A step named `task` starts; `total` units of work follow (0 when unknown).
    fn begin(&mut self, task: &str, total: u64);
    /// `done` more units finished.
    fn advance(&mut self, done: u64);
    /// The current step finished.
    fn end(&mut self);
}

/// A [`Progress`] that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn begin(&mut self, _task: &str, _total: u64) {}
    fn advance(&mut self, _done: u64) {}
    fn end(&mut self) {}
}

/// What to run on each index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchConfig {
    /// The query stream.
    pub workload: Workload,
    /// Lookups per timed loop (at least 1).
    pub queries: usize,
    /// Timed loops; the report gives the median of their means (at least 1).
    pub runs: usize,
    /// Seed of the workload (the dataset has its own, usually the same).
    pub seed: u64,
    /// Time every `sample_every`-th lookup individually for the percentiles (at least 1).
    pub sample_every: usize,
    /// Whether the binary backs large allocations with transparent huge pages (reported only:
    /// the allocator is the binary's choice, see `lidx-cli`'s `huge_pages`).
    pub huge_pages: bool,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            workload: Workload::default(),
            queries: 1_000_000,
            runs: 3,
            seed: 42,
            sample_every: 16,
            huge_pages: false,
        }
    }
}

/// A dataset with its queries and their true answers, ready to measure indexes on.
#[derive(Debug)]
pub struct Bench<'a> {
    dataset: &'a Dataset,
    config: BenchConfig,
    queries: Vec<u64>,
    truth: Vec<usize>,
    timer_overhead_ns: u64,
    machine: Machine,
}

impl<'a> Bench<'a> {
    /// Draws the queries and computes their true lower bounds.
    pub fn prepare(
        dataset: &'a Dataset,
        config: BenchConfig,
        progress: &mut dyn Progress,
    ) -> Result<Self> {
        check_positive(&[
            ("query count", config.queries),
            ("run count", config.runs),
            ("sampling stride", config.sample_every),
        ])?;
        let keys = &dataset.keys;
        let queries = config
            .workload
            .generate(keys, config.queries, config.seed)?;
        progress.begin("true answers", queries.len() as u64);
        let mut truth = Vec::with_capacity(queries.len());
        for chunk in queries.chunks(CHUNK) {
            truth.extend(chunk.iter().map(|&q| keys.partition_point(|&k| k < q)));
            progress.advance(chunk.len() as u64);
        }
        progress.end();
        Ok(Bench {
            dataset,
            config,
            queries,
            truth,
            timer_overhead_ns: timer_overhead_ns(),
            machine: Machine::detect(),
        })
    }

    /// The queries, in the order every loop runs them.
    pub fn queries(&self) -> &[u64] {
        &self.queries
    }

    /// Runs every spec in order, with the speedups filled in ([`run`]).
    pub fn run_specs(
        &self,
        specs: &[IndexSpec],
        progress: &mut dyn Progress,
    ) -> Result<Vec<BenchRecord>> {
        let mut records = Vec::with_capacity(specs.len());
        for spec in specs {
            records.push(self.run_spec(spec, progress)?);
        }
        fill_speedups(&mut records);
        Ok(records)
    }

    /// Builds `spec` and measures it: a map's `get`, any other index's `lower_bound`.
    pub fn run_spec(&self, spec: &IndexSpec, progress: &mut dyn Progress) -> Result<BenchRecord> {
        if let IndexSpec::Map(map) = spec {
            return self.run_map(
                spec.name(),
                &spec.label(),
                &spec.params_text(),
                map,
                progress,
            );
        }
        self.run_index(
            spec.name(),
            &spec.label(),
            &spec.params_text(),
            |keys| spec.build(keys),
            progress,
        )
    }

    /// Builds an index with `build` and measures its `lower_bound`; `name`, `label` and
    /// `params` go into the record. Fails with [`BenchError::WrongAnswer`] on the first wrong
    /// lower bound.
    pub fn run_index(
        &self,
        name: &str,
        label: &str,
        params: &str,
        build: impl FnOnce(&[u64]) -> Result<Box<dyn StaticIndex<u64>>>,
        progress: &mut dyn Progress,
    ) -> Result<BenchRecord> {
        let keys = self.dataset.keys.as_slice();
        let (built, build_s) = timed_build(label, progress, || build(keys))?;
        let lookup = IndexLookup {
            index: black_box(built.as_ref()),
            keys,
        };
        self.measure(&lookup, [name, label, params], build_s, progress)
    }

    /// Bulk-loads the map `spec` with every distinct key mapped to its first position and
    /// measures its `get`. The build time is the bulk load's alone (the entries are collected
    /// before the clock starts). Fails with [`BenchError::WrongGet`] on the first query whose
    /// `get` is not its first position.
    pub fn run_map(
        &self,
        name: &str,
        label: &str,
        params: &str,
        spec: &MapSpec,
        progress: &mut dyn Progress,
    ) -> Result<BenchRecord> {
        let entries = first_positions(&self.dataset.keys)?;
        let (built, build_s) = timed_build(label, progress, || Ok(spec.build(entries)?))?;
        let lookup = MapGet {
            map: black_box(built.as_ref()),
        };
        self.measure(&lookup, [name, label, params], build_s, progress)
    }

    /// Checks, times and samples `lookup`, then writes its record.
    /// `[name, label, params]` go into the record as `run_index` takes them.
    fn measure<L: Lookup>(
        &self,
        lookup: &L,
        [name, label, params]: [&str; 3],
        build_s: f64,
        progress: &mut dyn Progress,
    ) -> Result<BenchRecord> {
        let n = self.dataset.keys.len();
        let total = (self.queries.len() * (self.config.runs + 1)) as u64;
        progress.begin(&format!("lookups {}", label), total);
        let mean_log2_window = self.check(label, lookup, progress)?;
        let mut means: Vec<f64> = (0..self.config.runs)
            .map(|_| {
                let elapsed = timed_loop(lookup, &self.queries, progress);
                elapsed.as_nanos() as f64 / self.queries.len() as f64
            })
            .collect();
        progress.end();
        means.sort_by(f64::total_cmp);
        let latency = self.sample_latencies(lookup);

        let bytes = lookup.size_in_bytes() as u64;
        let shape = lookup.shape();
        Ok(BenchRecord {
            schema: crate::records::RecordKind::Bench.schema(),
            command: crate::records::command_line(),
            dataset: self.dataset.name.clone(),
            n: n as u64,
            workload: self.config.workload.label(),
            index: name.to_string(),
            label: label.to_string(),
            params: params.to_string(),
            operation: L::OPERATION.to_string(),
            build_s,
            build_keys_per_s: if build_s > 0.0 {
                n as f64 / build_s
            } else {
                0.0
            },
            bytes,
            bytes_per_key: if n > 0 { bytes as f64 / n as f64 } else { 0.0 },
            mean_ns: median(&means),
            mean_ns_min: means[0],
            mean_ns_max: means[means.len() - 1],
            p50_ns: latency.value_at_quantile(0.5),
            p99_ns: latency.value_at_quantile(0.99),
            p999_ns: latency.value_at_quantile(0.999),
            sample_every: self.config.sample_every as u64,
            huge_pages: self.config.huge_pages,
            mean_log2_window,
            segments: shape.segments.map(|s| s as u64),
            height: shape.height.map(|h| h as u64),
            speedup_vs_binary: None,
            runs: self.config.runs as u64,
            queries: self.queries.len() as u64,
            seed: self.config.seed,
            cpu: self.machine.cpu.clone(),
            cores: self.machine.cores,
            lidx_version: env!("CARGO_PKG_VERSION").to_string(),
        })
    }

    /// Compares every answer with the truth; returns the mean log2 window width.
    fn check<L: Lookup>(
        &self,
        label: &str,
        lookup: &L,
        progress: &mut dyn Progress,
    ) -> Result<f64> {
        let mut log2_sum = 0.0;
        for (queries, truth) in self.queries.chunks(CHUNK).zip(self.truth.chunks(CHUNK)) {
            for (&key, &expected) in queries.iter().zip(truth) {
                lookup.check(label, key, expected)?;
                log2_sum += lookup.log2_window(key);
            }
            progress.advance(queries.len() as u64);
        }
        Ok(log2_sum / self.queries.len() as f64)
    }

    /// Times every `sample_every`-th lookup on its own.
    fn sample_latencies<L: Lookup>(&self, lookup: &L) -> Histogram<u64> {
        let mut histogram = new_histogram();
        for &key in self.queries.iter().step_by(self.config.sample_every) {
            let start = Instant::now();
            black_box(lookup.answer(black_box(key)));
            let ns = start.elapsed().as_nanos() as u64;
            histogram.saturating_record(ns.saturating_sub(self.timer_overhead_ns));
        }
        histogram
    }
}

/// Runs `build` once under the wall clock, with a progress step named after `label`: the
/// built structure and the build's seconds.
fn timed_build<T>(
    label: &str,
    progress: &mut dyn Progress,
    build: impl FnOnce() -> Result<T>,
) -> Result<(T, f64)> {
    progress.begin(&format!("build {label}"), 0);
    let start = Instant::now();
    let built = build();
    let build_s = start.elapsed().as_secs_f64();
    progress.end();
    Ok((built?, build_s))
}

/// The operation a record times, on the structure it was built as (see the module docs).
trait Lookup {
    /// The record's `operation`.
    const OPERATION: &'static str;

    /// The timed call, its answer folded into the loop's checksum.
    fn answer(&self, key: u64) -> usize;

    /// `Ok` when the answer to `key` is right, `expected` being its true lower bound.
    fn check(&self, label: &str, key: u64, expected: usize) -> Result<()>;

    /// `log2` of the window the answer was searched in (0 for an exact one).
    fn log2_window(&self, key: u64) -> f64;

    /// Bytes of the structure, the keys excluded.
    fn size_in_bytes(&self) -> usize;

    /// Segments and height, where the structure has them.
    fn shape(&self) -> Shape;
}

/// A static index's `lower_bound` over the keys it was built on.
struct IndexLookup<'a> {
    index: &'a dyn StaticIndex<u64>,
    keys: &'a [u64],
}

impl Lookup for IndexLookup<'_> {
    const OPERATION: &'static str = "lower_bound";

    #[inline]
    fn answer(&self, key: u64) -> usize {
        self.index.lower_bound(self.keys, key)
    }

    fn check(&self, label: &str, key: u64, expected: usize) -> Result<()> {
        let got = self.answer(key);
        if got != expected {
            return Err(BenchError::WrongAnswer {
                index: label.to_string(),
                key,
                expected,
                got,
            });
        }
        Ok(())
    }

    fn log2_window(&self, key: u64) -> f64 {
        (self.index.search(key).width().max(1) as f64).log2()
    }

    fn size_in_bytes(&self) -> usize {
        self.index.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        self.index.shape()
    }
}

/// A map's `get`, each key's value being its first position.
struct MapGet<'a> {
    map: &'a dyn KeyMap,
}

impl Lookup for MapGet<'_> {
    const OPERATION: &'static str = "get";

    #[inline]
    fn answer(&self, key: u64) -> usize {
        self.map.get(key).map_or(usize::MAX, |p| p as usize)
    }

    fn check(&self, label: &str, key: u64, expected: usize) -> Result<()> {
        let got = self.map.get(key);
        if got != Some(expected as u64) {
            return Err(BenchError::WrongGet {
                index: label.to_string(),
                key,
                expected: expected as u64,
                got,
            });
        }
        Ok(())
    }

    fn log2_window(&self, _key: u64) -> f64 {
        0.0
    }

    fn size_in_bytes(&self) -> usize {
        self.map.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape::default()
    }
}

/// One timed loop over all queries; the clock is read once per chunk.
fn timed_loop<L: Lookup>(lookup: &L, queries: &[u64], progress: &mut dyn Progress) -> Duration {
    let mut total = Duration::ZERO;
    for chunk in queries.chunks(CHUNK) {
        let start = Instant::now();
        let mut folded = 0usize;
        for &key in chunk {
            folded = folded.wrapping_add(lookup.answer(key));
        }
        black_box(folded);
        total += start.elapsed();
        progress.advance(chunk.len() as u64);
    }
    total
}

/// Refuses the first count that is 0 ([`BenchError::BadSpec`] naming it): every runner's
/// queries, runs and strides must be at least 1.
pub(crate) fn check_positive(counts: &[(&'static str, usize)]) -> Result<()> {
    match counts.iter().find(|(_, value)| *value == 0) {
        Some(&(what, _)) => Err(BenchError::BadSpec {
            what,
            got: "0".to_string(),
            expected: "a number of at least 1".to_string(),
        }),
        None => Ok(()),
    }
}

/// Median cost of reading the clock twice around nothing, in ns.
pub(crate) fn timer_overhead_ns() -> u64 {
    let mut samples: Vec<u64> = (0..1001)
        .map(|_| {
            let start = Instant::now();
            black_box(());
            start.elapsed().as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

pub(crate) fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Sets `speedup_vs_binary` on every record when a `sorted` record is among them.
pub fn fill_speedups(records: &mut [BenchRecord]) {
    let Some(baseline) = records
        .iter()
        .find(|r| r.index == "sorted")
        .map(|r| r.mean_ns)
    else {
        return;
    };
    for record in records.iter_mut() {
        record.speedup_vs_binary = (record.mean_ns > 0.0).then(|| baseline / record.mean_ns);
    }
}

/// Runs every spec on `dataset` in order. Indexes not built into this binary are skipped with
/// a note; any other failure (a wrong answer above all) stops the benchmark.
pub fn run(
    dataset: &Dataset,
    specs: &[IndexSpec],
    config: BenchConfig,
    progress: &mut dyn Progress,
) -> Result<Vec<BenchRecord>> {
    Bench::prepare(dataset, config, progress)?.run_specs(specs, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map that answers one position too far for every key.
    struct OffByOne;

    impl KeyMap for OffByOne {
        fn get(&self, key: u64) -> Option<u64> {
            Some(key + 1)
        }
        fn insert(&mut self, _: u64, _: u64) -> lidx::Result<Option<u64>> {
            Ok(None)
        }
        fn remove(&mut self, _: u64) -> Option<u64> {
            None
        }
        fn lower_bound(&self, key: u64) -> Option<(u64, u64)> {
            Some((key, key + 1))
        }
        fn scan(&self, _: u64, _: usize, _: &mut Vec<(u64, u64)>) {}
        fn len(&self) -> usize {
            1
        }
        fn size_in_bytes(&self) -> usize {
            0
        }
    }

    #[test]
    fn a_map_whose_get_is_wrong_fails_with_wrong_get() {
        let lookup = MapGet { map: &OffByOne };
        assert_eq!(lookup.answer(4), 5);
        assert!(lookup.check("liar", 4, 5).is_ok());
        match lookup.check("liar", 4, 4) {
            Err(BenchError::WrongGet {
                index,
                key: 4,
                expected: 4,
                got: Some(5),
            }) => assert_eq!(index, "liar"),
            other => panic!("expected WrongGet, got {other:?}"),
        }
        let message = lookup.check("liar", 4, 4).unwrap_err().to_string();
        assert!(message.contains("get(4)"), "{message}");
    }
}
