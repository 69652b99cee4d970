//! lidx: ordered indexes over data on disk, with learned indexes first-class.
//!
//! A static index is built on sorted keys it does not own and answers
//! [`StaticIndex::search`] with an [`ApproxPos`] window `[lo, hi)` guaranteed to hold the
//! key's lower bound; a last-mile search from [`search`] finishes the job
//! ([`StaticIndex::lower_bound`], or [`lower_bound_in`] with a chosen [`search::LastMile`]).
//! Keys are any [`Key`]: `u64`, `u32`, `i64`, `f64`, and 16-byte strings ([`Str16`]).
//!
//! ```
//! use lidx::mem::{Pgm, PgmParams};
//! use lidx::StaticIndex;
//!
//! let keys: Vec<u64> = (0..10_000).map(|i| i * i).collect();
//! let pgm = Pgm::build(&keys, PgmParams::default()).unwrap();
//! assert_eq!(pgm.lower_bound(&keys, 49), 7);
//! assert_eq!(pgm.lower_bound(&keys, 50), 8);
//! ```
//!
//! # The front door
//!
//! | where | what you build or call |
//! |---|---|
//! | the root | the contracts ([`StaticIndex`], [`OrderedMap`], [`BulkLoad`]), keys ([`Key`], [`Str16`]), windows ([`ApproxPos`]), [`Error`] and [`Result`] |
//! | [`mem`] | in-memory static indexes (PGM, RadixSpline, RMI, FITing-tree, zone maps, a B+-tree) and updatable maps (ALEX, LIPP, ART, START, XIndex, dynamic PGM, B+-tree, skip list) |
//! | [`disk`] | indexes whose data lives in blocks: the disk B+-tree, the static learned table, paper 003's updatable indexes (ALEX, LIPP, PGM, FITing-tree, the learned B+-tree), the byte-key table and B+-tree |
//! | [`io`] | devices ([`io::FileDevice`], [`io::SimDevice`]), the page cache, [`io::Storage`] and the I/O counters every figure is read from |
//! | [`kv`] | the [`kv::Store`] (a durable ordered map of byte strings, four engines) and the typed hybrid index |
//! | [`join`] | external-memory joins of two tables ([`join::join`]) and the table files they read |
//! | [`model`] | the CDF models learned indexes are made of (PLA, splines, LeCo) |
//! | [`search`] | last-mile searches on slices |
//! | [`catalog`] | every structure's name, parameters, defaults and help, by role: what command lines, the Python bindings and the bench parse |
//! | [`spec`] | the `name:key=value` grammar every command line and the Python bindings use |
//!
//! Everything else is internal; `docs/architecture.md` in the repository maps it.

#![warn(unreachable_pub)]

pub mod catalog;
mod codec;
mod cpu;
pub mod disk;
mod error;
mod index;
pub mod io;
pub mod join;
mod key;
pub mod kv;
mod map;
pub mod mem;
pub mod model;
#[doc(hidden)]
pub mod raw;
pub mod search;
pub mod spec;

pub use error::{Error, Result};
pub use index::{lower_bound_in, ApproxPos, Shape, StaticIndex};
pub use key::{Key, Str16};
pub use map::{BulkLoad, OrderedMap};

/// The README's library example, compiled and run as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
