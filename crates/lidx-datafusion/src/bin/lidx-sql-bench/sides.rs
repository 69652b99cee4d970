//! The sides `lidx-sql-bench` compares, and the two sessions they run in:
//!
//! * `lidx`: the lidx tables as [`LidxTable`]s, in a session with hash joins only;
//! * `lidx-index-join`: the same tables in a session whose [`lidx_datafusion::IndexJoinRule`]
//!   takes any outer side (`usize::MAX` rows), so that every join is a
//!   [`lidx_datafusion::LidxIndexJoinExec`] whatever the default threshold;
//! * `parquet`: the same rows written by DataFusion as one sorted Parquet file per table
//!   (`<name>.parquet`, registered as `<name>_parquet` in the first session, declared sorted by
//!   key): page-level statistics (so column and offset indexes, which DataFusion reads and prunes
//!   pages with by default), DataFusion's default row groups (1Mi rows) and pages (20,000 rows),
//!   no compression (lidx compresses nothing, and no codec is compiled), and filter pushdown on
//!   (`datafusion.execution.parquet.pushdown_filters`: rows are filtered while decoding, so a
//!   page's other columns are decoded only for the rows that pass: Parquet at its best).
//!
//! The Parquet side plans in the lidx side's session, so both get the session's analyzer
//! rules (`lidx_datafusion::ListLiteralTypes`, which cuts the planning of a long `IN` list on
//! either side) and the ratios compare the reads, not the planners.
//!
//! Each lidx table is also registered in the first session as `<name>_floor`, a
//! [`FloorTable`] (DataFusion's planning with nothing to read; see `floor`).
//!
//! A query is timed from its SQL text to its last batch: parsing, planning (recorded apart)
//! and execution, as a user of the session waits for it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::common::config::TableParquetOptions;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{col, ParquetReadOptions};
use lidx_datafusion::{LidxTable, SqlSession};

use crate::floor::FloorTable;

/// A side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// lidx tables, hash joins.
    Lidx,
    /// lidx tables, index joins.
    LidxIndexJoin,
    /// The Parquet copies, hash joins.
    Parquet,
}

impl Side {
    /// The side's name in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Lidx => "lidx",
            Side::LidxIndexJoin => "lidx-index-join",
            Side::Parquet => "parquet",
        }
    }

    /// The name this side's copy of `table` is registered under.
    pub(crate) fn table(self, table: &str) -> String {
        match self {
            Side::Lidx | Side::LidxIndexJoin => table.to_string(),
            Side::Parquet => format!("{table}_parquet"),
        }
    }
}

/// The name the [`FloorTable`] of `table` is registered under.
pub(crate) fn floor_name(table: &str) -> String {
    format!("{table}_floor")
}

/// One timed run of a query.
pub(crate) struct Timed {
    /// From the SQL text to the physical plan.
    pub(crate) plan: Duration,
    /// From the SQL text to the last batch.
    pub(crate) total: Duration,
    pub(crate) physical: Arc<dyn ExecutionPlan>,
    pub(crate) batches: Vec<RecordBatch>,
}

/// The two sessions.
pub(crate) struct Sides {
    hash: SqlSession,
    index: SqlSession,
}

impl Sides {
    /// Sessions of `partitions` partitions holding the lidx tables `tables` (name, path).
    pub(crate) async fn open(
        tables: &[(String, std::path::PathBuf)],
        partitions: usize,
    ) -> anyhow::Result<Sides> {
        let mut hash = SqlSession::with_index_join(partitions, None);
        let mut index = SqlSession::with_index_join(partitions, Some(usize::MAX));
        for (name, path) in tables {
            let table = LidxTable::open_table(path)
                .with_context(|| format!("open the table {}", path.display()))?;
            hash.context()
                .register_table(floor_name(name), Arc::new(FloorTable::new(table.schema())))?;
            hash.register_table(name, table.clone())?;
            index.register_table(name, table)?;
        }
        hash.context()
            .sql("SET datafusion.execution.parquet.pushdown_filters = true")
            .await?
            .collect()
            .await?;
        Ok(Sides { hash, index })
    }

    /// Writes the lidx table `name` as the sorted Parquet file `path` (see the module docs for
    /// its options) and registers it for [`Side::Parquet`].
    pub(crate) async fn write_parquet(&self, name: &str, path: &Path) -> anyhow::Result<()> {
        let text = path
            .to_str()
            .with_context(|| format!("{} is not UTF-8", path.display()))?;
        let mut options = TableParquetOptions::default();
        options.global.compression = Some("uncompressed".into());
        options.global.statistics_enabled = Some("page".into());
        self.hash
            .sql(&format!("SELECT key, value FROM {name} ORDER BY key"))
            .await?
            .write_parquet(
                text,
                DataFrameWriteOptions::new().with_single_file_output(true),
                Some(options),
            )
            .await
            .with_context(|| format!("write {name} as {}", path.display()))?;
        let read =
            ParquetReadOptions::default().file_sort_order(vec![vec![col("key").sort(true, false)]]);
        self.hash
            .context()
            .register_parquet(Side::Parquet.table(name), text, read)
            .await?;
        Ok(())
    }

    /// Runs `sql` on `side`'s session, timed.
    pub(crate) async fn run(&self, side: Side, sql: &str) -> anyhow::Result<Timed> {
        let session = match side {
            Side::LidxIndexJoin => &self.index,
            Side::Lidx | Side::Parquet => &self.hash,
        };
        let start = Instant::now();
        let (task, physical) = planned(session, sql).await?;
        let plan = start.elapsed();
        let batches = collect(Arc::clone(&physical), task).await?;
        Ok(Timed {
            plan,
            total: start.elapsed(),
            physical,
            batches,
        })
    }

    /// The time from `sql` to its physical plan, in the session of [`Side::Lidx`] and
    /// [`Side::Parquet`], as [`Sides::run`] times its planning; nothing is executed.
    pub(crate) async fn plan(&self, sql: &str) -> anyhow::Result<Duration> {
        let start = Instant::now();
        planned(&self.hash, sql).await?;
        Ok(start.elapsed())
    }

    /// The keys of the lidx table `name`, sorted.
    pub(crate) async fn keys(&self, name: &str) -> anyhow::Result<Vec<u64>> {
        let batches = self
            .hash
            .sql(&format!("SELECT key FROM {name}"))
            .await?
            .collect()
            .await?;
        let mut keys = Vec::new();
        for batch in &batches {
            let column = batch
                .column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::UInt64Array>()
                .with_context(|| format!("{name} has no u64 keys; the bench needs u64 keys"))?;
            keys.extend(column.values().iter().copied());
        }
        keys.sort_unstable();
        Ok(keys)
    }
}

/// `sql` planned in `session`: the task context to run it in and its physical plan.
async fn planned(
    session: &SqlSession,
    sql: &str,
) -> anyhow::Result<(Arc<TaskContext>, Arc<dyn ExecutionPlan>)> {
    let frame = session.sql(sql).await?;
    let task = Arc::new(frame.task_ctx());
    Ok((task, frame.create_physical_plan().await?))
}
