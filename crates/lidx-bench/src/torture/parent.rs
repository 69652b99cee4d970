//! The parent: [`TorturePlan`] (checked before anything is created), [`run`] (the cycles: spawn
//! a writer child, kill it, reopen the store and check it), and the [`Summary`] of what the
//! cycles found.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lidx::kv::{CreateOptions, Engine, Store};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::error::TortureError;
use super::power_loss::cut_log;
use super::writes::{
    key_bytes, panic_message, value_bytes, TortureSpec, CHILD_LIFETIME, KEYS, MAX_WRITERS,
};
use crate::BenchError;

/// The shortest longest delay before a kill, in milliseconds: its fifth, the shortest delay
/// drawn, still leaves a child time to start and write.
pub const MIN_MAX_DELAY_MS: u64 = 50;

/// A torture run: the children's writes, the cycles and the longest delay before a kill.
/// Only [`TorturePlan::new`] makes one, so a plan is always one that can test something.
#[derive(Debug, Clone)]
pub struct TorturePlan {
    spec: TortureSpec,
    cycles: u64,
    max_delay_ms: u64,
}

impl TorturePlan {
    /// A plan of `cycles` kill-and-recover cycles, each child killed after a delay drawn from
    /// a fifth of `max_delay_ms` up to it.
    ///
    /// Errors: [`BenchError::BadSpec`] for writers outside 1 to [`MAX_WRITERS`] (or not 1
    /// with power loss), no cycle, a delay outside [`MIN_MAX_DELAY_MS`] to half a child's
    /// lifetime, or a store directory that exists already (a run writes a store of its own).
    pub fn new(spec: TortureSpec, cycles: u64, max_delay_ms: u64) -> crate::Result<Self> {
        let writers = spec.writers;
        if !(1..=MAX_WRITERS).contains(&writers) || (spec.power_loss && writers != 1) {
            return Err(BenchError::BadSpec {
                what: "--writers",
                got: writers.to_string(),
                expected: if spec.power_loss {
                    "1 with --power-loss (the log's order must be the acknowledgement order)"
                        .to_string()
                } else {
                    format!(
                        "1 to {MAX_WRITERS} writer threads (each owns {KEYS} / writers of the \
                         {KEYS} keys)"
                    )
                },
            });
        }
        let longest = CHILD_LIFETIME.as_millis() as u64 / 2;
        if cycles == 0 || !(MIN_MAX_DELAY_MS..=longest).contains(&max_delay_ms) {
            return Err(BenchError::BadSpec {
                what: "--cycles/--max-delay-ms",
                got: format!("{cycles}/{max_delay_ms}"),
                expected: format!(
                    "at least 1 cycle and a delay of {MIN_MAX_DELAY_MS} to {longest} ms (a \
                     child needs a few ms to start: a shorter delay kills it before its first \
                     write)"
                ),
            });
        }
        if spec.db.exists() {
            return Err(BenchError::BadSpec {
                what: "db",
                got: spec.db.display().to_string(),
                expected: "a directory that does not exist yet: lidx kv torture writes a store \
                           of its own"
                    .to_string(),
            });
        }
        Ok(TorturePlan {
            spec,
            cycles,
            max_delay_ms,
        })
    }

    /// The children's writes.
    pub fn spec(&self) -> &TortureSpec {
        &self.spec
    }

    /// Kill-and-recover cycles.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}

/// What the cycles found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Writes acknowledged by the children (every one checked after each kill).
    pub acknowledged: u64,
    /// Operations in flight at a kill.
    pub in_flight: u64,
    /// Of those, the ones the store shows, whole.
    pub in_flight_applied: u64,
    /// Of those in flight, the batches.
    pub batches_in_flight: u64,
    /// Merges or checkpoints committed (the live file's generation).
    pub merges_seen: u64,
    /// Unsynced log bytes cut (power loss).
    pub log_bytes_cut: u64,
    /// Seconds the cycles took.
    pub seconds: f64,
}

