//! The writer child of one cycle: writes until it is killed, reporting each operation on
//! stdout (`begin` before it starts, `ack` once acknowledged), in the protocol the parent reads.

use std::io::Write;
use std::time::Instant;

use lidx::kv::{Store, WriteBatch};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::error::TortureError;
use super::writes::{key_bytes, value_bytes, TortureSpec, CHILD_LIFETIME, KEYS};

/// The child of `cycle`, whose parent is process `parent`: writes with `spec` until killed,
/// reporting each operation on stdout. An error is reported as a line `error ...` and ends
/// it; a panic in any writer as a line `panic ...`, then the process aborts. It returns only
/// once its parent is gone or it outlived any kill.
///
/// Errors: the store's, and [`TortureError::DeathSignal`] or [`TortureError::ParentGone`]
/// when it cannot make sure it dies with its parent.
pub fn child(spec: &TortureSpec, cycle: u64, parent: u32) -> Result<(), TortureError> {
    // A panic in any thread is reported to the parent as a line, then ends the child at once:
    // the other writers must not go on as if nothing happened.
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string().replace('\n', " ");
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "panic {message}").and_then(|()| out.flush());
        let _ = writeln!(std::io::stderr(), "{info}");
        std::process::abort();
    }));
    die_with_parent(parent)?;
    let engine = spec.engine;
    let store = match Store::open(&spec.db, &spec.options(cycle)) {
        Ok(s) => s,
        Err(e) => {
            println!("error {e}");
            return Err(e.into());
        }
    };
    let start = Instant::now();
    let writers = spec.writers;
    std::thread::scope(|s| {
        for t in 0..writers {
            let store = &store;
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(spec.seed ^ (cycle << 8 | t));
                let mut i = 0u64;
                while start.elapsed() < CHILD_LIFETIME && parent_alive(parent) {
                    if t == 0 && spec.inject_panic_after == Some(i) {
                        panic!("the injected panic after {i} acknowledged writes");
                    }
                    // Writer t owns the keys = t mod writers: one operation in flight per key.
                    let n = if rng.gen_range(0..3) == 0 {
                        rng.gen_range(2..=8)
                    } else {
                        1
                    };
                    let mut keys: Vec<u64> = (0..n)
                        .map(|_| rng.gen_range(0..KEYS / writers) * writers + t)
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    let version = cycle << 32 | t << 24 | i;
                    let delete = rng.gen_range(0..4) == 0;
                    let list = keys
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(",");
                    let what = if delete {
                        "del".to_string()
                    } else {
                        version.to_string()
                    };
                    let say = |kind: &str| {
                        let mut out = std::io::stdout().lock();
                        // The parent reads until the kill; a write error means it is gone.
                        let _ =
                            writeln!(out, "{kind} {t} {list} {what}").and_then(|()| out.flush());
                    };
                    say("begin");
                    let value = value_bytes(version);
                    let done = if keys.len() == 1 {
                        let k = key_bytes(engine, keys[0]);
                        if delete {
                            store.delete(&k)
                        } else {
                            store.put(&k, &value)
                        }
                    } else {
                        let mut b = WriteBatch::new();
                        for &k in &keys {
                            let added = if delete {
                                b.delete(&key_bytes(engine, k))
                            } else {
                                b.put(&key_bytes(engine, k), &value)
                            };
                            if let Err(e) = added {
                                println!("error {e}");
                                return;
                            }
                        }
                        store.write(&b)
                    };
                    if let Err(e) = done {
                        println!("error {e}");
                        return;
                    }
                    // With power loss the parent cuts the log after the last acknowledged
                    // record: its sequence number (a `log` store's collector logs records of
                    // its own between the writer's, so the writes' count is not it).
                    if spec.power_loss {
                        let seq = store.snapshot().seq();
                        let mut out = std::io::stdout().lock();
                        let _ =
                            writeln!(out, "ack {t} {list} {what} {seq}").and_then(|()| out.flush());
                    } else {
                        say("ack");
                    }
                    i += 1;
                }
            });
        }
    });
    Ok(())
}

/// Asks the kernel to kill this process when its parent dies (Linux), and fails if the parent
/// is already gone (it died before the request).
fn die_with_parent(parent: u32) -> Result<(), TortureError> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_PDEATHSIG only sets a flag of this process; the arguments are plain
        // integers.
        let r = unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if r != 0 {
            return Err(TortureError::DeathSignal(std::io::Error::last_os_error()));
        }
    }
    if !parent_alive(parent) {
        return Err(TortureError::ParentGone { parent });
    }
    Ok(())
}

/// True while `parent` is still this process's parent (an orphan is adopted by another).
fn parent_alive(parent: u32) -> bool {
    // SAFETY: getppid has no arguments and cannot fail.
    let ppid = unsafe { libc::getppid() };
    u32::try_from(ppid).is_ok_and(|p| p == parent)
}
