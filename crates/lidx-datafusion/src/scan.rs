//! [`LidxScanExec`]: the physical plan of a [`crate::LidxTable`] scan. It knows, per
//! partition, which records it reads (a table's positions, sought while it was planned) or
//! which key ranges (a store's, and a table's under a filter of many ranges, which each
//! partition seeks as it reads), so its statistics are those of what it returns (exact for
//! positions, an upper bound for a table's ranges), and each partition reads its share on a
//! blocking thread of its own (a small share on the thread that polls it), ascending by key.
//!
//! Partitions are key ranges (the "partitions as key ranges"): partition `i`'s keys are
//! all smaller than partition `i + 1`'s, and each is in key order, which is the ordering the
//! plan declares (`key` ascending), so `ORDER BY key` is a merge of sorted partitions
//! (`SortPreservingMergeExec`) or nothing, never a sort.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{ColumnStatistics, Statistics};
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr, PhysicalSortExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::{
    RecordBatchReceiverStreamBuilder, RecordBatchStreamAdapter,
};
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions,
};
use futures::StreamExt;

use crate::error::external;
use crate::provider::Source;
use crate::ranges::KeyRanges;

/// What one partition reads.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// A table's records at these positions (ascending runs), sought while planning.
    Positions(Vec<Range<u64>>),
    /// A table's records in these key ranges, the keys widened
    /// (`crate::table_source::SourceKey::wide`), sought when the part is read: a filter of
    /// many ranges (`crate::provider`).
    TableKeys(KeyRanges<u128>),
    /// A store's entries in these key ranges.
    Keys(KeyRanges<Vec<u8>>),
}

impl Part {
    /// Records the part reads, when known before reading (a table's positions).
    fn rows(&self) -> Option<u64> {
        match self {
            Part::Positions(runs) => Some(runs.iter().map(|r| r.end - r.start).sum()),
            Part::TableKeys(_) | Part::Keys(_) => None,
        }
    }

    /// The most records the part can read from a source of `total` (a table's), when
    /// known: its rows, or the keys its ranges hold.
    fn rows_at_most(&self, total: u64) -> Option<u64> {
        match self {
            Part::Positions(_) => self.rows(),
            Part::TableKeys(ranges) => {
                let keys = ranges.ranges().iter().fold(0u128, |sum, r| {
                    sum.saturating_add(r.hi.map_or(u128::MAX, |hi| hi - r.lo))
                });
                Some(keys.min(u128::from(total)) as u64)
            }
            Part::Keys(_) => None,
        }
    }
}

/// A table's part that touches at most this many blocks is read on the thread that first
/// polls its stream (tens of microseconds from the page cache), not handed to a blocking
/// thread through a channel: a point or short range query then waits for no thread. Larger
/// parts, a table's ranges sought as they are read (over a hundred lookups) and stores'
/// parts read on a blocking thread.
const INLINE_BLOCKS: u64 = 64;

/// The rows of `part` of `source` as a stream of batches of `schema` (the source's `columns`)
/// of at most `batch_rows` rows, at most `limit` of key ranges; read on a blocking thread, or
/// when first polled for a table's part of at most [`INLINE_BLOCKS`] blocks.
pub(crate) fn read_part(
    source: Arc<Source>,
    part: Part,
    schema: SchemaRef,
    columns: Vec<usize>,
    limit: Option<usize>,
    batch_rows: usize,
) -> SendableRecordBatchStream {
    if source
        .blocks_of(&part)
        .is_some_and(|blocks| blocks <= INLINE_BLOCKS)
    {
        let stream_schema = Arc::clone(&schema);
        let batches = futures::stream::once(async move {
            let mut batches = Vec::new();
            let read = source.read(&part, schema, columns, limit, batch_rows, &mut |batch| {
                batches.push(batch);
                true
            });
            if let Err(e) = read {
                batches.push(Err(external(e)));
            }
            futures::stream::iter(batches)
        })
        .flatten();
        return Box::pin(RecordBatchStreamAdapter::new(stream_schema, batches));
    }
    let mut builder = RecordBatchReceiverStreamBuilder::new(Arc::clone(&schema), 2);
    let tx = builder.tx();
    builder.spawn_blocking(move || {
        let mut open = true;
        let read = source.read(&part, schema, columns, limit, batch_rows, &mut |batch| {
            // A closed channel: the query was cancelled or has all it wants.
            open = tx.blocking_send(batch).is_ok();
            open
        });
        match read {
            Err(e) if open => {
                // The error goes to the query; if it has gone away, nobody is listening.
                let _ = tx.blocking_send(Err(external(e)));
                Ok(())
            }
            _ => Ok(()),
        }
    });
    builder.build()
}

/// A scan of a lidx table or store; see the module docs.
#[derive(Debug, Clone)]
pub struct LidxScanExec {
    source: Arc<Source>,
    /// The projected schema and which source columns it holds (0 key, 1 value).
    schema: SchemaRef,
    columns: Vec<usize>,
    parts: Vec<Part>,
    /// The filters taken over, as written (for `EXPLAIN`).
    filters: Vec<String>,
    /// A store scan, or a table's scan sought when read, stops after this many rows (a
    /// table's positions are cut to it).
    limit: Option<usize>,
    /// Per column of the projected schema: its statistics over the whole source.
    column_stats: Vec<ColumnStatistics>,
    /// Statistics are exact (no filter, or a table's positions).
    exact: bool,
    properties: Arc<PlanProperties>,
}

