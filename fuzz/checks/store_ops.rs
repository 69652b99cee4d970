//! The model-based check behind `store_hybrid_ops`, `store_btree_ops`, `store_lsm_ops` and
//! `store_trie_ops`:
//! the input decodes to
//! a sequence of store operations (put, delete, batch, get, range both ways, snapshot then
//! write, compact, close and reopen, crash and reopen, arm a fault), run against one engine
//! whose block files sit on the fault-injecting device and against a `BTreeMap`.
//!
//! A tiny memory budget makes merges (`hybrid`), flushes and compactions (`lsm`, levels two
//! runs apart) and checkpoints (`btree`) happen every few writes, so the static table, the frozen and dynamic stages, checkpoints and log replay all
//! answer. A `log` store has no block files: it is opened without the device, so an armed
//! fault changes nothing and every answer must be the model's. Without a fault every answer must be the model's. With a fault armed the rules of
//! `crates/lidx/tests/store_faults.rs` apply: an operation may fail, with a typed error only
//! (`Io`, `ChecksumMismatch`, `Corrupt`); after a failed write or compaction nothing is written
//! until the store is reopened on a sound device, and then it holds the model with the failed
//! write applied whole or not at all. Until that reopen a read answers each key with its value
//! before or after the failed write. A crash is a drop without close: the log after the last
//! merge or checkpoint is replayed. A file fault ([`super::store_file_faults`]) closes the
//! store, damages or swaps one of its files, and checks that the open refuses it (or, where the
//! file is still valid, answers as the model), then puts the file back and reopens.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use lidx::io::{DeviceKind, FaultPlan, Storage};
use lidx::kv::FsyncPolicy;
use lidx::kv::{CreateOptions, Engine, Store, StoreOptions, WriteBatch};
use lidx::Error;

use super::input::{arm, Input, MAX_OPS};
use super::store_file_faults::{self as file_faults, FileFault, Saved};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// What one write sets: each key's new value, `None` for a delete.
type Changes = Vec<(Vec<u8>, Option<Vec<u8>>)>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Key bytes: the extremes and a few letters, so that keys collide and prefix each other.
const ALPHABET: [u8; 5] = [0x00, b'a', b'b', b'c', 0xff];

enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Batch(Changes),
    Get(Vec<u8>),
    Range(Option<Vec<u8>>, Option<Vec<u8>>, bool),
    /// Takes a snapshot, writes a batch (and compacts, when set), then checks the snapshot
    /// still reads the state before.
    SnapshotThen(Changes, bool),
    Compact,
    /// Closes the store and opens it again.
    Reopen,
    /// Drops the store without closing it and opens it again.
    Crash,
    /// Arms a fault from two bytes ([`super::input::arm`]).
    Fault(u8, u8),
    /// Closes the store and faults one of its files: the fault and which file.
    File(FileFault, u8),
}

/// A key of 1 to 3 letters (one byte), or of up to 4 KiB of one letter (two bytes).
fn key(input: &mut Input) -> Option<Vec<u8>> {
    let b = input.byte()?;
    if b >= 240 {
        let len = 1 + usize::from(input.byte()?) * 16;
        return Some(vec![ALPHABET[usize::from(b % 5)]; len]);
    }
    let mut digits = usize::from(b / 3);
    let letters = (0..=b % 3).map(|_| {
        let c = ALPHABET[digits % 5];
        digits /= 5;
        c
    });
    Some(letters.collect())
}

/// A value of 0 to 39 bytes, or of up to 3 KiB (past half a 4 KiB leaf: an overflow run in
/// the `btree` engine), its bytes telling the `n`th operation's value from any other's.
fn value(input: &mut Input, n: usize) -> Option<Vec<u8>> {
    let b = input.byte()?;
    let len = if b & 0x80 == 0 {
        usize::from(b % 40)
    } else {
        usize::from(b & 0x7f) * 24
    };
    let tag = (n as u32).to_le_bytes();
    Some((0..len).map(|i| tag[i % 4] ^ (i / 4) as u8).collect())
}

/// Up to 7 puts and deletes.
fn changes(input: &mut Input, n: usize) -> Option<Changes> {
    let count = input.byte()? % 8;
    (0..count)
        .map(|_| {
            let delete = input.byte()? % 4 == 0;
            let k = key(input)?;
            Some((k, if delete { None } else { Some(value(input, n)?) }))
        })
        .collect()
}

