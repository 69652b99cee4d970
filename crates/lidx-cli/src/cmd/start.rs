//! `lidx start`: START's tools (paper 004). `calibrate` measures the cost model on this machine
//! (Table I, §IV-A/§V) and saves it; `stats` prints the node mix of ART and START on a dataset;
//! `bench` runs the read-mostly workload of §VI-B for ART and START.
//!
//! Read-only lookups (§VI-A) go through `lidx bench --index art,start,start-greedy,pgm,rs`,
//! with the saved cost model passed as `LIDX_START_COST_MODEL=<file>`.
//!
//! The experiments themselves (and their records, `start-nodes` and `start-mixed`) are
//! [`lidx_bench::start_runner`]'s; this module parses arguments and prints tables.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use lidx::mem::Art;
use lidx::mem::{CostModel, NodeMix, Start, StartParams, Strategy};
#[cfg(target_os = "linux")]
use lidx::raw::mem::start::cost_model::measure_page_walk;
use lidx::raw::mem::start::cost_model::{calibrate, llc_bytes};
use lidx::OrderedMap;
use lidx_bench::records::MixedRecord;
use lidx_bench::registry::parse_count;
use lidx_bench::start_runner::{self, MixedConfig};
use lidx_bench::BenchError;

use super::args::{check_out_inputs, write_out};
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
        /// Where to save the model (read back through `LIDX_START_COST_MODEL`); an existing
        /// file is refused unless `--force`.
        #[arg(long, default_value = "start-cost-model.txt")]
        out: PathBuf,
        /// Replace an existing `--out`.
        #[arg(long)]
        force: bool,
        /// Also print Table I as records on standard output, one JSON object a line
        /// (`start-nodes`, beside the paper's figures; the table goes to standard error).
        #[arg(long)]
        json: bool,
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
        /// Write a record per tree here (`.jsonl` or `.csv`, `start-mixed`); an existing file
        /// is refused unless `--force`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace an existing `--out`.
        #[arg(long)]
        force: bool,
    },
}

/// Runs `lidx start`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        StartCommand::Calibrate {
            runs,
            out,
            force,
            json,
        } => {
            super::output::check(&out, &[], force)?;
            let cache = llc_bytes().unwrap_or(8 << 20);
            let mut model = calibrate(runs, cache).context("calibrating the cost model")?;
            #[cfg(target_os = "linux")]
            {
                model.page_walk = measure_page_walk().context("timing a page walk")?;
            }
            super::output::replace(&out, |staged| {
                std::fs::write(staged, model.to_text()).map_err(|source| BenchError::Io {
                    path: staged.to_path_buf(),
                    source,
                })
            })?;
            if json {
                note!("{model}");
                for record in start_runner::node_cost_records(&model, runs) {
                    println!("{}", serde_json::to_string(&record)?);
                }
            } else {
                println!("{model}");
            }
            note!("saved to {}", out.display());
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
                report(start_runner::tree_name(strategy), &t, t.node_mix());
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
            out,
            force,
        } => {
            check_out_inputs(out.as_ref(), &dataset, force)?;
            if let (Some(out), Some(model)) = (&out, &model) {
                super::output::check(out, &[("--model", model.as_path())], force)?;
            }
            let config = MixedConfig {
                withhold: count(&withhold, "withhold")?,
                lookups: count(&lookups, "lookups")?,
                runs,
                seed,
            };
            let model = load_model(model)?;
            let data = load_dataset(&dataset, seed)?;
            let records = start_runner::read_mostly(&data, config, &model)?;
            write_out(out.as_ref(), &records)?;
            print_mixed(&records);
            Ok(())
        }
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

/// The read-mostly workload's table (see [`start_runner::read_mostly`]).
fn print_mixed(records: &[MixedRecord]) {
    if let Some(r) = records.first() {
        println!(
            "{}: {} keys, {} built, {} inserted (latest zipf), {} lookups, median of {}",
            r.dataset, r.keys, r.built, r.inserted, r.lookups, r.runs
        );
    }
    println!(
        "{:<13} {:>10} {:>10} {:>10} {:>10} {:>10}  node mix after",
        "tree", "build s", "ns/insert", "ns/lookup", "ns/op", "bytes/key"
    );
    for r in records {
        let speedup = if r.tree == "art" {
            String::new()
        } else {
            format!(" ({:.2}x ART; rounds {})", r.speedup_vs_art, r.rounds)
        };
        println!(
            "{:<13} {:>10.2} {:>10.1} {:>10.1} {:>10.1} {:>10.2}  {}{speedup}",
            r.tree, r.build_s, r.insert_ns, r.lookup_ns, r.mixed_op_ns, r.bytes_per_key, r.node_mix
        );
    }
}
