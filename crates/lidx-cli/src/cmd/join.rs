//! `lidx join`: join two tables written by `lidx table create` with one algorithm of paper 000
//! (§5.3) and print one JSON line: join time apart from index build or load time, blocks and
//! bytes read and written, index size, output count and checksum (see `lidx::join`).
//!
//! The tables' directories are opened with `--device`: `file` (O_DIRECT, so every run is
//! cold-cache) or `sim:<profile>` (the same files on a simulated device). Saved indexes are
//! written next to the larger table and reused by later joins, while they were built on exactly
//! its records (`"index": "loaded"`; `"rebuilt: stale"` after the table was re-created).
//!
//! `--out` is never an input table, and an existing output is replaced only with `--force`
//! (see `output`); both are checked before anything is written. The output is written in a
//! private directory beside it and renamed into place only when the join succeeded, so a join
//! that fails (or is killed) leaves the old output as it was and nothing new; the join's
//! helper files (thread parts, Grace partitions, the unsorted routes' scratch files) go in
//! the same private directory, so they cannot collide with a user's file (issue 30).
//!
//! On tables in a directory that is not writable (read-only media), an INLJ's index is used
//! from memory: `"index"` says `in memory only`, and a note on stderr says the next join
//! builds it again.
//!
//! `--algo read-both` and `--algo read-both-write` are not joins but the limit a join at table
//! ratio 1 is measured against (paper 000 §4.2): reading both tables sequentially through the
//! same I/O path, without and with writing an output of the join's size (see
//! `lidx::raw::join::baseline`). They print the same JSON line, so the ratio of two lines is the
//! ratio to the limit, except that their `checksum` is null: they join nothing, and the sum of
//! the keys they read is printed as `read_checksum`, which no join's checksum equals.

use std::path::{Path, PathBuf};

use clap::Parser;
use lidx::io::{DeviceKind, Storage};
use lidx::join;
use lidx::join::Baseline;
use lidx::join::{JoinAlgo, JoinParams, TableRef};
use lidx::Str16;
use lidx_bench::count::parse_count;
use lidx_bench::records::JoinRecord;
use lidx_bench::records::{self, RecordKind};
use lidx_bench::BenchError;

use super::output;

/// Arguments of `lidx join`.
#[derive(Debug, Parser)]
pub struct Args {
    /// sort-merge, hash, grace-hash, inlj-btree, inlj-pgm, inlj-sampled-pgm, inlj-rs,
    /// inlj-rmi; for unsorted tables (sorted output) unsorted-btree or unsorted-learned; or a
    /// baseline: read-both (read both tables sequentially, the limit of a join at ratio 1) or
    /// read-both-write (the same and write an output of the join's size).
    #[arg(long)]
    pub algo: String,

    /// The left table.
    #[arg(long)]
    pub left: PathBuf,

    /// The right table.
    #[arg(long)]
    pub right: PathBuf,

    /// The output table (key, left value, right value). Never one of the input tables; an
    /// existing file is refused unless --force is given.
    #[arg(long)]
    pub out: PathBuf,

    /// Replace the output table if it exists.
    #[arg(long)]
    pub force: bool,

    /// Worker threads: the smaller table is split among them, each writes its own part.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// Memory budget in bytes (64Mi, 1G, ...) for the hash joins: hash refuses a smaller
    /// budget than its hash table, grace-hash partitions to fit it. The unsorted joins
    /// (default 1Gi) size their caches, partition buffers and buckets to it.
    #[arg(long)]
    pub memory: Option<String>,

    /// INLJ window in records (256, 1024, 4096): smaller indexes and larger reads as it
    /// grows. Default: each index's paper setting.
    #[arg(long)]
    pub window: Option<usize>,

    /// `file` (O_DIRECT) or `sim:<profile>` (hdd, sata-ssd, nvme, optane, ram,
    /// lat=<dur>,bw=<bytes/s>,p=<n>).
    #[arg(long, default_value = "file")]
    pub device: String,
}

