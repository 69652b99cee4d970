//! The errors of registering lidx data with DataFusion and of running SQL over it, each with
//! what to do about it (the workspace's rule: a typed error, never a panic on bad input).

use std::fmt;
use std::path::PathBuf;

use datafusion::error::DataFusionError;

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A path given as a table or a store does not exist.
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// A table name is not a plain SQL identifier (`--table NAME=PATH`).
    BadName {
        /// The name.
        name: String,
    },
    /// Two tables were registered under one name.
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A query names a table that was not registered.
    UnknownTable {
        /// The name in the query.
        name: String,
        /// The names that are registered.
        known: Vec<String>,
    },
    /// The cluster's scheduler did not answer (`lidx-sql --cluster`).
    ClusterUnreachable {
        /// The scheduler's address as given.
        addr: String,
        /// What connecting came to.
        reason: String,
    },
    /// A process of the cluster found other data at a table's path than the query was
    /// planned over (the file was replaced or written meanwhile, or another machine holds
    /// another copy).
    TableChanged {
        /// The path.
        path: PathBuf,
        /// Rows the plan was made over.
        planned_rows: u64,
        /// Rows found at the path.
        rows: u64,
    },
    /// lidx could not open or read a table or a store (not a table, damage, a key type a
    /// table does not hold, a locked store, ...).
    Lidx(lidx::Error),
    /// DataFusion refused or failed the query (a syntax error, an unknown column, ...).
    DataFusion(DataFusionError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Missing { path } => write!(
                f,
                "{} does not exist; name a table file (`lidx table create` writes them) or a \
                 store's directory (`lidx kv create`)",
                path.display()
            ),
            Error::BadName { name } => write!(
                f,
                "table name {name:?} is not a plain SQL name; use letters, digits and `_`, \
                 starting with a letter or `_`"
            ),
            Error::DuplicateName { name } => write!(
                f,
                "table name {name:?} is given twice; give each table its own name"
            ),
            Error::UnknownTable { name, known } if known.is_empty() => write!(
                f,
                "the query names table {name:?}, and no table is registered; register it with \
                 --table {name}=PATH"
            ),
            Error::UnknownTable { name, known } => write!(
                f,
                "the query names table {name:?}, which is not registered (registered: {}); \
                 register it with --table {name}=PATH",
                known.join(", ")
            ),
            Error::ClusterUnreachable { addr, reason } => write!(
                f,
                "the scheduler at {addr} does not answer ({reason}); start one there \
                 (`lidx-scheduler --bind {addr}`) or give --cluster the address of a running one"
            ),
            Error::TableChanged {
                path,
                planned_rows,
                rows,
            } => write!(
                f,
                "{} holds {rows} rows here and {planned_rows} where the query was planned; \
                 every machine must see the same table at a path: run the query again once \
                 the copies agree",
                path.display()
            ),
            Error::Lidx(e) => write!(f, "{e}"),
            Error::DataFusion(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Lidx(e) => Some(e),
            Error::DataFusion(e) => Some(e),
            _ => None,
        }
    }
}

impl From<lidx::Error> for Error {
    fn from(e: lidx::Error) -> Self {
        Error::Lidx(e)
    }
}

impl From<DataFusionError> for Error {
    /// A lidx error that went through DataFusion (a damaged block found while a query ran)
    /// comes back as [`Error::Lidx`].
    fn from(e: DataFusionError) -> Self {
        match e {
            DataFusionError::External(inner) => match inner.downcast::<lidx::Error>() {
                Ok(lidx) => Error::Lidx(*lidx),
                Err(other) => Error::DataFusion(DataFusionError::External(other)),
            },
            other => Error::DataFusion(other),
        }
    }
}

/// A lidx error as DataFusion carries it while a query runs.
pub(crate) fn external(e: lidx::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
