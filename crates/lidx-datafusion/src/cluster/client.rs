//! The client side of a cluster: [`SqlSession::connect`], a session whose queries a Ballista
//! scheduler plans and its executors run.
//!
//! Registering a table opens it here as well (its schema and statistics are planned with);
//! the plan then carries its path, which the scheduler and the executors open
//! (`crate::cluster` module docs). Ballista's adaptive planner is switched off: it plans with
//! its own fixed list of physical rules, without the index join rule or lidx's scan rule,
//! which the scheduler's session ([`crate::cluster::scheduler_session_state`]) holds.

use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use datafusion::execution::context::SessionContext;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionConfig;

use crate::cluster::LidxCodec;
use crate::error::{Error, Result};
use crate::session::SqlSession;

/// How long [`SqlSession::connect`] waits for the scheduler to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl SqlSession {
    /// A session whose queries run on the Ballista scheduler at `scheduler` (`HOST:PORT`,
    /// a `lidx-scheduler`), with scans split into at most `target_partitions` partitions
    /// (at least 1), each a task. The index join rule is the scheduler's (its own limit).
    /// [`Error::ClusterUnreachable`] when nothing accepts a connection there within 5 s.
    pub async fn connect(scheduler: &str, target_partitions: usize) -> Result<SqlSession> {
        let unreachable = |reason: String| Error::ClusterUnreachable {
            addr: scheduler.to_string(),
            reason,
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(scheduler)).await
        {
            Err(_) => {
                return Err(unreachable(format!(
                    "no connection within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Ok(Ok(_)) => {}
        }
        let codec = Arc::new(LidxCodec::default());
        let config = SessionConfig::new_with_ballista()
            .with_target_partitions(target_partitions.max(1))
            .with_ballista_logical_extension_codec(Arc::clone(&codec) as _)
            .with_ballista_physical_extension_codec(codec)
            .with_ballista_adaptive_query_planner(false);
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_analyzer_rules(crate::session::analyzer_rules())
            .build();
        let ctx = SessionContext::remote_with_state(&format!("df://{scheduler}"), state).await?;
        Ok(SqlSession::of(ctx))
    }
}
