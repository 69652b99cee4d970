//! [`LidxReadExec`]: a lidx scan as Ballista can hand out by partition, and
//! [`ShardScans`], the scheduler's last physical rule, which puts it in place of every
//! [`LidxScanExec`].
//!
//! Ballista 55 gives each task a slice of a stage's partitions and, before it ships the
//! stage's plan, cuts the plan's leaves down to that slice
//! (`ballista_scheduler::state::task_builder`), but only the leaves it knows: file scans,
//! in-memory scans and shuffle readers. Any other leaf keeps every partition, and the executor
//! runs all of them in every task: each task would read the whole table. So the scan is
//! shipped as two nodes: an in-memory scan (`MemorySourceConfig`, which Ballista cuts and
//! `datafusion-proto` serializes) whose partition `i` holds one batch describing the scan's
//! part `i` (a table's position runs, `start`/`end`; a store's key ranges, or a table's that
//! its partitions seek as they read, `lo`/`hi`), and
//! above it a [`LidxReadExec`] that reads, for each partition, the part its input describes.
//! A task then reads exactly its parts, wherever it runs, and the plan carries the seeks the
//! scheduler made (positions found through the learned index) or the key ranges the executors
//! seek, never rows.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_err, Statistics};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties,
    Partitioning, PlanProperties, ReplaceChildrenOptions,
};
use futures::{StreamExt, TryStreamExt};

use crate::provider::{LidxTable, Source};
use crate::ranges::{KeyRange, KeyRanges};
use crate::scan::{read_part, LidxScanExec, Part};
use crate::table_source::SourceKey;

/// Reads the parts its input describes, one per partition; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct LidxReadExec {
    table: LidxTable,
    /// The described parts: one batch (or none) per partition.
    input: Arc<dyn ExecutionPlan>,
    schema: SchemaRef,
    columns: Vec<usize>,
    limit: Option<usize>,
    /// The key filters the scan took over, as written (for `EXPLAIN`).
    filters: Vec<String>,
    /// The whole scan's statistics, as the scan had them when it was replaced.
    stats: Arc<Statistics>,
    properties: Arc<PlanProperties>,
}

/// The columns describing a table's part of positions: ascending, disjoint runs.
fn positions_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("start", DataType::UInt64, false),
        Field::new("end", DataType::UInt64, false),
    ]))
}

/// The columns describing a part of key ranges, a store's or a table's: ascending, disjoint
/// ranges (`hi` null: no end).
fn ranges_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("lo", DataType::Binary, false),
        Field::new("hi", DataType::Binary, true),
    ]))
}

/// `part` as one batch of the schema its kind is described in.
fn describe(part: &Part) -> Result<RecordBatch> {
    Ok(match part {
        Part::Positions(runs) => {
            let start = UInt64Array::from_iter_values(runs.iter().map(|r| r.start));
            let end = UInt64Array::from_iter_values(runs.iter().map(|r| r.end));
            RecordBatch::try_new(
                positions_schema(),
                vec![Arc::new(start) as ArrayRef, Arc::new(end)],
            )?
        }
        Part::TableKeys(ranges) => {
            let lo =
                BinaryArray::from_iter_values(ranges.ranges().iter().map(|r| r.lo.to_be_bytes()));
            let hi: BinaryArray = ranges
                .ranges()
                .iter()
                .map(|r| r.hi.map(u128::to_be_bytes))
                .collect();
            RecordBatch::try_new(
                ranges_schema(),
                vec![Arc::new(lo) as ArrayRef, Arc::new(hi)],
            )?
        }
        Part::Keys(ranges) => {
            let lo = BinaryArray::from_iter_values(ranges.ranges().iter().map(|r| &r.lo));
            let hi: BinaryArray = ranges.ranges().iter().map(|r| r.hi.as_deref()).collect();
            RecordBatch::try_new(
                ranges_schema(),
                vec![Arc::new(lo) as ArrayRef, Arc::new(hi)],
            )?
        }
    })
}

/// What a scan's parts are, and so how they are described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A table's position runs ([`positions_schema`]).
    Positions,
    /// A table's key ranges, widened keys as 16 big-endian bytes ([`ranges_schema`]).
    TableKeys,
    /// A store's key ranges ([`ranges_schema`]).
    Keys,
}

