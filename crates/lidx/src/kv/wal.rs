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
//! A log is a directory of segments `wal-<first seq, 20 digits>.log`, each a 32-byte header then
//! records back to back. Every record carries its own sequence number ([`Seq`], from 1, one per
//! record, consecutive across segments), its length and a crc32c. [`Wal::rotate`] closes the
//! active segment (fsynced) and starts a new one; a new segment is written as a `.tmp` file,
//! fsynced, renamed and the directory fsynced, so a crash never leaves a half-made header.
//!
//! Segment header:
//!
//! | offset | size | field                                              |
//! |--------|------|----------------------------------------------------|
//! | 0      | 8    | magic `lidxWAL1`                                   |
//! | 8      | 4    | format version (1)                                 |
//! | 12     | 4    | reserved, 0                                        |
//! | 16     | 8    | sequence number of the segment's first record      |
//! | 24     | 4    | crc32c of bytes 0..24                              |
//! | 28     | 4    | reserved, 0                                        |
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
//! After a failed `write` or `fsync` the log refuses every later append with the same error:
//! after a failed fsync the kernel may have dropped the dirty pages, so what is on disk is
//! unknown and continuing would acknowledge writes that may be lost.
//!
//! # Recovery
//!
//! [`replay`] reads the segments in order and hands every record to a callback. A crash in the
//! middle of a write leaves a *torn tail*: the last record (or the last few, of the last group)
//! partly written. Replay stops there, truncates the segment to its last complete record and
//! reports it ([`TornTail`]). Whatever is torn was never acknowledged under `Always`, since the
//! fsync that would acknowledge it had not returned. A damaged record *followed by a valid one*
//! cannot come from a torn write; it is [`Error::Corrupt`], never silently skipped, as is a
//! damaged record at the end of any segment but the last (segments are fsynced before the next
//! one starts), a gap in the sequence numbers, or a record whose checksum is right but whose body
//! is malformed. One limit: on a power loss (not a process crash), a disk that persists the
//! pages of one unacknowledged group out of order can leave a valid record after a damaged one
//! within that group; replay reports it as corrupt rather than guess.
//!
//! Recovery reads one segment into memory at a time; segments are as large as the caller lets
//! them grow between rotations (for the hybrid index, one dynamic stage).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::key::Key;
use crate::kv::stamp::{corrupt, decode_stamp, encode_stamp, le_u32, le_u64, STAMP_BYTES};

/// A record's sequence number: 1 for the first record ever appended to a log, then one more
/// per record. 0 means "no record".
pub type Seq = u64;

/// Magic number at the start of every segment: `lidxWAL1`.
pub const SEGMENT_MAGIC: u64 = u64::from_le_bytes(*b"lidxWAL1");
/// Format version of segments and records.
pub const VERSION: u32 = 1;
/// Size of a segment header.
pub const SEGMENT_HEADER_BYTES: usize = STAMP_BYTES;
/// Size of a record's frame (crc, length, sequence number) before its body.
pub const FRAME_BYTES: usize = 16;
/// Largest record body accepted, on append and on read (1 GiB).
pub const MAX_BODY_BYTES: usize = 1 << 30;

const KIND_PUT: u8 = 1;
const KIND_DELETE: u8 = 2;
/// Bytes of a body before the key: kind and key length.
const BODY_PREFIX: usize = 5;

/// One logged operation. Keys are the [`Key::write_to`] bytes of a key (see
/// [`Record::key_as`]); values are any bytes, fixed or variable length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// Insert or update `key` with `value`.
    Put {
        /// The key's on-disk bytes.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Delete `key` (a tombstone in the dynamic stage).
    Delete {
        /// The key's on-disk bytes.
        key: &'a [u8],
    },
}

impl<'a> Record<'a> {
    /// The key bytes.
    pub fn key(&self) -> &'a [u8] {
        match *self {
            Record::Put { key, .. } | Record::Delete { key } => key,
        }
    }

    /// The key decoded as a `K`; [`Error::KeyTypeMismatch`] when its length is not `K::SIZE`.
    pub fn key_as<K: Key>(&self) -> Result<K> {
        let key = self.key();
        if key.len() != K::SIZE {
            return Err(Error::KeyTypeMismatch {
                file: "write-ahead log record".to_string(),
                expected: K::NAME,
                got: format!("a {}-byte key", key.len()),
            });
        }
        Ok(K::read_from(key))
    }

    /// Bytes this record takes in the log, frame included.
    pub fn encoded_len(&self) -> usize {
        FRAME_BYTES + self.body_len()
    }

    fn body_len(&self) -> usize {
        BODY_PREFIX
            + match *self {
                Record::Put { key, value } => key.len() + value.len(),
                Record::Delete { key } => key.len(),
            }
    }
}

