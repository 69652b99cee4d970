//! `lidx kv`: a store of byte keys and values ([`lidx::kv::store::Store`]) from the command line.
//!
//! Keys and values are given as text (their UTF-8 bytes); `\xNN`, `\\`, `\t`, `\n`, `\r`,
//! `\'` and `\"` escapes give any byte. A store of `u64` keys (one made by loading a `.sosd`
//! file, or created with `--keys u64`) takes and shows keys as decimal numbers. Output is
//! text, one `key<TAB>value` a line for `scan`, with bytes that are not printable shown
//! escaped the same way; `--json` gives one JSON object a line instead.
//!
//! `load` reads a file by its extension: `.sosd` (u64 keys, empty values), `.txt` (one key a
//! line, empty values), `.tsv` or `.csv` (`key<TAB>value` or `key,value`: the first separator
//! splits). Records need not be sorted; a key given twice keeps its last value. It writes in
//! batches (each all-or-nothing), creates the store when the directory does not exist, and
//! compacts at the end so the figures it prints are those of the table on disk.

use std::io::{BufRead, BufReader, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lidx::kv::store::{
    CreateOptions, Engine, KeyFormat, OrderedKey, Store, StoreOptions, StoreStats, WriteBatch,
};
use lidx::kv::{FsyncPolicy, WalRecovery};
use lidx_bench::runner::Progress;
use serde_json::json;

use super::kv_torture::{self, TortureArgs};
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
}