fn op(input: &mut Input, n: usize) -> Option<Op> {
    Some(match input.byte()? % 17 {
        0..=4 => Op::Put(key(input)?, value(input, n)?),
        5 | 6 => Op::Delete(key(input)?),
        7 => Op::Batch(changes(input, n)?),
        8 | 9 => Op::Get(key(input)?),
        10 => {
            let flags = input.byte()?;
            let lo = if flags & 1 == 1 {
                Some(key(input)?)
            } else {
                None
            };
            let hi = if flags & 2 == 2 {
                Some(key(input)?)
            } else {
                None
            };
            Op::Range(lo, hi, flags & 4 == 4)
        }
        11 => Op::SnapshotThen(changes(input, n)?, input.flag()?),
        12 => Op::Compact,
        13 => Op::Reopen,
        14 => Op::Crash,
        15 => Op::Fault(input.byte()?, input.byte()?),
        _ => Op::File(FileFault::from_byte(input.byte()?), input.byte()?),
    })
}

fn apply(model: &mut Model, changes: &Changes) {
    for (k, v) in changes {
        match v {
            Some(v) => model.insert(k.clone(), v.clone()),
            None => model.remove(k),
        };
    }
}

/// The model's entries from `lo` (included) to `hi` (excluded), ascending or descending.
fn expected_range(m: &Model, lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>, fwd: bool) -> Entries {
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return Entries::new();
        }
    }
    let (lo, hi) = bounds(lo, hi);
    let it = m
        .range::<[u8], _>((lo, hi))
        .map(|(k, v)| (k.clone(), v.clone()));
    if fwd {
        it.collect()
    } else {
        it.rev().collect()
    }
}

fn bounds<'a>(
    lo: &'a Option<Vec<u8>>,
    hi: &'a Option<Vec<u8>>,
) -> (Bound<&'a [u8]>, Bound<&'a [u8]>) {
    (
        lo.as_deref().map_or(Bound::Unbounded, Bound::Included),
        hi.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
    )
}

/// A short form of an entry list for a failure message (values can be kilobytes).
fn short(entries: &Entries) -> Vec<(Vec<u8>, usize)> {
    entries
        .iter()
        .map(|(k, v)| (k[..k.len().min(8)].to_vec(), v.len()))
        .collect()
}

/// One run: the store, the model, and what the faults left uncertain.
struct Run {
    dir: tempfile::TempDir,
    /// A `log` store: no block files, no device.
    log: bool,
    plan: Arc<FaultPlan>,
    options: StoreOptions,
    store: Option<Store>,
    model: Model,
    /// A fault was armed since the last reopen: errors are allowed.
    armed: bool,
    /// A write or compaction failed since the last reopen: nothing more is written.
    failed: bool,
    /// The failed write's changes, there whole or not at all.
    unsure: Option<Changes>,
    /// The engine, for the foreign store.
    engine: Engine,
    /// A store of the same engine whose files are swapped in, made at the first file fault.
    foreign: Option<tempfile::TempDir>,
    /// The store's files as the last file fault found them.
    saved: Saved,
}

impl Run {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The run's storage: its files on the fault-injecting device, under the store's shared
    /// block cache when the input asks for one (`cache_bytes`), as `Store::open` makes it.
    fn storage(&self) -> Arc<Storage> {
        let storage = Storage::new(self.path(), DeviceKind::File { direct: false }, 4096)
            .expect("a storage in the run's directory");
        Arc::new(
            storage
                .with_faults(Arc::clone(&self.plan))
                .with_shared_cache(self.options.cache_bytes / 4096),
        )
    }

    /// Opens the store in the run's directory: on the device, or (a `log` store) alone.
    fn open(&self) -> lidx::Result<Store> {
        if self.log {
            Store::open(self.path(), &self.options)
        } else {
            Store::open_on(self.path(), self.storage(), &self.options)
        }
    }

    fn store(&self) -> &Store {
        self.store.as_ref().expect("an open store")
    }

    /// Allows `e` only as a typed fault while one is armed.
    fn allowed(&self, what: &str, e: &Error) {
        assert!(self.armed, "{what}: an error with no fault armed: {e}");
        assert!(
            matches!(
                e,
                Error::Io { .. } | Error::ChecksumMismatch { .. } | Error::Corrupt { .. }
            ),
            "{what}: an untyped fault: {e:?}"
        );
    }

    /// The model with the failed write applied.
    fn model_after_unsure(&self) -> Model {
        let mut m = self.model.clone();
        if let Some(changes) = &self.unsure {
            apply(&mut m, changes);
        }
        m
    }

    fn write(&mut self, changes: Changes) {
        if self.failed {
            return;
        }
        let done = match changes.as_slice() {
            [(k, Some(v))] => self.store().put(k, v),
            [(k, None)] => self.store().delete(k),
            _ => {
                let mut batch = WriteBatch::new();
                for (k, v) in &changes {
                    match v {
                        Some(v) => batch.put(k, v),
                        None => batch.delete(k),
                    }
                    .expect("keys and values within the limits");
                }
                self.store().write(&batch)
            }
        };
        match done {
            Ok(()) => apply(&mut self.model, &changes),
            Err(e) => {
                self.allowed("a write", &e);
                self.failed = true;
                self.unsure = Some(changes);
            }
        }
    }