/// When appended records are forced to disk; see the module docs for what each loses on a
/// crash. Durability costs throughput: `Always` pays one fsync per group of appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Acknowledge an append after `fdatasync`: nothing acknowledged is ever lost.
    #[default]
    Always,
    /// Acknowledge after `write`; a background thread fsyncs every `n` milliseconds (`n >= 1`).
    EveryMs(u64),
    /// Acknowledge after `write`; never fsync except on [`Wal::sync`] and on drop.
    Never,
}

/// Options of [`Wal::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalOptions {
    /// When appends are made durable (default [`FsyncPolicy::Always`]).
    pub fsync: FsyncPolicy,
}

/// A torn tail found and removed by [`replay`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// The segment it was in (always the last one).
    pub file: PathBuf,
    /// Offset of the first incomplete record: the segment's new length.
    pub offset: u64,
    /// Bytes cut off.
    pub bytes: u64,
}

/// What [`replay`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayReport {
    /// Segments read.
    pub segments: usize,
    /// Records handed to the callback.
    pub records: u64,
    /// Sequence number of the first record replayed (0 when none).
    pub first_seq: Seq,
    /// Sequence number the next appended record gets.
    pub next_seq: Seq,
    /// The torn tail cut off the last segment, if any.
    pub torn_tail: Option<TornTail>,
}

/// Counters of a [`Wal`] since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Calls to [`Wal::append`] that succeeded.
    pub appends: u64,
    /// Records appended.
    pub records: u64,
    /// Group writes: one `write` call each.
    pub groups: u64,
    /// `fdatasync` calls (group commits, background syncs, [`Wal::sync`], rotations).
    pub syncs: u64,
    /// Record bytes written.
    pub bytes: u64,
}

#[derive(Default)]
struct Counters {
    appends: AtomicU64,
    records: AtomicU64,
    groups: AtomicU64,
    syncs: AtomicU64,
    bytes: AtomicU64,
}

/// The path of the segment whose first record is `first`.
pub fn segment_path(dir: &Path, first: Seq) -> PathBuf {
    dir.join(format!("wal-{first:020}.log"))
}

fn segment_seq(name: &str) -> Option<Seq> {
    let digits = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn name_of(path: &Path) -> String {
    path.display().to_string()
}

/// Appends record `seq` to `out`.
#[doc(hidden)]
pub fn encode_record(seq: Seq, record: &Record<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    let body = record.body_len() as u32;
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&body.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    let (kind, key, value): (u8, &[u8], &[u8]) = match *record {
        Record::Put { key, value } => (KIND_PUT, key, value),
        Record::Delete { key } => (KIND_DELETE, key, &[]),
    };
    out.push(kind);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
}

/// A frame whose length and checksum are right: (sequence number, body, total bytes).
/// `Truncated` when `bytes` ends inside the frame, `Corrupt` when the checksum fails. `offset`
/// only names the place in errors.
fn decode_frame<'a>(file: &str, offset: u64, bytes: &'a [u8]) -> Result<(Seq, &'a [u8], usize)> {
    if bytes.len() < FRAME_BYTES {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!(
                "record at offset {offset} has {} of its {FRAME_BYTES} frame bytes",
                bytes.len()
            ),
        });
    }
    let len = le_u32(bytes, 4) as usize;
    if len > MAX_BODY_BYTES {
        return Err(corrupt(
            file,
            format!(
                "record at offset {offset} claims {len} body bytes, more than {MAX_BODY_BYTES}"
            ),
        ));
    }
    if bytes.len() - FRAME_BYTES < len {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!(
                "record at offset {offset} has {} of its {len} body bytes",
                bytes.len() - FRAME_BYTES
            ),
        });
    }
    let end = FRAME_BYTES + len;
    let stored = le_u32(bytes, 0);
    let got = crc32c::crc32c(&bytes[4..end]);
    if stored != got {
        return Err(corrupt(
            file,
            format!("record at offset {offset}: checksum {got:#010x}, written as {stored:#010x}"),
        ));
    }
    Ok((le_u64(bytes, 8), &bytes[FRAME_BYTES..end], end))
}

fn decode_body<'a>(file: &str, offset: u64, body: &'a [u8]) -> Result<Record<'a>> {
    if body.len() < BODY_PREFIX {
        return Err(corrupt(
            file,
            format!("record at offset {offset} has a {}-byte body", body.len()),
        ));
    }
    let key_len = le_u32(body, 1) as usize;
    if key_len > body.len() - BODY_PREFIX {
        return Err(corrupt(
            file,
            format!("record at offset {offset}: key length {key_len} exceeds its body"),
        ));
    }
    let key = &body[BODY_PREFIX..BODY_PREFIX + key_len];
    let rest = &body[BODY_PREFIX + key_len..];
    match body[0] {
        KIND_PUT => Ok(Record::Put { key, value: rest }),
        KIND_DELETE if rest.is_empty() => Ok(Record::Delete { key }),
        KIND_DELETE => Err(corrupt(
            file,
            format!(
                "delete record at offset {offset} has {} trailing bytes",
                rest.len()
            ),
        )),
        kind => Err(corrupt(
            file,
            format!("record at offset {offset} has unknown kind {kind}"),
        )),
    }
}

