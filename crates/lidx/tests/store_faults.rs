//! Every `Store` engine on a device that fails (issue 13): failed, out-of-space and torn writes
//! and failed syncs of the table and page files, of the write-ahead log's appends and fsyncs,
//! and of the manifest's commits, struck at many points of a run whose tiny memory budget makes merges (`hybrid`) and
//! checkpoints (`btree`) write all along; and blocks that read back damaged.
//!
//! What must hold: every fault is a typed error, never a panic; a write that returned `Ok`
//! (acknowledged) is never lost: reopening the directory on a sound device recovers every one,
//! and the write that met the fault is either there whole or not at all; no read returns a
//! wrong value.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

mod store_common;
use lidx::io::{DeviceKind, FaultPlan, FaultScope, Storage, WriteFault};
use lidx::kv::FsyncPolicy;
use lidx::kv::{CreateOptions, Engine, Store, StoreOptions, WriteBatch};
use lidx::Error;
use store_common::{options_for, ENGINES};

const FAULTS: [WriteFault; 4] = WriteFault::ALL;

fn options() -> StoreOptions {
    StoreOptions {
        fsync: FsyncPolicy::Never,
        memory_budget: 4096,
        cache_bytes: 0,
        ..StoreOptions::default()
    }
}

/// A new `engine` store in `dir` on a storage whose faults `plan` injects.
fn create(engine: Engine, dir: &Path, plan: &Arc<FaultPlan>, options: &StoreOptions) -> Store {
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    Store::create_on(dir, storage(dir, Some(Arc::clone(plan))), &create, options).unwrap()
}

fn storage(dir: &Path, plan: Option<Arc<FaultPlan>>) -> Arc<Storage> {
    let storage = Storage::new(dir, DeviceKind::File { direct: false }, 4096).unwrap();
    Arc::new(match plan {
        Some(plan) => storage.with_faults(plan),
        None => storage,
    })
}

