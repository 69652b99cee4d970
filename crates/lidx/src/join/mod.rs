//! External-memory joins of tables on disk, with learned indexes (paper 000).
//!
//! **The paper's question** (§1, §4): do learned indexes speed up joins whose tables live on
//! disk? Its analysis (§4.2, eq. 1) says the I/O of an indexed nested-loop join (INLJ) is
//! `|R|/B + min(|R|, |S|/eps) (1 + alpha eps/B)` whatever the index, so a learned index can only
//! win on CPU (faster lookups, §4.1's two optimizations) and memory (smaller index); its
//! experiments (§6.2) find learned INLJ up to 2x faster than B+-tree INLJ on SSD at table
//! ratio 1, converging as the ratio grows and I/O dominates, hash join an order of magnitude
//! slower, sort join best at large ratios on random I/O.
//!
//! **What lidx gives to answer it for any user's tables:**
//!
//! * `table`: the table file (§5.1): the paper's 16-byte header (with a magic number, a
//!   version and a content fingerprint of the records after it), fixed-size records packed
//!   per block through [`crate::io`] (`O_DIRECT` files or simulated devices, so every run is
//!   cold-cache and every block read is counted), a buffered writer, a sequential reader and a
//!   forward window reader that fetches a window's blocks in one request and keeps them.
//! * `table_index`: indexes saved next to their table and reloaded (§5.2), with magic,
//!   version, checksum and the content fingerprint of the table they were built on; one that
//!   does not match is rebuilt, never used ([`JoinReport::index`] says `rebuilt: stale`).
//! * Joins on sorted tables (§5.3), every one writing the same output table
//!   (`output`: `(key, left value, right value)`, with an order-independent checksum that all
//!   algorithms must reproduce): `sort_merge`, `hash` (in-memory and Grace), and `inlj`
//!   with a B+-tree, PGM, sampled PGM, RadixSpline or RMI index.
//! * Threads (§6.4): the smaller table is split in equal ranges, one per thread, each writing
//!   its own part; the parts are concatenated into the output (`output::write_parts`).
//! * Helper files (thread parts, Grace partitions, the unsorted routes' trees and buckets) go
//!   in a scratch storage, never beside the output or the tables under names derived from
//!   theirs (issue 30: `X.part1` and `X.grace.b0` truncated, then deleted, a user's files of
//!   those names, even an input table). [`join_in`] takes the caller's scratch storage (the
//!   CLI gives a private directory it removes on signals too); [`join`] makes a private one
//!   with `tempfile` in the output's directory and removes it when the join returns.
//! * [`JoinReport`]: join time apart from index build or load time, blocks and bytes read and
//!   written (from [`Storage::stats`]), index size and origin, output count and checksum
//!   (none for the `baseline`s, which join nothing).
//!
//! **Where things are.** Public, what an embedder uses: [`join`] with [`JoinParams`],
//! [`JoinAlgo`] and [`InljIndex`], its [`JoinReport`]; tables ([`Table`], [`TableWriter`],
//! [`read_header`]); the `baseline`s. One file per algorithm (`sort_merge`, `hash`,
//! `inlj`, `unsorted_btree`, `learned_partition/`: sampling and bucket map, partition
//! writer, bucket reader, bucket join, driver) and per part of a table (`table/`: header,
//! open table, scan, window reader, writer). Hidden (`#[doc(hidden)]`, for tests and fuzzers):
//! the saved-index codec, the output writer, the unsorted routes' internals, [`Sides`].
//!
//! **Decisions where the paper is silent:**
//!
//! * Roles: the smaller table (by record count; the left one on a tie) is the outer table `R`,
//!   streamed; the larger is the inner `S`, indexed (§4.2 "we build the learned index on the
//!   larger table"). The output's value is always the left value then the right value.
//! * Duplicates: the sorted joins need unique keys on both sides, in increasing order, as the
//!   paper's tables (§5.2: `K_i > K_{i-1}`); they check it while streaming and building, and
//!   return [`Error::DuplicateKey`] or [`Error::OutOfOrder`]. `lidx table create` removes a
//!   dataset's duplicates. The hash joins need unique keys on the build (smaller) side only.
//! * Key types: `u64` and 16-byte strings ([`crate::Str16`]); tables with different key sizes
//!   are [`Error::KeyTypeMismatch`]. How models see strings: see `inlj`.
//! * I/O overlap (not in the paper, which reads through the OS page cache and its readahead):
//!   with `O_DIRECT` nothing reads ahead for us, so sequential scans read 4 MiB requests up to
//!   `PREFETCH_DEPTH` requests ahead on a background thread, output writers write full
//!   4 MiB buffers on one (which also sums the output checksum), and the INLJ window reader
//!   reads ahead (synchronously, doubling up to 4 MiB, then streaming as a scan does) while
//!   consecutive windows stay adjacent, as they do at small table ratios
//!   ([`table::WindowReader`]).
//! * Memory (`--memory`): the in-memory hash join refuses a budget its hash table exceeds, the
//!   Grace join sizes its partitions to it, the unsorted joins size their caches, buckets and
//!   output buffers to it; the other joins ignore it and hold, per thread, a scan's buffers
//!   (up to `1 + PREFETCH_DEPTH` requests of 4 MiB: [`table::Table::scan_memory`]), a window
//!   reader's (its widest window plus readahead, or a stream's buffers), two 4 MiB output
//!   buffers, and the index.
//!
//! The unsorted joins (§5.4) add variants to [`JoinAlgo`] and arms to [`join`].

