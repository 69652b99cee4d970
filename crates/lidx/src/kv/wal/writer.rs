//! The appending side: [`Wal`], its group commit, fsync policy, rotation and removal of
//! merged segments.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::disk::seq::Seq;
use crate::error::{Error, Result};
use crate::io::fault::FaultSource;
use crate::io::{FaultPlan, WriteFault};

use super::record::{
    decode_segment_header, encode_record, encode_segment_header, Record, MAX_BODY_BYTES,
    SEALED_UNSYNCED, SEGMENT_HEADER_BYTES,
};
use super::recovery::WalRecovery;
use super::replay::{
    io_err, list_segments, name_of, remove_stray_tmp, replay_covered, segment_path, sync_dir,
    ReplayReport,
};

/// When appended records are forced to disk; see the module docs for what each loses on a
/// crash. Durability costs throughput: `Always` pays one fsync per group of appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Acknowledge an append after `fdatasync`: nothing acknowledged is ever lost.
    #[default]
    Always,
    /// Acknowledge after `write`; a background thread fsyncs every `n` milliseconds (`n >= 1`).
    EveryMs(u64),
    /// Acknowledge after `write`; never fsync except on [`Wal::sync`] and on drop.
    Never,
}

/// Options of [`Wal::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalOptions {
    /// When appends are made durable (default [`FsyncPolicy::Always`]).
    pub fsync: FsyncPolicy,
    /// What opening does with a damaged log (default [`WalRecovery::TornTail`]).
    pub recovery: WalRecovery,
    /// Under [`FsyncPolicy::Never`], [`Wal::rotate`] seals the active segment without an
    /// fsync (default false: sealed segments are always fsynced). For an owner that makes a
    /// sealed segment's records durable in files of its own before it removes the segment (a
    /// store flushing its memtable): the segment's bytes then usually never reach the disk at
    /// all. New segments say so in their header ([`super::SEALED_UNSYNCED`]), and replay cuts
    /// a torn end of such a segment as it cuts the last segment's, dropping the later segments
    /// (renamed `*.dropped`): the longest prefix a power loss left, which is what `Never`
    /// promises. [`Wal::sync`] and closing fsync the sealed segments too.
    pub seal_unsynced: bool,
}

/// Counters of a [`Wal`] since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Calls to [`Wal::append`] that succeeded.
    pub appends: u64,
    /// Records appended.
    pub records: u64,
    /// Group writes: one `write` call each.
    pub groups: u64,
    /// `fdatasync` calls (group commits, background syncs, [`Wal::sync`], rotations).
    pub syncs: u64,
    /// Record bytes written.
    pub bytes: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    appends: AtomicU64,
    records: AtomicU64,
    groups: AtomicU64,
    syncs: AtomicU64,
    bytes: AtomicU64,
}

/// Creates the segment starting at `first` of the log of the store `owner` (through a `.tmp`
/// file, see the module docs) and returns it open for appending.
pub(super) fn create_segment(
    dir: &Path,
    first: Seq,
    owner: u128,
    flags: u32,
) -> Result<(File, PathBuf)> {
    let path = segment_path(dir, first);
    let tmp = path.with_extension("log.tmp");
    let made = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&encode_segment_header(first, owner, flags))?;
        f.sync_all()?;
        fs::rename(&tmp, &path)?;
        Ok(f)
    })();
    match made {
        Ok(f) => {
            sync_dir(dir)?;
            Ok((f, path))
        }
        Err(e) => {
            // The segment does not exist: remove whatever part of it was made.
            let _ = fs::remove_file(&tmp);
            Err(Error::io(name_of(&path), "create segment", &e))
        }
    }
}