/// Decodes the record at the start of `bytes` (read at `offset` of `file`): its sequence
/// number, the record and the bytes it takes. `Truncated` when `bytes` ends inside it,
/// `Corrupt` for a bad checksum or body. Never panics.
#[doc(hidden)]
pub fn decode_record<'a>(
    file: &str,
    offset: u64,
    bytes: &'a [u8],
) -> Result<(Seq, Record<'a>, usize)> {
    let (seq, body, n) = decode_frame(file, offset, bytes)?;
    Ok((seq, decode_body(file, offset, body)?, n))
}

/// Writes a segment header for a segment whose first record is `first`.
#[doc(hidden)]
pub fn encode_segment_header(first: Seq) -> [u8; SEGMENT_HEADER_BYTES] {
    encode_stamp(SEGMENT_MAGIC, VERSION, first)
}

/// Reads a segment header: the sequence number of the segment's first record.
#[doc(hidden)]
pub fn decode_segment_header(file: &str, bytes: &[u8]) -> Result<Seq> {
    let first = decode_stamp(file, bytes, SEGMENT_MAGIC, VERSION, "segment header")?;
    if first == 0 {
        return Err(corrupt(file, "segment starts at sequence number 0".into()));
    }
    Ok(first)
}

/// What [`scan_segment`] found in one segment.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentScan {
    /// Sequence number of the segment's first record (from its header).
    pub first_seq: Seq,
    /// Sequence number after its last valid record.
    pub next_seq: Seq,
    /// Bytes up to the end of its last valid record.
    pub valid_len: usize,
}

/// True when a record frame with a right checksum and a sequence number `>= next` starts
/// somewhere in `bytes[from..]`. The sequence-number range test comes before the checksum, so
/// garbage is rejected cheaply.
fn valid_record_after(bytes: &[u8], from: usize, next: Seq) -> bool {
    let mut at = from;
    while at + FRAME_BYTES <= bytes.len() {
        let seq = le_u64(bytes, at + 8);
        let max_records = (bytes.len() / FRAME_BYTES) as u64;
        if seq >= next
            && seq - next <= max_records
            && decode_frame("", 0, &bytes[at..]).is_ok_and(|(s, _, _)| s == seq)
        {
            return true;
        }
        at += 1;
    }
    false
}

/// Walks the records of one segment (`bytes`, the whole file) and hands each to `on_record`.
/// A damaged record with nothing valid after it is a torn tail: allowed only in the `last`
/// segment, reported through `valid_len < bytes.len()`. Everything else wrong is an error (see
/// the module docs). Never panics.
#[doc(hidden)]
pub fn scan_segment(
    file: &str,
    bytes: &[u8],
    last: bool,
    mut on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<SegmentScan> {
    let first = decode_segment_header(file, bytes)?;
    let mut pos = SEGMENT_HEADER_BYTES;
    let mut next = first;
    while pos < bytes.len() {
        match decode_frame(file, pos as u64, &bytes[pos..]) {
            Ok((seq, body, n)) => {
                if seq != next {
                    return Err(corrupt(
                        file,
                        format!(
                            "record at offset {pos} has sequence number {seq}, expected {next}"
                        ),
                    ));
                }
                on_record(seq, decode_body(file, pos as u64, body)?)?;
                next = next
                    .checked_add(1)
                    .ok_or_else(|| corrupt(file, "sequence numbers overflow u64".to_string()))?;
                pos += n;
            }
            Err(e) => {
                if valid_record_after(bytes, pos + 1, next) {
                    return Err(corrupt(
                        file,
                        format!(
                            "damaged record in the middle of the log, valid records follow: {e}"
                        ),
                    ));
                }
                if !last {
                    return Err(corrupt(
                        file,
                        format!("a segment that is not the last ends with a damaged record: {e}"),
                    ));
                }
                break;
            }
        }
    }
    Ok(SegmentScan {
        first_seq: first,
        next_seq: next,
        valid_len: pos,
    })
}

fn io_err(path: &Path, op: &str) -> impl FnOnce(std::io::Error) -> Error {
    let (file, op) = (name_of(path), op.to_string());
    move |e| Error::io(file, op, &e)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir, "fsync directory"))
}

