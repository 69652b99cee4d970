//! Bytes the process has written to storage, from the kernel's per-process I/O accounting
//! (`/proc/self/io`), for write amplification: the same count for every store, lidx's engines
//! and the peers alike (RocksDB's flush and compaction threads included), whatever their files.
//!
//! `write_bytes` counts a buffered write when it dirties a page (not when the kernel writes it
//! back) and an `O_DIRECT` write when it is issued; `cancelled_write_bytes` takes back dirty
//! pages dropped unwritten (a file truncated or removed before writeback). Their difference is
//! what the process sent or will send to the device. Each store of `lidx ycsb --memory-limit`
//! runs in a child process of its own ([`crate::kv_child`]), so the count is that store's.
//!
//! What the figure does not level out: an engine that writes through the page cache (RocksDB,
//! its log unsynced under `fsync never`) gets its removed files' unwritten pages taken back,
//! while lidx's runs, written `O_DIRECT`, count at once; a page re-dirtied after an fsync
//! counts again; on tmpfs nothing counts. A device's own count (sectors written, on a quiet
//! machine) is the stricter measure.

/// The process's storage write account at one moment: `write_bytes` and
/// `cancelled_write_bytes` of `/proc/self/io`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteAccount {
    /// Bytes of writes sent or to be sent to storage (buffered ones counted when dirtied).
    pub written: u64,
    /// Bytes of dirty pages dropped unwritten (a file truncated or removed before writeback).
    pub cancelled: u64,
}

impl WriteAccount {
    /// The account now, `None` where the kernel keeps none (no `/proc/self/io`).
    pub fn now() -> Option<WriteAccount> {
        let io = std::fs::read_to_string("/proc/self/io").ok()?;
        let field = |name: &str| {
            io.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some(WriteAccount {
            written: field("write_bytes:")?,
            cancelled: field("cancelled_write_bytes:").unwrap_or(0),
        })
    }

    /// Bytes that reached or will reach storage between `self` and `later`: written less
    /// cancelled. `None` when the cancelled bytes exceed the written ones: a file written
    /// before `self` and removed after it, whose dropped pages this window cannot own.
    pub fn until(self, later: WriteAccount) -> Option<u64> {
        let written = later.written.checked_sub(self.written)?;
        let cancelled = later.cancelled.checked_sub(self.cancelled)?;
        written.checked_sub(cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_synced_file_write_is_counted() {
        let Some(before) = WriteAccount::now() else {
            return;
        };
        // In the build's own directory: a tmpfs `TMPDIR` keeps no account of dirtied pages.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut f = std::fs::File::create(dir.path().join("f")).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let after = WriteAccount::now().unwrap();
        assert!(
            after.written >= before.written + (1 << 20),
            "{before:?} -> {after:?}"
        );
    }

    #[test]
    fn a_window_whose_cancellations_exceed_its_writes_has_no_figure() {
        let at = |written, cancelled| WriteAccount { written, cancelled };
        assert_eq!(at(100, 10).until(at(300, 60)), Some(150));
        assert_eq!(at(100, 10).until(at(120, 60)), None);
    }
}
