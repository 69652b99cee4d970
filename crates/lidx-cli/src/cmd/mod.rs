//! The subcommands, one file each, and what they share: progress (bars on a terminal, lines
//! otherwise) and dataset loading.

mod args;
pub mod bench;
pub mod bench_args;
pub mod bench_disk;
pub mod bench_updatable;
pub mod build;
mod cleanup;
pub mod dims;
pub mod disk;
pub mod gen;
pub mod join;
pub mod kv;
pub mod output;
pub mod recovery;
pub mod report;
pub mod repro;
pub mod start;
pub mod stats;
pub mod table;
pub mod tpcc;
pub mod verify;
pub mod ycsb;

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use lidx_bench::dataset::{self, AnyDataset, Dataset};
use lidx_bench::runner::Progress;

/// Whether a dataset spec names string keys: the bench's decision, which its routing reads.
pub use lidx_bench::route::is_string_dataset;

/// The subcommands of `lidx`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark indexes on a dataset: build time, memory, checked lookup latency.
    ///
    /// Every answer is checked against the true lower bound; a wrong one fails the run.
    /// Cost with the defaults (10M lognormal keys, 1M queries, 3 timed runs, five indexes):
    /// about 25 s on 2 cores (5-7 s for the data, the true answers and the binary-search
    /// baseline, then 2-5 s per index) and about 450 MB of memory at the peak (80 MB keys,
    /// 16 MB queries and true answers, the largest index: the B+-tree's 175 MB).
    Bench(bench::Args),
    /// Write on-disk indexes of a dataset into a directory (one file per index), for
    /// `lidx bench --on-disk --device file:<dir>`.
    ///
    /// Cost: one pass over the keys per index plus the model build; the files take about
    /// 16 bytes per key (key + 8-byte payload) plus the B+-tree's inner nodes. 50M keys take
    /// about 0.8 GB per index and tens of seconds.
    Build(build::Args),
    /// Paper 001 §IV's design dimensions of updatable learned indexes, one command each, with a
    /// table, CSV and SVG: `approx` (approximation algorithms, Fig. 17a-b), `structure` (index
    /// structures over the same leaves, Fig. 17c).
    Dims(dims::Args),
    /// Write a generated dataset to an SOSD file (u64 count, then the keys, little-endian).
    ///
    /// Cost: the time to generate and sort the keys (under a second per 10M lognormal keys)
    /// and 8 bytes per key of memory and disk.
    Gen(gen::Args),
    /// Join two tables on disk (paper 000): sort-merge, hash, grace-hash, or an indexed
    /// nested-loop join with a B+-tree or a learned index; one JSON line of figures.
    ///
    /// Cost: reading both tables once (sort-merge, hash, INLJ at ratio 1) or one window per key
    /// of the smaller table (INLJ), writing the output; an index is built once (seconds per
    /// 10M keys) and saved next to the larger table.
    Join(join::Args),
    /// Print statistics of a dataset: size, duplicates, min/max, PGM segments at eps 8/64/512,
    /// LIPP conflict degree.
    ///
    /// Cost: loading the data (8 bytes per key) plus three optimal-PLA passes, about 2 s per
    /// 10M keys.
    Stats(stats::Args),
    /// START (paper 004): `calibrate` the cost model, node mix `stats`, read-mostly `bench`.
    Start(start::Args),
    /// Paper 002's YCSB-derived read-only / write-only / balanced workloads on the hybrid
    /// index and the disk B+-tree at equal memory (inner nodes resident), every read checked;
    /// `--curve` sweeps memory (Fig. 11) into CSV and SVG.
    ///
    /// Cost with the defaults (1M lognormal keys, sim:nvme, 100K ops, 1 run, three workloads,
    /// two stores): about 40 s on 2 cores, most of it building stores and the hybrid's merges,
    /// and about 100 MB of memory; each extra `--runs` adds as much. On `file:<dir>` every read is an O_DIRECT read (0.1-1 ms) and
    /// each run writes about 16 bytes per key to <dir>. `--curve` multiplies the runs by the
    /// B+-tree's levels plus the budgets (about 12 stores per workload).
    Ycsb(ycsb::Args),
    /// TPC-C with the tuples in memory and every index on disk (paper 002 §10.6, Table 8):
    /// the nine tables, the five transactions at the standard mix, once per `--index`
    /// structure on the same database; transactions per second, index space, blocks per
    /// transaction; the consistency conditions 1-4 checked through the indexes after each run.
    ///
    /// Cost: per warehouse about 75 MB of tuples in memory and 10 MB of indexes (in memory too
    /// on `sim:`; 100 warehouses peaked at 8.7 GB), under a second to load and bulk load; then
    /// the transactions, about 28 block reads and 4-7 writes each (on `file:<dir>` each a 4 KiB
    /// O_DIRECT request: 200K transactions took 5-8 minutes per structure here).
    Tpcc(tpcc::Args),
    /// Write join tables from a dataset: `lidx table create --from <dataset> --ratio R`.
    Table(table::Args),
    /// Paper 001's recovery time (Fig. 16) and space (Table III) of the `log` store engine
    /// over each updatable map: load, reopen (rebuilding the map from the log), check.
    ///
    /// Cost: per map, one load of the dataset (about 230 bytes of log per key with 200-byte
    /// values) and `--runs` reopenings; memory is the map plus the log's pages.
    Recovery(recovery::Args),
    /// Turn result files (`--out` of bench, ycsb, dims, recovery; join's JSON lines) and
    /// findings tables (`docs/results/*.md`) into one static HTML page: machine and commands, a
    /// summary, SVG charts, the findings and every record; no JavaScript.
    ///
    /// Cost: reading the files and drawing a chart per figure, well under a second for
    /// thousands of records.
    Report(report::Args),
    /// Regenerate a paper's table or figure by name: `lidx repro list` names them all;
    /// `lidx repro 003-fig6` (or `003`, or `all`) runs the commands that make it and writes
    /// `<id>.jsonl` (for `lidx report`), `<id>.csv` and SVGs into `--out`.
    ///
    /// Cost: `--scale small` (the default) takes seconds to a few minutes per experiment on 2
    /// cores (100K-1M keys); `--scale full` the README's sizes (10M-50M keys, up to an hour
    /// for the largest). `--dry-run` prints the commands without running them.
    Repro(repro::Args),
    /// A store of byte keys and values: `create`, `load`, `get`, `put`, `del`, `scan`,
    /// `stats`, `check`, `compact`, `torture`.
    Kv(kv::Args),
    /// Read every index file and table in a directory (and the store, if it holds one),
    /// verifying every checksum and cross-link; name what is damaged (exit code 1). A file
    /// that looks like lidx's (named as lidx names its files, a magic a few bits off, block
    /// checksums behind a zeroed header) but reads as none is damage; others are listed as
    /// skipped. Each index line shows the fingerprint of the keys it was built from.
    ///
    /// Cost: one sequential read of every file, plus one lookup per entry of an updatable
    /// index (ALEX, LIPP, disk PGM, FITing-tree, learned-inner B+-tree).
    Verify(verify::Args),
}

