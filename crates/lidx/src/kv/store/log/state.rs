//! The `log` engine: paper 001 §III's end-to-end setting (Viper) as a `Store` engine. Every
//! record is appended to a log on disk; an updatable in-memory map, chosen by name
//! ([`crate::mem::MapSpec`]: any of `lidx bench`'s maps), holds each key's newest record's place.
//!
//! **Writes** are the store's write-ahead log records ([`crate::kv::wal`]: checksummed,
//! fsynced as [`StoreOptions::fsync`] says), with this engine's body ([`super::record`]).
//! Writers take turns for the append and the map update together, as the `btree` engine's do:
//! each record's `prev` must name the record before it on its key. A write is acknowledged
//! after its record is in the log and its places in the map.
//!
//! **Reads** find the place in the map and read the operation there from the log's segments,
//! which are memory-mapped: as in Viper, where records sit in persistent memory, a read is a map
//! lookup and a copy, no system call. Every operation read is checked against its own crc32c.
//!
//! **Snapshots** pin a sequence number and follow each key's `prev` chain back to the newest
//! record at or before it ([`super::read`]). A delete made while a snapshot is open keeps its
//! key in the map (marked [`TOMBSTONE`]), so that snapshot still finds the older value; the
//! entry is dropped once every open snapshot is at or past the delete, and reopening drops
//! them all. A checkpoint reads the map as a snapshot at its sequence number does.
//!
//! **Reopening** reads the last checkpoint ([`super::checkpoint`]: each live key's place, in
//! key order) and replays the log after it; the newest place of each key the replay touches
//! is kept in a hash map and merged with the checkpoint's, and the chosen map is bulk-loaded
//! from them in key order, which is how each index is fastest to build (ALEX, LIPP and PGM
//! have bulk loads; inserting one by one would measure their inserts, not a recovery). A store
//! without a checkpoint yet replays its whole log, as paper 001 Fig. 16's recovery does. The
//! time is in [`crate::kv::StoreStats::recovery_seconds`].
//!
//! **Keys** ([`crate::kv::LogSpec`]): a `log:<map>` store takes exactly 8 bytes (the paper's `u64`
//! keys, big-endian so that byte order is numeric order; a put of another length is
//! [`Error::SizeLimit`], a get of one `None`) and its map is the named one. A `log:trie:<map>`
//! store takes keys of any length the store does (1 to 4096 bytes) and its map is a
//! [`crate::mem::TrieMap`] of the named maps, one per 8-byte slice the keys share
//! (Masstree's layering; paper 001 §III has 8-byte keys only). [`super::map`] hides which.
//!
//! **Space** is reclaimed by the collector ([`super::collect`]): segments are closed at
//! [`StoreOptions::log_segment_bytes`], and once the log outgrows
//! [`StoreOptions::log_space_ratio`] times its live bytes, the segments with the fewest live
//! operations have those rewritten at the head and are removed. Paper 001 §III never
//! reclaims (every update and delete stays on disk in its runs); the collector is WiscKey's
//! value-log garbage collection, choosing segments by how little of them is live rather than
//! oldest first. A delete drops its key's map entry unless a snapshot may still need the
//! value before it (see **Snapshots**).

use std::collections::hash_map::{Entry, HashMap};
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::kv::store::batch::{decode_ops as decode_batch, BatchOp};
use crate::kv::store::dir::WAL_DIR;
use crate::kv::store::engine::Base;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::{CreateOptions, Engine, LogKeys, LogSpec, StoreOptions};
use crate::kv::store::stats::Work;
use crate::kv::wal::{
    check_owner, list_segments, segment_path, Record, Seq, Wal, FRAME_BYTES, SEGMENT_HEADER_BYTES,
};

use super::checkpoint::{self, is_checkpoint_file, Checkpoint, Listed};
use super::collect::{Collector, Upkeep};
use super::map::{check_key, check_spec, LogMap, Newest};
use super::record::{decode_ops, encode_op, Loc, LogOp, MAX_SEGMENTS, NO_LOC, TOMBSTONE};
use super::segment::{count_live, with_op, Retired, Segment, SegmentTable};

/// Bytes from a record's start to its first operation: the frame, then the body's kind and
/// key length (a batch has no key).
pub(crate) const OPS_START: u64 = (FRAME_BYTES + 5) as u64;

