//! `lidx-scheduler`: a Ballista scheduler that plans SQL over lidx tables (feature `cluster`).
//!
//! ```text
//! lidx-scheduler --bind 127.0.0.1:50050
//! lidx-executor --scheduler 127.0.0.1:50050 --port 50051 --grpc-port 50052
//! lidx-sql --cluster 127.0.0.1:50050 --table big=t/large "SELECT count(*) FROM big"
//! ```
//!
//! Ballista's scheduler (in memory: its state lives and dies with the process) with lidx's
//! codecs and its session (`lidx_datafusion::cluster::scheduler_session_state`: the index join
//! rule, the scan rule), pushing tasks to executors round-robin, so that a stage's partitions
//! are spread over every executor rather than packed into the first one's slots. It prints
//! `lidx-scheduler listening on HOST:PORT` once it accepts connections (`--bind HOST:0` picks
//! a free port). Errors go to stderr with exit code 2 for a command line to fix (an address
//! that does not parse or cannot be bound) and 1 otherwise; `RUST_LOG` sets what Ballista logs.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use clap::Parser;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use lidx_datafusion::cluster::{scheduler_session_state, LidxCodec};
use lidx_datafusion::DEFAULT_INDEX_JOIN_OUTER_ROWS;

/// Run a Ballista scheduler for lidx tables.
///
/// Cost: nothing until a query comes; planning a query opens its tables here (a table's saved
/// index loaded once, a store read once to count it) and finds each scan's positions.
#[derive(Debug, Parser)]
#[command(name = "lidx-scheduler", version)]
struct Args {
    /// Where to accept clients and executors (`HOST:0`: a free port, printed).
    #[arg(long, default_value = "127.0.0.1:50050")]
    bind: SocketAddr,

    /// Join a side of at most this many rows with a table by lookups in its learned index.
    #[arg(long, value_name = "ROWS", default_value_t = DEFAULT_INDEX_JOIN_OUTER_ROWS)]
    index_join_rows: usize,

    /// Hash joins only (no index joins).
    #[arg(long)]
    no_index_join: bool,
}

/// The address could not be listened on.
#[derive(Debug)]
struct CannotBind(SocketAddr, std::io::Error);

impl std::fmt::Display for CannotBind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot listen on {} ({}); give --bind a free address (port 0 picks one)",
            self.0, self.1
        )
    }
}

impl std::error::Error for CannotBind {}

fn main() -> ExitCode {
    let args = Args::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            let usage = error.chain().any(|cause| cause.is::<CannotBind>());
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the scheduler's threads")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .map_err(|e| CannotBind(args.bind, e))?;
        let bound = listener.local_addr().context("the bound address")?;
        let max_outer_rows = (!args.no_index_join).then_some(args.index_join_rows);
        let codec = Arc::new(LidxCodec::default());
        let config = SchedulerConfig {
            bind_host: bound.ip().to_string(),
            external_host: bound.ip().to_string(),
            bind_port: bound.port(),
            scheduling_policy: TaskSchedulingPolicy::PushStaged,
            task_distribution: TaskDistributionPolicy::RoundRobin,
            override_session_builder: Some(Arc::new(move |config| {
                scheduler_session_state(config, max_outer_rows)
            })),
            override_logical_codec: Some(Arc::clone(&codec) as _),
            override_physical_codec: Some(codec),
            ..SchedulerConfig::default()
        };
        config.validate()?;
        let config = Arc::new(config);
        let cluster = BallistaCluster::new_from_config(&config).await?;
        let scheduler =
            create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, config).await?;
        println!("lidx-scheduler listening on {bound}");
        std::io::stdout().flush()?;
        start_grpc_service_with_listener(listener, scheduler).await?;
        Ok(())
    })
}