impl Kind {
    /// The kind of the parts of a scan (of a store when `store`) whose first part is
    /// `first` (a table scan's parts are all of one kind).
    fn of(store: bool, first: Option<&Part>) -> Kind {
        if store {
            Kind::Keys
        } else if matches!(first, Some(Part::TableKeys(_))) {
            Kind::TableKeys
        } else {
            Kind::Positions
        }
    }

    /// The kind of the parts described in `schema` for a scan of a store when `store`.
    fn described(store: bool, schema: &Schema) -> Kind {
        if store {
            Kind::Keys
        } else if schema.field(0).data_type() == &DataType::Binary {
            Kind::TableKeys
        } else {
            Kind::Positions
        }
    }

    fn schema(self) -> SchemaRef {
        match self {
            Kind::Positions => positions_schema(),
            Kind::TableKeys | Kind::Keys => ranges_schema(),
        }
    }
}

/// A widened table key ([`SourceKey::wide`]) from its 16 big-endian bytes.
fn wide_key(bytes: &[u8]) -> Result<u128> {
    match <[u8; 16]>::try_from(bytes) {
        Ok(b) => Ok(b.wide()),
        Err(_) => internal_err!("a lidx table's key range is described by 16-byte keys"),
    }
}

/// The part described by `batches` (one partition's), of `kind`.
fn part_of(batches: &[RecordBatch], kind: Kind) -> Result<Part> {
    if kind == Kind::Positions {
        let mut runs: Vec<Range<u64>> = Vec::new();
        for b in batches {
            let (start, end) = (b.column(0), b.column(1));
            if start.data_type() != &DataType::UInt64 || end.data_type() != &DataType::UInt64 {
                return internal_err!("a lidx table part is described by two UInt64 columns");
            }
            let (start, end) = (
                start.as_primitive::<UInt64Type>(),
                end.as_primitive::<UInt64Type>(),
            );
            runs.extend((0..b.num_rows()).map(|i| start.value(i)..end.value(i)));
        }
        Ok(Part::Positions(runs))
    } else {
        let mut ranges = Vec::new();
        for b in batches {
            let (lo, hi) = (b.column(0), b.column(1));
            if lo.data_type() != &DataType::Binary || hi.data_type() != &DataType::Binary {
                return internal_err!("key ranges are described by two Binary columns");
            }
            let (lo, hi) = (lo.as_binary::<i32>(), hi.as_binary::<i32>());
            ranges.extend((0..b.num_rows()).map(|i| KeyRange {
                lo: lo.value(i).to_vec(),
                hi: hi.is_valid(i).then(|| hi.value(i).to_vec()),
            }));
        }
        if kind == Kind::Keys {
            return Ok(Part::Keys(KeyRanges::of(ranges)));
        }
        let wide = ranges
            .iter()
            .map(|r| {
                Ok(KeyRange {
                    lo: wide_key(&r.lo)?,
                    hi: r.hi.as_deref().map(wide_key).transpose()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Part::TableKeys(KeyRanges::of(wide)))
    }
}

impl LidxReadExec {
    /// The reader of `scan`'s parts over the table `table` that `scan` reads.
    pub(crate) fn of_scan(table: LidxTable, scan: &LidxScanExec) -> Result<Self> {
        let store = matches!(scan.source().as_ref(), Source::Store(_));
        let kind = Kind::of(store, scan.parts().first());
        let partitions = scan
            .parts()
            .iter()
            .map(|part| Ok(vec![describe(part)?]))
            .collect::<Result<Vec<_>>>()?;
        // A scan matching nothing has one empty partition.
        let partitions = if partitions.is_empty() {
            vec![Vec::new()]
        } else {
            partitions
        };
        let input = MemorySourceConfig::try_new_exec(&partitions, kind.schema(), None)?;
        let stats = StatisticsContext::new().compute(scan, &StatisticsArgs::new())?;
        Ok(LidxReadExec::new(
            table,
            input,
            scan.schema(),
            scan.columns().to_vec(),
            scan.limit(),
            scan.filters().to_vec(),
            stats,
            scan.properties(),
        ))
    }

    /// A reader of the parts `input` describes, with `like`'s equivalences (the key order).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        table: LidxTable,
        input: Arc<dyn ExecutionPlan>,
        schema: SchemaRef,
        columns: Vec<usize>,
        limit: Option<usize>,
        filters: Vec<String>,
        stats: Arc<Statistics>,
        like: &PlanProperties,
    ) -> Self {
        let properties = PlanProperties::new(
            like.equivalence_properties().clone(),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        LidxReadExec {
            table,
            input,
            schema,
            columns,
            limit,
            filters,
            stats,
            properties: Arc::new(properties),
        }
    }

    /// The table or store read.
    pub(crate) fn table(&self) -> &LidxTable {
        &self.table
    }

    /// Which source columns (0 key, 1 value) the output holds, in its order.
    pub(crate) fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The most rows a partition of key ranges returns (a store's, or a table's sought as
    /// it is read).
    pub(crate) fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// The key filters taken over, as written.
    pub(crate) fn filters(&self) -> &[String] {
        &self.filters
    }
}

impl DisplayAs for LidxReadExec {
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
                    "LidxReadExec: {}, projection=[{}]",
                    self.table.describe(),
                    names.join(", ")
                )?;
                if !self.filters.is_empty() {
                    write!(f, ", key_filters=[{}]", self.filters.join(", "))?;
                }
                if let Some(limit) = self.limit {
                    write!(f, ", limit={limit}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => write!(f, "source={}", self.table.describe()),
        }
    }
}

impl ExecutionPlan for LidxReadExec {
    fn name(&self) -> &'static str {
        "LidxReadExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!(
                "LidxReadExec has one child, its parts; given {}",
                children.len()
            );
        }
        Ok(Arc::new(LidxReadExec::new(
            self.table.clone(),
            children.swap_remove(0),
            Arc::clone(&self.schema),
            self.columns.clone(),
            self.limit,
            self.filters.clone(),
            Arc::clone(&self.stats),
            &self.properties,
        )))
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
        let described = self.input.execute(partition, Arc::clone(&context))?;
        let source = Arc::clone(self.table.source());
        let store = matches!(source.as_ref(), Source::Store(_));
        let kind = Kind::described(store, &self.input.schema());
        let (schema, columns, limit) = (Arc::clone(&self.schema), self.columns.clone(), self.limit);
        let batch_rows = context.session_config().batch_size().max(1);
        let rows = futures::stream::once(async move {
            let batches: Vec<RecordBatch> = described.try_collect().await?;
            let part = part_of(&batches, kind)?;
            Ok::<_, DataFusionError>(read_part(source, part, schema, columns, limit, batch_rows))
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            rows.boxed(),
        )))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        Ok(match args.partition() {
            None => Arc::clone(&self.stats),
            Some(_) => Arc::new(Statistics::new_unknown(&self.schema)),
        })
    }
}