    fn compact(&mut self) {
        if self.failed {
            return;
        }
        if let Err(e) = self.store().compact() {
            self.allowed("compact", &e);
            self.failed = true;
        }
    }

    fn get(&self, k: &[u8]) {
        match self.store().get(k) {
            Ok(got) => {
                let want = self.model.get(k);
                if got.as_ref() != want && self.failed {
                    let after = self.model_after_unsure();
                    assert_eq!(got.as_ref(), after.get(k), "get {k:?} after a failed write");
                } else {
                    assert_eq!(got.as_ref(), want, "get {k:?}");
                }
            }
            Err(e) => self.allowed("get", &e),
        }
    }

    /// The entries a read gave, or `None` after an allowed error.
    fn entries(
        &self,
        what: &str,
        r: impl Iterator<Item = lidx::Result<(Vec<u8>, Vec<u8>)>>,
    ) -> Option<Entries> {
        match r.collect::<lidx::Result<Entries>>() {
            Ok(entries) => Some(entries),
            Err(e) => {
                self.allowed(what, &e);
                None
            }
        }
    }

    fn range(&self, lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>, fwd: bool) {
        let r = if fwd {
            self.store().range(bounds(lo, hi))
        } else {
            self.store().range_rev(bounds(lo, hi))
        };
        let Some(got) = self.entries("range", r) else {
            return;
        };
        let want = expected_range(&self.model, lo, hi, fwd);
        if got == want {
            return;
        }
        assert!(
            self.failed,
            "range {lo:?}..{hi:?} fwd {fwd}: got {:?}, want {:?}",
            short(&got),
            short(&want)
        );
        // A failed write may be in the tree in part until the reopen: every entry is one the
        // model has before or after it, in order.
        let after = self.model_after_unsure();
        for (k, v) in &got {
            assert!(
                self.model.get(k) == Some(v) || after.get(k) == Some(v),
                "range after a failed write: {k:?} with {} bytes",
                v.len()
            );
        }
        assert!(
            got.windows(2).all(|w| (w[0].0 < w[1].0) == fwd),
            "range out of order"
        );
    }

    fn snapshot_then(&mut self, changes: Changes, compact: bool) {
        let snap = self.store().snapshot();
        let before = (!self.failed).then(|| self.model.clone());
        let keys: Vec<Vec<u8>> = changes.iter().map(|(k, _)| k.clone()).collect();
        self.write(changes);
        if compact {
            self.compact();
        }
        let Some(before) = before else {
            return;
        };
        for k in &keys {
            match snap.get(k) {
                Ok(got) => assert_eq!(got.as_ref(), before.get(k), "snapshot get {k:?}"),
                Err(e) => self.allowed("snapshot get", &e),
            }
        }
        let all = (Bound::<&[u8]>::Unbounded, Bound::<&[u8]>::Unbounded);
        for fwd in [true, false] {
            let r = if fwd {
                snap.range(all)
            } else {
                snap.range_rev(all)
            };
            if let Some(got) = self.entries("snapshot range", r) {
                let want = expected_range(&before, &None, &None, fwd);
                assert!(
                    got == want,
                    "snapshot range fwd {fwd}: got {:?}, want {:?}",
                    short(&got),
                    short(&want)
                );
            }
        }
    }

    /// Closes (`clean`) or drops the store, opens it on a sound device, and settles the model:
    /// the failed write is there whole or not at all.
    fn reopen(&mut self, clean: bool) {
        let store = self.store.take().expect("an open store");
        if clean {
            if let Err(e) = store.close() {
                self.allowed("close", &e);
            }
        } else {
            drop(store);
        }
        self.plan.disarm();
        let store = self
            .open()
            .unwrap_or_else(|e| panic!("reopening on a sound device: {e}"));
        let got: Model = store
            .range(..)
            .collect::<lidx::Result<_>>()
            .unwrap_or_else(|e| panic!("reading a reopened store: {e}"));
        if got != self.model {
            let after = self.model_after_unsure();
            assert!(
                self.unsure.is_some() && got == after,
                "reopened: {:?}, acknowledged writes: {:?}, failed write: {:?}",
                short(&got.into_iter().collect()),
                short(&self.model.clone().into_iter().collect()),
                self.unsure.as_ref().map(|c| c.len()),
            );
            self.model = after;
        }
        self.store = Some(store);
        self.armed = false;
        self.failed = false;
        self.unsure = None;
    }

