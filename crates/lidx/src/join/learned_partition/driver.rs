//! The learned route's driver: sizes the memory budget, samples and partitions both tables
//! ([`prepare`]), plans the bucket ranges of the threads and joins them ([`run`]).

use std::time::Instant;

use super::bucket_join::{join_bucket, Emit, JoinScratch};
use super::partition::{arena_bytes_per_record, partition, partition_overhead, Partitioned};
use super::reader::{BucketReader, MAX_WINDOW_BLOCKS};
use super::sample::{sample_keys, BucketMap, LearnedPartitionParams, RecordVisitor};
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::join::output::OutputSpec;
use crate::join::scratch::{remove_scratch, scratch_name};
use crate::join::sides::Sides;
use crate::join::table::{Table, TableKey, WRITE_BLOCKS};
use crate::join::table_index::IndexLoad;
use crate::join::unsorted_btree::DEFAULT_MEMORY;
use crate::key::Key;

fn scan_records<K: TableKey>(table: &Table<K>, f: &mut RecordVisitor<'_>) -> Result<()> {
    let mut scan = table.scan(0..table.len())?;
    while scan.key().is_some() {
        f(scan.position(), scan.record())?;
        scan.advance()?;
    }
    Ok(())
}

fn too_little_memory(memory: usize, what: &str) -> Error {
    Error::InvalidParameter {
        name: "memory",
        value: format!("{memory} bytes ({what})"),
        expected: "a budget above the sample, the model, the run directories and the I/O \
                   buffers of the learned route (a few MiB for small tables)",
    }
}

/// Records the partition arena of a table of `n` records can buffer within `avail` bytes,
/// keeping room for the run directories it will write.
fn arena_records(avail: usize, n: u64, record_size: usize, buckets: usize) -> Option<usize> {
    let per = arena_bytes_per_record(record_size);
    let dir_per_run = (buckets + 1) * 8;
    let runs = (n as usize * per).div_ceil(avail.max(1)) + 1;
    let arena = avail.checked_sub(runs * dir_per_run)?;
    let records = (arena / per).min(n.max(1) as usize);
    (records > 0).then_some(records)
}

/// Splits buckets `0..weights.len()` into `parts` contiguous ranges of about equal weight.
fn split_ranges(weights: &[u64], parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: u64 = weights.iter().sum();
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut acc = 0u64;
    for (b, w) in weights.iter().enumerate() {
        acc += w;
        let done = ranges.len() as u64 + 1;
        if ranges.len() + 1 < parts && acc * parts as u64 >= total * done {
            ranges.push(start..b + 1);
            start = b + 1;
        }
    }
    ranges.push(start..weights.len());
    while ranges.len() < parts {
        ranges.push(weights.len()..weights.len());
    }
    ranges
}

/// Both tables partitioned: the index of the learned route.
struct Prepared {
    parts: (Partitioned, Partitioned),
    /// Bytes held in memory: the map and both directories.
    held: usize,
}

/// Samples both tables, fits the map and partitions both into the files `names` of `storage`
/// within `memory` bytes.
fn prepare<K: TableKey>(
    storage: &Storage,
    (lt, rt): (&Table<K>, &Table<K>),
    names: &(String, String),
    memory: usize,
    params: &LearnedPartitionParams,
) -> Result<Prepared> {
    params.check()?;
    let bs = storage.block_size();
    let scan_bytes = lt.scan_memory().max(rt.scan_memory());
    let mut sample = Vec::new();
    sample_keys::<K>(params, 0, lt.len(), &mut sample, |f| scan_records(lt, f))?;
    sample_keys::<K>(params, 1, rt.len(), &mut sample, |f| scan_records(rt, f))?;
    if sample.capacity() * K::SIZE + scan_bytes > memory {
        return Err(too_little_memory(memory, "the sample does not fit"));
    }
    let larger = if lt.len() >= rt.len() { lt } else { rt };
    let per_bucket = (larger.records_per_block() * params.bucket_blocks) as u64;
    let buckets = larger.len().div_ceil(per_bucket).clamp(1, u32::MAX as u64) as usize;
    let map = BucketMap::fit(&mut sample, buckets, params.eps)?;
    drop(sample);
    let mut held = map.memory_bytes();
    let mut parts = Vec::with_capacity(2);
    for (table, name) in [(lt, &names.0), (rt, &names.1)] {
        let records = memory
            .checked_sub(held + scan_bytes + partition_overhead(bs))
            .and_then(|avail| arena_records(avail, table.len(), table.record_size(), buckets))
            .ok_or_else(|| too_little_memory(memory, "no room for a partition arena"))?;
        let part = partition::<K>(
            storage.create(name)?,
            &map,
            table.record_size(),
            records,
            |f| scan_records(table, f),
        )?;
        held += part.memory_bytes();
        parts.push(part);
    }
    let right = parts.pop().expect("two tables");
    let left = parts.pop().expect("two tables");
    // The map is no longer needed: bucket ids are positions in the directories.
    held -= map.memory_bytes();
    Ok(Prepared {
        parts: (left, right),
        held,
    })
}

