//! `lidx kv`: a store of byte keys and values ([`lidx::kv::Store`]) from the command line.
//!
//! Keys and values are read and written in one text form by every subcommand (get, put, del,
//! scan, load): UTF-8 text with `\\`, `\t`, `\n`, `\r` and `\xNN` escapes for the bytes that
//! are not printable, or with `--hex` two hex digits a byte; a store of `u64` keys (one made by
//! loading a `.sosd` file, or created with `--keys u64`) takes and shows keys as decimal
//! numbers. [`text`] defines the form and the record files (`tsv`, `csv`, `jsonl`): whatever
//! `kv scan --format F` prints, `kv load --format F` loads back to the same bytes.
//!
//! `load` reads a file named by `--format` or its extension (`.sosd`, `.txt`, `.tsv`, `.csv`,
//! `.jsonl`), or standard input (`--from -`, with `--format`). Records need not be sorted; a
//! key given twice keeps its last value. It writes in batches of at most [`BATCH_RECORDS`]
//! records and [`BATCH_BYTES`] bytes (each all-or-nothing, far under the log's 1 GiB record
//! limit), creates the store when the directory does not exist, and compacts at the end so
//! the figures it prints are those of the table on disk.
//!
//! A load that fails (a bad line, a full disk) is not atomic, because a store has no way to
//! take back records it acknowledged: it says how many records are durable and the line to
//! resume from, after writing the records before a bad line. The exception is a first load:
//! when this run created the store's directory, a failure removes what it created (the
//! directory, and any parents it made), so a retry starts clean and no half-filled store with
//! an engine fixed by a failed run is left behind.

mod text;
mod torture;

use std::cell::Cell;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lidx::catalog::EngineSpec;
use lidx::kv::OrderedKey;
use lidx::kv::{
    CreateOptions, Engine, KeyFormat, Store, StoreOptions, StoreStats, WriteBatch, MAX_KEY_BYTES,
    MAX_LOG_SEGMENT_BYTES, MAX_MEMORY_BUDGET, MAX_VALUE_BYTES, MIN_LOG_SEGMENT_BYTES,
    MIN_MEMORY_BUDGET,
};
use lidx::kv::{FsyncPolicy, WalRecovery};
use lidx_bench::runner::Progress;
use lidx_bench::BenchError;
use serde_json::json;

use self::text::{Codec, Encoding, RecordFormat, RecordReader, RecordWriter};
use self::torture::TortureArgs;

use super::cleanup::Created;
use super::Bars;

/// Arguments of `lidx kv`.
#[derive(Debug, Parser)]
pub struct Args {
    #[command(subcommand)]
    pub command: KvCommand,
}

/// Options every `lidx kv` command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// The store's directory.
    #[arg(long)]
    pub db: PathBuf,
    /// Print JSON (one object a line) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Keys and values (of `get`, `put`, `del`, `scan`, `load`) as hex, two digits a byte,
    /// instead of text with `\\`, `\t`, `\n`, `\r` and `\xNN` escapes: exact bytes with no
    /// escaping. Keys of a `u64` store stay decimal.
    #[arg(long)]
    pub hex: bool,
    /// Bytes the dynamic stage may hold before a merge (K/M/G suffixes, powers of 1000).
    #[arg(long, default_value = "64M")]
    pub memory_budget: String,
    /// When writes are acknowledged: `always` (after fdatasync, the default), `never` (the OS
    /// decides; `lidx kv` still syncs before it exits), or `<n>ms` (a sync every n ms).
    #[arg(long, default_value = "always")]
    pub fsync: String,
    /// What opening does with a damaged log: `torn-tail` (the default: cut only an incomplete
    /// last record, left by a crash mid-append), `tolerate-corrupted-tail` (also drop a
    /// complete last record that fails its checksum, keeping a copy beside the log),
    /// `point-in-time` (stop at the first damaged record anywhere and set everything after it
    /// aside), `absolute-consistency` (refuse any damage). What is dropped is printed. No mode
    /// cuts at a record the store's tables already hold: that is an error, nothing changed.
    #[arg(long, default_value = "torn-tail")]
    pub recovery: WalRecovery,
    /// `log` stores: the collector keeps the log within this many times the bytes of its live
    /// records (at least 1.2), rewriting the live records of its emptiest segments and
    /// removing them; `off` keeps every record (paper 001's setting).
    #[arg(long, default_value = "1.5")]
    pub log_space_ratio: String,
    /// `log` stores: the size at which a log segment is closed, the unit the collector frees;
    /// `lsm` stores with a value log (`lsm:vmin=N`): the size of its segments, and so the
    /// longest value it takes (Ki/Mi/Gi suffixes for powers of 1024, K/M/G for powers of
    /// 1000; 4Ki to 1Gi).
    #[arg(long, default_value = "64Mi")]
    pub log_segment_bytes: String,
}

