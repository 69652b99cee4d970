//! `lidx bench --on-disk` with a write workload (`write-only`, `read-heavy`, `write-heavy`,
//! `balanced`), an updatable index (`alex`, `lipp`, `dfiting`, `dpgm`, `btree-learned`) or
//! `--updatable`: paper 003's six workloads on updatable indexes, run by
//! `lidx_bench::updatable_runner`.
//!
//! For each index of `--index` and each `--resident` choice (inner nodes in memory or on
//! disk, paper 003 §6.2 / Figure 9), every run builds the index afresh from the bulk-loaded
//! keys (a run's writes change it), runs the operations on one thread checking every answer,
//! flushes and checks the final contents, then removes the file (`upd.<label>.lidx`, so a file
//! `lidx build` made is never touched). Figures are ratios to the first B+-tree of the list.

use lidx::io::DeviceKind;
use lidx_bench::disk_registry::parse_resident;
use lidx_bench::updatable_registry::UpdatableSpec;
use lidx_bench::updatable_report;
use lidx_bench::updatable_runner::{UpdateBench, UpdateBenchConfig};
use lidx_bench::update_workload::UpdateWorkload;
use lidx_bench::BenchError;

use super::args::{check_out_inputs, parse_ops, write_out};
use super::bench_args::Args;
use super::disk::{load_disk_dataset, unique_keys, DeviceChoice};
use super::{is_string_dataset, Bars};

/// Runs `lidx bench --on-disk` on the updatable indexes of `list`.
pub fn run(args: Args, list: &str) -> anyhow::Result<()> {
    // Every usage error is reported before the dataset is loaded.
    if is_string_dataset(&args.dataset) {
        return Err(BenchError::BadSpec {
            what: "dataset for the updatable on-disk indexes",
            got: args.dataset.clone(),
            expected: "numeric keys (the updatable indexes hold u64 keys)".to_string(),
        }
        .into());
    }
    if args.threads != 1 {
        return Err(BenchError::BadSpec {
            what: "--threads",
            got: args.threads.to_string(),
            expected: "1: the updatable indexes take one writer (paper 003)".to_string(),
        }
        .into());
    }
    let specs = UpdatableSpec::parse_list(list)?;
    let workload = UpdateWorkload::parse(&args.workload)?;
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("100K"))?;
    let bulk_fraction = parse_bulk(&args.bulk_load)?;
    let residents = args
        .resident
        .split(',')
        .map(parse_resident)
        .collect::<Result<Vec<_>, _>>()?;
    let device = DeviceChoice::parse(&args.device, args.dir.clone())?;
    device.check_block_size(args.block_size)?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    if args.small_pages {
        crate::huge_pages::disable();
    }

    let dataset = load_disk_dataset(&args.dataset, args.seed)?;
    let keys = unique_keys(&dataset.keys);
    drop(dataset.keys);
    let config = UpdateBenchConfig {
        workload,
        queries,
        runs: args.runs,
        seed: args.seed,
        bulk_fraction,
    };
    let bench = UpdateBench::prepare(&dataset.name, &keys, config)?;
    drop(keys);
    device.create_dir()?;
    // The indexes go in a private directory of this run's inside the device's directory,
    // removed when the command ends, on signals too: the runner removes each index's files
    // between runs, and none of them may be a user's (issue 30, class 1).
    let private = match &device.dir {
        Some(dir) => Some(super::output::Staging::beside(dir)?),
        None => None,
    };
    let device = DeviceChoice {
        dir: private.as_ref().map(|p| p.dir().to_path_buf()),
        ..device
    };
    let storage = device.storage(args.block_size, args.cache_blocks)?;
    let records = bench.run_specs(
        &specs,
        &residents,
        args.payload_size,
        &storage,
        &mut Bars::default(),
    )?;
    drop(private);
    // In place before the last line on stdout: a closed pipe cannot leave a staged file.
    write_out(args.out.as_ref(), &records)?;

    let first = &records[0];
    let device_note = match storage.kind() {
        DeviceKind::Sim(_) => "modeled time",
        DeviceKind::File { .. } | DeviceKind::FileCached => "wall time",
    };
    println!(
        "{} ({} keys bulk loaded, {} at the end), {}, {} ops ({} inserts) x {} runs, {}, \
         {}-byte blocks, {} cache blocks, seed {}, {device_note}, {} ({} cores)",
        first.dataset,
        first.bulk_keys,
        first.final_keys,
        first.workload,
        first.ops,
        first.inserts,
        first.runs,
        first.device,
        first.block_size,
        first.cache_blocks,
        first.seed,
        first.cpu,
        first.cores
    );
    println!("{}", updatable_report::table(&records));
    Ok(())
}

/// Parses `--bulk-load`: a percentage strictly between 0 and 100 (`50` or `50%`).
fn parse_bulk(text: &str) -> Result<f64, BenchError> {
    text.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p < 100.0)
        .map(|p| p / 100.0)
        .ok_or_else(|| BenchError::BadSpec {
            what: "--bulk-load",
            got: text.to_string(),
            expected: "a percentage of the distinct keys strictly between 0 and 100, e.g. 50"
                .to_string(),
        })
}
