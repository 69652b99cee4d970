//! [`LidxTable`]: a lidx table file or a [`lidx::kv::Store`] as a DataFusion
//! [`TableProvider`], with columns `key` and `value` (`crate::batch`).
//!
//! What it tells DataFusion, and what DataFusion may then skip:
//!
//! * Filters on the key (`crate::pushdown`) are `Exact`: the scan seeks the key ranges they
//!   come to and returns only their rows, so no `FilterExec` is planned for them. Other
//!   filters are `Unsupported` and stay in DataFusion's `FilterExec`.
//! * The scan's output is ordered by `key` ascending, so `ORDER BY key` needs no sort.
//! * Statistics are exact: row count and first and last keys (a table's from its header and
//!   two records, a store's from the pass made when it was registered), and a table scan's
//!   row count after its key filters (it knows the positions it reads), except under a filter
//!   of more than `SEEK_AT_PLANNING` key ranges, which the scan seeks as it reads: its row
//!   count is then an upper bound (the keys the ranges can hold).
//! * The scan is split into `target_partitions` partitions by key range (a table's positions
//!   in equal shares, a table's ranges sought as it reads in shares of as many ranges, a
//!   store's by sampled keys), read in parallel.
//! * A `LIMIT` without a sort is pushed into the scan: a table reads only the first rows of
//!   its ranges, a store stops after them.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{internal_err, ColumnStatistics, ScalarValue, Statistics};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use lidx::Str16;

use crate::batch::{schema_of, ArrowKey, BatchBuilder, KEY};
use crate::error::{external, Error, Result};
use crate::pushdown::{key_ranges, PushKey};
use crate::ranges::KeyRanges;
use crate::scan::{LidxScanExec, Part, ScanPlan};
use crate::store_source::StoreSource;
use crate::table_source::{storage_of, widen, SourceKey, TableSource};

/// Fewest rows a table scan gives a partition of its own: smaller scans are not split.
const MIN_PARTITION_ROWS: u64 = 8192;

/// Most key ranges a table scan seeks while it is planned, so that its plan knows its rows
/// exactly; a filter of more (a long `IN` list) is sought by the partitions as they read
/// ([`Part::TableKeys`]), each its share of the ranges, in parallel. Seeking while planning
/// reads each range's blocks on the planning thread and the read reads them again: a
/// 10,000-key `IN` list over a 10M-row table took 19-21 ms of planning over DataFusion's own
/// and about 6 ms of reading (2-core Intel Xeon VM, session 56; `docs/results/datafusion.md`).
/// A point costs about 2 us to seek warm, so up to this many add a fraction of a millisecond.
/// A filter with a range the index predicts to hold more than `MIN_PARTITION_ROWS` records is
/// sought while planned whatever its length, so that its rows are split among partitions.
const SEEK_AT_PLANNING: usize = 128;

/// Fewest key ranges a table scan sought when read gives a partition of its own.
const MIN_PARTITION_RANGES: usize = 64;

/// What a [`LidxTable`] reads.
pub(crate) enum Source {
    /// A table of `u64` keys.
    U64(TableSource<u64>),
    /// A table of 16-byte string keys.
    Str16(TableSource<Str16>),
    /// A store.
    Store(StoreSource),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::U64(t) => write!(f, "table(u64) {}", t.path().display()),
            Source::Str16(t) => write!(f, "table(str16) {}", t.path().display()),
            Source::Store(s) => write!(f, "store {}", s.path().display()),
        }
    }
}

