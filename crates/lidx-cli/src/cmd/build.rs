//! `lidx build`: write on-disk indexes of a dataset into a directory, to be benchmarked later
//! with `lidx bench --on-disk --device file:<dir>` (or `sim:<profile> --dir <dir>`): numeric
//! keys into `lidx_bench::disk_registry`'s indexes, string keys into
//! `lidx_bench::byte_disk_registry`'s (the kind checked from the specs, see `disk.rs`), and
//! paper 003's updatable indexes (`alex`, `lipp`, `dfiting`, `dpgm`, `btree-learned`) into
//! `lidx_bench::updatable_registry`'s, to be opened with their `open` (and written) by an
//! embedder. Each updatable index is built, flushed, and opened again read-only to check it
//! before its row is printed.
//!
//! An index file that exists already is replaced only with `--force` (checked for every index
//! of the list before anything is written), and never with the dataset's own file. Every index
//! is built and checked in a private directory inside `--dir` ([`super::output::Staging`])
//! and the files are renamed into place only once all of them are whole (issue 30, class 3:
//! a killed or failed build used to leave a file whose first block was zeroed, under the
//! index's own name, and with `--force` the old files were removed before the build ran).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use lidx::disk::Resident;
use lidx::io::Storage;
use lidx_bench::byte_disk_registry::{ByteIndexFiles, ByteIndexSpec};
use lidx_bench::disk_registry::disk_index_forms;
use lidx_bench::disk_report::human_bytes;
use lidx_bench::updatable_registry::{DiskMapFiles, UpdatableSpec, UpdateOptions};
use lidx_bench::BenchError;

use super::cleanup::Created;
use super::disk::{load_byte_keys, load_disk_dataset, unique_keys, DeviceChoice, DiskIndexes};
use super::is_string_dataset;
use super::output::Staging;
use super::spinner;

/// `--index`'s long help: the forms the catalog (`lidx::catalog`) and the disk registry accept.
fn index_help() -> String {
    format!(
        "Comma-separated on-disk indexes. Numeric keys: {}. String keys (text, str16): {}. An \
         index of the other kind is refused before anything is written. Paper 003's updatable \
         indexes over numeric keys: {} (each saved as `<spec>.lidx` and the files named after \
         it).",
        disk_index_forms(),
        ByteIndexSpec::accepted_forms(),
        UpdatableSpec::accepted_forms()
    )
}

/// Arguments of `lidx build`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Comma-separated on-disk indexes (`--help` lists them).
    #[arg(long, long_help = index_help())]
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

    /// Replace index files that exist already (without it they are refused).
    #[arg(long)]
    pub force: bool,
}

