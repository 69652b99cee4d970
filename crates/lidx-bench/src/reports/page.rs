//! `lidx report`'s page: one static HTML file, no JavaScript, that a browser or a mail client
//! shows as it is.
//!
//! In order: the machines and the commands that produced the records (from their `cpu`,
//! `cores` and `command` fields), a summary table (one row per input file: its kinds of records,
//! datasets, devices, machine, lidx version), the charts of [`crate::charts`] inline as SVG, the
//! findings tables of [`crate::findings`], and one table per kind of record with every field
//! but those the summary already names.
//!
//! Everything that comes from an input file (paths, labels, cells, commands) is escaped
//! ([`escape`]); the SVG charts escape their own text (plotters' SVG backend). Each chart sits
//! in a frame of a fixed size (`CHART_WIDTH` x `CHART_HEIGHT` inside a `FRAME_PX` border of
//! [`FRAME_COLOR`]) so that a screenshot can find and check it.

use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;

use crate::charts::Chart;
use crate::findings::FindingsTable;
use crate::plot::SIZE;
use crate::records::{RecordKind, RecordSet};

/// The colour of every chart's frame, `#112233`: found in a screenshot by the page test.
pub const FRAME_COLOR: [u8; 3] = [0x11, 0x22, 0x33];
/// Width of a chart's frame line, CSS pixels.
pub const FRAME_PX: u32 = 3;
/// Width of a chart on the page, CSS pixels (two side by side in 1280).
pub const CHART_WIDTH: u32 = 600;
/// Height of a chart on the page: the drawn figure's height at [`CHART_WIDTH`].
pub const CHART_HEIGHT: u32 = CHART_WIDTH * SIZE.1 / SIZE.0;

/// Fields every record table leaves to the summary.
const SUMMARIZED: [&str; 5] = ["schema", "command", "cpu", "cores", "lidx_version"];

/// `text` with `&`, `<`, `>`, `"` and `'` as character references, for HTML text and
/// attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A markdown cell as HTML: escaped, `` `code` `` spans drawn as code.
fn markdown_cell(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    if escaped.matches('`').count() % 2 == 1 {
        // An unpaired backtick: keep the text as written.
        return escaped;
    }
    out
}

/// A JSON value as a table cell: numbers short, absent values a dash.
fn cell(value: &Value) -> String {
    match value {
        Value::Null => "-".to_string(),
        Value::String(s) => escape(s),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => short(f),
            _ => escape(&n.to_string()),
        },
        other => escape(&other.to_string()),
    }
}

/// A float with four significant digits, no exponent for everyday magnitudes.
fn short(f: f64) -> String {
    let a = f.abs();
    if a == 0.0 {
        "0".to_string()
    } else if !(1e-3..1e9).contains(&a) {
        format!("{f:.3e}")
    } else {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{f:.digits$}")
    }
}