pub(crate) struct Writer {
    /// Where the next record goes in the last segment.
    offset: u64,
    /// The error that stopped writes (a record logged but not in the map).
    failed: Option<Error>,
    body: Vec<u8>,
}

pub(crate) struct LogInner {
    /// Directory, identity, options, log.
    pub(super) base: Base,
    /// The keys the store takes (from its identity).
    pub(crate) keys: LogKeys,
    pub(crate) map: RwLock<LogMap>,
    /// The segments places name. Taken after `map` when both are held.
    pub(crate) segments: RwLock<Arc<SegmentTable>>,
    writer: Mutex<Writer>,
    /// The last write in the map; changed under the map's write lock.
    pub(crate) applied: AtomicU64,
    /// Keys whose newest record is a put.
    pub(crate) live: AtomicU64,
    /// Bytes of those keys.
    pub(crate) live_key_bytes: AtomicU64,
    /// The sequence numbers of the open snapshots (and how many at each): a delete keeps its
    /// map entry while one older than it is open. Changed under the map's lock (read for a
    /// new snapshot, write for a delete), so that the two agree.
    pub(crate) snapshots: Mutex<BTreeMap<Seq, usize>>,
    /// Segments removed while older snapshots were open ([`Retired`]).
    pub(crate) retired: Retired,
    /// Deletes whose map entries were kept because a snapshot was open: each key, its entry
    /// and the delete's sequence number, in sequence order. Once every open snapshot is at
    /// or past a delete, its entry is dropped if still as the delete left it.
    kept: Mutex<VecDeque<(Vec<u8>, u64, Seq)>>,
    /// Bytes appended to the log since the store opened.
    pub(crate) written: AtomicU64,
    /// The collector's and checkpoints' state, one at a time.
    pub(super) upkeep: Mutex<Upkeep>,
    /// Wakes the collector's thread.
    pub(super) collector: Collector,
    /// Collector passes and checkpoints done.
    pub(super) work: Work,
    /// Bytes the collector rewrote at the head.
    pub(super) relocated: AtomicU64,
    /// Bytes of the live checkpoint (0 before the first).
    pub(super) checkpoint_bytes: AtomicU64,
    /// The log passed its space limit by two segments when the last segment closed: the
    /// collector is behind, and writers collect before they write ([`LogInner::write`]).
    over: AtomicBool,
}

/// An open `log` engine.
pub(crate) struct LogEngine {
    pub(super) inner: Arc<LogInner>,
    /// The collector's thread (none when read-only); stopped on close or drop.
    pub(super) thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// One of the log's segments as an open finds it.
struct Present {
    first: Seq,
    path: PathBuf,
    id: usize,
    /// Operations in it (from the checkpoint, then counted by the replay).
    ops: u64,
    /// Where the next replayed record starts in it.
    offset: u64,
}

/// What the `log` engine's log is replayed into: each key's newest place.
pub(crate) struct Replay {
    spec: LogSpec,
    segments: Vec<Present>,
    /// The first sequence number of each segment, for the replay to find a record's.
    firsts: Vec<Seq>,
    newest: Newest,
    /// The checkpoint the replay starts from, and its name and bytes.
    checkpoint: Option<(Checkpoint, String, u64)>,
    log_name: String,
}

/// A key and its new value (`None`: deleted).
type KeyOp<'a> = (&'a [u8], Option<&'a [u8]>);

/// The operations of a store record, the last one on a key winning, keys checked for `keys`.
fn store_ops<'a>(record: &Record<'a>, keys: LogKeys) -> Result<Vec<KeyOp<'a>>> {
    let checked = |key: &'a [u8]| check_key(keys, key).map(|()| key);
    match *record {
        Record::Put { key, value } => Ok(vec![(checked(key)?, Some(value))]),
        Record::Delete { key } => Ok(vec![(checked(key)?, None)]),
        Record::Batch { ops } => {
            let mut last: Vec<KeyOp<'a>> = Vec::new();
            // Where each key is in `last`: a load's batch holds thousands of keys.
            let mut at: HashMap<&'a [u8], usize> = HashMap::new();
            for op in decode_batch("batch", ops) {
                let (key, value) = match op? {
                    BatchOp::Put(k, v) => (checked(k)?, Some(v)),
                    BatchOp::Delete(k) => (checked(k)?, None),
                };
                match at.entry(key) {
                    Entry::Occupied(e) => last[*e.get()].1 = value,
                    Entry::Vacant(e) => {
                        e.insert(last.len());
                        last.push((key, value));
                    }
                }
            }
            Ok(last)
        }
    }
}