/// The `lidx kv` subcommands.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Create an empty store.
    Create {
        #[command(flatten)]
        common: Common,
        /// The engine (`--help` lists them).
        #[arg(long, default_value = Engine::default().name(), long_help = engine_help())]
        engine: String,
        /// How keys are given and shown: `bytes` or `u64` (stored big-endian).
        #[arg(long, default_value = "bytes")]
        keys: String,
    },
    /// Load records from a file or standard input, creating the store if needed.
    ///
    /// Formats (`--format`, or the file's extension): `tsv` (key<TAB>value a line), `csv`
    /// (key,value, a field with a comma, quote or line break quoted as in RFC 4180), `jsonl`
    /// ({"key": "...", "value": "..."} a line), `txt` (one key a line, empty values), `sosd`
    /// (binary u64 keys, empty values). Keys and values are text with escapes: `\\` for a
    /// backslash, `\t`, `\n`, `\r`, and `\xNN` for any byte (`\'` and `\"` are read too); any
    /// other backslash is an error, never taken literally. With `--hex` they are hex, two
    /// digits a byte. A store of u64 keys reads keys as decimal numbers. This is the form
    /// `kv scan` prints: `kv scan --format F | kv load --format F --from -` copies a store
    /// byte for byte. Lines end in \n or \r\n; blank lines are skipped; `--header` skips the
    /// first line.
    ///
    /// On a bad line, the records before it are written and the error says how many records
    /// are durable and the line to resume from; a failed load into a directory this run
    /// created removes the store it created (nothing is loaded).
    ///
    /// Cost: one log write per batch (4096 records or 16 MiB, whichever comes first), merges
    /// as the dynamic stage fills (or leaf writes and checkpoints, `btree`), and one final
    /// merge or checkpoint; memory stays within the budget plus the table's model (or the
    /// tree's inner nodes) and one batch.
    Load {
        #[command(flatten)]
        common: Common,
        /// The engine of a store this creates (one of `lidx kv create --help`'s); an existing
        /// store keeps its own, and naming another one is an error.
        #[arg(long)]
        engine: Option<String>,
        /// The file to load, or `-` for standard input (then `--format` is needed).
        #[arg(long)]
        from: PathBuf,
        /// The file's format; by default its extension names it.
        #[arg(long, value_enum)]
        format: Option<RecordFormat>,
        /// The first line (first CSV record) is a header, not a record: skip it.
        #[arg(long)]
        header: bool,
        /// The keys of a store this creates: `bytes` or `u64` (decimal numbers in text,
        /// stored big-endian); by default `u64` for an SOSD file, else `bytes`. An existing
        /// store keeps its own.
        #[arg(long)]
        keys: Option<String>,
        /// Leave the last records in the log and the dynamic stage instead of merging them.
        #[arg(long)]
        no_compact: bool,
    },
    /// Print the value of a key (exit code 1 when absent).
    Get {
        #[command(flatten)]
        common: Common,
        /// The key.
        key: String,
    },
    /// Set a key's value.
    Put {
        #[command(flatten)]
        common: Common,
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Delete a key.
    Del {
        #[command(flatten)]
        common: Common,
        /// The key.
        key: String,
    },
    /// Print records in key order: one `key<TAB>value` a line (or `--format csv`, `--json`),
    /// in the text form `kv load` reads back byte for byte (`lidx kv load --help`).
    Scan {
        #[command(flatten)]
        common: Common,
        /// First key (inclusive).
        #[arg(long)]
        from: Option<String>,
        /// Last key (exclusive).
        #[arg(long)]
        to: Option<String>,
        /// At most this many records.
        #[arg(long)]
        limit: Option<usize>,
        /// Descending order (from `--to` down to `--from`).
        #[arg(long)]
        reverse: bool,
        /// `tsv` (the default), `csv` (quoted where needed) or `jsonl` (as `--json`).
        #[arg(long, value_enum)]
        format: Option<RecordFormat>,
        /// Print a header line first (`key<TAB>value` or `key,value`); `kv load --header`
        /// skips it.
        #[arg(long)]
        header: bool,
    },
    /// Print what the store holds: records, memory, disk bytes, merges, stalls.
    Stats {
        #[command(flatten)]
        common: Common,
    },
    /// Read every block, log record and model; name the file and block of any damage (exit
    /// code 1 when anything is damaged).
    Check {
        #[command(flatten)]
        common: Common,
    },
    /// Fold everything written so far into the store's files: a merge into the table
    /// (`hybrid`) or a checkpoint of the tree (`btree`), after which the log is empty; for a
    /// `log` store, a collection of its emptiest segments and a checkpoint of its map.
    Compact {
        #[command(flatten)]
        common: Common,
    },
    /// Crash-test a new store: a writer child killed at random points, cycle after cycle,
    /// each followed by a check that every acknowledged write survived and nothing else
    /// appeared (`--power-loss` also cuts the unsynced end of the log). Exit code 1 on any
    /// violation.
    Torture(TortureArgs),
}

