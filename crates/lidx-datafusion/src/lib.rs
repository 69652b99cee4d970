//! lidx tables and stores as Apache DataFusion tables: SQL over lidx's sorted table files and
//! its key-value store, with the learned index doing the seeking (issue 33, its single-process
//! step).
//!
//! * [`LidxTable`] is a DataFusion `TableProvider` over a table file written by
//!   `lidx table create` (paper 000 §5.1: `u64` or 16-byte string keys, fixed-size values)
//!   or over a [`lidx::kv::Store`]: columns `key` and `value`, key predicates taken over and
//!   answered by seeking (through the table's PGM, as paper 000 §4.1's INLJ looks keys up, or
//!   the store's own range seek), output ordered by key, exact statistics (an upper bound on
//!   the rows of a filter of many key ranges, which the scan seeks as it reads), partitions by
//!   key range.
//! * [`LidxIndexJoinExec`] joins a small side with a table by probing the table's learned
//!   index with each batch's sorted keys (paper 000 §4.1), and [`IndexJoinRule`] puts it in
//!   place of DataFusion's hash join when the other side is small enough.
//! * [`SqlSession`] registers them by name and runs SQL with typed errors ([`Error`]); its
//!   analyzer first gives an `IN` list's literals their column's type ([`ListLiteralTypes`]),
//!   so a long list of keys is not cast and folded literal by literal.
//! * The `lidx-sql` binary (`src/bin/lidx-sql.rs`) is the command line over both.
//! * `cluster` (feature `cluster`, off by default) runs the same on a Ballista cluster: the
//!   codecs that ship tables, scans and index joins to a scheduler and its executors, the
//!   scheduler's session, `SqlSession::connect`, and the binaries `lidx-scheduler`,
//!   `lidx-executor` and `lidx-sql --cluster` (issue 33's distribution step).
//!
//! `lidx` itself does not depend on this crate or on Arrow: the `lidx` command line and its
//! benchmarks never compile DataFusion, and this crate compiles Ballista only with `cluster`.
//!
//! Files, one concept each: `ranges` (sets of key ranges), `pushdown` (filters to key ranges),
//! `batch` (the columns and Arrow batches), `table_source` (a table file, its index and its
//! seeks), `store_source` (a store's snapshot, count and splits), `scan` ([`LidxScanExec`],
//! the physical scan), `provider` ([`LidxTable`]), `index_join` ([`LidxIndexJoinExec`]),
//! `index_join_rule` ([`IndexJoinRule`]), `literal_types` ([`ListLiteralTypes`]), `session`
//! ([`SqlSession`]), `error`, and the folder
//! `cluster`.

#![warn(unreachable_pub)]

mod batch;
#[cfg(feature = "cluster")]
pub mod cluster;
mod error;
mod index_join;
mod index_join_rule;
mod literal_types;
mod provider;
mod pushdown;
mod ranges;
mod scan;
mod session;
mod store_source;
mod table_source;

pub use batch::{KEY, VALUE};
pub use error::{Error, Result};
pub use index_join::LidxIndexJoinExec;
pub use index_join_rule::IndexJoinRule;
pub use literal_types::ListLiteralTypes;
pub use provider::LidxTable;
pub use scan::LidxScanExec;
pub use session::{SqlSession, DEFAULT_INDEX_JOIN_OUTER_ROWS};
