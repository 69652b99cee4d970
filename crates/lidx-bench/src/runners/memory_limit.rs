//! Holding a run to a memory limit, and measuring what it kept resident.
//!
//! Engines differ in where their memory is: lidx's stores read with O_DIRECT into their own
//! cache, RocksDB, fjall and redb keep a cache of their own and read through the OS page
//! cache besides, LMDB maps its file and has no cache but the OS's. A budget handed to each
//! engine's own cache ([`crate::byte_store::PeerOptions`]) is therefore not equal memory by
//! itself: the OS would give the buffered engines all the page cache the machine has.
//!
//! [`MemoryCgroup`] holds a run to a limit that counts both, the process's new heap and the
//! page cache it faults in: a fresh memory cgroup (cgroup v2's `memory.max`, or v1's
//! `memory.limit_in_bytes`) the process moves into for the run (build, timed part, drain) and
//! out of afterwards. Memory is charged to the cgroup that first touches it and stays there,
//! so the dataset and the plan, made before, are not counted: the limit is what the run adds.
//! It needs root (or a delegated cgroup); where it cannot be made the run stops with a message
//! saying so rather than running unlimited. [`resident`] reads the process's resident set
//! (`VmRSS`) and its peak (`VmHWM`, reset per run through `/proc/self/clear_refs`), which every
//! run records whether limited or not.

use std::path::{Path, PathBuf};

use crate::error::{BenchError, Result};

/// A memory cgroup the process is in until dropped.
pub struct MemoryCgroup {
    dir: PathBuf,
    parent_procs: PathBuf,
    peak_file: PathBuf,
    v1: bool,
}

const V2_ROOT: &str = "/sys/fs/cgroup";
const V1_ROOT: &str = "/sys/fs/cgroup/memory";

fn io(path: &Path, source: std::io::Error) -> BenchError {
    BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn unavailable(why: String) -> BenchError {
    BenchError::BadSpec {
        what: "--memory-limit",
        got: why,
        expected: "a machine where this process may create a memory cgroup (root, with cgroup v2 \
                   at /sys/fs/cgroup or v1's memory controller at /sys/fs/cgroup/memory); run \
                   without --memory-limit otherwise"
            .to_string(),
    }
}

/// Creates a fresh cgroup directory `name` (or `name.<n>`) under the memory controller's
/// root: `(root, the cgroup, v1)`.
fn create(name: &str) -> Result<(PathBuf, PathBuf, bool)> {
    let v2 = Path::new(V2_ROOT).join("cgroup.controllers");
    let (root, v1) = match std::fs::read_to_string(&v2) {
        Ok(controllers) if controllers.split_whitespace().any(|c| c == "memory") => {
            (PathBuf::from(V2_ROOT), false)
        }
        _ if Path::new(V1_ROOT).join("memory.limit_in_bytes").exists() => {
            (PathBuf::from(V1_ROOT), true)
        }
        _ => return Err(unavailable("no memory cgroup controller found".to_string())),
    };
    // A cgroup of this name that exists already is someone else's (a user's, or a run
    // that could not remove its own): never joined, re-limited or removed; the next free
    // name `<name>.<n>` is created instead, so the one this run removes is its own.
    let mut dir = root.join(name);
    let mut taken = 0;
    while let Err(e) = std::fs::create_dir(&dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists || taken == 64 {
            return Err(unavailable(format!("cannot create {}: {e}", dir.display())));
        }
        taken += 1;
        dir = root.join(format!("{name}.{taken}"));
    }
    Ok((root, dir, v1))
}

impl MemoryCgroup {
    /// Creates the cgroup `name` (or `name.<n>` when that name is taken) with a limit of
    /// `limit` bytes and moves this process into it; dropping it removes only that cgroup.
    pub fn enter(name: &str, limit: u64) -> Result<MemoryCgroup> {
        let (root, dir, v1) = create(name)?;
        let (limit_file, peak_file) = if v1 {
            ("memory.limit_in_bytes", "memory.max_usage_in_bytes")
        } else {
            ("memory.max", "memory.peak")
        };
        let limit_path = dir.join(limit_file);
        std::fs::write(&limit_path, limit.to_string()).map_err(|e| io(&limit_path, e))?;
        let procs = dir.join("cgroup.procs");
        std::fs::write(&procs, std::process::id().to_string()).map_err(|e| io(&procs, e))?;
        Ok(MemoryCgroup {
            parent_procs: root.join("cgroup.procs"),
            peak_file: dir.join(peak_file),
            dir,
            v1,
        })
    }

    /// Checks that this process can create a memory cgroup (creates an empty one named
    /// `name` and removes it), so that a command refuses `--memory-limit` before it runs
    /// anything, rather than in every child.
    pub fn check_available(name: &str) -> Result<()> {
        let (_, dir, _) = create(name)?;
        let _ = std::fs::remove_dir(&dir);
        Ok(())
    }

    /// The most memory (heap and page cache) charged to the cgroup so far, when the kernel
    /// reports it.
    pub fn peak_bytes(&self) -> Option<u64> {
        std::fs::read_to_string(&self.peak_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Back to the root cgroup, the page cache left behind dropped, the cgroup removed;
        // failures leave an empty cgroup behind, nothing worse.
        let _ = std::fs::write(&self.parent_procs, std::process::id().to_string());
        if self.v1 {
            let _ = std::fs::write(self.dir.join("memory.force_empty"), "0");
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes the memory cgroups named `<prefix>...` that a process killed inside them left
/// behind (it could not drop its [`MemoryCgroup`]) and returns how many processes the
/// kernel's OOM killer killed in them (`oom_kill` of v2's `memory.events`, of v1's
/// `memory.oom_control`): how a parent tells a child killed by its memory limit from one
/// killed otherwise. Cgroups it cannot read or remove are left alone.
pub fn reap_cgroups(prefix: &str) -> u64 {
    let (root, events, v1) = if Path::new(V2_ROOT).join("cgroup.controllers").exists() {
        (V2_ROOT, "memory.events", false)
    } else {
        (V1_ROOT, "memory.oom_control", true)
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut kills = 0;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let dir = entry.path();
        kills += std::fs::read_to_string(dir.join(events))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("oom_kill "))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
            .unwrap_or(0);
        if v1 {
            let _ = std::fs::write(dir.join("memory.force_empty"), "0");
        }
        let _ = std::fs::remove_dir(&dir);
    }
    kills
}

/// The process's resident set and its peak since the last [`reset_resident_peak`], in bytes
/// (`VmRSS`, `VmHWM` of `/proc/self/status`); `None` where there is no such file.
pub fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Resets the peak resident set to the current one (writes `5` to `/proc/self/clear_refs`);
/// false where the kernel does not allow it.
pub fn reset_resident_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
