//! Each store of `lidx ycsb` in a child process of its own ([`ChildRunner`]), so that one
//! store's failure takes only its own record down.
//!
//! Issue 32: under `--memory-limit 160M` the `hybrid` engine's load took 247 MB and the memory
//! cgroup killed the whole `lidx ycsb` invocation, every other store's results with it. Here
//! the parent runs each store on each workload ([`crate::kv_runner::compare_with`]) by
//! re-running the same `lidx ycsb` command line with a hidden flag ([`CHILD_RUN`]) that names
//! the workload, the store and the reference's memory its relative budget resolves against
//! ([`RunAt`]), as `lidx repro` and `lidx kv torture` run their steps and writers. The child
//! loads the dataset, builds the plan (the same seed makes the same plan), runs the store in
//! the runs' directory the parent made ([`CHILD_DIR`]) and writes one line on its stdout
//! ([`ChildReport`]): the record, or the error that ended it, or its panic. Each run of the
//! child enters a memory cgroup of its own ([`crate::memory_limit::MemoryCgroup`], named by
//! the child's process id, [`crate::kv_runner::cgroup_prefix`]), so the limit holds the child
//! alone and the OOM killer's choice is the child.
//!
//! A child that ends without a record becomes a failed record ([`KvBench::failed`]) that says
//! how: `killed by the memory cgroup (limit 160.0 MB)` when the kernel counted an OOM kill in
//! the child's cgroup ([`crate::memory_limit::reap_cgroups`], which also removes the cgroup
//! the killed child could not), `killed by signal 6 (SIGABRT)` for a crash, `panicked: ...`,
//! or the error it reported. The parent goes on with the next store; the child's progress and
//! notes go to the parent's stderr as they come.
//!
//! The cost: every child loads the dataset again and the parent holds it too (it builds each
//! plan to refuse a bad one before anything runs, [`crate::kv_runner::KvBench::check`]).

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

use crate::disk_report::human_bytes;
use crate::error::{BenchError, Result};
use crate::kv_runner::{cgroup_prefix, KvBench, RunAt, RunOne};
use crate::kv_store::StoreSpec;
use crate::memory_limit::reap_cgroups;
use crate::records::KvRecord;
use crate::runner::Progress;

/// The hidden flag that makes `lidx ycsb` the child of one store on one workload: its value is
/// [`RunAt::to_arg`]'s.
pub const CHILD_RUN: &str = "--child-run";

/// The hidden flag that gives the child the directory its runs' stores go in (the parent's
/// private directory inside the device's).
pub const CHILD_DIR: &str = "--child-dir";

impl RunAt {
    /// `<workload>,<store>,<reference start>,<reference end>`: [`CHILD_RUN`]'s value.
    pub fn to_arg(&self) -> String {
        format!(
            "{},{},{},{}",
            self.workload, self.store, self.reference.0, self.reference.1
        )
    }

    /// Parses [`RunAt::to_arg`]'s form.
    pub fn from_arg(arg: &str) -> Result<RunAt> {
        let numbers: Vec<u64> = arg
            .split(',')
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad_arg(arg))?;
        match numbers[..] {
            [workload, store, start, end] => Ok(RunAt {
                workload: usize::try_from(workload).map_err(|_| bad_arg(arg))?,
                store: usize::try_from(store).map_err(|_| bad_arg(arg))?,
                reference: (start, end),
            }),
            _ => Err(bad_arg(arg)),
        }
    }
}

fn bad_arg(arg: &str) -> BenchError {
    BenchError::BadSpec {
        what: CHILD_RUN,
        got: arg.to_string(),
        expected: "<workload index>,<store index>,<reference start bytes>,<reference end bytes> \
                   (given by lidx ycsb to its children)"
            .to_string(),
    }
}

/// What a child writes on its stdout, one line: how it ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildReport {
    /// Its store's record (`record <json>`).
    Record(Box<KvRecord>),
    /// The error that ended its run (`error <message>`).
    Error(String),
    /// Its panic's message (`panic <message>`).
    Panic(String),
}

impl ChildReport {
    /// The line, without its newline.
    pub fn line(&self) -> String {
        let one_line = |s: &str| s.replace('\n', " ");
        match self {
            ChildReport::Record(record) => format!(
                "record {}",
                serde_json::to_string(record).expect("a record always serializes")
            ),
            ChildReport::Error(message) => format!("error {}", one_line(message)),
            ChildReport::Panic(message) => format!("panic {}", one_line(message)),
        }
    }

    /// The first report among `output`'s lines, if any; a record that does not parse is an
    /// error report saying so.
    pub fn parse(output: &str) -> Option<ChildReport> {
        output.lines().find_map(|line| {
            let (kind, rest) = line.split_once(' ')?;
            Some(match kind {
                "record" => match serde_json::from_str(rest) {
                    Ok(record) => ChildReport::Record(Box::new(record)),
                    Err(e) => ChildReport::Error(format!("its record did not parse: {e}")),
                },
                "error" => ChildReport::Error(rest.to_string()),
                "panic" => ChildReport::Panic(rest.to_string()),
                _ => return None,
            })
        })
    }

