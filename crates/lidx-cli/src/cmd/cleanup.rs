//! The paths this run created and must not leave behind: a registry that removes them when
//! their [`Created`] guard drops (every return and unwinding path) and, from a thread that
//! waits for SIGINT, SIGTERM and SIGHUP, before the process ends by the signal's default
//! action (issue 30, class 2: `lidx gen` killed mid-write left a 1.5 GB hidden temporary file).
//!
//! Only what a command made itself goes in (a private temporary directory, a directory it
//! created): the rule of issue 30, class 1, is that a command removes nothing else. The
//! library writes helper files only into a directory it is given; the command that gave it
//! registers that directory here, so the library needs no signal handling of its own.
//!
//! The signal thread takes the registry's lock, removes every path and re-raises the signal
//! with its default action while still holding the lock, so no path can be registered or
//! committed (renamed into place) half-way through. A signal that arrives
//! after an output was renamed into place finds it no longer registered and leaves it.
//! While anything is registered, SIGPIPE is ignored (its default action, which `main` sets
//! so that a closed stdout ends a command quietly, would end the process before any cleanup):
//! a write to a closed pipe then fails instead, progress and notes on stderr ([`note!`]) drop
//! it and the command finishes its work, and a failing write on stdout unwinds through the
//! guards, which remove what they hold. The default comes back when the registry empties.
//! The handlers are installed by the first registration: a command that creates nothing
//! keeps the default actions.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The registered paths, by registration number.
static REGISTRY: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());

/// The next registration number.
static NEXT: Mutex<u64> = Mutex::new(0);

static INSTALL: Once = Once::new();

fn registry() -> MutexGuard<'static, Vec<(u64, PathBuf)>> {
    // A panic while the lock was held leaves the list as it was: still the list to clean.
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes `path` (a directory with its contents, or a file); one already gone is fine.
fn remove(path: &Path) {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    };
    // A thread still writing into the directory (a join's parts, a build) can add an entry
    // between the listing and the last removal: try again before giving up.
    let removed = removed.or_else(|e| {
        (0..3)
            .find_map(|_| std::fs::remove_dir_all(path).ok())
            .ok_or(e)
    });
    if let Err(e) = removed {
        note!("warning: could not remove {}: {e}", path.display());
    }
}

/// Ignores SIGPIPE while `ignore` (something is registered), else restores its default
/// action; called with the registry locked.
fn ignore_sigpipe(ignore: bool) {
    let action = if ignore { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: setting a standard disposition (no handler function) for SIGPIPE.
    unsafe { libc::signal(libc::SIGPIPE, action) };
}

/// Starts the thread that cleans up on SIGINT, SIGTERM and SIGHUP (once per process).
fn install() {
    INSTALL.call_once(|| {
        let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]);
        let mut signals = match signals {
            Ok(s) => s,
            Err(e) => {
                note!("warning: no cleanup on signals ({e}): a killed run may leave files");
                return;
            }
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let held = registry();
                for (_, path) in held.iter() {
                    remove(path);
                }
                // Ends the process as the signal would have; the lock is never given back.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
}

/// A path this run created, removed (with all it holds) when the guard drops.
#[derive(Debug)]
pub struct Created {
    id: u64,
    path: PathBuf,
}

impl Created {
    /// Registers `path`, which this run has just created.
    pub fn register(path: &Path) -> Created {
        install();
        let id = {
            let mut next = NEXT.lock().unwrap_or_else(|p| p.into_inner());
            *next += 1;
            *next
        };
        let mut held = registry();
        held.push((id, path.to_path_buf()));
        ignore_sigpipe(true);
        drop(held);
        Created {
            id,
            path: path.to_path_buf(),
        }
    }

    /// Registers `dir` when nothing exists at that path yet (not even a dangling symbolic
    /// link), so that the directory this run is about to create is removed on failure or a
    /// signal; `None` when the path is someone else's.
    pub fn if_missing(dir: &Path) -> Option<Created> {
        std::fs::symlink_metadata(dir)
            .is_err()
            .then(|| Created::register(dir))
    }

    /// The registered path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `commit` (renames of finished outputs out of the registered path) with the
    /// registry locked, so that a signal either removes the path before `commit` or finds it
    /// committed; the path stays registered (and is removed on drop) either way.
    pub fn while_locked<T>(&self, commit: impl FnOnce() -> T) -> T {
        let _held = registry();
        commit()
    }
}

impl Created {
    /// Keeps the path: this run's work in it is done and it is the user's now (a store a
    /// first load filled), so neither a later signal nor the guard's drop removes it.
    pub fn keep(self) {
        let mut held = registry();
        held.retain(|(id, _)| *id != self.id);
        ignore_sigpipe(!held.is_empty());
        drop(held);
        std::mem::forget(self);
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        let mut held = registry();
        remove(&self.path);
        held.retain(|(id, _)| *id != self.id);
        ignore_sigpipe(!held.is_empty());
    }
}
