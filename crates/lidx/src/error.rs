//! The one error type of the `lidx` library.
//!
//! Every fallible operation returns [`Error`]; library code never panics on bad input. Each
//! variant carries the structured facts a caller needs, and its message says what to do about it.
//! Keys are carried as their `Debug` text so that the enum is not generic over the key type.

use std::fmt;

/// Result alias used throughout `lidx`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, with the facts needed to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Keys given to a builder are not sorted: `keys[index]` (`got`) is smaller than
    /// `keys[index - 1]` (`previous`).
    OutOfOrder {
        /// Position of the first key that breaks the order.
        index: usize,
        /// The key just before it.
        previous: String,
        /// The offending key.
        got: String,
    },
    /// A structure that holds each key once (a map) was given the same key twice.
    DuplicateKey {
        /// Position of the second occurrence.
        index: usize,
        /// The repeated key.
        key: String,
    },
    /// A key that has no place in the order, such as a floating-point NaN.
    InvalidKey {
        /// Position of the key in the input.
        index: usize,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A tuning parameter is outside its accepted range.
    InvalidParameter {
        /// Name of the parameter, as in the builder's documentation.
        name: &'static str,
        /// The value given.
        value: String,
        /// The accepted values.
        expected: &'static str,
    },
    /// The operating system refused an I/O call on a file.
    Io {
        /// The file (or device name) the call was made on.
        file: String,
        /// What lidx was doing, e.g. "read blocks 8..12".
        op: String,
        /// The OS error kind.
        kind: std::io::ErrorKind,
        /// The OS error message.
        message: String,
    },
    /// A block read back from disk does not match the crc32c it was written with: the file was
    /// changed outside lidx, or the disk returned bad data.
    ChecksumMismatch {
        /// The file the block belongs to.
        file: String,
        /// Block number in that file.
        block: u64,
        /// Checksum stored in the block.
        expected: u32,
        /// Checksum of what was read.
        got: u32,
    },
    /// A file is shorter than its header or layout says, or a read went past its end.
    Truncated {
        /// The file.
        file: String,
        /// What was expected, e.g. "block 12 of 10".
        what: String,
    },
    /// A file does not start with the magic number of the structure it is opened as.
    BadMagic {
        /// The file.
        file: String,
        /// The magic number expected.
        expected: u64,
        /// The magic number found.
        got: u64,
    },
    /// A file was written by a format version this build cannot read.
    UnsupportedVersion {
        /// The file.
        file: String,
        /// The version found.
        got: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// A file holds keys of another type than the one it is opened with.
    KeyTypeMismatch {
        /// The file.
        file: String,
        /// The key type requested (`Key::NAME`).
        expected: &'static str,
        /// The key type recorded in the file.
        got: String,
    },
    /// A block passed its checksum but its content breaks the structure's invariants (a count
    /// past the capacity, a child pointer out of the file, keys out of order).
    Corrupt {
        /// The file.
        file: String,
        /// Block number, when the problem is in one block.
        block: Option<u64>,
        /// What is wrong.
        what: String,
    },
    /// A file holds a model of another kind (`Persist::KIND`) than the one it is opened with.
    ModelKindMismatch {
        /// The file.
        file: String,
        /// The kind requested.
        expected: u32,
        /// The kind recorded in the file.
        got: u32,
    },
    /// A file is a valid index, but not the one asked for: its header records other build
    /// parameters (another fill factor, eps, granularity...) than the caller's spec, e.g. two
    /// files renamed into each other's names.
    IndexMismatch {
        /// The file.
        file: String,
        /// What its header records, spelled as the caller spells specs.
        holds: String,
        /// What was asked for.
        asked: String,
    },
    /// The operation needs write access but the structure was opened read-only.
    ReadOnly {
        /// What was attempted.
        op: &'static str,
    },
    /// A key or value is outside the sizes a store accepts.
    SizeLimit {
        /// `"key"` or `"value"`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// Smallest length accepted.
        min: usize,
        /// Largest length accepted.
        max: usize,
    },
    /// Another handle (in this or another process) has the store open for writing.
    Locked {
        /// The store's directory.
        dir: String,
    },
    /// A file of a store belongs to another store, or is an older generation of the store's
    /// own file (copied in, or put back from a backup): its header, or the manifest's record of
    /// it, names another owner.
    ForeignFile {
        /// The file.
        file: String,
        /// What it records and what the store expected.
        what: String,
    },
    /// A directory opened as a store is not one.
    NotAStore {
        /// The directory.
        dir: String,
        /// What is missing or wrong.
        what: String,
    },
    /// An index file was built from other keys than the dataset it is opened for: the
    /// fingerprint its header records ([`keys_fingerprint`](crate::disk::keys_fingerprint)) is not the keys'.
    StaleIndex {
        /// The file.
        file: String,
        /// The fingerprint of the keys it is opened for.
        expected: u64,
        /// The fingerprint its header records.
        found: u64,
    },
    /// A file given as a join table is not one: it does not start with a table header.
    NotATable {
        /// The file.
        file: String,
        /// What its first bytes are instead.
        what: String,
    },
}

impl Error {
    /// Wraps an OS error from a call on `file`.
    pub fn io(file: impl Into<String>, op: impl Into<String>, err: &std::io::Error) -> Self {
        Error::Io {
            file: file.into(),
            op: op.into(),
            kind: err.kind(),
            message: err.to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::OutOfOrder {
                index,
                previous,
                got,
            } => write!(
                f,
                "keys are not sorted: key {got} at index {index} is smaller than the key \
                 {previous} before it; sort the keys in ascending order before building"
            ),
            Error::DuplicateKey { index, key } => write!(
                f,
                "key {key} appears twice (second time at index {index}); a map holds each key \
                 once, so remove duplicates or keep only the last value"
            ),
            Error::InvalidKey { index, reason } => {
                write!(f, "key at index {index} cannot be indexed: {reason}")
            }
            Error::InvalidParameter {
                name,
                value,
                expected,
            } => write!(
                f,
                "parameter {name} = {value} is invalid; expected {expected}"
            ),
            Error::Io {
                file, op, message, ..
            } => write!(
                f,
                "{op} on {file} failed: {message}; check the path, its permissions and free space"
            ),
            Error::ChecksumMismatch {
                file,
                block,
                expected,
                got,
            } => write!(
                f,
                "block {block} of {file} is corrupt: its checksum is {got:#010x}, it was written \
                 as {expected:#010x}; {}",
                remedy(file, "restore the file from a copy or rebuild the index")
            ),
            Error::Truncated { file, what } => write!(
                f,
                "{file} is truncated ({what}); it was not completely written: {}",
                remedy(file, "rebuild it")
            ),
            Error::BadMagic {
                file,
                expected,
                got,
            } => write!(
                f,
                "{file} is not the expected kind of lidx file (magic {got:#018x}, expected \
                 {expected:#018x}); check that the path names the right file"
            ),
            Error::UnsupportedVersion {
                file,
                got,
                supported,
            } if is_store_file(file) => write!(
                f,
                "{file} has format version {got} but this build reads version {supported}: \
                 the store was written by another version of lidx. Copy its records out with \
                 that version (`lidx kv scan`) and load them into a new store (`lidx kv load`)"
            ),
            Error::UnsupportedVersion {
                file,
                got,
                supported,
            } => write!(
                f,
                "{file} has format version {got} but this build reads version {supported}; \
                 rebuild it with this version of lidx"
            ),
            Error::KeyTypeMismatch {
                file,
                expected,
                got,
            } => write!(
                f,
                "{file} holds {got} keys but was opened for {expected} keys; open it as an \
                 index of {got} keys (`{got}` is the type parameter to use), or rebuild it \
                 from {expected} keys"
            ),
            Error::Corrupt { file, block, what } => match block {
                Some(block) => write!(
                    f,
                    "block {block} of {file} is corrupt: {what}; {}",
                    remedy(file, "rebuild the index")
                ),
                None => write!(
                    f,
                    "{file} is corrupt: {what}; {}",
                    remedy(file, "rebuild the index")
                ),
            },
            Error::ModelKindMismatch {
                file,
                expected,
                got,
            } => write!(
                f,
                "{file} holds a model of kind {got} but was opened for kind {expected}; open it \
                 with the model type it was built with"
            ),
            Error::IndexMismatch { file, holds, asked } => write!(
                f,
                "{file} holds {holds} but {asked} was asked for: the file is not the index \
                 its name says (renamed or copied over?); rebuild it with the parameters asked \
                 for, or ask for what it holds"
            ),
            Error::ReadOnly { op } => write!(
                f,
                "cannot {op}: the index was opened read-only; open it for writing"
            ),
            Error::SizeLimit {
                what,
                len,
                min,
                max,
            } if min == max => write!(
                f,
                "a {len}-byte {what} is refused: the store takes exactly {min} bytes; give \
                 {min} bytes"
            ),
            Error::SizeLimit {
                what,
                len,
                min,
                max,
            } => write!(
                f,
                "a {len}-byte {what} is outside what a store accepts ({min} to {max} bytes); \
                 shorten it, or keep large {what}s in files and store their names"
            ),
            Error::Locked { dir } => write!(
                f,
                "the store in {dir} is open for writing elsewhere (or, when this one writes, \
                 open for reading elsewhere: its LOCK file is locked); wait for that process \
                 or handle to finish, or stop it, then try again"
            ),
            Error::ForeignFile { file, what } => write!(
                f,
                "{file} does not belong here: {what}; it was copied from another store or put \
                 back from an older state of this one. Put back this store's own file (from \
                 the backup the rest of the store comes from); `lidx kv check` names every \
                 such file"
            ),
            Error::NotAStore { dir, what } => write!(
                f,
                "{dir} is not a lidx store ({what}); name a store's directory, or create one \
                 with `lidx kv create` or `lidx kv load`"
            ),
            Error::StaleIndex {
                file,
                expected,
                found,
            } => write!(
                f,
                "{file} was built from other keys (its key fingerprint is {found:#018x}, the \
                 dataset's is {expected:#018x}): rebuild with lidx build (or pass --rebuild)"
            ),
            Error::NotATable { file, what } => write!(
                f,
                "{file} is not a lidx table ({what}); `lidx table create` makes one from keys"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// True when `file` is named as one of a store's own files (its identity, manifest, log,
/// tables, pages and images, named as [`crate::kv::store`] names them).
fn is_store_file(file: &str) -> bool {
    let name = std::path::Path::new(file)
        .file_name()
        .map_or(file.into(), |n| n.to_string_lossy());
    matches!(
        name.as_ref(),
        "STORE" | "CURRENT" | "CURRENT.tmp" | "pages.lbp"
    ) || name.starts_with("MANIFEST-")
        || (name.starts_with("wal-") && name.ends_with(".log"))
        || (name.starts_with("table-") && name.ends_with(".lbt"))
        || (name.starts_with("inner-") && name.ends_with(".lbi"))
        || file.ends_with("/wal")
}

/// What to do about a damaged `file`: a store's own files hold the user's data and cannot
/// be rebuilt from anything, so they are restored; any other file lidx writes is an index or
/// table built from data: `otherwise`.
fn remedy<'a>(file: &str, otherwise: &'a str) -> &'a str {
    if is_store_file(file) {
        "the store is damaged: restore it from a backup (`lidx kv check` names every damaged \
         file; a log store's recovery modes may cut a damaged log tail)"
    } else {
        otherwise
    }
}

/// Asserts that `e` refuses a file of format version `got` that this build, which reads
/// `supported`, cannot read, and tells the user to rebuild it.
#[cfg(test)]
pub(crate) fn assert_refused_as_old(e: Error, got: u32, supported: u32) {
    assert!(
        matches!(e, Error::UnsupportedVersion { got: g, supported: s, .. } if g == got && s == supported),
        "{e}"
    );
    assert!(e.to_string().contains("rebuild"), "{e}");
}
