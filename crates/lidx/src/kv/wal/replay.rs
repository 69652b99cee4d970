//! Reading a log back: segment names, scanning a segment (torn tails against corruption in
//! the middle) and replaying every segment in order.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::kv::stamp::{corrupt, le_u64};

use super::record::{
    decode_body, decode_frame, decode_segment_header, Record, Seq, FRAME_BYTES,
    SEGMENT_HEADER_BYTES,
};

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

/// The path of the segment whose first record is `first`.
pub fn segment_path(dir: &Path, first: Seq) -> PathBuf {
    dir.join(format!("wal-{first:020}.log"))
}

pub(super) fn segment_seq(name: &str) -> Option<Seq> {
    let digits = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub(super) fn name_of(path: &Path) -> String {
    path.display().to_string()
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
pub(super) fn valid_record_after(bytes: &[u8], from: usize, next: Seq) -> bool {
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

pub(super) fn io_err(path: &Path, op: &str) -> impl FnOnce(std::io::Error) -> Error {
    let (file, op) = (name_of(path), op.to_string());
    move |e| Error::io(file, op, &e)
}

pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir, "fsync directory"))
}

/// Segments in `dir` as (first seq from the name, path), sorted; stray `.tmp` files of
/// interrupted segment creations are removed.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<(Seq, PathBuf)>> {
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
