//! What `lidx repro` does around an experiment's commands: refuse (or, with `--force`, clear)
//! outputs that exist before anything runs, give each step its part file in the scratch
//! directory, and afterwards gather the parts into `<id>.jsonl` (the records `lidx report`
//! reads), flatten them into `<id>.csv` and draw the SVG the plan's [`Figure`] names, with
//! [`crate::plot`]'s one line-plot writer or `lidx report`'s [`crate::charts`].
//!
//! The CSV is the records as they are: one column per field in the order the fields first
//! appear, nested values as JSON text, absent ones empty, so nothing a record holds is lost.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::charts;
use crate::error::{BenchError, Result};
use crate::plot::{write_lines, Axes};
use crate::records::RecordSet;
use crate::repro::plan::{Context, Figure, Lines, Plan, StepOutput, X};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Files of the output directory that belong to the experiment: its listed outputs, its
/// scratch directory and the charts `<id>-<chart>.svg` a previous run drew.
pub fn existing(context: &Context, plan: &Plan) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = plan
        .outputs(context)
        .into_iter()
        .chain(std::iter::once(context.work()))
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .collect();
    if let Ok(entries) = fs::read_dir(&context.out) {
        let prefix = format!("{}-", context.id);
        for entry in entries {
            let path = entry.map_err(io(&context.out))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".svg"))
                && !found.contains(&path)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Before the steps run: refuses an output that exists ([`BenchError::OutputExists`] naming
/// the first) unless `force`, in which case they are removed; then makes the output and
/// scratch directories.
pub fn prepare(context: &Context, plan: &Plan, force: bool) -> Result<()> {
    let found = existing(context, plan)?;
    if let Some(first) = found.first() {
        if !force {
            return Err(BenchError::OutputExists {
                path: first.clone(),
            });
        }
    }
    for path in &found {
        let removed = if path.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
        removed.map_err(io(path))?;
    }
    fs::create_dir_all(context.work()).map_err(io(&context.work()))
}

/// The part file of step `index`: where its records go (`--out`) or its standard output.
pub fn part(context: &Context, index: usize) -> PathBuf {
    context.work().join(format!("part-{index}.jsonl"))
}

/// After the steps ran: gathers their parts into `<id>.jsonl` and `<id>.csv`, draws the SVG,
/// removes the scratch directory, and returns the files written (the commands' own too).
pub fn finish(context: &Context, plan: &Plan) -> Result<Vec<PathBuf>> {
    let mut rows = Vec::new();
    for (i, step) in plan.steps.iter().enumerate() {
        if step.output == StepOutput::Nothing {
            continue;
        }
        let path = part(context, i);
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line).map_err(|e| BenchError::Report {
                path: path.clone(),
                message: format!(
                    "line {}: not JSON: {e} (from `{}`)",
                    n + 1,
                    step.command_line()
                ),
            })?;
            match value.get("rows").and_then(Value::as_array) {
                Some(inner) => rows.extend(nested_rows(&value, inner)),
                None => rows.push(value),
            }
        }
    }
    let jsonl = context.file(".jsonl");
    let mut text = String::new();
    for row in &rows {
        text.push_str(&row.to_string());
        text.push('\n');
    }
    fs::write(&jsonl, text).map_err(io(&jsonl))?;
    let csv = context.file(".csv");
    write_csv(&csv, &rows)?;
    let mut written = vec![jsonl.clone(), csv];
    match plan.figure {
        Figure::Charts => {
            let mut set = RecordSet::default();
            set.read(&jsonl)?;
            let drawn = charts::charts(&set)?;
            if drawn.is_empty() {
                return Err(BenchError::Report {
                    path: jsonl,
                    message: "the records have no figure lidx report can draw".to_string(),
                });
            }
            for chart in drawn {
                let svg = context.file(&format!("-{}.svg", chart.id));
                fs::write(&svg, chart.svg).map_err(io(&svg))?;
                written.push(svg);
            }
        }
        Figure::Lines(plots) => {
            for plot in plots {
                let svg = context.file(&format!("-{}.svg", plot.name));
                draw(&svg, context.title, &rows, plot)?;
                written.push(svg);
            }
        }
        Figure::ByCommand => {}
    }
    for file in &plan.files {
        if !file.exists() {
            return Err(BenchError::Report {
                path: file.clone(),
                message: "a step of the plan should have written this file and did not".to_string(),
            });
        }
        written.push(file.clone());
    }
    fs::remove_dir_all(context.work()).map_err(io(&context.work()))?;
    Ok(written)
}

