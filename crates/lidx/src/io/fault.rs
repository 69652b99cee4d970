//! A fault-injecting device for tests: failed, torn and out-of-space writes, failed syncs and
//! damaged reads, at a chosen point of a seeded or counted plan.
//!
//! A [`FaultPlan`] is shared by every device a [`Storage`](crate::io::Storage) opens once it is
//! given one ([`Storage::with_faults`](crate::io::Storage::with_faults)), so a test arms one
//! fault for a whole index or store ("the 7th write request anywhere fails") without knowing
//! which file a merge or checkpoint writes first. Every fault is an ordinary typed error, as
//! the real device would give: `Io` with the kind the kernel would report (`StorageFull` for
//! `ENOSPC`, `Other` for `EIO`), or `ChecksumMismatch` for a block whose bits flipped on the
//! medium. A torn write writes the first half of a request's blocks before it fails, as a
//! crash or a dying disk leaves it. Counting write requests rather than bytes keeps a plan
//! deterministic for a given sequence of operations.
//!
//! A store opened on such a storage also puts its write-ahead log's appends and fsyncs and its
//! manifest's commits under the plan (they count as write requests and syncs like the
//! devices'). What it does not model: a power loss that forgets writes not yet synced (`lidx kv
//! torture --power-loss` simulates that for the log).

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::io::device::BlockDevice;
use crate::io::stats::{IoClass, IoStats};

/// What an armed write fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteFault {
    /// The request fails with `EIO`, nothing written.
    Error,
    /// The request fails with `ENOSPC`, nothing written.
    NoSpace,
    /// The first half of the request's blocks (at least one when it has two or more) are
    /// written, then it fails with `EIO`.
    Torn,
    /// The request succeeds; the next sync fails with `EIO`.
    FailSync,
}

impl WriteFault {
    /// Every fault, for a test that tries each in turn.
    pub const ALL: [WriteFault; 4] = [
        WriteFault::Error,
        WriteFault::NoSpace,
        WriteFault::Torn,
        WriteFault::FailSync,
    ];
}

/// Which requests a plan counts and strikes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FaultScope {
    /// Every request: the storage's devices, and the log and manifest of a store opened on it.
    #[default]
    All,
    /// The storage's block devices only (table files, pages, images).
    Devices,
    /// A store's write-ahead log only.
    Log,
    /// A store's manifest commits only.
    Manifest,
}

/// Who asks the plan about a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaultSource {
    /// A block device of the storage.
    Device,
    /// A store's write-ahead log.
    Log,
    /// A store's manifest.
    Manifest,
}

impl FaultScope {
    fn covers(self, source: FaultSource) -> bool {
        match self {
            FaultScope::All => true,
            FaultScope::Devices => source == FaultSource::Device,
            FaultScope::Log => source == FaultSource::Log,
            FaultScope::Manifest => source == FaultSource::Manifest,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Which requests count and can fail.
    scope: FaultScope,
    /// Write requests to let through before the armed fault.
    countdown: Option<(u64, WriteFault)>,
    /// A sync fault waiting for the next sync.
    sync_pending: bool,
    /// Syncs to let through before one fails.
    sync_countdown: Option<u64>,
    /// Once a fault struck, every later write and sync fails too (a dead device).
    sticky: bool,
    dead: bool,
    /// Reads of this many blocks pass before one reports a flipped bit.
    flip_after_blocks: Option<u64>,
    /// Faults injected so far.
    injected: u64,
}

/// The faults to inject, shared by the devices of one storage. See the module docs.
#[derive(Debug, Default)]
pub struct FaultPlan {
    state: Mutex<State>,
}

impl FaultPlan {
    /// A plan that injects nothing until armed.
    pub fn new() -> Arc<FaultPlan> {
        Arc::new(FaultPlan::default())
    }

    /// Lets `requests` write requests through, then strikes the next one with `fault`.
    pub fn fail_write_after(&self, requests: u64, fault: WriteFault) {
        self.state.lock().countdown = Some((requests, fault));
    }

    /// Lets `syncs` syncs through, then fails the next one.
    pub fn fail_sync_after(&self, syncs: u64) {
        self.state.lock().sync_countdown = Some(syncs);
    }

    /// Counts and strikes only the requests of `scope` (default: all of them).
    pub fn scope(&self, scope: FaultScope) {
        self.state.lock().scope = scope;
    }

    /// After the first fault, fail every write and sync (`true`), or only the one (`false`,
    /// the default).
    pub fn sticky(&self, sticky: bool) {
        self.state.lock().sticky = sticky;
    }

    /// Lets `blocks` block reads through, then reports the next block read as damaged.
    pub fn flip_read_after(&self, blocks: u64) {
        self.state.lock().flip_after_blocks = Some(blocks);
    }

    /// Stops injecting: pending faults are dropped and a dead device works again.
    pub fn disarm(&self) {
        let mut s = self.state.lock();
        let (injected, scope) = (s.injected, s.scope);
        *s = State {
            injected,
            scope,
            ..State::default()
        };
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.state.lock().injected
    }

    /// What the next write request gets: `None` to go through, or the fault. Files outside
    /// a storage that take part in its plan (a store's log) ask it too.
    pub(crate) fn on_write(&self, source: FaultSource) -> Option<WriteFault> {
        let mut s = self.state.lock();
        if !s.scope.covers(source) {
            return None;
        }
        if s.dead {
            s.injected += 1;
            return Some(WriteFault::Error);
        }
        match s.countdown {
            Some((0, fault)) => {
                s.countdown = None;
                s.dead = s.sticky;
                if fault == WriteFault::FailSync {
                    // Counted when the sync fails.
                    s.sync_pending = true;
                    None
                } else {
                    s.injected += 1;
                    Some(fault)
                }
            }
            Some((n, fault)) => {
                s.countdown = Some((n - 1, fault));
                None
            }
            None => None,
        }
    }

    /// True when the next sync fails.
    pub(crate) fn on_sync(&self, source: FaultSource) -> bool {
        let mut s = self.state.lock();
        if !s.scope.covers(source) {
            return false;
        }
        let counted = match s.sync_countdown {
            Some(0) => {
                s.sync_countdown = None;
                true
            }
            Some(n) => {
                s.sync_countdown = Some(n - 1);
                false
            }
            None => false,
        };
        let fail = s.dead || s.sync_pending || counted;
        s.sync_pending = false;
        if fail {
            s.injected += 1;
        }
        fail
    }

    /// The block of a read of `count` blocks from `first` that reports a flipped bit, if any.
    fn on_read(&self, first: u64, count: u64) -> Option<u64> {
        let mut s = self.state.lock();
        let after = s.flip_after_blocks?;
        if after >= count {
            s.flip_after_blocks = Some(after - count);
            return None;
        }
        s.flip_after_blocks = None;
        s.injected += 1;
        Some(first + after)
    }
}

/// A device that injects its [`FaultPlan`]'s faults into another one.
pub struct FaultDevice {
    inner: Arc<dyn BlockDevice>,
    plan: Arc<FaultPlan>,
}

impl FaultDevice {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn BlockDevice>, plan: Arc<FaultPlan>) -> FaultDevice {
        FaultDevice { inner, plan }
    }

    fn injected(&self, op: &str, kind: std::io::ErrorKind, what: &str) -> Error {
        Error::io(
            self.inner.name(),
            op,
            &std::io::Error::new(kind, format!("injected fault: {what}")),
        )
    }
}

impl BlockDevice for FaultDevice {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn block_size(&self) -> usize {
        self.inner.block_size()
    }