/// Runs one subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Bench(args) => bench::run(args),
        Command::Build(args) => build::run(args),
        Command::Dims(args) => dims::run(args),
        Command::Gen(args) => gen::run(args),
        Command::Join(args) => join::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Start(args) => start::run(args),
        Command::Ycsb(args) => ycsb::run(args),
        Command::Tpcc(args) => tpcc::run(args),
        Command::Table(args) => table::run(args),
        Command::Recovery(args) => recovery::run(args),
        Command::Report(args) => report::run(args),
        Command::Repro(args) => repro::run(args),
        Command::Kv(args) => kv::run(args),
        Command::Verify(args) => verify::run(args),
    }
}

/// Progress on stderr: bars on a terminal; otherwise (a log, a pipe, CI) plain lines, one when
/// a task starts, at most one every [`LINE_EVERY`] while it runs, and one when it ends, so a
/// long command is never silent.
#[derive(Debug, Default)]
pub struct Bars {
    bar: Option<ProgressBar>,
    line: Option<LineProgress>,
}

/// How often a progress line may be printed when stderr is not a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(2);

/// A task's progress printed as lines.
#[derive(Debug)]
struct LineProgress {
    task: String,
    total: u64,
    done: u64,
    started: Instant,
    printed: Instant,
}

impl LineProgress {
    fn print(&self, what: &str) {
        let secs = self.started.elapsed().as_secs_f64();
        if self.total == 0 {
            note!("progress: {}: {what} ({secs:.1} s)", self.task);
        } else {
            let pct = 100.0 * self.done as f64 / self.total as f64;
            note!(
                "progress: {}: {what} {}/{} ({pct:.0}%, {secs:.1} s)",
                self.task,
                self.done,
                self.total
            );
        }
    }
}

