//! `lidx dims`: paper 001 §IV's design dimensions of updatable learned indexes, each one
//! command with a table, CSV and SVG. `approx` is the approximation algorithm
//! ([`lidx_bench::approx_dimension`]: Fig. 17a-b), `structure` the index structure
//! ([`lidx_bench::structure_dimension`]: Fig. 17c), `insert` the insertion strategy and
//! `retrain` the retraining ([`lidx_bench::insert_dimension`]: Fig. 18a and 18b-d).

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use lidx_bench::approx_dimension;
use lidx_bench::disk_report::human_bytes;
use lidx_bench::insert_dimension::{self, UpdateConfig};
use lidx_bench::plot::{write_lines, Axes};
use lidx_bench::records::{ApproxRecord, DimsUpdateRecord};
use lidx_bench::structure_dimension::{self, STRUCTURES};
use lidx_bench::BenchError;

use super::args::{check_out_inputs, parse_ops, stage_out};
use super::output::Batch;
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
    /// Insertion strategies Buffer, Inplace and Gap of the FITing-tree at each reserved space,
    /// and ALEX: insert time (paper 001 Fig. 18a).
    ///
    /// Cost: per strategy and reserve, `--runs` bulk loads of half the keys and inserts of the
    /// other half (microseconds each for Inplace at large reserves), then a check of every key.
    Insert(InsertArgs),
    /// Retraining while inserting: count, average and total time per strategy and reserved
    /// space, for the FITing-tree's strategies, the dynamic PGM and ALEX; insert time against
    /// retraining time (paper 001 Fig. 18b-d).
    ///
    /// Cost: as `insert`, with the dynamic PGM as well.
    Retrain(RetrainArgs),
}

/// What every dimension takes: the keys, the timed loops, the records file.
#[derive(Debug, Parser)]
pub struct Common {
    /// The keys (u64 datasets: `gen:<generator>:<count>` or an SOSD file).
    #[arg(long, default_value = "gen:lognormal:1M")]
    pub dataset: String,

    /// Timed loops (runs of all the inserts for `insert` and `retrain`); the table gives the
    /// median.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,

    /// Seed of the dataset and the queries (the split and insert order for `insert` and
    /// `retrain`).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Write the records here (`.jsonl` or `.csv`); an existing file is refused.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Lookups per timed loop, for the dimensions that time lookups.
#[derive(Debug, Parser)]
pub struct Queries {
    /// Lookups per timed loop (inside a leaf for `approx`, root to leaf for `structure`).
    #[arg(long, default_value = "1M")]
    pub queries: String,
}

/// What `insert` and `retrain` both take: the reserved spaces and the segments' error.
#[derive(Debug, Parser)]
pub struct Reserves {
    /// Reserved spaces, comma-separated: slots per FITing-tree segment (its buffer, its free
    /// ends or its gaps), the dynamic PGM's first level. ALEX sizes its own and runs once.
    #[arg(long, default_value = "128,256,512,1024")]
    pub reserve: String,

    /// Error of the FITing-tree's segments and of the dynamic PGM's levels.
    #[arg(long, default_value_t = 64)]
    pub eps: usize,
}

/// Arguments of `lidx dims insert`.
#[derive(Debug, Parser)]
pub struct InsertArgs {
    /// The strategies, comma-separated: buffer, inplace, gap (the FITing-tree's), dpgm, alex.
    #[arg(long, default_value = "buffer,inplace,gap,alex")]
    pub strategies: String,

    /// The reserved spaces and the segments' error.
    #[command(flatten)]
    pub reserves: Reserves,

    /// The dataset, the timed loops and where the records go.
    #[command(flatten)]
    pub common: Common,

    /// Draw insert time against reserved space (Fig. 18a) here as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
}

/// Arguments of `lidx dims retrain`.
#[derive(Debug, Parser)]
pub struct RetrainArgs {
    /// The strategies, comma-separated: buffer, inplace, gap (the FITing-tree's), dpgm, alex.
    #[arg(long, default_value = "buffer,inplace,gap,dpgm,alex")]
    pub strategies: String,

    /// The reserved spaces and the segments' error.
    #[command(flatten)]
    pub reserves: Reserves,

    /// Readings while inserting: the inserts are timed in this many pieces, the retrains
    /// counted after each (a record each).
    #[arg(long, default_value_t = 10)]
    pub checkpoints: usize,

    /// The dataset, the timed loops and where the records go.
    #[command(flatten)]
    pub common: Common,

    /// Draw retrains against keys inserted, at the first reserve (Fig. 18b), here as SVG.
    #[arg(long)]
    pub svg_progress: Option<PathBuf>,

    /// Draw the retrain count against reserved space (Fig. 18c) here as SVG.
    #[arg(long)]
    pub svg_count: Option<PathBuf>,

    /// Draw the total retrain time against reserved space (Fig. 18c) here as SVG.
    #[arg(long)]
    pub svg_total: Option<PathBuf>,

    /// Draw the average retrain time against reserved space (Fig. 18c) here as SVG.
    #[arg(long)]
    pub svg_average: Option<PathBuf>,

