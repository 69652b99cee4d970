//! `lidx bench --on-disk`: on-disk indexes on a real or simulated device, every answer checked.
//!
//! For each index of `--index`: reuse its file when `--device file:<dir>` (or `--dir`) already
//! holds it (unless `--rebuild`), otherwise build it, timed; then, for each runtime choice
//! (`--resident` for the B+-tree, `--fetch` for the learned indexes), open it read-only and run
//! the workload with `lidx_bench::disk_runner`. Opening after the build means the measured
//! index holds in memory exactly what a reopened index holds.
//!
//! A reused file must have been built from exactly this dataset's keys (issue 30, class 6): a
//! numeric index's header records its keys' fingerprint, checked against the dataset's
//! ([`lidx::disk::check_built_from`], [`lidx::Error::StaleIndex`]); a byte-key index's records
//! are read whole once and compared with the dataset's keys. The key count alone bound
//! nothing: another dataset of the same size ran on the stale files with exit 0.
//!
//! A write workload, an updatable-only index or `--updatable` go to `bench_updatable` (paper
//! 003's six workloads on updatable indexes) instead: `bench` sends them there.
//!
//! String datasets (text, str16) run the byte-key indexes (`byte-table`, `byte-btree`) with
//! `lidx_bench::byte_disk_runner` instead, on the same workloads, checks and table; they have
//! no runtime choice, so `--resident` and `--fetch` do not apply to them.

use lidx::disk::Fetch;
use lidx::disk::Resident;
use lidx_bench::byte_disk_registry::{ByteDiskIndex, ByteIndexFiles, ByteIndexSpec};
use lidx_bench::byte_disk_runner::ByteDiskBench;
use lidx_bench::disk_registry::{parse_resident, DiskIndexSpec};
use lidx_bench::disk_report;
use lidx_bench::disk_runner::{DiskBench, DiskBenchConfig};
use lidx_bench::disk_workload::DiskWorkload;
use lidx_bench::records::DiskRecord;
use lidx_bench::store_keys::RankedKeys;
use lidx_bench::update_workload::UpdateWorkload;

use super::args::{check_out_inputs, parse_fetches, parse_ops, write_out};
use super::bench_args::Args;
use super::build::timed;
use super::disk::{load_byte_keys, load_disk_dataset, unique_keys, DeviceChoice, DiskIndexes};
use super::Bars;

/// Runs `lidx bench --on-disk` on the indexes of `list` (numeric or byte-key ones, as the
/// dataset's keys are).
pub fn run(args: Args, list: &str) -> anyhow::Result<()> {
    let indexes = DiskIndexes::parse(list, &args.dataset)?;
    // A workload of neither runner is refused with every form either takes.
    let workload = DiskWorkload::parse(&args.workload)
        .map_err(|e| UpdateWorkload::parse(&args.workload).err().unwrap_or(e))?;
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("100K"))?;
    let device = DeviceChoice::parse(&args.device, args.dir.clone())?;
    let residents = args
        .resident
        .split(',')
        .map(parse_resident)
        .collect::<Result<Vec<_>, _>>()?;
    let fetches = parse_fetches(&args.fetch)?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    if args.small_pages {
        crate::huge_pages::disable();
    }
    device.check_block_size(args.block_size)?;
    let config = DiskBenchConfig {
        workload,
        queries,
        runs: args.runs,
        threads: args.threads,
        seed: args.seed,
    };
    let records = match indexes {
        DiskIndexes::Numeric(specs) => {
            let runtime = Runtime { residents, fetches };
            run_numeric(&args, &specs, &device, config, &runtime)?
        }
        DiskIndexes::Bytes(specs) => run_bytes(&args, &specs, &device, config)?,
    };

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

/// The runtime choices of the numeric indexes: the B+-tree's resident levels, the learned
/// indexes' fetching strategies.
struct Runtime {
    residents: Vec<Resident>,
    fetches: Vec<Fetch>,
}