/// Runs `lidx kv`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        KvCommand::Create {
            common,
            engine,
            keys,
        } => {
            let create = CreateOptions {
                engine: parse_engine(&engine)?,
                key_format: parse_key_format(&keys)?,
                ..CreateOptions::default()
            };
            let store = Store::create(&common.db, &create, &options(&common, false)?)?;
            store.close()?;
            say(
                &common,
                json!({"created": common.db.display().to_string(), "engine": create.engine.label(), "keys": create.key_format.name()}),
                format!(
                    "created {} ({} engine, {} keys)",
                    common.db.display(),
                    create.engine.label(),
                    create.key_format.name()
                ),
            );
            Ok(())
        }
        KvCommand::Load {
            common,
            engine,
            from,
            format,
            header,
            keys,
            no_compact,
        } => {
            let engine = engine.as_deref().map(parse_engine).transpose()?;
            let keys = keys.as_deref().map(parse_key_format).transpose()?;
            let input = Input::new(from, format, header)?;
            load(&common, engine, keys, &input, !no_compact)
        }
        KvCommand::Get { common, key } => {
            let store = open(&common, true)?;
            let codec = codec(&common, &store);
            let k = codec.key_arg("key", &key)?;
            match store.get(&k)? {
                Some(v) => {
                    say(
                        &common,
                        json!({"key": codec.show_key(&k), "value": codec.show(&v)}),
                        codec.show(&v),
                    );
                    Ok(())
                }
                None => bail!("key {key} is not in the store"),
            }
        }
        KvCommand::Put { common, key, value } => {
            let store = open(&common, false)?;
            let codec = codec(&common, &store);
            store.put(&codec.key_arg("key", &key)?, &codec.value_arg(&value)?)?;
            store.close()?;
            Ok(())
        }
        KvCommand::Del { common, key } => {
            let store = open(&common, false)?;
            store.delete(&codec(&common, &store).key_arg("key", &key)?)?;
            store.close()?;
            Ok(())
        }
        KvCommand::Scan {
            common,
            from,
            to,
            limit,
            reverse,
            format,
            header,
        } => {
            let format = match (format, common.json) {
                (None, false) => RecordFormat::Tsv,
                (None | Some(RecordFormat::Jsonl), true) => RecordFormat::Jsonl,
                (Some(f), false) => f,
                (Some(f), true) => {
                    return Err(usage("--format", f.name(), "jsonl or none with --json"))
                }
            };
            text::check_writable(format, header)
                .map_err(|expected| usage("--format", format.name(), &expected))?;
            let store = open(&common, true)?;
            let codec = codec(&common, &store);
            let lo = from.map(|k| codec.key_arg("--from", &k)).transpose()?;
            let hi = to.map(|k| codec.key_arg("--to", &k)).transpose()?;
            let bounds = (
                lo.as_deref().map_or(Bound::Unbounded, Bound::Included),
                hi.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
            );
            let range = if reverse {
                store.range_rev(bounds)
            } else {
                store.range(bounds)
            };
            let stdout = std::io::stdout();
            let out = std::io::BufWriter::new(stdout.lock());
            let mut out = RecordWriter::new(out, format, codec, header)?;
            for entry in range.take(limit.unwrap_or(usize::MAX)) {
                let (k, v) = entry?;
                if let Err(e) = out.write(&k, &v) {
                    return quiet_on_closed_pipe(e);
                }
            }
            out.flush().or_else(quiet_on_closed_pipe)
        }
        KvCommand::Stats { common } => {
            let store = open(&common, true)?;
            print_stats(&common, &store);
            Ok(())
        }
        KvCommand::Check { common } => {
            let report = Store::check(&common.db)?;
            if common.json {
                println!(
                    "{}",
                    json!({
                        "sound": report.is_sound(),
                        "tables": report.tables,
                        "table_records": report.table_records,
                        "log_segments": report.log_segments,
                        "log_records": report.log_records,
                        "torn_tail_bytes": report.torn_tail_bytes,
                        "torn_pages_slot": report.torn_pages_slot.as_ref().map(|t| json!({"file": t.file, "block": t.block})),
                        "damage": report.damage.iter().map(|d| json!({"file": d.file, "block": d.block, "what": d.what})).collect::<Vec<_>>(),
                        "missing": report.missing,
                        "unknown": report.unknown,
                    })
                );
            } else {
                println!(
                    "{} table(s), {} records, each found through its model; {} log segment(s), {} records{}",
                    report.tables,
                    report.table_records,
                    report.log_segments,
                    report.log_records,
                    if report.torn_tail_bytes > 0 {
                        format!(" and a torn tail of {} bytes (cut at the next open)", report.torn_tail_bytes)
                    } else {
                        String::new()
                    }
                );
                if let Some(t) = &report.torn_pages_slot {
                    println!(
                        "torn: {} block {}: the header slot a checkpoint was stamping when it \
                         was interrupted (not damage: the store opens through the other slot, \
                         and the next checkpoint rewrites it)",
                        t.file, t.block
                    );
                }
                for d in &report.damage {
                    match d.block {
                        Some(b) => println!("damaged: {} block {b}: {}", d.file, d.what),
                        None => println!("damaged: {}: {}", d.file, d.what),
                    }
                }
                for u in &report.unknown {
                    if u.contains(".dropped") {
                        println!(
                            "set aside: {u} (log records lidx dropped from a damaged tail at an \
                             open, kept for you to inspect; never read)"
                        );
                    } else {
                        println!(
                            "unknown: {u} (the store does not name it: not its file, or a \
                             leftover its next open removes; never read)"
                        );
                    }
                }
            }
            if !report.is_sound() {
                bail!(
                    "{} damaged place(s) in {}",
                    report.damage.len(),
                    common.db.display()
                );
            }
            Ok(())
        }
        KvCommand::Torture(args) => torture::run(args),
        KvCommand::Compact { common } => {
            let store = open(&common, false)?;
            store.compact()?;
            print_stats(&common, &store);
            store.close()?;
            Ok(())
        }
    }
}

