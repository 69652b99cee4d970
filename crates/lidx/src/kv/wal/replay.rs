//! Reading a log back: segment names, scanning a segment (what is damaged, and what the
//! recovery mode does with it: [`WalRecovery`]) and replaying every segment in order.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::{Advice, Mmap};

use crate::disk::seq::Seq;
use crate::error::{Error, Result};
use crate::kv::flock::FileLock;
use crate::kv::stamp::{corrupt, le_u32, le_u64};

use super::record::{
    decode_body, decode_frame, decode_segment_header, Record, FRAME_BYTES, SEGMENT_HEADER_BYTES,
};
use super::recovery::{DamageKind, Dropped, WalRecovery};

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
    /// What the recovery mode cut off the log, if anything.
    pub dropped: Option<Dropped>,
}

/// The path of the segment whose first record is `first`.
pub fn segment_path(dir: &Path, first: Seq) -> PathBuf {
    dir.join(format!("wal-{first:020}.log"))
}

pub(crate) fn segment_seq(name: &str) -> Option<Seq> {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentScan {
    /// Sequence number of the segment's first record (from its header).
    pub first_seq: Seq,
    /// Sequence number after its last valid record.
    pub next_seq: Seq,
    /// Bytes up to the end of its last valid record.
    pub valid_len: usize,
    /// Why the segment's valid records end before its bytes do: what the recovery mode lets
    /// replay cut at `valid_len` (`None` when they end together).
    pub damage: Option<DamageKind>,
    /// Its header says it may be sealed without an fsync (`super::SEALED_UNSYNCED`): after a
    /// power loss it may end early, torn or at a record boundary, though later segments exist.
    pub sealed_unsynced: bool,
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
/// A damaged record ends the walk where `recovery` allows it to be cut (reported through
/// `damage` and `valid_len < bytes.len()`), and is an error naming what to do everywhere else
/// (see [`WalRecovery`]). Only the `last` segment, or one whose header says it may be sealed
/// without an fsync ([`SEALED_UNSYNCED`]), may end with a damaged record, except under
/// [`WalRecovery::PointInTime`]. Never panics.
///
/// [`SEALED_UNSYNCED`]: super::SEALED_UNSYNCED
pub fn scan_segment(
    file: &str,
    bytes: &[u8],
    last: bool,
    recovery: WalRecovery,
    mut on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<SegmentScan> {
    let header = decode_segment_header(file, bytes)?;
    let first = header.first;
    // Where a crash may leave a torn end: the active segment, or one sealed unsynced.
    let last = last || header.sealed_unsynced();
    let mut pos = SEGMENT_HEADER_BYTES;
    let mut next = first;
    let mut damage = None;
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
                let follows = valid_record_after(bytes, pos + 1, next);
                let zeroed = zero_filled(bytes, pos);
                let incomplete =
                    last && !follows && (matches!(e, Error::Truncated { .. }) || zeroed);
                let at_end = last && !follows;
                let cut = match recovery {
                    WalRecovery::AbsoluteConsistency => false,
                    WalRecovery::TornTail => at_end && incomplete,
                    WalRecovery::TolerateCorruptedTail => at_end,
                    WalRecovery::PointInTime => true,
                };
                if !cut {
                    return Err(corrupt(
                        file,
                        damage_message(&e, follows, last, incomplete, recovery),
                    ));
                }
                damage = Some(match (incomplete, zeroed) {
                    (true, true) => DamageKind::ZeroFilled,
                    (true, false) => DamageKind::Incomplete,
                    (false, _) => DamageKind::Corrupt,
                });
                break;
            }
        }
    }
    Ok(SegmentScan {
        first_seq: first,
        next_seq: next,
        valid_len: pos,
        damage,
        sealed_unsynced: header.sealed_unsynced(),
    })
}