/// The `lidx kv` subcommands.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Create an empty store.
    Create {
        #[command(flatten)]
        common: Common,
        /// The engine: `hybrid` (paper 002's hybrid index over byte keys: a dynamic stage in
        /// memory, a learned static table on disk), `btree` (a disk B+-tree with its inner
        /// nodes in memory, durable through the same log) or `log:<map>` (paper 001's setting:
        /// records in a log on disk, an in-memory map such as `log:alex` or
        /// `log:btree:leaf=16` from each 8-byte key to its record; `lidx bench --help` lists
        /// the maps) or `log:trie:<map>` (the same over keys of any length: a trie of such
        /// maps, one per 8 bytes the keys share).
        #[arg(long, default_value = "hybrid")]
        engine: String,
        /// How keys are given and shown: `bytes` or `u64` (stored big-endian).
        #[arg(long, default_value = "bytes")]
        keys: String,
    },
    /// Load records from a file (.sosd, .txt, .tsv, .csv), creating the store if needed.
    ///
    /// Cost: one log write per batch of 4096 records, merges as the dynamic stage fills (or
    /// leaf writes and checkpoints, `btree`), and one final merge or checkpoint; memory stays
    /// within the budget plus the table's model (or the tree's inner nodes).
    Load {
        #[command(flatten)]
        common: Common,
        /// The engine of a store this creates (`hybrid`, `btree`, `log:<map>` or
        /// `log:trie:<map>`); an existing
        /// store keeps its own, and naming another one is an error.
        #[arg(long)]
        engine: Option<String>,
        /// The file to load.
        #[arg(long)]
        from: PathBuf,
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
    /// Print records in key order: one `key<TAB>value` a line.
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
    /// (`hybrid`) or a checkpoint of the tree (`btree`); the log is empty after it.
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
            no_compact,
        } => {
            let engine = engine.as_deref().map(parse_engine).transpose()?;
            load(&common, engine, &from, !no_compact)
        }
        KvCommand::Get { common, key } => {
            let store = open(&common, true)?;
            let format = store.identity().key_format;
            let k = parse_key(format, &key)?;
            match store.get(&k)? {
                Some(v) => {
                    say(
                        &common,
                        json!({"key": show_key(format, &k), "value": show(&v)}),
                        show(&v),
                    );
                    Ok(())
                }
                None => bail!("key {key} is not in the store"),
            }
        }
        KvCommand::Put { common, key, value } => {
            let store = open(&common, false)?;
            let k = parse_key(store.identity().key_format, &key)?;
            store.put(&k, &unescape(&value)?)?;
            store.close()?;
            Ok(())
        }
        KvCommand::Del { common, key } => {
            let store = open(&common, false)?;
            let k = parse_key(store.identity().key_format, &key)?;
            store.delete(&k)?;
            store.close()?;
            Ok(())
        }
        KvCommand::Scan {
            common,
            from,
            to,
            limit,
            reverse,
        } => {
            let store = open(&common, true)?;
            let format = store.identity().key_format;
            let lo = from.map(|k| parse_key(format, &k)).transpose()?;
            let hi = to.map(|k| parse_key(format, &k)).transpose()?;
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
            let mut out = std::io::BufWriter::new(stdout.lock());
            for entry in range.take(limit.unwrap_or(usize::MAX)) {
                let (k, v) = entry?;
                let line = if common.json {
                    json!({"key": show_key(format, &k), "value": show(&v)}).to_string()
                } else {
                    format!("{}\t{}", show_key(format, &k), show(&v))
                };
                if writeln!(out, "{line}").is_err() {
                    break; // a closed pipe (`| head`) ends the scan quietly
                }
            }
            let _ = out.flush();
            Ok(())
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
                for d in &report.damage {
                    match d.block {
                        Some(b) => println!("damaged: {} block {b}: {}", d.file, d.what),
                        None => println!("damaged: {}: {}", d.file, d.what),
                    }
                }
                for u in &report.unknown {
                    println!(
                        "unknown: {u} (the store does not name it: not its file, or a leftover \
                         its next open removes; never read)"
                    );
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
        KvCommand::Torture(args) => kv_torture::run(args),
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
    let budget = lidx_bench::count::parse_count(&common.memory_budget)
        .filter(|&n| n > 0)
        .with_context(|| {
            format!(
                "--memory-budget {:?} is not a size; give bytes such as 64M or 1000000",
                common.memory_budget
            )
        })?;
    let fsync = match common.fsync.as_str() {
        "always" => FsyncPolicy::Always,
        "never" => FsyncPolicy::Never,
        ms => match ms.strip_suffix("ms").and_then(|n| n.parse::<u64>().ok()) {
            Some(n) if n > 0 => FsyncPolicy::EveryMs(n),
            _ => bail!("--fsync {ms:?} is not a policy; use always, never or <n>ms"),
        },
    };
    Ok(StoreOptions {
        fsync,
        memory_budget: usize::try_from(budget).unwrap_or(usize::MAX),
        read_only,
        recovery: common.recovery,
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
        eprintln!(
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
                "records         {} live keys in a {} byte log",
                s.table_records, s.log_disk_bytes
            );
            println!(
                "map             {} keys (deleted ones kept while open), {} bytes ({:.3} B/record)",
                s.dynamic_keys,
                s.model_bytes,
                per_key(s.model_bytes as u64)
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

/// Bytes as text: printable UTF-8 as it is, everything else (and `\`) escaped.
fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(|c| c.is_control() || c == '\\') => s.to_string(),
        _ => bytes.escape_ascii().to_string(),
    }
}

fn show_key(format: KeyFormat, key: &[u8]) -> String {
    match format {
        KeyFormat::U64 => u64::from_ordered_bytes(key).map_or_else(|| show(key), |k| k.to_string()),
        KeyFormat::Bytes => show(key),
    }
}

/// The bytes of a text argument, with the escapes [`show`] writes undone.
fn unescape(text: &str) -> anyhow::Result<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let bad = || {
            anyhow::anyhow!("{text:?} has a bad escape at byte {i}: use \\xNN, \\\\, \\t, \\n, \\r, \\' or \\\"")
        };
        let (b, n) = match bytes.get(i + 1) {
            Some(b'\\') => (b'\\', 2),
            Some(b't') => (b'\t', 2),
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b'\'') => (b'\'', 2),
            Some(b'"') => (b'"', 2),
            Some(b'x') => {
                let hex = text.get(i + 2..i + 4).ok_or_else(bad)?;
                (u8::from_str_radix(hex, 16).map_err(|_| bad())?, 4)
            }
            _ => return Err(bad()),
        };
        out.push(b);
        i += n;
    }
    Ok(out)
}

fn parse_key(format: KeyFormat, text: &str) -> anyhow::Result<Vec<u8>> {
    match format {
        KeyFormat::U64 => {
            let k: u64 = text.trim().parse().with_context(|| {
                format!("this store holds u64 keys; {text:?} is not a number from 0 to 2^64-1")
            })?;
            Ok(k.ordered_bytes())
        }
        KeyFormat::Bytes => unescape(text),
    }
}

/// The kinds of files `load` reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoadFormat {
    Sosd,
    Lines,
    Pairs(u8),
}

fn load_format(path: &Path) -> anyhow::Result<LoadFormat> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    Ok(match ext {
        "sosd" => LoadFormat::Sosd,
        "txt" => LoadFormat::Lines,
        "tsv" => LoadFormat::Pairs(b'\t'),
        "csv" => LoadFormat::Pairs(b','),
        _ => bail!(
            "{} has extension {ext:?}; lidx kv load reads .sosd (u64 keys), .txt (one key a \
             line), .tsv (key<TAB>value) and .csv (key,value)",
            path.display()
        ),
    })
}