impl Source {
    /// Rows in the whole source.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Source::U64(t) => t.len(),
            Source::Str16(t) => t.len(),
            Source::Store(s) => s.len(),
        }
    }

    /// The record blocks a table's `part` touches, when known before reading (`None` for a
    /// store's part and for a table's ranges sought as they are read).
    pub(crate) fn blocks_of(&self, part: &Part) -> Option<u64> {
        let per = match self {
            Source::U64(t) => t.records_per_block(),
            Source::Str16(t) => t.records_per_block(),
            Source::Store(_) => return None,
        } as u64;
        match part {
            Part::Positions(runs) => Some(
                runs.iter()
                    .filter(|r| r.start < r.end)
                    .map(|r| (r.end - 1) / per - r.start / per + 1)
                    .sum(),
            ),
            Part::TableKeys(_) | Part::Keys(_) => None,
        }
    }

    /// Reads `part` into batches of `schema` (the source's columns `columns`), at most `limit`
    /// rows of key ranges (a store's, a table's sought when read), giving each batch to `send`
    /// (false: no more are wanted).
    pub(crate) fn read(
        &self,
        part: &Part,
        schema: SchemaRef,
        columns: Vec<usize>,
        limit: Option<usize>,
        batch_rows: usize,
        send: &mut dyn FnMut(DfResult<datafusion::arrow::record_batch::RecordBatch>) -> bool,
    ) -> lidx::Result<()> {
        // A table's batches hold `batch_rows` rows, or the part's rows when fewer, of
        // fixed-size values; a store's values vary, and their bytes grow as they come.
        let rows = |runs: &[Range<u64>]| {
            let total: u64 = runs.iter().map(|r| r.end - r.start).sum();
            total.min(batch_rows as u64) as usize
        };
        let limited = limit.map_or(batch_rows, |l| l.min(batch_rows));
        match (self, part) {
            (Source::U64(t), Part::Positions(runs)) => {
                let mut out = BatchBuilder::new(schema, columns, rows(runs), t.value_size());
                t.read(runs, &mut out, batch_rows, &mut |b| send(b.finish()))
            }
            (Source::Str16(t), Part::Positions(runs)) => {
                let mut out = BatchBuilder::new(schema, columns, rows(runs), t.value_size());
                t.read(runs, &mut out, batch_rows, &mut |b| send(b.finish()))
            }
            (Source::U64(t), Part::TableKeys(ranges)) => {
                let mut out = BatchBuilder::new(schema, columns, limited, t.value_size());
                t.read_ranges(ranges, limit, &mut out, batch_rows, &mut |b| {
                    send(b.finish())
                })
            }
            (Source::Str16(t), Part::TableKeys(ranges)) => {
                let mut out = BatchBuilder::new(schema, columns, limited, t.value_size());
                t.read_ranges(ranges, limit, &mut out, batch_rows, &mut |b| {
                    send(b.finish())
                })
            }
            (Source::Store(s), Part::Keys(ranges)) => {
                let mut out = BatchBuilder::new(schema, columns, limited, 0);
                s.read(ranges, limit, &mut out, batch_rows, &mut |b| {
                    send(b.finish())
                })
            }
            // A part of one kind of source is never given to another (see `LidxTable::plan`);
            // an empty part reads nothing.
            _ => Ok(()),
        }
    }
}

/// A lidx table file or store as a DataFusion table; see the module docs.
#[derive(Debug, Clone)]
pub struct LidxTable {
    source: Arc<Source>,
    schema: SchemaRef,
}

