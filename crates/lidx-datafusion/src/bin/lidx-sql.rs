//! `lidx-sql`: one SQL query over lidx table files and stores, through DataFusion.
//!
//! ```text
//! lidx-sql --table big=t/large --table kv=words "SELECT count(*) FROM big WHERE key BETWEEN 10 AND 99"
//! ```
//!
//! A separate binary in `lidx-datafusion`, so that building `lidx` (and `lidx bench`) never
//! compiles DataFusion. Each `--table NAME=PATH` registers a table file (`lidx table create`)
//! or, for a directory, a store (`lidx kv`, opened read-only); the query then names them.
//! The query is the last argument, or the text of `--file PATH` (`-`: standard input) when
//! it is longer than one argument may be.
//! Output is a text table, CSV or JSON lines; `--explain` prints the plans instead, where the
//! scans show the key filters they took over. Errors go to stderr with exit code 2 for a
//! command line to fix (a missing path, a bad or unknown table name, an unreadable `--file`)
//! and 1 otherwise.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use lidx_datafusion::{Error, SqlSession, DEFAULT_INDEX_JOIN_OUTER_ROWS};

/// Run one SQL query over lidx tables and stores.
///
/// Cost: registering a table loads its saved PGM index (or reads the table once to build and
/// save it as `<table>.pgm.idx`); registering a store reads it once to count it. A query
/// reads only the key ranges its key filters leave.
#[derive(Debug, Parser)]
#[command(name = "lidx-sql", version)]
struct Args {
    /// `NAME=PATH`: a table file or a store directory, queried as NAME (lowercase letters,
    /// digits, `_`). Repeat for more tables.
    #[arg(long = "table", value_name = "NAME=PATH", required = true)]
    tables: Vec<String>,

    /// How to print the rows.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,

    /// Print the logical and physical plans instead of running the query.
    #[arg(long)]
    explain: bool,

    /// Partitions a scan is split into (DataFusion's `target_partitions`); default: the
    /// machine's cores.
    #[arg(long)]
    partitions: Option<usize>,

    /// Join a side of at most this many rows (by DataFusion's estimate) with a table by
    /// looking its keys up in the table's learned index instead of hashing both sides: fewer
    /// blocks read while the side is small against the table.
    #[arg(long, value_name = "ROWS", default_value_t = DEFAULT_INDEX_JOIN_OUTER_ROWS)]
    index_join_rows: usize,

    /// Hash joins only (no index joins).
    #[arg(long)]
    no_index_join: bool,

    /// Run the query on the Ballista scheduler at HOST:PORT (`lidx-scheduler`) and its
    /// executors, which open the tables at the same paths. Index joins are then the
    /// scheduler's to choose (`lidx-scheduler --index-join-rows`).
    #[cfg(feature = "cluster")]
    #[arg(long, value_name = "HOST:PORT", conflicts_with_all = ["index_join_rows", "no_index_join"])]
    cluster: Option<String>,

    /// With --cluster: give up on a query the cluster has not answered within this many
    /// seconds (a scheduler with no executor keeps a query queued until one registers).
    #[cfg(feature = "cluster")]
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 600,
        requires = "cluster"
    )]
    timeout: u64,

    /// Read the query from this file (`-`: standard input) instead of the command line, for
    /// a query longer than the system lets one argument be (128 KiB on Linux: an `IN` list of
    /// about 6,000 keys).
    #[arg(long, value_name = "PATH", conflicts_with = "query")]
    file: Option<PathBuf>,

    /// The query: one SQL statement (or give --file).
    #[arg(required_unless_present = "file")]
    query: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// A text table.
    Table,
    /// CSV with a header line (binary columns as hex).
    Csv,
    /// One JSON object per row.
    Json,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            let usage = error.chain().any(|cause| {
                matches!(
                    cause.downcast_ref::<Error>(),
                    Some(
                        Error::Missing { .. }
                            | Error::BadName { .. }
                            | Error::DuplicateName { .. }
                            | Error::UnknownTable { .. }
                            | Error::ClusterUnreachable { .. }
                    )
                ) || cause.is::<BadTableArg>()
                    || cause.is::<BadQueryFile>()
            });
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