fn key(i: u64) -> Vec<u8> {
    format!("key{:05}", i * 7919 % 1000).into_bytes()
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// What one write sets: each key's new value, `None` for a delete.
type Changes = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// The `n`th write of a run, done on `store`: mostly puts (a batch every 10th), a delete every
/// 13th. Returns what it sets and whether the store acknowledged it.
fn write(store: &Store, n: u64) -> (Changes, lidx::Result<()>) {
    let value = format!("value {n} {}", "x".repeat((n % 40) as usize)).into_bytes();
    if n % 10 == 9 {
        let changes: Changes = (0..4)
            .map(|j| (key(n + j * 101), Some(value.clone())))
            .collect();
        let mut batch = WriteBatch::new();
        for (k, v) in &changes {
            batch.put(k, v.as_deref().unwrap_or_default()).unwrap();
        }
        (changes, store.write(&batch))
    } else if n % 13 == 12 {
        (vec![(key(n), None)], store.delete(&key(n)))
    } else {
        (
            vec![(key(n), Some(value.clone()))],
            store.put(&key(n), &value),
        )
    }
}

fn apply(model: &mut Model, changes: &Changes) {
    for (k, v) in changes {
        match v {
            Some(v) => model.insert(k.clone(), v.clone()),
            None => model.remove(k),
        };
    }
}

/// The writes of a run in order, each with whether it was acknowledged.
type Log = Vec<(Changes, bool)>;

/// The store in `dir`, opened on a sound device, holds what the acknowledged writes of `log`
/// set, each unacknowledged one applied whole or not at all: never part of one, never less.
fn recovered(engine: Engine, case: &str, dir: &Path, log: &Log) {
    let store = Store::open_on(dir, storage(dir, None), &options_for(engine, options())).unwrap();
    let got: Model = store.range(..).map(|e| e.unwrap()).collect();
    let unsure: Vec<usize> = (0..log.len()).filter(|&i| !log[i].1).collect();
    assert!(
        unsure.len() <= 4,
        "{case}: too many failed writes to enumerate"
    );
    let candidates: Vec<Model> = (0..1u32 << unsure.len())
        .map(|mask| {
            let mut m = Model::new();
            for (i, (changes, acked)) in log.iter().enumerate() {
                let pick = unsure.iter().position(|&u| u == i);
                if *acked || pick.is_some_and(|p| mask & (1 << p) != 0) {
                    apply(&mut m, changes);
                }
            }
            m
        })
        .collect();
    if !candidates.contains(&got) {
        let acked = &candidates[0];
        let differ = |a: &Model, b: &Model| {
            a.iter()
                .filter(|(k, v)| b.get(*k) != Some(*v))
                .map(|(k, v)| {
                    format!(
                        "{}={}",
                        String::from_utf8_lossy(k),
                        String::from_utf8_lossy(v)
                    )
                })
                .collect::<Vec<_>>()
        };
        panic!(
            "{case}: recovered {} keys, the acknowledged writes set {} ({} writes failed)\n\
             only recovered: {:?}\nonly acknowledged: {:?}",
            got.len(),
            acked.len(),
            unsure.len(),
            differ(&got, acked),
            differ(acked, &got),
        );
    }
    store.close().unwrap();
}

fn typed(e: &Error) {
    assert!(
        matches!(
            e,
            Error::Io { .. } | Error::ChecksumMismatch { .. } | Error::Corrupt { .. }
        ),
        "an untyped fault: {e:?}"
    );
    assert!(!e.to_string().is_empty());
}

#[test]
fn write_faults_lose_no_acknowledged_write() {
    let mut struck = 0;
    let points = [
        (FaultScope::Devices, &[0, 1, 3, 8, 21, 34][..]),
        (FaultScope::Log, &[0, 40, 250][..]),
        (FaultScope::Manifest, &[0, 1, 4][..]),
    ];
    for engine in ENGINES {
        for (scope, afters) in points {
            for (fault, &after) in FAULTS
                .iter()
                .flat_map(|f| afters.iter().map(move |a| (*f, a)))
            {
                let dir = tempfile::tempdir().unwrap();
                let plan = FaultPlan::new();
                let store = create(engine, dir.path(), &plan, &options_for(engine, options()));
                plan.scope(scope);
                plan.fail_write_after(after, fault);
                let case = format!("{engine:?}, {fault:?} after {after} requests of {scope:?}");
                // After the first failure the device works again (the disk had a bad moment,
                // or space was freed): the store either goes on soundly or refuses.
                let mut log = Log::new();
                for n in 0..400 {
                    let (changes, done) = write(&store, n);
                    let acked = match done {
                        Ok(()) => true,
                        Err(e) => {
                            typed(&e);
                            plan.disarm();
                            false
                        }
                    };
                    log.push((changes, acked));
                    if log.iter().filter(|(_, a)| !a).count() == 3 {
                        break;
                    }
                }
                let closed = store.close();
                if let Err(e) = &closed {
                    typed(e);
                }
                if plan.injected() > 0 {
                    struck += 1;
                }
                recovered(engine, &case, dir.path(), &log);
                // Under `fsync: never` the log syncs only when it rotates: a sync fault there
                // may find no sync before the run ends.
                let may_miss =
                    after > 30 || (scope == FaultScope::Log && fault == WriteFault::FailSync);
                assert!(
                    plan.injected() > 0 || may_miss,
                    "{case}: the fault never struck"
                );
            }
        }
    }
    assert!(struck >= 80, "{struck} runs met their fault");
}

#[test]
fn damaged_reads_are_errors_never_wrong_values() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let plan = FaultPlan::new();
        let options = StoreOptions {
            memory_budget: 64 << 10,
            ..options()
        };
        let store = create(engine, dir.path(), &plan, &options);
        let mut model = Model::new();
        for n in 0..2_000 {
            let (changes, done) = write(&store, n);
            done.unwrap();
            apply(&mut model, &changes);
        }
        store.compact().unwrap();
        let mut errors = 0;
        for (i, (k, v)) in model.iter().enumerate() {
            plan.flip_read_after(i as u64 % 3);
            match store.get(k) {
                Ok(got) => assert_eq!(got.as_ref(), Some(v), "{engine:?}: a wrong value"),
                Err(e) => {
                    typed(&e);
                    errors += 1;
                }
            }
            plan.disarm();
        }
        assert!(errors > 0, "{engine:?}: no read met a damaged block");
        for (k, v) in &model {
            assert_eq!(store.get(k).unwrap().as_ref(), Some(v));
        }
        store.close().unwrap();
    }
}

/// A btree checkpoint whose manifest went live but whose directory fsync failed left the
/// store's generation behind, so the next checkpoint rewrote in place the image the live
/// manifest names (a crash during that rewrite would leave it naming a broken image). The next
/// checkpoint now writes an image of its own.
#[test]
fn a_checkpoint_after_a_failed_one_writes_a_new_image() {
    let dir = tempfile::tempdir().unwrap();
    let plan = FaultPlan::new();
    let store = create(Engine::BTree, dir.path(), &plan, &options());
    let images = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("inner-"))
            .collect();
        names.sort();
        names
    };
    store.put(b"a", b"1").unwrap();
    store.compact().unwrap();
    store.put(b"b", b"2").unwrap();
    plan.scope(FaultScope::Manifest);
    // The manifest's and CURRENT.tmp's fsyncs pass, the directory's fails after the rename.
    plan.fail_sync_after(2);
    assert!(store.compact().is_err());
    let live = images().pop().unwrap();
    plan.disarm();
    store.put(b"c", b"3").unwrap();
    store.compact().unwrap();
    let newest = images().pop().unwrap();
    assert!(newest > live, "{newest} must not be {live} rewritten");
    store.close().unwrap();
    let store = Store::open_on(dir.path(), storage(dir.path(), None), &options()).unwrap();
    for (k, v) in [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")] {
        assert_eq!(store.get(k).unwrap().as_deref(), Some(&v[..]));
    }
}