    fn len_blocks(&self) -> u64 {
        self.inner.len_blocks()
    }

    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        self.inner.read_blocks(first, buf, class)?;
        let count = (buf.len() / self.block_size().max(1)) as u64;
        match self.plan.on_read(first, count) {
            None => Ok(()),
            Some(block) => Err(Error::ChecksumMismatch {
                file: self.name().to_string(),
                block,
                expected: 0,
                got: 1,
            }),
        }
    }

    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let op = format!("write blocks from {first}");
        match self.plan.on_write(FaultSource::Device) {
            None => self.inner.write_blocks(first, buf, class),
            Some(WriteFault::Error | WriteFault::FailSync) => {
                Err(self.injected(&op, std::io::ErrorKind::Other, "I/O error"))
            }
            Some(WriteFault::NoSpace) => Err(self.injected(
                &op,
                std::io::ErrorKind::StorageFull,
                "no space left on device",
            )),
            Some(WriteFault::Torn) => {
                let bs = self.block_size();
                let blocks = buf.len() / bs;
                let written = blocks / 2;
                if written > 0 {
                    self.inner
                        .write_blocks(first, &mut buf[..written * bs], class)?;
                }
                Err(self.injected(
                    &op,
                    std::io::ErrorKind::Other,
                    &format!("torn write: {written} of {blocks} blocks written"),
                ))
            }
        }
    }

    fn will_need(&self, first: u64, count: u64) {
        self.inner.will_need(first, count);
    }

    fn sync(&self) -> Result<()> {
        if self.plan.on_sync(FaultSource::Device) {
            return Err(self.injected("sync", std::io::ErrorKind::Other, "fsync failed"));
        }
        self.inner.sync()
    }

    fn stats(&self) -> IoStats {
        self.inner.stats()
    }

    fn describe(&self) -> String {
        format!("{} with injected faults", self.inner.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{AlignedBuf, Storage};

    #[test]
    fn faults_strike_where_the_plan_says() {
        let plan = FaultPlan::new();
        let storage = Storage::ram().with_faults(Arc::clone(&plan));
        let dev = storage.create("f").unwrap();
        let mut buf = AlignedBuf::zeroed(4 * 4096);
        plan.fail_write_after(1, WriteFault::NoSpace);
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        let err = dev.write_blocks(4, &mut buf, IoClass::Data).unwrap_err();
        assert!(
            matches!(&err, Error::Io { kind: std::io::ErrorKind::StorageFull, message, .. }
                if message.contains("no space")),
            "{err:?}"
        );
        assert_eq!(dev.len_blocks(), 4, "nothing written");
        plan.fail_write_after(0, WriteFault::Torn);
        assert!(dev.write_blocks(4, &mut buf, IoClass::Data).is_err());
        assert_eq!(dev.len_blocks(), 6, "half of the request written");
        plan.fail_write_after(0, WriteFault::FailSync);
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        assert!(dev.sync().is_err());
        dev.sync().unwrap();
        plan.flip_read_after(5);
        let mut one = AlignedBuf::zeroed(4 * 4096);
        dev.read_blocks(0, &mut one, IoClass::Data).unwrap();
        assert!(matches!(
            dev.read_blocks(0, &mut one, IoClass::Data),
            Err(Error::ChecksumMismatch { block: 1, .. })
        ));
        plan.sticky(true);
        plan.fail_write_after(0, WriteFault::Error);
        assert!(dev.write_blocks(0, &mut buf, IoClass::Data).is_err());
        assert!(
            dev.write_blocks(0, &mut buf, IoClass::Data).is_err(),
            "dead"
        );
        assert!(dev.sync().is_err());
        plan.disarm();
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        assert_eq!(plan.injected(), 7, "each failed request and sync once");
    }
}
