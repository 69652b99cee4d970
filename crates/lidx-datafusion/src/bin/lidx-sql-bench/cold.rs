//! `--cold`: every query of every side starts with none of its files in the OS page cache.
//!
//! lidx-datafusion reads tables through lidx's file device with the pages kept in the OS page
//! cache (`DeviceKind::FileCached`), as DataFusion reads Parquet: run warm (the default), both
//! sides read what the page cache holds of their files. Cold, `posix_fadvise(DONTNEED)` drops
//! each side's files before each query (the table file and its saved index, or the Parquet
//! file), so that both start from the disk.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use anyhow::{bail, Context};

/// Drops the OS-cached pages of the file `path`.
pub(crate) fn drop_cached(path: &Path) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("open {}", path.display()))?;
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is open for the
    // whole call (`file` lives to the end of this function).
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        bail!(
            "posix_fadvise(DONTNEED) on {} failed: {}",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        );
    }
    Ok(())
}