pub(crate) mod baseline;
pub(crate) mod hash;
pub(crate) mod inlj;
pub(crate) mod learned_partition;
pub(crate) mod output;
pub(crate) mod sort_merge;
pub(crate) mod table;
pub(crate) mod table_index;
pub(crate) mod unsorted_btree;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub use baseline::Baseline;
pub use inlj::{InljIndex, JoinIndex, WindowCursor};
pub use output::{OutputSpec, OutputWriter};
pub use table::{
    check_same_key_type, read_header, Scan, Table, TableHeader, TableKey, TableWriter, WindowReader,
};

use crate::error::{Error, Result};
use crate::io::{DeviceKind, IoStats, Storage};

/// A join algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinAlgo {
    /// Merge of two sorted tables.
    SortMerge,
    /// In-memory hash table on the smaller table.
    Hash,
    /// Partitioned (Grace) hash join under a memory budget.
    GraceHash,
    /// Indexed nested-loop join with an index over the larger table.
    Inlj(InljIndex),
    /// Unsorted tables: a B+-tree (key -> position) per table by inserts, scan + probe.
    UnsortedBTree,
    /// Unsorted tables: learned partitioning into buckets, bucket pairs sorted and joined.
    UnsortedLearned,
}

impl JoinAlgo {
    /// Every algorithm, in the order of the CLI's help.
    pub const ALL: [JoinAlgo; 10] = [
        JoinAlgo::SortMerge,
        JoinAlgo::Hash,
        JoinAlgo::GraceHash,
        JoinAlgo::Inlj(InljIndex::BTree),
        JoinAlgo::Inlj(InljIndex::Pgm),
        JoinAlgo::Inlj(InljIndex::SampledPgm),
        JoinAlgo::Inlj(InljIndex::RadixSpline),
        JoinAlgo::Inlj(InljIndex::Rmi),
        JoinAlgo::UnsortedBTree,
        JoinAlgo::UnsortedLearned,
    ];

    /// The CLI name: `sort-merge`, `hash`, `grace-hash`, `inlj-btree`, `inlj-pgm`,
    /// `inlj-sampled-pgm`, `inlj-rs`, `inlj-rmi`.
    pub fn name(self) -> &'static str {
        match self {
            JoinAlgo::SortMerge => "sort-merge",
            JoinAlgo::Hash => "hash",
            JoinAlgo::GraceHash => "grace-hash",
            JoinAlgo::Inlj(InljIndex::BTree) => "inlj-btree",
            JoinAlgo::Inlj(InljIndex::Pgm) => "inlj-pgm",
            JoinAlgo::Inlj(InljIndex::SampledPgm) => "inlj-sampled-pgm",
            JoinAlgo::Inlj(InljIndex::RadixSpline) => "inlj-rs",
            JoinAlgo::Inlj(InljIndex::Rmi) => "inlj-rmi",
            JoinAlgo::UnsortedBTree => "unsorted-btree",
            JoinAlgo::UnsortedLearned => "unsorted-learned",
        }
    }

    /// Parses a CLI name (see [`JoinAlgo::name`]).
    pub fn parse(name: &str) -> Result<JoinAlgo> {
        JoinAlgo::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| Error::InvalidParameter {
                name: "algo",
                value: name.to_string(),
                expected: "one of sort-merge, hash, grace-hash, inlj-btree, inlj-pgm, \
                           inlj-sampled-pgm, inlj-rs, inlj-rmi, unsorted-btree, unsorted-learned",
            })
    }

    /// True when the algorithm writes its output in key order (for sorted inputs).
    pub fn output_sorted(self) -> bool {
        !matches!(self, JoinAlgo::GraceHash)
    }
}

/// How to run a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinParams {
    /// The algorithm.
    pub algo: JoinAlgo,
    /// Worker threads (at least 1). More threads overlap more I/O and CPU (§6.4).
    pub threads: usize,
    /// Memory budget in bytes for the hash joins (`None`: unlimited).
    pub memory: Option<u64>,
    /// INLJ window in records (§6.5; `None`: each index's paper setting, see `inlj`).
    /// Wider windows mean smaller indexes and larger reads per lookup.
    pub window: Option<usize>,
}

impl Default for JoinParams {
    /// Sort-merge, one thread, no budget, the papers' windows.
    fn default() -> Self {
        JoinParams {
            algo: JoinAlgo::SortMerge,
            threads: 1,
            memory: None,
            window: None,
        }
    }
}

/// A table's storage and file name.
#[derive(Clone, Copy)]
pub struct TableRef<'a> {
    /// Where the file is.
    pub storage: &'a Storage,
    /// Its name in the storage.
    pub name: &'a str,
}

