//! The memory-throughput curve of paper 002 Fig. 11 as CSV and as an SVG line plot.
//!
//! Paper 002 plots each index's throughput against the memory it uses: the disk B+-tree moves
//! along its curve by keeping more levels in memory, the hybrid by its memory budget. We draw
//! one line per (workload, store family) from [`KvRecord`]s written by
//! [`crate::kv_runner::curve`]: the family is `btree` for every B+-tree record (0, 1, ... resident
//! levels up to all inner nodes) and `hybrid` for the others. Memory (x) is on a log scale, as
//! in the paper, since the budgets span two orders of magnitude; throughput (y) is linear.
//!
//! The x of a point is the memory the store may hold over the run ([`run_memory`]), not after
//! its build: the B+-tree's inner nodes grow with every split, and the hybrid's dynamic stage
//! fills up to its budget between merges. After the build both are at their smallest.

use std::path::Path;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::records::KvRecord;
use crate::ycsb::YcsbWorkload;

/// One point of the curve, as written to CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// `curve/<version>` (see [`crate::records`]).
    #[serde(default = "crate::records::default_schema::curve")]
    pub schema: String,
    /// The command line that wrote the record; empty when read from a file written before
    /// the field existed.
    #[serde(default)]
    pub command: String,
    /// Workload label.
    pub workload: String,
    /// `btree` or `hybrid`.
    pub family: String,
    /// Store label.
    pub store: String,
    /// Memory of the store after its build.
    pub memory_bytes: u64,
    /// Memory the store may hold over the run ([`run_memory`]): the x of the plot.
    pub memory_run_bytes: u64,
    /// Memory over the all-inner B+-tree's.
    pub memory_vs_btree: Option<f64>,
    /// Throughput (modeled on simulated devices, wall on files).
    pub ops_per_s: f64,
    /// Throughput counting the merge drain.
    pub ops_per_s_incl_drain: f64,
    /// Blocks read per read.
    pub blocks_per_read: Option<f64>,
}

/// The points of `records`, in order; a skipped record (the table and the records say why) is
/// no point.
pub fn points(records: &[KvRecord]) -> Vec<CurvePoint> {
    records
        .iter()
        .filter(|r| r.skipped.is_none())
        .map(|r| CurvePoint {
            schema: crate::records::RecordKind::Curve.schema(),
            command: r.command.clone(),
            workload: r.workload.clone(),
            family: family(&r.store).to_string(),
            store: r.store.clone(),
            memory_bytes: r.memory_bytes,
            memory_run_bytes: run_memory(r),
            memory_vs_btree: r.memory_vs_btree,
            ops_per_s: r.ops_per_s,
            ops_per_s_incl_drain: r.ops_per_s_incl_drain,
            blocks_per_read: r.blocks_per_read,
        })
        .collect()
}

/// The memory `r`'s store may hold over its run: the largest of its memory after the build and
/// at the end, and, for a hybrid under a workload that writes, its budget (its dynamic stage
/// grows up to it between merges).
pub fn run_memory(r: &KvRecord) -> u64 {
    let observed = r.memory_bytes.max(r.memory_end_bytes);
    // A label this build does not parse (a record from another version) counts as writing,
    // so its budget is never left out of the memory it may hold.
    let writes = YcsbWorkload::parse(&r.workload).map_or(true, YcsbWorkload::writes);
    match r.memory_budget {
        Some(budget) if writes => observed.max(budget),
        _ => observed,
    }
}

fn family(store: &str) -> &'static str {
    if store.trim_start_matches("store:").starts_with("btree") {
        "btree"
    } else {
        "hybrid"
    }
}

/// Writes the curve's points to `path` as CSV (a header row, then one row per record).
pub fn write_csv(path: &Path, records: &[KvRecord]) -> Result<()> {
    let fail = |message: String| BenchError::Report {
        path: path.to_path_buf(),
        message,
    };
    let mut writer = csv::Writer::from_path(path).map_err(|e| fail(e.to_string()))?;
    for point in points(records) {
        writer.serialize(point).map_err(|e| fail(e.to_string()))?;
    }
    writer.flush().map_err(|e| BenchError::Io {
        path: path.to_path_buf(),
        source: e,
    })
}