/// Writes `rows` (JSON objects) as CSV: a column per field, in first-seen order.
pub fn write_csv(path: &Path, rows: &[Value]) -> Result<()> {
    let mut columns: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let empty = Map::new();
    let objects: Vec<&Map<String, Value>> = rows
        .iter()
        .map(|r| r.as_object().unwrap_or(&empty))
        .collect();
    for object in &objects {
        for key in object.keys() {
            if seen.insert(key.clone()) {
                columns.push(key.clone());
            }
        }
    }
    let fail = |e: csv::Error| BenchError::Report {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut writer = csv::Writer::from_path(path).map_err(fail)?;
    writer.write_record(&columns).map_err(fail)?;
    for object in objects {
        let cells = columns.iter().map(|c| match object.get(c) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        });
        writer.write_record(cells).map_err(fail)?;
    }
    writer.flush().map_err(io(path))
}

/// The rows of an answer that holds its records in `rows` (`lidx stats --zero-interval
/// --json`), each with the answer's other fields (dataset, records per block).
fn nested_rows(value: &Value, inner: &[Value]) -> Vec<Value> {
    let outer: Map<String, Value> = value
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "rows")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    inner
        .iter()
        .map(|row| {
            let mut object = outer.clone();
            if let Some(fields) = row.as_object() {
                object.extend(fields.clone());
            }
            Value::Object(object)
        })
        .collect()
}

fn text(row: &Value, field: &str) -> String {
    match row.get(field) {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

impl crate::repro::plan::Axis {
    /// The axis' value of `row`: its first numeric field, scaled; NaN when none.
    fn value(&self, row: &Value) -> f64 {
        self.fields
            .iter()
            .find_map(|f| row.get(*f).and_then(Value::as_f64))
            .map_or(f64::NAN, |v| v * self.factor)
    }
}

/// Draws one line plot of `rows`.
fn draw(path: &Path, title: &str, rows: &[Value], plot: &Lines) -> Result<()> {
    // A line's name: the `line` fields that vary over the records.
    let varying: Vec<&str> = plot
        .line
        .iter()
        .copied()
        .filter(|f| {
            rows.iter()
                .map(|r| text(r, f))
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        })
        .collect();
    let name_of = |row: &Value| {
        let parts: Vec<String> = varying.iter().map(|f| text(row, f)).collect();
        if parts.is_empty() {
            plot.line
                .iter()
                .map(|f| text(row, f))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            parts.join(" ")
        }
    };
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut add = |name: String, x: f64, y: f64| {
        if !x.is_finite() || !y.is_finite() {
            return;
        }
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, line)) => line.push((x, y)),
            None => lines.push((name, vec![(x, y)])),
        }
    };
    let (x_caption, x_log, x_bytes);
    match plot.x {
        X::Field(axis) => {
            (x_caption, x_log, x_bytes) = (axis.label.to_string(), axis.log, axis.bytes);
            for row in rows {
                for y in plot.ys {
                    let name = if plot.ys.len() > 1 {
                        format!("{} {}", name_of(row), y.label)
                    } else {
                        name_of(row)
                    };
                    add(name, axis.value(row), y.value(row));
                }
            }
        }
        X::Series => {
            let names: Vec<String> = plot
                .ys
                .iter()
                .enumerate()
                .map(|(i, y)| format!("{} = {}", i + 1, y.label))
                .collect();
            (x_caption, x_log, x_bytes) = (names.join(", "), false, false);
            for row in rows {
                for (i, y) in plot.ys.iter().enumerate() {
                    add(name_of(row), (i + 1) as f64, y.value(row));
                }
            }
        }
    }
    if lines.is_empty() {
        return Err(BenchError::Report {
            path: path.to_path_buf(),
            message: format!(
                "no record has the figure's fields ({})",
                plot.ys
                    .iter()
                    .flat_map(|y| y.fields.iter().copied())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let axes = Axes {
        x: &x_caption,
        y: plot.y_caption,
        x_log,
        x_bytes,
    };
    write_lines(path, title, &axes, lines)
}
