//! `lidx bench --on-disk`: on-disk indexes on a real or simulated device, every answer checked.
//!
//! For each index of `--index`: reuse its file when `--device file:<dir>` (or `--dir`) already
//! holds it (unless `--rebuild`), otherwise build it, timed; then, for each runtime choice
//! (`--resident` for the B+-tree, `--fetch` for the learned indexes), open it read-only and run
//! the workload with `lidx_bench::disk_runner`. Opening after the build means the measured
//! index holds in memory exactly what a reopened index holds.

use std::time::Instant;

use lidx_bench::disk_registry::{self, parse_resident, resident_text, DiskIndexSpec, OpenChoice};
use lidx_bench::disk_report::{self, DiskRecord};
use lidx_bench::disk_runner::{DiskBench, DiskBenchConfig};
use lidx_bench::disk_workload::DiskWorkload;

use super::args::{check_out, parse_fetches, parse_ops, write_out};
use super::bench::Args;
use super::disk::{load_disk_dataset, unique_keys, DeviceChoice};
use super::{spinner, Bars};

/// The indexes `lidx bench --on-disk` runs when `--index` is not given.
pub const DEFAULT_DISK_INDEXES: &str = "btree,pgm:eps=64,zonemap";

/// Runs `lidx bench --on-disk`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let specs = DiskIndexSpec::parse_list(args.index.as_deref().unwrap_or(DEFAULT_DISK_INDEXES))?;
    let workload = DiskWorkload::parse(&args.workload)?;
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("100K"))?;
    let device = DeviceChoice::parse(&args.device, args.dir.clone())?;
    let residents = args
        .resident
        .split(',')
        .map(parse_resident)
        .collect::<Result<Vec<_>, _>>()?;
    let fetches = parse_fetches(&args.fetch)?;
    check_out(args.out.as_ref())?;
    if args.small_pages {
        crate::huge_pages::disable();
    }
    device.check_block_size(args.block_size)?;
    let dataset = load_disk_dataset(&args.dataset, args.seed)?;
    let keys = unique_keys(&dataset.keys);
    device.create_dir()?;
    let storage = device.storage(args.block_size, args.cache_blocks)?;
    let config = DiskBenchConfig {
        workload,
        queries,
        runs: args.runs,
        threads: args.threads,
        seed: args.seed,
    };
    let bench = DiskBench::prepare(&dataset, &keys, config)?;

    let mut records: Vec<DiskRecord> = Vec::new();
    let mut bars = Bars::default();
    for spec in &specs {
        let name = spec.file_name();
        let build_s = if storage.exists(&name) && !args.rebuild {
            eprintln!("note: reusing {name}; pass --rebuild to build it again");
            0.0
        } else {
            let bar = spinner(&format!("building {}", spec.label()));
            let started = Instant::now();
            let built = spec.build(&storage, &keys, args.payload_size);
            bar.finish_and_clear();
            built?;
            started.elapsed().as_secs_f64()
        };
        let choices: Vec<(OpenChoice, String)> = if spec.is_btree() {
            residents
                .iter()
                .map(|&resident| {
                    let choice = OpenChoice {
                        resident,
                        ..OpenChoice::default()
                    };
                    (choice, format!(":resident={}", resident_text(resident)))
                })
                .collect()
        } else {
            fetches
                .iter()
                .map(|&fetch| {
                    let choice = OpenChoice {
                        fetch,
                        ..OpenChoice::default()
                    };
                    (choice, format!(":fetch={}", fetch.name()))
                })
                .collect()
        };
        for (i, (choice, suffix)) in choices.into_iter().enumerate() {
            let index = disk_registry::open(&storage, &name, choice)?;
            if i == 0 {
                eprintln!("note: {name}: {}", index.describe());
            }
            anyhow::ensure!(
                index.len() == keys.len() as u64,
                "{name} holds {} entries but {} has {} distinct keys: it was built from another \
                 dataset; pass --rebuild",
                index.len(),
                dataset.name,
                keys.len()
            );
            let label = format!("{}{suffix}", spec.label());
            records.push(bench.run_index(&label, index.as_ref(), &storage, build_s, &mut bars)?);
        }
    }

    let first = &records[0];
    println!(
        "{} ({} keys), {}, {} ops x {} runs, {} thread(s), {}, {}-byte blocks, seed {}, {} ({} cores)",
        first.dataset,
        first.n,
        first.workload,
        first.queries,
        first.runs,
        first.threads,
        first.device,
        first.block_size,
        first.seed,
        first.cpu,
        first.cores
    );
    println!("{}", disk_report::table(&records));
    write_out(args.out.as_ref(), &records)
}
