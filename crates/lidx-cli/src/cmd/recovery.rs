//! `lidx recovery`: paper 001's recovery time (Fig. 16) and space table (Table III) of the
//! `log` store engine over each updatable map ([`lidx_bench::recovery_runner`]): load a store,
//! update every key `--updates` times (the collector keeping the log within
//! `--log-space-ratio` of its live records), reopen it `--runs` times (each rebuilds the map
//! from the last checkpoint and the log after it), check every value, and print a table (and
//! the records in `--out`, JSON lines or CSV).

use std::path::PathBuf;

use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use lidx::mem::MapSpec;
use lidx_bench::disk_report::human_bytes;
use lidx_bench::records::RecoveryRecord;
use lidx_bench::recovery_runner;

use super::args::{check_out_inputs, parse_space_ratio, write_out};
use super::output::Staging;
use super::{load_numeric_dataset, Bars};

/// Arguments of `lidx recovery`.
#[derive(Debug, Parser)]
pub struct Args {
    /// The keys (u64 datasets: `gen:<generator>:<count>` or an SOSD file).
    #[arg(long, default_value = "gen:lognormal:1M")]
    pub dataset: String,

    /// Comma-separated maps, each `name[:param=value]...` as `lidx bench --help` lists them
    /// (the maps only); default every map with its defaults.
    #[arg(long)]
    pub index: Option<String>,

    /// Bytes of value per key (paper 001: 200).
    #[arg(long, default_value_t = 200)]
    pub payload_size: usize,

    /// Rounds of updates after the load, each a new value for every key (issue 32: the log's
    /// space after 10x its data in updates).
    #[arg(long, default_value_t = 0)]
    pub updates: u64,

    /// The collector's space ratio during the updates (at least 1.2), or `off` to keep every
    /// record (paper 001's setting).
    #[arg(long, default_value = "1.5")]
    pub log_space_ratio: String,

    /// Reopenings timed per map; the table gives the median.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,

    /// Directory under which the stores go, each in a new directory of its own removed after
    /// its map ran (nothing already there is touched); default the system's temporary one.
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Seed of generated datasets.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Also write the records here (`.jsonl` or `.csv`).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Replace an existing `--out` file (without it an existing file is refused).
    #[arg(long)]
    pub force: bool,
}

/// Runs `lidx recovery`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let maps = match &args.index {
        Some(list) => list
            .split(',')
            .filter(|m| !m.trim().is_empty())
            .map(|m| MapSpec::parse(m.trim()))
            .collect::<lidx::Result<Vec<_>>>()?,
        None => MapSpec::forms()
            .iter()
            .map(|form| MapSpec::parse(form.split('[').next().unwrap_or_default()))
            .collect::<lidx::Result<Vec<_>>>()?,
    };
    anyhow::ensure!(!maps.is_empty(), "--index names no map");
    let space_ratio = parse_space_ratio(&args.log_space_ratio)?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    let dataset = load_numeric_dataset(&args.dataset, args.seed)?;
    // The stores go in a private directory this run creates (under --dir, or the system's
    // temporary directory) and removes, on signals too: nothing of the user's is touched.
    let base = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => std::env::temp_dir(),
    };
    let own = Staging::beside(&base)?;
    let records = recovery_runner::run(
        &dataset,
        &maps,
        own.dir(),
        args.payload_size,
        args.updates,
        space_ratio,
        args.runs,
        &mut Bars::default(),
    )?;
    drop(own);
    // In place before the last line on stdout: a closed pipe cannot leave a staged file.
    write_out(args.out.as_ref(), &records)?;
    println!(
        "{} ({} distinct keys, {}-byte values, {} rounds of updates, space ratio {}), {} \
         reopenings each, {} ({} cores)",
        dataset.name,
        records[0].n,
        args.payload_size,
        args.updates,
        args.log_space_ratio,
        args.runs,
        records[0].cpu,
        records[0].cores
    );
    println!("{}", table(&records));
    Ok(())
}

fn table(records: &[RecoveryRecord]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "map",
        "recovery s",
        "Mrec/s",
        "index",
        "index+keys",
        "index+keys+values",
        "log on disk",
        "log / live",
        "log / data",
        "checkpoint",
        "replayed",
        "load s",
        "update s",
    ]);
    for r in records {
        t.add_row([
            r.map.clone(),
            format!("{:.3}", r.recovery_s),
            format!("{:.2}", r.records_per_s / 1e6),
            human_bytes(r.index_bytes),
            human_bytes(r.index_keys_bytes),
            human_bytes(r.index_keys_values_bytes),
            human_bytes(r.log_bytes),
            format!("{:.2}", r.log_bytes as f64 / r.log_live_bytes.max(1) as f64),
            format!("{:.2}", r.log_bytes as f64 / r.user_bytes.max(1) as f64),
            human_bytes(r.checkpoint_bytes),
            r.replayed_records.to_string(),
            format!("{:.2}", r.load_s),
            format!("{:.2}", r.update_s),
        ]);
    }
    for column in 1..13 {
        if let Some(c) = t.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}