fn say(common: &Common, json: serde_json::Value, text: String) {
    if common.json {
        println!("{json}");
    } else {
        println!("{text}");
    }
}

/// `kv create --engine`'s long help: the engines as the catalog lists and describes them.
fn engine_help() -> String {
    format!(
        "The engine:\n{}\n\nSpelled {}. A `log:trie:<map>` store is a trie of such maps, one \
         per 8 bytes the keys share.",
        EngineSpec::help_lines().join("\n"),
        Engine::forms()
    )
}

fn parse_engine(name: &str) -> anyhow::Result<Engine> {
    Engine::parse(name).with_context(|| {
        format!(
            "unknown engine {name:?}; the engines are: {}",
            Engine::forms()
        )
    })
}

fn parse_key_format(name: &str) -> anyhow::Result<KeyFormat> {
    match name {
        "bytes" => Ok(KeyFormat::Bytes),
        "u64" => Ok(KeyFormat::U64),
        _ => bail!("unknown key format {name:?}; use bytes or u64"),
    }
}

fn options(common: &Common, read_only: bool) -> anyhow::Result<StoreOptions> {
    let range = format!(
        "a size in bytes from {MIN_MEMORY_BUDGET} to {MAX_MEMORY_BUDGET} (256 GiB), such as \
         64M or 1000000 (K/M/G are powers of 1000)"
    );
    let budget = lidx_bench::count::parse_count(&common.memory_budget)
        .ok_or_else(|| usage("--memory-budget", &common.memory_budget, &range))?;
    if !(MIN_MEMORY_BUDGET as u64..=MAX_MEMORY_BUDGET as u64).contains(&budget) {
        return Err(usage("--memory-budget", &common.memory_budget, &range));
    }
    let fsync = match common.fsync.as_str() {
        "always" => FsyncPolicy::Always,
        "never" => FsyncPolicy::Never,
        ms => match ms.strip_suffix("ms").and_then(|n| n.parse::<u64>().ok()) {
            Some(n) if n > 0 => FsyncPolicy::EveryMs(n),
            _ => bail!("--fsync {ms:?} is not a policy; use always, never or <n>ms"),
        },
    };
    let ratio = super::args::parse_space_ratio(&common.log_space_ratio)?;
    let segment_range =
        "a size in bytes from 4Ki (4096) to 1Gi, such as 64Mi (Ki/Mi/Gi are powers \
         of 1024, K/M/G of 1000)";
    let segment = lidx_bench::count::parse_count(&common.log_segment_bytes)
        .filter(|b| (MIN_LOG_SEGMENT_BYTES..=MAX_LOG_SEGMENT_BYTES).contains(b))
        .ok_or_else(|| {
            usage(
                "--log-segment-bytes",
                &common.log_segment_bytes,
                segment_range,
            )
        })?;
    Ok(StoreOptions {
        fsync,
        memory_budget: usize::try_from(budget).unwrap_or(usize::MAX),
        read_only,
        recovery: common.recovery,
        log_space_ratio: ratio,
        log_segment_bytes: segment,
        ..StoreOptions::default()
    })
}

/// Opens the store of `common`, saying on stderr what the open cut of a damaged log.
fn open(common: &Common, read_only: bool) -> anyhow::Result<Store> {
    let store = Store::open(&common.db, &options(common, read_only)?)?;
    warn_dropped(&store);
    Ok(store)
}

fn warn_dropped(store: &Store) {
    if let Some(dropped) = store.recovery() {
        note!(
            "warning: the log of {} was damaged: {dropped}",
            store.dir().display()
        );
    }
}

/// `bytes` per record of the table (0 for an empty table).
fn per_record(s: &StoreStats, bytes: u64) -> f64 {
    if s.table_records == 0 {
        0.0
    } else {
        bytes as f64 / s.table_records as f64
    }
}

