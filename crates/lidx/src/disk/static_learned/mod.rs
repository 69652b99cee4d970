//! The disk-resident static learned index: sorted records in blocks on disk, a model in memory.
//!
//! Paper 003 §4 ports learned indexes to disk by keeping the model in memory and the data
//! ("leaf nodes") in blocks; paper 002 §2.2 and §3 set up the same microbenchmark (model pinned
//! in memory, data points sorted on disk, direct I/O) and study how to read the blocks:
//!
//! * G1, leaf-page fetching (§4): all-at-once (one request for every block of the model's
//!   window) or one-by-one (one request per block): [`Fetch`], chosen per file, at open, or per
//!   call ([`StaticLearned::get_with`], [`StaticLearned::lower_bound_with`],
//!   [`StaticLearned::scan_with`]).
//! * G2, prediction granularity (§5, eq. 3-4): the model predicts items, mini-pages of `g`
//!   items, or whole blocks: [`Granularity`], with the eps relation across granularities in its
//!   docs.
//!
//! The model is any static index that can be saved ([`crate::mem::Persist`]): PGM,
//! sampled PGM, RadixSpline, RMI, a B+-tree used as a model, a FITing-tree, or a zone map (the
//! first key of every block, binary-searched: exact at page level, one block per lookup).
//! Records are `(key, payload)` with unique keys and fixed-size payloads. A lookup asks the
//! model for a window of items, reads the data blocks that hold it (with [`crate::io::IoClass::Leaf`],
//! so the device counts them as leaf blocks), and binary-searches the records read.
//!
//! What we do differently from the papers, and why:
//!
//! * One file per index: header block, data blocks, then the model's bytes, so an index can be
//!   reopened without its keys ([`StaticLearned::open`]) and opened with the wrong model type
//!   gives [`crate::Error::ModelKindMismatch`], not garbage. Layout in [`header`].
//! * Data blocks carry a count and a tag besides the device checksum, so a block that passes
//!   its checksum but holds the wrong records is [`crate::Error::Corrupt`] ([`data_block`]).
//! * One-by-one fetching starts at the model's predicted position, not at the window's start
//!   as paper 002 eq. 2 counts it, and walks toward the key ([`fetch`]).
//! * Coarser granularities build the model on the first key of every group rather than on all
//!   keys with a shared target: any static index can then serve at any granularity.
//! * The window contract `lo <= lower_bound <= hi` allows the answer to be the first record
//!   after the window; lookups that need that record read its block too, so `get` and `scan`
//!   are exact at block boundaries for any model.
//!
//! The files depend on each other one way, each only on those before it:
//!
//! 1. [`data_block`]: the records of one block, and where the data blocks start in the file.
//! 2. [`fetch`]: the G1 strategies ([`Fetch`]) and reading a window's data blocks.
//! 3. `params`: the G2 granularity ([`Granularity`]) and the build parameters
//!    ([`StaticLearnedParams`]).
//! 4. [`header`]: block 0, which records the parameters and the file's layout.
//! 5. [`index`]: [`StaticLearned`], opened from a header and a model; lookups and scans.
//! 6. [`writer`]: [`StaticLearnedWriter`] and [`StaticLearned::build`], which write a file and
//!    return it opened.
//! 7. `any`: [`AnyStaticLearned`], a file opened with whatever model it holds.

mod any;
pub(crate) mod data_block;
pub(crate) mod fetch;
pub(crate) mod header;
pub(crate) mod index;
mod params;
pub(crate) mod writer;

pub use any::AnyStaticLearned;
pub use fetch::Fetch;
pub use index::{read_header, read_kind, StaticLearned};
pub use params::{Granularity, StaticLearnedParams};
pub use writer::StaticLearnedWriter;