/// Runs `lidx build`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (updatable, others): (Vec<&str>, Vec<&str>) = args
        .index
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .partition(|i| UpdatableSpec::is_updatable_name(i));
    let updatable = if updatable.is_empty() {
        Vec::new()
    } else {
        if is_string_dataset(&args.dataset) {
            return Err(BenchError::BadSpec {
                what: "on-disk index for string keys",
                got: updatable.join(","),
                expected: format!(
                    "{} ({} holds byte-string keys; paper 003's updatable indexes take numeric \
                     ones)",
                    ByteIndexSpec::accepted_forms(),
                    args.dataset
                ),
            }
            .into());
        }
        UpdatableSpec::parse_list(&updatable.join(","))?
    };
    let indexes = if others.is_empty() && !updatable.is_empty() {
        DiskIndexes::Numeric(Vec::new())
    } else {
        DiskIndexes::parse(&others.join(","), &args.dataset)?
    };
    let prefix = if args.buffered {
        "file-buffered:"
    } else {
        "file:"
    };
    let target = DeviceChoice::parse(&format!("{prefix}{}", args.dir.display()), None)?;
    target.check_block_size(args.block_size)?;
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["file", "keys", "build s", "memory", "disk", "device"]);
    let files: Vec<String> = match &indexes {
        DiskIndexes::Numeric(specs) => specs.iter().map(|s| s.file_name()).collect(),
        DiskIndexes::Bytes(specs) => specs.iter().flat_map(|s| s.file_names()).collect(),
    };
    let saved: Vec<String> = updatable.iter().map(UpdatableSpec::saved_name).collect();
    if !args.force {
        refuse_existing(&args.dir, &files, &saved)?;
    }
    let inputs = super::dataset_inputs(&args.dataset);
    for file in &files {
        super::output::check(&args.dir.join(file), &inputs, true)?;
    }
    // An updatable index's old files (which `--force` replaces) are never the dataset either.
    for entry in std::fs::read_dir(&args.dir).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if is_saved_file(&file, &saved) {
            super::output::check(&entry.path(), &inputs, true)?;
        }
    }
    // Once the dataset is loaded: `--dir` (removed again if this run made it and the build
    // fails) and the private directory inside it where every file is built.
    let stage = || -> anyhow::Result<(Option<Created>, Staging, Storage)> {
        let made = Created::if_missing(&args.dir);
        target.create_dir()?;
        let staging = Staging::beside(&args.dir)?;
        let device = DeviceChoice::parse(&format!("{prefix}{}", staging.dir().display()), None)?;
        let storage = device.storage(args.block_size, 0)?;
        Ok((made, staging, storage))
    };
    let (name, keys, made, staging) = match indexes {
        DiskIndexes::Numeric(specs) => {
            let dataset = load_disk_dataset(&args.dataset, args.seed)?;
            let keys = unique_keys(&dataset.keys);
            let (made, staging, storage) = stage()?;
            for (spec, name) in updatable.iter().zip(&saved) {
                let build = || {
                    let options = UpdateOptions {
                        payload_size: args.payload_size,
                        resident: Resident::None,
                    };
                    spec.build_as(&storage, name, &keys, &options)?.flush()?;
                    Ok(())
                };
                let open = || {
                    let index = spec.open(&storage, name, false, Resident::None)?;
                    if index.len() != keys.len() as u64 {
                        return Err(lidx::Error::Corrupt {
                            file: name.clone(),
                            block: None,
                            what: format!(
                                "holds {} entries after its build from {} keys",
                                index.len(),
                                keys.len()
                            ),
                        }
                        .into());
                    }
                    Ok((
                        index.describe(),
                        (index.len(), index.memory_bytes(), index.disk_bytes()),
                    ))
                };
                let label = spec.label();
                build_row(&mut table, &storage, &label, name, build, open)?;
                note!(
                    "note: {name}: files {}",
                    storage.files_of(name)?.join(" + ")
                );
            }
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
            (dataset.name, keys.len(), made, staging)
        }
        DiskIndexes::Bytes(specs) => {
            let (name, keys) = load_byte_keys(&args.dataset, args.seed)?;
            let (made, staging, storage) = stage()?;
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
            (name, keys.len(), made, staging)
        }
    };
    commit(staging, &args.dir, &files, &saved)?;
    if let Some(made) = made {
        made.keep();
    }
    println!("{name} ({keys} keys) in {}", args.dir.display());
    println!("{table}");
    Ok(())
}

/// Renames every file built in `staging` into `dir` (the indexes' own files: `files`, and
/// the files of the updatable indexes `saved`), then removes the files of those updatable
/// indexes that the new build did not write (an older build's, which `--force` asked to
/// replace: a disk PGM's levels are named by their number), so no stale file of an index is
/// left beside its new ones. A target that exists and is not a regular file is refused before
/// anything is renamed. Only a file named as an index's own ([`Storage::is_file_of`]) that reads
/// as lidx's (its magic starts with `lidx`, in either case, as every index file's does) is
/// removed: a user's copy (`alex.lidx.data.orig`) or note is left alone.
fn commit(
    mut staging: Staging,
    dir: &Path,
    files: &[String],
    saved: &[String],
) -> anyhow::Result<()> {
    let ours = |file: &str| files.iter().any(|f| f == file) || is_saved_file(file, saved);
    let mut built = Vec::new();
    for entry in std::fs::read_dir(staging.dir())
        .with_context(|| format!("reading {}", staging.dir().display()))?
    {
        let name = entry?.file_name();
        if ours(&name.to_string_lossy()) {
            super::output::check_regular(&dir.join(&name))?;
            built.push(name);
        }
    }
    for name in &built {
        staging.file(&dir.join(name))?;
    }
    staging.commit()?;
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if !built.contains(&name)
            && is_saved_file(&name.to_string_lossy(), saved)
            && entry.file_type().is_ok_and(|t| t.is_file())
            && is_lidx_file(&entry.path())
        {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("removing the replaced {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// True when `file` is a file of an updatable index saved under one of `saved`.
fn is_saved_file(file: &str, saved: &[String]) -> bool {
    saved.iter().any(|s| Storage::is_file_of(file, s))
}

/// True when `path` starts with the `lidx` of every index file's magic (either case).
fn is_lidx_file(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| magic.eq_ignore_ascii_case(b"lidx"))
}

/// [`BenchError::BadSpec`] on `--dir` when one of `files`, or a file of an updatable index
/// saved under one of `saved` (itself or a file named after it), exists in `dir`.
fn refuse_existing(
    dir: &std::path::Path,
    files: &[String],
    saved: &[String],
) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let taken = files.contains(&file) || is_saved_file(&file, saved);
        if taken {
            return Err(BenchError::BadSpec {
                what: "dir",
                got: dir.join(&file).display().to_string(),
                expected: "a directory without this index's files, or --force to replace them"
                    .to_string(),
            }
            .into());
        }
    }
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
    note!("note: {files}: {describe}");
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
