//! `lidx table create`: write the join tables of paper 000 §6 from a dataset: the larger table
//! (every distinct key of the dataset) and, per ratio `R`, a smaller table holding a uniform
//! sample of `1/R` of its keys (fixed seed). Values are 8 bytes derived from the key (a
//! splitmix64 hash), so a join's output can be checked from the keys alone.
//!
//! `--string-keys` writes 16-byte string keys instead: the integer key big-endian (so the
//! strings sort as the integers do and models see its 8 bytes exactly), then 8 bytes of its
//! hash. `--shuffle` writes records in a random (seeded) order, for the unsorted joins.
//!
//! Files: with `--out <dir>` (an existing directory, or a path ending in `/`) the tables are
//! `<dir>/large` and `<dir>/r<R>`; otherwise `--out` is a prefix: `<prefix>.large`,
//! `<prefix>.r<R>`. One JSON line per table on stdout. Tables that exist are refused unless
//! `--force` is given (checked before anything is written); a replaced table's saved indexes
//! (`<table>.<index>.idx`) are removed with it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};
use lidx::io::{DeviceKind, Storage};
use lidx::join::{TableKey, TableWriter};
use lidx::Str16;
use lidx_bench::BenchError;
use rand::seq::{index, SliceRandom};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::disk::unique_keys;
use super::{load_dataset, output_path, spinner};

/// Arguments of `lidx table`.
#[derive(Debug, Parser)]
pub struct Args {
    #[command(subcommand)]
    pub command: TableCommand,
}

/// The `lidx table` subcommands.
#[derive(Debug, Subcommand)]
pub enum TableCommand {
    /// Write a larger table (every key of a dataset) and smaller sampled ones.
    ///
    /// Cost: one write of 16 bytes per key (24 with --string-keys) per table, through O_DIRECT
    /// in 1 MiB requests; 10M keys take well under a second per table on an SSD.
    Create(CreateArgs),
}

/// Arguments of `lidx table create`.
#[derive(Debug, Parser)]
pub struct CreateArgs {
    /// `gen:<generator>:<count>` or the path of an SOSD u64 file. Duplicate keys are dropped.
    #[arg(long)]
    pub from: String,

    /// Table-size ratios, comma-separated (1, 10, 100, 1000): one smaller table per ratio
    /// with `1/R` of the keys.
    #[arg(long, default_value = "10")]
    pub ratio: String,

    /// Write the records in a random order (for the unsorted joins).
    #[arg(long)]
    pub shuffle: bool,

    /// 16-byte string keys instead of u64.
    #[arg(long)]
    pub string_keys: bool,

    /// A directory (existing, or ending in `/`) or a file prefix for the tables.
    #[arg(long)]
    pub out: PathBuf,

    /// Seed of a generated dataset, of the sample and of the shuffle.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Replace tables that exist (and remove the indexes saved next to them).
    #[arg(long)]
    pub force: bool,
}

/// Runs `lidx table`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        TableCommand::Create(args) => create(args),
    }
}

fn bad(what: &'static str, got: &str, expected: &str) -> BenchError {
    BenchError::BadSpec {
        what,
        got: got.to_string(),
        expected: expected.to_string(),
    }
}

/// The 8-byte value of a key.
pub fn value_of(key: u64) -> [u8; 8] {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).to_le_bytes()
}

/// The 16-byte string key of an integer key.
pub fn string_key(key: u64) -> Str16 {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&key.to_be_bytes());
    s[8..].copy_from_slice(&value_of(!key));
    s
}

/// The directory and file-name prefix `--out` names.
fn split_out(out: &Path) -> (PathBuf, String) {
    let text = out.to_string_lossy();
    if out.is_dir() || text.ends_with('/') {
        return (out.to_path_buf(), String::new());
    }
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = out
        .file_name()
        .map_or_else(String::new, |n| format!("{}.", n.to_string_lossy()));
    (dir, name)
}

fn create(args: CreateArgs) -> anyhow::Result<()> {
    let expected_ratio = "comma-separated ratios of at least 1, such as 1,10,100,1000";
    let ratios = args
        .ratio
        .split(',')
        .map(|r| r.trim().parse::<u64>().ok().filter(|&r| r >= 1))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| bad("ratio", &args.ratio, expected_ratio))?;
    let (dir, prefix) = split_out(&args.out);
    let names: Vec<String> = std::iter::once(format!("{prefix}large"))
        .chain(ratios.iter().map(|r| format!("{prefix}r{r}")))
        .collect();
    for name in &names {
        output_path::check(
            &dir.join(name),
            &[("--from", Path::new(&args.from))],
            args.force,
        )?;
    }
    let storage = Storage::new(&dir, DeviceKind::File { direct: true }, 4096)?;
    let dataset = load_dataset(&args.from, args.seed)?;
    let keys = unique_keys(&dataset);
    drop(dataset);
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut tables = vec![(names[0].clone(), keys.clone())];
    for (&r, name) in ratios.iter().zip(&names[1..]) {
        let take = (keys.len() as u64 / r) as usize;
        let mut picked = index::sample(&mut rng, keys.len(), take).into_vec();
        picked.sort_unstable();
        tables.push((name.clone(), picked.iter().map(|&i| keys[i]).collect()));
    }
    drop(keys);
    for (name, mut keys) in tables {
        if args.shuffle {
            keys.shuffle(&mut rng);
        }
        remove_saved_indexes(&dir, &name)?;
        let bar = spinner(&format!("writing {name}"));
        let started = Instant::now();
        let written = if args.string_keys {
            write(&storage, &name, keys.iter().map(|&k| (string_key(k), k)))
        } else {
            write(&storage, &name, keys.iter().map(|&k| (k, k)))
        };
        bar.finish_and_clear();
        let count = written?;
        let line = serde_json::json!({
            "table": dir.join(&name).display().to_string(),
            "count": count,
            "key_type": if args.string_keys { "str16" } else { "u64" },
            "value_size": 8,
            "sorted": !args.shuffle,
            "seconds": started.elapsed().as_secs_f64(),
            "bytes": storage.file_bytes(&name),
        });
        println!("{line}");
    }
    Ok(())
}

/// Removes the indexes `lidx join` saved next to an earlier table `name` in `dir`
/// (`<name>.<index>.idx`): they describe records about to be replaced. (A stale one left
/// behind would be rebuilt anyway, its fingerprint no longer matching the table's.)
fn remove_saved_indexes(dir: &Path, name: &str) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let prefix = format!("{name}.");
    for entry in entries {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.starts_with(&prefix) && file.ends_with(".idx") {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

fn write<K: TableKey>(
    storage: &Storage,
    name: &str,
    records: impl Iterator<Item = (K, u64)>,
) -> lidx::Result<u64> {
    let mut w = TableWriter::<K>::create(storage, name, 8)?;
    for (key, int) in records {
        w.push(&key, &value_of(int))?;
    }
    Ok(w.finish()?.count)
}
