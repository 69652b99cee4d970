//! [`TortureError`]: why a torture run failed. A violation names the cycle, the key and what
//! was expected; the store is left as it is for a look.

use std::error::Error;
use std::fmt;
use std::path::PathBuf;

/// Why a torture run failed. See the module docs of [`super`].
#[derive(Debug)]
#[non_exhaustive]
pub enum TortureError {
    /// The store failed or refused an operation (its error, unchanged).
    Store(lidx::Error),
    /// A file or process operation failed; `doing` says which, when the error alone does not.
    Io {
        /// What the harness was doing (`None`: the error says enough).
        doing: Option<&'static str>,
        /// The error.
        source: std::io::Error,
    },
    /// Something failed in the checks after the kill of `cycle`.
    Cycle {
        /// The cycle, from 1.
        cycle: u64,
        /// The store, left as it is.
        db: PathBuf,
        /// What failed.
        source: Box<TortureError>,
    },
    /// An operation in flight at the kill is there in part: a batch half applied.
    HalfApplied {
        /// Its keys.
        keys: Vec<u64>,
        /// Changes of it the store shows.
        applied: usize,
        /// Changes it makes.
        changes: usize,
    },
    /// A key's version is not what the acknowledged writes leave.
    WrongVersion {
        /// The key.
        key: u64,
        /// Lost, phantom or stale.
        what: &'static str,
        /// The last acknowledged version (`None`: absent).
        expected: Option<u64>,
        /// What the store shows.
        found: Option<u64>,
    },
    /// A value shorter than its 8-byte version.
    ShortValue {
        /// Its key.
        key: u64,
        /// Its length.
        len: usize,
    },
    /// A value that is not the bytes its version writes.
    DamagedValue {
        /// Its key.
        key: u64,
        /// The version its first bytes name.
        version: u64,
    },
    /// A full scan returned a value shorter than 8 bytes.
    ShortScannedValue,
    /// A full scan and the lookups disagree.
    ScanMismatch {
        /// Records the scan showed.
        scanned: usize,
        /// Records the lookups found.
        looked_up: usize,
    },
    /// More than one table (or checkpoint image) survives: an interrupted merge left one.
    LeftBehind {
        /// The files.
        files: Vec<String>,
    },
    /// `Store::check` reports damage.
    Damage {
        /// The damage, as `Store::check` lists it.
        damage: String,
    },
    /// A writer child panicked.
    ChildPanicked {
        /// The cycle.
        cycle: u64,
        /// The panic's message.
        message: String,
    },
    /// A writer child reported an error.
    ChildFailed {
        /// The cycle.
        cycle: u64,
        /// Its `error ...` line.
        line: String,
    },
    /// A writer child ended before the kill.
    ChildEnded {
        /// The cycle.
        cycle: u64,
        /// How it ended.
        status: String,
        /// What it wrote on its error output.
        stderr: String,
    },
    /// A pipe of the child was not there.
    NoPipe {
        /// Which.
        what: &'static str,
    },
    /// A thread of the harness panicked.
    ThreadPanicked {
        /// Which.
        what: &'static str,
        /// The panic's message.
        message: String,
    },
    /// The parent panicked.
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// No write was acknowledged: the run checked nothing.
    NothingAcknowledged {
        /// The cycles run.
        cycles: u64,
    },
    /// The log directory holds no segment to cut.
    NoSegment {
        /// The log directory.
        dir: PathBuf,
    },
    /// The child could not ask to die with its parent.
    DeathSignal(std::io::Error),
    /// The child's parent is gone before it started.
    ParentGone {
        /// The parent's process id.
        parent: u32,
    },
}

impl fmt::Display for TortureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TortureError::Store(e) => write!(f, "{e}"),
            TortureError::Io {
                doing: Some(doing), ..
            } => write!(f, "{doing}"),
            TortureError::Io {
                doing: None,
                source,
            } => write!(f, "{source}"),
            TortureError::Cycle { cycle, db, .. } => write!(
                f,
                "cycle {cycle}: the store in {} is left as it is",
                db.display()
            ),
            TortureError::HalfApplied {
                keys,
                applied,
                changes,
            } => write!(
                f,
                "an operation on keys {keys:?} in flight at the kill is half applied: {applied} \
                 of its {changes} changes are there"
            ),
            TortureError::WrongVersion {
                key,
                what,
                expected,
                found,
            } => write!(
                f,
                "key {key}: {what}: expected version {expected:?}, found {found:?}"
            ),
            TortureError::ShortValue { key, len } => {
                write!(f, "key {key}: a value of {len} bytes")
            }
            TortureError::DamagedValue { key, version } => {
                write!(f, "key {key}: the value of version {version} is damaged")
            }
            TortureError::ShortScannedValue => {
                write!(f, "a scanned value shorter than 8 bytes")
            }
            TortureError::ScanMismatch { scanned, looked_up } => write!(
                f,
                "a full scan shows {scanned} records, lookups {looked_up}"
            ),
            TortureError::LeftBehind { files } => write!(
                f,
                "{files:?}: an interrupted merge or checkpoint left a file behind"
            ),
            TortureError::Damage { damage } => {
                write!(f, "lidx kv check finds damage: {damage}")
            }
            TortureError::ChildPanicked { cycle, message } => {
                write!(f, "cycle {cycle}: the child panicked: {message}")
            }
            TortureError::ChildFailed { cycle, line } => {
                write!(f, "cycle {cycle}: the child failed: {line}")
            }
            TortureError::ChildEnded {
                cycle,
                status,
                stderr,
            } => write!(
                f,
                "cycle {cycle}: the child ended by itself ({status}) before the kill: {stderr}"
            ),
            TortureError::NoPipe { what } => write!(f, "{what}"),
            TortureError::ThreadPanicked { what, message } => {
                write!(f, "{what} panicked: {message}")
            }
            TortureError::Panicked { message } => {
                write!(f, "lidx kv torture panicked: {message}")
            }
            TortureError::NothingAcknowledged { cycles } => write!(
                f,
                "no write was acknowledged in {cycles} cycle(s): the run tested nothing; give \
                 the children more time before the kill (--max-delay-ms) or more cycles"
            ),
            TortureError::NoSegment { dir } => {
                write!(f, "{} holds no log segment", dir.display())
            }
            TortureError::DeathSignal(e) => write!(f, "prctl(PR_SET_PDEATHSIG): {e}"),
            TortureError::ParentGone { parent } => {
                write!(f, "the parent {parent} is gone: nothing to report to")
            }
        }
    }
}

impl Error for TortureError {
    /// The chain below the message: a store's or a file's own causes (their messages are this
    /// error's), the failure inside a cycle, the cause of a failed step.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            TortureError::Store(e) => e.source(),
            TortureError::Io {
                doing: Some(_),
                source,
            } => Some(source),
            TortureError::Io {
                doing: None,
                source,
            } => source.source(),
            TortureError::Cycle { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<lidx::Error> for TortureError {
    fn from(e: lidx::Error) -> Self {
        TortureError::Store(e)
    }
}

impl From<std::io::Error> for TortureError {
    fn from(source: std::io::Error) -> Self {
        TortureError::Io {
            doing: None,
            source,
        }
    }
}

impl TortureError {
    /// `source` with what the harness was doing when it failed.
    pub(super) fn io(doing: &'static str) -> impl FnOnce(std::io::Error) -> TortureError {
        move |source| TortureError::Io {
            doing: Some(doing),
            source,
        }
    }
}