pub(super) struct State {
    /// Encoded records not yet handed to a leader.
    pending: Vec<u8>,
    /// An empty buffer kept to swap with `pending` (keeps its capacity).
    spare: Vec<u8>,
    /// Last sequence number assigned.
    assigned: Seq,
    /// Last sequence number written to the OS.
    written: Seq,
    /// Last sequence number fsynced.
    synced: Seq,
    /// A thread is writing (a group leader, a rotation).
    leader: bool,
    /// The first write or fsync error: every later append fails with it.
    error: Option<Error>,
    /// The active segment.
    file: Arc<File>,
    /// Its name, for errors.
    file_name: String,
    /// Live segments: first sequence number and path, oldest first; the last is active.
    segments: Vec<(Seq, PathBuf)>,
    /// The active segment's header says it may be sealed unsynced ([`SEALED_UNSYNCED`]).
    active_unsynced: bool,
    /// Sealed segments not fsynced yet (first sequence number, file, name): the next fsync of
    /// the log syncs them first.
    unsynced: Vec<(Seq, Arc<File>, String)>,
}

impl State {
    /// Drops the unsynced sealed segments that are no longer live (removed: nothing to sync).
    fn forget_unsynced(&mut self) {
        let live = &self.segments;
        self.unsynced
            .retain(|(first, _, _)| live.iter().any(|(s, _)| s == first));
    }

    /// Takes the pending records for a group write, leaving the spare buffer in their place.
    fn take_pending(&mut self) -> Vec<u8> {
        let spare = std::mem::take(&mut self.spare);
        std::mem::replace(&mut self.pending, spare)
    }
}

pub(super) struct Inner {
    dir: PathBuf,
    /// The store the log belongs to (0: none); its segments' headers say so.
    owner: u128,
    policy: FsyncPolicy,
    /// The flags of the segments this log creates: [`SEALED_UNSYNCED`] when it seals them
    /// without an fsync ([`WalOptions::seal_unsynced`] under [`FsyncPolicy::Never`]).
    flags: u32,
    /// Faults injected into appends and fsyncs (tests: [`Wal::open_with_faults`]).
    faults: Option<Arc<FaultPlan>>,
    state: Mutex<State>,
    cond: Condvar,
    counters: Counters,
    stop: Mutex<bool>,
    stop_cond: Condvar,
}

/// An open write-ahead log; see the module docs. `Send + Sync`: share it with an `Arc`.
pub struct Wal {
    inner: Arc<Inner>,
    syncer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.inner.dir)
            .field("policy", &self.inner.policy)
            .finish()
    }
}

impl Wal {
    /// Opens the log in `dir` (created if missing), replaying every record into `on_record`
    /// first (see [`super::replay`]), and returns it ready for appends after the last record.
    pub fn open(
        dir: &Path,
        options: WalOptions,
        on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        Wal::open_with_faults(dir, options, None, 0, 0, on_record)
    }

