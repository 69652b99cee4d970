//! What every peer's adapter does the same way around its engine's own calls: filling a
//! scan's output from the engine's range iterator, waiting for its background work, and
//! reporting its stats (memory as the engine holds it, disk as the directory's files).

use std::path::Path;
use std::time::Duration;

use lidx_bench::byte_store::{dir_disk_bytes, ByteStoreStats};

/// Puts into `out` (cleared first) the first `len` entries of `entries`, an engine's range
/// iterator; an entry that failed is `err("range", ..)`.
pub(crate) fn fill_scan<K, V, E>(
    entries: impl Iterator<Item = Result<(K, V), E>>,
    len: usize,
    out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    err: impl Fn(&str, &dyn std::fmt::Display) -> lidx::Error,
) -> lidx::Result<()>
where
    K: AsRef<[u8]>,
    V: AsRef<[u8]>,
    E: std::fmt::Display,
{
    out.clear();
    for entry in entries.take(len) {
        let (k, v) = entry.map_err(|e| err("range", &e))?;
        out.push((k.as_ref().to_vec(), v.as_ref().to_vec()));
    }
    Ok(())
}

/// Returns once `busy` says the engine's background flushes and compactions are done,
/// asking every 5 ms.
pub(crate) fn wait_while(busy: impl Fn() -> bool) -> lidx::Result<()> {
    while busy() {
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// The stats of an engine holding `memory_bytes` whose files are in `dir`.
pub(crate) fn stats(memory_bytes: u64, dir: &Path, describe: String) -> ByteStoreStats {
    ByteStoreStats {
        memory_bytes,
        disk_bytes: dir_disk_bytes(dir),
        describe,
        ..ByteStoreStats::default()
    }
}
