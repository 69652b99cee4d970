//! `lidx-sql-bench`: lidx tables against the same rows as sorted Parquet, through DataFusion, in
//! one process (issue 33's measurement).
//!
//! ```text
//! lidx table create --from gen:uniform-sparse:10M --ratio 1,10,100,1000 --out t/
//! lidx-sql-bench --tables t/ --json results.json
//! ```
//!
//! It reads the directory `lidx table create --out` wrote (`large`, `u64` keys, and the
//! smaller tables `r<R>`), writes each table again as sorted Parquet through DataFusion
//! (`sides`), draws the queries from the larger table's keys with a fixed seed (`workload`:
//! `IN` lists, key ranges, a full-scan aggregate, and each smaller table joined with the larger
//! one), and runs every query on every side `--runs` times, the sides in turn within a run
//! (in an order reversed from one query to the next: `measure_group`).
//! Every answer is checked: its size against what the query must return, and its rows
//! (count and checksum, `answer`) against the first side's; one wrong answer fails the run.
//! It prints the medians (`report`), and writes them with every sample as JSON on request.
//!
//! A separate binary rather than a `lidx-sql` subcommand: it needs DataFusion's Parquet, which
//! the crate compiles only with its `parquet` feature (off by default), while `lidx-sql`
//! builds without it; `required-features` keeps the default build from compiling either.
//! Errors go to stderr with exit code 2 for a command line to fix (a missing or empty
//! directory) and 1 otherwise (a wrong answer among them).

mod answer;
mod cold;
mod floor;
mod report;
mod sides;
mod workload;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use datafusion::physical_plan::displayable;

use answer::{answer_of, check, Answer};
use report::{GroupResult, Report, SideResult};
use sides::{floor_name, Side, Sides};
use workload::{Class, Expect, Group, LARGE};

/// Time lidx tables against the same rows as sorted Parquet, and index joins against hash
/// joins, with every answer checked.
///
/// Cost: writes every table once more as Parquet (about its own size again), then runs
/// `--runs` times 3 point groups and 5 range groups of `--instances` queries each, one full
/// scan and one join per smaller table, on each side; a 10M-row table takes minutes, most of
/// it the scans and the ratio-1 join.
#[derive(Debug, Parser)]
#[command(name = "lidx-sql-bench", version)]
struct Args {
    /// A directory `lidx table create --out` wrote: `large` (u64 keys) and any `r<R>`.
    #[arg(long)]
    tables: PathBuf,

    /// Where the Parquet copies go (`<name>.parquet`, replaced if there); default:
    /// `<tables>/parquet`.
    #[arg(long)]
    parquet_dir: Option<PathBuf>,

    /// Query classes to run, comma-separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    class: Vec<Class>,

    /// Times each query runs on each side; the report gives medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,

    /// Queries (different keys) per point and range group.
    #[arg(long, default_value_t = 5)]
    instances: usize,

    /// Seed of the query keys.
    #[arg(long, default_value_t = 42)]
    seed: u64,

    /// Partitions a scan is split into (DataFusion's `target_partitions`); default: the
    /// machine's cores.
    #[arg(long)]
    partitions: Option<usize>,

    /// Drop each side's files from the OS page cache before each query, so that every query
    /// starts from the disk on both sides (otherwise both sides' pages stay cached).
    #[arg(long)]
    cold: bool,