/// Zeros a file system leaves where a record's data never reached the disk: the segment is
/// zero from `pos` on, or ends in a run of zeros that begins inside the record at `pos` (before
/// the end its frame claims) and is at least a frame's 16 bytes long or begins at a 4 KiB
/// page boundary. The pages of a file grown before its data was written read as zeros after a
/// power loss, whole pages at a time; a bit flip does not zero a record's tail.
fn zero_filled(bytes: &[u8], pos: usize) -> bool {
    let run = bytes[pos..].iter().rev().take_while(|&&b| b == 0).count();
    let rest = bytes.len() - pos;
    if run == rest {
        return true;
    }
    if run == 0 || rest < FRAME_BYTES {
        return false;
    }
    let start = bytes.len() - run;
    let claimed = FRAME_BYTES + le_u32(bytes, pos + 4) as usize;
    start < pos + claimed.min(rest) && (run >= FRAME_BYTES || start.is_multiple_of(PAGE))
}

/// The page size file systems zero a never-written part of a file in.
const PAGE: usize = 4096;

/// Why a damaged record stops a replay in `recovery` mode, and which mode would go on.
fn damage_message(
    e: &Error,
    follows: bool,
    last: bool,
    incomplete: bool,
    recovery: WalRecovery,
) -> String {
    let (what, modes) = if follows {
        (
            "a damaged record in the middle of the log, valid records follow",
            "point-in-time drops it and everything after it",
        )
    } else if !last {
        (
            "a segment that is not the last ends with a damaged record",
            "point-in-time drops it and everything after it",
        )
    } else if incomplete {
        (
            "the last record is incomplete (a crash in the middle of an append)",
            "torn-tail, the default, cuts it",
        )
    } else {
        (
            "the last record is complete but damaged, so it may have been acknowledged",
            "tolerate-corrupted-tail or point-in-time drops it, keeping a copy",
        )
    };
    format!("{what}: {e}; recovery mode {recovery} stops here (recovery mode {modes})")
}

/// [`Error::ForeignFile`] unless the segment `bytes` (of `file`) belongs to the store
/// `owner`; a damaged header is left to the scan that follows.
pub(crate) fn check_owner(file: &str, bytes: &[u8], owner: u128) -> Result<()> {
    match decode_segment_header(file, bytes).map(|h| h.owner) {
        Ok(got) if got != owner => Err(Error::ForeignFile {
            file: file.to_string(),
            what: format!(
                "the segment belongs to the log of store {got:032x}, this store is {owner:032x}"
            ),
        }),
        _ => Ok(()),
    }
}