/// An operation the collector moves to the head: the key's newest, at `place`, of record
/// `seq`, with its value (`None`: a delete).
pub(crate) struct Moved {
    pub(crate) key: Vec<u8>,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) place: u64,
    pub(crate) seq: Seq,
}

/// One operation to log, with what the map held for its key.
struct ToLog<'a> {
    key: &'a [u8],
    value: Option<&'a [u8]>,
    /// The map's entry for the key before it, tombstone bit included.
    old: Option<u64>,
    /// Moved by the collector: a delete keeps its entry.
    moved: bool,
}

/// The segments of the log in `wal_dir` with their ids (see [`super::segment`]): positions
/// without a checkpoint; with one, the ids it lists, then the next ids in order for the
/// segments made after it. A segment older than a listed one that the checkpoint does not
/// list was being removed by the collector when the store stopped: it is removed now (none
/// of its records is needed: the checkpoint holds everything up to its `seq`), unless
/// `read_only`. A listed segment that is missing is [`Error::Corrupt`].
fn present_segments(
    wal_dir: &Path,
    checkpoint: Option<&Checkpoint>,
    owner: u128,
    read_only: bool,
) -> Result<Vec<Present>> {
    let found = list_segments(wal_dir)?;
    let header = SEGMENT_HEADER_BYTES as u64;
    let Some(c) = checkpoint else {
        return Ok(found
            .into_iter()
            .enumerate()
            .map(|(id, (first, path))| Present {
                first,
                path,
                id,
                ops: 0,
                offset: header,
            })
            .collect());
    };
    let listed: HashMap<Seq, _> = c.segments.iter().map(|l| (l.first, *l)).collect();
    let newest_listed = c.segments.last().map(|l| l.first);
    let mut next_id = c.next_id;
    let mut out = Vec::with_capacity(found.len());
    for (first, path) in found {
        if let Some(l) = listed.get(&first) {
            out.push(Present {
                first,
                path,
                id: l.id,
                ops: l.ops,
                offset: l.len,
            });
        } else if newest_listed.is_none_or(|n| first > n) {
            if next_id >= MAX_SEGMENTS {
                return Err(Error::Corrupt {
                    file: path.display().to_string(),
                    block: None,
                    what: format!("a segment past the {MAX_SEGMENTS} a store can have"),
                });
            }
            out.push(Present {
                first,
                path,
                id: next_id,
                ops: 0,
                offset: header,
            });
            next_id += 1;
        } else if !read_only {
            let name = path.display().to_string();
            let mut head = Vec::with_capacity(SEGMENT_HEADER_BYTES);
            std::fs::File::open(&path)
                .and_then(|f| f.take(SEGMENT_HEADER_BYTES as u64).read_to_end(&mut head))
                .map_err(|e| Error::io(&name, "read segment", &e))?;
            // Only the store's own segment is removed: another's is reported, not touched.
            check_owner(&name, &head, owner)?;
            std::fs::remove_file(&path).map_err(|e| Error::io(&name, "remove segment", &e))?;
        }
    }
    if let Some(l) = c
        .segments
        .iter()
        .find(|l| !out.iter().any(|p| p.first == l.first))
    {
        return Err(Error::Corrupt {
            file: segment_path(wal_dir, l.first).display().to_string(),
            block: None,
            what: "the segment is missing, and the checkpoint names records in it: it was \
                   removed outside lidx"
                .to_string(),
        });
    }
    Ok(out)
}