/// Builds (or reuses) and runs the numeric indexes, once per runtime choice.
fn run_numeric(
    args: &Args,
    specs: &[DiskIndexSpec],
    device: &DeviceChoice,
    config: DiskBenchConfig,
    runtime: &Runtime,
) -> anyhow::Result<Vec<DiskRecord>> {
    let dataset = load_disk_dataset(&args.dataset, args.seed)?;
    let keys = unique_keys(&dataset.keys);
    // Every reused index is checked against the dataset's keys: hashed once.
    let fingerprint = lidx::disk::keys_fingerprint(&keys);
    device.create_dir()?;
    let storage = device.storage(args.block_size, args.cache_blocks)?;
    let bench = DiskBench::prepare(&dataset, &keys, config)?;

    let mut records: Vec<DiskRecord> = Vec::new();
    let mut bars = Bars::default();
    for spec in specs {
        let name = spec.file_name();
        let build_s = if storage.exists(&name) && !args.rebuild {
            note!("note: reusing {name}; pass --rebuild to build it again");
            0.0
        } else {
            timed(&spec.label(), || {
                spec.build(&storage, &keys, args.payload_size)
            })?
        };
        let choices = spec.runtime_choices(&runtime.residents, &runtime.fetches);
        for (i, (choice, suffix)) in choices.into_iter().enumerate() {
            let index = spec
                .open(&storage, choice, args.payload_size)
                .map_err(|e| rebuild_hint(&name, e))?;
            if i == 0 {
                note!("note: {name}: {}", index.describe());
                lidx::disk::check_fingerprint(&name, index.as_ref(), fingerprint)?;
            }
            let label = format!("{}{suffix}", spec.label());
            records.push(bench.run_index(&label, index.as_ref(), &storage, build_s, &mut bars)?);
        }
    }
    Ok(records)
}

/// Builds (or reuses) and runs the byte-key indexes.
fn run_bytes(
    args: &Args,
    specs: &[ByteIndexSpec],
    device: &DeviceChoice,
    config: DiskBenchConfig,
) -> anyhow::Result<Vec<DiskRecord>> {
    let (name, keys) = load_byte_keys(&args.dataset, args.seed)?;
    device.create_dir()?;
    let storage = device.storage(args.block_size, args.cache_blocks)?;
    let bench = ByteDiskBench::prepare(&name, &keys, args.payload_size, config)?;
    let mut records = Vec::new();
    let mut bars = Bars::default();
    for spec in specs {
        let files = spec.file_names();
        let build_s = if files.iter().all(|f| storage.exists(f)) && !args.rebuild {
            note!(
                "note: reusing {}; pass --rebuild to build it again",
                files.join(" + ")
            );
            0.0
        } else {
            timed(&spec.label(), || {
                spec.build(&storage, &keys, args.payload_size)
            })?
        };
        let index = spec
            .open(&storage)
            .map_err(|e| rebuild_hint(&spec.file_name(), e))?;
        note!("note: {}: {}", spec.file_name(), index.describe());
        check_same_keys(&spec.file_name(), index.as_ref(), &keys, &name)?;
        records.push(bench.run_index(
            &spec.label(),
            index.as_ref(),
            &storage,
            build_s,
            &mut bars,
        )?);
    }
    Ok(records)
}

/// `e`, an error opening a reused index file, with what to do when the file is of an older
/// format ([`lidx::Error::UnsupportedVersion`]): rebuild it.
fn rebuild_hint(file: &str, e: lidx_bench::BenchError) -> anyhow::Error {
    let old = matches!(
        &e,
        lidx_bench::BenchError::Index(lidx::Error::UnsupportedVersion { .. })
    );
    let e = anyhow::Error::from(e);
    if old {
        e.context(format!(
            "{file} was written by an older lidx: rebuild with lidx build (or pass --rebuild)"
        ))
    } else {
        e
    }
}

/// A byte-key index reused from its file must hold exactly the dataset's distinct keys, in
/// order: read whole in batches and compared key by key (its files record no fingerprint).
fn check_same_keys(
    file: &str,
    index: &dyn ByteDiskIndex,
    keys: &RankedKeys,
    dataset: &str,
) -> anyhow::Result<()> {
    let stale = |what: String| {
        anyhow::anyhow!(
            "{file} was built from other keys than {dataset} ({what}): rebuild with lidx build \
             (or pass --rebuild)"
        )
    };
    if index.len() != keys.len() as u64 {
        return Err(stale(format!(
            "{} records, the dataset has {} distinct keys",
            index.len(),
            keys.len()
        )));
    }
    let (mut rank, mut batch, mut start) = (0usize, Vec::new(), Vec::new());
    while rank < keys.len() {
        index.scan(&start, SAME_KEYS_BATCH, &mut batch)?;
        if batch.is_empty() {
            return Err(stale(format!("its records end at {rank}")));
        }
        for (key, _) in &batch {
            if keys.get(rank) != key.as_slice() {
                return Err(stale(format!("record {rank} differs")));
            }
            rank += 1;
        }
        start = batch.last().map(|(k, _)| k.clone()).unwrap_or_default();
        start.push(0);
    }
    Ok(())
}

/// Records [`check_same_keys`] reads per scan.
const SAME_KEYS_BATCH: usize = 4096;
