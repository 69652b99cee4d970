//! Benchmark reports: one record per (dataset, workload, index) and the files and tables made
//! of them.
//!
//! # Record schema ([`BenchRecord`])
//!
//! One flat record, the same fields in JSON lines and CSV (CSV writes an absent value as an
//! empty cell). Times are nanoseconds unless the name says seconds; sizes are bytes.
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `schema` | | the record's kind and version, `bench/1` (see [`crate::records`]: files without it are read as version 1) |
//! | `command` | | the command line of the process that wrote the record |
//! | `dataset` | | dataset name (`lognormal:10M`, a file name) |
//! | `n` | keys | keys in the dataset (duplicates included) |
//! | `workload` | | canonical workload (`lookup:uniform`, `lookup:zipf`) |
//! | `index` | | index name (`pgm`, `rs`, `sorted`, ...) |
//! | `label` | | canonical index spec with every parameter, round numbers short (`rs:bits=18:err=32`, `rmi:leaves=1Mi`) |
//! | `params` | | the parameters alone in plain digits (`leaves=1048576`, empty when none) |
//! | `build_s` | s | wall time of one build on the sorted keys |
//! | `build_keys_per_s` | keys/s | `n / build_s` |
//! | `bytes` | B | `StaticIndex::size_in_bytes`: memory of the index, keys excluded |
//! | `bytes_per_key` | B/key | `bytes / n` |
//! | `mean_ns` | ns | a throughput figure: median over `runs` of the mean time per `operation`, measured on a tight loop over all queries timed as a whole, so the CPU overlaps consecutive lookups' memory misses (the table's `mean ns (throughput)`) |
//! | `mean_ns_min`, `mean_ns_max` | ns | fastest and slowest run's mean (the spread of the runs) |
//! | `p50_ns`, `p99_ns`, `p999_ns` | ns | latency figures: percentiles of a sample of individually timed lookups (every `sample_every`-th query, each alone between two clock reads, so nothing overlaps it), timer overhead subtracted; `p50` can be several times `mean_ns` for an index whose lookups overlap well back to back (the table's `p50 ns (latency)`) |
//! | `sample_every` | | the sampling stride of the percentiles |
//! | `huge_pages` | | whether the binary put large allocations (keys, index nodes) on transparent huge pages |
//! | `mean_log2_window` | log2(positions) | mean of `log2(max(1, hi - lo))` of the windows: about the last-mile comparisons per lookup |
//! | `segments` | | models in the bottom level, where the index has them |
//! | `height` | levels | levels searched above the data, where the index has them |
//! | `speedup_vs_binary` | x | `mean_ns` of `sorted` / this `mean_ns`, when `sorted` ran in the same benchmark |
//! | `runs` | | timed loops over all queries |
//! | `queries` | | lookups per loop |
//! | `seed` | | seed of the dataset generator and the workload |
//! | `cpu` | | CPU model from `/proc/cpuinfo` (`unknown` elsewhere) |
//! | `cores` | | CPUs available to the process |
//! | `lidx_version` | | version of the lidx-bench crate that produced the record |
//! | `operation` | | what one timed operation is: `lower_bound` for a static index (window plus last-mile search), `get` for an updatable map (its own point lookup, the answer checked outside the timed loop), `insert` for `--workload insert`; empty in files written before the field existed |
//!
//! The output format follows the file extension: `.jsonl` and `.json` write JSON lines (one
//! record per line, so results from several runs concatenate), `.csv` writes a header row and
//! one row per record. [`read_records`] reads either back.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::records::BenchRecord;

/// Facts about the machine a benchmark ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPU model name (`model name` in `/proc/cpuinfo`), `unknown` when not found.
    pub cpu: String,
    /// CPUs available to this process.
    pub cores: u64,
}

impl Machine {
    /// Reads `/proc/cpuinfo` and the available parallelism.
    pub fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        Machine { cpu, cores }
    }
}

/// The formats a report file can have, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line (`.jsonl`, `.json`).
    JsonLines,
    /// Header row, one row per record (`.csv`).
    Csv,
}

impl Format {
    /// The format for `path`'s extension, [`BenchError::BadSpec`] for any other.
    pub fn for_path(path: &Path) -> Result<Self> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("json") => Ok(Format::JsonLines),
            Some("csv") => Ok(Format::Csv),
            _ => Err(BenchError::BadSpec {
                what: "output file",
                got: path.display().to_string(),
                expected: "a path ending in .jsonl, .json (JSON lines) or .csv".to_string(),
            }),
        }
    }
}

/// Writes `records` (any record type: [`BenchRecord`], `DiskRecord`) to `path` (replacing it) in the format its extension names.
pub fn write_records<R: Serialize>(path: &Path, records: &[R]) -> Result<()> {
    let format = Format::for_path(path)?;
    let io = |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let encode = |message: String| BenchError::Report {
        path: path.to_path_buf(),
        message,
    };
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    match format {
        Format::JsonLines => {
            for record in records {
                serde_json::to_writer(&mut out, record).map_err(|e| encode(e.to_string()))?;
                out.write_all(b"\n").map_err(io)?;
            }
        }
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(&mut out);
            for record in records {
                writer
                    .serialize(record)
                    .map_err(|e| encode(e.to_string()))?;
            }
            writer.flush().map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

/// Reads the records of a file written by [`write_records`].
pub fn read_records<R: DeserializeOwned>(path: &Path) -> Result<Vec<R>> {
    let format = Format::for_path(path)?;
    let io = |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let decode = |message: String| BenchError::Report {
        path: path.to_path_buf(),
        message,
    };
    let file = BufReader::new(File::open(path).map_err(io)?);
    match format {
        Format::JsonLines => file
            .lines()
            .filter(|line| !matches!(line, Ok(l) if l.trim().is_empty()))
            .map(|line| {
                let line = line.map_err(io)?;
                serde_json::from_str(&line).map_err(|e| decode(e.to_string()))
            })
            .collect(),
        Format::Csv => csv::Reader::from_reader(file)
            .deserialize()
            .map(|row| row.map_err(|e| decode(e.to_string())))
            .collect(),
    }
}

/// The terminal table of the key columns, one row per record.
pub fn table(records: &[BenchRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "op",
        "build s",
        "Mkeys/s",
        "bytes/key",
        "mean ns (throughput)",
        "p50 ns (latency)",
        "p99 ns",
        "p99.9 ns",
        "log2 win",
        "segments",
        "height",
        "speedup",
    ]);
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in records {
        table.add_row(vec![
            r.label.clone(),
            r.operation.clone(),
            format!("{:.3}", r.build_s),
            format!("{:.1}", r.build_keys_per_s / 1e6),
            format!("{:.3}", r.bytes_per_key),
            format!("{:.1}", r.mean_ns),
            r.p50_ns.to_string(),
            r.p99_ns.to_string(),
            r.p999_ns.to_string(),
            format!("{:.2}", r.mean_log2_window),
            opt(r.segments),
            opt(r.height),
            r.speedup_vs_binary
                .map_or("-".to_string(), |s| format!("{s:.2}x")),
        ]);
    }
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}
