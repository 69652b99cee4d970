//! `lidx bench`: build indexes on a dataset, check every answer, time the lookups, print a
//! table and optionally write the records (JSON lines or CSV, see `lidx_bench::report`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use lidx_bench::registry::{parse_count, IndexSpec, DEFAULT_INDEXES};
use lidx_bench::report::{self, Format};
use lidx_bench::runner::{self, BenchConfig};
use lidx_bench::workload::Workload;
use lidx_bench::BenchError;

use super::{load_dataset, Bars};

/// Arguments of `lidx bench`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>` (e.g. gen:lognormal:10M, gen:uniform-dense:1M) or the path
    /// of an SOSD u64 file.
    #[arg(long, default_value = "gen:lognormal:10M")]
    pub dataset: String,

    /// Comma-separated indexes, each `name[:param=value]...`, e.g. `pgm:eps=16,rs:err=8,sorted`.
    /// Names: sorted, pgm, rs, rmi, btree, spgm, btree-model, fiting (an unknown one lists
    /// every parameter and default).
    #[arg(long, default_value = DEFAULT_INDEXES)]
    pub index: String,

    /// `lookup` (uniform over existing keys), `lookup:uniform` or `lookup:zipf` (YCSB's
    /// scrambled zipfian, theta 0.99).
    #[arg(long, default_value = "lookup")]
    pub workload: String,

    /// Lookups per timed run (accepts 1M, 500K, ...). Costs 16 bytes of memory each.
    #[arg(long, default_value = "1M")]
    pub queries: String,

    /// Timed runs over all queries; the report gives the median run's mean.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,

    /// Time every N-th lookup individually for the p50/p99/p99.9 latencies.
    #[arg(long, default_value_t = 16)]
    pub sample_every: usize,

    /// Seed of the generated dataset and of the workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Keep every allocation on ordinary 4 KiB pages. By default large allocations (the keys,
    /// index nodes and models) are advised as transparent huge pages on Linux, so lookups
    /// measure the index rather than TLB misses.
    #[arg(long)]
    pub small_pages: bool,

    /// Also write the records here: `.jsonl`/`.json` for JSON lines, `.csv` for CSV.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `lidx bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // Every usage error is reported before the (long) benchmark starts.
    let specs = IndexSpec::parse_list(&args.index)?;
    let workload = Workload::parse(&args.workload)?;
    let queries = parse_count(&args.queries)
        .and_then(|q| usize::try_from(q).ok())
        .ok_or_else(|| BenchError::BadSpec {
            what: "query count",
            got: args.queries.clone(),
            expected: "a number such as 1000000, 500K or 2M".to_string(),
        })?;
    if let Some(out) = &args.out {
        Format::for_path(out)?;
    }
    if args.small_pages {
        crate::huge_pages::disable();
    }
    let config = BenchConfig {
        workload,
        queries,
        runs: args.runs,
        seed: args.seed,
        sample_every: args.sample_every,
        huge_pages: crate::huge_pages::enabled(),
    };

    let dataset = load_dataset(&args.dataset, args.seed)?;
    let mut bars = Bars::default();
    let records = runner::run(&dataset, &specs, config, &mut bars)?;
    anyhow::ensure!(
        !records.is_empty(),
        "none of the indexes `{}` is built into this binary",
        args.index
    );

    let first = &records[0];
    println!(
        "{} ({} keys), {}, {} queries x {} runs, seed {}, {} ({} cores)",
        first.dataset,
        first.n,
        first.workload,
        first.queries,
        first.runs,
        first.seed,
        first.cpu,
        first.cores
    );
    println!("{}", report::table(&records));
    if let Some(out) = &args.out {
        report::write_records(out, &records)
            .with_context(|| format!("writing {}", out.display()))?;
        eprintln!("wrote {} records to {}", records.len(), out.display());
    }
    Ok(())
}
