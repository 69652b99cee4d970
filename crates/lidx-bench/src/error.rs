//! Errors of the benchmark side: bad specs, unreadable datasets, wrong answers.

use std::fmt;
use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// What went wrong, with the facts needed to fix it.
#[derive(Debug)]
#[non_exhaustive]
pub enum BenchError {
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An SOSD file's size disagrees with the key count in its header.
    SizeMismatch {
        /// The file.
        path: PathBuf,
        /// Key count the header announces.
        header_count: u64,
        /// Bytes that count implies (8 + 8 * count).
        expected_bytes: u64,
        /// Bytes the file has.
        actual_bytes: u64,
    },
    /// A specification string (dataset, index, workload) could not be parsed.
    BadSpec {
        /// What was being parsed ("dataset", "index", "workload", ...).
        what: &'static str,
        /// The text given.
        got: String,
        /// The accepted form.
        expected: String,
    },
    /// An index returned a wrong lower bound: the run is invalid.
    WrongAnswer {
        /// The index spec.
        index: String,
        /// The query key.
        key: u64,
        /// The true lower bound.
        expected: usize,
        /// What the index answered.
        got: usize,
    },
    /// A map's `get` of a present key did not return the key's first position: the run is
    /// invalid.
    WrongGet {
        /// The map spec.
        index: String,
        /// The query key (present in the data).
        key: u64,
        /// Its first position, the value it was loaded with.
        expected: u64,
        /// What `get` returned.
        got: Option<u64>,
    },
    /// An on-disk index returned a wrong entry, payload or scan: the run is invalid.
    WrongResult {
        /// The index label.
        index: String,
        /// The operation (`get`, `scan`).
        op: &'static str,
        /// The query key.
        key: u64,
        /// What differed.
        what: String,
    },
    /// The library refused the input.
    Index(lidx::Error),
    /// A dataset names a file that does not exist.
    NoSuchFile {
        /// The path given.
        path: PathBuf,
        /// What a dataset may be instead.
        expected: String,
    },
    /// A text dataset has an empty line (an empty key).
    EmptyKey {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: u64,
    },
    /// A command that takes one key type was given a dataset of another.
    KeyType {
        /// The dataset's name.
        dataset: String,
        /// Its key type.
        got: &'static str,
        /// What the command takes, and which commands take the dataset's type.
        expected: String,
    },
    /// A lookup workload was asked to choose existing keys from an empty dataset.
    NoKeys {
        /// The workload label.
        workload: String,
    },
    /// A count asks for more memory than the machine has.
    TooLarge {
        /// What the count sizes (`dataset`, `queries`, ...).
        what: &'static str,
        /// The count given.
        count: u64,
        /// Bytes it needs.
        bytes: u128,
        /// Bytes available (free memory and swap).
        available: u64,
        /// The largest count that fits.
        fits: u64,
    },
    /// A peer store engine is not in this build or could not be created; the runner reports
    /// it as skipped.
    PeerUnavailable {
        /// The engine's name.
        engine: String,
        /// Why.
        why: String,
    },
    /// `lidx repro` was given an id no experiment has.
    UnknownExperiment {
        /// The id given.
        got: String,
        /// Every id the registry knows.
        known: Vec<String>,
    },
    /// An experiment is listed but cannot run yet: what it needs is not built.
    NotReproducible {
        /// The experiment's id.
        id: String,
        /// What is missing.
        why: String,
    },
    /// A TPC-C consistency condition (clause 3.3.2.1-4) failed at the end of a run: the
    /// index lost, kept or misplaced an entry, or a transaction is wrong.
    Inconsistent {
        /// The index the run used.
        index: String,
        /// The condition, 1 to 4.
        condition: u8,
        /// The warehouse.
        warehouse: u32,
        /// The district, for conditions 2-4.
        district: Option<u32>,
        /// Both sides of the condition.
        what: String,
    },
    /// An output file exists and the command was not asked to replace it.
    OutputExists {
        /// The file.
        path: PathBuf,
    },
    /// A report file could not be encoded or decoded.
    Report {
        /// The file.
        path: PathBuf,
        /// What the encoder or decoder said.
        message: String,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::SizeMismatch {
                path, actual_bytes, ..
            } if *actual_bytes < crate::sosd::HEADER_BYTES as u64 => write!(
                f,
                "{}: {actual_bytes} bytes, too short for the 8-byte SOSD header: the file is \
                 empty, truncated or not an SOSD file",
                path.display()
            ),
            BenchError::SizeMismatch {
                path,
                header_count,
                expected_bytes,
                actual_bytes,
            } => write!(
                f,
                "{}: header says {header_count} keys ({expected_bytes} bytes) but the file has \
                 {actual_bytes} bytes; the file is truncated or not an SOSD u64 file",
                path.display()
            ),
            BenchError::BadSpec {
                what,
                got,
                expected,
            } => write!(f, "bad {what} `{got}`: expected {expected}"),
            BenchError::TooLarge {
                what,
                count,
                bytes,
                available,
                fits,
            } => write!(
                f,
                "{what} of {count} would need {bytes} bytes of memory, {available} are available \
                 (free memory and swap); give at most about {fits}"
            ),
            BenchError::WrongAnswer {
                index,
                key,
                expected,
                got,
            } => write!(
                f,
                "index {index} answered lower_bound({key}) = {got}, the truth is {expected}; \
                 the run is invalid"
            ),
            BenchError::WrongGet {
                index,
                key,
                expected,
                got,
            } => write!(
                f,
                "map {index} answered get({key}) = {got:?}, the truth is Some({expected}); \
                 the run is invalid"
            ),
            BenchError::WrongResult {
                index,
                op,
                key,
                what,
            } => write!(
                f,
                "index {index} answered {op}({key}) wrongly: {what}; the run is invalid"
            ),
            BenchError::Index(e) => write!(f, "{e}"),
            BenchError::NoSuchFile { path, expected } => write!(
                f,
                "no such file: {}; a dataset is {expected}",
                path.display()
            ),
            BenchError::EmptyKey { path, line } => write!(
                f,
                "line {line} of {} is empty, and an empty line is no key; remove it",
                path.display()
            ),
            BenchError::KeyType {
                dataset,
                got,
                expected,
            } => write!(f, "{dataset} holds {got} keys; {expected}"),
            BenchError::NoKeys { workload } => write!(
                f,
                "workload {workload} chooses existing keys but the dataset is empty; \
                 use a dataset with at least one key"
            ),
            BenchError::Report { path, message } => write!(f, "{}: {message}", path.display()),
            BenchError::PeerUnavailable { engine, why } => {
                write!(f, "peer {engine} cannot run: {why}")
            }
            BenchError::UnknownExperiment { got, known } => write!(
                f,
                "no experiment `{got}`; the known ones are {} (or `all`, or a paper's number \
                 such as `003`; `lidx repro list` describes them)",
                known.join(", ")
            ),
            BenchError::NotReproducible { id, why } => {
                write!(f, "experiment {id} is not reproducible yet: {why}")
            }
            BenchError::OutputExists { path } => write!(
                f,
                "{} exists; give --force to replace it, or another --out",
                path.display()
            ),
            BenchError::Inconsistent {
                index,
                condition,
                warehouse,
                district,
                what,
            } => {
                let district = district.map_or(String::new(), |d| format!(" district {d}"));
                write!(
                    f,
                    "TPC-C consistency condition {condition} (clause 3.3.2.{condition}) fails                      on warehouse {warehouse}{district} with index {index}: {what}; the run is                      invalid"
                )
            }
        }
    }
}

/// Every message already says what it wraps (`Io` prints its path and the OS message, `Index`
/// is the library's error itself), so no variant reports a `source`: a chain printer (anyhow's
/// `{:#}`) would print the wrapped message a second time.
impl std::error::Error for BenchError {}

impl From<lidx::Error> for BenchError {
    fn from(e: lidx::Error) -> Self {
        BenchError::Index(e)
    }
}

/// A spec the catalog refused is a [`BenchError::BadSpec`] with the same message.
impl From<lidx::catalog::BadSpec> for BenchError {
    fn from(e: lidx::catalog::BadSpec) -> Self {
        BenchError::BadSpec {
            what: e.what,
            got: e.got,
            expected: e.expected,
        }
    }
}
