//! Taking a file's `flock` when its holder may be about to let go.
//!
//! A `flock` belongs to the open file description, which a child process shares from `fork`
//! until `exec` closes it (lidx opens every file close-on-exec). So a process that spawns
//! children on another thread (a test harness, a server running commands) can find a lock it
//! released a moment ago still held, by a child that has not reached `exec` yet. [`try_lock`]
//! waits such a holder out: it retries for up to [`PATIENCE`] before it reports the lock as
//! held by someone else. Seen as a `Locked` error, now and then, from the WAL replay's cut of
//! a torn segment in `tests/kv_crash.rs`, while the file's other test was spawning children.

use std::fs::{File, TryLockError};
use std::time::{Duration, Instant};

/// How long [`try_lock`] waits for a holder to let go.
pub(crate) const PATIENCE: Duration = Duration::from_millis(100);

/// Takes `file`'s lock, exclusive or shared: `Ok(true)` once taken, `Ok(false)` when another
/// holder still has it after [`PATIENCE`].
pub(crate) fn try_lock(file: &File, exclusive: bool) -> std::io::Result<bool> {
    let start = Instant::now();
    loop {
        let got = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match got {
            Ok(()) => return Ok(true),
            Err(TryLockError::Error(e)) => return Err(e),
            Err(TryLockError::WouldBlock) if start.elapsed() >= PATIENCE => return Ok(false),
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_let_go_within_the_patience_is_taken_and_one_kept_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let holder = File::create(&path).unwrap();
        let other = File::open(&path).unwrap();
        holder.lock().unwrap();
        let start = Instant::now();
        assert!(!try_lock(&other, true).unwrap());
        assert!(!try_lock(&other, false).unwrap());
        assert!(start.elapsed() >= 2 * PATIENCE);
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(PATIENCE / 4);
            drop(holder);
        });
        assert!(try_lock(&other, true).unwrap());
        letting_go.join().unwrap();
    }
}
