//! `lidx stats`: facts about a dataset that predict how hard it is for a learned index.

use anyhow::Context;
use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use lidx_bench::stats;

use super::{load_dataset, spinner};

/// Arguments of `lidx stats`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>` or the path of an SOSD u64 file.
    #[arg(long)]
    pub dataset: String,

    /// Seed of a generated dataset.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `lidx stats`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dataset = load_dataset(&args.dataset, args.seed)?;
    let bar = spinner(&format!("statistics of {}", dataset.name));
    let mut stage = |name: &'static str| bar.set_message(format!("{}: {name}", dataset.name));
    let computed = stats::compute(&dataset.keys, Some(&mut stage));
    bar.finish_and_clear();
    let computed = computed.with_context(|| format!("statistics of {}", dataset.name))?;
    let value = serde_json::to_value(&computed).context("encoding the statistics")?;
    if args.json {
        println!("{value}");
        return Ok(());
    }
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["statistic", "value"]);
    table.add_row(vec!["dataset".to_string(), dataset.name.clone()]);
    flatten("", &value, &mut table);
    println!("{table}");
    Ok(())
}

/// One row per leaf of the JSON value, nested names joined by dots.
fn flatten(prefix: &str, value: &serde_json::Value, table: &mut Table) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, value) in fields {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, value, table);
            }
        }
        serde_json::Value::String(s) => {
            table.add_row(vec![prefix.to_string(), s.clone()]);
        }
        other => {
            table.add_row(vec![prefix.to_string(), other.to_string()]);
        }
    }
}