/// What a [`LidxScanExec`] is made of, as the table provider plans it.
pub(crate) struct ScanPlan {
    pub(crate) source: Arc<Source>,
    pub(crate) schema: SchemaRef,
    pub(crate) columns: Vec<usize>,
    pub(crate) parts: Vec<Part>,
    pub(crate) filters: Vec<String>,
    pub(crate) limit: Option<usize>,
    pub(crate) column_stats: Vec<ColumnStatistics>,
    pub(crate) exact: bool,
}

impl LidxScanExec {
    pub(crate) fn new(plan: ScanPlan) -> Self {
        // Ordered by key when the key is among the columns; partitions by key range.
        let orderings = plan.columns.iter().position(|&c| c == 0).map(|at| {
            vec![PhysicalSortExpr::new_default(
                Arc::new(Column::new(crate::batch::KEY, at)) as Arc<dyn PhysicalExpr>,
            )]
        });
        let equivalence =
            EquivalenceProperties::new_with_orderings(Arc::clone(&plan.schema), orderings);
        let properties = PlanProperties::new(
            equivalence,
            Partitioning::UnknownPartitioning(plan.parts.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        LidxScanExec {
            source: plan.source,
            schema: plan.schema,
            columns: plan.columns,
            parts: plan.parts,
            filters: plan.filters,
            limit: plan.limit,
            column_stats: plan.column_stats,
            exact: plan.exact,
            properties: Arc::new(properties),
        }
    }

    /// What the scan reads.
    pub(crate) fn source(&self) -> &Arc<Source> {
        &self.source
    }

    /// Which source columns (0 key, 1 value) the scan's schema holds, in its order.
    pub(crate) fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// True when the scan returns every row of its source: no key filter, no limit.
    pub(crate) fn reads_all(&self) -> bool {
        self.filters.is_empty() && self.limit.is_none()
    }

    /// The source's name in `EXPLAIN`: the kind and the path.
    pub(crate) fn describe_source(&self) -> String {
        format!("{:?}", self.source)
    }

    #[cfg(feature = "cluster")]
    /// What each partition reads.
    pub(crate) fn parts(&self) -> &[Part] {
        &self.parts
    }

    #[cfg(feature = "cluster")]
    /// The most rows a partition of key ranges returns (a store's, or a table's sought as
    /// it is read).
    pub(crate) fn limit(&self) -> Option<usize> {
        self.limit
    }

    #[cfg(feature = "cluster")]
    /// The key filters taken over, as written.
    pub(crate) fn filters(&self) -> &[String] {
        &self.filters
    }

    /// The most rows `parts` (some of the scan's) can return, when known: within the
    /// source's rows and the limit.
    fn rows_at_most(&self, parts: &[Part]) -> Option<u64> {
        let total = self.source.len();
        let cap = self.limit.map_or(total, |l| total.min(l as u64));
        let rows: Option<u64> = parts.iter().map(|p| p.rows_at_most(total)).sum();
        rows.map(|r| r.min(cap))
    }

    /// Statistics of the part `partition`, or of all of them.
    pub(crate) fn stats(&self, partition: Option<usize>) -> Statistics {
        let parts = match partition {
            Some(p) => &self.parts[p..=p],
            None => &self.parts[..],
        };
        let rows: Option<u64> = parts.iter().map(Part::rows).sum();
        let total = self.source.len();
        let at_most = self.rows_at_most(parts);
        let num_rows = match (rows, self.exact) {
            (Some(r), _) => Precision::Exact(r as usize),
            (None, true) if partition.is_none() || self.parts.len() == 1 => {
                Precision::Exact(total as usize)
            }
            _ => Precision::Inexact(at_most.unwrap_or(total) as usize),
        };
        let whole = partition.is_none() || self.parts.len() == 1;
        let columns = self
            .column_stats
            .iter()
            .map(|c| {
                let mut c = c.clone();
                if !(self.exact && whole) {
                    c.min_value = c.min_value.to_inexact();
                    c.max_value = c.max_value.to_inexact();
                }
                c
            })
            .collect();
        Statistics {
            num_rows,
            total_byte_size: Precision::Absent,
            column_statistics: columns,
        }
    }
}

impl DisplayAs for LidxScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "LidxScanExec: {}, projection=[{}], partitions={}",
                    self.describe_source(),
                    names.join(", "),
                    self.parts.len()
                )?;
                if !self.filters.is_empty() {
                    write!(f, ", key_filters=[{}]", self.filters.join(", "))?;
                }
                if let Some(rows) = self.parts.iter().map(Part::rows).sum::<Option<u64>>() {
                    write!(f, ", rows={rows}")?;
                } else if let Some(rows) = self.rows_at_most(&self.parts) {
                    write!(f, ", rows<={rows}")?;
                }
                if let Some(limit) = self.limit {
                    write!(f, ", limit={limit}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => {
                writeln!(f, "source={}", self.describe_source())?;
                write!(f, "key_filters=[{}]", self.filters.join(", "))
            }
        }
    }
}

impl ExecutionPlan for LidxScanExec {
    fn name(&self) -> &'static str {
        "LidxScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let part = match self.parts.get(partition) {
            Some(part) => part.clone(),
            // No parts (nothing matches): partition 0 is empty.
            None => Part::Positions(Vec::new()),
        };
        Ok(read_part(
            Arc::clone(&self.source),
            part,
            Arc::clone(&self.schema),
            self.columns.clone(),
            self.limit,
            context.session_config().batch_size().max(1),
        ))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let partition = args.partition().filter(|&p| p < self.parts.len());
        if args.partition().is_some() && partition.is_none() {
            // The one empty partition of a scan matching nothing.
            return Ok(Arc::new(Statistics::new_unknown(&self.schema)));
        }
        Ok(Arc::new(self.stats(partition)))
    }
}