    /// [`Wal::open`] with `faults`' write faults injected into its appends (a torn one writes
    /// half the group's bytes) and its sync faults into its fsyncs (for tests of what the log's
    /// owner does when the log's disk fails), for an owner whose other files already hold
    /// every record up to `covered` (0: none): a cut the recovery mode would make at or below
    /// it is refused before any file changes (see [`replay_covered`]). The log belongs to the
    /// store `owner` (0: none): its segments must say so, and new ones do.
    #[doc(hidden)]
    pub fn open_with_faults(
        dir: &Path,
        options: WalOptions,
        faults: Option<Arc<FaultPlan>>,
        covered: Seq,
        owner: u128,
        on_record: impl FnMut(Seq, Record<'_>) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        if let FsyncPolicy::EveryMs(0) = options.fsync {
            return Err(Error::InvalidParameter {
                name: "fsync",
                value: "EveryMs(0)".into(),
                expected: "EveryMs(n) with n >= 1, Always or Never",
            });
        }
        fs::create_dir_all(dir).map_err(io_err(dir, "create directory"))?;
        remove_stray_tmp(dir)?;
        let report = replay_covered(dir, options.recovery, covered, owner, false, on_record)?;
        let flags = if options.seal_unsynced && options.fsync == FsyncPolicy::Never {
            SEALED_UNSYNCED
        } else {
            0
        };
        let mut segments = list_segments(dir)?;
        let (mut file, mut active_unsynced) = match segments.last() {
            Some((_, path)) => {
                let mut f = OpenOptions::new()
                    .read(true)
                    .append(true)
                    .open(path)
                    .map_err(io_err(path, "open segment"))?;
                let mut header = [0u8; SEGMENT_HEADER_BYTES];
                f.read_exact(&mut header)
                    .map_err(io_err(path, "read segment header"))?;
                let header = decode_segment_header(&name_of(path), &header)?;
                (f, header.sealed_unsynced())
            }
            None => {
                let (f, path) = create_segment(dir, report.next_seq, owner, flags)?;
                segments.push((report.next_seq, path));
                (f, flags != 0)
            }
        };
        if active_unsynced != (flags != 0) {
            // The last segment was made under other options: this open's records go to a new
            // one, so that a segment sealed unsynced only ever holds records appended while
            // its header says so (replay cuts such a segment's end; records fsynced into it
            // under another policy must not be cut). One without records is made again.
            let (first, path) = segments.pop().expect("a segment was listed or created");
            if report.next_seq > first {
                file.sync_data()
                    .map_err(|e| Error::io(name_of(&path), "fsync log", &e))?;
                segments.push((first, path));
            }
            let (f, path) = create_segment(dir, report.next_seq, owner, flags)?;
            segments.push((report.next_seq, path));
            (file, active_unsynced) = (f, flags != 0);
        }
        let last = report.next_seq - 1;
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            owner,
            policy: options.fsync,
            flags,
            faults,
            state: Mutex::new(State {
                pending: Vec::new(),
                spare: Vec::new(),
                assigned: last,
                written: last,
                synced: last,
                leader: false,
                error: None,
                file: Arc::new(file),
                file_name: name_of(&segments[segments.len() - 1].1),
                segments,
                active_unsynced,
                unsynced: Vec::new(),
            }),
            cond: Condvar::new(),
            counters: Counters::default(),
            stop: Mutex::new(false),
            stop_cond: Condvar::new(),
        });
        let syncer = match options.fsync {
            FsyncPolicy::EveryMs(ms) => {
                let inner = Arc::clone(&inner);
                Some(std::thread::spawn(move || inner.background_sync(ms)))
            }
            _ => None,
        };
        Ok((Wal { inner, syncer }, report))
    }

    /// Appends `records` (consecutive sequence numbers, in order) and returns the sequence
    /// number of the last one once the fsync policy says they are acknowledged. Safe to call
    /// from many threads at once (group commit, see the module docs).
    pub fn append(&self, records: &[Record<'_>]) -> Result<Seq> {
        if records.is_empty() {
            return Err(Error::InvalidParameter {
                name: "records",
                value: "[]".into(),
                expected: "at least one record",
            });
        }
        if let Some(r) = records.iter().find(|r| r.body_len() > MAX_BODY_BYTES) {
            return Err(Error::InvalidParameter {
                name: "records",
                value: format!("a record of {} bytes", r.encoded_len()),
                expected: "records of at most 1 GiB",
            });
        }
        let mut st = self.inner.state.lock();
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        for r in records {
            st.assigned += 1;
            let seq = st.assigned;
            encode_record(seq, r, &mut st.pending);
        }
        let mine = st.assigned;
        let need_sync = self.inner.policy == FsyncPolicy::Always;
        self.inner.commit(&mut st, mine, need_sync)?;
        self.inner.counters.appends.fetch_add(1, Ordering::Relaxed);
        self.inner
            .counters
            .records
            .fetch_add(records.len() as u64, Ordering::Relaxed);
        Ok(mine)
    }

    /// Writes and fsyncs everything appended so far, whatever the policy; returns the last
    /// sequence number now durable.
    pub fn sync(&self) -> Result<Seq> {
        let mut st = self.inner.state.lock();
        let target = st.assigned;
        self.inner.commit(&mut st, target, true)?;
        Ok(target)
    }

    /// Closes the active segment (fsynced, unless [`WalOptions::seal_unsynced`] under
    /// [`FsyncPolicy::Never`] and its header says so) and starts a new one; returns the
    /// sequence number its first record will get. Every record before it is in older
    /// segments, which [`Wal::remove_up_to`] can drop once they are in static files. When the
    /// active segment holds no record yet, it stays active.
    pub fn rotate(&self) -> Result<Seq> {
        let inner = &self.inner;
        let mut st = inner.state.lock();
        loop {
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if !st.leader {
                break;
            }
            inner.cond.wait(&mut st);
        }
        let first = st.assigned + 1;
        if st.segments.last().is_some_and(|(s, _)| *s == first) {
            return Ok(first);
        }
        st.leader = true;
        let batch = st.take_pending();
        let file = Arc::clone(&st.file);
        let name = st.file_name.clone();
        let sync = !(st.active_unsynced && inner.flags & SEALED_UNSYNCED != 0);
        let flushed =
            MutexGuard::unlocked(&mut st, || inner.write_group(&file, &name, &batch, sync));
        if let Err(e) = flushed {
            st.leader = false;
            st.error = Some(e.clone());
            inner.cond.notify_all();
            return Err(e);
        }
        st.written = first - 1;
        if sync {
            st.synced = first - 1;
        } else {
            let sealed = st.segments.last().map_or(first, |(s, _)| *s);
            st.unsynced.push((sealed, file, name));
        }
        st.spare = batch;
        st.spare.clear();
        let created = MutexGuard::unlocked(&mut st, || {
            create_segment(&inner.dir, first, inner.owner, inner.flags)
        });
        st.leader = false;
        inner.cond.notify_all();
        let (file, path) = created?;
        st.file = Arc::new(file);
        st.file_name = name_of(&path);
        st.segments.push((first, path));
        st.active_unsynced = inner.flags != 0;
        Ok(first)
    }

    /// Removes the segments whose records all have sequence numbers `<= seq` (call it once a
    /// merge made them durable in static files and the manifest says so). The active segment is
    /// never removed. Returns how many segments were removed.
    pub fn remove_up_to(&self, seq: Seq) -> Result<usize> {
        let doomed: Vec<PathBuf> = {
            let mut st = self.inner.state.lock();
            let n = st
                .segments
                .windows(2)
                .take_while(|w| w[1].0 - 1 <= seq)
                .count();
            let doomed: Vec<PathBuf> = st.segments.drain(..n).map(|(_, p)| p).collect();
            st.forget_unsynced();
            doomed
        };
        for path in &doomed {
            fs::remove_file(path).map_err(io_err(path, "remove segment"))?;
        }
        if !doomed.is_empty() {
            sync_dir(&self.inner.dir)?;
        }
        Ok(doomed.len())
    }

    /// Removes the sealed segment whose first record is `first` (the active one is refused),
    /// whatever its place among the others: the owner's other files must hold every record in
    /// it (a `log` store's checkpoint), since a replay no longer reads it ([`replay_covered`]
    /// skips segments below its `covered`). Returns whether a segment was removed.
    ///
    /// [`replay_covered`]: super::replay_covered
    pub(crate) fn remove_segment(&self, first: Seq) -> Result<bool> {
        let path = {
            let mut st = self.inner.state.lock();
            let Some(i) = st.segments.iter().position(|(s, _)| *s == first) else {
                return Ok(false);
            };
            if i + 1 == st.segments.len() {
                return Err(Error::InvalidParameter {
                    name: "segment",
                    value: first.to_string(),
                    expected: "a sealed segment, not the active one",
                });
            }
            let path = st.segments.remove(i).1;
            st.forget_unsynced();
            path
        };
        fs::remove_file(&path).map_err(io_err(&path, "remove segment"))?;
        sync_dir(&self.inner.dir)?;
        Ok(true)
    }

    /// Sequence number of the last record appended (acknowledged or in flight); 0 when none.
    pub fn last_seq(&self) -> Seq {
        self.inner.state.lock().assigned
    }

    /// Sequence number of the last record known to be fsynced.
    pub fn synced_seq(&self) -> Seq {
        self.inner.state.lock().synced
    }

    /// Paths of the live segments, oldest first; the last is the active one.
    pub fn segments(&self) -> Vec<PathBuf> {
        let st = self.inner.state.lock();
        st.segments.iter().map(|(_, p)| p.clone()).collect()
    }

    /// The fsync policy the log was opened with.
    pub fn policy(&self) -> FsyncPolicy {
        self.inner.policy
    }

    /// Counters since the log was opened.
    pub fn stats(&self) -> WalStats {
        let c = &self.inner.counters;
        WalStats {
            appends: c.appends.load(Ordering::Relaxed),
            records: c.records.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    /// Returns once record `target` is written (and fsynced if `need_sync`), leading groups as
    /// needed (see the module docs).
    fn commit(&self, st: &mut MutexGuard<'_, State>, target: Seq, need_sync: bool) -> Result<()> {
        loop {
            let done = if need_sync { st.synced } else { st.written };
            if done >= target {
                return Ok(());
            }
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if st.leader {
                self.cond.wait(st);
                continue;
            }
            st.leader = true;
            let batch = st.take_pending();
            let upto = st.assigned;
            let file = Arc::clone(&st.file);
            let name = st.file_name.clone();
            // Segments sealed unsynced hold records before the active one's: synced first.
            let sealed = if need_sync {
                std::mem::take(&mut st.unsynced)
            } else {
                Vec::new()
            };
            let res = MutexGuard::unlocked(st, || {
                for (_, f, n) in &sealed {
                    self.sync_file(f, n)?;
                }
                self.write_group(&file, &name, &batch, need_sync)
            });
            st.leader = false;
            match res {
                Ok(()) => {
                    st.written = upto;
                    if need_sync {
                        st.synced = upto;
                    }
                }
                Err(e) => st.error = Some(e),
            }
            st.spare = batch;
            st.spare.clear();
            self.cond.notify_all();
        }
    }

    /// One group: one `write` of `batch` (if not empty), then one fsync if `sync`.
    fn write_group(&self, file: &File, name: &str, batch: &[u8], sync: bool) -> Result<()> {
        if !batch.is_empty() {
            let mut f = file;
            let fault = self
                .faults
                .as_ref()
                .and_then(|p| p.on_write(FaultSource::Log));
            if let Some(fault) = fault.filter(|&f| f != WriteFault::FailSync) {
                if fault == WriteFault::Torn {
                    f.write_all(&batch[..batch.len() / 2])
                        .map_err(|e| Error::io(name, "append to log", &e))?;
                }
                let kind = match fault {
                    WriteFault::NoSpace => std::io::ErrorKind::StorageFull,
                    _ => std::io::ErrorKind::Other,
                };
                let e = std::io::Error::new(kind, format!("injected fault: {fault:?}"));
                return Err(Error::io(name, "append to log", &e));
            }
            f.write_all(batch)
                .map_err(|e| Error::io(name, "append to log", &e))?;
            self.counters.groups.fetch_add(1, Ordering::Relaxed);
            self.counters
                .bytes
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        if sync {
            self.sync_file(file, name)?;
        }
        Ok(())
    }

    fn sync_file(&self, file: &File, name: &str) -> Result<()> {
        #[cfg(test)]
        super::tests::sync_delay();
        if self
            .faults
            .as_ref()
            .is_some_and(|p| p.on_sync(FaultSource::Log))
        {
            let e = std::io::Error::other("injected fault: fsync failed");
            return Err(Error::io(name, "fsync log", &e));
        }
        file.sync_data()
            .map_err(|e| Error::io(name, "fsync log", &e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The `EveryMs` thread: every `ms` milliseconds, fsyncs what was written, without taking
    /// the leader role (appends go on during the fsync).
    fn background_sync(&self, ms: u64) {
        let mut stop = self.stop.lock();
        while !*stop {
            self.stop_cond
                .wait_for(&mut stop, Duration::from_millis(ms));
            if *stop {
                break;
            }
            let (target, file, name) = {
                let st = self.state.lock();
                if st.written <= st.synced || st.error.is_some() {
                    continue;
                }
                (st.written, Arc::clone(&st.file), st.file_name.clone())
            };
            let res = MutexGuard::unlocked(&mut stop, || self.sync_file(&file, &name));
            let mut st = self.state.lock();
            match res {
                Ok(()) => st.synced = st.synced.max(target),
                Err(e) => {
                    st.error.get_or_insert(e);
                    self.cond.notify_all();
                }
            }
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        *self.inner.stop.lock() = true;
        self.inner.stop_cond.notify_all();
        if let Some(h) = self.syncer.take() {
            let _ = h.join();
        }
        // A clean close makes everything durable under every policy; an error here was, or
        // will be, seen by an append or at the next replay.
        let _ = self.sync();
    }
}
