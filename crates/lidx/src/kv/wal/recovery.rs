//! What replay does with a damaged record ([`WalRecovery`], whose docs say why) and what a
//! replay dropped ([`Dropped`]).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::error::{Error, Result};

use crate::disk::seq::Seq;

/// What replay does with a damaged record.
///
/// A crash in the middle of an append leaves the last record *incomplete*: its frame runs past
/// the end of the file, or the file ends in zeros from inside the record on (a file system
/// that grew the file before writing its data; at least a frame's 16 bytes of zeros, or zeros
/// from a 4 KiB page boundary, since file systems zero whole pages). One limit of that rule: a
/// complete last record damaged elsewhere whose own bytes end in such a run of zeros is taken
/// for zero-filled and cut; it is reported and its bytes are kept beside the log. That record was never acknowledged under
/// [`FsyncPolicy::Always`](super::FsyncPolicy::Always), so cutting it loses nothing promised.
/// A *complete* record whose checksum fails is different: its bytes reached the file, and
/// under `Always` it may have been acknowledged; dropping it would lose a write silently. The
/// modes follow RocksDB's `WALRecoveryMode` names:
///
/// | mode | incomplete last record | complete damaged last record | damage with valid records after |
/// |---|---|---|---|
/// | [`AbsoluteConsistency`](WalRecovery::AbsoluteConsistency) | error | error | error |
/// | [`TornTail`](WalRecovery::TornTail) (default) | cut | error | error |
/// | [`TolerateCorruptedTail`](WalRecovery::TolerateCorruptedTail) | cut | cut | error |
/// | [`PointInTime`](WalRecovery::PointInTime) | cut | cut | cut there, the rest dropped |
///
/// RocksDB's `kTolerateCorruptedTailRecords` cuts both kinds of tail, and its default is
/// point-in-time; ours is the stricter `TornTail`, which cuts only what a crash makes and
/// asks the user before dropping a record that may have been acknowledged. Whatever a replay
/// cuts is reported ([`Dropped`]); the bytes cut are first copied beside the segment
/// (`<segment>.dropped`, synced with its directory before the cut), and whole segments dropped
/// are renamed so (no longer read as log), so nothing is destroyed.
///
/// No mode cuts at a record that the log's owner already holds elsewhere (a store's tables
/// hold every record up to the manifest's sequence number): that record is not lost, and a cut
/// there would leave a log ending before the tables. Replay refuses such a cut before it
/// changes any file and says why (`super::replay_covered`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WalRecovery {
    /// Any damage is an error, an incomplete last record included; nothing is ever cut.
    AbsoluteConsistency,
    /// An incomplete last record is cut (a crash mid-append); any other damage is an error.
    #[default]
    TornTail,
    /// A damaged last record is cut, complete or not; damage followed by valid records is an
    /// error.
    TolerateCorruptedTail,
    /// Replay stops at the first damaged record anywhere: it and everything after it (the rest
    /// of its segment and every later segment) are dropped, leaving the log as it was at a
    /// point in time.
    PointInTime,
}

impl WalRecovery {
    /// Every mode, in the order of the table above.
    pub const ALL: [WalRecovery; 4] = [
        WalRecovery::AbsoluteConsistency,
        WalRecovery::TornTail,
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::PointInTime,
    ];

    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WalRecovery::AbsoluteConsistency => "absolute-consistency",
            WalRecovery::TornTail => "torn-tail",
            WalRecovery::TolerateCorruptedTail => "tolerate-corrupted-tail",
            WalRecovery::PointInTime => "point-in-time",
        }
    }
}

impl fmt::Display for WalRecovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WalRecovery {
    type Err = Error;

    fn from_str(s: &str) -> Result<WalRecovery> {
        WalRecovery::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::InvalidParameter {
                name: "recovery mode",
                value: s.to_string(),
                expected: "absolute-consistency, torn-tail, tolerate-corrupted-tail or \
                           point-in-time",
            })
    }
}

/// Why a replay cut a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamageKind {
    /// The last record was incomplete: a crash in the middle of an append.
    Incomplete,
    /// The last record ends in zeros to the end of the file: a power loss on a file system
    /// that grew the file before the record's data reached the disk. Treated as incomplete
    /// (its bytes are kept beside the log all the same).
    ZeroFilled,
    /// A complete record failed its checksum or did not decode.
    Corrupt,
}

/// What a replay cut off the log and where it kept it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// Why.
    pub kind: DamageKind,
    /// The segment that was cut.
    pub file: PathBuf,
    /// Where it was cut: the segment's new length.
    pub offset: u64,
    /// Bytes cut from it.
    pub bytes: u64,
    /// The sequence number the first dropped record had or would have had.
    pub first_seq: Seq,
    /// Where the cut bytes were copied before the cut (`None` only when not `cut`): a record
    /// that looks cut short by the end of the file may be a complete one whose length field
    /// flipped, so its bytes are kept too.
    pub kept_in: Option<PathBuf>,
    /// False for a read-only open, which skips what it would cut and changes no file.
    pub cut: bool,
    /// Later segments dropped whole ([`WalRecovery::PointInTime`]): by their new names when
    /// `cut`, else by their names.
    pub segments: Vec<PathBuf>,
}

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            DamageKind::Incomplete => "an incomplete last record (a crash mid-append)",
            DamageKind::ZeroFilled => "a last record that ends in zeros (a power loss)",
            DamageKind::Corrupt => "a damaged record",
        };
        write!(
            f,
            "{} {} bytes of {} at offset {} ({what}, from record {} on)",
            if self.cut { "cut" } else { "skipped" },
            self.bytes,
            self.file.display(),
            self.offset,
            self.first_seq
        )?;
        if let Some(kept) = &self.kept_in {
            write!(f, "; the bytes are kept in {}", kept.display())?;
        }
        if !self.segments.is_empty() {
            write!(
                f,
                "; {} later segment(s) {}",
                self.segments.len(),
                if self.cut {
                    "dropped, renamed to *.dropped"
                } else {
                    "skipped"
                }
            )?;
        }
        Ok(())
    }
}
