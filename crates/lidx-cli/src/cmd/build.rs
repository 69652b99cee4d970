//! `lidx build`: write on-disk indexes of a dataset into a directory, to be benchmarked later
//! with `lidx bench --on-disk --device file:<dir>` (or `sim:<profile> --dir <dir>`): numeric
//! keys into `lidx_bench::disk_registry`'s indexes, string keys into
//! `lidx_bench::byte_disk_registry`'s (the kind checked from the specs, see `disk.rs`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use lidx::io::Storage;
use lidx_bench::disk_report::human_bytes;

use super::disk::{load_byte_keys, load_disk_dataset, unique_keys, DeviceChoice, DiskIndexes};
use super::spinner;

/// Arguments of `lidx build`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Comma-separated on-disk indexes. Numeric keys: `btree[:fill=<percent>]`, `zonemap`, or
    /// a learned index (`pgm:eps=64`, `rs`, `rmi`, `spgm`, `btree-model`, `fiting`) with an
    /// optional `:gran=item|page|<g>`. String keys (text, str16): `byte-table[:eps=<e>]` (the
    /// byte table: records in blocks, a learned model over one separator per block) and
    /// `byte-btree` (the byte B+-tree, inner nodes in memory). An index of the other kind is
    /// refused before anything is written.
    #[arg(long)]
    pub index: String,

    /// `gen:<generator>:<count>`, the path of an SOSD u64 file, or `sosd-u32:`, `sosd-i64:`,
    /// `sosd-f64:<path>` (built on the keys' order-preserving u64 image); string keys:
    /// `text:<path>` / `<path>.txt` (one key a line), `str16:<path>`, `gen:words:<count>`.
    /// Duplicate keys are dropped.
    #[arg(long)]
    pub dataset: String,

    /// Directory the index files are written to (created if missing). Each index is one file
    /// named after its spec (the byte B+-tree two: its pages and its `.image.lidx`).
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
    let indexes = DiskIndexes::parse(&args.index, &args.dataset)?;
    let prefix = if args.buffered {
        "file-buffered:"
    } else {
        "file:"
    };
    let device = DeviceChoice::parse(&format!("{prefix}{}", args.dir.display()), None)?;
    device.check_block_size(args.block_size)?;
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["file", "keys", "build s", "memory", "disk", "device"]);
    let (name, keys) = match indexes {
        DiskIndexes::Numeric(specs) => {
            let dataset = load_disk_dataset(&args.dataset, args.seed)?;
            let keys = unique_keys(&dataset.keys);
            device.create_dir()?;
            let storage = device.storage(args.block_size, 0)?;
            for spec in &specs {
                let build = || spec.build(&storage, &keys, args.payload_size);
                let open = || {
                    let index = spec.open(&storage, Default::default(), args.payload_size)?;
                    Ok((
                        index.describe(),
                        (index.len(), index.memory_bytes(), index.disk_bytes()),
                    ))
                };
                let files = spec.file_name();
                build_row(&mut table, &storage, &spec.label(), &files, build, open)?;
            }
            (dataset.name, keys.len())
        }
        DiskIndexes::Bytes(specs) => {
            let (name, keys) = load_byte_keys(&args.dataset, args.seed)?;
            device.create_dir()?;
            let storage = device.storage(args.block_size, 0)?;
            for spec in &specs {
                let build = || spec.build(&storage, &keys, args.payload_size);
                let open = || {
                    let index = spec.open(&storage)?;
                    Ok((
                        index.describe(),
                        (index.len(), index.memory_bytes(), index.disk_bytes()),
                    ))
                };
                let files = spec.file_names().join(" + ");
                build_row(&mut table, &storage, &spec.label(), &files, build, open)?;
            }
            (name, keys.len())
        }
    };
    println!("{name} ({keys} keys) in {}", args.dir.display());
    println!("{table}");
    Ok(())
}

/// Runs `build` behind a spinner; returns the seconds it took.
pub fn timed(label: &str, build: impl FnOnce() -> lidx_bench::Result<()>) -> anyhow::Result<f64> {
    let bar = spinner(&format!("building {label}"));
    let started = Instant::now();
    let built = build();
    let build_s = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    built?;
    Ok(build_s)
}

/// Builds the index `label` (timed), opens it, prints the note describing it and adds its
/// row; `open` gives its description and `(entries, memory bytes, disk bytes)`.
fn build_row(
    table: &mut Table,
    storage: &Storage,
    label: &str,
    files: &str,
    build: impl FnOnce() -> lidx_bench::Result<()>,
    open: impl FnOnce() -> lidx_bench::Result<(String, (u64, usize, u64))>,
) -> anyhow::Result<()> {
    let build_s = timed(label, build)?;
    let (describe, (len, memory, disk)) = open()?;
    eprintln!("note: {files}: {describe}");
    table.add_row(vec![
        files.to_string(),
        len.to_string(),
        format!("{build_s:.2}"),
        human_bytes(memory as u64),
        human_bytes(disk),
        storage.describe(),
    ]);
    Ok(())
}
