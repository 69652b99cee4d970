//! `lidx kv torture`: the store's crash test as a command (issue 13), for any number of cycles.
//!
//! The harness is [`lidx_bench::torture`] (what a cycle does, what is checked after each kill,
//! what fails a run); this file parses the arguments, starts the run or, with the hidden
//! `--child`, the writer child of one cycle (this binary again, given the same arguments), and
//! prints the summary. Any violation ends the command with exit code 1 and a message naming
//! the cycle, the key and what was expected; the store is left as it was for a look.
//! Parameters outside their useful range (`--writers` beyond
//! [`MAX_WRITERS`](lidx_bench::torture::MAX_WRITERS), `--max-delay-ms` under
//! [`MIN_MAX_DELAY_MS`](lidx_bench::torture::MIN_MAX_DELAY_MS)) and an existing `--db` are
//! refused before anything is created, with exit code 2.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Context;
use lidx::kv::Engine;
use lidx_bench::torture::{self, Summary, TortureError, TorturePlan, TortureSpec};
use serde_json::json;

/// Arguments of `lidx kv torture`.
#[derive(Debug, Clone, clap::Args)]
pub struct TortureArgs {
    /// A directory that does not exist yet: the store the cycles write (left for a look).
    #[arg(long)]
    pub db: PathBuf,
    /// Kill-and-recover cycles.
    #[arg(long, default_value_t = 100)]
    pub cycles: u64,
    /// The engine: `hybrid`, `btree`, `lsm[:ratio=..][:l0=..][:bits=..][:runs=..]`, `log:<map>` (e.g.
    /// `log:btree`) or `log:trie:<map>`.
    #[arg(long, default_value = "hybrid")]
    pub engine: String,
    /// Seed of the delays and of the children's operations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Writer threads of the child, 1 to 64 (default 2; 1, the only choice, with
    /// `--power-loss`).
    #[arg(long)]
    pub writers: Option<u64>,
    /// The longest a child runs before the kill, in milliseconds, 50 to 60000 (each cycle
    /// draws a delay from a fifth of it up to it; a child needs a few milliseconds to start,
    /// so a shorter one would kill most children before their first write).
    #[arg(long, default_value_t = 400)]
    pub max_delay_ms: u64,
    /// Also cut the unsynced end of the log after each kill (see the command's docs).
    #[arg(long)]
    pub power_loss: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run as the writer child of cycle `N` (used by the command itself).
    #[arg(long, hide = true)]
    pub child: Option<u64>,
    /// The parent's process id, given to the child: it stops once the parent is gone.
    #[arg(long, hide = true)]
    pub parent_pid: Option<u32>,
    /// The harness's self-test: the children's first writer panics after this many
    /// acknowledged writes, which must fail the run.
    #[arg(long, hide = true)]
    pub inject_panic_after: Option<u64>,
}

/// Runs `lidx kv torture`.
pub fn run(args: TortureArgs) -> anyhow::Result<()> {
    let engine = Engine::parse(&args.engine)
        .with_context(|| format!("--engine {:?}: use {}", args.engine, Engine::forms()))?;
    let spec = TortureSpec {
        db: args.db.clone(),
        engine,
        seed: args.seed,
        writers: args
            .writers
            .unwrap_or(TortureSpec::default_writers(args.power_loss)),
        power_loss: args.power_loss,
        inject_panic_after: args.inject_panic_after,
    };
    if let Some(cycle) = args.child {
        let parent = args
            .parent_pid
            .context("--parent-pid: the child needs its parent's id")?;
        return torture::child(&spec, cycle, parent).map_err(reported);
    }
    let plan = TorturePlan::new(spec, args.cycles, args.max_delay_ms)?;
    let child_args = |cycle: u64| child_args(&args, plan.spec(), cycle);
    let summary = torture::run(&plan, &child_args, &mut |cycle, s, elapsed| {
        note!(
            "progress: torture: {cycle}/{} cycles, {} writes acknowledged ({:.0} s)",
            args.cycles,
            s.acknowledged,
            elapsed.as_secs_f64()
        );
    })
    .map_err(reported)?;
    print_summary(&args, engine, &summary);
    Ok(())
}

/// The arguments of the writer child of `cycle`: `kv torture` with the run's store, engine,
/// seed and writers, `--child <cycle>` and this process's id as its parent's.
fn child_args(args: &TortureArgs, spec: &TortureSpec, cycle: u64) -> Vec<OsString> {
    let mut child: Vec<OsString> = vec!["kv".into(), "torture".into(), "--db".into()];
    child.push(args.db.clone().into_os_string());
    for (flag, value) in [
        ("--engine", args.engine.clone()),
        ("--seed", args.seed.to_string()),
        ("--writers", spec.writers.to_string()),
        ("--child", cycle.to_string()),
        ("--parent-pid", std::process::id().to_string()),
    ] {
        child.push(flag.into());
        child.push(value.into());
    }
    if args.power_loss {
        child.push("--power-loss".into());
    }
    if let Some(n) = args.inject_panic_after {
        child.push("--inject-panic-after".into());
        child.push(n.to_string().into());
    }
    child
}

/// The harness's error as the command reports it: a store's error stays itself in the chain
/// (so `main` still finds a parameter the library refused, exit code 2), under the cycle that
/// found it.
fn reported(error: TortureError) -> anyhow::Error {
    let what = error.to_string();
    match error {
        TortureError::Store(e) => e.into(),
        TortureError::Cycle { source, .. } => reported(*source).context(what),
        other => other.into(),
    }
}

/// Prints what the cycles found: a line, or with `--json` one JSON object.
fn print_summary(args: &TortureArgs, engine: Engine, s: &Summary) {
    if args.json {
        println!(
            "{}",
            json!({
                "engine": engine.label(),
                "cycles": args.cycles,
                "power_loss": args.power_loss,
                "acknowledged": s.acknowledged,
                "in_flight": s.in_flight,
                "in_flight_applied": s.in_flight_applied,
                "batches_in_flight": s.batches_in_flight,
                "merges_seen": s.merges_seen,
                "log_bytes_cut": s.log_bytes_cut,
                "lost": 0,
                "phantoms": 0,
                "seconds": s.seconds,
            })
        );
    } else {
        println!(
            "{} cycles ({}{}): {} writes acknowledged, 0 lost, 0 phantoms; {} operations in \
             flight at a kill ({} applied whole, {} batches), none half-applied; {} merges or \
             checkpoints committed{}",
            args.cycles,
            engine.label(),
            if args.power_loss { ", power loss" } else { "" },
            s.acknowledged,
            s.in_flight,
            s.in_flight_applied,
            s.batches_in_flight,
            s.merges_seen,
            if args.power_loss {
                format!("; {} unsynced log bytes cut", s.log_bytes_cut)
            } else {
                String::new()
            }
        );
    }
}
