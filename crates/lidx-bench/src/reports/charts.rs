//! The charts of `lidx report`'s page: throughput against memory, blocks per operation,
//! latency percentiles and speedup over the baseline, one chart per kind of record that has the
//! figure, each drawn by [`crate::plot`]'s one line-plot writer as inline SVG.
//!
//! Every chart is a set of lines of (x, y) points. A line is one index or store family (its
//! label without the `name=value` parameters: `pgm:eps=64:gran=item` and `pgm:eps=16:gran=item`
//! are two points of the line `pgm`) under one workload, so the parameters a run swept become
//! the points of a curve, as in paper 002 Fig. 11. Memory is on a log scale (the structures
//! span orders of magnitude); throughput, blocks and speedups are linear. Latency percentiles
//! are drawn at x = 1, 2, 3 for p50, p99, p99.9 (the axis caption says so): a percentile axis
//! of 50, 99 and 99.9 would put the two tails on one spot.
//!
//! Throughput is what the record calls it: modeled on simulated devices (`modeled_ops_per_s`,
//! `ops_per_s` of a `ycsb` record), wall clock on files; in-memory lookups are
//! `1e9 / mean_ns`, the back-to-back throughput figure of [`crate::report`].

use crate::error::{BenchError, Result};
use crate::plot::{self, lines_svg, Axes};
use crate::records::RecordSet;

/// One chart of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// A name unique on the page (`throughput-bench`), for anchors and tests.
    pub id: String,
    /// The title drawn in the chart.
    pub title: String,
    /// A sentence under it: where the figures come from.
    pub caption: String,
    /// The chart, an SVG document.
    pub svg: String,
}

/// Named lines of points, in the order their names first appear.
#[derive(Debug, Default)]
struct Lines(Vec<(String, Vec<(f64, f64)>)>);

impl Lines {
    /// Adds (x, y) to the line `name`; non-finite values are left out.
    fn add(&mut self, name: String, x: f64, y: f64) {
        if !x.is_finite() || !y.is_finite() {
            return;
        }
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, line)) => line.push((x, y)),
            None => self.0.push((name, vec![(x, y)])),
        }
    }
}

/// A label without its `name=value` parameters: the family a line stands for
/// (`store:hybrid,budget=5%` -> `store:hybrid`, `pgm:eps=64:gran=item` -> `pgm`).
pub fn family(label: &str) -> String {
    label
        .split([':', ','])
        .filter(|part| !part.contains('='))
        .collect::<Vec<_>>()
        .join(":")
}

/// Percentiles as the latency charts place them: p50 at 1, p99 at 2, p99.9 at 3.
const PERCENTILE_AXIS: &str = "percentile: 1 = p50, 2 = p99, 3 = p99.9";

