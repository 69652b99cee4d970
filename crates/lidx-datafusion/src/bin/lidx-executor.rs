//! `lidx-executor`: a Ballista executor that runs lidx scans and index joins (feature
//! `cluster`); see `lidx-scheduler` for a cluster's commands.
//!
//! Ballista's executor with lidx's codecs. It registers with the scheduler, takes the tasks
//! pushed to it, reads the tables they name at the paths the client registered (a shared file
//! system: `lidx_datafusion::cluster` module docs), keeps its tasks' outputs in its work
//! directory and serves them to the next stage and the client over Arrow Flight (`--port`).
//! Each task it starts is logged, `lidx-executor <id>: task <n> of job <job> stage <s>,
//! partitions [..], lidx parts <k>, index joins <j>` (`k`: the scan partitions the task
//! reads, `j`: its index joins), so that where the work went can be seen. Errors go to stderr with exit code 2 for a command line
//! to fix and 1 otherwise; `RUST_LOG` sets what else is logged (Ballista's own lines at
//! `info` by default).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::JobId;
use ballista_executor::execution_engine::{
    DefaultExecutionEngine, ExecutionEngine, QueryStageExecutor,
};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use clap::Parser;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::error::Result as DfResult;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion::prelude::SessionConfig;
use lidx_datafusion::cluster::LidxCodec;

/// Run a Ballista executor for lidx tables.
///
/// Cost: a task's reads are its scan partitions' records (a table's positions, a store's key
/// ranges); the first task over a table opens it here (its saved index loaded, or a store
/// read once to count it).
#[derive(Debug, Parser)]
#[command(name = "lidx-executor", version)]
struct Args {
    /// The scheduler, `HOST:PORT`.
    #[arg(long, default_value = "127.0.0.1:50050")]
    scheduler: String,

    /// The host to listen on, which the scheduler and other executors reach this one at.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,

    /// Arrow Flight port: where the next stage and the client fetch task outputs.
    #[arg(long, default_value_t = 50051)]
    port: u16,

    /// gRPC port: where the scheduler pushes tasks.
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,

    /// Tasks run at once; default: the machine's cores.
    #[arg(long)]
    slots: Option<usize>,

    /// Directory for task outputs; default: a new temporary directory, removed on exit.
    #[arg(long)]
    work_dir: Option<PathBuf>,

    /// Seconds to keep trying to reach the scheduler at start.
    #[arg(long, default_value_t = 10)]
    connect_timeout: u16,

    /// This executor's name in the scheduler and in its task lines; default: a new id.
    #[arg(long)]
    id: Option<String>,
}

/// `--scheduler` is not `HOST:PORT`.
#[derive(Debug)]
struct BadScheduler(String);

impl std::fmt::Display for BadScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--scheduler {:?} is not HOST:PORT; write it as --scheduler 127.0.0.1:50050",
            self.0
        )
    }
}

impl std::error::Error for BadScheduler {}

/// Ballista's execution engine, logging each task it starts (module docs).
struct LoggedTasks {
    id: String,
    engine: DefaultExecutionEngine,
}

impl ExecutionEngine for LoggedTasks {
    fn create_query_stage_exec(
        &self,
        job_id: JobId,
        stage_id: usize,
        task_id: usize,
        global_output_partition_ids: Vec<usize>,
        plan: Arc<dyn ExecutionPlan>,
        work_dir: &str,
        config: &SessionConfig,
    ) -> DfResult<Arc<dyn QueryStageExecutor>> {
        let (mut lidx_parts, mut index_joins) = (0, 0);
        plan.apply(|node| {
            match node.name() {
                "LidxReadExec" => lidx_parts += node.output_partitioning().partition_count(),
                "LidxIndexJoinExec" => index_joins += 1,
                _ => {}
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        log::info!(
            target: "lidx_executor",
            "lidx-executor {}: task {task_id} of job {job_id} stage {stage_id}, partitions \
             {global_output_partition_ids:?}, lidx parts {lidx_parts}, index joins {index_joins}",
            self.id
        );
        self.engine.create_query_stage_exec(
            job_id,
            stage_id,
            task_id,
            global_output_partition_ids,
            plan,
            work_dir,
            config,
        )
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    env_logger::Builder::from_env(
        env_logger::Env::default()
            .default_filter_or("warn,lidx_executor=info,ballista_executor=info"),
    )
    .init();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            let usage = error.chain().any(|cause| cause.is::<BadScheduler>());
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let (host, port) = args
        .scheduler
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
        .ok_or_else(|| BadScheduler(args.scheduler.clone()))?;
    // A directory of our own is kept until the executor stops, then removed.
    let (work_dir, own_dir) = match args.work_dir {
        Some(dir) => (dir, None),
        None => {
            let dir = tempfile::tempdir().context("create a work directory")?;
            (dir.path().to_path_buf(), Some(dir))
        }
    };
    let slots = args.slots.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let id = args
        .id
        .unwrap_or_else(|| format!("lidx-{}", std::process::id()));
    let codec = Arc::new(LidxCodec::default());
    let config = ExecutorProcessConfig {
        executor_id: id.clone(),
        bind_host: args.host.clone(),
        external_host: Some(args.host),
        port: args.port,
        grpc_port: args.grpc_port,
        scheduler_host: host,
        scheduler_port: port,
        scheduler_connect_timeout_seconds: args.connect_timeout,
        vcores: slots,
        task_scheduling_policy: TaskSchedulingPolicy::PushStaged,
        work_dir: Some(work_dir.to_string_lossy().into_owned()),
        override_logical_codec: Some(Arc::clone(&codec) as _),
        override_physical_codec: Some(codec),
        override_execution_engine: Some(Arc::new(LoggedTasks {
            id,
            engine: DefaultExecutionEngine::new(),
        })),
        ..ExecutorProcessConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the executor's threads")?;
    runtime.block_on(start_executor_process(Arc::new(config)))?;
    drop(own_dir);
    Ok(())
}
