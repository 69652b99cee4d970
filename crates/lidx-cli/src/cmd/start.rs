//! `lidx start`: START's tools (paper 004). `calibrate` measures the cost model on this machine
//! (Table I, §IV-A/§V) and saves it; `stats` prints the node mix of ART and START on a dataset;
//! `bench` runs the read-mostly workload of §VI-B for ART and START.
//!
//! Read-only lookups (§VI-A) go through `lidx bench --index art,start,start-greedy,pgm,rs`,
//! with the saved cost model passed as `LIDX_START_COST_MODEL=<file>`.
//!
//! The read-mostly workload (§VI-B, YCSB-B-like): withhold `--withhold` distinct keys sampled
//! by YCSB's "latest" distribution (a zipfian with theta 0.99 over ranks, rank 0 the largest
//! key), build on the rest (START tuned after the build), time inserting the withheld keys in
//! sampled order, then time `--lookups` lookups of keys drawn uniformly from all of them. The
//! three trees are kept side by side and their lookup runs alternate, so the speedups (medians
//! of per-round ratios of the time per operation) are paired measurements.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lidx::mem::art::Art;
#[cfg(target_os = "linux")]
use lidx::mem::start::cost_model::measure_page_walk;
use lidx::mem::start::cost_model::{calibrate, llc_bytes};
use lidx::mem::start::{CostModel, NodeMix, Start, StartParams, Strategy};
use lidx::OrderedMap;
use lidx_bench::registry::parse_count;
use lidx_bench::workload::Zipfian;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::load_dataset;

/// Arguments of `lidx start`.
#[derive(Debug, Parser)]
pub struct Args {
    #[command(subcommand)]
    pub command: StartCommand,
}

/// The `lidx start` subcommands.
#[derive(Debug, Subcommand)]
pub enum StartCommand {
    /// Measure the node costs (Table I) on this machine, print and save them.
    ///
    /// Cost: a few seconds (7 node kinds x 3 cache states x `--runs` lookups, and random reads
    /// from 256 MiB on small and on huge pages for the cost of a TLB miss).
    Calibrate {
        /// Timed lookups per kind and cache state (the median is kept).
        #[arg(long, default_value_t = 2001)]
        runs: usize,
        /// Where to save the model (read back through `LIDX_START_COST_MODEL`).
        #[arg(long, default_value = "start-cost-model.txt")]
        out: PathBuf,
    },
    /// Print the node mix (inner nodes per kind) and bytes per key of ART and START.
    ///
    /// Cost: building three trees, about 100 bytes per key each at the peak.
    Stats {
        /// `gen:<generator>:<count>` or the path of an SOSD u64 file.
        #[arg(long)]
        dataset: String,
        /// Seed of a generated dataset.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// A cost model saved by `calibrate` (default: the paper's Table I).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// The read-mostly workload of §VI-B for ART, START (DP) and START (greedy).
    ///
    /// Cost: three builds and, per tree, the inserts and `--runs` x `--lookups` lookups.
    Bench {
        /// `gen:<generator>:<count>` or the path of an SOSD u64 file.
        #[arg(long, default_value = "gen:lognormal:10M")]
        dataset: String,
        /// Keys withheld from the build and inserted (latest-skewed zipf sample).
        #[arg(long, default_value = "500K")]
        withhold: String,
        /// Lookups after the inserts.
        #[arg(long, default_value = "9.5M")]
        lookups: String,
        /// Timed lookup rounds, the trees alternating (medians are reported).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Seed of the dataset and the workload.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// A cost model saved by `calibrate` (default: the paper's Table I).
        #[arg(long)]
        model: Option<PathBuf>,
    },
}

/// Runs `lidx start`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        StartCommand::Calibrate { runs, out } => {
            let cache = llc_bytes().unwrap_or(8 << 20);
            let mut model = calibrate(runs, cache).context("calibrating the cost model")?;
            #[cfg(target_os = "linux")]
            {
                model.page_walk = measure_page_walk().context("timing a page walk")?;
            }
            println!("{model}");
            std::fs::write(&out, model.to_text())
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!("saved to {}", out.display());
            Ok(())
        }
        StartCommand::Stats {
            dataset,
            seed,
            model,
        } => {
            let model = load_model(model)?;
            let data = load_dataset(&dataset, seed)?;
            let pairs = distinct(&data.keys);
            let art = Art::bulk_load(pairs.iter().copied())?;
            report("art", &art, NodeMix::of(&art));
            drop(art);
            for strategy in [Strategy::DynamicProgramming, Strategy::Greedy] {
                let t = Start::bulk_load(pairs.iter().copied(), params(&model, strategy))?;
                let r = t.last_report();
                report(label(strategy), &t, t.node_mix());
                println!(
                    "  model cost per lookup: ART {:.1} ns -> START {:.1} ns; created MN4={} R64K={} R16M={}; huge-page arena {:.1} MiB",
                    r.art_cost_ns, r.tuned_cost_ns, r.created[0], r.created[1], r.created[2],
                    r.arena_bytes as f64 / f64::from(1 << 20)
                );
            }
            Ok(())
        }
        StartCommand::Bench {
            dataset,
            withhold,
            lookups,
            runs,
            seed,
            model,
        } => read_mostly(
            &dataset,
            &withhold,
            &lookups,
            runs,
            seed,
            load_model(model)?,
        ),
    }
}

fn label(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::DynamicProgramming => "start",
        Strategy::Greedy => "start-greedy",
    }
}

fn params(model: &CostModel, strategy: Strategy) -> StartParams {
    StartParams {
        model: model.clone(),
        strategy,
        ..StartParams::default()
    }
}