impl Summary {
    /// Fails a run in which no write was acknowledged: it checked nothing.
    fn tested_something(&self, cycles: u64) -> Result<(), TortureError> {
        if self.acknowledged == 0 {
            return Err(TortureError::NothingAcknowledged { cycles });
        }
        Ok(())
    }
}

/// Creates the plan's store, then runs its cycles: each spawns this program with
/// `child_args(cycle)` (which must make it call [`super::child`] for that cycle with the same
/// [`TortureSpec`] and this process's id), kills it, and checks the store. `progress` hears the
/// summary so far every 10 cycles and after the last, with the time since the first.
///
/// Errors: the first violation, under [`TortureError::Cycle`] when a check after a kill found
/// it; a panic of the harness as [`TortureError::Panicked`]; a run with no acknowledged
/// write as [`TortureError::NothingAcknowledged`].
pub fn run(
    plan: &TorturePlan,
    child_args: &dyn Fn(u64) -> Vec<OsString>,
    progress: &mut dyn FnMut(u64, &Summary, Duration),
) -> Result<Summary, TortureError> {
    let spec = &plan.spec;
    let create = CreateOptions {
        engine: spec.engine,
        ..CreateOptions::default()
    };
    Store::create(&spec.db, &create, &spec.options(0))?.close()?;
    // A panic of the parent fails the run with its message, as a child's does.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cycles(plan, child_args, progress)
    }))
    .unwrap_or_else(|payload| {
        Err(TortureError::Panicked {
            message: panic_message(&*payload),
        })
    })
}

