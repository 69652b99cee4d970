//! The hybrid index of paper 002 §9 (guideline G6): an in-memory dynamic stage in front of a
//! disk-resident static learned stage, made durable with a write-ahead log and a manifest.
//!
//! # What the paper does
//!
//! Paper 002 §9.1 applies the hybrid-index framework (Zhang et al., SIGMOD 2016) to disk: every
//! write goes to a write-optimized dynamic stage (a B+-tree) in memory; when it reaches its
//! trigger, it is merged into the static stage, a static learned index whose leaves are on
//! disk, by a merge-sort pass over the leaves, then new models are trained on the merged
//! leaves. The trigger is constant or ratio-based (R = 178 by default, §9.1, so that dynamic
//! stage plus models stay within the B+-tree's inner nodes). The merge is non-blocking: the
//! dynamic stage is frozen, a fresh one takes writes, background threads rebuild the static
//! stage (key range split among them), and a version swap publishes the result; a lookup
//! checks the new dynamic stage, the frozen one, then the static stage.
//!
//! # What we do, and how it differs
//!
//! * **Stages** ([`crate::disk::hybrid`]: its `dynamic` and `static_set` modules): the dynamic map is pluggable ([`DynamicMap`]:
//!   lidx's B+-tree by default, `std`'s `BTreeMap` as [`StdMap`], or [`SortedRuns`], two
//!   sorted arrays at 12 bytes per `u64` entry against the B+-tree's ~48, which under a memory
//!   budget holds four times the entries per merge); it holds `Option<payload>`,
//!   `None` being a tombstone, since deletes must hide static records until the merge drops
//!   both. The static stage is a list of static learned files ([`StaticModel`] picks the
//!   model: PGM, PGM with zero intervals (G3), compressed PGM (G4), the rough LeCo zone map
//!   (G5), or the smaller of the last two), one file per merge thread, routed by first key.
//! * **Versions**: readers take an `Arc` of the current version (dynamic, frozen, static); a
//!   freeze or a merge publishes a new one by swapping that `Arc` under a short write lock (the
//!   paper's CAS on a version number). A reader holding an old version keeps reading the old
//!   files; a replaced file is removed when its last holder lets it go.
//! * **Durability** (not in the paper, which leaves the dynamic stage volatile): every write is
//!   appended to the [`crate::kv::Wal`] (group commit, fsync policy in
//!   [`HybridOptions::wal`]) before it enters the dynamic stage, and acknowledged when the log
//!   says so. A merge:
//!   1. freezes the dynamic stage and rotates the log at that point (writers are held off for
//!      the rotation only, so the frozen stage holds exactly the records before the new
//!      segment);
//!   2. reads the static files sequentially (one batch ahead) and merges the frozen entries
//!      in ([`crate::disk::hybrid::merge_into`]: updates replace, tombstones drop), streaming the records
//!      into up to `merge_threads` new files whose blocks are written as they fill;
//!   3. fits the new files' models in parallel and fsyncs them ([`crate::disk::hybrid::write_parts`]);
//!   4. commits a manifest naming them with `static_seq` = the last frozen record (the commit
//!      point: a crash before it reopens the old files and replays the frozen records from the
//!      log, after it the new files);
//!   5. swaps the version and retires the old files;
//!   6. removes the log segments up to `static_seq`.
//!
//!   Recovery (`recovery`) opens the manifest's files, removes unnamed leftovers and replays
//!   the log after `static_seq`. A crash at any point loses no acknowledged write and never
//!   shows a half-merged state (`tests/kv_hybrid_crash.rs` kills a child process at random
//!   points, merges included).
//! * **Trigger and memory**: [`MergeTrigger`] (ratio, default 178, with a floor of
//!   [`MIN_RATIO_ENTRIES`] entries, or constant), and optionally one
//!   [`HybridOptions::memory_budget`] for dynamic stage plus models that merges earlier when
//!   it is tighter.
//! * **Write stalls**: writers never wait for a merge, except when the new dynamic stage is
//!   full too while the previous merge still runs: the paper has no answer (its dynamic stage
//!   would grow without bound); we make the writer wait for the merge, then freeze, and count
//!   it in [`HybridStats::write_stalls`]. One merge runs at a time.
//! * **Concurrency**: `Send + Sync`, `&self` everywhere. Writers of one key are serialized
//!   (a key stripe held from log append to stage insert) so the stage applies a key's writes
//!   in log order; writers of different keys share log groups.

mod index;
pub(crate) mod options;
pub(crate) mod recovery;

pub use crate::disk::hybrid::{DynamicMap, MergeTrigger, SortedRuns, StaticModel, StdMap};
pub use index::HybridIndex;
pub use options::{HybridOptions, HybridStats};
pub use recovery::decode_meta;