fn load_model(path: Option<PathBuf>) -> anyhow::Result<CostModel> {
    match path {
        None => Ok(CostModel::default()),
        Some(p) => {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            Ok(CostModel::parse(&text)?)
        }
    }
}

fn distinct(keys: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k)).collect();
    out.dedup_by_key(|p| p.0);
    out
}

fn report<M: OrderedMap<u64, u64>>(name: &str, map: &M, mix: NodeMix) {
    println!(
        "{name:<13} {:>7.2} bytes/key  nodes: {mix}",
        map.size_in_bytes() as f64 / map.len().max(1) as f64
    );
}

fn count(text: &str, what: &str) -> anyhow::Result<usize> {
    let n = if let Some((a, b)) = text.split_once('.') {
        // `9.5M`: scale the decimal part by the suffix.
        let digits = b.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &b[digits.len()..];
        let whole = parse_count(&format!("{a}{digits}{suffix}"));
        whole.map(|w| w / 10u64.pow(digits.len() as u32))
    } else {
        parse_count(text)
    };
    n.and_then(|n| usize::try_from(n).ok())
        .with_context(|| format!("{what}: `{text}` is not a count such as 500K or 9.5M"))
}

/// The median of `v` (not empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The read-mostly workload (see the module docs) for ART, START (DP) and START (greedy).
fn read_mostly(
    dataset: &str,
    withhold: &str,
    lookups: &str,
    runs: usize,
    seed: u64,
    model: CostModel,
) -> anyhow::Result<()> {
    let (withhold, lookups) = (count(withhold, "withhold")?, count(lookups, "lookups")?);
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let data = load_dataset(dataset, seed)?;
    let all = distinct(&data.keys);
    let n = all.len();
    let withhold = withhold.min(n / 2);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5ead_0057);
    let zipf = Zipfian::new(n as u64, 0.99);
    let mut taken = vec![false; n];
    let mut inserts = Vec::with_capacity(withhold);
    let mut draws = 0usize;
    while inserts.len() < withhold {
        draws += 1;
        // Latest: rank 0 is the largest key. After many repeats, fall back to uniform ranks
        // so the sample completes.
        let rank = if draws < 100 * withhold.max(1) {
            zipf.sample(&mut rng) as usize
        } else {
            rng.gen_range(0..n)
        };
        let i = n - 1 - rank.min(n - 1);
        if !taken[i] {
            taken[i] = true;
            inserts.push(all[i]);
        }
    }
    let build: Vec<(u64, u64)> = (0..n).filter(|&i| !taken[i]).map(|i| all[i]).collect();
    let queries: Vec<u64> = (0..lookups).map(|_| all[rng.gen_range(0..n)].0).collect();
    println!(
        "{}: {} keys, {} built, {} inserted (latest zipf, {} draws), {} lookups, median of {runs}",
        data.name,
        n,
        build.len(),
        inserts.len(),
        draws,
        queries.len()
    );
    println!(
        "{:<13} {:>10} {:>10} {:>10} {:>10} {:>10}  node mix after",
        "tree", "build s", "ns/insert", "ns/lookup", "ns/op", "bytes/key"
    );
    let variants: [Option<Strategy>; 3] = [
        None,
        Some(Strategy::DynamicProgramming),
        Some(Strategy::Greedy),
    ];
    // All three trees stay alive and their lookup runs alternate (art, start, greedy, art,
    // ...), so a slow spell of a shared machine hits each of them alike; the speedups are
    // medians of the per-round ratios.
    let mut trees = Vec::with_capacity(variants.len());
    for variant in variants {
        let t0 = Instant::now();
        let mut map: Start<u64, u64> = match variant {
            None => Start::from_art(
                Art::bulk_load(build.iter().copied())?,
                StartParams::default(),
            ),
            Some(s) => Start::bulk_load(build.iter().copied(), params(&model, s))?,
        };
        let build_s = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        for &(k, v) in &inserts {
            map.insert(k, v)?;
        }
        let insert_ns = t0.elapsed().as_nanos() as f64 / inserts.len().max(1) as f64;
        trees.push((variant.map_or("art", label), map, build_s, insert_ns));
    }
    let mut totals = vec![Vec::with_capacity(runs); trees.len()];
    let mut lookup_times = vec![Vec::with_capacity(runs); trees.len()];
    for _ in 0..runs {
        for (i, (_, map, _, insert_ns)) in trees.iter().enumerate() {
            let t0 = Instant::now();
            let mut found = 0u64;
            for q in &queries {
                found += u64::from(black_box(map.get(q)).is_some());
            }
            let lookup_ns = t0.elapsed().as_nanos() as f64 / queries.len().max(1) as f64;
            if found != queries.len() as u64 {
                bail!("a lookup of an existing key failed");
            }
            let total = (insert_ns * inserts.len() as f64 + lookup_ns * queries.len() as f64)
                / (inserts.len() + queries.len()).max(1) as f64;
            lookup_times[i].push(lookup_ns);
            totals[i].push(total);
        }
    }
    for (i, (name, map, build_s, insert_ns)) in trees.iter().enumerate() {
        let speedup = if i == 0 {
            String::new()
        } else {
            let ratios: Vec<f64> = (0..runs).map(|r| totals[0][r] / totals[i][r]).collect();
            let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            format!(" ({:.2}x ART; rounds {})", median(ratios), each.join(" "))
        };
        println!(
            "{name:<13} {build_s:>10.2} {insert_ns:>10.1} {:>10.1} {:>10.1} {:>10.2}  {}{speedup}",
            median(lookup_times[i].clone()),
            median(totals[i].clone()),
            map.size_in_bytes() as f64 / map.len() as f64,
            map.node_mix()
        );
    }
    Ok(())
}