/// What a join measured. Durations in seconds.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JoinReport {
    /// Algorithm name ([`JoinAlgo::name`]).
    pub algo: String,
    /// Key type (`u64`, `str16`).
    pub key_type: String,
    /// Records of the left and right tables.
    pub left_count: u64,
    /// Records of the right table.
    pub right_count: u64,
    /// Threads used.
    pub threads: usize,
    /// INLJ window setting, if given.
    pub window: Option<usize>,
    /// Memory budget, if given.
    pub memory: Option<u64>,
    /// Time of the join itself: from the index in memory (or the start, without one) to the
    /// output table written.
    pub join_seconds: f64,
    /// Time to build (and save) or load the index; 0 without one.
    pub index_seconds: f64,
    /// True when the index was loaded from its saved file.
    pub index_loaded: bool,
    /// Where the index came from: `loaded`, `built` (no saved file), or `rebuilt: <why>` when a
    /// saved file was there but not for these records or settings (`rebuilt: stale`: the table
    /// was re-created; see `table_index`); `None` without an index.
    pub index: Option<String>,
    /// Bytes the index keeps in memory (0 without one).
    pub index_bytes: u64,
    /// Bytes of the saved index file (0 without one).
    pub index_file_bytes: u64,
    /// Blocks read during the join (index build or load excluded).
    pub blocks_read: u64,
    /// Bytes read during the join.
    pub bytes_read: u64,
    /// Read requests during the join.
    pub read_requests: u64,
    /// Blocks written during the join (the output, thread parts and partitions).
    pub blocks_written: u64,
    /// Bytes written during the join.
    pub bytes_written: u64,
    /// Output records.
    pub output_count: u64,
    /// Order-independent checksum of the output records (`output`); `None` for a
    /// `baseline`, which joins nothing (see `read_checksum`).
    pub checksum: Option<u64>,
    /// A baseline's sum of the keys it read, only there so the reads cannot be optimized away;
    /// no join's checksum is comparable to it. `None` (and absent from the JSON) for joins.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub read_checksum: Option<u64>,
    /// True when the output is in key order.
    pub output_sorted: bool,
}

/// The tables of a join in their roles, and where the output goes. The algorithms take it.
#[doc(hidden)]
pub struct Sides<'a, K> {
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
    pub fn emit(
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
    pub fn write(
        &self,
        parts: usize,
        work: impl Fn(usize, &mut OutputWriter<K>) -> Result<()> + Sync,
    ) -> Result<(u64, u64)> {
        output::write_parts(self.out, parts, work)
    }
}

/// A helper file name of a join's scratch storage, distinct for every call in every process
/// (so joins sharing one scratch storage do not collide): `<role>.<pid>-<n>`.
#[doc(hidden)]
pub fn scratch_name(role: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{role}.{}-{n}", std::process::id())
}

/// Removes the helper file `name` of the scratch storage `scratch` (a file left behind only
/// wastes space, so a failure is not an error).
#[doc(hidden)]
pub fn remove_scratch(scratch: &Storage, name: &str) {
    let _ = scratch.remove(name);
}

/// `0..n` split into at most `parts` contiguous ranges of near-equal length (one range for
/// `n == 0`).
#[doc(hidden)]
pub fn split_range(n: u64, parts: usize) -> Vec<Range<u64>> {
    let parts = (parts.max(1) as u64).min(n.max(1));
    (0..parts)
        .map(|t| n * t / parts..n * (t + 1) / parts)
        .collect()
}

/// Summed counters of the distinct storages among `storages`.
fn stats_of(storages: &[&Storage]) -> IoStats {
    let mut sum = IoStats::default();
    for (i, s) in storages.iter().enumerate() {
        if !storages[..i].iter().any(|t| std::ptr::eq(*t, *s)) {
            sum = sum + s.stats();
        }
    }
    sum
}

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
        (None, DeviceKind::File { .. }) => Err(Error::InvalidParameter {
            name: "storage",
            value: "a file device without a directory".to_string(),
            expected: "a storage with a directory, or an in-memory one",
        }),
    }
}

/// Joins the tables `left` and `right` (keys `K`) into the output table `out` with `params`,
/// writing its helper files (thread parts, partitions, the unsorted routes' trees and buckets)
/// only into `scratch`, under names of their own ([`scratch_name`]), and removing them before
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
        algo: params.algo.name().to_string(),
        key_type: K::NAME.to_string(),
        left_count: l.len(),
        right_count: r.len(),
        threads: params.threads,
        window: params.window,
        memory: params.memory,
        join_seconds,
        index_seconds: load.map_or(0.0, |l| l.time.as_secs_f64()),
        index_loaded: load.is_some_and(|l| l.loaded),
        index: load.map(|l| l.describe()),
        index_bytes: load.map_or(0, |l| l.memory_bytes as u64),
        index_file_bytes: load.map_or(0, |l| l.file_bytes),
        blocks_read: io.read_blocks,
        bytes_read: io.read_bytes,
        read_requests: io.read_requests,
        blocks_written: io.write_blocks,
        bytes_written: io.write_bytes,
        output_count: count,
        checksum: Some(checksum),
        read_checksum: None,
        output_sorted: params.algo.output_sorted(),
    })
}
