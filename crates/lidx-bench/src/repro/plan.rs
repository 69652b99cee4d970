//! The registry of `lidx repro`: every headline table and figure of the five papers as an
//! [`Experiment`] with an id (`003-fig6`), the caption it reproduces, the paper's section, its
//! sizes at each [`Scale`], and either a [`Plan`] or the reason it cannot run yet.
//!
//! A plan is the `lidx` commands a reader would type to regenerate the figure ([`Step`]s), not
//! a second copy of a runner: each step is one existing subcommand (`bench --on-disk`, `dims`,
//! `ycsb`, `recovery`, `join`, `stats --zero-interval`, ...), which loads the data, runs the
//! existing runner, checks every answer and writes its records, exactly as when typed by
//! hand. `lidx repro --dry-run` prints them. What the plan adds is the naming of the outputs:
//! the steps' records are gathered into `<id>.jsonl` (what `lidx report` reads), flattened to
//! `<id>.csv` and drawn as SVG ([`crate::repro::render`]).
//!
//! Scales: `small` finishes each experiment in minutes on 2 shared cores (100K-1M keys,
//! 10K-50K operations); `full` is the size the README's figures were measured at (10M-50M
//! keys), still far below the papers' 200M-800M. A `--dataset` given by the user replaces
//! every dataset of the plan, at either scale, and `--ops` the count of operations (a smaller
//! dataset holds out fewer keys to insert: a write workload takes at most as many inserts).

use std::path::{Path, PathBuf};

use crate::error::{BenchError, Result};
use crate::repro::{paper000, paper001, paper002, paper003, paper004};

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Minutes on 2 cores.
    Small,
    /// The README's sizes.
    Full,
}

impl Scale {
    /// Parses `small` or `full`.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "small" => Ok(Scale::Small),
            "full" => Ok(Scale::Full),
            _ => Err(BenchError::BadSpec {
                what: "scale",
                got: text.to_string(),
                expected: "small or full".to_string(),
            }),
        }
    }

    /// `small` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Small => "small",
            Scale::Full => "full",
        }
    }
}

/// The data and operation counts of an experiment at one scale.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// Dataset specs (`gen:lognormal:200K`); each is one run of the plan's steps.
    pub datasets: &'static [&'static str],
    /// The count each run takes, as the commands spell it (`20K`): operations or queries;
    /// empty where the experiment takes none.
    pub ops: &'static str,
}

/// Whether an experiment can run.
#[derive(Debug, Clone, Copy)]
pub enum Status {
    /// It runs: the plan's steps for a context.
    Ready(fn(&Context) -> Plan),
    /// It is listed but cannot run yet, for this reason (what is not built).
    NotYet(&'static str),
}

/// One table or figure of a paper.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// `<paper>-<table or figure>`: `003-fig6`, `002-table3`.
    pub id: &'static str,
    /// The paper's caption, quoted (shortened where it runs long).
    pub title: &'static str,
    /// The paper's section that reports it.
    pub section: &'static str,
    /// Sizes at `--scale small`.
    pub small: Sizes,
    /// Sizes at `--scale full`.
    pub full: Sizes,
    /// Ready, or why not.
    pub status: Status,
}

impl Experiment {
    /// The paper's number, `003` of `003-fig6`.
    pub fn paper(&self) -> &'static str {
        self.id.split('-').next().unwrap_or(self.id)
    }

    /// The sizes at `scale`.
    pub fn sizes(&self, scale: Scale) -> Sizes {
        match scale {
            Scale::Small => self.small,
            Scale::Full => self.full,
        }
    }

    /// What a plan is made for: `scale`, the user's `dataset` and count `ops` (replacing the
    /// experiment's own) and the output directory.
    pub fn context(
        &self,
        scale: Scale,
        dataset: Option<&str>,
        ops: Option<&str>,
        out: &Path,
    ) -> Context {
        let sizes = self.sizes(scale);
        Context {
            id: self.id,
            title: self.title,
            scale,
            datasets: match dataset {
                Some(d) => vec![d.to_string()],
                None => sizes.datasets.iter().map(|d| d.to_string()).collect(),
            },
            ops: ops.unwrap_or(sizes.ops).to_string(),
            out: out.to_path_buf(),
            work: out.join(format!("{}.work", self.id)),
        }
    }

    /// The plan for `context`; [`BenchError::NotReproducible`] when the experiment cannot run
    /// yet.
    pub fn plan(&self, context: &Context) -> Result<Plan> {
        match self.status {
            Status::Ready(build) => Ok(build(context)),
            Status::NotYet(why) => Err(BenchError::NotReproducible {
                id: self.id.to_string(),
                why: why.to_string(),
            }),
        }
    }
}

