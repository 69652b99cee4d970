//! Paper 001's recovery time (Fig. 16) and space table (Table III) of the `log` store engine
//! over each updatable map (`lidx recovery`).
//!
//! For each map, a `log` store is created in its own directory and loaded with the dataset's
//! distinct keys, each with a `payload_size`-byte value ([`payload_of`]; paper 001 uses 200
//! bytes), in batches of 4096; then, with `updates` > 0 (issue 32), every key gets a new
//! value `updates` times over ([`versioned_payload`]), the store's collector keeping the log
//! within `space_ratio` of its live records; then it is closed. Each of `runs` reopenings
//! rebuilds the map ([`lidx::kv::Store`]'s `log` engine: the last checkpoint and the log
//! after it, or the whole log before the first checkpoint, then a bulk load) and is timed by
//! the store itself ([`lidx::kv::StoreStats::recovery_seconds`]); the record gives the median.
//! After the first reopening every key's value is read back and checked.
//!
//! Paper 001 Fig. 16 times a replay of the whole log; a store closed after a load of more
//! than a log segment has a checkpoint, so its reopening reads that instead (the record says
//! how many bytes and how many log records were replayed after it).
//!
//! Space, per paper 001 Table III's three columns, from the map's own accounting
//! (`size_in_bytes`, which counts each entry's key and its 8-byte record place):
//! `index_bytes` is the structure alone (the map's bytes less 16 per key: models, inner nodes,
//! gaps and slack), `index_keys_bytes` adds the keys (8 per key), and
//! `index_keys_values_bytes` adds the values (`payload_size` per key) as paper 001 counts them
//! in memory; `log_bytes` is what the store keeps on disk (keys, values, framing).

use std::path::Path;
use std::time::Instant;

use lidx::kv::FsyncPolicy;
use lidx::kv::{
    CreateOptions, Engine, KeyFormat, LogKeys, LogSpec, Store, StoreOptions, WriteBatch,
};
use lidx::mem::MapSpec;

use crate::dataset::Dataset;
use crate::disk_workload::{payload_of, versioned_payload};
use crate::error::{BenchError, Result};
use crate::records::RecoveryRecord;
use crate::report::Machine;
use crate::runner::{check_positive, median, Progress};

/// Records per batch while a store is loaded.
const LOAD_BATCH: usize = 4096;

/// Runs every map of `maps` on `dataset`, each store in a directory of its own that this run
/// creates under `dir` (`log-<map>.<random>`, made by `tempfile` so it never is an existing
/// one) and removes afterwards; nothing else under `dir` is touched (issue 30, class 1: a
/// store refused because `dir/log-<map>` held a user's files was then deleted).
#[allow(clippy::too_many_arguments)]
pub fn run(
    dataset: &Dataset,
    maps: &[MapSpec],
    dir: &Path,
    payload_size: usize,
    updates: u64,
    space_ratio: Option<f64>,
    runs: usize,
    progress: &mut dyn Progress,
) -> Result<Vec<RecoveryRecord>> {
    check_positive(&[("run count", runs)])?;
    let mut keys = dataset.keys.clone();
    keys.dedup();
    let machine = Machine::detect();
    maps.iter()
        .map(|map| {
            let label = map.label();
            let own = tempfile::Builder::new()
                .prefix(&format!("log-{}.", label.replace([':', '='], "_")))
                .tempdir_in(dir)
                .map_err(|e| BenchError::Io {
                    path: dir.to_path_buf(),
                    source: e,
                })?;
            let path = own.path().join("store");
            let shape = Shape {
                payload_size,
                updates,
                space_ratio,
                runs,
            };
            let record = run_map(dataset, &keys, map, &path, shape, progress);
            let removed = own.close();
            let mut record = record?;
            removed.map_err(|e| BenchError::Io { path, source: e })?;
            record.cpu = machine.cpu.clone();
            record.cores = machine.cores;
            Ok(record)
        })
        .collect()
}

/// What each map's run does.
#[derive(Clone, Copy)]
struct Shape {
    payload_size: usize,
    updates: u64,
    space_ratio: Option<f64>,
    runs: usize,
}

