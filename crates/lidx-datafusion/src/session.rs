//! [`SqlSession`]: a DataFusion session with lidx tables and stores registered by name, whose
//! queries are checked for unregistered table names before they are planned (a typed
//! [`Error::UnknownTable`] that says how to register one, not DataFusion's planning error),
//! whose `IN` lists' literals take their column's type before DataFusion coerces them
//! ([`ListLiteralTypes`]), and whose physical plans get [`IndexJoinRule`].

use std::path::Path;
use std::sync::Arc;

use datafusion::dataframe::DataFrame;
use datafusion::execution::context::SessionContext;
use datafusion::prelude::SessionConfig;

use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::optimizer::{Analyzer, AnalyzerRule};
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;
use datafusion::physical_optimizer::PhysicalOptimizerRule;

use crate::error::{Error, Result};
use crate::index_join_rule::IndexJoinRule;
use crate::literal_types::ListLiteralTypes;
use crate::provider::LidxTable;

/// The outer side's row limit for index joins in a [`SqlSession::new`], from a measurement
/// (`docs/results/datafusion.md`, `lidx-sql-bench` on the 2-core AMD EPYC VM): against a
/// 10M-row table, the index join never stopped beating DataFusion's hash join over the same
/// lidx tables up to the largest outer side measured, the whole table (10M rows, ratio 1:
/// 1.68x warm, 1.87x cold); it was 1.42-2.64x faster for outer sides of 333K-3.3M rows and
/// within 0.91-1.34x of it for 10K-100K rows (measured while lidx's reads dropped their pages;
/// with them kept, 2.4-6.6x at 10K-10M rows warm). The limit is that largest measured outer
/// side; past it (an outer side larger than such a table) nothing was measured.
pub const DEFAULT_INDEX_JOIN_OUTER_ROWS: usize = 10_000_000;

/// DataFusion's physical optimizer rules with [`IndexJoinRule`] for outer sides of up to
/// `max_outer_rows` rows (none for `None`) before the rule that enforces distribution and
/// order (see `IndexJoinRule`), or first should a later DataFusion name it otherwise: every
/// enforcing rule then runs after it.
pub(crate) fn physical_rules(
    max_outer_rows: Option<usize>,
) -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
    let mut rules = PhysicalOptimizer::new().rules;
    if let Some(rows) = max_outer_rows {
        let at = rules
            .iter()
            .position(|r| r.name() == "EnsureRequirements")
            .unwrap_or(0);
        rules.insert(at, Arc::new(IndexJoinRule::new(rows)));
    }
    rules
}

/// DataFusion's analyzer rules with [`ListLiteralTypes`] first, before its type coercion.
pub(crate) fn analyzer_rules() -> Vec<Arc<dyn AnalyzerRule + Send + Sync>> {
    let mut rules: Vec<Arc<dyn AnalyzerRule + Send + Sync>> = vec![Arc::new(ListLiteralTypes)];
    rules.extend(Analyzer::new().rules);
    rules
}

/// A session of SQL over lidx tables and stores.
pub struct SqlSession {
    ctx: SessionContext,
    names: Vec<String>,
}

impl SqlSession {
    /// A session whose scans split into at most `target_partitions` partitions (at least 1),
    /// with index joins for outer sides of up to [`DEFAULT_INDEX_JOIN_OUTER_ROWS`] rows.
    pub fn new(target_partitions: usize) -> SqlSession {
        SqlSession::with_index_join(target_partitions, Some(DEFAULT_INDEX_JOIN_OUTER_ROWS))
    }

    /// [`SqlSession::new`] with index joins for outer sides of up to `max_outer_rows` rows
    /// ([`IndexJoinRule`]), or none (hash joins only) for `None`.
    pub fn with_index_join(target_partitions: usize, max_outer_rows: Option<usize>) -> SqlSession {
        let config = SessionConfig::new().with_target_partitions(target_partitions.max(1));
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_analyzer_rules(analyzer_rules())
            .with_physical_optimizer_rules(physical_rules(max_outer_rows));
        SqlSession::of(SessionContext::new_with_state(state.build()))
    }

    /// A session of `ctx`, no table registered.
    pub(crate) fn of(ctx: SessionContext) -> SqlSession {
        SqlSession {
            ctx,
            names: Vec::new(),
        }
    }

    /// Registers the table file or store directory `path` as `name` ([`LidxTable::open`]).
    /// A name is lowercase letters, digits and `_`, as SQL spells an unquoted name once
    /// normalized ([`Error::BadName`]), and is given once ([`Error::DuplicateName`]).
    pub fn register(&mut self, name: &str, path: &Path) -> Result<()> {
        self.check_name(name)?;
        let table = LidxTable::open(path)?;
        self.register_table(name, table)
    }

    /// Registers an open [`LidxTable`] as `name` (named as in [`SqlSession::register`]).
    pub fn register_table(&mut self, name: &str, table: LidxTable) -> Result<()> {
        self.check_name(name)?;
        self.ctx.register_table(name, Arc::new(table))?;
        self.names.push(name.to_string());
        Ok(())
    }

    fn check_name(&self, name: &str) -> Result<()> {
        let mut chars = name.chars();
        let plain = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !plain {
            return Err(Error::BadName {
                name: name.to_string(),
            });
        }
        if self.names.iter().any(|n| n == name) {
            return Err(Error::DuplicateName {
                name: name.to_string(),
            });
        }
        Ok(())
    }

    /// Plans `query` (one SQL statement), after checking that every table it names is
    /// registered. Run the result with [`DataFrame::collect`] or stream it.
    pub async fn sql(&self, query: &str) -> Result<DataFrame> {
        let state = self.ctx.state();
        let dialect = state.config().options().sql_parser.dialect;
        let statement = state.sql_to_statement(query, &dialect)?;
        for table in state.resolve_table_references(&statement)? {
            if !self.ctx.table_exist(table.clone())? {
                return Err(Error::UnknownTable {
                    name: table.to_string(),
                    known: self.names.clone(),
                });
            }
        }
        // Planned from the statement already parsed (`SessionContext::sql` would parse it
        // again).
        let plan = state.statement_to_plan(statement).await?;
        Ok(self.ctx.execute_logical_plan(plan).await?)
    }

    /// The DataFusion session, to register other tables or functions in.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }
}
