//! The `log` engine's collector and checkpoints: what keeps its disk bounded and its reopening
//! fast. One background thread per writable store, woken when a segment closes; `compact`
//! runs the same work in the caller's thread.
//!
//! **Collecting** (WiscKey §3.3's value-log garbage collection, by segment rather than from
//! the tail): each segment counts the operations written into it and how many of them its
//! keys' map entries still name, so `len * live / ops` estimates its live bytes. When the
//! log's bytes pass [`StoreOptions::log_space_ratio`] times the live bytes of all segments,
//! the closed segments with the smallest live share (below [`MOST_LIVE`]) are collected,
//! fewest live first, until the log would be back to halfway between its live bytes and the
//! limit: each operation of the segment that is still its key's newest is logged again at the
//! head ([`LogInner::relocate`]), a delete no open snapshot needs is dropped from the map, and
//! then the segment leaves the table. WiscKey collects from the tail so that its log stays
//! one contiguous range; choosing the emptiest segments instead costs the fewest bytes
//! rewritten per byte freed under skewed updates (hot keys empty their segments quickly,
//! cold ones are left in place), and the checkpoint is what lets the log have holes.
//!
//! **Checkpoints** ([`super::checkpoint`]): after a collection, and whenever the log written
//! since the last checkpoint passes both a segment and the last checkpoint's size (so that
//! writing checkpoints costs at most about as many bytes as the log does, and reopening
//! replays at most about that much). A collected segment's file is removed only after the
//! checkpoint that no longer lists it is committed in the manifest: until then a reopen
//! replays from the older checkpoint, which the segment's records are part of. A crash
//! between the commit and the removal leaves the file, which the next open removes.
//!
//! An error in the background (a full disk) stops the collector; it is returned by the next
//! `compact`, `wait_for_merges` or `close`, and every acknowledged write stays in the log.
//!
//! [`StoreOptions::log_space_ratio`]: crate::kv::StoreOptions::log_space_ratio

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::kv::manifest::{Manifest, ManifestStore};
use crate::kv::store::dir::{encode_meta, StoreMeta};
use crate::kv::wal::{scan_segment, Record, WalRecovery, SEGMENT_HEADER_BYTES};

use super::checkpoint::{checkpoint_name, CheckpointWriter};
use super::record::{decode_ops, Loc, TOMBSTONE};
use super::segment::{Segment, SegmentTable};
use super::state::{LogInner, Moved, OPS_START};

/// A segment more live than this is never collected: rewriting it frees too little.
pub(crate) const MOST_LIVE: f64 = 0.9;
/// Bytes of operations moved to the head per record (and per turn of the writers' lock).
const MOVE_BYTES: usize = 1 << 20;
/// Entries read from the map per chunk of a checkpoint (its read lock held per chunk).
const CHECKPOINT_CHUNK: usize = 16 * 1024;

/// What the collector and checkpoints keep between runs (under [`LogInner::upkeep`]).
pub(crate) struct Upkeep {
    /// The manifest, committed by each checkpoint; `None` when read-only.
    manifest: Option<ManifestStore>,
    next_generation: u64,
    /// The live checkpoint's file name and bytes.
    checkpoint: Option<(String, u64)>,
    /// [`LogInner::written`] when the live checkpoint was taken.
    written_at_checkpoint: u64,
    /// The error that stopped the collector.
    failed: Option<Error>,
}

impl Upkeep {
    pub(crate) fn new(
        manifest: Option<ManifestStore>,
        next_generation: u64,
        checkpoint: Option<(String, u64)>,
    ) -> Upkeep {
        Upkeep {
            manifest,
            next_generation,
            checkpoint,
            written_at_checkpoint: 0,
            failed: None,
        }
    }

    /// The error that stopped the collector.
    pub(crate) fn failed(&self) -> Option<&Error> {
        self.failed.as_ref()
    }
}

/// The collector thread's wake-ups.
#[derive(Default)]
pub(crate) struct Collector {
    /// (work waiting, stop).
    state: Mutex<(bool, bool)>,
    cond: Condvar,
}