fn run_map(
    dataset: &Dataset,
    keys: &[u64],
    map: &MapSpec,
    path: &Path,
    shape: Shape,
    progress: &mut dyn Progress,
) -> Result<RecoveryRecord> {
    let Shape {
        payload_size,
        updates,
        space_ratio,
        runs,
    } = shape;
    let label = map.label();
    let create = CreateOptions {
        engine: Engine::Log(LogSpec {
            map: *map,
            keys: LogKeys::U64,
        }),
        key_format: KeyFormat::U64,
        ..CreateOptions::default()
    };
    let options = StoreOptions {
        fsync: FsyncPolicy::Never,
        log_space_ratio: space_ratio,
        ..StoreOptions::default()
    };
    progress.begin(&format!("load log:{label}"), keys.len() as u64);
    let start = Instant::now();
    let store = Store::create(path, &create, &options)?;
    let mut payload = vec![0u8; payload_size];
    for chunk in keys.chunks(LOAD_BATCH) {
        let mut batch = WriteBatch::new();
        for &k in chunk {
            payload_of(k, &mut payload);
            batch.put(&k.to_be_bytes(), &payload)?;
        }
        store.write(&batch)?;
        progress.advance(chunk.len() as u64);
    }
    let load_s = start.elapsed().as_secs_f64();
    progress.end();
    let start = Instant::now();
    if updates > 0 {
        progress.begin(&format!("update log:{label}"), updates * keys.len() as u64);
    }
    for round in 1..=updates {
        for chunk in keys.chunks(LOAD_BATCH) {
            let mut batch = WriteBatch::new();
            for &k in chunk {
                versioned_payload(k, round, &mut payload);
                batch.put(&k.to_be_bytes(), &payload)?;
            }
            store.write(&batch)?;
            progress.advance(chunk.len() as u64);
        }
    }
    store.wait_for_merges()?;
    let update_s = start.elapsed().as_secs_f64();
    let updated = store.stats();
    store.close()?;
    if updates > 0 {
        progress.end();
    }

    progress.begin(&format!("recover log:{label}"), runs as u64);
    let mut times = Vec::with_capacity(runs);
    let mut replayed = Vec::with_capacity(runs);
    let mut figures = None;
    for run in 0..runs {
        let store = Store::open(path, &options)?;
        let stats = store.stats();
        times.push(stats.recovery_seconds);
        replayed.push(stats.recovered_records);
        if stats.table_records != keys.len() as u64 {
            return Err(wrong(
                &label,
                0,
                format!(
                    "{} records recovered of {}",
                    stats.table_records,
                    keys.len()
                ),
            ));
        }
        if run == 0 {
            for &k in keys {
                versioned_payload(k, updates, &mut payload);
                let got = store.get(&k.to_be_bytes())?;
                if got.as_deref() != Some(payload.as_slice()) {
                    return Err(wrong(&label, k, format!("{got:?} after recovery")));
                }
            }
            figures = Some((
                stats.model_bytes as u64,
                stats.log_disk_bytes,
                stats.table_disk_bytes,
            ));
        }
        store.close()?;
        progress.advance(1);
    }
    progress.end();
    times.sort_by(f64::total_cmp);
    let (map_bytes, log_bytes, checkpoint_bytes) = figures.unwrap_or_default();
    replayed.sort_unstable();
    let n = keys.len() as u64;
    let recovery_s = median(&times);
    Ok(RecoveryRecord {
        schema: crate::records::RecordKind::Recovery.schema(),
        command: crate::records::command_line(),
        dataset: dataset.name.clone(),
        n,
        map: label,
        payload_size: payload_size as u64,
        load_s,
        recovery_s,
        recovery_s_min: times[0],
        recovery_s_max: times[times.len() - 1],
        records_per_s: if recovery_s > 0.0 {
            n as f64 / recovery_s
        } else {
            0.0
        },
        index_bytes: map_bytes.saturating_sub(16 * n),
        index_keys_bytes: map_bytes.saturating_sub(8 * n),
        index_keys_values_bytes: map_bytes.saturating_sub(8 * n) + n * payload_size as u64,
        log_bytes,
        updates,
        log_space_ratio: space_ratio,
        update_s,
        log_live_bytes: updated.log_live_bytes,
        user_bytes: n * (8 + payload_size as u64),
        relocated_bytes: updated.log_relocated_bytes,
        checkpoint_bytes,
        replayed_records: replayed[replayed.len() / 2],
        runs: runs as u64,
        cpu: String::new(),
        cores: 0,
        lidx_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

fn wrong(label: &str, key: u64, what: String) -> BenchError {
    BenchError::WrongResult {
        index: format!("log:{label}"),
        op: "recovery",
        key,
        what,
    }
}