/// `kv check` of a `log` store's checkpoint `name` (recorded in the manifest as `recorded`):
/// reads it, maps the segments it and the log name, and reads every entry's operation
/// through its place. Returns the entries; the first damage found is the error.
pub(crate) fn check_checkpoint(
    dir: &Path,
    name: &str,
    recorded: &crate::kv::store::dir::FileIdentity,
    store: u128,
    keys: LogKeys,
) -> Result<u64> {
    let c = checkpoint::read(&dir.join(name), recorded, store, keys)?;
    let present = present_segments(&dir.join(WAL_DIR), Some(&c), store, true)?;
    let mut segments = Vec::with_capacity(present.len());
    for p in &present {
        segments.push(Arc::new(Segment::open(&p.path, p.id, p.first, store, 0)?));
    }
    let table = SegmentTable::new(segments);
    let check = |key: &[u8], place: u64| with_op(&table, None, keys, place, key, |_| ());
    match &c.entries {
        checkpoint::Entries::U64(v) => {
            for (k, p) in v {
                check(&k.to_be_bytes(), *p)?;
            }
            Ok(v.len() as u64)
        }
        checkpoint::Entries::Bytes(v) => {
            for (k, p) in v {
                check(k, *p)?;
            }
            Ok(v.len() as u64)
        }
    }
}

impl Recover for LogEngine {
    const FILES: &'static str = "checkpoints";
    const LEFTOVERS: Option<fn(&str) -> bool> = Some(is_checkpoint_file);
    type Replay = Replay;

    fn check_new(identity: &CreateOptions, _: &StoreOptions) -> Result<()> {
        match identity.engine {
            Engine::Log(spec) => check_spec(spec),
            _ => Ok(()),
        }
    }

    fn load(dir: &Path, options: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        let Engine::Log(spec) = opened.identity.engine else {
            return Err(Error::InvalidParameter {
                name: "engine",
                value: opened.identity.engine.label(),
                expected: "a log store",
            });
        };
        let checkpoint = match &opened.file {
            Some((name, recorded)) => {
                let c = checkpoint::read(&dir.join(name), recorded, opened.store, spec.keys)?;
                Some((c, name.clone(), recorded.bytes))
            }
            None => None,
        };
        let wal_dir = dir.join(WAL_DIR);
        let segments = present_segments(
            &wal_dir,
            checkpoint.as_ref().map(|(c, ..)| c),
            opened.store,
            options.read_only,
        )?;
        let covered = checkpoint.as_ref().map_or(0, |(c, ..)| c.seq);
        let replay = Replay {
            spec,
            firsts: segments.iter().map(|s| s.first).collect(),
            segments,
            newest: Newest::new(spec.keys),
            checkpoint,
            log_name: wal_dir.display().to_string(),
        };
        Ok((replay, covered))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        let at = state
            .firsts
            .partition_point(|&f| f <= seq)
            .saturating_sub(1);
        let Some(segment) = state.segments.get_mut(at) else {
            return Err(Error::Corrupt {
                file: state.log_name.clone(),
                block: None,
                what: format!("record {seq} is in no segment"),
            });
        };
        let offset = segment.offset;
        segment.offset += record.encoded_len() as u64;
        let Record::Batch { ops } = record else {
            return Err(Error::Corrupt {
                file: state.log_name.clone(),
                block: None,
                what: format!("record {seq} is not a log engine record"),
            });
        };
        for op in decode_ops(&state.log_name, seq, ops, state.spec.keys) {
            let (pos, op) = op?;
            segment.ops += 1;
            let place = Loc {
                segment: segment.id,
                offset: offset + OPS_START + pos as u64,
            }
            .pack();
            state.newest.set(op.key, place, op.value.is_some())?;
        }
        Ok(())
    }

