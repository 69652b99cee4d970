//! [`IndexJoinRule`]: the physical optimizer rule that puts a [`LidxIndexJoinExec`] where
//! DataFusion planned a hash join (or a sort-merge join, which a session that does not prefer
//! hash joins plans instead: Ballista's) whose one side is a whole lidx table and whose other
//! side is small.
//!
//! Paper 000 §4.2 prices an INLJ at `|R|/B + min(|R|, |S|/eps)(1 + alpha eps/B)` block reads
//! against a hash join's reading of both tables: with a small outer side `R`, the lookups read a
//! few windows of `S` instead of all of it, and the win shrinks as `R` grows (§6.2: ratios of
//! 1 to 1000). Where the two cross on a given machine is a measurement this rule does not
//! make: the outer side's size limit is the rule's parameter ([`IndexJoinRule::new`]), compared
//! with the outer plan's row count statistic (exact or estimated; a plan without one is never
//! replaced). [`crate::DEFAULT_INDEX_JOIN_OUTER_ROWS`] (10M rows) is the measured default:
//! on the 2-core AMD EPYC VM, against a 10M-row table, no crossover appeared up to an outer side
//! of the whole table (index join 1.68x faster than the hash join warm, 1.87x cold;
//! `docs/results/datafusion.md`).
//!
//! The rule replaces a `HashJoinExec` or `SortMergeJoinExec` only when everything it needs
//! holds, and leaves it otherwise:
//!
//! * an inner join, on exactly one pair of plain columns, with no join filter and no fetch,
//!   where a null key matches nothing (SQL's `=`);
//! * one side is directly a scan of a lidx *table* (a store has no learned index to probe)
//!   that reads the whole table (no key filter or limit taken over: "no leftover filters"),
//!   and the join's column on that side is its `key`;
//! * the other side's key column has the table key's type, and its row count is at most the
//!   limit.
//!
//! It must run after DataFusion's `JoinSelection` (which settles the hash join's sides) and
//! before its `EnsureRequirements` (which adds the repartitions and sorts that the operators
//! above need): the index join's output is partitioned as its outer side and in no declared
//! order, not as the hash join's, and `EnsureRequirements` then adds what that changes
//! ([`crate::SqlSession`] puts the rule there).

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::NullEquality;
use datafusion::error::Result;
use datafusion::logical_expr::JoinType;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExprRef;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::joins::{HashJoinExec, SortMergeJoinExec};
use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};
use datafusion::physical_plan::ExecutionPlan;

use crate::index_join::LidxIndexJoinExec;
use crate::provider::Source;
use crate::scan::LidxScanExec;

/// Replaces hash joins with index joins; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct IndexJoinRule {
    max_outer_rows: usize,
}

impl IndexJoinRule {
    /// A rule that replaces a hash join when its outer side has at most `max_outer_rows`
    /// rows. Larger means index joins for larger outer sides: fewer table blocks read while
    /// the outer side is small against the table, more random reads than one scan once it is
    /// not (paper 000 §4.2).
    pub fn new(max_outer_rows: usize) -> Self {
        IndexJoinRule { max_outer_rows }
    }

    /// The index join for the hash join `join`, when the module docs' conditions hold.
    fn replace_hash(&self, join: &HashJoinExec) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        if *join.join_type() != JoinType::Inner
            || join.filter().is_some()
            || join.fetch().is_some()
            || join.null_aware
            || join.null_equality() != NullEquality::NullEqualsNothing
        {
            return Ok(None);
        }
        let projection = join.projection.as_ref().map(|p| p.to_vec());
        self.replace(
            join.left(),
            join.right(),
            join.on(),
            projection,
            join.schema(),
        )
    }

    /// The index join for the sort-merge join `join` (what a session that does not prefer
    /// hash joins plans, Ballista's among them), when the module docs' conditions hold.
    fn replace_sort_merge(
        &self,
        join: &SortMergeJoinExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        if join.join_type() != JoinType::Inner
            || join.filter().is_some()
            || join.null_equality() != NullEquality::NullEqualsNothing
        {
            return Ok(None);
        }
        self.replace(join.left(), join.right(), join.on(), None, join.schema())
    }

    /// The index join of an inner equijoin of `left` and `right` on `on`, with `projection`
    /// of its left-then-right columns and the output `schema`, when one side is a whole
    /// table on its key and the other is small enough.
    fn replace(
        &self,
        left: &Arc<dyn ExecutionPlan>,
        right: &Arc<dyn ExecutionPlan>,
        on: &[(PhysicalExprRef, PhysicalExprRef)],
        projection: Option<Vec<usize>>,
        schema: SchemaRef,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let [(l, r)] = on else {
            return Ok(None);
        };
        let (left_col, right_col) = match (l.downcast_ref::<Column>(), r.downcast_ref::<Column>()) {
            (Some(l), Some(r)) => (l.index(), r.index()),
            _ => return Ok(None),
        };
        let sides = [
            (right, right_col, left, left_col, true),
            (left, left_col, right, right_col, false),
        ];
        for (inner, inner_col, outer, outer_col, outer_is_left) in sides {
            let Some(scan) = table_scan(inner) else {
                continue;
            };
            if scan.columns().get(inner_col) != Some(&0) {
                continue;
            }
            let key_type = scan.schema().field(inner_col).data_type().clone();
            if outer.schema().field(outer_col).data_type() != &key_type {
                continue;
            }
            let stats = StatisticsContext::new().compute(outer.as_ref(), &StatisticsArgs::new())?;
            match stats.num_rows.get_value() {
                Some(&rows) if rows <= self.max_outer_rows => {}
                _ => continue,
            }
            return Ok(Some(Arc::new(LidxIndexJoinExec::new(
                Arc::clone(outer),
                scan,
                outer_col,
                outer_is_left,
                projection,
                schema,
            ))));
        }
        Ok(None)
    }
}

/// The lidx table scan `plan` is, when it reads a whole table.
fn table_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<LidxScanExec>> {
    let scan = plan.downcast_ref::<LidxScanExec>()?;
    let is_table = matches!(scan.source().as_ref(), Source::U64(_) | Source::Str16(_));
    (is_table && scan.reads_all()).then(|| Arc::new(scan.clone()))
}

impl PhysicalOptimizerRule for IndexJoinRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let replaced = if let Some(join) = node.downcast_ref::<HashJoinExec>() {
                self.replace_hash(join)?
            } else if let Some(join) = node.downcast_ref::<SortMergeJoinExec>() {
                self.replace_sort_merge(join)?
            } else {
                None
            };
            Ok(match replaced {
                Some(index_join) => Transformed::yes(index_join),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "lidx_index_join"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
