//! `lidx bench`: build indexes on a dataset, check every answer, time the lookups, print a
//! table and optionally write the records (JSON lines or CSV, see `lidx_bench::report`).
//! With `--on-disk`, the indexes are on-disk ones and the run is `bench_disk`'s, or
//! `bench_updatable`'s for a write workload, an updatable-only index or `--updatable`.
//!
//! Which runner an invocation goes to, and the index list it runs when `--index` is not
//! given, is the bench's decision (`lidx_bench::route`); this file dispatches on it and runs
//! the in-memory modes. The arguments, which all three files read, are `bench_args`' (so no
//! bench file imports another that imports it).

use lidx_bench::keyfile::Keys;
use lidx_bench::map_runner::{self, InsertConfig};
use lidx_bench::registry::IndexSpec;
use lidx_bench::report;
use lidx_bench::route::{BenchAsk, BenchRoute};
use lidx_bench::runner::{Bench, BenchConfig};
use lidx_bench::sosd;
use lidx_bench::string_runner::{self, StringIndexSpec};
use lidx_bench::workload::Workload;
use lidx_bench::BenchError;

use super::args::{check_out_inputs, parse_ops, write_out};
pub use super::bench_args::Args;
use super::{bench_disk, bench_updatable};
use super::{load_any_dataset, load_numeric_dataset, Bars};

/// Runs `lidx bench`: the runner of the invocation's route, on its index list.
pub fn run(args: Args) -> anyhow::Result<()> {
    let route = BenchRoute::of(&BenchAsk {
        dataset: &args.dataset,
        workload: &args.workload,
        index: args.index.as_deref(),
        on_disk: args.on_disk,
        updatable: args.updatable,
    });
    let list = route.index_list(args.index.as_deref()).to_string();
    if args.queries_out.is_some() && !matches!(route, BenchRoute::Lookups | BenchRoute::Inserts) {
        return Err(BenchError::BadSpec {
            what: "--queries-out",
            got: args.queries_out.unwrap_or_default().display().to_string(),
            expected:
                "in-memory lookup and insert runs on numeric keys only (no --on-disk, no text or str16 keys)"
                    .to_string(),
        }
        .into());
    }
    match route {
        BenchRoute::Updatable => bench_updatable::run(args, &list),
        BenchRoute::Disk | BenchRoute::DiskBytes => bench_disk::run(args, &list),
        BenchRoute::Strings => run_text(args, &list),
        BenchRoute::Lookups | BenchRoute::Inserts => {
            // Every usage error is reported before the (long) benchmark starts.
            let specs = IndexSpec::parse_list(&list)?;
            if route == BenchRoute::Inserts {
                return run_inserts(args, &specs);
            }
            run_lookups(args, &list, &specs)
        }
    }
}

/// `lidx bench` on static indexes in memory ([`lidx_bench::runner`]): lookups, every answer
/// checked, a table (and `--out`).
fn run_lookups(args: Args, list: &str, specs: &[IndexSpec]) -> anyhow::Result<()> {
    let workload = Workload::parse(&args.workload)?;
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("1M"))?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    check_queries_out(&args)?;
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

    let dataset = load_numeric_dataset(&args.dataset, args.seed)?;
    let mut bars = Bars::default();
    let bench = Bench::prepare(&dataset, config, &mut bars)?;
    if let Some(path) = &args.queries_out {
        super::output::replace(path, |staged| sosd::write_sosd(staged, bench.queries()))?;
        note!(
            "wrote {} queries to {}",
            bench.queries().len(),
            path.display()
        );
    }
    let records = bench.run_specs(specs, &mut bars)?;
    anyhow::ensure!(
        !records.is_empty(),
        "none of the indexes `{list}` is built into this binary"
    );

    // In place before the last line on stdout: a closed pipe cannot leave a staged file.
    write_out(args.out.as_ref(), &records)?;
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
    Ok(())
}

/// Refuses a `--queries-out` that exists (without `--force`) or is an input or `--out`, before
/// anything long runs.
fn check_queries_out(args: &Args) -> anyhow::Result<()> {
    if let Some(path) = &args.queries_out {
        let mut inputs = super::dataset_inputs(&args.dataset);
        if let Some(out) = &args.out {
            inputs.push(("--out", out.as_path()));
        }
        super::output::check(path, &inputs, args.force)?;
    }
    Ok(())
}

/// `lidx bench --workload insert` ([`lidx_bench::map_runner`]): bulk load a random half of the
/// distinct keys, insert the other half, every answer checked; a table (and `--out`).
fn run_inserts(args: Args, specs: &[IndexSpec]) -> anyhow::Result<()> {
    map_runner::check_specs(specs)?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    check_queries_out(&args)?;
    if args.small_pages {
        crate::huge_pages::disable();
    }
    let config = InsertConfig {
        runs: args.runs,
        seed: args.seed,
        sample_every: args.sample_every,
        huge_pages: crate::huge_pages::enabled(),
    };
    let dataset = load_numeric_dataset(&args.dataset, args.seed)?;
    map_runner::check_config(&dataset, config)?;
    if let Some(path) = &args.queries_out {
        let inserted = map_runner::inserted_keys(&dataset.keys, args.seed);
        super::output::replace(path, |staged| sosd::write_sosd(staged, &inserted))?;
        note!(
            "wrote the {} inserted keys, in insert order, to {}",
            inserted.len(),
            path.display()
        );
    }
    let records = map_runner::run(&dataset, specs, config, &mut Bars::default())?;
    write_out(args.out.as_ref(), &records)?;
    let first = &records[0];
    println!(
        "{} ({} distinct keys), bulk load half then insert {} in random order, {} runs, seed {}, {} ({} cores)",
        first.dataset, first.n, first.queries, first.runs, first.seed, first.cpu, first.cores
    );
    println!("{}", report::table(&records));
    Ok(())
}

/// `lidx bench` on string keys, text or `str16` ([`lidx_bench::string_runner`]): uniform lookups of present
/// keys, every answer checked, a table (and the records in `--out`, JSON lines or CSV).
fn run_text(args: Args, list: &str) -> anyhow::Result<()> {
    let specs = StringIndexSpec::parse_list(list)?;
    if args.workload != "lookup" && args.workload != "lookup:uniform" {
        return Err(BenchError::BadSpec {
            what: "workload",
            got: args.workload.clone(),
            expected: "lookup (uniform over existing keys) for text keys".to_string(),
        }
        .into());
    }
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("1M"))?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    let dataset = load_any_dataset(&args.dataset, args.seed)?;
    // 16-byte strings are byte strings of one length: the same indexes, the same order.
    let owned: Vec<Vec<u8>>;
    let keys = match &dataset.keys {
        Keys::Bytes(keys) => keys,
        Keys::Str16(keys) => {
            owned = keys.iter().map(|k| k.to_vec()).collect();
            &owned
        }
        other => {
            return Err(BenchError::KeyType {
                dataset: dataset.name.clone(),
                got: other.type_name(),
                expected: "expected text or str16 keys".to_string(),
            }
            .into())
        }
    };
    let records = string_runner::run(
        &dataset.name,
        keys,
        &specs,
        queries,
        args.runs,
        args.seed,
        &mut Bars::default(),
    )?;
    write_out(args.out.as_ref(), &records)?;
    println!(
        "{} ({} text keys), uniform lookups of present keys, {queries} queries x {} runs, seed {}",
        dataset.name,
        keys.len(),
        args.runs,
        args.seed
    );
    println!("{}", string_runner::table(&records));
    Ok(())
}