    /// Builds the map from each key's newest place and maps the log's segments.
    fn finish(state: Replay, r: Recovered) -> Result<LogEngine> {
        let Replay {
            spec,
            segments: present,
            newest,
            checkpoint,
            ..
        } = state;
        let (base, checkpoint_name) = match checkpoint {
            Some((c, name, bytes)) => (Some(c.entries), Some((name, bytes))),
            None => (None, None),
        };
        let entries = newest.merge(base);
        let mut segments = Vec::with_capacity(present.len());
        // A recovery mode that cut the log set the segments after the cut aside: none of
        // their records was replayed, and the checkpoint names none (its records end before
        // any cut, which replay refuses at or below the checkpoint's `seq`).
        for p in present.iter().filter(|p| p.path.exists()) {
            segments.push(Arc::new(Segment::open(
                &p.path,
                p.id,
                p.first,
                r.base.store,
                p.ops,
            )?));
        }
        let table = SegmentTable::new(segments);
        let mut missing = None;
        entries.for_each_place(|place| {
            if table.get(Loc::unpack(place).segment).is_none() {
                missing.get_or_insert(place);
            }
            count_live(&table, place, true);
        });
        if let Some(place) = missing {
            return Err(Error::Corrupt {
                file: r.base.dir.display().to_string(),
                block: None,
                what: format!(
                    "the checkpoint names segment {} of the log, which the store does not have",
                    Loc::unpack(place).segment
                ),
            });
        }
        let (live, live_key_bytes) = entries.live();
        let map = entries.build(spec)?;
        let offset = table.head().map_or(SEGMENT_HEADER_BYTES as u64, |s| {
            s.len.load(Ordering::Relaxed)
        });
        let read_only = r.manifest.is_none();
        let checkpoint_bytes = checkpoint_name.as_ref().map_or(0, |(_, b)| *b);
        let upkeep = Upkeep::new(r.manifest, r.next_generation, checkpoint_name);
        let inner = Arc::new(LogInner {
            keys: spec.keys,
            map: RwLock::new(map),
            segments: RwLock::new(Arc::new(table)),
            writer: Mutex::new(Writer {
                offset,
                failed: None,
                body: Vec::new(),
            }),
            applied: AtomicU64::new(r.last),
            live: AtomicU64::new(live),
            live_key_bytes: AtomicU64::new(live_key_bytes),
            snapshots: Mutex::new(BTreeMap::new()),
            retired: Retired::default(),
            kept: Mutex::new(VecDeque::new()),
            written: AtomicU64::new(0),
            upkeep: Mutex::new(upkeep),
            collector: Collector::default(),
            work: Work::default(),
            relocated: AtomicU64::new(0),
            checkpoint_bytes: AtomicU64::new(checkpoint_bytes),
            over: AtomicBool::new(false),
            base: r.base.recovered(),
        });
        let thread = (!read_only).then(|| Collector::start(&inner));
        Ok(LogEngine {
            inner,
            thread: Mutex::new(thread),
        })
    }
}