/// Runs the kill-and-recover cycles on the new store.
fn cycles(
    plan: &TorturePlan,
    child_args: &dyn Fn(u64) -> Vec<OsString>,
    progress: &mut dyn FnMut(u64, &Summary, Duration),
) -> Result<Summary, TortureError> {
    let spec = &plan.spec;
    let mut state = Parent {
        model: (0..KEYS).map(|k| (k, None)).collect(),
        seq: 0,
        summary: Summary::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let started = Instant::now();
    for cycle in 1..=plan.cycles {
        let delay = rng.gen_range(plan.max_delay_ms / 5..=plan.max_delay_ms);
        let lines = run_child(cycle, &child_args(cycle), Duration::from_millis(delay))?;
        let in_flight = state.account(&lines);
        if spec.power_loss {
            state.summary.log_bytes_cut += cut_log(&spec.db, state.seq, &mut rng)?;
        }
        state
            .verify(spec, cycle, &in_flight)
            .map_err(|e| TortureError::Cycle {
                cycle,
                db: spec.db.clone(),
                source: Box::new(e),
            })?;
        if cycle % 10 == 0 || cycle == plan.cycles {
            progress(cycle, &state.summary, started.elapsed());
        }
    }
    state.summary.tested_something(plan.cycles)?;
    state.summary.seconds = started.elapsed().as_secs_f64();
    Ok(state.summary)
}

/// The parent's model: each key's last acknowledged version (`None`: absent), and the store's
/// last sequence number after the previous recovery.
struct Parent {
    model: BTreeMap<u64, Option<u64>>,
    seq: u64,
    summary: Summary,
}

/// One operation a child reported: its writer, keys and version (`None` for a delete).
type Op = (u64, Vec<u64>, Option<u64>);

/// One line a child reported: acknowledged or begun, the operation, and (acknowledged with
/// power loss) the store's sequence number after it.
type Line = (bool, Op, Option<u64>);

impl Parent {
    /// Applies the acknowledged operations of `lines` to the model; returns those in flight.
    /// An acknowledgement with power loss says the store's sequence number after it (at
    /// least its record's: with one writer, what the cut must keep).
    fn account(&mut self, lines: &[Line]) -> Vec<Op> {
        let mut in_flight: BTreeMap<u64, Op> = BTreeMap::new();
        for (ack, op, seq) in lines {
            if *ack {
                for &k in &op.1 {
                    self.model.insert(k, op.2);
                }
                in_flight.remove(&op.0);
                self.summary.acknowledged += 1;
                self.seq = seq.unwrap_or(self.seq + 1).max(self.seq);
            } else {
                in_flight.insert(op.0, op.clone());
            }
        }
        in_flight.into_values().collect()
    }

    /// Reopens the store after the kill of `cycle` and checks it against the model (module
    /// docs), taking the operations `in_flight` at the kill into the model when applied whole.
    fn verify(
        &mut self,
        spec: &TortureSpec,
        cycle: u64,
        in_flight: &[Op],
    ) -> Result<(), TortureError> {
        let engine = spec.engine;
        let store = Store::open(&spec.db, &spec.options(cycle))?;
        let mut got = BTreeMap::new();
        for k in 0..KEYS {
            let version = match store.get(&key_bytes(engine, k))? {
                None => None,
                Some(v) => Some(version_of(k, &v)?),
            };
            got.insert(k, version);
        }
        for (_, keys, version) in in_flight {
            self.summary.in_flight += 1;
            self.summary.batches_in_flight += u64::from(keys.len() > 1);
            // The keys it changes (a delete of an absent key changes nothing).
            let changes: Vec<u64> = keys
                .iter()
                .copied()
                .filter(|k| self.model[k] != *version)
                .collect();
            let applied = changes.iter().filter(|k| got[*k] == *version).count();
            if applied > 0 && applied < changes.len() {
                return Err(TortureError::HalfApplied {
                    keys: keys.clone(),
                    applied,
                    changes: changes.len(),
                });
            }
            if applied > 0 {
                self.summary.in_flight_applied += 1;
                for k in changes {
                    self.model.insert(k, *version);
                }
            }
        }
        for (k, want) in &self.model {
            let have = got[k];
            if have != *want {
                let what = match (want, have) {
                    (Some(_), None) => "an acknowledged write is lost",
                    (None, Some(_)) => "a phantom: a key no surviving write set",
                    _ => "the value is not the last acknowledged one",
                };
                return Err(TortureError::WrongVersion {
                    key: *k,
                    what,
                    expected: *want,
                    found: have,
                });
            }
        }
        let scanned: Vec<(Vec<u8>, u64)> = store
            .range(..)
            .map(|e| {
                let (k, v) = e?;
                let version = u64::from_le_bytes(
                    v.get(..8)
                        .and_then(|b| b.try_into().ok())
                        .ok_or(TortureError::ShortScannedValue)?,
                );
                Ok((k, version))
            })
            .collect::<Result<_, TortureError>>()?;
        let mut expected: Vec<(Vec<u8>, u64)> = self
            .model
            .iter()
            .filter_map(|(k, v)| v.map(|v| (key_bytes(engine, *k), v)))
            .collect();
        expected.sort();
        if scanned != expected {
            return Err(TortureError::ScanMismatch {
                scanned: scanned.len(),
                looked_up: expected.len(),
            });
        }
        // The engine's block files: one live file, or (`lsm`) every run of its levels.
        let (prefix, many) = match engine {
            Engine::Hybrid => ("table-", false),
            Engine::BTree => ("inner-", false),
            Engine::Log(_) => ("log-", false),
            Engine::Lsm(_) => ("run-", true),
        };
        let live: Vec<String> = std::fs::read_dir(&spec.db)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(prefix))
            .collect();
        if live.len() > 1 && !many {
            return Err(TortureError::LeftBehind { files: live });
        }
        // The newest file's generation counts the merges or checkpoints done so far.
        if let Some(generation) = live
            .iter()
            .filter_map(|n| n.split('.').next()?.rsplit('-').next()?.parse().ok())
            .max()
        {
            self.summary.merges_seen = generation;
        }
        self.seq = store.snapshot().seq();
        store.close()?;
        let report = Store::check(&spec.db)?;
        if !report.is_sound() {
            return Err(TortureError::Damage {
                damage: format!("{:?}", report.damage),
            });
        }
        // An `lsm` store's runs are many: a run its manifest does not name was left behind
        // (the open removed every leftover of the kill; the cycle's own work leaves none).
        let stray: Vec<String> = report
            .unknown
            .iter()
            .filter(|f| {
                Path::new(f)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .cloned()
            .collect();
        if many && !stray.is_empty() {
            return Err(TortureError::LeftBehind { files: stray });
        }
        Ok(())
    }
}

/// The version a value of `key` was written with, checked against the bytes it writes.
fn version_of(key: u64, value: &[u8]) -> Result<u64, TortureError> {
    let v = value
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or(TortureError::ShortValue {
            key,
            len: value.len(),
        })?;
    if value != value_bytes(v) {
        return Err(TortureError::DamagedValue { key, version: v });
    }
    Ok(v)
}

/// Spawns the child of `cycle` (this program with `args`), kills it after `delay`, and
/// returns what it reported: `(acknowledged, op)` a line. A line cut by the kill is left out.
fn run_child(cycle: u64, args: &[OsString], delay: Duration) -> Result<Vec<Line>, TortureError> {
    let exe = std::env::current_exe().map_err(TortureError::io("the path of this program"))?;
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(TortureError::io("start the writer child"))?;
    let stdout = child.stdout.take().ok_or(TortureError::NoPipe {
        what: "the child's output",
    })?;
    let mut stderr = child.stderr.take().ok_or(TortureError::NoPipe {
        what: "the child's error output",
    })?;
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(whole) = line.strip_suffix('\n') {
                lines.push(whole.to_string());
            }
            line.clear();
        }
        lines
    });
    std::thread::sleep(delay);
    child.kill().map_err(TortureError::io("kill the child"))?;
    let status = child.wait()?;
    let joined =
        |what: &'static str, payload: Box<dyn std::any::Any + Send>| TortureError::ThreadPanicked {
            what,
            message: panic_message(&*payload),
        };
    let lines = reader
        .join()
        .map_err(|p| joined("the reader of the child's output", p))?;
    let errors = errors
        .join()
        .map_err(|p| joined("the reader of the child's errors", p))?;
    if let Some(panic) = lines.iter().find(|l| l.starts_with("panic ")) {
        return Err(TortureError::ChildPanicked {
            cycle,
            message: panic["panic ".len()..].to_string(),
        });
    }
    if let Some(error) = lines.iter().find(|l| l.starts_with("error")) {
        return Err(TortureError::ChildFailed {
            cycle,
            line: error.clone(),
        });
    }
    // Only the kill may end the child: a panic or an abort is what a torture run is for.
    if std::os::unix::process::ExitStatusExt::signal(&status) != Some(libc::SIGKILL) {
        return Err(TortureError::ChildEnded {
            cycle,
            status: status.to_string(),
            stderr: errors.trim().to_string(),
        });
    }
    Ok(lines.iter().filter_map(|l| parse_line(l)).collect())
}

/// `begin|ack <writer> <k,k,...> <version|del>`, an acknowledgement with power loss followed
/// by ` <sequence number>`.
fn parse_line(line: &str) -> Option<Line> {
    let f: Vec<&str> = line.split(' ').collect();
    let (kind, writer, keys, what, seq) = match f[..] {
        [kind, writer, keys, what] => (kind, writer, keys, what, None),
        [kind, writer, keys, what, seq] => (kind, writer, keys, what, Some(seq.parse().ok()?)),
        _ => return None,
    };
    let ack = match kind {
        "begin" => false,
        "ack" => true,
        _ => return None,
    };
    let keys = keys
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    Some((ack, (writer.parse().ok()?, keys, what.parse().ok()), seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose children never got a write acknowledged (every kill came before the
    /// first) checked nothing and must fail.
    #[test]
    fn a_run_with_no_acknowledged_write_fails() {
        let mut summary = Summary::default();
        let err = summary.tested_something(4).unwrap_err().to_string();
        assert!(
            err.contains("no write was acknowledged in 4 cycle(s)"),
            "{err}"
        );
        summary.acknowledged = 1;
        assert!(summary.tested_something(4).is_ok());
    }
}