/// What a plan is made for.
#[derive(Debug, Clone)]
pub struct Context {
    /// The experiment's id.
    pub id: &'static str,
    /// Its caption, for figure titles.
    pub title: &'static str,
    /// The scale.
    pub scale: Scale,
    /// The datasets, one run of the steps each.
    pub datasets: Vec<String>,
    /// Operations per run.
    pub ops: String,
    /// The output directory.
    pub out: PathBuf,
    /// The scratch directory: the steps' parts of records, tables, store directories and the
    /// files they write, moved into `out` once all are written. `<out>/<id>.work` until the
    /// command that runs the plan names a private directory of its own.
    pub work: PathBuf,
}

impl Context {
    /// `<out>/<id><suffix>`: a file of this experiment in the output directory.
    pub fn file(&self, suffix: &str) -> PathBuf {
        self.out.join(format!("{}{suffix}", self.id))
    }

    /// The scratch directory ([`Context::work`]), removed by the command that made it once
    /// the experiment's outputs are in place.
    pub fn work(&self) -> PathBuf {
        self.work.clone()
    }

    /// `<work>/<id><suffix>`: where a step writes the file that becomes
    /// [`Context::file`]`(suffix)` once every step succeeded.
    pub fn staged(&self, suffix: &str) -> PathBuf {
        self.work.join(format!("{}{suffix}", self.id))
    }
}

/// Where a step's figures go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutput {
    /// The command writes records itself: `--out <part>.jsonl` is appended.
    Records,
    /// The command prints its records (one JSON object a line) on standard output.
    Stdout,
    /// The command writes no records (it makes tables for the next steps, or writes the
    /// files of [`Plan::files`] itself).
    Nothing,
}

/// One `lidx` command of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The arguments after `lidx`, subcommand first.
    pub args: Vec<String>,
    /// Where its figures go.
    pub output: StepOutput,
}

impl Step {
    /// A step from its arguments.
    pub fn new(output: StepOutput, args: &[&str]) -> Self {
        Step {
            args: args.iter().map(|a| a.to_string()).collect(),
            output,
        }
    }

    /// Adds `flag value`.
    pub fn arg(mut self, flag: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.args.push(flag.to_string());
        self.args
            .push(value.as_ref().to_string_lossy().into_owned());
        self
    }

    /// The command as a shell line (`lidx bench --dataset ...`), for `--dry-run` and errors.
    pub fn command_line(&self) -> String {
        std::iter::once("lidx".to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How the SVGs of an experiment are drawn from its records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// `lidx report`'s charts of the records (throughput against memory, blocks per
    /// operation, latency percentiles), one SVG each: `<id>-<chart>.svg`.
    Charts,
    /// Line plots of the records' fields, one SVG each: `<id>-<name>.svg`.
    Lines(&'static [Lines]),
    /// The commands draw their own SVGs (listed in [`Plan::files`]).
    ByCommand,
    /// No SVG: a table of the best record of each group, `<id>-best.csv` and
    /// `<id>-best.jsonl` (paper 002 Table 7: space at each index's best configuration).
    Best(&'static Best),
}

/// The best record per group, and what it costs in space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Best {
    /// Fields whose values make a group (`dataset`, `workload`).
    pub group: &'static [&'static str],
    /// The field naming the structure, whose value up to its first `:` joins the group: one
    /// group per structure over its configurations (`btree:resident=1` and
    /// `btree:resident=inner` are both `btree`).
    pub family: &'static str,
    /// The value a group's best record is highest in.
    pub by: Axis,
    /// Fields copied from the best record, in this order.
    pub columns: &'static [&'static str],
    /// Fields summed into the table's `total` column (memory and disk bytes).
    pub total: &'static [&'static str],
}

/// One line plot of records: each y series against x, a line per distinct value of the
/// `line` fields (and series, when there are several).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lines {
    /// The SVG is `<id>-<name>.svg`.
    pub name: &'static str,
    /// The x axis.
    pub x: X,
    /// The y series.
    pub ys: &'static [Axis],
    /// The y axis' caption.
    pub y_caption: &'static str,
    /// Fields whose values name a line (`workload`, `index`); fields with a single value over
    /// all records are left out of the names.
    pub line: &'static [&'static str],
}