impl Collector {
    /// Starts the collector of `inner` in a thread of its own.
    pub(crate) fn start(inner: &Arc<LogInner>) -> std::thread::JoinHandle<()> {
        let inner = Arc::clone(inner);
        std::thread::spawn(move || loop {
            {
                let mut st = inner.collector.state.lock();
                while !st.0 && !st.1 {
                    inner.collector.cond.wait(&mut st);
                }
                if st.1 {
                    return;
                }
                st.0 = false;
            }
            let _ = maintain(&inner, false);
        })
    }

    /// Asks the collector to look at the log (a segment closed).
    pub(crate) fn wake(&self) {
        self.state.lock().0 = true;
        self.cond.notify_one();
    }

    /// True (and no longer) when the collector was woken and has not started on it.
    pub(crate) fn take_wake(&self) -> bool {
        std::mem::take(&mut self.state.lock().0)
    }

    /// Asks the collector's thread to stop.
    pub(crate) fn stop(&self) {
        self.state.lock().1 = true;
        self.cond.notify_one();
    }
}

/// Collects and checkpoints if the log calls for it (`force`: `compact`, which collects
/// every segment the space limit would and checkpoints whatever the log since). Returns the
/// collector's error, now or from before.
pub(crate) fn maintain(inner: &LogInner, force: bool) -> Result<()> {
    let mut up = inner.upkeep.lock();
    if let Some(e) = &up.failed {
        return Err(e.clone());
    }
    let r = run(inner, &mut up, force);
    if let Err(e) = &r {
        up.failed = Some(e.clone());
    }
    r
}

fn run(inner: &LogInner, up: &mut Upkeep, force: bool) -> Result<()> {
    let start = Instant::now();
    let victims = match inner.base.options.log_space_ratio {
        Some(ratio) => choose(&inner.segments.read(), ratio, force),
        None => Vec::new(),
    };
    for victim in &victims {
        relocate(inner, victim)?;
    }
    let segment_bytes = inner.base.options.log_segment_bytes;
    let since = inner.written.load(Ordering::Relaxed) - up.written_at_checkpoint;
    let last_bytes = up.checkpoint.as_ref().map_or(0, |(_, b)| *b);
    let due = since >= segment_bytes.max(last_bytes) || (force && since > 0);
    if victims.is_empty() && !due {
        return Ok(());
    }
    if !victims.is_empty() {
        inner.remove_segments(&victims);
    }
    checkpoint(inner, up)?;
    let wal = inner.base.wal()?;
    for victim in &victims {
        wal.remove_segment(victim.first)?;
    }
    inner.release_retired();
    inner.work.done(start);
    Ok(())
}

/// The closed segments of `table` to collect (see the module docs).
fn choose(table: &SegmentTable, ratio: f64, force: bool) -> Vec<Arc<Segment>> {
    let disk = table.bytes() as f64;
    let live = table.live_bytes() as f64;
    if !force && disk <= ratio * live {
        return Vec::new();
    }
    let head = table.head().map(|h| h.id);
    // Each closed segment's bytes and live share, read once: writers change the counts while
    // the segments are sorted, and a sort's order must not move under it.
    let mut closed: Vec<(f64, f64, &Arc<Segment>)> = table
        .iter()
        .filter(|s| Some(s.id) != head)
        .map(|s| {
            let len = s.len.load(Ordering::Relaxed).max(1) as f64;
            (s.live_bytes() as f64 / len, len, s)
        })
        .filter(|&(share, _, _)| share < MOST_LIVE)
        .collect();
    closed.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Down to halfway between the live bytes and the limit (`compact`: the live bytes).
    let target = if force {
        live
    } else {
        live * (1.0 + ratio) / 2.0
    };
    let mut after = disk;
    let mut out = Vec::new();
    for (share, len, s) in closed {
        if after <= target && !(force && share < 1.0 / ratio) {
            break;
        }
        after -= len * (1.0 - share);
        out.push(Arc::clone(s));
    }
    out
}