impl LogInner {
    /// The value of `key` now.
    pub(super) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let map = self.map.read();
        let place = match map.get(key) {
            Some(place) if place & TOMBSTONE == 0 => place,
            _ => return Ok(None),
        };
        // Taken before the map is let go: the collector cannot move the record and remove its
        // segment in between.
        let segments = self.segments.read();
        drop(map);
        with_op(&segments, None, self.keys, place, key, |op| {
            op.value.map(<[u8]>::to_vec)
        })
    }

    /// Logs `record` and puts its places in the map. When the collector has fallen behind
    /// (the log two segments past its space limit), the writer waits for its pass and runs
    /// one itself first: writes stall rather than let the log grow without bound (unless the
    /// collector failed: then writes go on, and its error is the next `compact`'s).
    pub(super) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.base.wal()?;
        if self.over.load(Ordering::Relaxed) {
            let start = Instant::now();
            // A collector that failed (a full disk) stops collecting and stalls no one: the
            // write goes on, and `compact`, `wait_for_merges` and `close` return the error.
            let collected = super::collect::maintain(self, false).is_ok();
            self.over
                .store(collected && self.over_limit(), Ordering::Relaxed);
            self.work.stalled(start);
        }
        let ops = store_ops(&record, self.keys)?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        let to_log: Vec<ToLog<'_>> = {
            let map = self.map.read();
            ops.iter()
                .map(|&(key, value)| ToLog {
                    key,
                    value,
                    old: map.get(key),
                    moved: false,
                })
                .collect()
        };
        self.log(wal, &mut st, &to_log).map(|_| ())
    }

    /// The collector's move of `moved` (operations of one segment) to the head: each that is
    /// still its key's newest is logged again, with the same value and its old place as
    /// `prev`; a delete no open snapshot needs has its map entry dropped instead. Returns the
    /// bytes of the operations logged.
    pub(crate) fn relocate(&self, moved: &[Moved]) -> Result<u64> {
        let wal = self.base.wal()?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        let oldest = self.snapshots.lock().keys().next().copied();
        let mut drop_entries: Vec<&Moved> = Vec::new();
        let to_log: Vec<ToLog<'_>> = {
            let map = self.map.read();
            let mut kept = Vec::with_capacity(moved.len());
            for m in moved {
                if map.get(&m.key).is_none_or(|p| p & !TOMBSTONE != m.place) {
                    continue;
                }
                // A snapshot older than a delete may need the value before it.
                if m.value.is_some() || oldest.is_some_and(|o| o < m.seq) {
                    kept.push(m);
                } else {
                    drop_entries.push(m);
                }
            }
            kept.into_iter()
                .map(|m| ToLog {
                    key: &m.key,
                    value: m.value.as_deref(),
                    old: Some(m.place | if m.value.is_some() { 0 } else { TOMBSTONE }),
                    moved: true,
                })
                .collect()
        };
        if !drop_entries.is_empty() {
            let mut map = self.map.write();
            let segments = self.segments.read();
            for m in drop_entries {
                map.remove(&m.key)?;
                count_live(&segments, m.place, false);
            }
        }
        if to_log.is_empty() {
            return Ok(0);
        }
        let bytes = self.log(wal, &mut st, &to_log)?;
        self.relocated.fetch_add(bytes, Ordering::Relaxed);
        Ok(bytes)
    }

    /// Logs `ops` as one record (writers take turns: `st` is the writer's lock) and puts
    /// their places in the map; returns the record's bytes.
    fn log(&self, wal: &Wal, st: &mut Writer, ops: &[ToLog<'_>]) -> Result<u64> {
        // Writers take turns, so the log's next sequence number is this record's.
        let seq = wal.last_seq() + 1;
        let mut body = std::mem::take(&mut st.body);
        body.clear();
        let mut starts = Vec::with_capacity(ops.len());
        for op in ops {
            starts.push(body.len() as u64);
            let logged = LogOp {
                key: op.key,
                prev: op.old.map_or(NO_LOC, |p| p & !TOMBSTONE),
                seq,
                value: op.value,
            };
            encode_op(&logged, self.keys, &mut body);
        }
        let logged = Record::Batch { ops: &body };
        let bytes = logged.encoded_len() as u64;
        let limit = self.base.options.log_segment_bytes;
        if st.offset > SEGMENT_HEADER_BYTES as u64 && st.offset + bytes > limit {
            self.start_segment(wal, st)?;
        }
        let appended = wal.append(&[logged])?;
        if appended != seq {
            let e = Error::Corrupt {
                file: self.base.dir.join(WAL_DIR).display().to_string(),
                block: None,
                what: format!("a record expected as {seq} was logged as {appended}"),
            };
            st.failed = Some(e.clone());
            return Err(e);
        }
        let record_at = st.offset;
        st.offset += bytes;
        self.written.fetch_add(bytes, Ordering::Relaxed);
        st.body = body;
        let mut map = self.map.write();
        let segments = self.segments.read();
        let Some(head) = segments.head() else {
            let e = Error::Corrupt {
                file: self.base.dir.join(WAL_DIR).display().to_string(),
                block: None,
                what: "the log has no segment".into(),
            };
            st.failed = Some(e.clone());
            return Err(e);
        };
        head.len.store(st.offset, Ordering::Release);
        head.ops.fetch_add(ops.len() as u64, Ordering::Relaxed);
        // A delete keeps its entry while a snapshot (all older than this write) is open.
        let snapshots_open = !self.snapshots.lock().is_empty();
        let mut live = self.live.load(Ordering::Relaxed);
        let mut key_bytes = self.live_key_bytes.load(Ordering::Relaxed);
        for (op, start) in ops.iter().zip(starts) {
            let place = Loc {
                segment: head.id,
                offset: record_at + OPS_START + start,
            }
            .pack();
            let was = op.old.is_some_and(|p| p & TOMBSTONE == 0);
            // Live operations are those a map entry names: puts, and deletes kept for a
            // snapshot (uncounted when their entry is dropped, see `drop_kept`).
            let applied = match op.value {
                Some(_) => map.insert(op.key, place).map(|()| true),
                None if op.moved || (snapshots_open && op.old.is_some()) => {
                    let kept = (op.key.to_vec(), place | TOMBSTONE, seq);
                    self.kept.lock().push_back(kept);
                    map.insert(op.key, place | TOMBSTONE).map(|()| true)
                }
                None => map.remove(op.key).map(|_| false),
            };
            match applied {
                Ok(counted) => {
                    if counted {
                        count_live(&segments, place, true);
                    }
                    if let Some(old) = op.old {
                        count_live(&segments, old, false);
                    }
                }
                Err(e) => {
                    // The record is logged but part of it may be missing from the map: no later
                    // write may build its `prev` on that; reopening rebuilds the map from the log.
                    st.failed = Some(e.clone());
                    return Err(e);
                }
            }
            let (now, len) = (op.value.is_some(), op.key.len() as u64);
            live = live + u64::from(now) - u64::from(was);
            key_bytes = key_bytes + u64::from(now) * len - u64::from(was) * len;
        }
        self.live.store(live, Ordering::Relaxed);
        self.live_key_bytes.store(key_bytes, Ordering::Relaxed);
        self.applied.store(seq, Ordering::Release);
        Ok(bytes)
    }

    /// Closes the last segment and maps the new one; wakes the collector.
    fn start_segment(&self, wal: &Wal, st: &mut Writer) -> Result<()> {
        let id = self.segments.read().next_id();
        if id >= MAX_SEGMENTS {
            return Err(Error::InvalidParameter {
                name: "log size",
                value: format!("{MAX_SEGMENTS} segments"),
                expected: "fewer segments made in the store's life than a place can name \
                           (8 Mi)",
            });
        }
        let first = wal.rotate()?;
        let path = segment_path(&self.base.dir.join(WAL_DIR), first);
        let segment = match Segment::open(&path, id, first, self.base.store, 0) {
            Ok(segment) => segment,
            Err(e) => {
                // The log appends to the new segment now: no later record may be placed in the
                // old one. Reopening maps every segment again.
                st.failed = Some(e.clone());
                return Err(e);
            }
        };
        st.offset = segment.len.load(Ordering::Relaxed);
        let mut table = (**self.segments.read()).clone();
        table.push(Arc::new(segment));
        *self.segments.write() = Arc::new(table);
        self.over.store(self.over_limit(), Ordering::Relaxed);
        self.collector.wake();
        Ok(())
    }

    /// True when the log is more than two segments past its space limit.
    fn over_limit(&self) -> bool {
        let Some(ratio) = self.base.options.log_space_ratio else {
            return false;
        };
        let table = self.segments.read();
        let slack = 2 * self.base.options.log_segment_bytes;
        table.bytes() as f64 > ratio * table.live_bytes() as f64 + slack as f64
    }

    /// The sequence number of the last write, the segments as they are after it (each with
    /// its operations and bytes then) and the id the next segment gets, with that sequence
    /// number registered as a snapshot's (so that deletes keep their entries until
    /// [`LogInner::unregister`]); writers wait meanwhile. What a checkpoint records. The error
    /// that stopped writes, if one did: the head's bytes may then hold a record the map
    /// does not.
    pub(crate) fn at_rest(&self) -> Result<(Seq, Vec<Listed>, usize)> {
        let st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        let seq = self.register();
        let table = self.segments.read();
        let listed = table
            .iter()
            .map(|s| Listed {
                first: s.first,
                id: s.id,
                ops: s.ops.load(Ordering::Relaxed),
                len: s.len.load(Ordering::Relaxed),
            })
            .collect();
        Ok((seq, listed, table.next_id()))
    }

    /// The place `key`'s map entry `place` had at sequence number `seq` (`None`: absent or
    /// deleted then), following the key's chain back through operations after `seq`. Its
    /// places are below `boundary` (segment id and offset where the records after `seq`
    /// begin): the log is appended in sequence order.
    pub(crate) fn place_at(
        &self,
        key: &[u8],
        place: u64,
        seq: Seq,
        boundary: (usize, u64),
    ) -> Result<Option<u64>> {
        let after = |p: u64| {
            let loc = Loc::unpack(p);
            (loc.segment, loc.offset) >= boundary
        };
        if !after(place) {
            return Ok((place & TOMBSTONE == 0).then_some(place));
        }
        let segments = self.segments.read();
        let mut p = place & !TOMBSTONE;
        loop {
            let (op_seq, prev, put) =
                with_op(&segments, Some(&self.retired), self.keys, p, key, |op| {
                    (op.seq, op.prev, op.value.is_some())
                })?;
            if op_seq <= seq {
                return Ok(put.then_some(p));
            }
            if prev == NO_LOC {
                return Ok(None);
            }
            p = prev;
        }
    }

    /// Takes the segments `ids` out of the table (writers wait meanwhile, so that a new
    /// segment is not lost), keeping them mapped first while a snapshot that may read them is
    /// open ([`Retired`]).
    pub(crate) fn remove_segments(&self, gone: &[Arc<Segment>]) {
        let _st = self.writer.lock();
        let removed_at = self.applied.load(Ordering::Acquire);
        {
            // Under the snapshots' lock, as `release_retired` decides.
            let snapshots = self.snapshots.lock();
            if Self::oldest(&snapshots).is_some_and(|o| o <= removed_at) {
                let mut retired = self.retired.write();
                retired.extend(gone.iter().map(|s| (removed_at, Arc::clone(s))));
            }
        }
        let ids: Vec<usize> = gone.iter().map(|s| s.id).collect();
        let table = self.segments.read().without(&ids);
        *self.segments.write() = Arc::new(table);
    }

    /// A snapshot's sequence number, registered until [`LogInner::unregister`]: consistent
    /// with the map.
    pub(crate) fn register(&self) -> Seq {
        let _map = self.map.read();
        let seq = self.applied.load(Ordering::Acquire);
        *self.snapshots.lock().entry(seq).or_insert(0) += 1;
        seq
    }

    /// The error that stopped the collector, if one did (waits for its pass in progress).
    pub(crate) fn collector_error(&self) -> Result<()> {
        match self.upkeep.lock().failed() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Bytes of the live checkpoint.
    pub(crate) fn checkpoint_bytes(&self) -> u64 {
        self.checkpoint_bytes.load(Ordering::Relaxed)
    }

    /// Forgets a snapshot [`LogInner::register`] gave `seq`, and lets go of the deletes' map
    /// entries and the removed segments no open snapshot can read any more.
    pub(crate) fn unregister(&self, seq: Seq) {
        {
            let mut snapshots = self.snapshots.lock();
            if let std::collections::btree_map::Entry::Occupied(mut e) = snapshots.entry(seq) {
                *e.get_mut() -= 1;
                if *e.get() == 0 {
                    e.remove();
                }
            }
        }
        self.drop_kept();
        self.release_retired();
    }

    /// The sequence number of the oldest open snapshot (`snapshots` held).
    fn oldest(snapshots: &BTreeMap<Seq, usize>) -> Option<Seq> {
        snapshots.keys().next().copied()
    }

    /// Drops the entries deletes kept for snapshots (see [`LogInner::kept`]) that no open
    /// snapshot needs (every one at or past the delete) and that are still as the delete
    /// left them. The oldest snapshot is read under the map's write lock, as writers and new
    /// snapshots read it: one registered meanwhile is newer than every kept delete.
    fn drop_kept(&self) {
        if self.kept.lock().is_empty() {
            return;
        }
        let mut map = self.map.write();
        let oldest = Self::oldest(&self.snapshots.lock());
        let done: Vec<(Vec<u8>, u64, Seq)> = {
            let mut kept = self.kept.lock();
            let n = kept
                .iter()
                .take_while(|(_, _, d)| oldest.is_none_or(|o| *d <= o))
                .count();
            kept.drain(..n).collect()
        };
        if done.is_empty() {
            return;
        }
        let segments = self.segments.read();
        for (key, entry, _) in done {
            if map.get(&key) == Some(entry) {
                let _ = map.remove(&key);
                count_live(&segments, entry, false);
            }
        }
    }

    /// Lets go of the removed segments no open snapshot can read (the oldest read under the
    /// snapshots' lock, as [`LogInner::remove_segments`] reads it to retire them).
    pub(crate) fn release_retired(&self) {
        if self.retired.read().is_empty() {
            return;
        }
        let snapshots = self.snapshots.lock();
        let oldest = Self::oldest(&snapshots);
        self.retired
            .write()
            .retain(|(removed_at, _)| oldest.is_some_and(|o| o <= *removed_at));
    }
}