    /// Closes the store, applies `fault` to the file `pick` chooses, and checks what an open
    /// does (see [`super::store_file_faults`]); then puts the file back and reopens.
    fn file_fault(&mut self, fault: FileFault, pick: u8) {
        if self.armed {
            self.reopen(false);
        }
        let store = self.store.take().expect("an open store");
        store.close().expect("closing on a sound device");
        let engine = self.engine;
        let foreign = self
            .foreign
            .get_or_insert_with(|| file_faults::foreign_store(engine))
            .path()
            .to_path_buf();
        if let Some((before, may_open)) =
            file_faults::apply(fault, pick, self.path(), &foreign, &self.saved)
        {
            match self.open() {
                Ok(store) => {
                    assert!(may_open, "{fault:?} of {:?}: the store opened", before[0].0);
                    let got: Model = store
                        .range(..)
                        .collect::<lidx::Result<_>>()
                        .unwrap_or_else(|e| panic!("{fault:?}: reading the store: {e}"));
                    assert!(got == self.model, "{fault:?}: a wrong answer");
                    store.close().expect("closing on a sound device");
                }
                Err(e) => {
                    file_faults::check_refusal(fault, &e);
                    let report = Store::check(self.path()).expect("checking the store");
                    assert!(
                        !report.is_sound(),
                        "{fault:?}: refused ({e}) but checked sound"
                    );
                }
            }
            file_faults::restore(&before);
        }
        let dir = self.path().to_path_buf();
        self.saved.save(&dir);
        self.store = Some(
            self.open()
                .unwrap_or_else(|e| panic!("reopening after putting the file back: {e}")),
        );
    }

    /// Settles any fault with a crash and reopen, checks every entry both ways, closes, and
    /// checks the directory.
    fn finish(mut self) {
        if self.armed {
            self.reopen(false);
        }
        for fwd in [true, false] {
            self.range(&None, &None, fwd);
        }
        let store = self.store.take().expect("an open store");
        store.close().expect("closing on a sound device");
        let report = Store::check(self.path()).expect("checking the closed store");
        assert!(report.is_sound(), "{report:?}");
    }
}

/// A directory for a run (or a foreign store): in `/dev/shm` where there is one, so that the store's syncs cost
/// nothing (ten times faster on a disk); a crash here is a drop without close, not a power
/// loss, so a synced disk would check nothing more.
pub fn run_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

/// Runs the operations `data` decodes to on a new store of `engine`; see the module docs.
pub fn run(engine: Engine, data: &[u8]) {
    let mut input = Input::new(data);
    let Some(setup) = input.byte() else {
        return;
    };
    let options = StoreOptions {
        fsync: FsyncPolicy::Never,
        // The `lsm` engine's smallest budget is two memtables of 4 KiB.
        memory_budget: if matches!(engine, Engine::Lsm(_)) {
            8192
        } else {
            4096
        } << (setup & 1),
        cache_bytes: if setup & 2 == 2 { 64 << 10 } else { 0 },
        // A `log` store's collector and checkpoints run within a few writes.
        log_segment_bytes: 4096 << (setup >> 2 & 3),
        ..StoreOptions::default()
    };
    let mut run = Run {
        dir: run_dir(),
        log: matches!(engine, Engine::Log(_)),
        plan: FaultPlan::new(),
        options,
        store: None,
        model: Model::new(),
        armed: false,
        failed: false,
        unsure: None,
        engine,
        foreign: None,
        saved: Saved::default(),
    };
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    run.store = Some(
        if run.log {
            Store::create(run.path(), &create, &run.options)
        } else {
            Store::create_on(run.path(), run.storage(), &create, &run.options)
        }
        .expect("creating a store"),
    );
    for n in 0..MAX_OPS {
        let Some(op) = op(&mut input, n) else {
            break;
        };
        match op {
            Op::Put(k, v) => run.write(vec![(k, Some(v))]),
            Op::Delete(k) => run.write(vec![(k, None)]),
            Op::Batch(changes) => run.write(changes),
            Op::Get(k) => run.get(&k),
            Op::Range(lo, hi, fwd) => run.range(&lo, &hi, fwd),
            Op::SnapshotThen(changes, compact) => run.snapshot_then(changes, compact),
            Op::Compact => run.compact(),
            Op::Reopen => run.reopen(true),
            Op::Crash => run.reopen(false),
            // A `log` store has no device to fault: every answer stays the model's.
            Op::Fault(_, _) if run.log => {}
            Op::Fault(after, how) => {
                arm(&run.plan, after, how);
                run.armed = true;
            }
            Op::File(fault, pick) => run.file_fault(fault, pick),
        }
    }
    run.finish();
}
