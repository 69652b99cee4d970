//! [`ListLiteralTypes`]: an analyzer rule that gives the literals of an `IN` list the type
//! of the column they are compared with, before DataFusion's type coercion sees the list.
//!
//! SQL spells a number that fits an `i64` as an `Int64` literal and a string as `Utf8`, while
//! a lidx table's keys are `UInt64` or `Binary` ([`crate::KEY`]). DataFusion's type coercion
//! then casts each literal of `key IN (...)` to the common type, and its expression simplifier
//! folds every cast back into a literal of the column's type, one small physical evaluation
//! a literal. For an `IN` list of 10,000 keys that folding was most of the query's planning:
//! `docs/results/datafusion.md` (session 65, 2-core AMD EPYC VM) measured DataFusion's
//! analyzer and optimizer at 17.4-28.2 ms of a 40-66 ms query with `Int64` literals, and 7.7
//! ms when the same list was spelled with keys past `i64::MAX` (which SQL types `UInt64`).
//! The rewritten expressions keep their names, as DataFusion's type coercion keeps them.
//!
//! This rule writes the literals in the column's type when doing so gives exactly what the
//! coercion and folding would: an `Int64` literal of at least zero into a `UInt64` column,
//! a `Utf8` (or `LargeUtf8`, `Utf8View`) literal into a `Binary` column as its UTF-8 bytes.
//! It leaves a list alone unless every item is such a literal (a `NULL`, a negative number
//! or an expression keeps DataFusion's own path, whose three-valued and overflow semantics
//! then apply unchanged), and it leaves every other expression alone.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DfResult, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// Gives an `IN` list's literals its column's type (see the module docs). Runs before
/// DataFusion's `TypeCoercion` ([`crate::SqlSession`] puts it first).
#[derive(Debug, Default)]
pub struct ListLiteralTypes;

impl AnalyzerRule for ListLiteralTypes {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DfResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let schema = merge_schema(&node.inputs());
            // Names kept as DataFusion's own type coercion keeps them: an expression is named
            // after its literals, and the nodes above refer to it by that name.
            let names = NamePreserver::new(&node);
            let rewritten = node.map_expressions(|expr| {
                let name = names.save(&expr);
                expr.transform_up(|e| Ok(typed_list(e, &schema)))
                    .map(|t| t.update_data(|e| name.restore(e)))
            })?;
            if rewritten.transformed {
                rewritten.map_data(|node| node.recompute_schema())
            } else {
                Ok(rewritten)
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "lidx_list_literal_types"
    }
}

/// `e` with its list's literals in the column's type, when `e` is such a list (module docs).
fn typed_list(e: Expr, schema: &DFSchema) -> Transformed<Expr> {
    let Expr::InList(InList {
        expr,
        list,
        negated,
    }) = e
    else {
        return Transformed::no(e);
    };
    let column_type = match expr.as_ref() {
        Expr::Column(c) => schema
            .qualified_field_from_column(c)
            .ok()
            .map(|(_, f)| f.data_type().clone()),
        _ => None,
    };
    let typed = column_type
        .and_then(|t| {
            list.iter()
                .map(|item| match item {
                    Expr::Literal(v, None) => literal_as(v, &t).map(|v| Expr::Literal(v, None)),
                    _ => None,
                })
                .collect::<Option<Vec<Expr>>>()
        })
        .filter(|typed| *typed != list);
    let changed = typed.is_some();
    let list = typed.unwrap_or(list);
    Transformed::new_transformed(
        Expr::InList(InList {
            expr,
            list,
            negated,
        }),
        changed,
    )
}

/// `v` in `column`'s type, when that is exactly what coercing and folding would give.
fn literal_as(v: &ScalarValue, column: &DataType) -> Option<ScalarValue> {
    match (v, column) {
        (ScalarValue::UInt64(Some(_)), DataType::UInt64) => Some(v.clone()),
        (ScalarValue::Int64(Some(n)), DataType::UInt64) => {
            u64::try_from(*n).ok().map(|n| ScalarValue::UInt64(Some(n)))
        }
        (ScalarValue::Binary(Some(_)), DataType::Binary) => Some(v.clone()),
        (
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            DataType::Binary,
        ) => Some(ScalarValue::Binary(Some(s.as_bytes().to_vec()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::logical_plan::builder::LogicalTableSource;
    use datafusion::logical_expr::{col, lit, LogicalPlanBuilder};
    use std::sync::Arc;

    /// A scan of a table `t` with one column `key` of type `column`.
    fn scan(column: DataType) -> LogicalPlanBuilder {
        let schema = Schema::new(vec![Field::new("key", column, false)]);
        let source = LogicalTableSource::new(Arc::new(schema));
        LogicalPlanBuilder::scan("t", Arc::new(source), None).unwrap()
    }

    fn plan(column: DataType, list: Vec<Expr>, negated: bool) -> LogicalPlan {
        scan(column)
            .filter(col("key").in_list(list, negated))
            .unwrap()
            .build()
            .unwrap()
    }

    fn list_of(plan: &LogicalPlan) -> Vec<Expr> {
        let LogicalPlan::Filter(f) = plan else {
            panic!("not a filter: {plan}");
        };
        let Expr::InList(l) = &f.predicate else {
            panic!("not a list: {}", f.predicate);
        };
        l.list.clone()
    }

    fn analyzed(p: LogicalPlan) -> LogicalPlan {
        ListLiteralTypes
            .analyze(p, &ConfigOptions::default())
            .unwrap()
    }

    #[test]
    fn non_negative_numbers_become_the_unsigned_key_type() {
        let p = analyzed(plan(
            DataType::UInt64,
            vec![lit(5i64), lit(0i64), lit(u64::MAX)],
            true,
        ));
        assert_eq!(
            list_of(&p),
            vec![lit(5u64), lit(0u64), lit(u64::MAX)],
            "{p}"
        );
    }

    #[test]
    fn a_projected_list_keeps_its_name() {
        let p = scan(DataType::UInt64)
            .project(vec![col("key").in_list(vec![lit(5i64), lit(6i64)], false)])
            .unwrap()
            .build()
            .unwrap();
        let before = p.schema().field(0).name().clone();
        let p = analyzed(p);
        assert_eq!(p.schema().field(0).name(), &before, "{p}");
        assert!(p.to_string().contains("UInt64(5)"), "{p}");
    }

    #[test]
    fn a_list_with_a_negative_number_a_null_or_an_expression_is_left_alone() {
        let lists = [
            vec![lit(5i64), lit(-1i64)],
            vec![lit(5i64), lit(ScalarValue::Int64(None))],
            vec![lit(5i64), lit(2i64) + lit(3i64)],
        ];
        for list in lists {
            let p = analyzed(plan(DataType::UInt64, list.clone(), false));
            assert_eq!(list_of(&p), list, "{p}");
        }
    }

    #[test]
    fn strings_become_the_binary_key_type_and_other_columns_keep_their_lists() {
        let p = analyzed(plan(DataType::Binary, vec![lit("ab"), lit("")], false));
        assert_eq!(
            list_of(&p),
            vec![lit(b"ab".to_vec()), lit(Vec::<u8>::new())],
            "{p}"
        );
        let p = analyzed(plan(DataType::Int32, vec![lit(5i64)], false));
        assert_eq!(list_of(&p), vec![lit(5i64)], "{p}");
        let p = analyzed(plan(DataType::UInt64, vec![lit("5")], false));
        assert_eq!(list_of(&p), vec![lit("5")], "{p}");
    }
}