/// The scheduler's last physical rule: each [`LidxScanExec`] becomes an in-memory scan of its
/// parts' descriptions under a [`LidxReadExec`] (module docs). It runs after every other rule,
/// the index join's included (an index join's table is read by lookups, not by a scan, and
/// stays as it is).
#[derive(Debug, Default)]
pub(crate) struct ShardScans;

impl PhysicalOptimizerRule for ShardScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(scan) = node.downcast_ref::<LidxScanExec>() else {
                return Ok(Transformed::no(node));
            };
            let table = LidxTable::of_source(Arc::clone(scan.source()));
            Ok(Transformed::yes(
                Arc::new(LidxReadExec::of_scan(table, scan)?) as Arc<dyn ExecutionPlan>,
            ))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "lidx_shard_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_survive_their_descriptions() {
        let runs = Part::Positions(vec![0..5, 9..12]);
        let keys = Part::Keys(KeyRanges::of(vec![
            KeyRange {
                lo: b"a".to_vec(),
                hi: Some(b"c".to_vec()),
            },
            KeyRange {
                lo: b"x".to_vec(),
                hi: None,
            },
        ]));
        let table_keys = Part::TableKeys(KeyRanges::of(vec![
            KeyRange { lo: 3, hi: Some(4) },
            KeyRange {
                lo: u128::from(u64::MAX) << 8,
                hi: None,
            },
        ]));
        for (part, store, kind) in [
            (runs, false, Kind::Positions),
            (table_keys, false, Kind::TableKeys),
            (keys, true, Kind::Keys),
        ] {
            assert_eq!(Kind::of(store, Some(&part)), kind);
            assert_eq!(Kind::described(store, &kind.schema()), kind);
            let batch = describe(&part).unwrap();
            // Split over two batches, as a partition may arrive.
            let (a, b) = (batch.slice(0, 1), batch.slice(1, 1));
            let back = part_of(&[a, b], kind).unwrap();
            assert_eq!(format!("{back:?}"), format!("{part:?}"));
        }
    }
}
