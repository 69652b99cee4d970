//! Sort-merge join of sorted tables: two cursors, the smaller key advances (paper 000 §5.3).
//!
//! The tables are already sorted, so the sort phase is skipped, as in the paper: one merge pass
//! reads both tables sequentially ([`crate::join::Scan`], [`crate::join::table::READ_BLOCKS`]
//! blocks per request). Both
//! tables must hold unique keys in increasing order, checked while streaming
//! ([`crate::Error::OutOfOrder`], [`crate::Error::DuplicateKey`]).
//!
//! Threads (§6.4): the outer (smaller) table is split into equal ranges of records; each
//! thread merges its range with the inner table's records from the lower bound of the range's
//! first key (a binary search over the inner table's blocks) to the next range's, and writes
//! its own part.

use std::ops::Range;

use crate::error::Result;
use crate::join::output::OutputWriter;
use crate::join::sides::{split_range, Sides};
use crate::join::table::TableKey;

/// Runs the merge with `threads` threads; returns `(count, checksum)`.
pub(crate) fn run<K: TableKey>(sides: &Sides<'_, K>, threads: usize) -> Result<(u64, u64)> {
    let outer_parts = split_range(sides.outer.len(), threads);
    let mut starts = Vec::with_capacity(outer_parts.len() + 1);
    for (t, part) in outer_parts.iter().enumerate() {
        starts.push(if t == 0 {
            0
        } else {
            sides
                .inner
                .lower_bound_on_disk(sides.outer.key_at(part.start)?)?
        });
    }
    starts.push(sides.inner.len());
    let inner_parts: Vec<Range<u64>> = (0..outer_parts.len())
        .map(|t| starts[t]..starts[t + 1].max(starts[t]))
        .collect();
    sides.write(outer_parts.len(), |t, w| {
        merge(sides, outer_parts[t].clone(), inner_parts[t].clone(), w)
    })
}

fn merge<K: TableKey>(
    sides: &Sides<'_, K>,
    outer: Range<u64>,
    inner: Range<u64>,
    out: &mut OutputWriter<K>,
) -> Result<()> {
    let mut o = sides.outer.scan(outer)?;
    let mut i = sides.inner.scan(inner)?;
    while let (Some(a), Some(b)) = (o.key(), i.key()) {
        match a.key_cmp(&b) {
            std::cmp::Ordering::Less => o.advance_sorted()?,
            std::cmp::Ordering::Greater => i.advance_sorted()?,
            std::cmp::Ordering::Equal => {
                sides.emit(out, &a, o.value(), i.value())?;
                o.advance_sorted()?;
                i.advance_sorted()?;
            }
        }
    }
    // Check the order of what is left of the outer range too: the paper's merge stops at
    // the first table's end, but a table that is not sorted must not pass as one.
    while o.key().is_some() {
        o.advance_sorted()?;
    }
    Ok(())
}
