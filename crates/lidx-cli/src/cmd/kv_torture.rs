//! `lidx kv torture`: the store's crash test as a command (issue 13), for any number of cycles.
//!
//! Each cycle runs a writer child (this binary again, with the hidden `--child` flag) on the
//! store in `--db`: `--writers` threads put, delete and batch-write (2 to 8 keys) byte keys of
//! 6 B to 3 KiB and values of 8 B to 200 KiB under a small memory budget, so merges (`hybrid`)
//! or checkpoints (`btree`) run all the time. The child prints each operation before it starts
//! (`begin`) and once it is acknowledged (`ack`); the parent kills it with `SIGKILL` after a
//! random delay, reopens the store, and checks that
//! - every acknowledged write is there with its exact value (no write lost),
//! - nothing is there that no operation wrote (no phantom), and an operation in flight at the
//!   kill is there whole or not at all (a batch never half-applied),
//! - a full scan shows exactly what lookups show,
//! - only the live table (or the last checkpoint's image) survives an interrupted merge, and
//!   `Store::check` finds nothing damaged.
//!
//! `--power-loss` also simulates losing what the disk had not made durable: the child writes
//! with `fsync always` and one writer (so the log's order is the acknowledgement order), and
//! after the kill the parent loses what was written after the last acknowledged record, as a
//! file system loses it: the log's last segment ends at a random point after that record, or
//! keeps its size with the pages from a random page boundary on zeroed (a file system that
//! grew the file before its data reached the disk). Every acknowledged write must still be
//! there. What it does not
//! simulate: the loss of block-file writes that were not synced (merges sync a table before
//! the manifest names it, so a lost one is a leftover the open removes).
//!
//! Any violation ends the command with exit code 1 and a message naming the cycle, the key and
//! what was expected; the store is left as it was for a look. So does a run that could pass
//! without testing anything (issue 30, class 8): a panic anywhere (a child's panic hook
//! reports it to the parent and aborts; the parent's own is caught) fails the run with the
//! panic's message, and so does a run in which no write was acknowledged; parameters outside
//! their useful range (`--writers` beyond [`MAX_WRITERS`], which would leave writers without
//! keys; `--max-delay-ms` under [`MIN_MAX_DELAY_MS`], which kills children before they write)
//! are refused before anything is created, with exit code 2. A child dies with its
//! parent: it asks the kernel for `SIGKILL` when the parent dies (`PR_SET_PDEATHSIG`), and its
//! writers also stop once the parent is gone, so a killed `kv torture` never leaves a child
//! holding the store's lock.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use lidx::kv::{CreateOptions, Engine, LogKeys, LogSpec, Store, StoreOptions, WriteBatch};
use lidx::kv::{FsyncPolicy, WalRecovery};
use lidx::raw::kv::wal::{scan_segment, SEGMENT_HEADER_BYTES};
use lidx_bench::BenchError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

/// Arguments of `lidx kv torture`.
#[derive(Debug, Clone, clap::Args)]
pub struct TortureArgs {
    /// A directory that does not exist yet: the store the cycles write (left for a look).
    #[arg(long)]
    pub db: PathBuf,
    /// Kill-and-recover cycles.
    #[arg(long, default_value_t = 100)]
    pub cycles: u64,
    /// The engine: `hybrid`, `btree`, `log:<map>` (e.g. `log:btree`) or `log:trie:<map>`.
    #[arg(long, default_value = "hybrid")]
    pub engine: String,
    /// Seed of the delays and of the children's operations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Writer threads of the child, 1 to 64 (default 2; 1, the only choice, with
    /// `--power-loss`).
    #[arg(long)]
    pub writers: Option<u64>,
    /// The longest a child runs before the kill, in milliseconds, 50 to 60000 (each cycle
    /// draws a delay from a fifth of it up to it; a child needs a few milliseconds to start,
    /// so a shorter one would kill most children before their first write).
    #[arg(long, default_value_t = 400)]
    pub max_delay_ms: u64,
    /// Also cut the unsynced end of the log after each kill (see the command's docs).
    #[arg(long)]
    pub power_loss: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run as the writer child of cycle `N` (used by the command itself).
    #[arg(long, hide = true)]
    pub child: Option<u64>,
    /// The parent's process id, given to the child: it stops once the parent is gone.
    #[arg(long, hide = true)]
    pub parent_pid: Option<u32>,
    /// The harness's self-test: the children's first writer panics after this many
    /// acknowledged writes, which must fail the run.
    #[arg(long, hide = true)]
    pub inject_panic_after: Option<u64>,
}

