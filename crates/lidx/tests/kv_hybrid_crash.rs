//! Crash tests of the hybrid index: a child process (this same test binary, re-executed in
//! "child mode" through `LIDX_HYBRID_CRASH_CHILD`) writes to a hybrid index with a tiny merge
//! trigger (so that merges run all the time: the kills land in the middle of freezes, file
//! builds, manifest commits and log trimming) and prints every operation before it starts
//! (`begin`) and after it is acknowledged (`ack`). The parent kills it with `SIGKILL` after a
//! random delay, many times over the same directory, and after each kill reopens the index and
//! checks that every acknowledged write is there, that an operation in flight is either fully
//! there or not at all, that scans and lookups agree (no half-merged state), and that no file
//! of an interrupted merge survives the reopen. Fixed seeds; the directory lives under the
//! target directory (a real disk).

mod crash_child;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lidx::io::{DeviceKind, Storage};
use lidx::kv::FsyncPolicy;
use lidx::kv::{HybridIndex, HybridOptions};
use lidx::raw::kv::hybrid::{MergeTrigger, StaticModel};
use lidx::raw::kv::WalOptions;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CHILD_ENV: &str = "LIDX_HYBRID_CRASH_CHILD";
const DIR_ENV: &str = "LIDX_HYBRID_CRASH_DIR";
const GEN_ENV: &str = "LIDX_HYBRID_CRASH_GEN";
const ITERATIONS: u64 = 24;
const KEYS: u64 = 3000;
const WRITERS: u64 = 2;
/// A child that is never killed (its parent died) stops by itself after this long.
const CHILD_LIFETIME: Duration = Duration::from_secs(20);

fn storage(dir: &Path) -> Arc<Storage> {
    Arc::new(Storage::new(dir, DeviceKind::File { direct: true }, 4096).unwrap())
}

fn options(generation: u64) -> HybridOptions {
    HybridOptions {
        model: if generation.is_multiple_of(2) {
            StaticModel::LecoZoneMap
        } else {
            StaticModel::Pgm { eps: 8 }
        },
        trigger: MergeTrigger::Constant(40),
        merge_threads: 2,
        wal: WalOptions {
            fsync: if generation.is_multiple_of(3) {
                FsyncPolicy::Always
            } else {
                FsyncPolicy::Never
            },
            ..WalOptions::default()
        },
        ..HybridOptions::default()
    }
}

/// Entry point of the child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    if std::env::var(CHILD_ENV).is_err() {
        return;
    }
    let dir = std::path::PathBuf::from(std::env::var(DIR_ENV).unwrap());
    let generation: u64 = std::env::var(GEN_ENV).unwrap().parse().unwrap();
    let h = HybridIndex::<u64>::open(storage(&dir), options(generation)).unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..WRITERS {
            let h = &h;
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(generation << 8 | t);
                let mut i = 0u64;
                while start.elapsed() < CHILD_LIFETIME {
                    // Writer t owns the keys = t mod WRITERS: one operation in flight per key.
                    let key = rng.gen_range(0..KEYS / WRITERS) * WRITERS + t;
                    let version = generation << 32 | t << 24 | i;
                    let delete = rng.gen_range(0..4) == 0;
                    let say = |what: &str| {
                        let mut out = std::io::stdout().lock();
                        if delete {
                            writeln!(out, "{what} {t} {key} del").unwrap();
                        } else {
                            writeln!(out, "{what} {t} {key} {version}").unwrap();
                        }
                        out.flush().unwrap();
                    };
                    say("begin");
                    if delete {
                        h.delete(&key).unwrap();
                    } else {
                        h.put(key, &version.to_le_bytes()).unwrap();
                    }
                    say("ack");
                    i += 1;
                }
            });
        }
    });
}

/// One reported line: (kind, writer, key, Some(version) or None for a delete).
type Line = (String, u64, u64, Option<u64>);

fn run_and_kill(dir: &Path, generation: u64, delay: Duration) -> Vec<Line> {
    let envs = [
        (CHILD_ENV, "1".into()),
        (DIR_ENV, dir.as_os_str().to_owned()),
        (GEN_ENV, generation.to_string().into()),
    ];
    crash_child::run_and_kill(&envs, delay)
        .into_iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() == 4 && (f[0] == "begin" || f[0] == "ack")).then(|| {
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                    f[3].parse().ok(),
                )
            })
        })
        .collect()
}

#[test]
fn hybrid_survives_sigkill_during_writes_and_merges() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = root.path().join("hybrid");
    let initial: Vec<u64> = (0..KEYS).step_by(3).collect();
    // State of every key: Some(version) or None (absent); version 0 for the initial load.
    let mut model: BTreeMap<u64, Option<u64>> = (0..KEYS).map(|k| (k, None)).collect();
    for &k in &initial {
        model.insert(k, Some(0));
    }
    drop(
        HybridIndex::create(
            storage(&dir),
            &initial,
            |_, _, out| out.copy_from_slice(&0u64.to_le_bytes()),
            options(0),
        )
        .unwrap(),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(0x4b1d_c4a5);
    let mut acked_total = 0;
    let mut newest_files = 0;
    for generation in 1..=ITERATIONS {
        let delay = Duration::from_millis(rng.gen_range(60..400));
        let lines = run_and_kill(&dir, generation, delay);
        // Per writer: the acknowledged operations, and the one in flight at the kill.
        let mut in_flight: BTreeMap<u64, (u64, Option<u64>)> = BTreeMap::new();
        for (kind, t, key, version) in lines {
            if kind == "begin" {
                in_flight.insert(t, (key, version));
            } else {
                model.insert(key, version);
                in_flight.remove(&t);
                acked_total += 1;
            }
        }
        let h = HybridIndex::<u64>::open(storage(&dir), options(generation)).unwrap();
        // No leftover of an interrupted merge: the static files are exactly the live ones.
        let statics: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("static-"))
            .collect();
        assert_eq!(
            statics.len(),
            h.stats().static_files,
            "generation {generation}"
        );
        // Files are named static-<merge generation>-<part>.sli.
        for name in &statics {
            let file_generation: u64 = name[7..17].parse().unwrap();
            newest_files = newest_files.max(file_generation);
        }
        let mut buf = [0u8; 8];
        for (&key, want) in model.iter_mut() {
            let got = h
                .get(&key, &mut buf)
                .unwrap()
                .then(|| u64::from_le_bytes(buf));
            let flying = in_flight.values().find(|(k, _)| *k == key);
            match flying {
                Some(&(_, version)) if got == version => *want = version,
                _ => assert_eq!(
                    got, *want,
                    "generation {generation}: key {key} (in flight: {flying:?})"
                ),
            }
        }
        // A full scan shows exactly what the lookups show.
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        h.scan(&0, usize::MAX, &mut keys, &mut payloads).unwrap();
        let from_scan: Vec<(u64, u64)> = keys
            .iter()
            .zip(payloads.chunks_exact(8))
            .map(|(k, p)| (*k, u64::from_le_bytes(p.try_into().unwrap())))
            .collect();
        let from_model: Vec<(u64, u64)> = model
            .iter()
            .filter_map(|(k, v)| v.map(|v| (*k, v)))
            .collect();
        assert_eq!(from_scan, from_model, "generation {generation}");
        drop(h);
    }
    assert!(
        acked_total > 500,
        "the children acknowledged {acked_total} writes"
    );
    eprintln!("{acked_total} writes acknowledged, {newest_files} file generations");
    assert!(
        newest_files > 3 * ITERATIONS,
        "merges must run all the time to be interrupted: {newest_files} generations"
    );
}
