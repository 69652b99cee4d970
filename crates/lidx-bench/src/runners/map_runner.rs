//! The insert benchmark of updatable maps (`lidx bench --workload insert`): paper 001 §IV-C's
//! protocol, bulk load part of the keys and insert the rest.
//!
//! For one dataset, the distinct keys are split by a seeded shuffle: half of them (sorted) are
//! bulk-loaded, each with its rank among all distinct keys as value; the other half is inserted
//! in the shuffled order. Each of `runs` runs builds the map afresh (its bulk load timed into
//! `build_s`) and times the inserts in chunks of 65 536 (the clock never read per insert);
//! `mean_ns` is the median run's mean insert time. Checks: every insert must report a new key
//! (`None`), the length must be the distinct key count after every run, and after the first run
//! every key must map to its rank and every lower bound of a key between two keys must be the
//! next one ([`BenchError::WrongAnswer`] otherwise). One more run times every `sample_every`-th
//! insert on its own for p50, p99 and p99.9. `bytes` is the map's size after all inserts.
//!
//! Which specs are maps: every [`lidx::mem::MapSpec`] row, and the static `btree` and `art`
//! entries, which are the same structures ([`IndexSpec::as_map`]). Other indexes are static and
//! refused with the list of maps.

use std::hint::black_box;
use std::time::Instant;

use lidx::mem::{KeyMap, MapSpec};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::records::BenchRecord;
use crate::registry::IndexSpec;
use crate::report::Machine;
use crate::runner::{check_positive, median, timer_overhead_ns, Progress, CHUNK};
use crate::runners::core::new_histogram;

/// The workload label insert records carry.
pub const INSERT_WORKLOAD: &str = "insert";

/// What to run on each map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InsertConfig {
    /// Timed runs, each on a freshly bulk-loaded map (at least 1).
    pub runs: usize,
    /// Seed of the split and the insert order.
    pub seed: u64,
    /// Time every `sample_every`-th insert individually for the percentiles (at least 1).
    pub sample_every: usize,
    /// Whether the binary backs large allocations with huge pages (reported only).
    pub huge_pages: bool,
}

/// The keys of one insert benchmark: the bulk-loaded half and the inserts, with their ranks.
pub(crate) struct Split {
    pub(crate) distinct: Vec<u64>,
    pub(crate) loaded: Vec<(u64, u64)>,
    pub(crate) inserts: Vec<(u64, u64)>,
}