/// How the join phase spends the budget.
struct Plan {
    window: usize,
    cap: usize,
    output_blocks: usize,
    ranges: Vec<std::ops::Range<usize>>,
}

impl Prepared {
    fn plan<K: Key>(&self, threads: usize, memory: usize, block_size: usize) -> Result<Plan> {
        let (lp, rp) = (&self.parts.0, &self.parts.1);
        let per_thread = memory.saturating_sub(self.held) / threads.max(1);
        let runs = lp.runs() + rp.runs();
        let window = (per_thread / 4 / (runs.max(1) * block_size)).clamp(1, MAX_WINDOW_BLOCKS);
        let readers = BucketReader::memory_bytes_for(runs, window, block_size);
        let per_record =
            lp.record_size().max(rp.record_size()) + std::mem::size_of::<(K, u32)>() + K::SIZE;
        // Each thread's output writer holds two buffers; a tight budget gets smaller ones.
        let output_blocks = (per_thread / 8 / block_size).clamp(1, WRITE_BLOCKS);
        let output = 2 * output_blocks * block_size;
        let cap = per_thread.saturating_sub(readers + output) / per_record;
        if cap < 2 {
            return Err(too_little_memory(memory, "no room to hold a bucket pair"));
        }
        let weights: Vec<u64> = (0..lp.buckets())
            .map(|b| lp.bucket_len(b) + rp.bucket_len(b))
            .collect();
        Ok(Plan {
            window,
            cap,
            output_blocks,
            ranges: split_ranges(&weights, threads.max(1)),
        })
    }

    /// Joins the bucket pairs of part `t` of `plan`.
    fn join_part<K: Key>(&self, plan: &Plan, t: usize, emit: &mut Emit<'_, K>) -> Result<()> {
        let mut a = BucketReader::new(&self.parts.0, plan.window);
        let mut b = BucketReader::new(&self.parts.1, plan.window);
        let mut scratch = JoinScratch::default();
        for bucket in plan.ranges[t].clone() {
            join_bucket(&mut a, &mut b, bucket, plan.cap, &mut scratch, emit)?;
        }
        Ok(())
    }
}

/// Runs the learned route for [`crate::join::join`]: samples, fits and partitions both tables
/// (timed as the index; the bucket files go in the join's scratch storage and are removed
/// afterwards), calls `before_join`, then joins the bucket pairs on `threads` threads, each a contiguous
/// range of pairs written as its own output part, so the output is in key order. `memory`
/// (default [`DEFAULT_MEMORY`]) bounds the sample, the directories and every buffer.
pub(crate) fn run<K: TableKey>(
    sides: &Sides<'_, K>,
    threads: usize,
    memory: Option<u64>,
    before_join: &mut dyn FnMut(),
) -> Result<(IndexLoad, (u64, u64))> {
    let (lt, rt) = if sides.outer_is_left {
        (sides.outer, sides.inner)
    } else {
        (sides.inner, sides.outer)
    };
    let memory = memory.unwrap_or(DEFAULT_MEMORY) as usize;
    let storage = sides.out.scratch;
    let names = (scratch_name("left-buckets"), scratch_name("right-buckets"));
    let result = (|| {
        let started = Instant::now();
        let prepared = prepare(
            storage,
            (lt, rt),
            &names,
            memory,
            &LearnedPartitionParams::default(),
        )?;
        let load = IndexLoad {
            rebuilt: None,
            loaded: false,
            time: started.elapsed(),
            memory_bytes: prepared.held,
            file_bytes: prepared.parts.0.disk_bytes() + prepared.parts.1.disk_bytes(),
            unsaved: false,
        };
        before_join();
        let plan = prepared.plan::<K>(threads, memory, storage.block_size())?;
        let sides = Sides {
            out: OutputSpec {
                write_blocks: plan.output_blocks,
                ..sides.out
            },
            ..*sides
        };
        let out = sides.write(plan.ranges.len(), |t, w| {
            prepared.join_part(&plan, t, &mut |k: &K, l: &[u8], r: &[u8]| {
                w.push(k, &l[K::SIZE..], &r[K::SIZE..])
            })
        })?;
        Ok((load, out))
    })();
    remove_scratch(storage, &names.0);
    remove_scratch(storage, &names.1);
    result
}