/// Most writer threads a child runs: each owns `KEYS / writers` keys, and a batch writes up
/// to 8 of them.
pub const MAX_WRITERS: u64 = 64;

/// The shortest `--max-delay-ms`: its fifth, the shortest delay drawn, still leaves a child
/// time to start and write.
const MIN_MAX_DELAY_MS: u64 = 50;

/// Keys the children write.
const KEYS: u64 = 2_000;
/// A child that outlives this was not killed (its parent died): it stops.
const CHILD_LIFETIME: Duration = Duration::from_secs(120);

fn options(args: &TortureArgs, cycle: u64) -> StoreOptions {
    StoreOptions {
        fsync: if args.power_loss || cycle.is_multiple_of(3) {
            FsyncPolicy::Always
        } else {
            FsyncPolicy::Never
        },
        memory_budget: 256 << 10,
        cache_bytes: 1 << 20,
        recovery: WalRecovery::TornTail,
        ..StoreOptions::default()
    }
}

/// The writers of a child: `--writers`, 2 by default, 1 with `--power-loss`.
fn writers(args: &TortureArgs) -> u64 {
    args.writers.unwrap_or(if args.power_loss { 1 } else { 2 })
}

/// Key `k`'s bytes: a name, then padding that makes some keys long (up to 3 KiB); for a
/// `log:<map>` store, whose keys are 8 bytes, `k` big-endian.
fn key_bytes(engine: Engine, k: u64) -> Vec<u8> {
    if let Engine::Log(LogSpec {
        keys: LogKeys::U64, ..
    }) = engine
    {
        return k.to_be_bytes().to_vec();
    }
    let mut key = format!("key{k:05}").into_bytes();
    let pad = if k.is_multiple_of(97) {
        3000
    } else {
        (k % 7 * 40) as usize
    };
    key.resize(key.len() + pad, b'.');
    key
}

/// The value written with `version`: its 8 bytes repeated, 8 B to 200 KiB.
fn value_bytes(version: u64) -> Vec<u8> {
    let len = if version.is_multiple_of(61) {
        200 << 10
    } else {
        8 * (1 + (version % 50) as usize)
    };
    version.to_le_bytes().repeat(len / 8)
}

