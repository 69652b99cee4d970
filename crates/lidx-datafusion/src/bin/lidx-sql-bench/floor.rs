//! DataFusion's own share of a query's time: the least any table provider can cost.
//!
//! A point or short-range query on a lidx table spends most of its time before it reads
//! anything, in DataFusion parsing and planning its SQL. To tell that share from lidx's, the
//! bench plans each point and range query once more against a [`FloorTable`] named
//! `<table>_floor`: a provider with the lidx table's schema that takes every filter as
//! `Exact` (so DataFusion plans no `FilterExec`, as for lidx's key predicates) and whose scan
//! is an [`EmptyExec`] (no work). The time from that query's SQL text to its physical plan is
//! the floor: no provider answering inside DataFusion can be faster, so the reference side's
//! time over it estimates the highest ratio any provider could reach on that query (the
//! report's "datafusion floor" row). An estimate: what runs right after a Parquet query is
//! slower (its larger work, threads and memory, slows what follows). The floor is planned
//! between the lidx side's run of the same query and Parquet's, in an order the bench
//! alternates (lidx, floor, Parquet, then Parquet, floor, lidx for the next query), so neither
//! compared side runs right after the other, while the floor follows Parquet half the time;
//! a lidx run can come out below the floor of its own run.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::ExecutionPlan;

/// A provider that plans like a lidx table (every filter `Exact`) and does nothing.
#[derive(Debug)]
pub(crate) struct FloorTable {
    schema: SchemaRef,
}

impl FloorTable {
    /// A floor for tables of `schema`.
    pub(crate) fn new(schema: SchemaRef) -> Self {
        FloorTable { schema }
    }
}

#[async_trait]
impl TableProvider for FloorTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Exact; filters.len()])
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(columns) => Arc::new(self.schema.project(columns)?),
            None => Arc::clone(&self.schema),
        };
        Ok(Arc::new(EmptyExec::new(schema)))
    }
}
