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
    let cut_at = cut_point(keep, bytes.len(), rng);
    let mut kept = bytes[..cut_at].to_vec();
    if cut_at.is_multiple_of(PAGE) && rng.gen_bool(0.5) {
        kept.resize(bytes.len(), 0);
    }
    std::fs::write(&last, &kept)?;
    Ok((bytes.len() - cut_at) as u64)
}

/// Where a power loss cuts a log of `len` bytes whose first `keep` are durable (`keep < len`):
/// a random byte in `keep..len`, or half the time a random page boundary in that range when
/// there is one. Never `len`: a cycle whose unsynced tail survived whole would test nothing
/// the kill alone did not (drawn from `keep..=len` with pages rounded up to `len`, eight such
/// cycles in a row once failed the CLI test that checks something was cut).
fn cut_point(keep: usize, len: usize, rng: &mut ChaCha8Rng) -> usize {
    let first_page = keep.div_ceil(PAGE);
    let last_page = (len - 1) / PAGE;
    if rng.gen_bool(0.5) || first_page > last_page {
        rng.gen_range(keep..len)
    } else {
        rng.gen_range(first_page..=last_page) * PAGE
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn a_cut_always_loses_part_of_the_unsynced_tail_and_nothing_durable() {
        // A tail inside one page, a tail from a page boundary, one across pages, one byte.
        for (keep, len) in [(100, 300), (4096, 4200), (4000, 13_000), (8191, 8192)] {
            for seed in 0..500 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let cut = cut_point(keep, len, &mut rng);
                assert!(
                    (keep..len).contains(&cut),
                    "keep {keep}, len {len}: cut {cut}"
                );
            }
        }
    }
}
