//! The write-ahead log: makes the hybrid index's in-memory dynamic stage durable.
//!
//! Paper 002 §9.1 leaves the dynamic stage volatile ("it must rely on the WAL of the underlying
//! database ... alternatively, the index can have its own WAL"). We give it its own: every
//! insert, update or delete is appended here, and acknowledged, before it enters the dynamic
//! stage; reopening replays the log into a fresh dynamic stage. Once a merge has written the
//! frozen dynamic stage into static files (and the manifest names them, see
//! [`crate::kv::manifest`]), the segments holding those records are removed with
//! [`Wal::remove_up_to`].
//!
//! # Files
//!
//! A log is a directory of segments `wal-<first seq, 20 digits>.log`, each a 48-byte header then
//! records back to back. Every record carries its own sequence number ([`Seq`], from 1, one per
//! record, consecutive across segments), its length and a crc32c. [`Wal::rotate`] closes the
//! active segment (fsynced, except as below) and starts a new one; a new segment is written as a `.tmp` file,
//! fsynced, renamed and the directory fsynced, so a crash never leaves a half-made header.
//!
//! Segment header:
//!
//! | offset | size | field                                              |
//! |--------|------|----------------------------------------------------|
//! | 0      | 8    | magic `lidxWAL1`                                   |
//! | 8      | 4    | format version (3 with a flag set, else 2)         |
//! | 12     | 4    | flags: 1 = sealed unsynced (see below); version 2: 0 |
//! | 16     | 8    | sequence number of the segment's first record      |
//! | 24     | 16   | owner: id of the store whose log it is (0: none)   |
//! | 40     | 4    | crc32c of bytes 0..40                              |
//! | 44     | 4    | reserved, 0                                        |
//!
//! Version 2 added the owner (issue 30): a replay for a store refuses a segment of another
//! store's log ([`crate::Error::ForeignFile`]) before handing any of its records on. A
//! version-1 segment is refused as [`crate::Error::UnsupportedVersion`]. Version 3 gave the
//! reserved word at 12 its flags ([`SEALED_UNSYNCED`]); a segment without flags is still
//! written as version 2, which older builds read.
//!
//! Record (`len` = size of the body):
//!
//! | offset | size  | field                                                   |
//! |--------|-------|---------------------------------------------------------|
//! | 0      | 4     | crc32c of bytes 4..16+len (length, seq and body)        |
//! | 4      | 4     | `len`                                                   |
//! | 8      | 8     | sequence number                                         |
//! | 16     | 1     | kind: 1 = put, 2 = delete                               |
//! | 17     | 4     | key length `k`                                          |
//! | 21     | k     | key bytes ([`crate::Key::write_to`] form)               |
//! | 21 + k | rest  | put: the value (`len - 5 - k` bytes); delete: nothing   |
//!
//! # Plain buffered files, no `O_DIRECT`
//!
//! The on-disk indexes use `O_DIRECT` so that the OS page cache cannot hide their block reads.
//! The log is the opposite case: it is only ever appended sequentially and read back once, at
//! recovery, so there is no read to measure and no cache to bypass. `O_DIRECT` would force
//! block-aligned, block-padded writes (a 30-byte record would cost a 4 KiB write, and the tail
//! block would be rewritten by every group). A plain [`File`] takes writes of any length, and
//! `fdatasync` makes them durable; that is all a log needs.
//!
//! # Group commit
//!
//! [`Wal::append`] may be called from many threads. Leader/follower, with a `parking_lot`
//! mutex and condition variable: an appender encodes its records into the shared pending buffer
//! under the mutex (that is where sequence numbers are assigned, so file order is sequence
//! order), then, if no thread is writing, becomes the leader: it takes the whole pending buffer,
//! releases the mutex, issues ONE `write` and (under [`FsyncPolicy::Always`]) ONE `fdatasync`,
//! and wakes everyone. Threads that arrived meanwhile (followers) wait on the condition variable;
//! their records accumulate in the pending buffer, and when the leader finishes, one of them
//! becomes the next leader and writes the whole accumulated group. So the number of fsyncs
//! adapts to the load: one per append when alone, one per group under contention. No thread
//! sleeps waiting for more work; a group is simply whatever arrived during the previous fsync.
//! [`Wal::stats`] counts groups and fsyncs.
//!
//! # Fsync policies and what a crash loses
//!
//! Under every policy an append returns only after its records were handed to the OS with
//! `write`, so a crash of the *process* (a panic, `SIGKILL`) loses nothing acknowledged. The
//! policies differ on a crash of the *machine* (power loss, kernel panic):
//!
//! - [`FsyncPolicy::Always`]: acknowledged after `fdatasync`: loses nothing acknowledged.
//! - [`FsyncPolicy::EveryMs`]`(n)`: a background thread calls `fdatasync` every `n` ms:
//!   loses at most the appends acknowledged in the last `n` ms (plus the duration of a sync).
//! - [`FsyncPolicy::Never`]: the OS writes back when it likes (Linux: about 30 s by default):
//!   loses whatever was not written back yet.
//!
//! [`Wal::sync`] forces an fsync under any policy; dropping a [`Wal`] makes one last sync.
//!
//! **Sealing unsynced.** Every policy fsyncs a segment when [`Wal::rotate`] seals it, except
//! `Never` with [`WalOptions::seal_unsynced`], for an owner that holds a sealed segment's
//! records in fsynced files of its own before it removes the segment (a store's memtable
//! flush, which rotates the log when it freezes a memtable). Such a segment is usually removed
//! before the kernel writes it back, so its bytes never reach the disk (the `lsm` engine's
//! write amplification under `Never` counts no log; RocksDB at `sync=false` does the same). A
//! power loss can then leave a sealed segment with a torn end and a later segment written
//! back; the header's flag ([`SEALED_UNSYNCED`]) lets replay read that end as it reads the
//! last segment's (below): cut, with every later segment set aside (`*.dropped`), the log
//! left at the longest prefix the power loss kept, which is all that `Never` promises. The
//! power loss may as well leave such a segment short at a record boundary (often its header
//! alone, fsynced when it was made): the next segment then starts after a gap, and replay
//! ends the log at the gap the same way (refused under absolute consistency, and where the
//! owner's files hold records past it). [`Wal::sync`] and closing fsync the sealed segments
//! that are still there. An open whose options differ from what the last segment's header
//! says appends to a new segment (the last one fsynced first, or made again if it holds no
//! record), so a flagged segment only ever holds records appended under `Never`.
//! After a failed `write` or `fsync` the log refuses every later append with the same error:
//! after a failed fsync the kernel may have dropped the dirty pages, so what is on disk is
//! unknown and continuing would acknowledge writes that may be lost.
//!
//! # Recovery
//!
//! [`replay`] reads the segments in order and hands every record to a callback. A crash in the
//! middle of a write leaves a *torn tail*: the last record (or the last few, of the last group)
//! partly written. Whatever is torn was never acknowledged under `Always`, since the fsync that
//! would acknowledge it had not returned; by default replay cuts it and reports it
//! ([`Dropped`]). A *complete* last record that fails its checksum may have been acknowledged,
//! so by default it is [`Error::Corrupt`]; the user's [`WalRecovery`] mode decides what may be
//! cut instead (see its table). A damaged record *followed by a valid one* cannot
//! come from a torn write; it is [`Error::Corrupt`] unless the mode is point-in-time, never
//! silently skipped, as is a damaged record at the end of any segment but the last (segments
//! are fsynced before the next one starts), unless the segment says it was sealed unsynced
//! (above). A gap in the sequence numbers, or a record whose
//! checksum is right but whose body is malformed, is always an error. One limit: on a power loss (not a process crash), a disk that persists the
//! pages of one unacknowledged group out of order can leave a valid record after a damaged one
//! within that group; replay reports it as corrupt rather than guess.
//!
//! Recovery reads one segment into memory at a time; segments are as large as the caller lets
//! them grow between rotations (for the hybrid index, one dynamic stage). A segment whose
//! records the owner's other files all hold (the next segment starts at or before the
//! owner's `covered + 1`) is not read at all, and gaps between such segments are not
//! damage: a `log` store's collector removes segments its checkpoint covers, oldest or not
//! ([`Wal::remove_segment`]).
//!
//! One file per part, each depending only on those before it: `record` (the record and
//! segment-header codec; the records' [`Seq`] is defined below `kv`, in `disk::seq`, because
//! the byte-key B+-tree stamps its retired pages with it), `recovery` (the recovery modes and what a replay
//! dropped), `replay` (reading segments back, torn tails, recovery, and
//! the segment files' names), `writer` (the appending [`Wal`], group commit, rotation).
//!
//! [`File`]: std::fs::File
//! [`Error::Corrupt`]: crate::Error::Corrupt

mod record;
mod recovery;
mod replay;
#[cfg(test)]
mod tests;
mod writer;

pub use crate::disk::seq::Seq;
pub use record::{
    decode_record, encode_record, encode_segment_header, Record, FRAME_BYTES, MAX_BODY_BYTES,
    SEALED_UNSYNCED, SEGMENT_HEADER_BYTES,
};
pub use recovery::{DamageKind, Dropped, WalRecovery};
pub(crate) use replay::replay_covered;
pub(crate) use replay::{check_owner, check_segment_header, list_segments, segment_seq};
pub use replay::{replay, scan_segment, segment_path, ReplayReport};
pub use writer::{FsyncPolicy, Wal, WalOptions, WalStats};
