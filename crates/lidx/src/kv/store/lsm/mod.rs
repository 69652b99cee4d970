//! The `lsm` engine: a log-structured merge tree whose sorted runs are learned byte tables.
//!
//! Writes go to the log and a memtable (the `hybrid` engine's dynamic stage and its write
//! path, `super::staged`). A full memtable is frozen and **flushed** by the merge thread into a
//! new sorted run at level 0. A run is a [`crate::disk::byte_table`] of kind `Run`: one block
//! per lookup through a learned model over its separators (paper 002's static stage, over byte
//! keys), with a Bloom **key filter** of `bits` bits per record, so a get of a key a run does
//! not hold reads no block of it while the run's filter is held (**Memory**, below). Every value in a run starts with a tag byte, a put or a
//! tombstone, so a delete hides older runs until a merge with no run below its inputs drops
//! it.
//!
//! **Levels** (leveled, as LevelDB and RocksDB by default): level 0 collects up to `l0` runs
//! that may overlap; each level below is **partitioned**, runs of disjoint key ranges in key
//! order (a get asks the one whose range holds the key), `ratio` times more bytes than the
//! one above (level 1's target is `l0` memtables). A **compaction** thread empties level 0,
//! or a level over its target, into the next: a run that overlaps no other run of its level
//! (level 0's may overlap) and no run of the next level is **moved** as it is (a *trivial
//! move*, RocksDB's: the file linked under a new level's name, nothing rewritten), and the
//! others are merged with the next level's runs they overlap into new runs, cut at about a
//! memtable's bytes; the merge's span meets no run it leaves in place or moves, so the level
//! stays disjoint. A moved run **sinks**: it goes past every level below that holds no run
//! it overlaps, down to the level above the first one that does (or the last), whatever
//! those levels' targets. Moved one level at a time, a load in key order left every level
//! at its target, and the first random writes after it merged down through all of them
//! (12.1-12.3 bytes written per byte put over 1M random inserts after a 3M-record load, the
//! store's runs only; 4.4 with the sinking; RocksDB 4.2 in the same runs, 3.0 of it its
//! tables and 1.0 its log, and after that load it held every file in one level;
//! `docs/results/store-scale.md`). Keys written in order (a load in key order, time-ordered
//! keys) therefore go down without being rewritten; random keys overlap every run, and a
//! level is merged whole into the next, so a write is rewritten about `(ratio + 1) / 2`
//! times per level (RocksDB, merging one file at a time into the ~`ratio` files under it,
//! rewrites about `ratio`); the write cost is bounded by the number of levels (logarithmic
//! in the data), not by the table's size as the `hybrid` engine's merges are. Flushes run on their own thread beside compactions; when level 0 reaches three times `l0`
//! the flush waits for a compaction, and writers wait once the next memtable is full too.
//!
//! **Tiered levels** (`runs=K`, K > 1; Cassandra's size-tiered, Dostoevsky's tiering): each
//! level below 0 collects K runs, then a compaction merges those K alone into one new run, the
//! newest of the next level, without rewriting the runs already there; levels are K times
//! apart (`ratio` does not apply), a write is rewritten about once per level instead of
//! `ratio / 2` times, and a get may ask up to K runs a level (their filters skip most). A
//! merge drops tombstones only when no run lies below its inputs.
//!
//! Where we differ from the references: Bourbon (OSDI 2020) learns a model per sorted table in
//! WiscKey, and DobLIX (PVLDB 2025) per RocksDB block index; here every run is a learned table
//! from the start (its model is the separator model the store's tables already use, rebuilt at
//! open from the separators). A leveled compaction empties a whole level rather than one file
//! as LevelDB's and RocksDB's do: less rewriting of random keys (above), longer single
//! compactions.
//!
//! **The value log** (`vmin=N`, off by default; WiscKey, FAST 2016): values of at least `N`
//! bytes are written, at flush, to value log segments, and a run keeps a 13-byte reference
//! in their place, so compactions rewrite references, not values; segments whose live bytes
//! fall under two thirds are collected by the compactions (the design, and where it departs
//! from WiscKey, are in `values.rs`).
//!
//! **Memory**: the memtables (active and frozen) take what the runs' models and filters
//! leave of the budget, halved, and at least [`MIN_MEMTABLE`]. The models grow with the data
//! (one separator a block); the filters (1.25 bytes a key at 10 bits: 3.75 MB for 3M keys)
//! are held only while they fit, with the models, in half the budget: at each new version
//! (flush, compaction, open) the runs are walked in the order a get asks them (level 0
//! newest first, then each level down; a partitioned level's runs in key order, so where a
//! level is cut its lower key ranges keep their filters) and each keeps its filter while it
//! fits, so the deepest runs', which most keys' gets never need, are let go first (RocksDB's `optimize_filters_for_hits` drops the last level's for that reason;
//! here the budget decides how far up it goes). A run whose filter is let go keeps it on
//! disk and answers a get of a key it lacks with one block read; its filter is not read
//! back until a merge rewrites the run (or the store is opened again). A compaction holds
//! its output's filter and separators beside its inputs' until it is published, and an open
//! reads every run's filter before it lets some go. `kv stats` shows each part and the runs
//! whose filter is on disk only. **Crash safety** is the hybrid's: a run is written and synced under a
//! new name, the manifest commit names it (with every other live run, its level in its name)
//! and the log sequence number the runs hold up to, and only then are the inputs and the
//! covered log segments removed; an interrupted flush or compaction leaves a file the manifest
//! does not name, removed at the next open.

mod engine;
mod levels;
mod state;
mod values;

pub(crate) use levels::{check_disjoint, parse_run_name, plan_levels};
pub(crate) use state::LsmEngine;
pub(crate) use values::{decode_ref, is_ref, parse_segment_name, plan_values, Collected};

/// The smallest memtable the engine flushes (4 KiB): a budget that leaves less than two of
/// them beside the runs' models and filters still flushes at this size (and `kv stats` shows
/// the memory over the budget).
pub(crate) const MIN_MEMTABLE: usize = 4 << 10;
/// The smallest memory budget an `lsm` store opens with: two memtables.
pub(crate) const MIN_LSM_BUDGET: usize = 2 * MIN_MEMTABLE;
