//! A localhost cluster (feature `cluster`): `lidx-scheduler` and two `lidx-executor`
//! processes, ports chosen free, every wait bounded, every child killed by its PID when the
//! test ends. A range aggregate over a table, one over a store and an index join run on it
//! and must answer as one process does (and as lidx's own reads do), and the executors' task
//! lines must show both executors reading scan partitions. A scheduler that is not there is a
//! typed error within the connect timeout, from the library and from `lidx-sql --cluster`;
//! one without executors, an error after `lidx-sql --timeout`.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use lidx_datafusion::{Error, SqlSession};

/// The longest any process start, registration or query may take.
const WAIT: Duration = Duration::from_secs(120);

/// A child process, killed by its PID when dropped, whose stdout and stderr lines are kept.
struct Proc {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn start(command: &mut Command) -> Proc {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the process");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        for stream in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err),
        ] {
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            });
        }
        Proc { child, lines }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The first line `pick` maps to something, waiting at most [`WAIT`].
    fn wait_for<T>(&mut self, what: &str, pick: impl Fn(&str) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(found) = self.lines().iter().find_map(|l| pick(l)) {
                return found;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{what}: the process ended ({status}):\n{}",
                    self.lines().join("\n")
                );
            }
            assert!(
                start.elapsed() < WAIT,
                "{what}: not within {WAIT:?}:\n{}",
                self.lines().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // `Child::kill` signals the child's PID; `wait` reaps it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A scheduler and two executors of one task slot each (so that each task is one
/// partition, and round-robin puts every other one on each executor).
struct Cluster {
    executors: Vec<Proc>,
    scheduler: Proc,
    addr: String,
}

impl Cluster {
    fn start(work: &Path) -> Cluster {
        let mut scheduler = Proc::start(
            Command::new(env!("CARGO_BIN_EXE_lidx-scheduler")).args(["--bind", "127.0.0.1:0"]),
        );
        let addr = scheduler.wait_for("the scheduler's address", |l| {
            l.strip_prefix("lidx-scheduler listening on ")
                .map(str::to_string)
        });
        let executors = ["e1", "e2"]
            .into_iter()
            .map(|id| {
                let dir = work.join(id);
                std::fs::create_dir(&dir).unwrap();
                let mut e = Proc::start(Command::new(env!("CARGO_BIN_EXE_lidx-executor")).args([
                    "--scheduler",
                    &addr,
                    "--port",
                    &free_port().to_string(),
                    "--grpc-port",
                    &free_port().to_string(),
                    "--slots",
                    "1",
                    "--id",
                    id,
                    "--work-dir",
                    dir.to_str().unwrap(),
                ]));
                e.wait_for(&format!("executor {id} registered"), |l| {
                    l.contains("Executor registration succeed").then_some(())
                });
                e
            })
            .collect();
        Cluster {
            executors,
            scheduler,
            addr,
        }
    }

    /// Per executor, the tasks it started that read lidx scan partitions.
    fn scan_tasks(&self) -> Vec<usize> {
        self.executors
            .iter()
            .map(|e| {
                e.lines()
                    .iter()
                    .filter(|l| {
                        l.contains("lidx-executor ")
                            && l.split("lidx parts ")
                                .nth(1)
                                .and_then(|n| n.split(',').next())
                                .and_then(|n| n.trim().parse::<usize>().ok())
                                .is_some_and(|n| n > 0)
                    })
                    .count()
            })
            .collect()
    }

    /// Tasks (on any executor) that ran an index join.
    fn index_join_tasks(&self) -> usize {
        self.executors
            .iter()
            .flat_map(Proc::lines)
            .filter(|l| {
                l.split("index joins ")
                    .nth(1)
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .is_some_and(|n| n > 0)
            })
            .count()
    }
}

/// The batches of `sql`, as text, sorted by line (a cluster's row order may differ).
fn answer(session: &SqlSession, sql: &str) -> String {
    let batches: Vec<RecordBatch> = query(session, sql);
    let text = pretty_format_batches(&batches).unwrap().to_string();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

#[test]
fn a_two_executor_cluster_answers_as_one_process_and_spreads_the_scans() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(120_000, 33);
    write_u64_table(dir.path(), "big", &keys);
    // The outer side of the join: every 50th key and as many absent ones.
    let mut outer: Vec<u64> = keys.iter().step_by(50).copied().collect();
    outer.extend(keys.iter().step_by(50).map(|k| k + 1));
    outer.sort_unstable();
    outer.dedup();
    write_u64_table(dir.path(), "small", &outer);
    let store = dir.path().join("kv");
    write_store(&store, &keys[..20_000]);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();

    let (lo, hi) = (keys[10_000], keys[100_000]);
    let range = format!(
        "SELECT count(*), sum(key), min(key), max(key), max(value) FROM big \
         WHERE key >= {lo} AND key < {hi}"
    );
    let store_range = format!(
        "SELECT count(*), max(value) FROM kv WHERE key >= X'{:016x}'",
        keys[5_000]
    );
    let join = "SELECT count(*), sum(b.key), max(b.value) FROM small s JOIN big b ON s.key = b.key";
    // More keys than a scan seeks while planned: the executors seek them as they read.
    let list: Vec<String> = outer.iter().step_by(7).map(u64::to_string).collect();
    let points = format!(
        "SELECT count(*), sum(key), max(value) FROM big WHERE key IN ({})",
        list.join(",")
    );

    let register = |s: &mut SqlSession| {
        s.register("big", &dir.path().join("big")).unwrap();
        s.register("small", &dir.path().join("small")).unwrap();
        s.register("kv", &store).unwrap();
    };
    let mut local = SqlSession::new(4);
    register(&mut local);

    // lidx's own reads agree with the single process.
    let in_range = table_records::<u64>(dir.path(), "big", |k| *k >= lo && *k < hi);
    assert_eq!(
        single_u64(
            &local,
            &format!("SELECT count(*) FROM big WHERE key >= {lo} AND key < {hi}")
        ),
        in_range.len() as u64
    );
    let matched = outer
        .iter()
        .filter(|k| keys.binary_search(k).is_ok())
        .count();
    assert_eq!(
        single_u64(
            &local,
            "SELECT count(*) FROM small s JOIN big b ON s.key = b.key"
        ),
        matched as u64
    );

    let cluster = Cluster::start(&work);
    let mut remote = runtime()
        .block_on(SqlSession::connect(&cluster.addr, 4))
        .unwrap();
    register(&mut remote);
    assert_eq!(
        single_u64(
            &local,
            &format!("SELECT count(*) FROM big WHERE key IN ({})", list.join(","))
        ),
        outer
            .iter()
            .step_by(7)
            .filter(|k| keys.binary_search(k).is_ok())
            .count() as u64
    );
    for sql in [&range, &store_range, join, &points] {
        assert_eq!(answer(&remote, sql), answer(&local, sql), "{sql}");
    }

    let per_executor = cluster.scan_tasks();
    assert!(
        per_executor.iter().all(|&n| n > 0),
        "scan tasks per executor {per_executor:?}; scheduler:\n{}",
        cluster.scheduler.lines().join("\n")
    );
    assert!(cluster.index_join_tasks() > 0, "no task ran an index join");
}

#[test]
fn a_cluster_that_cannot_answer_is_a_typed_error_in_bounded_time() {
    let addr = format!("127.0.0.1:{}", free_port());
    match runtime().block_on(SqlSession::connect(&addr, 2)) {
        Err(e @ Error::ClusterUnreachable { .. }) => {
            assert!(e.to_string().contains("lidx-scheduler"), "{e}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("connected to {addr}"),
    }
    let dir = tempfile::tempdir().unwrap();
    write_u64_table(dir.path(), "t", &[1, 2, 3]);
    let table = format!("t={}", dir.path().join("t").display());
    let out = Command::new(env!("CARGO_BIN_EXE_lidx-sql"))
        .args([
            "--cluster",
            &addr,
            "--table",
            &table,
            "SELECT count(*) FROM t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&addr) && err.contains("does not answer"),
        "{err}"
    );
}
