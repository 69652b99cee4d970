//! What the on-disk and the YCSB runner share: one thread's measurements ([`ThreadRun`]: wall
//! and modeled latency histograms and sums, operations counted), running parts of a plan on
//! threads ([`on_threads`]), the checked get ([`check_get`], [`check_payload`]), the clocks and the histogram
//! bounds. Each runner keeps only what is its own: what an operation is and how a run's
//! figures become a record.

use std::time::Instant;

use hdrhistogram::Histogram;
use lidx::raw::io::sim::thread_modeled_ns;

use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};

/// What one thread measured in one run.
pub(crate) struct ThreadRun {
    /// Wall latency of each operation.
    pub wall: Histogram<u64>,
    /// Modeled latency (CPU time + modeled device time) of each operation.
    pub modeled: Histogram<u64>,
    /// Sum of the wall latencies.
    pub wall_ns: u64,
    /// Sum of the modeled latencies.
    pub modeled_ns: u64,
    /// Operations the runner counted as reads.
    pub reads: u64,
    /// Sum of the modeled latencies of the operations the runner counted as writes (its own
    /// accounting, [`ThreadRun::time`] does not add to it).
    pub write_modeled_ns: u64,
    /// Whether [`ThreadRun::time`] reads this thread's CPU clock (for the modeled latency).
    model: bool,
}

impl ThreadRun {
    /// No operation yet.
    pub fn new() -> Self {
        ThreadRun {
            wall: new_histogram(),
            modeled: new_histogram(),
            wall_ns: 0,
            modeled_ns: 0,
            reads: 0,
            write_modeled_ns: 0,
            model: true,
        }
    }

    /// No operation yet, and no modeled latency: [`ThreadRun::time`] reads only the wall
    /// clock. For runs on files, whose records report wall time only: the thread CPU clock
    /// is a system call (about 0.5 us here, twice per operation), a cost the wall clock then
    /// charged to every store (it was 19% of the CPU samples of a YCSB-C run of the hybrid).
    pub fn wall_only() -> Self {
        ThreadRun {
            model: false,
            ..ThreadRun::new()
        }
    }

    /// This thread's modeled clock (CPU time plus the modeled device time of its requests)
    /// when the run models time, else 0: the difference of two readings is what a part of an
    /// operation took, for the runner's own accounting (the write of a read-modify-write).
    pub fn modeled_clock(&self) -> impl Fn() -> u64 {
        let model = self.model;
        move || {
            if model {
                thread_cpu_ns() + thread_modeled_ns()
            } else {
                0
            }
        }
    }

    /// Runs `op` and records its wall latency and its modeled one (this thread's CPU time plus
    /// the modeled device time of its requests); returns what `op` returned.
    pub fn time<T>(&mut self, op: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.model {
            let started = Instant::now();
            let out = op()?;
            let wall = started.elapsed().as_nanos() as u64;
            self.wall_ns += wall;
            self.wall.saturating_record(wall.max(1));
            return Ok(out);
        }
        let modeled_before = thread_modeled_ns();
        let cpu_before = thread_cpu_ns();
        let started = Instant::now();
        let out = op()?;
        let wall = started.elapsed().as_nanos() as u64;
        let modeled = thread_cpu_ns() - cpu_before + thread_modeled_ns() - modeled_before;
        self.wall_ns += wall;
        self.modeled_ns += modeled;
        self.wall.saturating_record(wall.max(1));
        self.modeled.saturating_record(modeled.max(1));
        Ok(out)
    }
}

/// Runs `run` on every part, each on its own thread, and collects their measurements (the
/// first error, if any).
pub(crate) fn on_threads<P: Send>(
    parts: impl Iterator<Item = P>,
    run: impl Fn(P) -> Result<ThreadRun> + Sync,
) -> Result<Vec<ThreadRun>> {
    let run = &run;
    let results: Vec<Result<ThreadRun>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts.map(|part| scope.spawn(move || run(part))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect()
    });
    results.into_iter().collect()
}

/// Checks a get of `key` that `found` (or not) the payload `got`: it must be found with
/// [`payload_of`]`(key)`, written into `want`. `WrongResult` otherwise.
pub fn check_get(label: &str, key: u64, found: bool, got: &[u8], want: &mut [u8]) -> Result<()> {
    payload_of(key, want);
    check_payload(label, key, found, got, want)
}

/// Checks a get of the key `key` names (the key, or its rank) that `found` (or not) the
/// payload `got`: it must be found with `want`. `WrongResult` otherwise.
pub fn check_payload(label: &str, key: u64, found: bool, got: &[u8], want: &[u8]) -> Result<()> {
    if found && got == want {
        return Ok(());
    }
    Err(BenchError::WrongResult {
        index: label.to_string(),
        op: "get",
        key,
        what: if found {
            format!("payload {got:?}, expected {want:?}")
        } else {
            "the key was not found".to_string()
        },
    })
}

/// CPU time this thread has used, in ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux defines.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A latency histogram in ns, 1 ns to 1000 s, 3 significant digits.
///
/// Every latency histogram of the harness comes from here. `Histogram::new(3)` is not a
/// substitute: it starts tracking values below 2048 only, and `saturating_record` clamps a
/// larger value to its highest trackable value (2) instead of growing, so every lookup over
/// 2 µs was once reported as 2 ns.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1_000_000_000_000, 3).expect("valid histogram bounds")
}