/// Checks the header of a segment that is read without being replayed (a `log` store maps
/// the segments its checkpoint covers): sound, of the store `owner`
/// ([`Error::ForeignFile`] otherwise), and first at record `first`, as its name says.
pub(crate) fn check_segment_header(
    file: &str,
    bytes: &[u8],
    first: Seq,
    owner: u128,
) -> Result<()> {
    let got = decode_segment_header(file, bytes)?.first;
    check_owner(file, bytes, owner)?;
    if got != first {
        return Err(corrupt(
            file,
            format!("header says the first record is {got}, the name says {first}"),
        ));
    }
    Ok(())
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

/// Segments in `dir` as (first seq from the name, path), sorted. Changes nothing, so that a
/// read-only open or a check can list a log on read-only media.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<(Seq, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err(dir, "list directory"))? {
        let entry = entry.map_err(io_err(dir, "list directory"))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(seq) = segment_seq(name) {
            out.push((seq, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Removes the stray `.tmp` files of interrupted segment creations in `dir` (a writer's open).
pub(super) fn remove_stray_tmp(dir: &Path) -> Result<()> {
    for entry in fs::read_dir(dir).map_err(io_err(dir, "list directory"))? {
        let entry = entry.map_err(io_err(dir, "list directory"))?;
        let name = entry.file_name();
        if name
            .to_str()
            .is_some_and(|n| n.starts_with("wal-") && n.ends_with(".log.tmp"))
        {
            fs::remove_file(entry.path()).map_err(io_err(&entry.path(), "remove"))?;
        }
    }
    Ok(())
}

/// Replays the log in `dir`: hands every record, in sequence order, to `on_record`; cuts what
/// `recovery` lets it cut of a damaged log and reports it (see [`WalRecovery`]). An error
/// from `on_record` stops the replay and is returned. On any error the callback may already
/// have seen some records: discard what it built. A directory without segments replays
/// nothing (`next_seq` 1).
pub fn replay(
    dir: &Path,
    recovery: WalRecovery,
    on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<ReplayReport> {
    replay_covered(dir, recovery, 0, 0, false, on_record)
}

/// [`replay`] without changing any file: what the mode would cut is skipped and reported, but
/// stays where it is (a read-only open).
#[cfg(test)]
pub(crate) fn replay_read_only(
    dir: &Path,
    recovery: WalRecovery,
    on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<ReplayReport> {
    replay_covered(dir, recovery, 0, 0, true, on_record)
}

/// [`replay`] (or [`replay_read_only`]) of the log of an owner whose other files (a store's
/// tables) already hold every record up to `covered`. Where the recovery mode would cut the
/// log at a damaged record numbered `covered` or below, replay stops with [`Error::Corrupt`]
/// before any file changes: that record is not lost (the tables hold it), so it is no reason
/// to cut, and a cut there would leave a log that ends before the tables do (the records
/// after it that only the log holds dropped with it). The error says so and what to do,
/// instead of the "segments missing" that the owner's coverage check would report after the
/// cut. Every segment must belong to the store `owner` (0: a log outside a store): one of
/// another store's log is [`Error::ForeignFile`], refused before any of its records is
/// handed on.
pub(crate) fn replay_covered(
    dir: &Path,
    recovery: WalRecovery,
    covered: Seq,
    owner: u128,
    read_only: bool,
    mut on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
) -> Result<ReplayReport> {
    let cut = !read_only;
    let segments = list_segments(dir)?;
    let mut report = ReplayReport {
        segments: segments.len(),
        records: 0,
        first_seq: 0,
        next_seq: 1,
        dropped: None,
    };
    // Whether a segment was read yet: the records of those before it need not be in sequence.
    let mut read_one = false;
    // The last segment read, with its valid length, when it was sealed unsynced.
    let mut unsynced: Option<(PathBuf, usize)> = None;
    for (i, (named, path)) in segments.iter().enumerate() {
        // A segment followed by one that starts at or before `covered + 1` holds only covered
        // records: it is not read (reopening a `log` store with a checkpoint would otherwise
        // read the whole log), and gaps between such segments are the owner's (a `log`
        // store's collector removes segments its checkpoint covers, oldest or not).
        if segments
            .get(i + 1)
            .is_some_and(|(next, _)| *next <= covered.saturating_add(1))
        {
            report.next_seq = segments[i + 1].0;
            continue;
        }
        if let (true, Some((before, len))) = (read_one && *named > report.next_seq, &unsynced) {
            // A power loss kept a prefix of the segment before, ending at a record boundary
            // (often its header alone), and wrote this one back: the log ends there.
            let dropped = unsynced_gap(
                dir,
                (before, *len),
                &segments[i..],
                report.next_seq,
                (recovery, covered, cut),
            )?;
            report.segments = i;
            report.dropped = Some(dropped);
            break;
        }
        let file = name_of(path);
        let map = MappedSegment::open(path)?;
        let bytes = map.bytes();
        let last = i + 1 == segments.len();
        check_owner(&file, bytes, owner)?;
        let scan = scan_segment(&file, bytes, last, recovery, |seq, r| {
            report.records += 1;
            on_record(seq, r)
        })?;
        if scan.first_seq != *named {
            return Err(corrupt(
                &file,
                format!("header says the first record is {}", scan.first_seq),
            ));
        }
        if read_one && scan.first_seq != report.next_seq {
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
        read_one = true;
        unsynced = scan.sealed_unsynced.then(|| (path.clone(), scan.valid_len));
        if let Some(kind) = scan.damage {
            if scan.next_seq <= covered {
                return Err(covered_damage(
                    &file,
                    bytes,
                    &scan,
                    kind,
                    covered,
                    &segments[i + 1..],
                    recovery,
                ));
            }
            let mut dropped = Dropped {
                kind,
                file: path.clone(),
                offset: scan.valid_len as u64,
                bytes: (bytes.len() - scan.valid_len) as u64,
                first_seq: scan.next_seq,
                kept_in: None,
                cut,
                segments: segments[i + 1..].iter().map(|(_, p)| p.clone()).collect(),
            };
            if cut {
                // Even a record cut short by the end of the file is kept: a flipped bit in a
                // complete record's length field makes it look so.
                dropped.kept_in = Some(keep_aside(path, &bytes[scan.valid_len..])?);
                // Unmapped (and its shared lock released) before the file is cut under it; the
                // cut takes the segment's lock alone, so no other process has it mapped.
                drop(map);
                sync_dir(dir)?;
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io_err(path, "open segment to cut it"))?;
                let f = match FileLock::try_new(f, true) {
                    Ok(Some(f)) => f,
                    locked => {
                        // Nothing is cut: the copy set aside goes too.
                        if let Some(kept) = &dropped.kept_in {
                            let _ = fs::remove_file(kept);
                        }
                        return Err(match locked {
                            Err(e) => io_err(path, "lock segment")(e),
                            Ok(_) => Error::Locked {
                                dir: dir.display().to_string(),
                            },
                        });
                    }
                };
                f.file()
                    .set_len(scan.valid_len as u64)
                    .and_then(|()| f.file().sync_all())
                    .map_err(io_err(path, "cut segment"))?;
                set_aside(dir, &mut dropped.segments)?;
            }
            report.segments = i + 1;
            report.dropped = Some(dropped);
            break;
        }
    }
    Ok(report)
}

/// Renames the segments `paths` aside (`*.dropped`: no longer read as log, nothing destroyed),
/// each path replaced by its new name, and syncs the directory `dir`.
fn set_aside(dir: &Path, paths: &mut [PathBuf]) -> Result<()> {
    for path in paths.iter_mut() {
        let to = aside_name(path)?;
        fs::rename(&*path, &to).map_err(io_err(path, "rename dropped segment"))?;
        *path = to;
    }
    sync_dir(dir)
}

/// What replay does when the segments `later` start after a gap that follows the segment
/// `before` (read up to `len` bytes), which was sealed unsynced: under every mode but
/// absolute consistency the log ends at `next` (the record after `before`'s last), and the
/// later segments are set aside when `cut` (else only reported). A gap at or below `covered`
/// would leave the log ending before the tables: refused, as a cut there is.
fn unsynced_gap(
    dir: &Path,
    (before, len): (&Path, usize),
    later: &[(Seq, PathBuf)],
    next: Seq,
    (recovery, covered, cut): (WalRecovery, Seq, bool),
) -> Result<Dropped> {
    let file = name_of(&later[0].1);
    let what = format!(
        "the segment starts at record {}, but the one before, {}, sealed without an fsync, \
         ends before record {next} (a power loss kept a prefix of it)",
        later[0].0,
        before.display()
    );
    if recovery == WalRecovery::AbsoluteConsistency {
        return Err(corrupt(
            &file,
            format!(
                "{what}; recovery mode {recovery} stops here (torn-tail, the default, ends the \
                 log there and sets the later segments aside)"
            ),
        ));
    }
    if next <= covered {
        return Err(corrupt(
            &file,
            format!(
                "{what}; the table files hold every record up to {covered}, so the log cannot \
                 end before it. Nothing was changed. Restore the log from a backup if there is \
                 one"
            ),
        ));
    }
    let mut dropped = Dropped {
        kind: DamageKind::Incomplete,
        file: before.to_path_buf(),
        offset: len as u64,
        bytes: 0,
        first_seq: next,
        kept_in: None,
        cut,
        segments: later.iter().map(|(_, p)| p.clone()).collect(),
    };
    if cut {
        set_aside(dir, &mut dropped.segments)?;
    }
    Ok(dropped)
}

/// A segment's bytes, mapped read-only: replay reads a segment through the page cache instead
/// of a copy of it in memory, so reopening needs no more memory than the kernel can reclaim
/// (the `log` engine's segments reach 1 GiB). The file stays open with a shared lock on it while
/// mapped: the only writer that shortens a segment, a replay's cut, takes that lock alone first,
/// so a mapped segment never shrinks under its mapping.
struct MappedSegment {
    /// `None` for an empty file, which cannot be mapped.
    map: Option<Mmap>,
    _locked: FileLock,
}

impl MappedSegment {
    fn open(path: &Path) -> Result<MappedSegment> {
        let file = File::open(path).map_err(io_err(path, "read segment"))?;
        let file = FileLock::shared(file).map_err(io_err(path, "lock segment"))?;
        let len = file
            .file()
            .metadata()
            .map_err(io_err(path, "read segment"))?
            .len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: the mapping is read-only, and the file is not shortened while it is
            // mapped: this handle holds a shared lock on it, which a cut must take alone (see
            // the type's docs); appends past the mapped length are never read through it.
            let map = unsafe { Mmap::map(file.file()) }.map_err(io_err(path, "map segment"))?;
            // Read once from start to end: a hint, so a kernel that refuses it changes nothing.
            let _ = map.advise(Advice::Sequential);
            Some(map)
        };
        Ok(MappedSegment { map, _locked: file })
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

/// The error of a damaged record numbered `covered` or below (see [`replay_covered`]): where it
/// is, that the tables hold it, what a cut would lose, and what to do.
fn covered_damage(
    file: &str,
    bytes: &[u8],
    scan: &SegmentScan,
    kind: DamageKind,
    covered: Seq,
    later: &[(Seq, PathBuf)],
    recovery: WalRecovery,
) -> Error {
    let what = match kind {
        DamageKind::Incomplete => "incomplete",
        DamageKind::ZeroFilled => "zero-filled",
        DamageKind::Corrupt => "damaged",
    };
    let uncovered = if valid_record_after(bytes, scan.valid_len + 1, covered + 1) {
        format!(
            "records from {} on, which only the log holds, follow it",
            covered + 1
        )
    } else if !later.is_empty() {
        format!(
            "{} later segment(s) follow it, with the records from {} on that only the log \
             holds",
            later.len(),
            covered + 1
        )
    } else {
        format!(
            "no readable record after it: the log would end before record {}, which the \
             tables hold, and new records would reuse numbers the tables have",
            covered + 1
        )
    };
    corrupt(
        file,
        format!(
            "record {} at offset {} is {what}, but the table files already hold every record \
             up to {covered}, so it is not lost and is no reason to cut the log; recovery mode \
             {recovery} would cut there, and {uncovered}. Nothing was changed. Restore this \
             log segment from a backup if there is one; `lidx kv check` names every damaged \
             record",
            scan.next_seq, scan.valid_len
        ),
    )
}

/// A free name beside `path` for what a replay drops from it: `<path>.dropped`, or with a
/// number after it when an earlier replay left one (each crash can leave one).
fn aside_name(path: &Path) -> Result<PathBuf> {
    let base = format!("{}.dropped", path.display());
    for n in 0..ASIDE_LIMIT {
        let name = if n == 0 {
            PathBuf::from(&base)
        } else {
            PathBuf::from(format!("{base}.{n}"))
        };
        if !name.exists() {
            return Ok(name);
        }
    }
    Err(Error::io(
        base,
        "name a file for the log bytes a replay drops",
        &std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{ASIDE_LIMIT} such files are beside the segment already: move them away"),
        ),
    ))
}

/// Most files of dropped bytes kept beside one segment.
const ASIDE_LIMIT: usize = 100_000;

/// Copies the bytes a replay cuts from `path` into a new file beside it, synced, and names it.
fn keep_aside(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let to = aside_name(path)?;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&to)
        .map_err(io_err(&to, "create"))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(io_err(&to, "write dropped records"))?;
    Ok(to)
}