/// Moves the operations of `victim` that are still their keys' newest to the head.
fn relocate(inner: &LogInner, victim: &Segment) -> Result<()> {
    let bytes = victim.bytes();
    let name = victim.name().to_string();
    let mut offset = SEGMENT_HEADER_BYTES as u64;
    let mut batch: Vec<Moved> = Vec::new();
    let mut batch_bytes = 0usize;
    scan_segment(&name, bytes, false, WalRecovery::TornTail, |seq, record| {
        let at = offset;
        offset += record.encoded_len() as u64;
        let Record::Batch { ops } = record else {
            return Err(Error::Corrupt {
                file: name.clone(),
                block: None,
                what: format!("record {seq} is not a log engine record"),
            });
        };
        for op in decode_ops(&name, seq, ops, inner.keys) {
            let (pos, op) = op?;
            let place = Loc {
                segment: victim.id,
                offset: at + OPS_START + pos as u64,
            }
            .pack();
            let newest = inner
                .map
                .read()
                .get(op.key)
                .is_some_and(|p| p & !TOMBSTONE == place);
            if newest {
                batch_bytes += op.key.len() + op.value.map_or(0, <[u8]>::len);
                batch.push(Moved {
                    key: op.key.to_vec(),
                    value: op.value.map(<[u8]>::to_vec),
                    place,
                    seq: op.seq,
                });
            }
        }
        if batch_bytes >= MOVE_BYTES {
            inner.relocate(&batch)?;
            batch.clear();
            batch_bytes = 0;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        inner.relocate(&batch)?;
    }
    Ok(())
}

/// Unregisters the checkpoint's sequence number when dropped.
struct Pinned<'a>(&'a LogInner, u64);

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        self.0.unregister(self.1);
    }
}

/// Writes a checkpoint of the map at the last write, commits it in the manifest and removes
/// the one before.
fn checkpoint(inner: &LogInner, up: &mut Upkeep) -> Result<()> {
    let written = inner.written.load(Ordering::Relaxed);
    let (seq, listed, next_id) = inner.at_rest()?;
    let _pinned = Pinned(inner, seq);
    // Where the records after `seq` begin: the head's bytes then.
    let boundary = listed.last().map_or((0, 0), |h| (h.id, h.len));
    let generation = up.next_generation;
    up.next_generation += 1;
    let store = inner.base.store;
    let mut out = CheckpointWriter::create(
        &inner.base.dir,
        inner.keys,
        store,
        generation,
        seq,
        next_id,
        &listed,
    )?;
    let mut from: Vec<u8> = Vec::new();
    let mut chunk = Vec::with_capacity(CHECKPOINT_CHUNK);
    loop {
        chunk.clear();
        inner.map.read().scan(&from, CHECKPOINT_CHUNK, &mut chunk);
        for (key, place) in &chunk {
            if let Some(place) = inner.place_at(key, *place, seq, boundary)? {
                out.entry(key, place)?;
            }
        }
        match chunk.last() {
            Some((key, _)) if chunk.len() == CHECKPOINT_CHUNK => {
                from.clear();
                from.extend_from_slice(key);
                from.push(0);
            }
            _ => break,
        }
    }
    // Every record an entry names, and every move of the collector, is durable before the
    // checkpoint is: under a lazy fsync policy a power loss may cut records, and the segments
    // the moves emptied go once it commits.
    inner.base.wal()?.sync()?;
    let identity = out.finish()?;
    let name = checkpoint_name(generation);
    let manifest = up
        .manifest
        .as_mut()
        .ok_or(Error::ReadOnly { op: "checkpoint" })?;
    manifest.commit(&Manifest {
        static_files: vec![name.clone()],
        wal_segments: Vec::new(),
        static_seq: seq,
        meta: encode_meta(&StoreMeta {
            next_generation: generation + 1,
            store,
            files: vec![identity],
            value_refs: Vec::new(),
        }),
    })?;
    if let Some((old, _)) = up.checkpoint.replace((name, identity.bytes)) {
        let path = inner.base.dir.join(&old);
        std::fs::remove_file(&path)
            .map_err(|e| Error::io(path.display().to_string(), "remove checkpoint", &e))?;
    }
    inner
        .checkpoint_bytes
        .store(identity.bytes, Ordering::Relaxed);
    up.written_at_checkpoint = written;
    Ok(())
}
