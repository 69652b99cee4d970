//! [`LidxIndexJoinExec`]: an index nested-loop join that probes a lidx table's learned index
//! with the keys of the other side (paper 000 §4.1), in place of DataFusion's hash join when
//! the other side is small (`crate::index_join_rule` decides).
//!
//! The paper's INLJ streams the smaller (outer) table, sorted, and looks each key up in an
//! index over the larger (inner) one. DataFusion's outer side is any plan, in batches and in
//! no order, so each batch's keys are sorted first (the paper's §4.1 precondition for both of
//! its optimizations) and then looked up in that order through a [`crate::table_source`]
//! seeker, which is lidx's INLJ lookup: the PGM's cursor walks forward over its segments, each
//! window starts no earlier than the previous answer, and a window's blocks, once read, serve
//! every later key that falls in them (pages already read are skipped). A new batch starts a
//! new seeker (batches are not sorted among themselves) that reads on with the blocks and
//! readahead of the partition's last batch (`lidx::join::WindowHold`): when batches come in
//! key order, as a sorted outer table's scan gives them, the partition's lookups are one
//! dense walk over the table instead of one per batch.
//!
//! Inner join only, on one equality of the outer key column with the table's key; the table's
//! keys are unique, so each outer row has at most one match. Outer rows with a null key match
//! nothing (SQL's `=`). Output rows come per outer batch, in key order within it, with the
//! hash join's columns (its left side's, then its right side's, then its projection); the
//! output is partitioned as the outer side and declares no order (the plan above gets its
//! repartitions and sorts from DataFusion's enforcing rule, which runs after the rule).
//! Lookups read blocks on the thread that polls the stream: one batch's lookups at a time. A
//! batch whose probes are sparse in the table hints their windows ahead (`crate::table_source`'s
//! seeker), so a cold table's blocks are read many at once.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, UInt32Array};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{SchemaRef, UInt64Type};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties,
    Partitioning, PlanProperties, ReplaceChildrenOptions,
};
use futures::StreamExt;
use lidx::join::WindowHold;

use crate::error::external;
use crate::provider::Source;
use crate::scan::LidxScanExec;
use crate::table_source::{SourceKey, TableSource};

/// A key type whose outer column the join reads.
trait ProbeKey: SourceKey {
    /// The non-null keys of `column` with their rows.
    fn probes(column: &ArrayRef) -> Vec<(Self, u32)>;
}

impl ProbeKey for u64 {
    fn probes(column: &ArrayRef) -> Vec<(Self, u32)> {
        let keys = column.as_primitive::<UInt64Type>();
        (0..keys.len())
            .filter(|&i| keys.is_valid(i))
            .map(|i| (keys.value(i), i as u32))
            .collect()
    }
}

impl ProbeKey for [u8; 16] {
    /// A binary key of another length than 16 bytes equals no table key.
    fn probes(column: &ArrayRef) -> Vec<(Self, u32)> {
        let keys = column.as_binary::<i32>();
        (0..keys.len())
            .filter(|&i| keys.is_valid(i))
            .filter_map(|i| Some((<[u8; 16]>::try_from(keys.value(i)).ok()?, i as u32)))
            .collect()
    }
}

