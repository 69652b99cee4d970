//! [`join`] and [`join_in`]: open both tables, give them their roles, run the algorithm and
//! measure it ([`JoinReport`]).

use std::time::Instant;

use super::algo::{JoinAlgo, JoinParams};
use super::output::OutputSpec;
use super::report::{stats_of, JoinReport};
use super::sides::{Sides, TableRef};
use super::table::{self, Table, TableKey};
use super::{hash, inlj, learned_partition, sort_merge, unsorted_btree};
use crate::error::{Error, Result};
use crate::io::{DeviceKind, IoStats, Storage};

/// Joins the tables `left` and `right` (keys `K`) into the output table `out` with `params`,
/// its helper files in a private directory made in the output's directory (`.lidx-join-*`,
/// removed when the join returns; in memory for an in-memory output storage). See
/// [`join_in`].
pub fn join<K: TableKey>(
    left: TableRef<'_>,
    right: TableRef<'_>,
    out: TableRef<'_>,
    params: &JoinParams,
) -> Result<JoinReport> {
    let block_size = out.storage.block_size();
    match (out.storage.dir(), out.storage.kind()) {
        (Some(dir), kind) => {
            let private = tempfile::Builder::new()
                .prefix(".lidx-join-")
                .tempdir_in(dir)
                .map_err(|e| {
                    Error::io(dir.display().to_string(), "create a scratch directory", &e)
                })?;
            let scratch = Storage::new(private.path(), kind.clone(), block_size)?;
            let report = join_in::<K>(left, right, out, &scratch, params);
            drop(scratch);
            let _ = private.close();
            report
        }
        (None, DeviceKind::Sim(profile)) => {
            let scratch = Storage::in_memory(profile.clone(), block_size)?;
            join_in::<K>(left, right, out, &scratch, params)
        }
        (None, DeviceKind::File { .. } | DeviceKind::FileCached) => Err(Error::InvalidParameter {
            name: "storage",
            value: "a file device without a directory".to_string(),
            expected: "a storage with a directory, or an in-memory one",
        }),
    }
}

/// Joins the tables `left` and `right` (keys `K`) into the output table `out` with `params`,
/// writing its helper files (thread parts, partitions, the unsorted routes' trees and buckets)
/// only into `scratch`, under names of their own (`scratch_name`), and removing them before
/// it returns, on errors too. `scratch` should be a directory no one else writes to; its I/O
/// is counted in the report.
///
/// Errors: [`Error::KeyTypeMismatch`] when a table's keys are not `K`, the order and duplicate
/// errors of the algorithm (see the module docs), [`Error::InvalidParameter`] for zero threads,
/// a bad window or a memory budget the algorithm cannot meet, and I/O and corruption errors.
pub fn join_in<K: TableKey>(
    left: TableRef<'_>,
    right: TableRef<'_>,
    out: TableRef<'_>,
    scratch: &Storage,
    params: &JoinParams,
) -> Result<JoinReport> {
    if params.threads == 0 {
        return Err(Error::InvalidParameter {
            name: "threads",
            value: "0".to_string(),
            expected: "at least 1",
        });
    }
    let l = Table::<K>::open(left.storage, left.name)?;
    let r = Table::<K>::open(right.storage, right.name)?;
    let outer_is_left = l.len() <= r.len();
    let (outer, inner, inner_ref) = if outer_is_left {
        (&l, &r, right)
    } else {
        (&r, &l, left)
    };
    let sides = Sides {
        outer,
        inner,
        outer_is_left,
        inner_storage: inner_ref.storage,
        inner_name: inner_ref.name,
        out: OutputSpec {
            storage: out.storage,
            scratch,
            name: out.name,
            left_size: l.value_size(),
            right_size: r.value_size(),
            write_blocks: table::WRITE_BLOCKS,
        },
    };
    let storages = [left.storage, right.storage, out.storage, scratch];
    let mut start = Instant::now();
    let mut before = stats_of(&storages);
    let mut mark = || {
        before = stats_of(&storages);
        start = Instant::now();
    };
    let mut scratch_io = IoStats::default();
    let (load, (count, checksum)) = match params.algo {
        JoinAlgo::SortMerge => (None, sort_merge::run(&sides, params.threads)?),
        JoinAlgo::Hash => (None, hash::run(&sides, params.threads, params.memory)?),
        JoinAlgo::GraceHash => (
            None,
            hash::run_grace(&sides, params.threads, params.memory)?,
        ),
        JoinAlgo::Inlj(index) => {
            let (load, out) = inlj::run(&sides, index, params.window, params.threads, &mut mark)?;
            (Some(load), out)
        }
        JoinAlgo::UnsortedBTree => {
            let (load, out, io) =
                unsorted_btree::run(left, right, &sides, params.memory, &mut mark)?;
            scratch_io = io;
            (Some(load), out)
        }
        JoinAlgo::UnsortedLearned => {
            let (load, out) =
                learned_partition::run(&sides, params.threads, params.memory, &mut mark)?;
            (Some(load), out)
        }
    };
    let join_seconds = start.elapsed().as_secs_f64();
    let io = stats_of(&storages) - before + scratch_io;
    Ok(JoinReport {
        threads: params.threads,
        window: params.window,
        memory: params.memory,
        index_seconds: load.map_or(0.0, |l| l.time.as_secs_f64()),
        index_loaded: load.is_some_and(|l| l.loaded),
        index: load.map(|l| l.describe()),
        index_bytes: load.map_or(0, |l| l.memory_bytes as u64),
        index_file_bytes: load.map_or(0, |l| l.file_bytes),
        checksum: Some(checksum),
        output_sorted: params.algo.output_sorted(),
        ..JoinReport::measured::<K>(
            params.algo.name(),
            (l.len(), r.len()),
            join_seconds,
            io,
            count,
        )
    })
}