/// A `--table` value without `=`.
#[derive(Debug)]
struct BadTableArg(String);

impl std::fmt::Display for BadTableArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--table {:?} is not NAME=PATH; write it as --table name=path/to/table",
            self.0
        )
    }
}

impl std::error::Error for BadTableArg {}

/// `--file` could not be read.
#[derive(Debug)]
struct BadQueryFile {
    path: PathBuf,
    cause: std::io::Error,
}

impl std::fmt::Display for BadQueryFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot read the query from --file {}: {}; give a readable file of one SQL \
             statement, or - for standard input",
            self.path.display(),
            self.cause
        )
    }
}

impl std::error::Error for BadQueryFile {}

/// The query: the argument, or the text of `--file` (standard input for `-`).
fn query_text(args: &Args) -> anyhow::Result<String> {
    // clap takes exactly one of the two.
    let Some(path) = &args.file else {
        return Ok(args.query.clone().unwrap_or_default());
    };
    let read = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    };
    read.map_err(|cause| {
        BadQueryFile {
            path: path.clone(),
            cause,
        }
        .into()
    })
}

/// The cluster did not answer within `--timeout`.
#[cfg(feature = "cluster")]
#[derive(Debug)]
struct ClusterTimeout {
    scheduler: String,
    seconds: u64,
}

#[cfg(feature = "cluster")]
impl std::fmt::Display for ClusterTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the cluster at {} did not answer within {} s; check that executors are registered \
             with it (`lidx-executor --scheduler {}`), or give --timeout more seconds",
            self.scheduler, self.seconds, self.scheduler
        )
    }
}

#[cfg(feature = "cluster")]
impl std::error::Error for ClusterTimeout {}

fn run(args: Args) -> anyhow::Result<()> {
    let text = query_text(&args)?;
    let partitions = args.partitions.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(partitions)
        .enable_all()
        .build()
        .context("start the query's threads")?;
    let mut session = runtime.block_on(session(&args, partitions))?;
    for spec in &args.tables {
        let (name, path) = spec
            .split_once('=')
            .ok_or_else(|| BadTableArg(spec.clone()))?;
        session
            .register(name, &PathBuf::from(path))
            .with_context(|| format!("--table {spec}"))?;
    }
    let query = async {
        let frame = session.sql(&text).await?;
        let frame = if args.explain {
            frame.explain(false, false).map_err(Error::from)?
        } else {
            frame
        };
        frame.collect().await.map_err(Error::from)
    };
    #[cfg(feature = "cluster")]
    let batches = match &args.cluster {
        Some(scheduler) => {
            let limit = std::time::Duration::from_secs(args.timeout);
            runtime
                .block_on(async { tokio::time::timeout(limit, query).await })
                .map_err(|_| ClusterTimeout {
                    scheduler: scheduler.clone(),
                    seconds: args.timeout,
                })??
        }
        None => runtime.block_on(query)?,
    };
    #[cfg(not(feature = "cluster"))]
    let batches = runtime.block_on(query)?;
    print(
        &batches,
        if args.explain {
            Format::Table
        } else {
            args.format
        },
    )
}

/// The session the query runs in: on the cluster `--cluster` names, or in this process.
async fn session(args: &Args, partitions: usize) -> anyhow::Result<SqlSession> {
    #[cfg(feature = "cluster")]
    if let Some(scheduler) = &args.cluster {
        return Ok(SqlSession::connect(scheduler, partitions).await?);
    }
    let index_join = (!args.no_index_join).then_some(args.index_join_rows);
    Ok(SqlSession::with_index_join(partitions, index_join))
}

/// Prints `batches` to stdout in `format`.
fn print(batches: &[RecordBatch], format: Format) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        Format::Table => writeln!(out, "{}", pretty_format_batches(batches)?)?,
        Format::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            for batch in batches {
                writer.write(batch)?;
            }
        }
        Format::Json => {
            let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
            for batch in batches {
                writer.write(batch)?;
            }
            writer.finish()?;
        }
    }
    out.flush()?;
    Ok(())
}