    /// Draw insert time (retraining excluded) against retraining time (Fig. 18d) here as SVG.
    #[arg(long)]
    pub svg_tradeoff: Option<PathBuf>,
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

    /// Lookups per timed loop.
    #[command(flatten)]
    pub queries: Queries,

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

    /// Lookups per timed loop.
    #[command(flatten)]
    pub queries: Queries,

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
        Dimension::Insert(args) => insert(args),
        Dimension::Retrain(args) => retrain(args),
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
    let mut batch = Batch::default();
    let sizes = counts("partition sizes", &args.sizes)?;
    let eps = counts("maximum errors", &args.eps)?;
    let queries = parse_ops("query count", &args.queries.queries)?;
    check_figures(
        &args.common.dataset,
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
        write_figure(
            &mut batch,
            path,
            &format!("{}: leaf lookup time", dataset.name),
            &axes,
            lines(|r| r.lookup_ns),
        )?;
    }
    if let Some(path) = &args.svg_leaves {
        let axes = Axes {
            x: "average error (positions, log scale)",
            y: "leaves",
            x_log: true,
            x_bytes: false,
        };
        write_figure(
            &mut batch,
            path,
            &format!("{}: leaves", dataset.name),
            &axes,
            lines(|r| r.leaves as f64),
        )?;
    }
    finish(batch, args.common.out.as_ref(), &records)
}

/// Refuses, before anything runs, a records file of no known format, and a records file or
/// figures that exist, or any of them that is the dataset's file.
fn check_figures(
    dataset: &str,
    out: Option<&PathBuf>,
    svgs: &[&Option<PathBuf>],
) -> anyhow::Result<()> {
    check_out_inputs(out, dataset, false)?;
    let inputs = super::dataset_inputs(dataset);
    for svg in svgs.iter().copied().flatten() {
        super::output::check(svg, &inputs, false)?;
    }
    Ok(())
}

/// Draws `lines` into the SVG file `path`, staged in `batch` (renamed into place with the
/// command's other outputs once all are whole).
fn write_figure(
    batch: &mut Batch,
    path: &std::path::Path,
    title: &str,
    axes: &Axes<'_>,
    lines: Vec<(String, Vec<(f64, f64)>)>,
) -> anyhow::Result<()> {
    let note = format!("wrote {}", path.display());
    batch.write(path, note, |staged| write_lines(staged, title, axes, lines))
}

/// Stages the records for `--out` in `batch` and renames every output into place.
fn finish<R: serde::Serialize>(
    mut batch: Batch,
    out: Option<&PathBuf>,
    records: &[R],
) -> anyhow::Result<()> {
    stage_out(&mut batch, out, records)?;
    batch.commit()
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
    let mut batch = Batch::default();
    let eps = counts("leaf errors", &args.eps)?;
    let queries = parse_ops("query count", &args.queries.queries)?;
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
    check_figures(&args.common.dataset, args.common.out.as_ref(), &[&args.svg])?;
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
        write_figure(
            &mut batch,
            path,
            &format!("{}: index structures", dataset.name),
            &axes,
            lines,
        )?;
    }
    finish(batch, args.common.out.as_ref(), &records)
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

/// The configuration `insert` and `retrain` share, checked before anything runs.
fn update_config(
    strategies: &str,
    reserves: &Reserves,
    checkpoints: usize,
    common: &Common,
) -> anyhow::Result<UpdateConfig> {
    let config = UpdateConfig {
        subjects: strategies
            .split(',')
            .map(|s| s.trim().to_string())
            .collect(),
        reserves: counts("reserved spaces", &reserves.reserve)?,
        eps: reserves.eps,
        checkpoints,
        runs: common.runs,
        seed: common.seed,
    };
    insert_dimension::check_config(&config)?;
    Ok(config)
}

/// The records after all inserts.
fn totals(records: &[DimsUpdateRecord]) -> Vec<&DimsUpdateRecord> {
    records
        .iter()
        .filter(|r| r.inserted == r.n - r.loaded)
        .collect()
}

/// Runs the subjects of `config` on `common`'s dataset and prints the table of their
/// [`totals`].
fn run_updates(config: &UpdateConfig, common: &Common) -> anyhow::Result<Vec<DimsUpdateRecord>> {
    let dataset = load_numeric_dataset(&common.dataset, common.seed)?;
    let records = insert_dimension::run(&dataset, config, &mut Bars::default())?;
    let totals = totals(&records);
    println!(
        "{} ({} distinct keys): {} bulk-loaded, {} inserted, median of {} runs, {}",
        dataset.name, totals[0].n, totals[0].loaded, totals[0].inserted, common.runs, totals[0].cpu
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "strategy",
        "reserve",
        "insert ns",
        "retrains",
        "retrain total s",
        "retrain avg us",
        "insert s w/o retrain",
        "bytes",
    ]);
    for r in &totals {
        t.add_row([
            r.strategy.clone(),
            r.reserve.map_or("auto".to_string(), |r| r.to_string()),
            format!("{:.0}", r.insert_ns),
            r.retrains.to_string(),
            format!("{:.3}", r.retrain_s),
            format!("{:.1}", r.retrain_avg_us),
            format!("{:.3}", r.insert_s - r.retrain_s),
            human_bytes(r.bytes),
        ]);
    }
    for column in 1..8 {
        if let Some(c) = t.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    println!("{t}");
    Ok(records)
}

/// One line per strategy of `y` against the reserved space; ALEX, which has none, as a flat
/// line across the reserves.
fn against_reserve(
    totals: &[&DimsUpdateRecord],
    reserves: &[usize],
    y: fn(&DimsUpdateRecord) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let (lo, hi) = (
        reserves.iter().min().copied().unwrap_or(1) as f64,
        reserves.iter().max().copied().unwrap_or(1) as f64,
    );
    let mut lines = lines_of(totals.iter().filter_map(|r| {
        r.reserve
            .map(|reserve| (r.strategy.as_str(), (reserve as f64, y(r))))
    }));
    for r in totals.iter().filter(|r| r.reserve.is_none()) {
        lines.push((
            format!("{} (reserve automatic)", r.strategy),
            vec![(lo, y(r)), (hi, y(r))],
        ));
    }
    lines
}

/// Draws `lines` to `path`, if given, staged in `batch`.
fn draw(
    batch: &mut Batch,
    path: Option<&PathBuf>,
    title: &str,
    axes: &Axes<'_>,
    lines: impl FnOnce() -> Vec<(String, Vec<(f64, f64)>)>,
) -> anyhow::Result<()> {
    if let Some(path) = path {
        write_figure(batch, path, title, axes, lines())?;
    }
    Ok(())
}

/// The x axis of the reserved space.
const RESERVE_AXIS: &str = "reserved space (slots, log scale)";

fn insert(args: InsertArgs) -> anyhow::Result<()> {
    let mut batch = Batch::default();
    let config = update_config(&args.strategies, &args.reserves, 1, &args.common)?;
    check_figures(&args.common.dataset, args.common.out.as_ref(), &[&args.svg])?;
    let records = run_updates(&config, &args.common)?;
    let totals = totals(&records);
    let axes = Axes {
        x: RESERVE_AXIS,
        y: "insert (ns, retraining included)",
        x_log: true,
        x_bytes: false,
    };
    draw(
        &mut batch,
        args.svg.as_ref(),
        &format!("{}: insertion strategies", records[0].dataset),
        &axes,
        || against_reserve(&totals, &config.reserves, |r| r.insert_ns),
    )?;
    finish(batch, args.common.out.as_ref(), &records)
}

fn retrain(args: RetrainArgs) -> anyhow::Result<()> {
    let mut batch = Batch::default();
    let config = update_config(
        &args.strategies,
        &args.reserves,
        args.checkpoints,
        &args.common,
    )?;
    check_figures(
        &args.common.dataset,
        args.common.out.as_ref(),
        &[
            &args.svg_progress,
            &args.svg_count,
            &args.svg_total,
            &args.svg_average,
            &args.svg_tradeoff,
        ],
    )?;
    let records = run_updates(&config, &args.common)?;
    let totals = totals(&records);
    let name = records[0].dataset.clone();
    let first = config.reserves[0] as u64;
    let vs_reserve = |y: &'static str| Axes {
        x: RESERVE_AXIS,
        y,
        x_log: true,
        x_bytes: false,
    };
    draw(
        &mut batch,
        args.svg_progress.as_ref(),
        &format!("{name}: retrains while inserting (reserve {first})"),
        &Axes {
            x: "keys inserted",
            y: "retrains so far",
            x_log: false,
            x_bytes: false,
        },
        || {
            lines_of(
                records
                    .iter()
                    .filter(|r| r.reserve.is_none_or(|r| r == first))
                    .map(|r| (r.strategy.as_str(), (r.inserted as f64, r.retrains as f64))),
            )
        },
    )?;
    draw(
        &mut batch,
        args.svg_count.as_ref(),
        &format!("{name}: retrain count"),
        &vs_reserve("retrains"),
        || against_reserve(&totals, &config.reserves, |r| r.retrains as f64),
    )?;
    draw(
        &mut batch,
        args.svg_total.as_ref(),
        &format!("{name}: total retrain time"),
        &vs_reserve("retraining, total (s)"),
        || against_reserve(&totals, &config.reserves, |r| r.retrain_s),
    )?;
    draw(
        &mut batch,
        args.svg_average.as_ref(),
        &format!("{name}: average retrain time"),
        &vs_reserve("one retrain, mean (us)"),
        || against_reserve(&totals, &config.reserves, |r| r.retrain_avg_us),
    )?;
    draw(
        &mut batch,
        args.svg_tradeoff.as_ref(),
        &format!("{name}: insertion against retraining"),
        &Axes {
            x: "retraining, total (s)",
            y: "insertion without retraining, total (s)",
            x_log: false,
            x_bytes: false,
        },
        || {
            lines_of(
                totals
                    .iter()
                    .map(|r| (r.strategy.as_str(), (r.retrain_s, r.insert_s - r.retrain_s))),
            )
        },
    )?;
    finish(batch, args.common.out.as_ref(), &records)
}