/// Segments in `dir` as (first seq from the name, path), sorted; stray `.tmp` files of
/// interrupted segment creations are removed.
fn list_segments(dir: &Path) -> Result<Vec<(Seq, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err(dir, "list directory"))? {
        let entry = entry.map_err(io_err(dir, "list directory"))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("wal-") && name.ends_with(".log.tmp") {
            fs::remove_file(entry.path()).map_err(io_err(&entry.path(), "remove"))?;
        } else if let Some(seq) = segment_seq(name) {
            out.push((seq, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Replays the log in `dir`: hands every record, in sequence order, to `on_record`; truncates a
/// torn tail off the last segment and reports it. An error from `on_record` stops the replay
/// and is returned. On any error the callback may already have seen some records: discard what
/// it built. A directory without segments replays nothing (`next_seq` 1).
pub fn replay(
    dir: &Path,
    mut on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<ReplayReport> {
    let segments = list_segments(dir)?;
    let mut report = ReplayReport {
        segments: segments.len(),
        records: 0,
        first_seq: 0,
        next_seq: 1,
        torn_tail: None,
    };
    let mut bytes = Vec::new();
    for (i, (named, path)) in segments.iter().enumerate() {
        let file = name_of(path);
        bytes.clear();
        File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(io_err(path, "read segment"))?;
        let last = i + 1 == segments.len();
        let scan = scan_segment(&file, &bytes, last, |seq, r| {
            report.records += 1;
            on_record(seq, r)
        })?;
        if scan.first_seq != *named {
            return Err(corrupt(
                &file,
                format!("header says the first record is {}", scan.first_seq),
            ));
        }
        if i > 0 && scan.first_seq != report.next_seq {
            return Err(corrupt(
                &file,
                format!(
                    "segment starts at record {} but the one before ends before record {}: \
                     records are missing",
                    scan.first_seq, report.next_seq
                ),
            ));
        }
        if report.first_seq == 0 && scan.next_seq > scan.first_seq {
            report.first_seq = scan.first_seq;
        }
        report.next_seq = scan.next_seq;
        if scan.valid_len < bytes.len() {
            let f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io_err(path, "open segment to cut its torn tail"))?;
            f.set_len(scan.valid_len as u64)
                .and_then(|()| f.sync_all())
                .map_err(io_err(path, "cut torn tail"))?;
            report.torn_tail = Some(TornTail {
                file: path.clone(),
                offset: scan.valid_len as u64,
                bytes: (bytes.len() - scan.valid_len) as u64,
            });
        }
    }
    Ok(report)
}

/// Creates the segment starting at `first` (through a `.tmp` file, see the module docs) and
/// returns it open for appending.
fn create_segment(dir: &Path, first: Seq) -> Result<(File, PathBuf)> {
    let path = segment_path(dir, first);
    let tmp = path.with_extension("log.tmp");
    let made = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&encode_segment_header(first))?;
        f.sync_all()?;
        fs::rename(&tmp, &path)?;
        Ok(f)
    })();
    match made {
        Ok(f) => {
            sync_dir(dir)?;
            Ok((f, path))
        }
        Err(e) => {
            // The segment does not exist: remove whatever part of it was made.
            let _ = fs::remove_file(&tmp);
            Err(Error::io(name_of(&path), "create segment", &e))
        }
    }
}

struct State {
    /// Encoded records not yet handed to a leader.
    pending: Vec<u8>,
    /// An empty buffer kept to swap with `pending` (keeps its capacity).
    spare: Vec<u8>,
    /// Last sequence number assigned.
    assigned: Seq,
    /// Last sequence number written to the OS.
    written: Seq,
    /// Last sequence number fsynced.
    synced: Seq,
    /// A thread is writing (a group leader, a rotation).
    leader: bool,
    /// The first write or fsync error: every later append fails with it.
    error: Option<Error>,
    /// The active segment.
    file: Arc<File>,
    /// Its name, for errors.
    file_name: String,
    /// Live segments: first sequence number and path, oldest first; the last is active.
    segments: Vec<(Seq, PathBuf)>,
}

impl State {
    /// Takes the pending records for a group write, leaving the spare buffer in their place.
    fn take_pending(&mut self) -> Vec<u8> {
        let spare = std::mem::take(&mut self.spare);
        std::mem::replace(&mut self.pending, spare)
    }
}

struct Inner {
    dir: PathBuf,
    policy: FsyncPolicy,
    state: Mutex<State>,
    cond: Condvar,
    counters: Counters,
    stop: Mutex<bool>,
    stop_cond: Condvar,
}

/// An open write-ahead log; see the module docs. `Send + Sync`: share it with an `Arc`.
pub struct Wal {
    inner: Arc<Inner>,
    syncer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.inner.dir)
            .field("policy", &self.inner.policy)
            .finish()
    }
}

