//! Power loss after a kill: the log's last segment loses what the disk had not made durable
//! after the last acknowledged record, as a file system loses it.

use std::path::Path;

use lidx::kv::WalRecovery;
use lidx::raw::kv::wal::{scan_segment, SEGMENT_HEADER_BYTES};
use lidx::raw::kv::ManifestStore;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::error::TortureError;

/// The page size a file system persists and zeros a file in.
const PAGE: usize = 4096;

/// Power loss: what the disk had not made durable after the end of record `acked` (the last
/// acknowledged one) is lost, as a file system loses it: either the file ends at a random point
/// after it (its size was persisted with the data), or its size stays and the pages from a
/// random page boundary after it on read as zeros (the size was persisted before the data).
/// When anything follows record `acked`, at least one byte of it is lost. Returns the bytes
/// lost.
pub(super) fn cut_log(db: &Path, acked: u64, rng: &mut ChaCha8Rng) -> Result<u64, TortureError> {
    // What the store's files already hold was synced before the manifest named them: a `log`
    // store's collector logs (and syncs) records of its own after the writer's last
    // acknowledgement, and its checkpoint may hold them.
    let covered = ManifestStore::open(db).map_or(0, |(_, m)| m.static_seq);
    let acked = acked.max(covered);
    let wal = db.join("wal");
    let last = std::fs::read_dir(&wal)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max()
        .ok_or_else(|| TortureError::NoSegment { dir: wal.clone() })?;
    let bytes = std::fs::read(&last)?;
    let name = last.display().to_string();
    // Where each record ends; the torn tail a kill may leave is cut by the scan's default mode.
    let mut at = SEGMENT_HEADER_BYTES;
    let mut keep = SEGMENT_HEADER_BYTES;
    scan_segment(&name, &bytes, true, WalRecovery::TornTail, |seq, record| {
        at += record.encoded_len();
        if seq <= acked {
            keep = at;
        }
        Ok(())
    })?;
    if keep == bytes.len() {
        return Ok(0);
    }
    // At least one unsynced byte is lost: a cycle whose tail survives whole tests nothing the
    // kill alone did not (and eight such cycles in a row made the CLI test's check flaky).
    let cut_at = if rng.gen_bool(0.5) {
        rng.gen_range(keep..bytes.len())
    } else {
        let first_page = keep.div_ceil(PAGE);
        let last_page = (bytes.len() - 1) / PAGE;
        if first_page <= last_page {
            rng.gen_range(first_page..=last_page) * PAGE
        } else {
            rng.gen_range(keep..bytes.len())
        }
    };
    let mut kept = bytes[..cut_at].to_vec();
    if cut_at % PAGE == 0 && rng.gen_bool(0.5) {
        kept.resize(bytes.len(), 0);
    }
    std::fs::write(&last, &kept)?;
    Ok((bytes.len() - cut_at) as u64)
}