/// Draws throughput (Kops/s) against memory (bytes, log scale) to `path` as SVG, one line per
/// (workload, family), titled `title`.
pub fn write_svg(path: &Path, records: &[KvRecord], title: &str) -> Result<()> {
    let points = points(records);
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in &points {
        let name = format!("{} {}", p.workload, p.family);
        let xy = ((p.memory_run_bytes.max(1)) as f64, p.ops_per_s / 1e3);
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, line)) => line.push(xy),
            None => lines.push((name, vec![xy])),
        }
    }
    let axes = Axes {
        x: "memory over the run (bytes, log scale)",
        y: "throughput (Kops/s)",
        x_log: true,
        x_bytes: true,
    };
    write_lines(path, title, &axes, lines)
}

/// The axes of a line plot: their captions, and whether x is on a log scale and in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a> {
    /// Caption of the x axis.
    pub x: &'a str,
    /// Caption of the y axis.
    pub y: &'a str,
    /// A log scale for x (values at or below 0 are drawn at the smallest positive one).
    pub x_log: bool,
    /// x labels as byte sizes.
    pub x_bytes: bool,
}

/// Draws named lines of (x, y) points (each sorted by x, drawn with its points) to `path` as
/// SVG, titled `title`: the one plot writer of every figure lidx draws.
pub fn write_lines(
    path: &Path,
    title: &str,
    axes: &Axes<'_>,
    lines: Vec<(String, Vec<(f64, f64)>)>,
) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    draw_lines(root, title, axes, lines).map_err(|message| BenchError::Report {
        path: path.to_path_buf(),
        message,
    })
}

/// The figure [`write_lines`] draws, as the text of an SVG document (for a page that inlines
/// it: `lidx report`). Text from `title`, `axes` and the line names is escaped by the SVG
/// backend.
pub fn lines_svg(
    title: &str,
    axes: &Axes<'_>,
    lines: Vec<(String, Vec<(f64, f64)>)>,
) -> std::result::Result<String, String> {
    let mut svg = String::new();
    draw_lines(
        SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(),
        title,
        axes,
        lines,
    )?;
    Ok(svg)
}

/// Width and height of every figure, in pixels.
pub const SIZE: (u32, u32) = (900, 560);

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    axes: &Axes<'_>,
    mut lines: Vec<(String, Vec<(f64, f64)>)>,
) -> std::result::Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    for (_, line) in &mut lines {
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        if axes.x_log {
            for p in line.iter_mut() {
                p.0 = p.0.max(1e-3);
            }
        }
    }
    let all = lines.iter().flat_map(|(_, l)| l.iter());
    let (mut x_lo, mut x_hi, mut y_hi) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in all {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        y_hi = y_hi.max(y);
    }
    if x_lo > x_hi {
        (x_lo, x_hi) = (1.0, 1.0);
    }
    let y_hi = if y_hi > 0.0 { y_hi * 1.1 } else { 1.0 };
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64);
    let bytes = |x: &f64| crate::disk_report::human_bytes(*x as u64);
    let plain = |x: &f64| format!("{x}");
    let x_format: &dyn Fn(&f64) -> String = if axes.x_bytes { &bytes } else { &plain };
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(|e| fail(&e))?;
            chart
                .configure_mesh()
                .x_desc(axes.x)
                .y_desc(axes.y)
                .x_label_formatter(x_format)
                .draw()
                .map_err(|e| fail(&e))?;
            for (i, (name, line)) in lines.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                chart
                    .draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))
                    .map_err(|e| fail(&e))?
                    .label(name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
                chart
                    .draw_series(
                        line.iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                    )
                    .map_err(|e| fail(&e))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| fail(&e))?;
        }};
    }
    if axes.x_log {
        draw!(builder.build_cartesian_2d((x_lo / 1.5..x_hi * 1.5).log_scale(), 0.0..y_hi));
    } else {
        let pad = ((x_hi - x_lo) * 0.05).max(1.0);
        draw!(builder.build_cartesian_2d(x_lo - pad..x_hi + pad, 0.0..y_hi));
    }
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(workload: &str) -> KvRecord {
        KvRecord {
            workload: workload.to_string(),
            memory_bytes: 10,
            memory_end_bytes: 20,
            memory_budget: Some(100),
            ..KvRecord::default()
        }
    }

    #[test]
    fn the_budget_counts_only_under_a_workload_that_writes() {
        for read_only in ["read-only", "c:zipf", "c:uniform"] {
            assert_eq!(run_memory(&record(read_only)), 20, "{read_only}");
        }
        for writes in [
            "write-only",
            "balanced",
            "a:zipf",
            "d:latest",
            "e:uniform",
            "f:zipf",
        ] {
            assert_eq!(run_memory(&record(writes)), 100, "{writes}");
        }
        assert_eq!(run_memory(&record("from-a-later-build")), 100);
    }
}