    /// Writes the line on stdout (a closed stdout loses it: the parent then reports the child
    /// ended without a record).
    pub fn send(&self) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", self.line());
        let _ = out.flush();
    }
}

/// Makes a panic anywhere in the child also a [`ChildReport::Panic`] line, after the usual
/// message on stderr.
pub fn report_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        let message = match info.payload().downcast_ref::<&str>() {
            Some(s) => (*s).to_string(),
            None => match info.payload().downcast_ref::<String>() {
                Some(s) => s.clone(),
                None => "a panic without a message".to_string(),
            },
        };
        let at = info
            .location()
            .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        ChildReport::Panic(format!("{message}{at}")).send();
    }));
}

/// Runs each store in a child process: this program with `args` (the parent's own command
/// line after the program's name) and the hidden flags.
#[derive(Debug, Clone)]
pub struct ChildRunner {
    exe: PathBuf,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    memory_limit: Option<u64>,
    failures: Vec<String>,
}

impl ChildRunner {
    /// Children of this program run with `args`, their stores in `dir` (none: a simulated
    /// device in memory), each run held to `memory_limit`.
    pub fn new(
        args: Vec<OsString>,
        dir: Option<PathBuf>,
        memory_limit: Option<u64>,
    ) -> Result<ChildRunner> {
        let exe = std::env::current_exe().map_err(|source| BenchError::Io {
            path: PathBuf::from("the path of this program"),
            source,
        })?;
        Ok(ChildRunner {
            exe,
            args,
            dir,
            memory_limit,
            failures: Vec::new(),
        })
    }

    /// The failures so far that were not the memory cgroup's kill (a crash, a panic, an
    /// error): `<workload> <store>: <why>` each.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Why a child that wrote `report` (or nothing) and ended with `status` has no record.
    fn why(&self, report: Option<ChildReport>, status: ExitStatus, kills: u64) -> String {
        match (report, status.signal()) {
            (Some(ChildReport::Panic(message)), _) => format!("panicked: {message}"),
            (Some(ChildReport::Error(message)), _) => message,
            (_, Some(_)) if kills > 0 => match self.memory_limit {
                Some(limit) => {
                    format!("killed by the memory cgroup (limit {})", human_bytes(limit))
                }
                None => "killed by the kernel's OOM killer".to_string(),
            },
            (_, Some(signal)) => format!("killed by signal {signal} ({})", signal_name(signal)),
            _ => format!("ended ({status}) without a record"),
        }
    }
}

/// The usual name of a signal a crash or a kill sends.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "another signal",
    }
}

impl RunOne for ChildRunner {
    fn run_one(
        &mut self,
        bench: &KvBench<'_>,
        at: RunAt,
        spec: &StoreSpec,
        _: &mut dyn Progress,
    ) -> Result<KvRecord> {
        let mut command = Command::new(&self.exe);
        command.args(&self.args).arg(CHILD_RUN).arg(at.to_arg());
        if let Some(dir) = &self.dir {
            command.arg(CHILD_DIR).arg(dir);
        }
        let io = |source| BenchError::Io {
            path: self.exe.clone(),
            source,
        };
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(io)?;
        let pid = child.id();
        let output = child.wait_with_output().map_err(io)?;
        let kills = reap_cgroups(&cgroup_prefix(pid));
        let report = ChildReport::parse(&String::from_utf8_lossy(&output.stdout));
        if let Some(ChildReport::Record(record)) = report {
            return Ok(*record);
        }
        let why = self.why(report, output.status, kills);
        let label = bench.label_of(spec);
        let workload = bench.plan().workload.label();
        let _ = writeln!(std::io::stderr(), "failed {label} on {workload}: {why}");
        if !why.starts_with("killed by the memory cgroup") {
            self.failures.push(format!("{workload} {label}: {why}"));
        }
        Ok(bench.failed(&label, &why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_one_argument_both_ways() {
        let at = RunAt {
            workload: 2,
            store: 5,
            reference: (123, 456),
        };
        assert_eq!(RunAt::from_arg(&at.to_arg()).unwrap(), at);
        for bad in ["", "1,2,3", "1,2,3,4,5", "a,1,2,3", "-1,0,0,0"] {
            assert!(RunAt::from_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_childs_report_is_one_line_read_back_as_written() {
        let record = KvRecord {
            store: "peer:redb".to_string(),
            config: "cache=1MiB".to_string(),
            ..KvRecord::default()
        };
        for report in [
            ChildReport::Record(Box::new(record)),
            ChildReport::Error("no space left".to_string()),
            ChildReport::Panic("index out of bounds".to_string()),
        ] {
            let line = report.line();
            assert!(!line.contains('\n'));
            let output = format!("noise\n{line}\n");
            assert_eq!(ChildReport::parse(&output), Some(report));
        }
        assert_eq!(
            ChildReport::Error("two\nlines".to_string()).line(),
            "error two lines"
        );
        assert_eq!(ChildReport::parse("nothing here\n"), None);
    }
}
