//! What `lidx repro` does around an experiment's commands: refuse outputs that exist before
//! anything runs (unless `--force`), give each step its part file in the scratch directory,
//! and afterwards gather the parts into `<id>.jsonl` (the records `lidx report` reads),
//! flatten them into `<id>.csv` and draw the SVG the plan's [`Figure`] names, with
//! [`crate::plot`]'s one line-plot writer or `lidx report`'s [`crate::charts`].
//!
//! Every output is written in the scratch directory (the steps' own CSV and SVG too) and
//! renamed into the output directory, fsynced, only once all are written: with `--force` the
//! old outputs stay as they were until then, and a failed step leaves them (issue 30, class
//! 3: they were removed before the steps ran). Nothing is removed here: the scratch directory
//! is the caller's, made for this run and removed by it.
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
use crate::repro::plan::{Best, Context, Figure, Lines, Plan, StepOutput, X};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Files of the output directory that belong to the experiment: its listed outputs and the
/// charts `<id>-<chart>.svg` a previous run drew.
pub fn existing(context: &Context, plan: &Plan) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = plan
        .outputs(context)
        .into_iter()
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
/// the first) unless `force`, in which case it is replaced once the new one is written.
pub fn prepare(context: &Context, plan: &Plan, force: bool) -> Result<()> {
    match existing(context, plan)?.into_iter().next() {
        Some(path) if !force => Err(BenchError::OutputExists { path }),
        _ => Ok(()),
    }
}

/// The part file of step `index`: where its records go (`--out`) or its standard output.
pub fn part(context: &Context, index: usize) -> PathBuf {
    context.work().join(format!("part-{index}.jsonl"))
}

/// After the steps ran: gathers their parts into `<id>.jsonl` and `<id>.csv`, draws the SVG,
/// moves them and the commands' own files into the output directory, and returns the files
/// written there.
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
    let jsonl = context.staged(".jsonl");
    let mut text = String::new();
    for row in &rows {
        text.push_str(&row.to_string());
        text.push('\n');
    }
    fs::write(&jsonl, text).map_err(io(&jsonl))?;
    let csv = context.staged(".csv");
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
                let svg = context.staged(&format!("-{}.svg", chart.id));
                fs::write(&svg, chart.svg).map_err(io(&svg))?;
                written.push(svg);
            }
        }
        Figure::Lines(plots) => {
            for plot in plots {
                let svg = context.staged(&format!("-{}.svg", plot.name));
                draw(&svg, context.title, &rows, plot)?;
                written.push(svg);
            }
        }
        Figure::ByCommand => {}
        Figure::Best(best) => {
            let table = best_rows(&rows, best);
            let (csv, jsonl) = (context.staged("-best.csv"), context.staged("-best.jsonl"));
            write_csv(&csv, &table)?;
            let text: String = table.iter().map(|r| format!("{r}\n")).collect();
            fs::write(&jsonl, text).map_err(io(&jsonl))?;
            written.extend([csv, jsonl]);
        }
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
    move_into(&written, &context.out)
}

/// Fsyncs each file of `staged`, renames it into `out` under its own name and fsyncs `out`;
/// returns the new paths.
fn move_into(staged: &[PathBuf], out: &Path) -> Result<Vec<PathBuf>> {
    for file in staged {
        fs::File::open(file)
            .and_then(|f| f.sync_all())
            .map_err(io(file))?;
    }
    let mut moved = Vec::with_capacity(staged.len());
    for file in staged {
        let target = out.join(file.file_name().unwrap_or_default());
        fs::rename(file, &target).map_err(io(&target))?;
        moved.push(target);
    }
    fs::File::open(out)
        .and_then(|d| d.sync_all())
        .map_err(io(out))?;
    Ok(moved)
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

/// The record of each group of `rows` highest in `best.by` (groups in first-seen order;
/// records without that value and skipped ones are left out), as rows of the group's fields,
/// the structure (`family`), the value, the columns and their `total`.
fn best_rows(rows: &[Value], best: &Best) -> Vec<Value> {
    let mut chosen: Vec<(Vec<String>, &Value)> = Vec::new();
    for row in rows {
        let value = best.by.value(row);
        if !value.is_finite() || row.get("skipped").is_some_and(|s| !s.is_null()) {
            continue;
        }
        let family = text(row, best.family);
        let family = family.split(':').next().unwrap_or_default().to_string();
        let key: Vec<String> = best
            .group
            .iter()
            .map(|f| text(row, f))
            .chain([family])
            .collect();
        match chosen.iter_mut().find(|(k, _)| *k == key) {
            Some((_, held)) if best.by.value(held) < value => *held = row,
            Some(_) => {}
            None => chosen.push((key, row)),
        }
    }
    chosen
        .into_iter()
        .map(|(key, row)| {
            let mut object = Map::new();
            let fields = best.group.iter().chain([&"index"]);
            for (field, value) in fields.zip(key) {
                object.insert(field.to_string(), Value::String(value));
            }
            object.insert(best.by.label.to_string(), best.by.value(row).into());
            for c in best.columns {
                object.insert(c.to_string(), row.get(*c).cloned().unwrap_or(Value::Null));
            }
            let total: f64 = best
                .total
                .iter()
                .filter_map(|f| row.get(*f).and_then(Value::as_f64))
                .sum();
            object.insert("total".to_string(), total.into());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::plan::Axis;

    const BEST: Best = Best {
        group: &["workload"],
        family: "store",
        by: Axis::of("ops_per_s", &["ops_per_s"]),
        columns: &["memory_budget"],
        total: &["memory_end_bytes", "disk_bytes"],
    };

    fn row(workload: &str, store: &str, ops: Option<f64>, budget: u64) -> Value {
        serde_json::json!({
            "workload": workload, "store": store, "ops_per_s": ops,
            "memory_budget": budget, "memory_end_bytes": 100 * budget, "disk_bytes": 7,
        })
    }

    #[test]
    fn the_best_record_of_each_group_is_kept_with_its_total_space() {
        let rows = [
            row("read-only", "hybrid:budget=1", Some(10.0), 1),
            row("read-only", "hybrid:budget=2", Some(30.0), 2),
            row("read-only", "hybrid:budget=9", None, 9),
            row("read-only", "btree", Some(20.0), 3),
            row("write-only", "hybrid:budget=4", Some(5.0), 4),
            row("write-only", "hybrid:budget=5", Some(4.0), 5),
        ];
        let mut skipped = row("write-only", "hybrid:budget=6", Some(0.0), 6);
        skipped["skipped"] = "its budget is too small".into();
        let rows = [rows.as_slice(), &[skipped]].concat();
        let table = best_rows(&rows, &BEST);
        let got: Vec<(String, String, u64, f64)> = table
            .iter()
            .map(|r| {
                (
                    text(r, "workload"),
                    text(r, "index"),
                    r["memory_budget"].as_u64().unwrap(),
                    r["total"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("read-only".into(), "hybrid".into(), 2, 207.0),
                ("read-only".into(), "btree".into(), 3, 307.0),
                ("write-only".into(), "hybrid".into(), 4, 407.0),
            ]
        );
    }
}
