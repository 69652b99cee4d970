//! lidx's errors as Python exceptions, each carrying lidx's message.
//!
//! | lidx error | Python exception |
//! |---|---|
//! | bad input: `OutOfOrder` (unsorted keys), `DuplicateKey`, `InvalidKey` (NaN), `InvalidParameter`, `SizeLimit`; a bad dataset spec or an empty text key | `ValueError` |
//! | `Io` | `FileNotFoundError`, `PermissionError`, `FileExistsError` by the OS error's kind, else `OSError` |
//! | bytes that are not what they should be: `ChecksumMismatch`, `Truncated`, `BadMagic`, `UnsupportedVersion`, `KeyTypeMismatch`, `ModelKindMismatch`, `IndexMismatch`, `Corrupt`; an SOSD file whose size disagrees with its header | [`CorruptError`] (an `OSError`) |
//! | `Locked`: another handle writes the store | [`LockedError`] (an `OSError`) |
//! | `NotAStore` | [`NotAStoreError`] (an `OSError`) |
//! | `ReadOnly`: a write to a store opened read-only | [`ReadOnlyError`] (an `OSError`) |
//! | anything else (lidx's errors are `#[non_exhaustive]`) | `RuntimeError` |
//!
//! The Rust types are foreign to this crate, so the conversion is the [`OrRaise`] extension
//! trait rather than `From`.

use lidx::Error;
use lidx_bench::BenchError;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError,
    PyValueError,
};
use pyo3::PyErr;
use pyo3::PyResult;

create_exception!(
    lidx,
    CorruptError,
    PyOSError,
    "A file or a pickled index is damaged, truncated, or of another kind or version: its bytes \
     are not what lidx wrote. The message says which file and what to do."
);
create_exception!(
    lidx,
    LockedError,
    PyOSError,
    "The store is open for writing by another handle, in this process or another one: close \
     that one first, or open this one with read_only=True."
);
create_exception!(
    lidx,
    NotAStoreError,
    PyOSError,
    "The directory opened as a store is not one (or Store.open was told not to create it)."
);
create_exception!(
    lidx,
    ReadOnlyError,
    PyOSError,
    "A write to a store opened with read_only=True."
);

/// Turns a lidx (or lidx-bench) result into a Python one, raising the exception of the table
/// in the module docs.
pub(crate) trait OrRaise<T> {
    /// The value, or the Python exception for the error.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for lidx::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(lidx_error)
    }
}

impl<T> OrRaise<T> for lidx_bench::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(bench_error)
    }
}

/// The Python exception for a lidx error.
pub(crate) fn lidx_error(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::OutOfOrder { .. }
        | Error::DuplicateKey { .. }
        | Error::InvalidKey { .. }
        | Error::InvalidParameter { .. }
        | Error::SizeLimit { .. } => PyValueError::new_err(message),
        Error::Io { kind, .. } => os_error(kind, message),
        Error::ChecksumMismatch { .. }
        | Error::Truncated { .. }
        | Error::BadMagic { .. }
        | Error::UnsupportedVersion { .. }
        | Error::KeyTypeMismatch { .. }
        | Error::Corrupt { .. }
        | Error::ModelKindMismatch { .. }
        | Error::IndexMismatch { .. }
        | Error::ForeignFile { .. } => CorruptError::new_err(message),
        Error::Locked { .. } => LockedError::new_err(message),
        Error::NotAStore { .. } => NotAStoreError::new_err(message),
        Error::ReadOnly { .. } => ReadOnlyError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The Python exception for an error of the dataset side.
fn bench_error(err: BenchError) -> PyErr {
    let message = err.to_string();
    match err {
        BenchError::Index(inner) => lidx_error(inner),
        BenchError::Io { source, .. } => os_error(source.kind(), message),
        BenchError::NoSuchFile { .. } => PyFileNotFoundError::new_err(message),
        BenchError::SizeMismatch { .. } => CorruptError::new_err(message),
        BenchError::BadSpec { .. } | BenchError::EmptyKey { .. } => PyValueError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The `OSError` subclass Python raises for an OS error of `kind`.
fn os_error(kind: std::io::ErrorKind, message: String) -> PyErr {
    use std::io::ErrorKind;
    match kind {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
        ErrorKind::AlreadyExists => PyFileExistsError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}
