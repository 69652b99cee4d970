//! [`FileLock`]: a file held under a `flock`, let go of explicitly when dropped.
//!
//! A `flock` belongs to the open file description, which a child process shares from `fork`
//! until `exec` closes it (lidx opens every file close-on-exec). Closing a locked file so does
//! not release the lock while a child that another thread is spawning still holds its copy (a
//! test harness, a server running commands), and the next open of the store, or a log
//! replay's cut of a torn segment, is refused as `Locked`: seen now and then in
//! `tests/kv_crash.rs`, whose other test spawns children all the time. Unlocking (`LOCK_UN`)
//! releases the description's lock for every copy of it, so a [`FileLock`] unlocks before it
//! closes.

use std::fs::{File, TryLockError};

/// A file under a `flock`, unlocked when dropped (see the module docs).
pub(crate) struct FileLock(File);

impl FileLock {
    /// `file` locked, exclusive or shared, without waiting: `None` while another holder has
    /// the lock.
    pub(crate) fn try_new(file: File, exclusive: bool) -> std::io::Result<Option<FileLock>> {
        let got = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match got {
            Ok(()) => Ok(Some(FileLock(file))),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// `file` under a shared lock, waiting for an exclusive holder to let go.
    pub(crate) fn shared(file: File) -> std::io::Result<FileLock> {
        file.lock_shared()?;
        Ok(FileLock(file))
    }

    /// The locked file.
    pub(crate) fn file(&self) -> &File {
        &self.0
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Should it fail, the close that follows lets go as before.
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_lock_is_let_go_though_a_copy_of_its_file_is_still_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let open = || {
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
        };
        for exclusive in [true, false] {
            let held = FileLock::try_new(open().unwrap(), true).unwrap().unwrap();
            assert!(FileLock::try_new(open().unwrap(), exclusive)
                .unwrap()
                .is_none());
            // What a child forked before `exec` holds: the same open file description.
            let copy = held.file().try_clone().unwrap();
            drop(held);
            let again = FileLock::try_new(open().unwrap(), true).unwrap();
            assert!(again.is_some(), "the copy kept the lock");
            drop(copy);
        }
        let shared = FileLock::shared(open().unwrap()).unwrap();
        assert!(FileLock::try_new(open().unwrap(), false).unwrap().is_some());
        assert!(FileLock::try_new(open().unwrap(), true).unwrap().is_none());
        drop(shared);
    }
}