fn table(out: &mut String, id: &str, class: &str, header: &[String], rows: &[Vec<String>]) {
    let _ = write!(
        out,
        "<div class=\"wide\"><table id=\"{}\" class=\"{class}\"><thead><tr>",
        escape(id)
    );
    for h in header {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for c in row {
            let _ = write!(out, "<td>{c}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
}

/// One kind's records as a table of every field but [`SUMMARIZED`] (cells already HTML).
fn record_rows<R: Serialize>(records: &[R]) -> (Vec<String>, Vec<Vec<String>>) {
    let values: Vec<Value> = records
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    let mut header: Vec<String> = Vec::new();
    for v in &values {
        if let Value::Object(map) = v {
            for key in map.keys() {
                if !SUMMARIZED.contains(&key.as_str()) && !header.contains(key) {
                    header.push(key.clone());
                }
            }
        }
    }
    let rows = values
        .iter()
        .map(|v| {
            header
                .iter()
                .map(|h| cell(v.get(h).unwrap_or(&Value::Null)))
                .collect()
        })
        .collect();
    (header.iter().map(|h| escape(h)).collect(), rows)
}

const STYLE: &str = "
body { font-family: sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 24px; margin: 0 0 8px 0; }
h2 { font-size: 19px; margin: 24px 0 8px 0; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin: 16px 0 6px 0; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #bbb; padding: 2px 6px; vertical-align: top; text-align: left; }
th { background: #eee; }
td { max-width: 420px; }
.wide { overflow-x: auto; }
.grid { display: flex; flex-wrap: wrap; gap: 16px; }
figure.chart { margin: 0; border: FRAMEpx solid #112233; width: WIDTHpx; }
figure.chart svg { display: block; width: WIDTHpx; height: HEIGHTpx; }
figcaption { font-size: 12px; padding: 4px 6px; border-top: 1px solid #ccc; }
code { font-size: 12px; }
";

/// The page for `set`, its `charts` and the `findings` tables, titled `title`.
pub fn render(
    title: &str,
    set: &RecordSet,
    charts: &[Chart],
    findings: &[FindingsTable],
) -> String {
    let mut out = String::new();
    let style = STYLE
        .replace("FRAME", &FRAME_PX.to_string())
        .replace("WIDTH", &CHART_WIDTH.to_string())
        .replace("HEIGHT", &CHART_HEIGHT.to_string());
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
         <style>{style}</style>\n</head>\n<body>\n<h1>{t}</h1>\n<p>Written by <code>lidx report</code> \
         (lidx {v}) from {n} result file(s) and {m} findings table(s).</p>\n",
        t = escape(title),
        v = env!("CARGO_PKG_VERSION"),
        n = set.files.len(),
        m = findings.len(),
    );

    // Machines and commands.
    let mut machines: Vec<String> = Vec::new();
    let mut commands: Vec<String> = Vec::new();
    let mut without_command = Vec::new();
    for f in &set.files {
        let machine = machine(f);
        if !machine.is_empty() && !machines.contains(&machine) {
            machines.push(machine);
        }
        match f.facts.get("command") {
            Some(cmds) => {
                for c in cmds {
                    if !commands.contains(c) {
                        commands.push(c.clone());
                    }
                }
            }
            None => without_command.push(f.path.display().to_string()),
        }
    }
    out.push_str("<section id=\"machine\">\n<h2>Machine and commands</h2>\n<p>Machine: ");
    if machines.is_empty() {
        out.push_str("not recorded in these files");
    } else {
        out.push_str(&machines.join("; "));
    }
    out.push_str("</p>\n<p>Commands:</p>\n<ul class=\"commands\">\n");
    for c in &commands {
        let _ = writeln!(out, "<li><code>{}</code></li>", escape(c));
    }
    if !without_command.is_empty() {
        let _ = writeln!(
            out,
            "<li>not recorded (written before records named their command): {}</li>",
            escape(&without_command.join(", "))
        );
    }
    out.push_str("</ul>\n</section>\n");

    // Summary.
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    let header: Vec<String> = [
        "file",
        "records",
        "datasets",
        "devices",
        "machine",
        "lidx version",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let rows: Vec<Vec<String>> = set
        .files
        .iter()
        .map(|f| {
            let kinds = f
                .kinds
                .iter()
                .map(|(k, n)| format!("{n} {}", k.name()))
                .collect::<Vec<_>>()
                .join(", ");
            let fact = |name: &str| {
                escape(
                    &f.facts
                        .get(name)
                        .map_or("-".to_string(), |values| values.join(", ")),
                )
            };
            vec![
                escape(&f.path.display().to_string()),
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds
                },
                fact("dataset"),
                fact("device"),
                {
                    let m = machine(f);
                    if m.is_empty() {
                        "-".to_string()
                    } else {
                        m
                    }
                },
                fact("lidx_version"),
            ]
        })
        .collect();
    table(&mut out, "table-summary", "summary", &header, &rows);
    out.push_str("</section>\n");

    // Charts.
    out.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n");
    if charts.is_empty() {
        out.push_str("<p>None of these records has a figure the charts draw.</p>\n");
    }
    out.push_str("<div class=\"grid\">\n");
    for chart in charts {
        let svg = chart.svg.find("<svg").map_or("", |at| &chart.svg[at..]);
        let _ = writeln!(
            out,
            "<figure class=\"chart\" id=\"chart-{}\">{svg}<figcaption>{}</figcaption></figure>",
            escape(&chart.id),
            escape(&chart.caption)
        );
    }
    out.push_str("</div>\n</section>\n");

    // Findings.
    if !findings.is_empty() {
        out.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n");
        for (i, t) in findings.iter().enumerate() {
            let _ = writeln!(
                out,
                "<h3>{}{}</h3>",
                escape(&t.path.display().to_string()),
                if t.heading.is_empty() {
                    String::new()
                } else {
                    format!(": {}", escape(&t.heading))
                }
            );
            let header: Vec<String> = t.header.iter().map(|h| markdown_cell(h)).collect();
            let rows: Vec<Vec<String>> = t
                .rows
                .iter()
                .map(|r| r.iter().map(|c| markdown_cell(c)).collect())
                .collect();
            table(
                &mut out,
                &format!("findings-{}", i + 1),
                "findings",
                &header,
                &rows,
            );
        }
        out.push_str("</section>\n");
    }

    // Records.
    out.push_str("<section id=\"records\">\n<h2>Records</h2>\n");
    let mut kind_table = |kind: RecordKind, (header, rows): (Vec<String>, Vec<Vec<String>>)| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "<h3>{} ({} records)</h3>", kind.name(), rows.len());
        table(
            &mut out,
            &format!("records-{}", kind.name()),
            "records",
            &header,
            &rows,
        );
    };
    kind_table(RecordKind::Bench, record_rows(&set.bench));
    kind_table(RecordKind::Strings, record_rows(&set.strings));
    kind_table(RecordKind::Disk, record_rows(&set.disk));
    kind_table(RecordKind::Ycsb, record_rows(&set.ycsb));
    kind_table(RecordKind::Curve, record_rows(&set.curve));
    kind_table(RecordKind::Approx, record_rows(&set.approx));
    kind_table(RecordKind::Structure, record_rows(&set.structure));
    kind_table(RecordKind::Update, record_rows(&set.update));
    kind_table(RecordKind::Recovery, record_rows(&set.recovery));
    kind_table(RecordKind::Join, record_rows(&set.join));
    kind_table(RecordKind::Updatable, record_rows(&set.updatable));
    kind_table(RecordKind::ZeroInterval, record_rows(&set.zero_intervals));
    kind_table(RecordKind::StartNodes, record_rows(&set.start_nodes));
    kind_table(RecordKind::StartMixed, record_rows(&set.start_mixed));
    kind_table(RecordKind::Tpcc, record_rows(&set.tpcc));
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

/// The machine a file's records name: `cpu (N cores)`, escaped; empty when they name none.
fn machine(f: &crate::records::FileSummary) -> String {
    let cpus = f.facts.get("cpu").map(|v| v.join(", "));
    let cores = f.facts.get("cores").map(|v| v.join(", "));
    escape(&match (cpus, cores) {
        (Some(cpu), Some(cores)) => format!("{cpu} ({cores} cores)"),
        (Some(cpu), None) => cpu,
        (None, Some(cores)) => format!("{cores} cores"),
        (None, None) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_draws_code_spans() {
        assert_eq!(
            escape("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
        assert_eq!(markdown_cell("`<b>` x"), "<code>&lt;b&gt;</code> x");
        assert_eq!(markdown_cell("a ` b"), "a ` b");
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1.23456), "1.235");
        assert_eq!(short(12345.678), "12346");
        assert_eq!(short(0.000012), "1.200e-5");
    }
}