fn bad(what: &'static str, got: &str, expected: &str) -> BenchError {
    BenchError::BadSpec {
        what,
        got: got.to_string(),
        expected: expected.to_string(),
    }
}

/// A library error made a usage error when it is about a parameter.
fn usage(error: lidx::Error) -> anyhow::Error {
    match error {
        lidx::Error::InvalidParameter {
            name,
            value,
            expected,
        } => bad(name, &value, expected).into(),
        other => other.into(),
    }
}

fn split(path: &Path) -> (PathBuf, String) {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (dir, name)
}

/// Runs `lidx join`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let baseline = Baseline::parse(&args.algo);
    let algo = match baseline {
        Some(_) => JoinAlgo::SortMerge,
        None => JoinAlgo::parse(&args.algo).map_err(usage)?,
    };
    let memory = match &args.memory {
        None => None,
        Some(text) => Some(
            parse_count(text)
                .ok_or_else(|| bad("memory", text, "a byte count such as 64Mi, 512M or 1G"))?,
        ),
    };
    if args.threads == 0 {
        return Err(bad("threads", "0", "at least 1").into());
    }
    lidx::raw::join::inlj::check_window(args.window).map_err(usage)?;
    output::check(
        &args.out,
        &[("--left", &args.left), ("--right", &args.right)],
        args.force,
    )?;
    let kind = DeviceKind::parse(&args.device).map_err(usage)?;
    let mut staging = output::Staging::beside(&output::directory_of(&args.out)?)?;
    // `read-both` writes nothing: its output is a name in the private directory, never moved.
    let staged = match baseline {
        Some(Baseline::ReadBoth) => staging.dir().join("unwritten"),
        _ => staging.file(&args.out)?,
    };
    let params = JoinParams {
        algo,
        threads: args.threads,
        memory,
        window: args.window,
    };
    // One storage per directory, so that the device counters are summed once.
    let paths = [&args.left, &args.right, &staged];
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut names = Vec::new();
    for path in paths {
        let (dir, name) = split(path);
        if !dirs.contains(&dir) {
            dirs.push(dir.clone());
        }
        names.push((dirs.iter().position(|d| *d == dir).expect("pushed"), name));
    }
    let storages = dirs
        .iter()
        .map(|d| Storage::new(d, kind.clone(), 4096))
        .collect::<lidx::Result<Vec<_>>>()?;
    let at = |i: usize| TableRef {
        storage: &storages[names[i].0],
        name: &names[i].1,
    };
    let left = join::read_header(at(0).storage, at(0).name)?;
    let right = join::read_header(at(1).storage, at(1).name)?;
    join::check_same_key_type(&left, &right, &args.right.display().to_string())?;
    // The helper files go in the private directory beside the staged output.
    let scratch = at(2).storage;
    let report = match (baseline, left.key_size) {
        (Some(b), 16) => lidx::raw::join::baseline::run::<Str16>(b, at(0), at(1), at(2)),
        (Some(b), _) => lidx::raw::join::baseline::run::<u64>(b, at(0), at(1), at(2)),
        (None, 16) => join::join_in::<Str16>(at(0), at(1), at(2), scratch, &params),
        (None, _) => join::join_in::<u64>(at(0), at(1), at(2), scratch, &params),
    }
    .map_err(usage)?;
    let device = storages[0].describe();
    drop(storages);
    // In place before the line on stdout: a closed pipe cannot leave the staged output.
    staging.commit()?;
    if report
        .index
        .as_deref()
        .is_some_and(|i| i.ends_with(lidx::raw::join::table_index::UNSAVED))
    {
        note!(
            "note: the index was not saved ({} is not writable): it was used from memory, and \
             the next join builds it again",
            output::parent(&args.left).display()
        );
    }
    let line = serde_json::to_string(&JoinRecord {
        schema: RecordKind::Join.schema(),
        command: records::command_line(),
        report,
        left: args.left.display().to_string(),
        right: args.right.display().to_string(),
        out: args.out.display().to_string(),
        device,
    })?;
    println!("{line}");
    Ok(())
}
