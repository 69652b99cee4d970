//! Bytes the process has written to storage, from the kernel's per-process I/O accounting
//! (`/proc/self/io`), for write amplification: the same count for every store, lidx's engines
//! and the peers alike (RocksDB's flush and compaction threads included), whatever their files.
//!
//! `write_bytes` counts a buffered write when it dirties a page (not when the kernel writes it
//! back) and an `O_DIRECT` write when it is issued; `cancelled_write_bytes` takes back dirty
//! pages dropped unwritten (a file truncated or removed before writeback). Their difference is
//! what the process sent or will send to the device. Each store of `lidx ycsb --memory-limit`
//! runs in a child process of its own ([`crate::kv_child`]), so the count is that store's.

/// Bytes written to storage so far (`write_bytes - cancelled_write_bytes`), `None` where the
/// kernel keeps no such account (no `/proc/self/io`).
pub fn written_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(field("write_bytes:")?.saturating_sub(field("cancelled_write_bytes:").unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_synced_file_write_is_counted() {
        let Some(before) = written_bytes() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let mut f = std::fs::File::create(dir.path().join("f")).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let after = written_bytes().unwrap();
        assert!(after >= before + (1 << 20), "{before} -> {after}");
    }
}
