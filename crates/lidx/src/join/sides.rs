//! What every algorithm shares: a table's place ([`TableRef`]), the tables of a join in their
//! roles ([`Sides`]), and the split of a table between threads.

use std::ops::Range;

use super::output::{self, OutputSpec, OutputWriter};
use super::table::{Table, TableKey};
use crate::error::Result;
use crate::io::Storage;

/// A table's storage and file name.
#[derive(Clone, Copy)]
pub struct TableRef<'a> {
    /// Where the file is.
    pub storage: &'a Storage,
    /// Its name in the storage.
    pub name: &'a str,
}

/// The tables of a join in their roles, and where the output goes. The algorithms take it.
pub(crate) struct Sides<'a, K> {
    /// The smaller table, streamed.
    pub outer: &'a Table<K>,
    /// The larger table, indexed or probed.
    pub inner: &'a Table<K>,
    /// True when the outer table is the left one.
    pub outer_is_left: bool,
    /// Storage of the inner table (its saved indexes go there).
    pub inner_storage: &'a Storage,
    /// File name of the inner table.
    pub inner_name: &'a str,
    /// The output.
    pub out: OutputSpec<'a>,
}

impl<K: TableKey> Sides<'_, K> {
    /// Writes a match: the outer and inner values in left-right order.
    #[inline]
    pub(crate) fn emit(
        &self,
        out: &mut OutputWriter<K>,
        key: &K,
        outer_value: &[u8],
        inner_value: &[u8],
    ) -> Result<()> {
        if self.outer_is_left {
            out.push(key, outer_value, inner_value)
        } else {
            out.push(key, inner_value, outer_value)
        }
    }

    /// Runs `work` on `parts` parts (threads) and gathers the output: `(count, checksum)`.
    pub(crate) fn write(
        &self,
        parts: usize,
        work: impl Fn(usize, &mut OutputWriter<K>) -> Result<()> + Sync,
    ) -> Result<(u64, u64)> {
        output::write_parts(self.out, parts, work)
    }
}

/// `0..n` split into at most `parts` contiguous ranges of near-equal length (one range for
/// `n == 0`).
pub(super) fn split_range(n: u64, parts: usize) -> Vec<Range<u64>> {
    let parts = (parts.max(1) as u64).min(n.max(1));
    (0..parts)
        .map(|t| n * t / parts..n * (t + 1) / parts)
        .collect()
}