/// Runs `lidx kv torture`.
pub fn run(args: TortureArgs) -> anyhow::Result<()> {
    let engine = Engine::parse(&args.engine)
        .with_context(|| format!("--engine {:?}: use {}", args.engine, Engine::forms()))?;
    if let Some(cycle) = args.child {
        return child(&args, cycle);
    }
    let writers = writers(&args);
    if !(1..=MAX_WRITERS).contains(&writers) || (args.power_loss && writers != 1) {
        return Err(BenchError::BadSpec {
            what: "--writers",
            got: writers.to_string(),
            expected: if args.power_loss {
                "1 with --power-loss (the log's order must be the acknowledgement order)"
                    .to_string()
            } else {
                format!(
                    "1 to {MAX_WRITERS} writer threads (each owns {KEYS} / writers of the \
                     {KEYS} keys)"
                )
            },
        }
        .into());
    }
    let longest = CHILD_LIFETIME.as_millis() as u64 / 2;
    if args.cycles == 0 || !(MIN_MAX_DELAY_MS..=longest).contains(&args.max_delay_ms) {
        return Err(BenchError::BadSpec {
            what: "--cycles/--max-delay-ms",
            got: format!("{}/{}", args.cycles, args.max_delay_ms),
            expected: format!(
                "at least 1 cycle and a delay of {MIN_MAX_DELAY_MS} to {longest} ms (a child \
                 needs a few ms to start: a shorter delay kills it before its first write)"
            ),
        }
        .into());
    }
    if args.db.exists() {
        return Err(BenchError::BadSpec {
            what: "db",
            got: args.db.display().to_string(),
            expected: "a directory that does not exist yet: lidx kv torture writes a store of \
                       its own"
                .to_string(),
        }
        .into());
    }
    let create = CreateOptions {
        engine,
        ..CreateOptions::default()
    };
    Store::create(&args.db, &create, &options(&args, 0))?.close()?;
    // A panic of the parent fails the run with its message, as a child's does.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cycles(&args, engine)))
        .unwrap_or_else(|payload| bail!("lidx kv torture panicked: {}", panic_message(&*payload)))
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Runs the kill-and-recover cycles on the new store and prints the summary.
fn cycles(args: &TortureArgs, engine: Engine) -> anyhow::Result<()> {
    let mut state = Parent {
        model: (0..KEYS).map(|k| (k, None)).collect(),
        seq: 0,
        summary: Summary::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let started = Instant::now();
    for cycle in 1..=args.cycles {
        let delay = rng.gen_range(args.max_delay_ms / 5..=args.max_delay_ms);
        let lines = run_child(args, cycle, Duration::from_millis(delay))?;
        let in_flight = state.account(&lines);
        if args.power_loss {
            state.summary.log_bytes_cut += cut_log(&args.db, state.seq, &mut rng)?;
        }
        state
            .verify(args, engine, cycle, &in_flight)
            .with_context(|| {
                format!(
                    "cycle {cycle}: the store in {} is left as it is",
                    args.db.display()
                )
            })?;
        if cycle % 10 == 0 || cycle == args.cycles {
            note!(
                "progress: torture: {cycle}/{} cycles, {} writes acknowledged ({:.0} s)",
                args.cycles,
                state.summary.acknowledged,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let s = &state.summary;
    s.tested_something(args.cycles)?;
    if args.json {
        println!(
            "{}",
            json!({
                "engine": engine.label(),
                "cycles": args.cycles,
                "power_loss": args.power_loss,
                "acknowledged": s.acknowledged,
                "in_flight": s.in_flight,
                "in_flight_applied": s.in_flight_applied,
                "batches_in_flight": s.batches_in_flight,
                "merges_seen": s.merges_seen,
                "log_bytes_cut": s.log_bytes_cut,
                "lost": 0,
                "phantoms": 0,
                "seconds": started.elapsed().as_secs_f64(),
            })
        );
    } else {
        println!(
            "{} cycles ({}{}): {} writes acknowledged, 0 lost, 0 phantoms; {} operations in \
             flight at a kill ({} applied whole, {} batches), none half-applied; {} merges or \
             checkpoints committed{}",
            args.cycles,
            engine.label(),
            if args.power_loss { ", power loss" } else { "" },
            s.acknowledged,
            s.in_flight,
            s.in_flight_applied,
            s.batches_in_flight,
            s.merges_seen,
            if args.power_loss {
                format!("; {} unsynced log bytes cut", s.log_bytes_cut)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// What the cycles found, for the summary.
#[derive(Default)]
struct Summary {
    acknowledged: u64,
    in_flight: u64,
    in_flight_applied: u64,
    batches_in_flight: u64,
    merges_seen: u64,
    log_bytes_cut: u64,
}

impl Summary {
    /// Fails a run in which no write was acknowledged: it checked nothing.
    fn tested_something(&self, cycles: u64) -> anyhow::Result<()> {
        if self.acknowledged == 0 {
            bail!(
                "no write was acknowledged in {cycles} cycle(s): the run tested nothing; give \
                 the children more time before the kill (--max-delay-ms) or more cycles"
            );
        }
        Ok(())
    }
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

impl Parent {
    /// Applies the acknowledged operations of `lines` to the model; returns those in flight.
    /// With one writer, the `i`th acknowledged operation has sequence number `seq + i`.
    fn account(&mut self, lines: &[(bool, Op)]) -> Vec<Op> {
        let mut in_flight: BTreeMap<u64, Op> = BTreeMap::new();
        for (ack, op) in lines {
            if *ack {
                for &k in &op.1 {
                    self.model.insert(k, op.2);
                }
                in_flight.remove(&op.0);
                self.summary.acknowledged += 1;
                self.seq += 1;
            } else {
                in_flight.insert(op.0, op.clone());
            }
        }
        in_flight.into_values().collect()
    }

    fn verify(
        &mut self,
        args: &TortureArgs,
        engine: Engine,
        cycle: u64,
        in_flight: &[Op],
    ) -> anyhow::Result<()> {
        let store = Store::open(&args.db, &options(args, cycle))?;
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
                bail!(
                    "an operation on keys {keys:?} in flight at the kill is half applied: {applied} \
                     of its {} changes are there",
                    changes.len()
                );
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
                bail!("key {k}: {what}: expected version {want:?}, found {have:?}");
            }
        }
        let scanned: Vec<(Vec<u8>, u64)> = store
            .range(..)
            .map(|e| {
                let (k, v) = e?;
                let version = u64::from_le_bytes(
                    v.get(..8)
                        .and_then(|b| b.try_into().ok())
                        .context("a scanned value shorter than 8 bytes")?,
                );
                Ok((k, version))
            })
            .collect::<anyhow::Result<_>>()?;
        let mut expected: Vec<(Vec<u8>, u64)> = self
            .model
            .iter()
            .filter_map(|(k, v)| v.map(|v| (key_bytes(engine, *k), v)))
            .collect();
        expected.sort();
        if scanned != expected {
            bail!(
                "a full scan shows {} records, lookups {}",
                scanned.len(),
                expected.len()
            );
        }
        // A `log` store has no block files to leave behind.
        let prefix = match engine {
            Engine::Hybrid => "table-",
            Engine::BTree => "inner-",
            Engine::Log(_) => "\0",
        };
        let live: Vec<String> = std::fs::read_dir(&args.db)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(prefix))
            .collect();
        if live.len() > 1 {
            bail!("{live:?}: an interrupted merge or checkpoint left a file behind");
        }
        // The live file's generation counts the merges or checkpoints done so far.
        if let Some(generation) = live
            .first()
            .and_then(|n| n[prefix.len()..].split('.').next()?.parse().ok())
        {
            self.summary.merges_seen = generation;
        }
        self.seq = store.snapshot().seq();
        store.close()?;
        let report = Store::check(&args.db)?;
        if !report.is_sound() {
            bail!("lidx kv check finds damage: {:?}", report.damage);
        }
        Ok(())
    }
}

fn version_of(key: u64, value: &[u8]) -> anyhow::Result<u64> {
    let v = value
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .with_context(|| format!("key {key}: a value of {} bytes", value.len()))?;
    if value != value_bytes(v) {
        bail!("key {key}: the value of version {v} is damaged");
    }
    Ok(v)
}

/// Spawns the child of `cycle`, kills it after `delay`, and returns what it reported:
/// `(acknowledged, op)` a line. A line cut by the kill is left out.
fn run_child(args: &TortureArgs, cycle: u64, delay: Duration) -> anyhow::Result<Vec<(bool, Op)>> {
    let exe = std::env::current_exe().context("the path of this program")?;
    let mut command = Command::new(exe);
    command
        .args(["kv", "torture", "--db"])
        .arg(&args.db)
        .args(["--engine", &args.engine, "--seed", &args.seed.to_string()])
        .args(["--writers", &writers(args).to_string()])
        .args(["--child", &cycle.to_string()])
        .args(["--parent-pid", &std::process::id().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if args.power_loss {
        command.arg("--power-loss");
    }
    if let Some(n) = args.inject_panic_after {
        command.args(["--inject-panic-after", &n.to_string()]);
    }
    let mut child = command.spawn().context("start the writer child")?;
    let stdout = child.stdout.take().context("the child's output")?;
    let mut stderr = child.stderr.take().context("the child's error output")?;
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
    child.kill().context("kill the child")?;
    let status = child.wait()?;
    let joined =
        |what: &str, payload| anyhow::anyhow!("{what} panicked: {}", panic_message(&payload));
    let lines = reader
        .join()
        .map_err(|p| joined("the reader of the child's output", p))?;
    let errors = errors
        .join()
        .map_err(|p| joined("the reader of the child's errors", p))?;
    if let Some(panic) = lines.iter().find(|l| l.starts_with("panic ")) {
        bail!(
            "cycle {cycle}: the child panicked: {}",
            &panic["panic ".len()..]
        );
    }
    if let Some(error) = lines.iter().find(|l| l.starts_with("error")) {
        bail!("cycle {cycle}: the child failed: {error}");
    }
    // Only the kill may end the child: a panic or an abort is what a torture run is for.
    if std::os::unix::process::ExitStatusExt::signal(&status) != Some(libc::SIGKILL) {
        bail!(
            "cycle {cycle}: the child ended by itself ({status}) before the kill: {}",
            errors.trim()
        );
    }
    Ok(lines.iter().filter_map(|l| parse_line(l)).collect())
}

/// `begin|ack <writer> <k,k,...> <version|del>`.
fn parse_line(line: &str) -> Option<(bool, Op)> {
    let f: Vec<&str> = line.split(' ').collect();
    let [kind, writer, keys, what] = f[..] else {
        return None;
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
    Some((ack, (writer.parse().ok()?, keys, what.parse().ok())))
}

/// The child of `cycle`: writes until killed, reporting each operation on stdout. An error
/// is reported as a line `error ...` and ends it.
fn child(args: &TortureArgs, cycle: u64) -> anyhow::Result<()> {
    // A panic in any thread is reported to the parent as a line, then ends the child at once:
    // the other writers must not go on as if nothing happened.
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string().replace('\n', " ");
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "panic {message}").and_then(|()| out.flush());
        note!("{info}");
        std::process::abort();
    }));
    let parent = args
        .parent_pid
        .context("--parent-pid: the child needs its parent's id")?;
    die_with_parent(parent)?;
    let engine = Engine::parse(&args.engine).context("--engine")?;
    let store = match Store::open(&args.db, &options(args, cycle)) {
        Ok(s) => s,
        Err(e) => {
            println!("error {e}");
            return Err(e.into());
        }
    };
    let start = Instant::now();
    let writers = writers(args);
    std::thread::scope(|s| {
        for t in 0..writers {
            let store = &store;
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ (cycle << 8 | t));
                let mut i = 0u64;
                while start.elapsed() < CHILD_LIFETIME && parent_alive(parent) {
                    if t == 0 && args.inject_panic_after == Some(i) {
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
                    say("ack");
                    i += 1;
                }
            });
        }
    });
    Ok(())
}

/// Asks the kernel to kill this process when its parent dies (Linux), and fails if the parent
/// is already gone (it died before the request).
fn die_with_parent(parent: u32) -> anyhow::Result<()> {
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
            bail!(
                "prctl(PR_SET_PDEATHSIG): {}",
                std::io::Error::last_os_error()
            );
        }
    }
    if !parent_alive(parent) {
        bail!("the parent {parent} is gone: nothing to report to");
    }
    Ok(())
}

/// True while `parent` is still this process's parent (an orphan is adopted by another).
fn parent_alive(parent: u32) -> bool {
    // SAFETY: getppid has no arguments and cannot fail.
    let ppid = unsafe { libc::getppid() };
    u32::try_from(ppid).is_ok_and(|p| p == parent)
}

/// Power loss: what the disk had not made durable after the end of record `acked` (the last
/// acknowledged one) is lost, as a file system loses it: either the file ends at a random point
/// after it (its size was persisted with the data), or its size stays and the pages from a
/// random page boundary after it on read as zeros (the size was persisted before the data).
/// Returns the bytes lost.
fn cut_log(db: &Path, acked: u64, rng: &mut ChaCha8Rng) -> anyhow::Result<u64> {
    let wal = db.join("wal");
    let last = std::fs::read_dir(&wal)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max()
        .with_context(|| format!("{} holds no log segment", wal.display()))?;
    let bytes = std::fs::read(&last)?;
    let name = last.display().to_string();
    // Where each record ends; the torn tail a kill may leave is cut by the scan's default mode.
    let mut at = SEGMENT_HEADER_BYTES;
    let mut keep = SEGMENT_HEADER_BYTES;
    scan_segment(&name, &bytes, true, WalRecovery::TornTail, |seq, record| {
        at += record.encoded_len();
        if seq <= acked {
            keep = at;
        }
        Ok(())
    })?;
    let cut_at = if rng.gen_bool(0.5) {
        rng.gen_range(keep..=bytes.len())
    } else {
        let first_page = keep.div_ceil(PAGE);
        let last_page = bytes.len().div_ceil(PAGE);
        (rng.gen_range(first_page..=last_page) * PAGE).min(bytes.len())
    };
    let mut kept = bytes[..cut_at].to_vec();
    if cut_at % PAGE == 0 && rng.gen_bool(0.5) {
        kept.resize(bytes.len(), 0);
    }
    std::fs::write(&last, &kept)?;
    Ok((bytes.len() - cut_at) as u64)
}

/// The page size a file system persists and zeros a file in.
const PAGE: usize = 4096;

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