impl Split {
    pub(crate) fn new(keys: &[u64], seed: u64) -> Split {
        let mut distinct = keys.to_vec();
        distinct.dedup();
        let mut order: Vec<usize> = (0..distinct.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        let (first, rest) = order.split_at(distinct.len() / 2);
        let mut first = first.to_vec();
        first.sort_unstable();
        let entry = |&i: &usize| (distinct[i], i as u64);
        Split {
            loaded: first.iter().map(entry).collect(),
            inserts: rest.iter().map(entry).collect(),
            distinct,
        }
    }
}

/// The keys [`run`] inserts into every map, in the order it inserts them (the other distinct
/// keys are the ones it bulk-loads): what an outside harness (a C++ reference implementation)
/// needs to time the very same inserts. Same `keys` and `seed`, same answer.
pub fn inserted_keys(keys: &[u64], seed: u64) -> Vec<u64> {
    Split::new(keys, seed)
        .inserts
        .iter()
        .map(|&(k, _)| k)
        .collect()
}

/// The usage errors [`run`] would report for `dataset` and `config` (a run count or sampling
/// stride of 0, fewer than two keys), without running anything: for a caller that writes
/// files before the run.
pub fn check_config(dataset: &Dataset, config: InsertConfig) -> Result<()> {
    check_positive(&[
        ("run count", config.runs),
        ("sampling stride", config.sample_every),
    ])?;
    if dataset.keys.len() < 2 {
        return Err(BenchError::NoKeys {
            workload: INSERT_WORKLOAD.to_string(),
        });
    }
    Ok(())
}

/// The map each spec names, or a [`BenchError::BadSpec`] listing the maps for the first that
/// names a static index: call it before loading a dataset.
pub fn check_specs(specs: &[IndexSpec]) -> Result<Vec<(&IndexSpec, MapSpec)>> {
    specs
        .iter()
        .map(|spec| {
            spec.as_map()
                .map(|map| (spec, map))
                .ok_or_else(|| BenchError::BadSpec {
                    what: "index for the insert workload",
                    got: spec.label(),
                    expected: format!("an updatable map: {}", MapSpec::forms().join(", ")),
                })
        })
        .collect()
}

/// Runs the insert benchmark of every spec on `dataset`, in order.
pub fn run(
    dataset: &Dataset,
    specs: &[IndexSpec],
    config: InsertConfig,
    progress: &mut dyn Progress,
) -> Result<Vec<BenchRecord>> {
    let maps = check_specs(specs)?;
    check_config(dataset, config)?;
    let split = Split::new(&dataset.keys, config.seed);
    let machine = Machine::detect();
    let overhead = timer_overhead_ns();
    maps.into_iter()
        .map(|(spec, map)| {
            run_map(
                dataset, &split, spec, &map, config, &machine, overhead, progress,
            )
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn run_map(
    dataset: &Dataset,
    split: &Split,
    spec: &IndexSpec,
    map_spec: &MapSpec,
    config: InsertConfig,
    machine: &Machine,
    timer_overhead: u64,
    progress: &mut dyn Progress,
) -> Result<BenchRecord> {
    let label = spec.label();
    let n = split.distinct.len();
    let inserts = split.inserts.len();
    let mut means = Vec::with_capacity(config.runs);
    let mut builds = Vec::with_capacity(config.runs);
    let mut bytes = 0;
    progress.begin(&format!("inserts {label}"), (inserts * config.runs) as u64);
    for run in 0..config.runs {
        let start = Instant::now();
        let mut map = map_spec.build(split.loaded.clone())?;
        builds.push(start.elapsed().as_secs_f64());
        let mut elapsed = 0.0;
        let mut replaced = 0usize;
        for chunk in split.inserts.chunks(CHUNK) {
            let start = Instant::now();
            for &(key, value) in chunk {
                replaced += usize::from(map.insert(black_box(key), value)?.is_some());
            }
            elapsed += start.elapsed().as_nanos() as f64;
            progress.advance(chunk.len() as u64);
        }
        means.push(elapsed / inserts as f64);
        check_run(&label, map.as_ref(), split, replaced, run == 0)?;
        bytes = map.size_in_bytes() as u64;
    }
    progress.end();
    means.sort_by(f64::total_cmp);
    builds.sort_by(f64::total_cmp);

    let mut latency = new_histogram();
    let mut map = map_spec.build(split.loaded.clone())?;
    for (i, &(key, value)) in split.inserts.iter().enumerate() {
        if i % config.sample_every == 0 {
            let start = Instant::now();
            black_box(map.insert(black_box(key), value)?);
            let ns = start.elapsed().as_nanos() as u64;
            latency.saturating_record(ns.saturating_sub(timer_overhead));
        } else {
            map.insert(key, value)?;
        }
    }
    check_run(&label, map.as_ref(), split, 0, false)?;

    let build_s = median(&builds);
    Ok(BenchRecord {
        schema: crate::records::RecordKind::Bench.schema(),
        command: crate::records::command_line(),
        dataset: dataset.name.clone(),
        n: n as u64,
        workload: INSERT_WORKLOAD.to_string(),
        index: spec.name().to_string(),
        label,
        params: spec.params_text(),
        operation: "insert".to_string(),
        build_s,
        build_keys_per_s: if build_s > 0.0 {
            split.loaded.len() as f64 / build_s
        } else {
            0.0
        },
        bytes,
        bytes_per_key: bytes as f64 / n as f64,
        mean_ns: median(&means),
        mean_ns_min: means[0],
        mean_ns_max: means[means.len() - 1],
        p50_ns: latency.value_at_quantile(0.5),
        p99_ns: latency.value_at_quantile(0.99),
        p999_ns: latency.value_at_quantile(0.999),
        sample_every: config.sample_every as u64,
        huge_pages: config.huge_pages,
        mean_log2_window: 0.0,
        segments: None,
        height: None,
        speedup_vs_binary: None,
        runs: config.runs as u64,
        queries: inserts as u64,
        seed: config.seed,
        cpu: machine.cpu.clone(),
        cores: machine.cores,
        lidx_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Checks a map after its inserts: no insert replaced a value, the length is every distinct key,
/// and with `full` every key maps to its rank and every gap's lower bound is the next key.
pub(crate) fn check_run(
    label: &str,
    map: &dyn KeyMap,
    split: &Split,
    replaced: usize,
    full: bool,
) -> Result<()> {
    let wrong = |op: &'static str, key: u64, what: String| BenchError::WrongResult {
        index: label.to_string(),
        op,
        key,
        what,
    };
    if replaced != 0 {
        return Err(wrong(
            "insert",
            0,
            format!("{replaced} inserts of new keys reported replacing a value"),
        ));
    }
    if map.len() != split.distinct.len() {
        return Err(wrong(
            "len",
            0,
            format!("{} entries, expected {}", map.len(), split.distinct.len()),
        ));
    }
    if !full {
        return Ok(());
    }
    for (rank, &key) in split.distinct.iter().enumerate() {
        let got = map.get(key);
        if got != Some(rank as u64) {
            return Err(wrong("get", key, format!("{got:?}, expected Some({rank})")));
        }
        if rank > 0 && split.distinct[rank - 1] + 1 < key && map.ordered() {
            let between = split.distinct[rank - 1] + 1;
            let got = map.lower_bound(between);
            if got != Some((key, rank as u64)) {
                return Err(wrong(
                    "lower_bound",
                    between,
                    format!("{got:?}, expected Some(({key}, {rank}))"),
                ));
            }
        }
    }
    Ok(())
}
