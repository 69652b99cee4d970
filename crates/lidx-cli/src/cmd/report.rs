//! `lidx report`: result files of any command (`bench`, `bench --on-disk`, `ycsb`, `ycsb
//! --curve --csv`, `dims`, `recovery`, `join`'s JSON line) and findings tables
//! (`docs/results/*.md`) into one static HTML page: machine and commands, a summary table,
//! SVG charts, the findings tables and every record (`lidx_bench::page`).
//!
//! Inputs are named by their extension: `.jsonl`/`.json`/`.csv` are records
//! (`lidx_bench::records`, which refuses a record of an unknown schema naming the field),
//! `.md` findings. `--out` is never an input and an existing file is replaced only with
//! `--force` (`output`); the page is written beside it and renamed over it once whole.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use lidx_bench::records::RecordSet;
use lidx_bench::{charts, findings, page, BenchError};

use super::output;

/// Arguments of `lidx report`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Result files: records as JSON lines (`.jsonl`, `.json`) or CSV (`.csv`), findings
    /// tables as markdown (`.md`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,

    /// More markdown files whose tables go into the findings section.
    #[arg(long)]
    pub findings: Vec<PathBuf>,

    /// The page to write (HTML).
    #[arg(long)]
    pub out: PathBuf,

    /// Replace `--out` if it exists.
    #[arg(long)]
    pub force: bool,

    /// The page's title.
    #[arg(long, default_value = "lidx results")]
    pub title: String,
}

fn is_markdown(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("md")
}

/// Runs `lidx report`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let inputs: Vec<(&str, &Path)> = args
        .files
        .iter()
        .map(|f| ("FILE", f.as_path()))
        .chain(args.findings.iter().map(|f| ("--findings", f.as_path())))
        .collect();
    output::check(&args.out, &inputs, args.force)?;
    let mut set = RecordSet::default();
    let mut tables = Vec::new();
    for path in &args.files {
        if is_markdown(path) {
            tables.extend(findings::read(path)?);
        } else {
            set.read(path)?;
        }
    }
    for path in &args.findings {
        if !is_markdown(path) {
            return Err(BenchError::BadSpec {
                what: "--findings",
                got: path.display().to_string(),
                expected: "a markdown file (.md)".to_string(),
            }
            .into());
        }
        tables.extend(findings::read(path)?);
    }
    let charts = charts::charts(&set)?;
    let html = page::render(&args.title, &set, &charts, &tables);
    output::replace(&args.out, |temp| {
        std::fs::write(temp, html.as_bytes()).map_err(|source| BenchError::Io {
            path: temp.to_path_buf(),
            source,
        })
    })
    .with_context(|| format!("writing the report {}", args.out.display()))?;
    let records: usize = set.files.iter().flat_map(|f| f.kinds.values()).sum();
    note!(
        "wrote {} ({} records from {} files, {} charts, {} findings tables)",
        args.out.display(),
        records,
        set.files.len(),
        charts.len(),
        tables.len()
    );
    Ok(())
}
