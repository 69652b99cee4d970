//! `lidx dims`: paper 001 §IV's design dimensions of updatable learned indexes, each one
//! command with a table, CSV and SVG. `approx` is the approximation algorithm
//! ([`lidx_bench::approx_dimension`]: Fig. 17a-b), `structure` the index structure
//! ([`lidx_bench::structure_dimension`]: Fig. 17c).

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use lidx_bench::approx_dimension::{self, ApproxRecord};
use lidx_bench::disk_report::human_bytes;
use lidx_bench::plot::{write_lines, Axes};
use lidx_bench::structure_dimension::{self, STRUCTURES};
use lidx_bench::BenchError;

use super::args::{check_out, parse_ops, write_out};
use super::{load_numeric_dataset, Bars};

/// Arguments of `lidx dims`.
#[derive(Debug, Parser)]
pub struct Args {
    /// The dimension.
    #[command(subcommand)]
    pub dimension: Dimension,
}

/// The design dimensions.
#[derive(Debug, Subcommand)]
pub enum Dimension {
    /// Approximation algorithms LSA, Opt-PLA and LSA-gap on the same keys: leaves, average and
    /// maximum error, lookup time inside a leaf (paper 001 Fig. 17a-b).
    ///
    /// Cost: one model build per setting (a pass over the keys each) and `--runs` loops of
    /// `--queries` leaf searches; memory about 24 bytes per key.
    Approx(ApproxArgs),
    /// Index structures RMI, ATS (ALEX's asymmetric tree), BTREE and LRS (PGM's levels) over
    /// the same leaves: root-to-leaf time against the leaf count (paper 001 Fig. 17c).
    ///
    /// Cost: one Opt-PLA pass per `--eps`, one build per structure over its leaves, and
    /// `--runs` loops of `--queries` lookups.
    Structure(StructureArgs),
}

/// What every dimension takes: the keys, the timed loops, the records file.
#[derive(Debug, Parser)]
pub struct Common {
    /// The keys (u64 datasets: `gen:<generator>:<count>` or an SOSD file).
    #[arg(long, default_value = "gen:lognormal:1M")]
    pub dataset: String,

    /// Lookups per timed loop (inside a leaf for `approx`, root to leaf for `structure`).
    #[arg(long, default_value = "1M")]
    pub queries: String,

    /// Timed loops; the table gives the median.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,

    /// Seed of the dataset and the queries.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Write the records here (`.jsonl` or `.csv`); an existing file is refused.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `lidx dims structure`.
#[derive(Debug, Parser)]
pub struct StructureArgs {
    /// The structures, comma-separated: rmi, ats, btree, lrs.
    #[arg(long, default_value = "rmi,ats,btree,lrs")]
    pub structures: String,

    /// Opt-PLA errors of the leaves, comma-separated (larger: fewer leaves).
    #[arg(long, default_value = "4,16,64,256,1024")]
    pub eps: String,

    /// The dataset, the timed loops and where the records go.
    #[command(flatten)]
    pub common: Common,

    /// Draw root-to-leaf time against the leaf count (Fig. 17c) here as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
}

/// Arguments of `lidx dims approx`.
#[derive(Debug, Parser)]
pub struct ApproxArgs {
    /// Partition sizes of LSA and LSA-gap, comma-separated.
    #[arg(long, default_value = "64,256,1024,4096,16384")]
    pub sizes: String,

    /// Maximum errors of Opt-PLA, comma-separated.
    #[arg(long, default_value = "4,16,64,256,1024")]
    pub eps: String,

    /// The dataset, the timed loops and where the records go.
    #[command(flatten)]
    pub common: Common,

    /// Draw lookup time against average error (Fig. 17a) here as SVG.
    #[arg(long)]
    pub svg_time: Option<PathBuf>,

    /// Draw leaves against average error (Fig. 17b) here as SVG.
    #[arg(long)]
    pub svg_leaves: Option<PathBuf>,
}

/// Runs `lidx dims`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.dimension {
        Dimension::Approx(args) => approx(args),
        Dimension::Structure(args) => structure(args),
    }
}