impl LidxTable {
    /// Opens `path`: a directory as a store ([`LidxTable::open_store`]), a file as a table
    /// ([`LidxTable::open_table`]). [`Error::Missing`] when there is nothing there.
    pub fn open(path: &Path) -> Result<LidxTable> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => LidxTable::open_store(path),
            Ok(_) => LidxTable::open_table(path),
            Err(_) => Err(Error::Missing {
                path: path.to_path_buf(),
            }),
        }
    }

    /// Opens the table file `path` (`u64` or 16-byte string keys) and loads its saved PGM index,
    /// or builds and saves it (`crate::table_source`). A file that is not a table is
    /// [`lidx::Error::NotATable`], an unsorted table [`lidx::Error::OutOfOrder`].
    pub fn open_table(path: &Path) -> Result<LidxTable> {
        if !path.is_file() {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        let (storage, name) = storage_of(path)?;
        let header = lidx::join::read_header(&storage, &name)?;
        let source = if header.key_size == 8 {
            Source::U64(TableSource::open(path, &storage, &name)?)
        } else {
            Source::Str16(TableSource::open(path, &storage, &name)?)
        };
        Ok(LidxTable::of(source))
    }

    /// Opens the store in the directory `path` read-only and counts it (`crate::store_source`).
    pub fn open_store(path: &Path) -> Result<LidxTable> {
        if !path.is_dir() {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        Ok(LidxTable::of(Source::Store(StoreSource::open(path)?)))
    }

    fn of(source: Source) -> LidxTable {
        LidxTable::of_source(Arc::new(source))
    }

    /// The table over an open source.
    pub(crate) fn of_source(source: Arc<Source>) -> LidxTable {
        let schema = match source.as_ref() {
            Source::U64(_) => schema_of::<u64>(),
            Source::Str16(_) => schema_of::<Str16>(),
            Source::Store(_) => schema_of::<Vec<u8>>(),
        };
        LidxTable { source, schema }
    }

    #[cfg(feature = "cluster")]
    /// What the table reads.
    pub(crate) fn source(&self) -> &Arc<Source> {
        &self.source
    }

    #[cfg(feature = "cluster")]
    /// The table file or store directory.
    pub(crate) fn path(&self) -> &Path {
        match self.source.as_ref() {
            Source::U64(t) => t.path(),
            Source::Str16(t) => t.path(),
            Source::Store(s) => s.path(),
        }
    }

    #[cfg(feature = "cluster")]
    /// The kind and the path, as `EXPLAIN` names a source.
    pub(crate) fn describe(&self) -> String {
        format!("{:?}", self.source)
    }

    #[cfg(feature = "cluster")]
    /// A scan of all of the table's `columns`, in one partition.
    pub(crate) fn whole_scan(&self, columns: Vec<usize>) -> DfResult<LidxScanExec> {
        self.plan(columns, &[], None, 1)
    }

    /// Rows in the table or store (the snapshot's).
    pub fn rows(&self) -> u64 {
        self.source.len()
    }

    /// How a table's index came to be in memory: `loaded`, `built` or `rebuilt: <why>`
    /// (lidx's own words); `None` for a store or an empty table.
    pub fn index_origin(&self) -> Option<String> {
        match self.source.as_ref() {
            Source::U64(t) => t.index_origin().map(str::to_string),
            Source::Str16(t) => t.index_origin().map(str::to_string),
            Source::Store(_) => None,
        }
    }

    /// The statistics of the whole source: exact row count, first and last key, no nulls.
    fn column_stats(&self) -> Vec<ColumnStatistics> {
        let (min, max) = match self.source.as_ref() {
            Source::U64(t) => bounds(t.first_last()),
            Source::Str16(t) => bounds(t.first_last()),
            Source::Store(s) => bounds(s.first_last()),
        };
        let key = ColumnStatistics {
            null_count: Precision::Exact(0),
            min_value: min,
            max_value: max,
            ..ColumnStatistics::default()
        };
        let value = ColumnStatistics {
            null_count: Precision::Exact(0),
            ..ColumnStatistics::default()
        };
        vec![key, value]
    }

    /// The key ranges that `filters` come to together; every filter given to a scan was
    /// answered `Exact` by [`LidxTable::supports_filters_pushdown`], so each translates.
    fn ranges<K: PushKey>(filters: &[Expr]) -> DfResult<KeyRanges<K>> {
        filters
            .iter()
            .try_fold(KeyRanges::all(), |acc, f| match key_ranges::<K>(f, KEY) {
                Some(r) => Ok(acc.intersect(&r)),
                None => {
                    internal_err!("a scan was given the filter {f}, which it did not take over")
                }
            })
    }

    /// The parts of a table scan: the positions of `ranges`, cut to the first `limit`, in
    /// at most `parts` equal shares of at least `MIN_PARTITION_ROWS`; or, for more than
    /// `SEEK_AT_PLANNING` ranges none of which the index predicts to hold more than
    /// `MIN_PARTITION_ROWS` records, the ranges themselves in at most `parts` shares of as
    /// many ranges (within one), each at least `MIN_PARTITION_RANGES` (one share under a
    /// `limit`, which the read stops at).
    fn table_parts<K: SourceKey>(
        table: &TableSource<K>,
        filters: &[Expr],
        limit: Option<usize>,
        parts: usize,
    ) -> DfResult<Vec<Part>> {
        let ranges = Self::ranges::<K>(filters)?;
        let n = ranges.ranges().len();
        if n > SEEK_AT_PLANNING && table.predicts_at_most(&ranges, MIN_PARTITION_ROWS) {
            let parts = match limit {
                Some(_) => 1,
                None => parts.min(n / MIN_PARTITION_RANGES).max(1),
            };
            let all = ranges.ranges();
            return Ok((0..parts)
                .map(|i| Part::TableKeys(widen(&all[i * n / parts..(i + 1) * n / parts])))
                .collect());
        }
        let mut runs = table.positions(&ranges).map_err(external)?;
        if let Some(limit) = limit {
            runs = take_rows(runs, limit as u64);
        }
        let rows: u64 = runs.iter().map(|r| r.end - r.start).sum();
        let parts = (parts as u64).min(rows / MIN_PARTITION_ROWS).max(1);
        Ok(split_runs(runs, rows, parts)
            .into_iter()
            .map(Part::Positions)
            .collect())
    }

    /// Plans a scan of `columns` (indices of the full schema) under `filters` and `limit`,
    /// in at most `partitions` partitions.
    fn plan(
        &self,
        columns: Vec<usize>,
        filters: &[Expr],
        limit: Option<usize>,
        partitions: usize,
    ) -> DfResult<LidxScanExec> {
        let parts = match self.source.as_ref() {
            Source::U64(t) => Self::table_parts(t, filters, limit, partitions)?,
            Source::Str16(t) => Self::table_parts(t, filters, limit, partitions)?,
            Source::Store(s) => {
                let ranges = Self::ranges::<Vec<u8>>(filters)?;
                if limit.is_some() {
                    // The first rows are wanted: one partition reads them in order.
                    vec![Part::Keys(ranges)]
                } else {
                    s.split(&ranges, partitions)
                        .into_iter()
                        .map(Part::Keys)
                        .collect()
                }
            }
        };
        let all = self.column_stats();
        let schema = Arc::new(self.schema.project(&columns)?);
        let is_store = matches!(self.source.as_ref(), Source::Store(_));
        Ok(LidxScanExec::new(ScanPlan {
            source: Arc::clone(&self.source),
            schema,
            column_stats: columns.iter().map(|&c| all[c].clone()).collect(),
            columns,
            parts,
            filters: filters.iter().map(ToString::to_string).collect(),
            limit,
            exact: filters.is_empty() && !(is_store && limit.is_some()),
        }))
    }
}

/// The first and last key as statistics.
fn bounds<K: ArrowKey>(
    first_last: Option<&(K, K)>,
) -> (Precision<ScalarValue>, Precision<ScalarValue>) {
    match first_last {
        Some((first, last)) => (
            Precision::Exact(first.scalar()),
            Precision::Exact(last.scalar()),
        ),
        None => (Precision::Absent, Precision::Absent),
    }
}

/// The first `limit` positions of `runs`.
fn take_rows(runs: Vec<Range<u64>>, limit: u64) -> Vec<Range<u64>> {
    let mut left = limit;
    let mut out = Vec::new();
    for run in runs {
        if left == 0 {
            break;
        }
        let n = (run.end - run.start).min(left);
        out.push(run.start..run.start + n);
        left -= n;
    }
    out
}

/// `runs` (holding `rows` positions) cut into `parts` consecutive shares of about equal rows.
fn split_runs(runs: Vec<Range<u64>>, rows: u64, parts: u64) -> Vec<Vec<Range<u64>>> {
    let mut out = vec![Vec::new(); parts as usize];
    let mut seen = 0u64;
    for run in runs {
        let mut start = run.start;
        while start < run.end {
            // The share the row `seen` falls in, and where that share ends.
            let share = (seen * parts / rows.max(1)).min(parts - 1);
            let share_end = ((share + 1) * rows).div_ceil(parts);
            let n = (run.end - start).min(share_end - seen);
            out[share as usize].push(start..start + n);
            start += n;
            seen += n;
        }
    }
    out.retain(|runs| !runs.is_empty());
    out
}

#[async_trait]
impl TableProvider for LidxTable {
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
        let takes = |f: &Expr| match self.source.as_ref() {
            Source::U64(_) => key_ranges::<u64>(f, KEY).is_some(),
            Source::Str16(_) => key_ranges::<Str16>(f, KEY).is_some(),
            Source::Store(_) => key_ranges::<Vec<u8>>(f, KEY).is_some(),
        };
        Ok(filters
            .iter()
            .map(|f| {
                if takes(f) {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        Some(Statistics {
            num_rows: Precision::Exact(self.source.len() as usize),
            total_byte_size: match self.source.as_ref() {
                Source::U64(t) => Precision::Exact(t.len() as usize * t.record_size()),
                Source::Str16(t) => Precision::Exact(t.len() as usize * t.record_size()),
                Source::Store(s) => Precision::Exact(s.bytes() as usize),
            },
            column_statistics: self.column_stats(),
        })
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let columns = projection.cloned().unwrap_or_else(|| vec![0, 1]);
        let partitions = state.config().target_partitions();
        Ok(Arc::new(self.plan(columns, filters, limit, partitions)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_runs_are_consecutive_and_cover_every_position() {
        let runs = vec![0..5, 10..11, 20..40, 50..52];
        let rows = 28;
        for parts in 1..=6 {
            let shares = split_runs(runs.clone(), rows, parts);
            let flat: Vec<u64> = shares.iter().flatten().flat_map(|r| r.clone()).collect();
            let want: Vec<u64> = runs.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(flat, want, "{parts} parts");
            let sizes: Vec<u64> = shares
                .iter()
                .map(|s| s.iter().map(|r| r.end - r.start).sum())
                .collect();
            assert_eq!(shares.len() as u64, parts);
            assert!(
                sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                "{sizes:?}"
            );
        }
        assert_eq!(take_rows(runs, 7), vec![0..5, 10..11, 20..21]);
    }
}