fn print_stats(common: &Common, store: &Store) {
    let s = store.stats();
    let id = store.identity();
    let per_key = |bytes: u64| per_record(&s, bytes);
    if common.json {
        println!(
            "{}",
            json!({
                "engine": id.engine.label(),
                "keys": id.key_format.name(),
                "table_records": s.table_records,
                "table_key_bytes": s.table_key_bytes,
                "table_value_bytes": s.table_value_bytes,
                "table_disk_bytes": s.table_disk_bytes,
                "free_disk_bytes": s.free_disk_bytes,
                "disk_bytes_per_record": per_key(s.table_disk_bytes),
                "model_bytes": s.model_bytes,
                "model_bytes_per_record": per_key(s.model_bytes as u64),
                "dynamic_keys": s.dynamic_keys,
                "dynamic_bytes": s.dynamic_bytes,
                "cache_bytes": s.cache_bytes,
                "memory_bytes": s.memory_bytes,
                "log_disk_bytes": s.log_disk_bytes,
                "log_live_bytes": s.log_live_bytes,
                "log_relocated_bytes": s.log_relocated_bytes,
                "lsm_runs": s.lsm_runs,
                "lsm_levels": s.lsm_levels,
                "filter_bytes": s.filter_bytes,
                "shed_filter_runs": s.shed_filter_runs,
                "lsm_written_bytes": s.lsm_written_bytes,
                "compaction_bytes": s.compaction_bytes,
                "moved_bytes": s.moved_bytes,
                "value_log_segments": s.value_log_segments,
                "value_log_bytes": s.value_log_bytes,
                "value_log_live_bytes": s.value_log_live_bytes,
                "merges": s.merges,
                "merge_seconds": s.merge_seconds,
                "write_stalls": s.write_stalls,
                "stall_seconds": s.stall_seconds,
                "recovered_records": s.recovered_records,
                "recovery_seconds": s.recovery_seconds,
            })
        );
    } else {
        println!(
            "engine          {} ({} keys)",
            id.engine.label(),
            id.key_format.name()
        );
        if let Engine::Log(_) = id.engine {
            println!(
                "records         {} live keys in a {} byte log, {} bytes of it live ({:.2}x)",
                s.table_records,
                s.log_disk_bytes,
                s.log_live_bytes,
                s.log_disk_bytes as f64 / s.log_live_bytes.max(1) as f64
            );
            println!(
                "map             {} keys (deletes a snapshot needs included), {} bytes ({:.3} B/record)",
                s.dynamic_keys,
                s.model_bytes,
                per_key(s.model_bytes as u64)
            );
            println!(
                "checkpoint      {} bytes; since open {} collector passes ({:.2} s), {} bytes rewritten",
                s.table_disk_bytes, s.merges, s.merge_seconds, s.log_relocated_bytes
            );
            println!(
                "recovery        {:.3} s: {} log records replayed into the map",
                s.recovery_seconds, s.recovered_records
            );
            return;
        }
        println!(
            "table           {} records, {} key + {} value bytes, {} bytes on disk ({:.1} B/record, {} bytes free for reuse)",
            s.table_records,
            s.table_key_bytes,
            s.table_value_bytes,
            s.table_disk_bytes,
            per_key(s.table_disk_bytes),
            s.free_disk_bytes
        );
        let btree = id.engine == Engine::BTree;
        println!(
            "{}     {} bytes ({:.3} B/record)",
            if btree { "inner nodes" } else { "model      " },
            s.model_bytes,
            per_key(s.model_bytes as u64)
        );
        if !btree {
            println!(
                "dynamic stage   {} keys, {} bytes",
                s.dynamic_keys, s.dynamic_bytes
            );
        }
        if let Engine::Lsm(_) = id.engine {
            println!(
                "runs            {} in {} level(s), key filters {} bytes (in the model's; {} \
                 run(s) keep theirs on disk only, for the budget); since open {} bytes of runs \
                 written, {} of them by compactions, {} moved down unrewritten",
                s.lsm_runs,
                s.lsm_levels,
                s.filter_bytes,
                s.shed_filter_runs,
                s.lsm_written_bytes,
                s.compaction_bytes,
                s.moved_bytes
            );
            if s.value_log_segments > 0 {
                println!(
                    "value log       {} segment(s), {} bytes on disk (in the table's), {} bytes \
                     of values referred to ({:.2}x)",
                    s.value_log_segments,
                    s.value_log_bytes,
                    s.value_log_live_bytes,
                    s.value_log_bytes as f64 / s.value_log_live_bytes.max(1) as f64
                );
            }
        }
        println!("log             {} bytes", s.log_disk_bytes);
        println!(
            "memory          {} bytes ({}, {} bytes of cache)",
            s.memory_bytes,
            if btree {
                "inner nodes"
            } else {
                "dynamic stage, model"
            },
            s.cache_bytes
        );
        println!(
            "since open      {} {} ({:.2} s), {} write stalls ({:.2} s), {} log records replayed in {:.3} s",
            s.merges,
            if btree { "checkpoints" } else { "merges" },
            s.merge_seconds,
            s.write_stalls,
            s.stall_seconds,
            s.recovered_records,
            s.recovery_seconds
        );
    }
}

/// A closed pipe (`kv scan | head`) ends a scan quietly; any other write error (a full disk
/// under `kv scan > dump.tsv`) fails it, so a cut dump never passes for a whole one.
fn quiet_on_closed_pipe(e: std::io::Error) -> anyhow::Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(anyhow::Error::new(e).context("writing the records to standard output"))
    }
}

