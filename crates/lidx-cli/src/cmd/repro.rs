//! `lidx repro`: regenerate the papers' headline tables and figures by name.
//!
//! `lidx repro list` prints the registry of `lidx_bench::repro` (id, the paper's caption and
//! section, whether it runs, its size at `--scale small`). `lidx repro <id|paper|all>...` runs
//! each experiment's plan: the `lidx` commands a reader would type (`--dry-run` prints them),
//! each run as a child process of this same binary, so every answer is checked by the
//! command's own runner exactly as when typed by hand; then the records are gathered into
//! `<out>/<id>.jsonl` (for `lidx report`), `<id>.csv` and SVGs.
//!
//! Outputs that exist are refused before anything runs unless `--force` (then replaced, once
//! every new one is written: see `lidx_bench::repro::render`). An
//! experiment named by its id that cannot run yet is an error saying why; one selected by a
//! paper's number or `all` is skipped with that reason on stderr.

use std::path::PathBuf;
use std::process::{Command as Process, Stdio};

use anyhow::{bail, Context as _};
use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use lidx_bench::repro::plan::{self, Experiment, Plan, Scale, Status, StepOutput};
use lidx_bench::repro::render;
use lidx_bench::BenchError;

use super::output::Staging;

/// Arguments of `lidx repro`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `list`, or what to run: experiment ids (`003-fig6`), a paper's number (`003`: all its
    /// experiments) or `all`.
    #[arg(required = true)]
    pub what: Vec<String>,

    /// `small` (minutes per experiment on 2 cores) or `full` (the README's sizes).
    #[arg(long, default_value = "small")]
    pub scale: String,

    /// Replace every dataset of the plans with this one (`gen:lognormal:20K`, an SOSD file).
    #[arg(long)]
    pub dataset: Option<String>,

    /// Replace the count of each run (operations, queries; timed reopenings for recovery):
    /// a small `--dataset` holds out fewer keys to insert than a write workload's default.
    #[arg(long)]
    pub ops: Option<String>,

    /// The output directory: `<id>.jsonl`, `<id>.csv`, `<id>-*.svg` per experiment.
    #[arg(long, default_value = "repro")]
    pub out: PathBuf,

    /// Replace an experiment's existing outputs (otherwise they are refused).
    #[arg(long)]
    pub force: bool,

    /// Print the commands of each plan instead of running them.
    #[arg(long)]
    pub dry_run: bool,
}

/// The size column of `list`: datasets and the run's count.
fn size(e: &Experiment, scale: Scale) -> String {
    let sizes = e.sizes(scale);
    let data = sizes
        .datasets
        .iter()
        .map(|d| d.strip_prefix("gen:").unwrap_or(d))
        .collect::<Vec<_>>()
        .join(", ");
    if sizes.ops.is_empty() {
        data
    } else {
        format!("{data}; {}", sizes.ops)
    }
}

fn list(scale: Scale) {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "id",
            "title (the paper's caption)",
            "section",
            "status",
            &format!("{} size (data; count)", scale.name()),
        ]);
    for e in plan::all() {
        let status = match e.status {
            Status::Ready(_) => "ready".to_string(),
            Status::NotYet(why) => format!("not reproducible yet: {why}"),
        };
        table.add_row(vec![
            e.id.to_string(),
            e.title.to_string(),
            e.section.to_string(),
            status,
            size(e, scale),
        ]);
    }
    println!("{table}");
}

/// Runs the steps of `plan`, then writes its outputs; returns the files written.
fn execute(e: &Experiment, context: &plan::Context, plan: &Plan) -> anyhow::Result<Vec<PathBuf>> {
    let exe = std::env::current_exe().context("finding the lidx executable")?;
    let total = plan.steps.len();
    for (i, step) in plan.steps.iter().enumerate() {
        let part = render::part(context, i);
        let mut child = Process::new(&exe);
        child.args(&step.args).stdin(Stdio::null());
        let shown = match step.output {
            StepOutput::Records => {
                child.arg("--out").arg(&part);
                format!("{} --out {}", step.command_line(), part.display())
            }
            StepOutput::Stdout => {
                let file = std::fs::File::create(&part)
                    .with_context(|| format!("creating {}", part.display()))?;
                child.stdout(file);
                format!("{} > {}", step.command_line(), part.display())
            }
            StepOutput::Nothing => {
                child.stdout(std::io::stderr());
                step.command_line()
            }
        };
        note!("[{}] step {}/{total}: {shown}", e.id, i + 1);
        let status = child
            .status()
            .with_context(|| format!("starting {}", exe.display()))?;
        if !status.success() {
            bail!(
                "{}: step {}/{total} failed ({status}): {shown}; the experiment's outputs are \
                 as they were",
                e.id,
                i + 1,
            );
        }
    }
    Ok(render::finish(context, plan)?)
}

/// Runs `lidx repro`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scale = Scale::parse(&args.scale)?;
    if args.what.iter().any(|w| w == "list") {
        if args.what.len() > 1 {
            return Err(BenchError::BadSpec {
                what: "repro",
                got: args.what.join(" "),
                expected: "`list` alone, or experiment ids, papers and `all`".to_string(),
            }
            .into());
        }
        list(scale);
        return Ok(());
    }
    let selected = plan::select(&args.what)?;
    // Every plan is made, and every output checked, before anything runs.
    let mut plans = Vec::new();
    for e in selected {
        let named = args.what.iter().any(|w| w == e.id);
        let context = e.context(
            scale,
            args.dataset.as_deref(),
            args.ops.as_deref(),
            &args.out,
        );
        match e.plan(&context) {
            Ok(plan) => plans.push((e, context, plan)),
            Err(error @ BenchError::NotReproducible { .. }) if !named => {
                note!("skipping {error}");
            }
            Err(error) => return Err(error.into()),
        }
    }
    if args.dry_run {
        for (e, _, plan) in &plans {
            println!("# {}: {}", e.id, e.title);
            for step in &plan.steps {
                let suffix = match step.output {
                    StepOutput::Records => " --out <part>",
                    StepOutput::Stdout => " > <part>",
                    StepOutput::Nothing => "",
                };
                println!("{}{suffix}", step.command_line());
            }
        }
        return Ok(());
    }
    if !args.force {
        for (_, context, plan) in &plans {
            if let Some(path) = render::existing(context, plan)?.into_iter().next() {
                return Err(BenchError::OutputExists { path }.into());
            }
        }
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for (e, mut context, _) in plans {
        // The steps work, and write every output, in a private directory of this run's,
        // removed when the experiment ends (on signals too); the outputs are renamed into
        // --out only once all are written, so a failure leaves the old ones as they were.
        let work = Staging::beside(&args.out)?;
        context.work = work.dir().to_path_buf();
        let plan = e.plan(&context)?;
        render::prepare(&context, &plan, args.force)?;
        let written = execute(e, &context, &plan)?;
        drop(work);
        println!("{}: {}", e.id, e.title);
        for file in written {
            println!("  wrote {}", file.display());
        }
    }
    Ok(())
}
