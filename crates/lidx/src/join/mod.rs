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
//!   written (from [`Storage::stats`](crate::io::Storage::stats)), index size and origin, output count and checksum
//!   (none for the `baseline`s, which join nothing).
//!
//! **Where things are.** Public, what an embedder uses: [`join`] with [`JoinParams`],
//! [`JoinAlgo`] and [`InljIndex`], its [`JoinReport`]; tables ([`Table`], [`TableWriter`],
//! [`read_header`]); the `baseline`s. This file only declares: `algo` (what a join is
//! asked: [`JoinAlgo`], [`JoinParams`]), `run` ([`join`], [`join_in`]: roles, dispatch,
//! measurement), `report` ([`JoinReport`]), `sides` (what every algorithm shares: `Sides`,
//! [`TableRef`], the split between threads), `scratch` (the helper files' names and
//! removal). One file per algorithm (`sort_merge`, `hash`, `inlj`, `unsorted_btree`,
//! `learned_partition/`: sampling and bucket map, partition writer, bucket reader, bucket
//! join, driver) and per part of a table (`table/`: header, open table, prefetcher, scan,
//! window reader, writer). Internal to the crate: the saved-index
//! codec, the unsorted routes' internals, `Sides` (tests and fuzzers reach what they need
//! through `lidx::raw`).
//!
//! **Decisions where the paper is silent:**
//!
//! * Roles: the smaller table (by record count; the left one on a tie) is the outer table `R`,
//!   streamed; the larger is the inner `S`, indexed (§4.2 "we build the learned index on the
//!   larger table"). The output's value is always the left value then the right value.
//! * Duplicates: the sorted joins need unique keys on both sides, in increasing order, as the
//!   paper's tables (§5.2: `K_i > K_{i-1}`); they check it while streaming and building, and
//!   return [`Error::DuplicateKey`](crate::Error::DuplicateKey) or [`Error::OutOfOrder`](crate::Error::OutOfOrder). `lidx table create` removes a
//!   dataset's duplicates. The hash joins need unique keys on the build (smaller) side only.
//! * Key types: `u64` and 16-byte strings ([`crate::Str16`]); tables with different key sizes
//!   are [`Error::KeyTypeMismatch`](crate::Error::KeyTypeMismatch). How models see strings: see `inlj`.
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

mod algo;
mod report;
mod run;
mod scratch;
mod sides;

pub use algo::{JoinAlgo, JoinParams};
pub use baseline::Baseline;
pub use inlj::{InljIndex, JoinIndex, WindowCursor};
pub use output::{OutputSpec, OutputWriter};
pub use report::JoinReport;
pub use run::{join, join_in};
pub use sides::TableRef;
pub use table::{
    check_same_key_type, read_header, Scan, Table, TableHeader, TableKey, TableWriter, WindowHold,
    WindowReader,
};