/// True when stderr is a terminal, where bars can redraw themselves.
fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

impl Progress for Bars {
    fn begin(&mut self, task: &str, total: u64) {
        self.end();
        if !on_terminal() {
            let now = Instant::now();
            let line = LineProgress {
                task: task.to_string(),
                total,
                done: 0,
                started: now,
                printed: now,
            };
            line.print("started");
            self.line = Some(line);
            return;
        }
        self.bar = Some(if total == 0 {
            spinner(task)
        } else {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg:>28} [{bar:30}] {percent:>3}% {elapsed_precise} eta {eta}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            );
            bar.set_message(task.to_string());
            bar
        });
    }

    fn advance(&mut self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(done);
        }
        if let Some(line) = &mut self.line {
            line.done += done;
            if line.printed.elapsed() >= LINE_EVERY {
                line.printed = Instant::now();
                line.print("at");
            }
        }
    }

    fn end(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some(line) = self.line.take() {
            line.print("done");
        }
    }
}

/// A spinner for a step of unknown length; off a terminal, one progress line when it starts
/// (the step's own output or the next line says when it ended).
pub fn spinner(task: &str) -> ProgressBar {
    if !on_terminal() {
        note!("progress: {task}");
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}")
            .expect("the template is valid"),
    );
    bar.set_message(task.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// The existing files a dataset spec reads (`sosd:<path>`, `text:<path>`, a bare path), each
/// as the input of `--dataset`: what an output of the command must never be
/// ([`output::check`]). Generated datasets read none.
pub fn dataset_inputs(spec: &str) -> Vec<(&'static str, &std::path::Path)> {
    let source = spec.split_once(':').map_or(spec, |(_, path)| path);
    let mut files: Vec<&std::path::Path> = [spec, source]
        .into_iter()
        .map(std::path::Path::new)
        .filter(|p| p.is_file())
        .collect();
    files.dedup();
    files.into_iter().map(|p| ("--dataset", p)).collect()
}

/// Loads a dataset spec behind a spinner and prints its notes to stderr: `u64` keys, what most
/// commands take (another key type is a [`lidx_bench::BenchError::KeyType`]).
pub fn load_dataset(spec: &str, seed: u64) -> anyhow::Result<Dataset> {
    loading(spec, || dataset::load(spec, seed), |d: &Dataset| &d.notes)
}

/// Loads a dataset of numeric keys as `u64` ([`AnyDataset::into_numeric_image`]), as
/// [`load_dataset`] does.
pub fn load_numeric_dataset(spec: &str, seed: u64) -> anyhow::Result<Dataset> {
    loading(
        spec,
        || dataset::load_any(spec, seed)?.into_numeric_image(),
        |d: &Dataset| &d.notes,
    )
}

/// Loads a dataset spec of any key type, as [`load_dataset`] does.
pub fn load_any_dataset(spec: &str, seed: u64) -> anyhow::Result<AnyDataset> {
    loading(
        spec,
        || dataset::load_any(spec, seed),
        |d: &AnyDataset| &d.notes,
    )
}

fn loading<D>(
    spec: &str,
    load: impl FnOnce() -> lidx_bench::Result<D>,
    notes: impl Fn(&D) -> &Vec<String>,
) -> anyhow::Result<D> {
    let bar = spinner(&format!("loading {spec}"));
    let dataset = load();
    bar.finish_and_clear();
    let dataset = dataset?;
    for note in notes(&dataset) {
        note!("note: {note}");
    }
    Ok(dataset)
}