/// An index nested-loop join of an outer plan with a lidx table; see the module docs.
#[derive(Debug, Clone)]
pub struct LidxIndexJoinExec {
    outer: Arc<dyn ExecutionPlan>,
    /// The inner table's scan, as the hash join had it (its columns are the inner side's).
    inner: Arc<LidxScanExec>,
    /// The outer key column.
    outer_key: usize,
    /// True when the outer side was the hash join's left side.
    outer_is_left: bool,
    /// The hash join's projection of its left-then-right columns, if it had one.
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl LidxIndexJoinExec {
    /// The join of `outer` with the table `inner` scans (it must be a table's scan that reads
    /// all of it), on `outer_key = key`, with the output schema `schema` of a hash join whose
    /// left side was the outer one when `outer_is_left`, and its `projection`.
    pub(crate) fn new(
        outer: Arc<dyn ExecutionPlan>,
        inner: Arc<LidxScanExec>,
        outer_key: usize,
        outer_is_left: bool,
        projection: Option<Vec<usize>>,
        schema: SchemaRef,
    ) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(outer.output_partitioning().partition_count()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        LidxIndexJoinExec {
            outer,
            inner,
            outer_key,
            outer_is_left,
            projection,
            schema,
            properties: Arc::new(properties),
        }
    }

    #[cfg(feature = "cluster")]
    /// The scan of the inner table, whose columns the join returns.
    pub(crate) fn inner(&self) -> &Arc<LidxScanExec> {
        &self.inner
    }

    #[cfg(feature = "cluster")]
    /// The outer side's key column.
    pub(crate) fn outer_key(&self) -> usize {
        self.outer_key
    }

    #[cfg(feature = "cluster")]
    /// True when the outer side was the hash join's left side.
    pub(crate) fn outer_is_left(&self) -> bool {
        self.outer_is_left
    }

    #[cfg(feature = "cluster")]
    /// The hash join's projection of its left-then-right columns, if it had one.
    pub(crate) fn projection(&self) -> Option<&[usize]> {
        self.projection.as_deref()
    }

    /// Joins one outer batch, reading on from `hold`, the blocks and readahead the
    /// partition's last batch left, and leaving this batch's there.
    fn probe_batch(
        &self,
        batch: &RecordBatch,
        hold: &mut Option<WindowHold>,
    ) -> Result<RecordBatch> {
        match self.inner.source().as_ref() {
            Source::U64(t) => self.join_batch(t, batch, hold),
            Source::Str16(t) => self.join_batch(t, batch, hold),
            Source::Store(_) => datafusion::common::internal_err!(
                "an index join was planned over a store, which has no learned index"
            ),
        }
    }

    fn join_batch<K: ProbeKey>(
        &self,
        table: &TableSource<K>,
        batch: &RecordBatch,
        hold: &mut Option<WindowHold>,
    ) -> Result<RecordBatch> {
        let mut probes = K::probes(batch.column(self.outer_key));
        // Key order is the table's: byte-wise for string keys, as `Ord` on their bytes.
        probes.sort_unstable();
        let mut rows = Vec::new();
        let mut keys = Vec::new();
        let mut values = BinaryBuilder::new();
        if let Some(mut seeker) = table.seeker_resuming(hold.take()) {
            if let (Some(first), Some(last)) = (probes.first(), probes.last()) {
                seeker.plan(first.0, last.0, probes.len());
            }
            for (i, &(key, row)) in probes.iter().enumerate() {
                seeker.pace(i, probes.len(), |j| Some(probes[j].0));
                seeker.lower_bound(key).map_err(external)?;
                if let Some((found, value)) = seeker.found() {
                    if found == key {
                        rows.push(row);
                        keys.push(key);
                        values.append_value(value);
                    }
                }
            }
            *hold = Some(seeker.into_hold());
        }
        let values: ArrayRef = Arc::new(values.finish());
        let taken = UInt32Array::from(rows);
        let outer: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| take(c.as_ref(), &taken, None))
            .collect::<std::result::Result<_, _>>()?;
        let keys = K::column(keys);
        let inner: Vec<ArrayRef> = self
            .inner
            .columns()
            .iter()
            .map(|&c| {
                if c == 0 {
                    Arc::clone(&keys)
                } else {
                    Arc::clone(&values)
                }
            })
            .collect();
        let both: Vec<ArrayRef> = if self.outer_is_left {
            outer.into_iter().chain(inner).collect()
        } else {
            inner.into_iter().chain(outer).collect()
        };
        let columns = match &self.projection {
            Some(p) => p.iter().map(|&i| Arc::clone(&both[i])).collect(),
            None => both,
        };
        let options = RecordBatchOptions::new().with_row_count(Some(taken.len()));
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &options,
        )?)
    }
}

impl DisplayAs for LidxIndexJoinExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let outer_key = self.outer.schema().field(self.outer_key).name().clone();
        let side = if self.outer_is_left { "left" } else { "right" };
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "LidxIndexJoinExec: on=({outer_key}@{} = key), outer={side}, inner={}",
                self.outer_key,
                self.inner.describe_source()
            ),
            DisplayFormatType::TreeRender => write!(f, "on=({outer_key} = key)"),
        }
    }
}

impl ExecutionPlan for LidxIndexJoinExec {
    fn name(&self) -> &'static str {
        "LidxIndexJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    /// The outer side only: the inner table is read by lookups, not executed as a plan.
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.outer]
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
            return datafusion::common::internal_err!(
                "LidxIndexJoinExec has one child, the outer side; given {}",
                children.len()
            );
        }
        Ok(Arc::new(LidxIndexJoinExec::new(
            children.swap_remove(0),
            Arc::clone(&self.inner),
            self.outer_key,
            self.outer_is_left,
            self.projection.clone(),
            Arc::clone(&self.schema),
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
        let outer = self.outer.execute(partition, context)?;
        let join = self.clone();
        let mut hold = None;
        let joined = outer.map(move |batch| join.probe_batch(&batch?, &mut hold));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            joined,
        )))
    }
}
