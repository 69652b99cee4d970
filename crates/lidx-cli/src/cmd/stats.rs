//! `lidx stats`: facts about a dataset that predict how hard it is for a learned index.
//!
//! `--zero-interval` prints instead paper 002 Table 3 for the dataset: segments of the optimal PLA
//! (PGM) and knots of the spline (RadixSpline), without and with disk-based zero intervals (G3),
//! at equal expected I/O pages per lookup (eq. 4; each variant gets the largest `eps` within the
//! budget, [`lidx::raw::model::zero_interval`]), and the reduction.

use anyhow::Context;
use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use lidx::model::cdf_points;
use lidx::model::optimal_pla_points;
use lidx::model::spline_points;
use lidx::raw::model::zero_interval;
use lidx_bench::stats;

use lidx_bench::keyfile::Keys;

use super::{load_any_dataset, load_dataset, spinner};

/// Arguments of `lidx stats`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>`, the path of an SOSD u64 file, or a file of other keys:
    /// `text:<path>` (or `<path>.txt`, one key a line), `sosd-u32:`, `sosd-i64:`,
    /// `sosd-f64:`, `str16:<path>`. Keys of other types than u64 get their model-space
    /// figures on their model image (see the output's `model_image`); `--zero-interval`
    /// takes u64 keys.
    #[arg(long)]
    pub dataset: String,

    /// Seed of a generated dataset.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Compare model counts without and with disk-based zero intervals (paper 002 G3, Table 3)
    /// instead of the usual statistics. Costs four model fits per budget, about a second per
    /// 10^7 keys each.
    #[arg(long)]
    pub zero_interval: bool,

    /// Expected I/O pages per lookup (eq. 4) to compare at, comma-separated (`--zero-interval`).
    #[arg(long, default_value = "1.5", value_delimiter = ',')]
    pub pages: Vec<f64>,

    /// Records per page (`--zero-interval`): 255 for 8-byte keys and payloads in 4 KiB blocks.
    #[arg(long, default_value_t = 255)]
    pub per_block: usize,
}

/// One row of the zero-interval comparison.
#[derive(Debug)]
struct ZeroRow {
    pages: f64,
    model: &'static str,
    eps_plain: usize,
    eps_zero: usize,
    expected_pages_plain: f64,
    expected_pages_zero: f64,
    models_plain: usize,
    models_zero: usize,
    saving_percent: f64,
}

/// The rows of `--zero-interval` for `keys` (sorted).
fn zero_rows(
    keys: &[u64],
    pages: &[f64],
    per_block: usize,
    mut stage: impl FnMut(String),
) -> anyhow::Result<Vec<ZeroRow>> {
    lidx::raw::key::check_sorted(keys)?;
    let mut rows = Vec::new();
    for &budget in pages {
        let eps_plain = zero_interval::eps_for_expected_pages(budget, per_block, 1)?;
        let eps_zero = zero_interval::zero_eps_for_expected_pages(budget, per_block)?;
        zero_interval::validate(eps_zero, per_block)?;
        let row = |model, plain: usize, zero: usize| ZeroRow {
            pages: budget,
            model,
            eps_plain,
            eps_zero,
            expected_pages_plain: zero_interval::expected_pages(eps_plain, per_block, 1),
            expected_pages_zero: zero_interval::zero_expected_pages(eps_zero, per_block),
            models_plain: plain,
            models_zero: zero,
            saving_percent: 100.0 * (1.0 - zero as f64 / plain.max(1) as f64),
        };
        stage(format!("PGM at {budget} pages"));
        let plain = optimal_pla_points(cdf_points(keys), eps_plain).len();
        let zero = zero_interval::zero_pla_points(cdf_points(keys), eps_zero, per_block).len();
        rows.push(row("PGM", plain, zero));
        stage(format!("RadixSpline at {budget} pages"));
        let plain = spline_points(cdf_points(keys), eps_plain).len();
        let zero = zero_interval::zero_spline_points(cdf_points(keys), eps_zero, per_block).len();
        rows.push(row("RadixSpline", plain, zero));
    }
    Ok(rows)
}

fn run_zero_interval(args: &Args) -> anyhow::Result<()> {
    let dataset = load_dataset(&args.dataset, args.seed)?;
    let bar = spinner(&format!("zero intervals on {}", dataset.name));
    let rows = zero_rows(&dataset.keys, &args.pages, args.per_block, |m| {
        bar.set_message(format!("{}: {m}", dataset.name))
    });
    bar.finish_and_clear();
    let rows = rows.with_context(|| format!("zero intervals on {}", dataset.name))?;
    if args.json {
        let value = serde_json::json!({
            "dataset": dataset.name,
            "per_block": args.per_block,
            "rows": rows.iter().map(|r| serde_json::json!({
                "pages": r.pages,
                "model": r.model,
                "eps_plain": r.eps_plain,
                "eps_zero": r.eps_zero,
                "expected_pages_plain": r.expected_pages_plain,
                "expected_pages_zero": r.expected_pages_zero,
                "models_plain": r.models_plain,
                "models_zero": r.models_zero,
                "saving_percent": r.saving_percent,
            })).collect::<Vec<_>>(),
        });
        println!("{value}");
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "expected pages",
        "model",
        "eps w/o",
        "eps w/",
        "#models w/o",
        "#models w/",
        "% of saving",
    ]);
    for r in &rows {
        table.add_row(vec![
            format!(
                "{} ({:.3} / {:.3})",
                r.pages, r.expected_pages_plain, r.expected_pages_zero
            ),
            r.model.to_string(),
            r.eps_plain.to_string(),
            r.eps_zero.to_string(),
            r.models_plain.to_string(),
            r.models_zero.to_string(),
            format!("{:.1}%", r.saving_percent),
        ]);
    }
    println!(
        "{}: {} keys, {} records per page (paper 002 Table 3)",
        dataset.name,
        dataset.keys.len(),
        args.per_block
    );
    println!("{table}");
    Ok(())
}

/// Runs `lidx stats`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.zero_interval {
        return run_zero_interval(&args);
    }
    let dataset = load_any_dataset(&args.dataset, args.seed)?;
    let bar = spinner(&format!("statistics of {}", dataset.name));
    let mut stage = |name: &'static str| bar.set_message(format!("{}: {name}", dataset.name));
    let value = match &dataset.keys {
        Keys::U64(keys) => stats::compute(keys, Some(&mut stage)).map(|s| serde_json::to_value(&s)),
        other => stats::compute_typed(other, Some(&mut stage)).map(|s| serde_json::to_value(&s)),
    };
    bar.finish_and_clear();
    let value = value
        .with_context(|| format!("statistics of {}", dataset.name))?
        .context("encoding the statistics")?;
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