fn usage(what: &'static str, got: &str, expected: &str) -> anyhow::Error {
    BenchError::BadSpec {
        what,
        got: got.to_string(),
        expected: expected.to_string(),
    }
    .into()
}

/// How `store`'s keys and values are given and shown under `common`'s options.
fn codec(common: &Common, store: &Store) -> Codec {
    Codec {
        keys: store.identity().key_format,
        encoding: if common.hex {
            Encoding::Hex
        } else {
            Encoding::Text
        },
    }
}

/// What `load` reads: a file or standard input, its format, and whether it has a header.
struct Input {
    from: PathBuf,
    format: RecordFormat,
    header: bool,
}

impl Input {
    /// Checks the options before anything is created: the format is known, the file exists.
    fn new(from: PathBuf, format: Option<RecordFormat>, header: bool) -> anyhow::Result<Input> {
        let stdin = from.as_os_str() == "-";
        let ext = from.extension().and_then(|e| e.to_str()).unwrap_or("");
        let format = match format.or_else(|| RecordFormat::of_extension(ext)) {
            Some(f) => f,
            None if stdin => {
                return Err(usage(
                    "--format",
                    "(none)",
                    "--format tsv, csv, jsonl, txt or sosd with --from - (standard input)",
                ))
            }
            None => {
                return Err(usage(
                    "--from",
                    &from.display().to_string(),
                    &format!(
                        "a file whose extension names its format (it has {ext:?}): .tsv, \
                         .csv, .jsonl, .txt, .sosd; or name it with --format"
                    ),
                ))
            }
        };
        if header && matches!(format, RecordFormat::Jsonl | RecordFormat::Sosd) {
            return Err(usage(
                "--header",
                format.name(),
                "a header with tsv, csv or txt only",
            ));
        }
        if stdin && format == RecordFormat::Sosd {
            return Err(usage(
                "--from",
                "-",
                "an SOSD file on disk (its header gives the count; it is not read from a pipe)",
            ));
        }
        if !stdin && !from.is_file() {
            let what = if from.exists() {
                "not a file"
            } else {
                "no such file"
            };
            return Err(usage(
                "--from",
                &from.display().to_string(),
                &format!(
                    "a {} file to load, or - for standard input ({what})",
                    format.name()
                ),
            ));
        }
        Ok(Input {
            from,
            format,
            header,
        })
    }

    fn is_stdin(&self) -> bool {
        self.from.as_os_str() == "-"
    }

    fn name(&self) -> String {
        if self.is_stdin() {
            "standard input".to_string()
        } else {
            self.from.display().to_string()
        }
    }
}

/// Records a batch holds at most before it is written.
pub const BATCH_RECORDS: usize = 4096;
/// Encoded bytes a batch holds at most before it is written (a batch of one larger record is
/// written alone). A batch is one log record, which the log caps at
/// [`lidx::raw::kv::wal::MAX_BODY_BYTES`] (1 GiB); 4096 values of the largest size would be 64 GiB.
pub const BATCH_BYTES: usize = 16 << 20;

// One batch, even of a single record of the largest key and value, stays a loggable record.
const _: () = assert!(
    BATCH_BYTES + MAX_KEY_BYTES + MAX_VALUE_BYTES + 64 < lidx::raw::kv::wal::MAX_BODY_BYTES
);

/// A load in progress: the batch being filled, and what is already written.
struct Loader<'a> {
    store: &'a Store,
    batch: WriteBatch,
    /// Records in batches the store acknowledged.
    written: u64,
    /// The line (or key index) to resume from: the first record not written.
    resume: u64,
}

impl Loader<'_> {
    /// Writes the batch if it has no room for a record of `bytes` key and value bytes that
    /// starts at `line`.
    fn make_room(&mut self, line: u64, bytes: usize) -> anyhow::Result<()> {
        // A put's encoding: a kind byte and two varints of at most 10 bytes each.
        let bytes = bytes + 21;
        if self.batch.len() >= BATCH_RECORDS
            || (!self.batch.is_empty() && self.batch.encoded_bytes() + bytes > BATCH_BYTES)
        {
            self.flush(line)?;
        }
        Ok(())
    }

    /// Adds a record (after [`Loader::make_room`]); a key or value the store refuses is an
    /// error and leaves the batch as it was.
    fn add(&mut self, key: &[u8], value: &[u8]) -> lidx::Result<()> {
        self.batch.put(key, value)?;
        Ok(())
    }

    /// Adds a record that starts at `line` (an SOSD key index), making room first.
    fn put(&mut self, line: u64, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.make_room(line, key.len() + value.len())?;
        self.add(key, value)?;
        Ok(())
    }

    /// Writes the batch; `next` is the line (or key index) of the first record after it.
    fn flush(&mut self, next: u64) -> anyhow::Result<()> {
        if !self.batch.is_empty() {
            self.store.write(&self.batch)?;
            self.written += self.batch.len() as u64;
            self.batch = WriteBatch::new();
        }
        self.resume = next;
        Ok(())
    }
}

