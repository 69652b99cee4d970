//! `lidx table create`: write the join tables of paper 000 §6 from a dataset: the larger table
//! (every distinct key of the dataset) and, per ratio `R`, a smaller table holding a uniform
//! sample of `1/R` of its keys (fixed seed). Values are 8 bytes derived from the key (a
//! splitmix64 hash), so a join's output can be checked from the keys alone.
//!
//! `--string-keys` writes 16-byte string keys instead: the integer key big-endian (so the
//! strings sort as the integers do and models see its 8 bytes exactly), then 8 bytes of its
//! hash. A dataset of strings (`text:<path>`, `str16:<path>`) makes string tables from the real
//! strings: a text key of at most 16 bytes is zero-padded to 16, a longer one is an error naming
//! it; the value derives from the 16 bytes. Two different text keys that are one key once padded
//! (`a` and `a\0`: a key and the same key with trailing zero bytes) are an error naming both
//! (issue 30: they were merged, so a join on the table answered for one key what the user had
//! as two). We refuse rather than keep them apart because the table's string key is exactly
//! 16 zero-padded bytes (what the joins, the indexes and `str16:` files share); keeping them
//! apart would need a length byte, cutting keys to 15 bytes and changing the format. Tables hold `u64` or 16-byte string keys; other key types are refused. `--shuffle` writes records in a random (seeded) order, for the unsorted joins.
//!
//! Files: with `--out <dir>` (an existing directory, or a path ending in `/`) the tables are
//! `<dir>/large` and `<dir>/r<R>`; otherwise `--out` is a prefix: `<prefix>.large`,
//! `<prefix>.r<R>`. One JSON line per table on stdout. Tables that exist are refused unless
//! `--force` is given (checked before anything is written). The tables are written in a private
//! directory beside them ([`super::output::Staging`]) and renamed into place together once all
//! are whole: a failed or killed run leaves the old tables as they were and nothing new. A
//! replaced table's saved indexes (`<table>.<index>.idx`, files `lidx join` wrote: only those
//! whose header reads as a saved index) are removed with it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};
use lidx::io::{DeviceKind, Storage};
use lidx::join::{TableKey, TableWriter};
use lidx::raw::join::table_index;
use lidx::raw::mem::string_index::escape;
use lidx::Str16;
use lidx_bench::keyfile::Keys;
use lidx_bench::BenchError;
use rand::seq::{index, SliceRandom};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{load_any_dataset, output, spinner};

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
    /// `gen:<generator>:<count>`, the path of an SOSD u64 file, or strings: `text:<path>`
    /// (one key a line, at most 16 bytes each) or `str16:<path>`. Duplicate keys are dropped.
    #[arg(long)]
    pub from: String,

    /// Table-size ratios, comma-separated (1, 10, 100, 1000): one smaller table per ratio
    /// with `1/R` of the keys.
    #[arg(long, default_value = "10")]
    pub ratio: String,

    /// Write the records in a random order (for the unsorted joins).
    #[arg(long)]
    pub shuffle: bool,

    /// 16-byte string keys made from a u64 dataset's keys (big-endian, then a hash); string
    /// datasets make string tables without it.
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
        output::check(
            &dir.join(name),
            &[("--from", Path::new(&args.from))],
            args.force,
        )?;
    }
    let dataset = load_any_dataset(&args.from, args.seed)?;
    let plan = Plan {
        dir: &dir,
        names: &names,
        ratios: &ratios,
        args: &args,
    };
    match dataset.keys {
        Keys::U64(keys) => {
            let mut keys = keys;
            let before = keys.len();
            keys.dedup();
            note_dropped(before, keys.len());
            if args.string_keys {
                plan.write_all(keys, |&k| (string_key(k), k))
            } else {
                plan.write_all(keys, |&k| (k, k))
            }
        }
        Keys::Str16(keys) => {
            let mut keys = keys;
            let before = keys.len();
            keys.dedup();
            note_dropped(before, keys.len());
            plan.write_all(keys, |&k| (k, str16_int(&k)))
        }
        Keys::Bytes(keys) => {
            let mut padded: Vec<Str16> = Vec::with_capacity(keys.len());
            for (rank, key) in keys.iter().enumerate() {
                if key.len() > 16 {
                    return Err(BenchError::BadSpec {
                        what: "--from",
                        got: format!(
                            "{}: key {} (rank {rank} in key order) is {} bytes",
                            dataset.name,
                            escape(key),
                            key.len()
                        ),
                        expected: "text keys of at most 16 bytes: tables hold 16-byte string \
                                   keys (remove or shorten the longer keys)"
                            .to_string(),
                    }
                    .into());
                }
                let mut s = [0u8; 16];
                s[..key.len()].copy_from_slice(key);
                if let Some(rank) = rank.checked_sub(1) {
                    let previous = &keys[rank];
                    if padded.last() == Some(&s) && previous != key {
                        return Err(BenchError::BadSpec {
                            what: "--from",
                            got: format!(
                                "{}: keys {} and {} (ranks {rank} and {}) are one key once \
                                 zero-padded to 16 bytes",
                                dataset.name,
                                escape(previous),
                                escape(key),
                                rank + 1
                            ),
                            expected: "text keys that differ in more than trailing zero bytes: \
                                       tables hold 16-byte zero-padded string keys (remove the \
                                       trailing zero bytes, or one of the two keys)"
                                .to_string(),
                        }
                        .into());
                    }
                }
                padded.push(s);
            }
            drop(keys);
            let before = padded.len();
            padded.dedup();
            note_dropped(before, padded.len());
            plan.write_all(padded, |&k| (k, str16_int(&k)))
        }
        other => Err(BenchError::KeyType {
            dataset: dataset.name,
            got: other.type_name(),
            expected: "join tables hold u64 or 16-byte string keys (text keys of at most 16 \
                       bytes become them)"
                .to_string(),
        }
        .into()),
    }
}