    /// Also write the results, every sample included, as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Where each side's copy of a table is.
struct Files {
    tables: PathBuf,
    parquet: PathBuf,
}

impl Files {
    /// The file `side` reads for `table`.
    fn of(&self, side: Side, table: &str) -> PathBuf {
        match side {
            Side::Lidx | Side::LidxIndexJoin => self.tables.join(table),
            Side::Parquet => self.parquet.join(format!("{table}.parquet")),
        }
    }
}

/// A command line to fix.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            let usage = error.chain().any(|cause| cause.is::<Usage>());
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

/// The smaller tables `r<R>` in `dir`, by ratio.
fn smaller_tables(dir: &Path) -> anyhow::Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("list {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ratio = name.strip_prefix('r').and_then(|r| r.parse::<u64>().ok());
        if let (Some(ratio), true) = (ratio, entry.file_type()?.is_file()) {
            out.push((ratio, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

fn run(args: Args) -> anyhow::Result<()> {
    let large = args.tables.join(LARGE);
    if !large.is_file() {
        return Err(Usage(format!(
            "{} holds no table `large`; write one with `lidx table create --from gen:uniform-sparse:10M \
             --ratio 1,10,100,1000 --out {}/`",
            args.tables.display(),
            args.tables.display()
        ))
        .into());
    }
    if args.runs == 0 || args.instances == 0 {
        return Err(Usage("--runs and --instances must be at least 1".into()).into());
    }
    let classes = if args.class.is_empty() {
        vec![Class::Point, Class::Range, Class::Scan, Class::Join]
    } else {
        args.class.clone()
    };
    let smaller = if classes.contains(&Class::Join) {
        smaller_tables(&args.tables)?
    } else {
        Vec::new()
    };
    let partitions = args.partitions.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(partitions)
        .enable_all()
        .build()
        .context("start the query threads")?;
    let report = runtime.block_on(measure(&args, classes, smaller, partitions))?;
    report.print(&mut std::io::stdout().lock())?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report.json())?)
            .with_context(|| format!("write {}", path.display()))?;
    }
    Ok(())
}

async fn measure(
    args: &Args,
    classes: Vec<Class>,
    smaller: Vec<(u64, PathBuf)>,
    partitions: usize,
) -> anyhow::Result<Report> {
    let mut tables = vec![(LARGE.to_string(), args.tables.join(LARGE))];
    tables.extend(smaller.iter().map(|(r, p)| (format!("r{r}"), p.clone())));
    let sides = Sides::open(&tables, partitions).await?;
    let keys = sides.keys(LARGE).await?;
    if keys.is_empty() {
        return Err(Usage(format!("{} is empty", args.tables.join(LARGE).display())).into());
    }
    let parquet_dir = args
        .parquet_dir
        .clone()
        .unwrap_or_else(|| args.tables.join("parquet"));
    std::fs::create_dir_all(&parquet_dir)
        .with_context(|| format!("create {}", parquet_dir.display()))?;
    let files = Files {
        tables: args.tables.clone(),
        parquet: parquet_dir,
    };
    let mut report = Report::new(keys.len() as u64, partitions, args.runs, args.cold);
    for (name, path) in &tables {
        let parquet = files.of(Side::Parquet, name);
        eprintln!("progress: writing {name} as {}", parquet.display());
        let start = std::time::Instant::now();
        sides.write_parquet(name, &parquet).await?;
        report.add_table(name, path, &parquet, start.elapsed())?;
    }
    let mut ratios = Vec::new();
    for (ratio, path) in &smaller {
        let rows = lidx_datafusion::LidxTable::open_table(path)?.rows();
        ratios.push((*ratio, rows));
    }
    let groups = workload::groups(&classes, &keys, &ratios, args.instances, args.seed);
    drop(keys);
    for group in &groups {
        eprintln!("progress: {} {}", group.class.name(), group.param);
        report.groups.push(
            measure_group(&sides, group, args.runs, args.cold.then_some(&files))
                .await
                .with_context(|| format!("{} {}", group.class.name(), group.param))?,
        );
    }
    Ok(report)
}

/// Runs every query of `group` `runs` times on each of its sides, checking every answer;
/// with `cold`, drops the files a query reads from the page cache before it runs.
async fn measure_group(
    sides: &Sides,
    group: &Group,
    runs: usize,
    cold: Option<&Files>,
) -> anyhow::Result<GroupResult> {
    let names: &[Side] = if group.class == Class::Join {
        &[Side::LidxIndexJoin, Side::Lidx, Side::Parquet]
    } else {
        &[Side::Lidx, Side::Parquet]
    };
    let mut results: Vec<SideResult> = names.iter().map(|&s| SideResult::new(s)).collect();
    let mut answers: Vec<Option<(Answer, Side)>> = vec![None; group.queries.len()];
    let mut floor = Vec::new();
    let with_floor = matches!(group.class, Class::Point | Class::Range);
    // What runs in each step (one query on every side), the two sides a ratio compares first
    // and last: lidx and Parquet with the floor between them, or the index join and the hash
    // join with Parquet between them (the scan: lidx, Parquet). Steps alternate between this
    // order and its reverse, so neither compared side runs right after the other (but in the
    // scan's two-side order) and each follows the middle side or its own run of the step
    // before, as often over an even number of steps: whatever runs right after a heavier
    // query is slower (module docs of `floor`), and one fixed order gave that cost to one side.
    // An entry is an index into `results`, or `None` for the floor.
    let mut order: Vec<Option<usize>> = match (group.class, with_floor) {
        (Class::Join, _) => vec![Some(0), Some(2), Some(1)],
        (_, true) => vec![Some(0), None, Some(1)],
        (_, false) => vec![Some(0), Some(1)],
    };
    for run in 0..runs {
        for (q, query) in group.queries.iter().enumerate() {
            for &entry in &order {
                let Some(at) = entry else {
                    floor.push(sides.plan(&query.sql(floor_name)).await?);
                    continue;
                };
                let result = &mut results[at];
                let side = result.side;
                let sql = query.sql(|t| side.table(t));
                if let Some(files) = cold {
                    for table in &query.tables {
                        cold::drop_cached(&files.of(side, table))?;
                    }
                }
                let timed = sides.run(side, &sql).await?;
                let answer = answer_of(&timed.batches)?;
                check(&timed.batches, answer, query.expect)
                    .with_context(|| format!("{}: {sql:.200}", side.name()))?;
                match answers[q] {
                    None => answers[q] = Some((answer, side)),
                    Some((first, by)) if first != answer => bail!(
                        "{} answered {answer:?}, {} {first:?}: {sql:.200}",
                        side.name(),
                        by.name()
                    ),
                    Some(_) => {}
                }
                if run == 0 && group.class == Class::Join {
                    check_join_plan(side, timed.physical.as_ref())?;
                }
                result.push(timed.plan, timed.total);
            }
            order.reverse();
        }
    }
    let rows = group
        .queries
        .iter()
        .map(|q| match q.expect {
            Expect::Rows(n) | Expect::Count(n) => n,
        })
        .sum();
    Ok(GroupResult {
        class: group.class,
        param: group.param.clone(),
        ratio: group.ratio,
        queries: group.queries.len(),
        rows,
        sides: results,
        floor,
    })
}

/// Checks that a join ran as `side` means: an index join, or a hash join.
fn check_join_plan(
    side: Side,
    plan: &dyn datafusion::physical_plan::ExecutionPlan,
) -> anyhow::Result<()> {
    let text = displayable(plan).indent(true).to_string();
    let index = text.contains("LidxIndexJoinExec");
    let hash = text.contains("HashJoinExec");
    let right = match side {
        Side::LidxIndexJoin => index && !hash,
        Side::Lidx | Side::Parquet => hash && !index,
    };
    if !right {
        bail!(
            "the {} side's join did not plan as expected:\n{text}",
            side.name()
        );
    }
    Ok(())
}
