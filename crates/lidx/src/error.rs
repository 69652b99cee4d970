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
        }
    }
}

impl std::error::Error for Error {}