fn load(
    common: &Common,
    engine: Option<Engine>,
    keys: Option<KeyFormat>,
    input: &Input,
    compact: bool,
) -> anyhow::Result<()> {
    let options = options(common, false)?;
    let key_format = keys.unwrap_or(if input.format == RecordFormat::Sosd {
        KeyFormat::U64
    } else {
        KeyFormat::Bytes
    });
    // The first ancestor of the store's directory (itself included) that this run creates.
    let created = common
        .db
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_err())
        .last()
        .map(Path::to_path_buf);
    // A signal (Ctrl-C) during a first load removes the store this run created, as a failed
    // first load does; once the load is done the store is the user's.
    let guard = created.as_deref().map(Created::register);
    let store = match &created {
        None => open(common, false)?,
        Some(dir) => {
            let create = CreateOptions {
                key_format,
                engine: engine.unwrap_or_default(),
                ..CreateOptions::default()
            };
            Store::create(&common.db, &create, &options).inspect_err(|_| {
                // Only what this run created: the directory did not exist before it.
                let _ = std::fs::remove_dir_all(dir);
            })?
        }
    };
    let mut loader = Loader {
        store: &store,
        batch: WriteBatch::new(),
        written: 0,
        resume: 1,
    };
    let start = Instant::now();
    let codec = codec(common, &store);
    let result = check_identity(common, &store, engine, keys, input)
        .and_then(|()| read_into(&mut loader, input, codec));
    let (written, resume) = (loader.written, loader.resume);
    let records = match result {
        Ok(records) => records,
        Err(error) => {
            let synced = store.sync();
            drop(store);
            return Err(failed(
                common,
                input,
                created,
                (written, resume),
                synced,
                error,
            ));
        }
    };
    // Every record is in the store: from here a failure or a signal leaves it to the user.
    if let Some(guard) = guard {
        guard.keep();
    }
    let engine = store.identity().engine;
    let btree = engine == Engine::BTree;
    let log = matches!(engine, Engine::Log(_));
    if compact && !log {
        let bar = super::spinner(if btree {
            "checkpointing the tree"
        } else {
            "merging into the table"
        });
        store.compact().with_context(|| {
            format!("all {records} records are in the store's log; the final compaction failed")
        })?;
        bar.finish_and_clear();
    }
    store.sync()?;
    let secs = start.elapsed().as_secs_f64();
    let s = store.stats();
    let per = |bytes: u64| per_record(&s, bytes);
    let name = input.name();
    say(
        common,
        json!({
            "loaded": records,
            "from": name,
            "seconds": secs,
            "records_per_second": records as f64 / secs,
            "table_records": s.table_records,
            "disk_bytes_per_record": per(s.table_disk_bytes),
            "model_bytes_per_record": per(s.model_bytes as u64),
            "merges": s.merges,
            "write_stalls": s.write_stalls,
        }),
        if log {
            format!(
                "loaded {records} records from {name} in {secs:.2} s ({:.0} records/s); the store holds {} records, {:.1} bytes/record of log on disk, map {:.3} bytes/record",
                records as f64 / secs,
                s.table_records,
                per(s.log_disk_bytes),
                per(s.model_bytes as u64),
            )
        } else {
            format!(
                "loaded {records} records from {name} in {secs:.2} s ({:.0} records/s); the {} holds {} records, {:.1} bytes/record on disk, {} {:.3} bytes/record; {} {}, {} write stalls",
                records as f64 / secs,
                if btree { "tree" } else { "table" },
                s.table_records,
                per(s.table_disk_bytes),
                if btree { "inner nodes" } else { "model" },
                per(s.model_bytes as u64),
                s.merges,
                if btree { "checkpoints" } else { "merges" },
                s.write_stalls
            )
        },
    );
    store.close()?;
    Ok(())
}

/// Refuses a load whose engine or keys are not the store's.
fn check_identity(
    common: &Common,
    store: &Store,
    engine: Option<Engine>,
    keys: Option<KeyFormat>,
    input: &Input,
) -> anyhow::Result<()> {
    let id = store.identity();
    let db = common.db.display();
    let (engine_is, keys_are) = (id.engine.label(), id.key_format.name());
    let error = if let Some(want) = engine.filter(|e| *e != id.engine).map(|e| e.label()) {
        format!("{db} is a {engine_is} store, not {want}; load into a new directory to use {want}")
    } else if let Some(want) = keys.filter(|k| *k != id.key_format).map(KeyFormat::name) {
        format!(
            "{db} holds {keys_are} keys, not {want}; load into a new directory to use {want} keys"
        )
    } else if input.format == RecordFormat::Sosd && id.key_format != KeyFormat::U64 {
        let name = input.name();
        format!("{db} holds {keys_are} keys but {name} has u64 keys; load it into a new store")
    } else {
        return Ok(());
    };
    Err(anyhow::anyhow!(error))
}

