//! lidx: ordered indexes over data on disk, with learned indexes first-class.
//!
//! The vocabulary (see `DESIGN.md`): a static index is built on sorted keys it does not own and
//! answers [`StaticIndex::search`] with an [`ApproxPos`] window `[lo, hi)` guaranteed to hold the
//! key's lower bound; a last-mile search from [`search`] finishes the job. Keys are any
//! [`Key`]: `u64`, `u32`, `i64`, `f64`, and 16-byte strings ([`Str16`]).
//!
//! ```
//! use lidx::mem::pgm::{Pgm, PgmParams};
//! use lidx::StaticIndex;
//!
//! let keys: Vec<u64> = (0..10_000).map(|i| i * i).collect();
//! let pgm = Pgm::build(&keys, PgmParams::default()).unwrap();
//! assert_eq!(pgm.lower_bound(&keys, 49), 7);
//! assert_eq!(pgm.lower_bound(&keys, 50), 8);
//! ```
//!
//! # Layers
//!
//! A module only uses the ones above it in this list: [`error`]; [`spec`] (names and
//! parameters as written in specs); [`catalog`] (every structure named once); [`key`]; [`codec`] (the byte
//! encoders every saved model and file uses); [`search`] (last-mile searches on slices);
//! [`index`] (the window contract, [`StaticIndex`]) and [`map`]; [`model`] (CDF
//! approximations); [`mem`] (in-memory indexes: inside it, `art` below `start`); [`io`]; then
//! [`disk`], [`kv`] and [`join`].

pub mod catalog;
pub mod codec;
pub mod disk;
pub mod error;
pub mod index;
pub mod io;
pub mod join;
pub mod key;
pub mod kv;
pub mod map;
pub mod mem;
pub mod model;
pub mod search;
pub mod spec;

pub use error::{Error, Result};
pub use index::{ApproxPos, Shape, StaticIndex};
pub use key::{Key, Str16};
pub use map::{BulkLoad, OrderedMap};

/// The README's library example, compiled and run as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
