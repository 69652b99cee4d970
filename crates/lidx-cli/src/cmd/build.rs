//! `lidx build`: write on-disk indexes of a dataset into a directory, to be benchmarked later
//! with `lidx bench --on-disk --device file:<dir>` (or `sim:<profile> --dir <dir>`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use lidx_bench::disk_registry::{self, DiskIndexSpec, OpenChoice};
use lidx_bench::disk_report::human_bytes;

use super::disk::{load_disk_dataset, unique_keys, DeviceChoice};
use super::spinner;

/// Arguments of `lidx build`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Comma-separated on-disk indexes: `btree[:fill=<percent>]`, `zonemap`, or a learned
    /// index (`pgm:eps=64`, `rs`, `rmi`, `spgm`, `btree-model`, `fiting`) with an optional
    /// `:gran=item|page|<g>`.
    #[arg(long)]
    pub index: String,

    /// `gen:<generator>:<count>`, the path of an SOSD u64 file, or `sosd-u32:`, `sosd-i64:`,
    /// `sosd-f64:<path>` (built on the keys' order-preserving u64 image). String keys (text,
    /// str16) go on disk through the store instead (`lidx ycsb`, `lidx kv load`). Duplicate
    /// keys are dropped.
    #[arg(long)]
    pub dataset: String,

    /// Directory the index files are written to (created if missing). Each index is one file
    /// named after its spec.
    #[arg(long)]
    pub dir: PathBuf,

    /// Block size in bytes (a power of two, at least 4096).
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,

    /// Bytes of payload stored with every key (the benchmarks fill them from the key's hash).
    /// Larger payloads mean fewer entries per block, so more blocks.
    #[arg(long, default_value_t = lidx::disk::DEFAULT_PAYLOAD_SIZE)]
    pub payload_size: usize,

    /// Write with buffered I/O instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// Seed of a generated dataset.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Runs `lidx build`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let specs = DiskIndexSpec::parse_list(&args.index)?;
    let prefix = if args.buffered {
        "file-buffered:"
    } else {
        "file:"
    };
    let device = DeviceChoice::parse(&format!("{prefix}{}", args.dir.display()), None)?;
    device.check_block_size(args.block_size)?;
    let dataset = load_disk_dataset(&args.dataset, args.seed)?;
    let keys = unique_keys(&dataset.keys);
    device.create_dir()?;
    let storage = device.storage(args.block_size, 0)?;

    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["file", "keys", "build s", "memory", "disk", "device"]);
    for spec in &specs {
        let bar = spinner(&format!("building {}", spec.label()));
        let started = Instant::now();
        let built = spec.build(&storage, &keys, args.payload_size);
        let build_s = started.elapsed().as_secs_f64();
        bar.finish_and_clear();
        built?;
        let index = disk_registry::open(&storage, &spec.file_name(), OpenChoice::default())?;
        eprintln!("note: {}: {}", spec.file_name(), index.describe());
        table.add_row(vec![
            spec.file_name(),
            index.len().to_string(),
            format!("{build_s:.2}"),
            human_bytes(index.memory_bytes() as u64),
            human_bytes(index.disk_bytes()),
            storage.describe(),
        ]);
    }
    println!(
        "{} ({} keys) in {}",
        dataset.name,
        keys.len(),
        args.dir.display()
    );
    println!("{table}");
    Ok(())
}
