//! `lidx gen`: write a generated dataset to an SOSD file.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use lidx_bench::sosd;

use super::{load_dataset, spinner};

/// Arguments of `lidx gen`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>`, e.g. gen:lognormal:10M, gen:zipf-gaps:1M,
    /// gen:gre:l=1000,g=10:1M.
    #[arg(long)]
    pub dataset: String,

    /// The SOSD file to write (replaced if it exists).
    #[arg(long)]
    pub out: PathBuf,

    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Runs `lidx gen`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dataset = load_dataset(&args.dataset, args.seed)?;
    let bar = spinner(&format!("writing {}", args.out.display()));
    let written = sosd::write_sosd(&args.out, &dataset.keys);
    bar.finish_and_clear();
    written.with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "wrote {} keys of {} to {} ({} bytes)",
        dataset.keys.len(),
        dataset.name,
        args.out.display(),
        8 + 8 * dataset.keys.len() as u64
    );
    Ok(())
}