/// Records a batch holds before it is written.
const BATCH_RECORDS: usize = 4096;

fn load(common: &Common, engine: Option<Engine>, from: &Path, compact: bool) -> anyhow::Result<()> {
    let format = load_format(from)?;
    if !from.is_file() {
        bail!("{} does not exist or is not a file", from.display());
    }
    let options = options(common, false)?;
    let key_format = if format == LoadFormat::Sosd {
        KeyFormat::U64
    } else {
        KeyFormat::Bytes
    };
    let store = if common.db.exists() {
        open(common, false)?
    } else {
        let create = CreateOptions {
            key_format,
            engine: engine.unwrap_or_default(),
            ..CreateOptions::default()
        };
        Store::create(&common.db, &create, &options)?
    };
    if let Some(engine) = engine.filter(|e| *e != store.identity().engine) {
        bail!(
            "{} is a {} store, not {}; load into a new directory to use {}",
            common.db.display(),
            store.identity().engine.label(),
            engine.label(),
            engine.label()
        );
    }
    if store.identity().key_format != key_format {
        bail!(
            "{} holds {} keys but {} has {} keys; load it into a new store",
            common.db.display(),
            store.identity().key_format.name(),
            from.display(),
            key_format.name()
        );
    }
    let start = Instant::now();
    let mut bars = Bars::default();
    let mut batch = WriteBatch::new();
    let mut records = 0u64;
    let flush = |batch: &mut WriteBatch| -> anyhow::Result<()> {
        store.write(batch)?;
        *batch = WriteBatch::new();
        Ok(())
    };
    if format == LoadFormat::Sosd {
        let keys = lidx_bench::sosd::read_sosd(from)?;
        bars.begin("loading keys", keys.len() as u64);
        for chunk in keys.chunks(BATCH_RECORDS) {
            for k in chunk {
                batch.put(&k.ordered_bytes(), b"")?;
            }
            flush(&mut batch)?;
            records += chunk.len() as u64;
            bars.advance(chunk.len() as u64);
        }
    } else {
        let file =
            std::fs::File::open(from).with_context(|| format!("cannot open {}", from.display()))?;
        let total = file.metadata().map_or(0, |m| m.len());
        bars.begin("loading records", total);
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let mut line_no = 0u64;
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .with_context(|| format!("cannot read {}", from.display()))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            bars.advance(n as u64);
            let mut text: &[u8] = &line;
            if let Some(t) = text.strip_suffix(b"\n") {
                text = t;
            }
            if let Some(t) = text.strip_suffix(b"\r") {
                text = t;
            }
            let (key, value) = match format {
                LoadFormat::Pairs(sep) => {
                    let at = text.iter().position(|&b| b == sep).with_context(|| {
                        format!(
                            "{} line {line_no} has no {:?} between key and value",
                            from.display(),
                            sep as char
                        )
                    })?;
                    (&text[..at], &text[at + 1..])
                }
                _ => (text, &b""[..]),
            };
            batch
                .put(key, value)
                .with_context(|| format!("{} line {line_no}", from.display()))?;
            records += 1;
            if batch.len() >= BATCH_RECORDS {
                flush(&mut batch)?;
            }
        }
        if !batch.is_empty() {
            flush(&mut batch)?;
        }
    }
    bars.end();
    let engine = store.identity().engine;
    let btree = engine == Engine::BTree;
    let log = matches!(engine, Engine::Log(_));
    if compact && !log {
        let bar = super::spinner(if btree {
            "checkpointing the tree"
        } else {
            "merging into the table"
        });
        store.compact()?;
        bar.finish_and_clear();
    }
    store.sync()?;
    let secs = start.elapsed().as_secs_f64();
    let s = store.stats();
    let per = |bytes: u64| per_record(&s, bytes);
    say(
        common,
        json!({
            "loaded": records,
            "from": from.display().to_string(),
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
                "loaded {records} records from {} in {secs:.2} s ({:.0} records/s); the store holds {} records, {:.1} bytes/record of log on disk, map {:.3} bytes/record",
                from.display(),
                records as f64 / secs,
                s.table_records,
                per(s.log_disk_bytes),
                per(s.model_bytes as u64),
            )
        } else {
            format!(
                "loaded {records} records from {} in {secs:.2} s ({:.0} records/s); the {} holds {} records, {:.1} bytes/record on disk, {} {:.3} bytes/record; {} {}, {} write stalls",
                from.display(),
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