/// Reads `input` into the store; returns the records read.
fn read_into(loader: &mut Loader<'_>, input: &Input, codec: Codec) -> anyhow::Result<u64> {
    let mut bars = Bars::default();
    let mut records = 0u64;
    if input.format == RecordFormat::Sosd {
        let keys = lidx_bench::sosd::read_sosd(&input.from)?;
        bars.begin("loading keys", keys.len() as u64);
        // For an SOSD file the places to resume from are key indexes (0-based).
        loader.resume = 0;
        for (i, k) in (0u64..).zip(&keys) {
            loader.put(i, &k.ordered_bytes(), b"")?;
            records += 1;
            bars.advance(1);
        }
        loader.flush(records)?;
        bars.end();
        return Ok(records);
    }
    let stdin = input.is_stdin();
    let (file, total): (Box<dyn Read>, u64) = if stdin {
        (Box::new(std::io::stdin()), 0)
    } else {
        let file = File::open(&input.from)
            .with_context(|| format!("cannot open {}", input.from.display()))?;
        let total = file.metadata().map_or(0, |m| m.len());
        (Box::new(file), total)
    };
    let read = Rc::new(Cell::new(0u64));
    let counted = Counted {
        inner: file,
        read: Rc::clone(&read),
    };
    let mut reader = RecordReader::new(
        BufReader::with_capacity(1 << 16, counted),
        input.format,
        codec,
        input.header,
    )?;
    bars.begin("loading records", total);
    let mut shown = 0;
    let mut last_line = 0;
    while let Some(record) = reader.next_record()? {
        let record = match record {
            Ok(r) => r,
            Err(bad) => return Err(bad_line(loader, bad.line, &bad.what)),
        };
        loader.make_room(record.line, record.key.len() + record.value.len())?;
        if let Err(e) = loader.add(&record.key, &record.value) {
            return Err(bad_line(loader, record.line, &e.to_string()));
        }
        records += 1;
        last_line = record.line;
        bars.advance(read.get() - shown);
        shown = read.get();
    }
    loader.flush(last_line + 1)?;
    bars.end();
    Ok(records)
}

/// Stops a load at a bad record on `line`, after writing the records before it.
fn bad_line(loader: &mut Loader<'_>, line: u64, what: &str) -> anyhow::Error {
    match loader.flush(line) {
        Ok(()) => anyhow::anyhow!("line {line}: {what}"),
        Err(e) => e.context(format!(
            "line {line}: {what}; writing the records before it"
        )),
    }
}

/// A reader that counts the bytes read through it, for the progress bar.
struct Counted<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// `word` as one word of a POSIX shell command: as it is when it holds only characters no
/// shell treats specially, else in single quotes (a `'` inside as `'\''`).
fn shell_quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=+-,@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The error of a failed load: what stopped it, what is in the store, and what to do.
fn failed(
    common: &Common,
    input: &Input,
    created: Option<PathBuf>,
    progress: (u64, u64),
    synced: lidx::Result<()>,
    error: anyhow::Error,
) -> anyhow::Error {
    let (written, resume) = progress;
    let db = common.db.display();
    let stopped = format!("loading {} into {db} stopped: {error:#}", input.name());
    if let Some(dir) = created {
        return match std::fs::remove_dir_all(&dir) {
            Ok(()) => anyhow::anyhow!(
                "{stopped}; nothing is loaded: {} is removed, as this run created it; fix the \
                 input and run the command again",
                dir.display()
            ),
            Err(e) => anyhow::anyhow!(
                "{stopped}; removing {}, which this run created, failed too ({e}): remove it \
                 before running the command again",
                dir.display()
            ),
        };
    }
    let durable = match synced {
        Ok(()) => format!("{written} record(s) of this load are durable in {db}"),
        Err(e) => format!(
            "{written} record(s) of this load were written to {db}, but the sync after the \
             failure failed too ({e}): how many are durable is unknown (check with kv scan)"
        ),
    };
    if written == 0 {
        return anyhow::anyhow!("{stopped}; no record of this load was written to {db}");
    }
    if input.format == RecordFormat::Sosd {
        return anyhow::anyhow!(
            "{stopped}; {durable}: the first {resume} keys of the file; loading the whole file \
             again is harmless (each key keeps its last value)"
        );
    }
    let resume_with = if input.is_stdin() {
        format!("the lines from line {resume} of the input")
    } else {
        format!(
            "`tail -n +{resume} {} | lidx kv load --db {} --format {}{} --from -`",
            shell_quoted(&input.from.display().to_string()),
            shell_quoted(&common.db.display().to_string()),
            input.format.name(),
            if common.hex { " --hex" } else { "" }
        )
    };
    anyhow::anyhow!(
        "{stopped}; {durable} (every record before line {resume}): resume from line {resume} \
         with {resume_with}"
    )
}

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    /// The resume command a failed load prints names its paths as one shell word each, what
    /// spaces, quotes or `$` they hold (they were printed bare).
    #[test]
    fn a_quoted_word_is_read_back_by_the_shell_as_itself() {
        for word in [
            "plain/path.tsv",
            "my data.tsv",
            "it's $HOME `x`",
            "a\\b\"c",
            "",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quoted(word)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), word);
        }
    }
}