/// Where and how the tables of one `table create` are written.
struct Plan<'a> {
    dir: &'a Path,
    names: &'a [String],
    ratios: &'a [u64],
    args: &'a CreateArgs,
}

impl Plan<'_> {
    /// Writes the larger table (every key) and one sample per ratio; `record` gives a key's
    /// table key and the integer its value derives from.
    fn write_all<K: Copy, T: TableKey>(
        &self,
        keys: Vec<K>,
        record: impl Fn(&K) -> (T, u64),
    ) -> anyhow::Result<()> {
        let args = self.args;
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
        let mut tables = vec![(self.names[0].clone(), keys.clone())];
        for (&r, name) in self.ratios.iter().zip(&self.names[1..]) {
            let take = (keys.len() as u64 / r) as usize;
            let mut picked = index::sample(&mut rng, keys.len(), take).into_vec();
            picked.sort_unstable();
            tables.push((name.clone(), picked.iter().map(|&i| keys[i]).collect()));
        }
        drop(keys);
        // The dataset is loaded and checked: only now may the directory be created. One this
        // run made is removed again if the tables fail (it holds nothing then).
        // Registered, so a signal removes it too; kept once the tables are in place.
        let made = super::cleanup::Created::if_missing(self.dir);
        std::fs::create_dir_all(self.dir)?;
        let lines = self.write_tables(tables, &record, &mut rng)?;
        // The tables are in place and the directory is the user's: kept before anything is
        // printed, so a closed stdout cannot remove them.
        if let Some(made) = made {
            made.keep();
        }
        for line in lines {
            println!("{line}");
        }
        Ok(())
    }

    /// Writes `tables` (name and keys) in a private directory beside their targets, then
    /// renames them into place; returns one JSON line each, for the caller to print once
    /// nothing it created is registered for removal.
    fn write_tables<K: Copy, T: TableKey>(
        &self,
        tables: Vec<(String, Vec<K>)>,
        record: impl Fn(&K) -> (T, u64),
        rng: &mut ChaCha8Rng,
    ) -> anyhow::Result<Vec<serde_json::Value>> {
        let args = self.args;
        for (name, _) in &tables {
            output::check_regular(&self.dir.join(name))?;
        }
        let mut staging = output::Staging::beside(self.dir)?;
        let storage = Storage::new(staging.dir(), DeviceKind::File { direct: true }, 4096)?;
        let mut lines = Vec::new();
        for (name, mut keys) in tables {
            if args.shuffle {
                keys.shuffle(rng);
            }
            let staged = staging.file(&self.dir.join(&name))?;
            let staged_name = staged
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bar = spinner(&format!("writing {name}"));
            let started = Instant::now();
            let written = write(&storage, &staged_name, keys.iter().map(&record));
            bar.finish_and_clear();
            let count = written?;
            lines.push(serde_json::json!({
                "table": self.dir.join(&name).display().to_string(),
                "count": count,
                "key_type": T::NAME,
                "value_size": 8,
                "sorted": !args.shuffle,
                "seconds": started.elapsed().as_secs_f64(),
                "bytes": storage.file_bytes(&staged_name),
            }));
        }
        drop(storage);
        for name in self.names {
            remove_saved_indexes(self.dir, name)?;
        }
        // In place before the lines on stdout: a closed pipe cannot leave a staged table.
        staging.commit()?;
        Ok(lines)
    }
}

/// Prints how many duplicate keys were dropped: a table holds each key once.
fn note_dropped(before: usize, after: usize) {
    if after < before {
        note!(
            "note: {} duplicate keys dropped: a table holds each key once ({after} keys)",
            before - after
        );
    }
}

/// The integer a 16-byte string key's value derives from: its two halves mixed.
fn str16_int(key: &Str16) -> u64 {
    let (hi, lo) = key.split_at(8);
    let hi = u64::from_be_bytes(hi.try_into().expect("8 bytes"));
    let lo = u64::from_be_bytes(lo.try_into().expect("8 bytes"));
    hi ^ lo.rotate_left(29)
}

/// Removes the indexes `lidx join` saved next to an earlier table `name` in `dir`
/// (`<name>.<index>.idx`): they describe records about to be replaced. (A stale one left
/// behind would be rebuilt anyway, its fingerprint no longer matching the table's.) Only a
/// file whose first bytes read as a saved index's header is removed: a user's file that
/// happens to have such a name is not lidx's to delete (issue 30, class 1).
fn remove_saved_indexes(dir: &Path, name: &str) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let prefix = format!("{name}.");
    for entry in entries {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.starts_with(&prefix) && file.ends_with(".idx") && is_saved_index(&entry.path()) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// True when the file at `path` starts with a saved index's header (magic, version, checksum).
fn is_saved_index(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; table_index::INDEX_HEADER_BYTES];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| table_index::decode_index_header(&path.to_string_lossy(), &header).is_ok())
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