/// Where a point sits on x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum X {
    /// A field of the record.
    Field(Axis),
    /// The position of the y series (1, 2, ...): a line per record through its series, for a
    /// breakdown (paper 003 Fig. 6: search, insert, SMO, maintenance).
    Series,
}

/// A number of a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    /// The caption (x) or the series' name (y).
    pub label: &'static str,
    /// The fields to read, the first present and numeric wins (`modeled_ops_per_s`, then
    /// `wall_ops_per_s`).
    pub fields: &'static [&'static str],
    /// Multiplies the value (1e-3 for Kops/s).
    pub factor: f64,
    /// A log scale (x only).
    pub log: bool,
    /// Byte sizes (x only).
    pub bytes: bool,
}

impl Axis {
    /// A linear axis of `fields`, unscaled.
    pub const fn of(label: &'static str, fields: &'static [&'static str]) -> Self {
        Axis {
            label,
            fields,
            factor: 1.0,
            log: false,
            bytes: false,
        }
    }

    /// The same, scaled by `factor`.
    pub const fn scaled(self, factor: f64) -> Self {
        Axis { factor, ..self }
    }

    /// The same on a log scale of bytes.
    pub const fn log_bytes(self) -> Self {
        Axis {
            log: true,
            bytes: true,
            ..self
        }
    }
}

/// What an experiment runs and writes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The commands, in order.
    pub steps: Vec<Step>,
    /// How the SVG is drawn.
    pub figure: Figure,
    /// Files the commands write themselves (their own CSV and SVG), in the scratch directory
    /// ([`Context::staged`]); moved into the output directory with the rest.
    pub files: Vec<PathBuf>,
}

impl Plan {
    /// The output files: `<id>.jsonl`, `<id>.csv`, the line plots `<id>-<name>.svg` and the
    /// commands' own files (the charts' names are known only once drawn; they start `<id>-`).
    pub fn outputs(&self, context: &Context) -> Vec<PathBuf> {
        let mut out = vec![context.file(".jsonl"), context.file(".csv")];
        match self.figure {
            Figure::Lines(plots) => out.extend(
                plots
                    .iter()
                    .map(|p| context.file(&format!("-{}.svg", p.name))),
            ),
            Figure::Best(_) => out.extend([context.file("-best.csv"), context.file("-best.jsonl")]),
            Figure::Charts | Figure::ByCommand => {}
        }
        out.extend(
            self.files
                .iter()
                .filter_map(|f| f.file_name())
                .map(|name| context.out.join(name)),
        );
        out
    }
}

/// Every experiment, paper by paper, in the order of the issue.
pub fn all() -> Vec<&'static Experiment> {
    paper000::EXPERIMENTS
        .iter()
        .chain(paper001::EXPERIMENTS)
        .chain(paper002::EXPERIMENTS)
        .chain(paper003::EXPERIMENTS)
        .chain(paper004::EXPERIMENTS)
        .collect()
}

/// The experiments `selectors` name: ids (`003-fig6`), papers (`003`) or `all`, each once, in
/// the registry's order; [`BenchError::UnknownExperiment`] for a name that matches none.
pub fn select(selectors: &[String]) -> Result<Vec<&'static Experiment>> {
    let every = all();
    let mut chosen = vec![false; every.len()];
    for s in selectors {
        let mut any = false;
        for (i, e) in every.iter().enumerate() {
            if s == "all" || s == e.id || s == e.paper() {
                chosen[i] = true;
                any = true;
            }
        }
        if !any {
            return Err(BenchError::UnknownExperiment {
                got: s.clone(),
                known: every.iter().map(|e| e.id.to_string()).collect(),
            });
        }
    }
    Ok(every
        .into_iter()
        .zip(chosen)
        .filter_map(|(e, c)| c.then_some(e))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_experiment_that_cannot_run_yet_says_why() {
        let sizes = Sizes {
            datasets: &["gen:lognormal:1K"],
            ops: "10",
        };
        let e = Experiment {
            id: "009-fig1",
            title: "a figure whose command is not built",
            section: "§1",
            small: sizes,
            full: sizes,
            status: Status::NotYet("`lidx frobnicate` does not exist"),
        };
        let context = e.context(Scale::Small, None, None, Path::new("/nowhere"));
        match e.plan(&context) {
            Err(error @ BenchError::NotReproducible { .. }) => assert_eq!(
                error.to_string(),
                "experiment 009-fig1 is not reproducible yet: `lidx frobnicate` does not exist"
            ),
            other => panic!("expected NotReproducible, got {other:?}"),
        }
    }
}
