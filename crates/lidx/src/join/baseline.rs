//! The limit a join is measured against: reading both tables sequentially (paper 000 §4.2,
//! §4.3), through our own I/O path.
//!
//! The paper's analysis (§4.2, eq. 1) says that at table ratios near 1 (`|R| >= |S| / eps`)
//! the I/O of a learned INLJ "is essentially same as linearly scanning both the tables
//! completely", and that then only CPU separates the joins (§4.3). So the limit of a join at
//! ratio 1 is the time to read both tables sequentially. The paper does not measure that time
//! or say whether writing the output belongs to it; its join times include writing the output
//! (§5.3, §6.4). We measure both, in the same session and through the same I/O layer as the
//! joins (`O_DIRECT` files or a simulated device, [`crate::join::table::READ_BLOCKS`] blocks
//! per request, one request read ahead on a background thread), and report them as
//! [`JoinReport`]s so that ratios are taken between lines of the same format:
//!
//! * [`Baseline::ReadBoth`] (`lidx join --algo read-both`): scans the smaller table, then the
//!   larger, touching every record's key (the least CPU any join spends on them). Writes
//!   nothing. This is the paper's limit.
//! * [`Baseline::ReadBothWrite`] (`--algo read-both-write`): the same reads, and while the
//!   smaller table streams, writes an output table of one record per record of the smaller
//!   table, of the join's output record size (key, left value, right value; the value of the
//!   larger side is left zero), through the join's output writer path (4 MiB requests written
//!   on a background thread). That is the largest output a key-unique equi-join can produce,
//!   and exactly the join's output at table ratio 1 when the smaller table is drawn from the
//!   larger (as `lidx table create --ratio` does). It adds the output's write to the limit,
//!   without the join's checksum or any search.
//!
//! The reports carry `output_count` (records written, 0 for `read-both`), no `checksum` (a
//! baseline joins nothing, so it has no output checksum to compare with a join's), and a
//! `read_checksum`: the wrapping sum of every key read (as `u64` model values), only there so
//! that the scan cannot be optimized away.

use std::time::Instant;

use super::report::{stats_of, JoinReport};
use super::sides::TableRef;
use crate::error::Result;
use crate::join::table::{Table, TableKey, TableWriter};

/// A baseline measurement (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// Read both tables sequentially.
    ReadBoth,
    /// Read both tables sequentially and write an output of the smaller table's record count.
    ReadBothWrite,
}

impl Baseline {
    /// Both baselines.
    pub const ALL: [Baseline; 2] = [Baseline::ReadBoth, Baseline::ReadBothWrite];

    /// The CLI name: `read-both`, `read-both-write`.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::ReadBoth => "read-both",
            Baseline::ReadBothWrite => "read-both-write",
        }
    }

    /// The baseline of a CLI name, if it names one.
    pub fn parse(name: &str) -> Option<Baseline> {
        Baseline::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Scans `table` whole, summing its keys' model values; `write(key, value)` for each record.
fn scan_all<K: TableKey>(
    table: &Table<K>,
    mut write: impl FnMut(&K, &[u8]) -> Result<()>,
) -> Result<u64> {
    let mut sum = 0u64;
    let mut scan = table.scan(0..table.len())?;
    while let Some(key) = scan.key() {
        sum = sum.wrapping_add(key.to_model());
        write(&key, scan.value())?;
        scan.advance()?;
    }
    Ok(sum)
}

/// Runs `baseline` on the tables `left` and `right`; `out` is written by
/// [`Baseline::ReadBothWrite`] only. Errors: [`crate::Error::KeyTypeMismatch`] when a table's keys are
/// not `K`, and I/O and corruption errors.
pub fn run<K: TableKey>(
    baseline: Baseline,
    left: TableRef<'_>,
    right: TableRef<'_>,
    out: TableRef<'_>,
) -> Result<JoinReport> {
    let l = Table::<K>::open(left.storage, left.name)?;
    let r = Table::<K>::open(right.storage, right.name)?;
    let (smaller, larger) = if l.len() <= r.len() {
        (&l, &r)
    } else {
        (&r, &l)
    };
    let storages = [left.storage, right.storage, out.storage];
    let before = stats_of(&storages);
    let start = Instant::now();
    let (mut sum, count) = match baseline {
        Baseline::ReadBoth => (scan_all(smaller, |_, _| Ok(()))?, 0),
        Baseline::ReadBothWrite => {
            let (ls, rs) = (l.value_size(), r.value_size());
            let smaller_is_left = std::ptr::eq(smaller, &l);
            let mut writer = TableWriter::<K>::create(out.storage, out.name, ls + rs)?;
            let sum = scan_all(smaller, |key, value| {
                writer.push_with(|record| {
                    key.write_to(&mut record[..K::SIZE]);
                    let at = if smaller_is_left {
                        K::SIZE
                    } else {
                        K::SIZE + ls
                    };
                    record[K::SIZE..].fill(0);
                    record[at..at + value.len()].copy_from_slice(value);
                })
            })?;
            (sum, writer.finish()?.count)
        }
    };
    sum = sum.wrapping_add(scan_all(larger, |_, _| Ok(()))?);
    let seconds = start.elapsed().as_secs_f64();
    let io = stats_of(&storages) - before;
    Ok(JoinReport {
        read_checksum: Some(sum),
        ..JoinReport::measured::<K>(baseline.name(), (l.len(), r.len()), seconds, io, count)
    })
}