impl Wal {
    /// Opens the log in `dir` (created if missing), replaying every record into `on_record`
    /// first (see [`replay`]), and returns it ready for appends after the last record.
    pub fn open(
        dir: &Path,
        options: WalOptions,
        on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        if let FsyncPolicy::EveryMs(0) = options.fsync {
            return Err(Error::InvalidParameter {
                name: "fsync",
                value: "EveryMs(0)".into(),
                expected: "EveryMs(n) with n >= 1, Always or Never",
            });
        }
        fs::create_dir_all(dir).map_err(io_err(dir, "create directory"))?;
        let report = replay(dir, on_record)?;
        let mut segments = list_segments(dir)?;
        let file = match segments.last() {
            Some((_, path)) => OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(io_err(path, "open segment"))?,
            None => {
                let (f, path) = create_segment(dir, report.next_seq)?;
                segments.push((report.next_seq, path));
                f
            }
        };
        let last = report.next_seq - 1;
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            policy: options.fsync,
            state: Mutex::new(State {
                pending: Vec::new(),
                spare: Vec::new(),
                assigned: last,
                written: last,
                synced: last,
                leader: false,
                error: None,
                file: Arc::new(file),
                file_name: name_of(&segments[segments.len() - 1].1),
                segments,
            }),
            cond: Condvar::new(),
            counters: Counters::default(),
            stop: Mutex::new(false),
            stop_cond: Condvar::new(),
        });
        let syncer = match options.fsync {
            FsyncPolicy::EveryMs(ms) => {
                let inner = Arc::clone(&inner);
                Some(std::thread::spawn(move || inner.background_sync(ms)))
            }
            _ => None,
        };
        Ok((Wal { inner, syncer }, report))
    }

    /// Appends `records` (consecutive sequence numbers, in order) and returns the sequence
    /// number of the last one once the fsync policy says they are acknowledged. Safe to call
    /// from many threads at once (group commit, see the module docs).
    pub fn append(&self, records: &[Record<'_>]) -> Result<Seq> {
        if records.is_empty() {
            return Err(Error::InvalidParameter {
                name: "records",
                value: "[]".into(),
                expected: "at least one record",
            });
        }
        if let Some(r) = records.iter().find(|r| r.body_len() > MAX_BODY_BYTES) {
            return Err(Error::InvalidParameter {
                name: "records",
                value: format!("a record of {} bytes", r.encoded_len()),
                expected: "records of at most 1 GiB",
            });
        }
        let mut st = self.inner.state.lock();
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        for r in records {
            st.assigned += 1;
            let seq = st.assigned;
            encode_record(seq, r, &mut st.pending);
        }
        let mine = st.assigned;
        let need_sync = self.inner.policy == FsyncPolicy::Always;
        self.inner.commit(&mut st, mine, need_sync)?;
        self.inner.counters.appends.fetch_add(1, Ordering::Relaxed);
        self.inner
            .counters
            .records
            .fetch_add(records.len() as u64, Ordering::Relaxed);
        Ok(mine)
    }

    /// Writes and fsyncs everything appended so far, whatever the policy; returns the last
    /// sequence number now durable.
    pub fn sync(&self) -> Result<Seq> {
        let mut st = self.inner.state.lock();
        let target = st.assigned;
        self.inner.commit(&mut st, target, true)?;
        Ok(target)
    }

    /// Closes the active segment (fsynced) and starts a new one; returns the sequence number
    /// its first record will get. Every record before it is in older segments, which
    /// [`Wal::remove_up_to`] can drop once they are in static files. When the active segment
    /// holds no record yet, it stays active.
    pub fn rotate(&self) -> Result<Seq> {
        let inner = &self.inner;
        let mut st = inner.state.lock();
        loop {
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if !st.leader {
                break;
            }
            inner.cond.wait(&mut st);
        }
        let first = st.assigned + 1;
        if st.segments.last().is_some_and(|(s, _)| *s == first) {
            return Ok(first);
        }
        st.leader = true;
        let batch = st.take_pending();
        let file = Arc::clone(&st.file);
        let name = st.file_name.clone();
        let flushed =
            MutexGuard::unlocked(&mut st, || inner.write_group(&file, &name, &batch, true));
        if let Err(e) = flushed {
            st.leader = false;
            st.error = Some(e.clone());
            inner.cond.notify_all();
            return Err(e);
        }
        st.written = first - 1;
        st.synced = first - 1;
        st.spare = batch;
        st.spare.clear();
        let created = MutexGuard::unlocked(&mut st, || create_segment(&inner.dir, first));
        st.leader = false;
        inner.cond.notify_all();
        let (file, path) = created?;
        st.file = Arc::new(file);
        st.file_name = name_of(&path);
        st.segments.push((first, path));
        Ok(first)
    }

    /// Removes the segments whose records all have sequence numbers `<= seq` (call it once a
    /// merge made them durable in static files and the manifest says so). The active segment is
    /// never removed. Returns how many segments were removed.
    pub fn remove_up_to(&self, seq: Seq) -> Result<usize> {
        let doomed: Vec<PathBuf> = {
            let mut st = self.inner.state.lock();
            let n = st
                .segments
                .windows(2)
                .take_while(|w| w[1].0 - 1 <= seq)
                .count();
            st.segments.drain(..n).map(|(_, p)| p).collect()
        };
        for path in &doomed {
            fs::remove_file(path).map_err(io_err(path, "remove segment"))?;
        }
        if !doomed.is_empty() {
            sync_dir(&self.inner.dir)?;
        }
        Ok(doomed.len())
    }

    /// Sequence number of the last record appended (acknowledged or in flight); 0 when none.
    pub fn last_seq(&self) -> Seq {
        self.inner.state.lock().assigned
    }

    /// Sequence number of the last record known to be fsynced.
    pub fn synced_seq(&self) -> Seq {
        self.inner.state.lock().synced
    }

    /// Paths of the live segments, oldest first; the last is the active one.
    pub fn segments(&self) -> Vec<PathBuf> {
        let st = self.inner.state.lock();
        st.segments.iter().map(|(_, p)| p.clone()).collect()
    }

    /// The fsync policy the log was opened with.
    pub fn policy(&self) -> FsyncPolicy {
        self.inner.policy
    }

    /// Counters since the log was opened.
    pub fn stats(&self) -> WalStats {
        let c = &self.inner.counters;
        WalStats {
            appends: c.appends.load(Ordering::Relaxed),
            records: c.records.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    /// Returns once record `target` is written (and fsynced if `need_sync`), leading groups as
    /// needed (see the module docs).
    fn commit(&self, st: &mut MutexGuard<'_, State>, target: Seq, need_sync: bool) -> Result<()> {
        loop {
            let done = if need_sync { st.synced } else { st.written };
            if done >= target {
                return Ok(());
            }
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if st.leader {
                self.cond.wait(st);
                continue;
            }
            st.leader = true;
            let batch = st.take_pending();
            let upto = st.assigned;
            let file = Arc::clone(&st.file);
            let name = st.file_name.clone();
            let res =
                MutexGuard::unlocked(st, || self.write_group(&file, &name, &batch, need_sync));
            st.leader = false;
            match res {
                Ok(()) => {
                    st.written = upto;
                    if need_sync {
                        st.synced = upto;
                    }
                }
                Err(e) => st.error = Some(e),
            }
            st.spare = batch;
            st.spare.clear();
            self.cond.notify_all();
        }
    }

    /// One group: one `write` of `batch` (if not empty), then one fsync if `sync`.
    fn write_group(&self, file: &File, name: &str, batch: &[u8], sync: bool) -> Result<()> {
        if !batch.is_empty() {
            let mut f = file;
            f.write_all(batch)
                .map_err(|e| Error::io(name, "append to log", &e))?;
            self.counters.groups.fetch_add(1, Ordering::Relaxed);
            self.counters
                .bytes
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        if sync {
            self.sync_file(file, name)?;
        }
        Ok(())
    }

    fn sync_file(&self, file: &File, name: &str) -> Result<()> {
        #[cfg(test)]
        tests::sync_delay();
        file.sync_data()
            .map_err(|e| Error::io(name, "fsync log", &e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The `EveryMs` thread: every `ms` milliseconds, fsyncs what was written, without taking
    /// the leader role (appends go on during the fsync).
    fn background_sync(&self, ms: u64) {
        let mut stop = self.stop.lock();
        while !*stop {
            self.stop_cond
                .wait_for(&mut stop, Duration::from_millis(ms));
            if *stop {
                break;
            }
            let (target, file, name) = {
                let st = self.state.lock();
                if st.written <= st.synced || st.error.is_some() {
                    continue;
                }
                (st.written, Arc::clone(&st.file), st.file_name.clone())
            };
            let res = MutexGuard::unlocked(&mut stop, || self.sync_file(&file, &name));
            let mut st = self.state.lock();
            match res {
                Ok(()) => st.synced = st.synced.max(target),
                Err(e) => {
                    st.error.get_or_insert(e);
                    self.cond.notify_all();
                }
            }
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        *self.inner.stop.lock() = true;
        self.inner.stop_cond.notify_all();
        if let Some(h) = self.syncer.take() {
            let _ = h.join();
        }
        // A clean close makes everything durable under every policy; an error here was, or
        // will be, seen by an append or at the next replay.
        let _ = self.sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    static SYNC_DELAY_US: AtomicU64 = AtomicU64::new(0);

    /// Makes every fsync of the unit tests take at least the configured time, so that
    /// concurrent appenders overlap deterministically enough to form groups.
    pub(super) fn sync_delay() {
        let us = SYNC_DELAY_US.load(Ordering::Relaxed);
        if us > 0 {
            std::thread::sleep(Duration::from_micros(us));
        }
    }

    fn put(k: u64, v: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut key = vec![0u8; 8];
        k.write_to(&mut key);
        (key, v.to_vec())
    }

    /// A replayed record: sequence number, key, value (`None` for a delete).
    type Logged = (Seq, Vec<u8>, Option<Vec<u8>>);

    fn collect(dir: &Path) -> Result<(Vec<Logged>, ReplayReport)> {
        let mut out = Vec::new();
        let report = replay(dir, |seq, r| {
            let value = match r {
                Record::Put { value, .. } => Some(value.to_vec()),
                Record::Delete { .. } => None,
            };
            out.push((seq, r.key().to_vec(), value));
            Ok(())
        })?;
        Ok((out, report))
    }

    fn write_some(dir: &Path, n: u64) {
        let (wal, _) = Wal::open(dir, WalOptions::default(), |_, _| Ok(())).unwrap();
        for i in 0..n {
            let (k, v) = put(i, &vec![i as u8; (i % 5) as usize]);
            let rec = if i % 4 == 3 {
                Record::Delete { key: &k }
            } else {
                Record::Put { key: &k, value: &v }
            };
            assert_eq!(wal.append(&[rec]).unwrap(), i + 1);
        }
    }

    #[test]
    fn round_trip_reopen_and_key_decoding() {
        let dir = tempfile::tempdir().unwrap();
        write_some(dir.path(), 10);
        let (recs, report) = collect(dir.path()).unwrap();
        assert_eq!(report.records, 10);
        assert_eq!((report.first_seq, report.next_seq), (1, 11));
        assert_eq!(report.torn_tail, None);
        for (i, (seq, key, value)) in recs.iter().enumerate() {
            let i = i as u64;
            assert_eq!(*seq, i + 1);
            let r = Record::Delete { key };
            assert_eq!(r.key_as::<u64>().unwrap(), i);
            assert!(matches!(
                r.key_as::<[u8; 16]>(),
                Err(Error::KeyTypeMismatch { .. })
            ));
            let want = (i % 4 != 3).then(|| vec![i as u8; (i % 5) as usize]);
            assert_eq!(*value, want);
        }
        // Reopen continues the sequence in the same segment.
        let (wal, report) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        assert_eq!(report.next_seq, 11);
        assert_eq!(wal.append(&[Record::Delete { key: b"x" }]).unwrap(), 11);
        assert_eq!(wal.segments().len(), 1);
    }

    #[test]
    fn torn_tail_at_every_offset_stops_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        write_some(dir.path(), 4);
        let seg = segment_path(dir.path(), 1);
        let full = fs::read(&seg).unwrap();
        // The last record (seq 4) is a delete of an 8-byte key.
        let start = full.len() - Record::Delete { key: &[0; 8] }.encoded_len();
        assert_eq!(decode_record("t", 0, &full[start..]).unwrap().0, 4);
        for cut in start + 1..full.len() {
            fs::write(&seg, &full[..cut]).unwrap();
            let (got, report) = collect(dir.path()).unwrap();
            assert_eq!(got.len(), 3, "cut at {cut}");
            assert_eq!(report.next_seq, 4);
            let torn = report.torn_tail.expect("torn tail reported");
            assert_eq!(torn.offset, start as u64);
            assert_eq!(torn.bytes, (cut - start) as u64);
            assert_eq!(fs::metadata(&seg).unwrap().len(), start as u64, "truncated");
            // A second replay sees a clean log.
            assert_eq!(collect(dir.path()).unwrap().1.torn_tail, None);
        }
        // A garbled (not just short) last record is a torn tail too.
        let mut garbled = full.clone();
        let n = garbled.len();
        garbled[n - 3] ^= 0x40;
        fs::write(&seg, &garbled).unwrap();
        let (got, report) = collect(dir.path()).unwrap();
        assert_eq!(
            (got.len(), report.torn_tail.unwrap().offset),
            (3, start as u64)
        );
    }

    #[test]
    fn corrupt_middle_record_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_some(dir.path(), 6);
        let seg = segment_path(dir.path(), 1);
        let full = fs::read(&seg).unwrap();
        // Every byte of records 1..=4 (of 6): flipping it must give Corrupt, never fewer records.
        let mut off = SEGMENT_HEADER_BYTES;
        let mut bounds = Vec::new();
        while off < full.len() {
            let (_, _, n) = decode_record("t", 0, &full[off..]).unwrap();
            bounds.push((off, off + n));
            off += n;
        }
        for &(a, b) in &bounds[..4] {
            for at in a..b {
                let mut bad = full.clone();
                bad[at] ^= 0x01;
                fs::write(&seg, &bad).unwrap();
                let got = collect(dir.path());
                assert!(
                    matches!(got, Err(Error::Corrupt { .. })),
                    "flip at {at}: {got:?}"
                );
            }
        }
        // A bad segment header is typed.
        let mut bad = full.clone();
        bad[0] ^= 1;
        fs::write(&seg, &bad).unwrap();
        assert!(matches!(collect(dir.path()), Err(Error::BadMagic { .. })));
        let mut bad = full.clone();
        bad[8] = 9;
        fs::write(&seg, &bad).unwrap();
        assert!(matches!(
            collect(dir.path()),
            Err(Error::UnsupportedVersion { got: 9, .. })
        ));
        fs::write(&seg, &full[..20]).unwrap();
        assert!(matches!(collect(dir.path()), Err(Error::Truncated { .. })));
    }

    #[test]
    fn rotation_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        let (k, v) = put(1, b"v");
        let rec = Record::Put { key: &k, value: &v };
        wal.append(&[rec, rec]).unwrap();
        assert_eq!(wal.rotate().unwrap(), 3);
        assert_eq!(wal.rotate().unwrap(), 3, "empty active segment stays");
        wal.append(&[rec]).unwrap();
        assert_eq!(wal.rotate().unwrap(), 4);
        wal.append(&[rec, rec]).unwrap();
        assert_eq!(wal.segments().len(), 3);
        drop(wal);
        let (recs, report) = collect(dir.path()).unwrap();
        assert_eq!((recs.len(), report.segments, report.next_seq), (5, 3, 6));

        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        assert_eq!(wal.remove_up_to(2).unwrap(), 1);
        assert_eq!(wal.remove_up_to(2).unwrap(), 0);
        assert_eq!(
            wal.remove_up_to(u64::MAX).unwrap(),
            1,
            "the active segment stays"
        );
        assert_eq!(wal.append(&[rec]).unwrap(), 6);
        drop(wal);
        let (recs, report) = collect(dir.path()).unwrap();
        assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), vec![4, 5, 6]);
        assert_eq!(report.first_seq, 4);

        // A missing segment in the middle is detected.
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        wal.rotate().unwrap();
        wal.append(&[rec]).unwrap();
        wal.rotate().unwrap();
        wal.append(&[rec]).unwrap();
        let middle = wal.segments()[1].clone();
        drop(wal);
        fs::remove_file(middle).unwrap();
        assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
    }

    #[test]
    fn group_commit_one_fsync_per_group() {
        let dir = tempfile::tempdir().unwrap();
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        SYNC_DELAY_US.store(2000, Ordering::Relaxed);
        let per_thread = 40u64;
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let wal = &wal;
                s.spawn(move || {
                    for i in 0..per_thread {
                        let (k, v) = put(t << 32 | i, b"value");
                        wal.append(&[Record::Put { key: &k, value: &v }]).unwrap();
                    }
                });
            }
        });
        SYNC_DELAY_US.store(0, Ordering::Relaxed);
        let s = wal.stats();
        assert_eq!(s.appends, 4 * per_thread);
        assert_eq!(s.syncs, s.groups, "one fsync per group write");
        assert!(
            s.groups * 2 < s.appends,
            "4 threads behind a 2 ms fsync must share fsyncs: {s:?}"
        );
        assert_eq!(wal.synced_seq(), 4 * per_thread);
        drop(wal);
        let (recs, _) = collect(dir.path()).unwrap();
        let mut keys: Vec<u64> = recs
            .iter()
            .map(|r| Record::Delete { key: &r.1 }.key_as::<u64>().unwrap())
            .collect();
        keys.sort_unstable();
        let mut want: Vec<u64> = (0..4u64)
            .flat_map(|t| (0..per_thread).map(move |i| t << 32 | i))
            .collect();
        want.sort_unstable();
        assert_eq!(keys, want);
    }

    #[test]
    fn policies_without_fsync_on_append() {
        for policy in [FsyncPolicy::EveryMs(1), FsyncPolicy::Never] {
            let dir = tempfile::tempdir().unwrap();
            let opts = WalOptions { fsync: policy };
            let (wal, _) = Wal::open(dir.path(), opts, |_, _| Ok(())).unwrap();
            for i in 0..20 {
                let (k, v) = put(i, b"v");
                wal.append(&[Record::Put { key: &k, value: &v }]).unwrap();
            }
            assert_eq!(wal.stats().groups, 20);
            if policy == FsyncPolicy::Never {
                assert_eq!(wal.stats().syncs, 0);
            } else {
                let t = std::time::Instant::now();
                while wal.synced_seq() < 20 && t.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                assert_eq!(wal.synced_seq(), 20, "background sync");
            }
            assert_eq!(wal.sync().unwrap(), 20);
            drop(wal);
            assert_eq!(collect(dir.path()).unwrap().1.records, 20);
        }
        let dir = tempfile::tempdir().unwrap();
        let opts = WalOptions {
            fsync: FsyncPolicy::EveryMs(0),
        };
        assert!(matches!(
            Wal::open(dir.path(), opts, |_, _| Ok(())),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