fn counts(what: &'static str, list: &str) -> anyhow::Result<Vec<usize>> {
    let values = list
        .split(',')
        .map(|v| parse_ops(what, v.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if values.contains(&0) {
        return Err(BenchError::BadSpec {
            what,
            got: list.to_string(),
            expected: "comma-separated numbers of at least 1".to_string(),
        }
        .into());
    }
    Ok(values)
}

fn approx(args: ApproxArgs) -> anyhow::Result<()> {
    let sizes = counts("partition sizes", &args.sizes)?;
    let eps = counts("maximum errors", &args.eps)?;
    let queries = parse_ops("query count", &args.common.queries)?;
    check_figures(
        args.common.out.as_ref(),
        &[&args.svg_time, &args.svg_leaves],
    )?;
    let dataset = load_numeric_dataset(&args.common.dataset, args.common.seed)?;
    let records = approx_dimension::run(
        &dataset,
        &sizes,
        &eps,
        queries,
        args.common.runs,
        args.common.seed,
        &mut Bars::default(),
    )?;
    println!(
        "{} ({} distinct keys), {} leaf lookups x {} runs, {}",
        dataset.name, records[0].n, queries, args.common.runs, records[0].cpu
    );
    println!("{}", approx_table(&records));
    let lines = |y: fn(&ApproxRecord) -> f64| {
        lines_of(
            records
                .iter()
                .map(|r| (r.algorithm.as_str(), (r.avg_error, y(r)))),
        )
    };
    if let Some(path) = &args.svg_time {
        let axes = Axes {
            x: "average error (positions, log scale)",
            y: "lookup in the leaf (ns)",
            x_log: true,
            x_bytes: false,
        };
        write_lines(
            path,
            &format!("{}: leaf lookup time", dataset.name),
            &axes,
            lines(|r| r.lookup_ns),
        )?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.svg_leaves {
        let axes = Axes {
            x: "average error (positions, log scale)",
            y: "leaves",
            x_log: true,
            x_bytes: false,
        };
        write_lines(
            path,
            &format!("{}: leaves", dataset.name),
            &axes,
            lines(|r| r.leaves as f64),
        )?;
        eprintln!("wrote {}", path.display());
    }
    write_out(args.common.out.as_ref(), &records)
}

/// Refuses, before anything runs, a records file of no known format and figures that exist.
fn check_figures(out: Option<&PathBuf>, svgs: &[&Option<PathBuf>]) -> anyhow::Result<()> {
    check_out(out)?;
    for svg in svgs.iter().copied().flatten() {
        anyhow::ensure!(!svg.exists(), "{} exists; name a new file", svg.display());
    }
    Ok(())
}

/// Named (x, y) points grouped into lines by name, in the order names first appear.
fn lines_of<'a>(
    points: impl Iterator<Item = (&'a str, (f64, f64))>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (name, point) in points {
        match lines.iter_mut().find(|(n, _)| n == name) {
            Some((_, line)) => line.push(point),
            None => lines.push((name.to_string(), vec![point])),
        }
    }
    lines
}

fn structure(args: StructureArgs) -> anyhow::Result<()> {
    let eps = counts("leaf errors", &args.eps)?;
    let queries = parse_ops("query count", &args.common.queries)?;
    let structures: Vec<String> = args
        .structures
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    if let Some(bad) = structures
        .iter()
        .find(|s| !STRUCTURES.contains(&s.as_str()))
    {
        return Err(BenchError::BadSpec {
            what: "structure",
            got: bad.clone(),
            expected: STRUCTURES.join(", "),
        }
        .into());
    }
    check_figures(args.common.out.as_ref(), &[&args.svg])?;
    let dataset = load_numeric_dataset(&args.common.dataset, args.common.seed)?;
    let records = structure_dimension::run(
        &dataset,
        &structures,
        &eps,
        queries,
        args.common.runs,
        args.common.seed,
        &mut Bars::default(),
    )?;
    println!(
        "{} ({} distinct keys), {} root-to-leaf lookups x {} runs, {}",
        dataset.name, records[0].n, queries, args.common.runs, records[0].cpu
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "structure",
        "leaf eps",
        "leaves",
        "root-to-leaf ns",
        "bytes",
    ]);
    for r in &records {
        t.add_row([
            r.structure.clone(),
            r.eps.to_string(),
            r.leaves.to_string(),
            format!("{:.1}", r.lookup_ns),
            human_bytes(r.bytes),
        ]);
    }
    for column in 1..5 {
        if let Some(c) = t.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    println!("{t}");
    if let Some(path) = &args.svg {
        let axes = Axes {
            x: "leaves (log scale)",
            y: "root to leaf (ns)",
            x_log: true,
            x_bytes: false,
        };
        let lines = lines_of(
            records
                .iter()
                .map(|r| (r.structure.as_str(), (r.leaves as f64, r.lookup_ns))),
        );
        write_lines(
            path,
            &format!("{}: index structures", dataset.name),
            &axes,
            lines,
        )?;
        eprintln!("wrote {}", path.display());
    }
    write_out(args.common.out.as_ref(), &records)
}

fn approx_table(records: &[ApproxRecord]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "algorithm",
        "size / eps",
        "leaves",
        "avg error",
        "max error",
        "leaf lookup ns",
        "bytes",
    ]);
    for r in records {
        t.add_row([
            r.algorithm.clone(),
            r.param.to_string(),
            r.leaves.to_string(),
            format!("{:.2}", r.avg_error),
            r.max_error.to_string(),
            format!("{:.1}", r.lookup_ns),
            human_bytes(r.bytes),
        ]);
    }
    for column in 1..7 {
        if let Some(c) = t.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}
