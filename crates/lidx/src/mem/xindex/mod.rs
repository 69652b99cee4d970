//! XIndex (Tang et al., *XIndex: A Scalable Learned Index for Multicore Data Storage*, PPoPP
//! 2020), the concurrent learned index of paper 001 (§II-B4, Fig. 8, Table I): a two-stage RMI
//! root over group nodes; each group holds a sorted array with up to four least-squares models
//! and a delta buffer for inserts; a two-phase compaction merges the buffer into a new array
//! while writers go on into a temporary buffer; groups split and merge, and the root is
//! retrained when they do.
//!
//! - [`XIndex`]: the concurrent index, `&self` methods from any number of threads.
//! - [`XIndexMap`]: the same index as a single-threaded [`crate::OrderedMap`] and
//!   [`crate::BulkLoad`] (`MapSpec` `xindex`).
//!
//! Files, bottom up: `cell` (a record's value: in-place updates, forwarding and sealing),
//! `buffer` (delta and temporary buffers), `model` (a group's models), `group` (group, array,
//! phase 1 merge and phase 2), `root` (RMI over the groups), `index` (operations and structure
//! updates), `map` (the single-threaded view), `params`.

mod buffer;
mod cell;
mod group;
mod index;
mod map;
mod model;
mod params;
mod root;
#[cfg(test)]
mod tests;

pub use index::{XIndex, XIndexStats};
pub use map::{XIndexMap, XIndexRange};
pub use params::XIndexParams;
