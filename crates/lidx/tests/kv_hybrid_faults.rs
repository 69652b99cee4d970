//! The durable hybrid index of fixed-size keys on a device that fails (issue 13): every kind
//! of write fault struck at many points of a run whose merges write static files all along.
//! Every fault is a typed error, never a panic, and reopening on a sound device recovers every
//! acknowledged write, the one that met the fault whole or not at all.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use lidx::io::{DeviceKind, FaultPlan, Storage, WriteFault};
use lidx::kv::FsyncPolicy;
use lidx::kv::{HybridIndex, HybridOptions};
use lidx::raw::kv::hybrid::MergeTrigger;
use lidx::raw::kv::WalOptions;
use lidx::Error;

fn storage(dir: &Path, plan: Option<Arc<FaultPlan>>) -> Arc<Storage> {
    let storage = Storage::new(dir, DeviceKind::File { direct: false }, 4096).unwrap();
    Arc::new(match plan {
        Some(plan) => storage.with_faults(plan),
        None => storage,
    })
}

fn options() -> HybridOptions {
    HybridOptions {
        trigger: MergeTrigger::Constant(64),
        wal: WalOptions {
            fsync: FsyncPolicy::Never,
            ..WalOptions::default()
        },
        ..HybridOptions::default()
    }
}

/// Write `n`: a put of key `n * 37 % 500`, or every 9th a delete.
fn write(h: &HybridIndex<u64>, n: u64) -> (u64, Option<[u8; 8]>, lidx::Result<()>) {
    let key = n * 37 % 500;
    if n % 9 == 8 {
        (key, None, h.delete(&key))
    } else {
        let value = n.to_le_bytes();
        (key, Some(value), h.put(key, &value))
    }
}

#[test]
fn write_faults_during_merges_lose_no_acknowledged_write() {
    let initial: Vec<u64> = (0..2_000).map(|k| k * 1_000).collect();
    let mut struck = 0;
    for fault in WriteFault::ALL {
        for after in [0, 1, 2, 4, 7, 12, 20] {
            let case = format!("{fault:?} after {after} requests");
            let dir = tempfile::tempdir().unwrap();
            let plan = FaultPlan::new();
            let h = HybridIndex::create(
                storage(dir.path(), Some(Arc::clone(&plan))),
                &initial,
                |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
                options(),
            )
            .unwrap();
            let mut model: BTreeMap<u64, [u8; 8]> =
                initial.iter().map(|&k| (k, k.to_le_bytes())).collect();
            plan.fail_write_after(after, fault);
            let mut failed = None;
            for n in 0..1_500 {
                let (key, value, done) = write(&h, n);
                match done {
                    Ok(()) => match value {
                        Some(v) => model.insert(key, v),
                        None => model.remove(&key),
                    },
                    Err(e) => {
                        assert!(matches!(e, Error::Io { .. }), "{case}: {e:?}");
                        failed = Some((key, value));
                        break;
                    }
                };
            }
            if let Err(e) = h.wait_for_merges() {
                assert!(matches!(e, Error::Io { .. }), "{case}: {e:?}");
            }
            drop(h);
            struck += u64::from(plan.injected() > 0);
            let h = HybridIndex::<u64>::open(storage(dir.path(), None), options()).unwrap();
            let mut buf = [0u8; 8];
            let mut keys: Vec<u64> = model.keys().copied().collect();
            keys.extend(0..500);
            for k in keys {
                let found = h.get(&k, &mut buf).unwrap().then_some(buf);
                let want = model.get(&k).copied();
                let in_doubt = failed.is_some_and(|(fk, fv)| fk == k && found == fv);
                assert!(
                    found == want || in_doubt,
                    "{case}: key {k} reads {found:?}, acknowledged {want:?}"
                );
            }
        }
    }
    assert!(struck >= 20, "{struck} runs met their fault");
}