/// Memory on the x axis, log scale.
fn memory_axes(y: &'static str) -> Axes<'static> {
    Axes {
        x: "memory (bytes, log scale)",
        y,
        x_log: true,
        x_bytes: true,
    }
}

fn latency_axes(y: &'static str) -> Axes<'static> {
    Axes {
        x: PERCENTILE_AXIS,
        y,
        x_log: false,
        x_bytes: false,
    }
}

/// Every chart the records of `set` have figures for, in the page's order.
pub fn charts(set: &RecordSet) -> Result<Vec<Chart>> {
    let mut charts = Charts(Vec::new());

    // Throughput against memory.
    let mut lines = Lines::default();
    for r in &set.bench {
        lines.add(
            format!("{} {}", r.workload, r.index),
            r.bytes as f64,
            1e3 / r.mean_ns,
        );
    }
    charts.add(
        "throughput-bench",
        "In memory (lidx bench): throughput against index memory",
        "1e9 / mean_ns: operations per second back to back, median run; memory is the index \
         alone, keys excluded.",
        memory_axes("throughput (Mops/s)"),
        lines,
    )?;
    let mut lines = Lines::default();
    for r in &set.disk {
        let ops = r.modeled_ops_per_s.unwrap_or(r.wall_ops_per_s);
        lines.add(
            format!("{} {}", r.workload, family(&r.index)),
            r.memory_bytes as f64,
            ops / 1e3,
        );
    }
    charts.add(
        "throughput-disk",
        "On disk (lidx bench --on-disk): throughput against memory",
        "Modeled throughput on simulated devices, wall clock on files; memory is what the \
         index keeps in RAM, cache excluded.",
        memory_axes("throughput (Kops/s)"),
        lines,
    )?;
    let mut lines = Lines::default();
    for r in set.ycsb.iter().filter(|r| r.skipped.is_none()) {
        lines.add(
            format!("{} {}", r.workload, family(&r.store)),
            plot::run_memory(r) as f64,
            r.ops_per_s / 1e3,
        );
    }
    for p in &set.curve {
        lines.add(
            format!("{} {} (curve)", p.workload, p.family),
            p.memory_run_bytes as f64,
            p.ops_per_s / 1e3,
        );
    }
    charts.add(
        "throughput-ycsb",
        "Stores (lidx ycsb): throughput against memory over the run",
        "Modeled throughput on simulated devices, wall clock on files; x is the memory a store \
         may hold over its run (paper 002 Fig. 11).",
        memory_axes("throughput (Kops/s)"),
        lines,
    )?;

    // Blocks per operation.
    let mut lines = Lines::default();
    for r in &set.disk {
        lines.add(
            format!("{} {}", r.workload, family(&r.index)),
            r.memory_bytes as f64,
            r.blocks_per_op,
        );
    }
    charts.add(
        "blocks-disk",
        "On disk (lidx bench --on-disk): blocks read per operation",
        "Blocks that reached the device (cache misses) per operation, against the memory the \
         index keeps.",
        memory_axes("blocks per operation"),
        lines,
    )?;
    let mut lines = Lines::default();
    for r in set.ycsb.iter().filter(|r| r.skipped.is_none()) {
        lines.add(
            format!("{} {}", r.workload, family(&r.store)),
            plot::run_memory(r) as f64,
            r.read_blocks_per_op,
        );
    }
    for p in &set.curve {
        if let Some(blocks) = p.blocks_per_read {
            lines.add(
                format!("{} {} (curve, per read)", p.workload, p.family),
                p.memory_run_bytes as f64,
                blocks,
            );
        }
    }
    charts.add(
        "blocks-ycsb",
        "Stores (lidx ycsb): blocks read per operation",
        "Blocks the workload's operations read (merges excluded) per operation; curve points \
         give blocks per read.",
        memory_axes("blocks per operation"),
        lines,
    )?;

    // Latency percentiles.
    let mut lines = Lines::default();
    for r in &set.bench {
        let name = format!("{} {}", r.workload, r.label);
        for (x, ns) in [(1.0, r.p50_ns), (2.0, r.p99_ns), (3.0, r.p999_ns)] {
            lines.add(name.clone(), x, ns as f64);
        }
    }
    charts.add(
        "latency-bench",
        "In memory (lidx bench): latency percentiles",
        "Individually timed operations of a sample, timer overhead subtracted.",
        latency_axes("latency (ns)"),
        lines,
    )?;
    let mut lines = Lines::default();
    for r in &set.disk {
        let name = format!("{} {}", r.workload, r.index);
        lines.add(name.clone(), 1.0, r.wall_p50_us);
        lines.add(name, 2.0, r.wall_p99_us);
    }
    charts.add(
        "latency-disk",
        "On disk (lidx bench --on-disk): wall-clock latency percentiles",
        "Wall-clock p50 and p99 of an operation (the records have no modeled p50).",
        latency_axes("latency (us)"),
        lines,
    )?;
    let mut lines = Lines::default();
    let mut modeled = false;
    for r in set.ycsb.iter().filter(|r| r.skipped.is_none()) {
        let name = format!("{} {}", r.workload, r.store);
        let points = match (r.modeled_p50_us, r.modeled_p99_us, r.modeled_p999_us) {
            (Some(a), Some(b), Some(c)) => {
                modeled = true;
                [a, b, c]
            }
            _ => [r.wall_p50_us, r.wall_p99_us, r.wall_p999_us],
        };
        for (i, us) in points.into_iter().enumerate() {
            lines.add(name.clone(), (i + 1) as f64, us);
        }
    }
    charts.add(
        "latency-ycsb",
        "Stores (lidx ycsb): latency percentiles",
        if modeled {
            "Modeled latencies where the device is simulated, wall clock on files."
        } else {
            "Wall-clock latencies."
        },
        latency_axes("latency (us)"),
        lines,
    )?;

    // Speedup over the baseline.
    let mut lines = Lines::default();
    for r in &set.bench {
        if let Some(s) = r.speedup_vs_binary {
            lines.add(format!("{} {}", r.workload, r.index), r.bytes as f64, s);
        }
    }
    for r in &set.strings {
        if let Some(s) = r.speedup_vs_binary {
            lines.add(format!("text {}", family(&r.index)), r.bytes as f64, s);
        }
    }
    charts.add(
        "speedup-bench",
        "In memory (lidx bench): speedup over binary search",
        "mean_ns of `sorted` (binary search) in the same run over each index's.",
        memory_axes("speedup (x)"),
        lines,
    )?;
    let mut lines = Lines::default();
    for r in set.ycsb.iter().filter(|r| r.skipped.is_none()) {
        if let Some(s) = r.speedup_vs_btree {
            lines.add(
                format!("{} {}", r.workload, family(&r.store)),
                plot::run_memory(r) as f64,
                s,
            );
        }
    }
    charts.add(
        "speedup-ycsb",
        "Stores (lidx ycsb): speedup over the first store",
        "Throughput over the reference store's (the first of --store) on the same workload \
         in the same run.",
        memory_axes("speedup (x)"),
        lines,
    )?;

    // Paper 003: the updatable runner's blocks read per operation against memory.
    let mut lines = Lines::default();
    for r in &set.updatable {
        lines.add(
            format!("{} {}", r.workload, family(&r.index)),
            r.memory_bytes as f64,
            r.read_blocks_per_op,
        );
    }
    charts.add(
        "blocks-updatable",
        "Updatable on disk (lidx bench --on-disk, paper 003): blocks read per operation",
        "Blocks that reached the device per operation (inner and leaf), against the memory the \
         index keeps after its bulk load.",
        memory_axes("blocks per operation"),
        lines,
    )?;

    // Paper 001 Fig. 18a: insert time against reserved space, at each run's last reading.
    let mut lines = Lines::default();
    for r in &set.update {
        let last = set
            .update
            .iter()
            .filter(|o| o.dataset == r.dataset && o.index == r.index)
            .all(|o| o.inserted <= r.inserted);
        if let (Some(reserve), true) = (r.reserve, last) {
            lines.add(r.strategy.clone(), reserve as f64, r.insert_ns);
        }
    }
    charts.add(
        "inserts-dims",
        "Insertion strategies (lidx dims insert/retrain): insert time against reserved space",
        "Mean time of an insert, retraining included, over all inserts (paper 001 Fig. 18a); \
         ALEX sizes its own space and has no point.",
        Axes {
            x: "reserved space (slots, log scale)",
            y: "insert time (ns)",
            x_log: true,
            x_bytes: false,
        },
        lines,
    )?;
    Ok(charts.0)
}

/// The charts drawn so far.
struct Charts(Vec<Chart>);

impl Charts {
    /// Draws `lines` as the chart `id`, unless it has no point.
    fn add(
        &mut self,
        id: &str,
        title: &str,
        caption: &str,
        axes: Axes<'_>,
        lines: Lines,
    ) -> Result<()> {
        if lines.0.is_empty() {
            return Ok(());
        }
        let svg = lines_svg(title, &axes, lines.0).map_err(|message| BenchError::Report {
            path: format!("chart {id}").into(),
            message,
        })?;
        self.0.push(Chart {
            id: id.to_string(),
            title: title.to_string(),
            caption: caption.to_string(),
            svg,
        });
        Ok(())
    }
}
