//! The PGM on disk (paper 003 §2.1, §3, §4.2, Table 2): LSM-style levels of static PGM files,
//! merged as the in-memory dynamic PGM ([`crate::mem::dynamic_pgm`]) merges its levels.
//!
//! Paper 003 §2.1 / Figure 1(b): PGM takes arbitrary inserts by keeping several static PGM
//! indexes of growing sizes and merging the small ones into a larger one, as an LSM-tree does;
//! §4.2 ports it to disk with each static index a file of its own (O10: a lookup visits them
//! one after another). Table 2 bounds a lookup by `log(N/B)` blocks and gives inserts only an
//! amortized cost: a merge can rewrite everything.
//!
//! **What is in memory and what is on disk.**
//!
//! * In memory: level 0, a sorted array of at most `base` records (256 by default) that every
//!   write goes to, and every disk level's PGM model (its segments, all levels of the PGM:
//!   [`crate::disk::static_learned`] keeps the model in memory). The manifest's header too.
//! * On disk: the manifest file `<name>` ([`manifest`]: the level list and a copy of level 0
//!   as of the last flush) and one static learned file per non-empty disk level,
//!   `<name>.L<i>.<generation>`, holding level `i`'s sorted records (at most `base * 2^i`) in
//!   data blocks, with its PGM's bytes after them. These files are
//!   [`crate::disk::StaticLearned`] files with a [`crate::mem::Pgm`], reused
//!   as they are: each record's payload is one flag byte (live or tombstone) and the payload.
//!
//! So a lookup reads no inner block: it searches level 0 in memory, then each disk level
//! newest first, where the PGM in memory gives a window of `2 eps + 2` records and the data
//! blocks holding it are read in one request (Leaf blocks), until a level holds the key. With
//! the models in memory this is paper 003 §6.2's setting ("for PGM ... the original
//! implementation for the inner nodes, leaf nodes on disk"); §6.1's PGM with its inner levels
//! on disk is not built (its models are a few KB a level: paper 003 O14 finds keeping them in
//! memory does not change PGM's write performance).
//!
//! **Writes.** An insert or delete first looks the key up (to return whether it replaced a
//! present key, as [`DiskMap`](crate::disk::DiskMap) asks), then puts a record in level 0: the payload, or a
//! tombstone for a delete. When level 0 is full, it is merged with the disk levels `1..=j`
//! into level `j`, the first whose capacity holds them all (the dynamic PGM's rule): the
//! smaller levels are read into memory, the level `j` file is streamed, the newest record of
//! each key wins, and tombstones are dropped when no level older than `j` exists. The new
//! file gets a fresh generation; the old files are removed after the manifest names the new
//! one. A bulk load puts all keys in the smallest level that holds them.
//!
//! What we do differently from the in-memory dynamic PGM, and why: it updates a key where it
//! is (a level holds each key at most once); level files on disk are immutable, so here a
//! newer record in a smaller level shadows older ones (the LSM rule), and a tombstone stays
//! until a merge into the deepest level drops it.
//!
//! **What survives a crash.** Paper 003's structures have no log, and neither has this one:
//! writes since the last [`DiskMap::flush`](crate::disk::DiskMap::flush) (or the last merge, which flushes) live in level 0
//! in memory and are lost by a crash. A flush writes level 0 into the manifest region the
//! header on disk does not name, syncs, then writes the header (one block) and syncs: a crash
//! before the header write leaves the previous flush's index, one after it the new one; a torn
//! header is a checksum error, never a silently older index. A merge writes and syncs the new
//! level file completely before the manifest names it, and removes the replaced files only
//! after: a crash mid-merge leaves the manifest of the last flush naming the old, intact
//! files, plus an unnamed new file (overwritten by the next merge of that generation); a crash
//! between the manifest write and the removals leaves the old files unnamed on disk (they
//! leak until removed by hand). No acknowledged flush is lost silently.
//!
//! Bad files: the manifest's magic, version, key type, parameters, level table and level-0
//! records are checked ([`manifest`]); each level file is checked by the static learned
//! index's own header, model and block checks, and against the manifest (flagged payload
//! size, PGM errors, record count: [`crate::Error::IndexMismatch`] otherwise). Every block
//! carries the device's checksum, so a flipped byte is a typed error naming file and block.

mod index;
mod level;
pub(crate) mod manifest;
mod params;

pub use index::DiskPgm;
pub use params::DiskPgmParams;
