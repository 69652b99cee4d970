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
//! record at or before it ([`super::read`]). A delete keeps its key in the map (marked
//! [`TOMBSTONE`]) while the store is open, so a snapshot taken before it still finds the older
//! value; reopening drops those entries.
//!
//! **Reopening** rebuilds the map from the log (the "recovery time" of paper 001 Fig. 16):
//! every record is read once, the newest place of each live key is kept in a hash map, and the
//! chosen map is bulk-loaded from them in key order, which is how each index is fastest to build
//! (ALEX, LIPP and PGM have bulk loads; inserting one by one would measure their inserts, not
//! a recovery). The time is in [`crate::kv::StoreStats::recovery_seconds`].
//!
//! **Keys** ([`crate::kv::LogSpec`]): a `log:<map>` store takes exactly 8 bytes (the paper's `u64`
//! keys, big-endian so that byte order is numeric order; a put of another length is
//! [`Error::SizeLimit`], a get of one `None`) and its map is the named one. A `log:trie:<map>`
//! store takes keys of any length the store does (1 to 4096 bytes) and its map is a
//! [`crate::mem::TrieMap`] of the named maps, one per 8-byte slice the keys share
//! (Masstree's layering; paper 001 §III has 8-byte keys only). [`super::map`] hides which.
//!
//! What this engine does not do: the log is never compacted. Every update and delete stays on
//! disk, as in paper 001's runs; `compact` only syncs the log.

use std::collections::hash_map::{Entry, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::{Advice, Mmap, MmapOptions};
use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::kv::store::batch::{decode_ops as decode_batch, BatchOp};
use crate::kv::store::dir::WAL_DIR;
use crate::kv::store::engine::Base;
use crate::kv::store::open::{OpenedDir, Recover, Recovered};
use crate::kv::store::options::{CreateOptions, Engine, LogKeys, LogSpec, StoreOptions};
use crate::kv::wal::{
    list_segments, segment_path, Record, Seq, Wal, FRAME_BYTES, MAX_BODY_BYTES,
    SEGMENT_HEADER_BYTES,
};

use super::map::{check_key, check_spec, LogMap, Newest};
use super::record::{
    decode_op, decode_ops, encode_op, Loc, LogOp, MAX_SEGMENTS, NO_LOC, TOMBSTONE,
};

/// A segment is closed and a new one started before a record would take it past this size.
const SEGMENT_BYTES: u64 = 1 << 30;
/// Bytes of address space mapped per segment: the largest segment there can be (one record of
/// the largest body alone).
const MAP_BYTES: usize = SEGMENT_HEADER_BYTES + FRAME_BYTES + MAX_BODY_BYTES;

/// One log segment, mapped for reading.
pub(crate) struct Segment {
    name: String,
    map: Mmap,
    /// Bytes written and readable; nothing at or past it is read.
    len: AtomicU64,
}

impl Segment {
    fn open(path: &Path) -> Result<Segment> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(&name, "open segment", &e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(&name, "stat segment", &e))?
            .len();
        // SAFETY: the mapping is read only and covers more than the file: bytes past its end are
        // never read (`len` bounds every read, and only grows as appends complete). The file is
        // only appended to, by this store's log, which holds the store's lock; nothing truncates
        // it while it is mapped (a log cut happens in the replay before any segment is mapped).
        let map = unsafe { MmapOptions::new().len(MAP_BYTES).map(&file) }
            .map_err(|e| Error::io(&name, "map segment", &e))?;
        // Gets read one record at a place the map names: without this, each page fault reads
        // ahead up to 128 KiB of other records, and once the log outgrows memory that readahead
        // evicts the pages gets need (1 KiB values under a 448 MB limit: 4-7 Kops/s, p99 3.7-6.8
        // ms). LMDB maps its file the same way.
        // A hint: a kernel that refuses it changes nothing but the readahead.
        let _ = map.advise(Advice::Random);
        Ok(Segment {
            name,
            map,
            len: AtomicU64::new(len),
        })
    }

    /// The operation at `offset` of a store of `keys`, checked.
    fn op_at(&self, offset: u64, keys: LogKeys) -> Result<LogOp<'_>> {
        let len = self.len.load(Ordering::Acquire) as usize;
        let start = (offset as usize).min(len);
        decode_op(
            &self.name,
            &format_args!("at offset {offset}"),
            &self.map[start..len],
            keys,
        )
        .map(|(op, _)| op)
    }
}

/// The operation at `place` of a store of `keys`, which must be on `key`.
pub(crate) fn op_at<'s>(
    segments: &'s [Arc<Segment>],
    keys: LogKeys,
    place: u64,
    key: &[u8],
) -> Result<LogOp<'s>> {
    let loc = Loc::unpack(place);
    let segment = segments.get(loc.segment).ok_or_else(|| Error::Corrupt {
        file: "log".to_string(),
        block: None,
        what: format!(
            "a place names segment {} of {}",
            loc.segment,
            segments.len()
        ),
    })?;
    let op = segment.op_at(loc.offset, keys)?;
    if op.key != key {
        return Err(Error::Corrupt {
            file: segment.name.clone(),
            block: None,
            what: format!(
                "the operation at offset {} is on key {:02x?}, not {key:02x?}",
                loc.offset, op.key
            ),
        });
    }
    Ok(op)
}

/// Bytes from a record's start to its first operation: the frame, then the body's kind and
/// key length (a batch has no key).
const OPS_START: u64 = (FRAME_BYTES + 5) as u64;

struct Writer {
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
    pub(crate) segments: RwLock<Vec<Arc<Segment>>>,
    writer: Mutex<Writer>,
    /// The last write in the map; changed under the map's write lock.
    pub(crate) applied: AtomicU64,
    /// Keys whose newest record is a put.
    pub(crate) live: AtomicU64,
    /// Bytes of those keys.
    pub(crate) live_key_bytes: AtomicU64,
}

/// An open `log` engine.
pub(crate) struct LogEngine {
    pub(super) inner: Arc<LogInner>,
}

/// What the `log` engine's log is replayed into: each key's newest place.
pub(crate) struct Replay {
    spec: LogSpec,
    /// The first sequence number of each segment, and the offset of its next record.
    firsts: Vec<Seq>,
    offsets: Vec<u64>,
    newest: Newest,
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

impl Recover for LogEngine {
    const FILES: &'static str = "files";
    const LEFTOVERS: Option<fn(&str) -> bool> = None;
    type Replay = Replay;

    fn check_new(identity: &CreateOptions) -> Result<()> {
        match identity.engine {
            Engine::Log(spec) => check_spec(spec),
            _ => Ok(()),
        }
    }

    fn load(dir: &Path, _: &StoreOptions, opened: &mut OpenedDir) -> Result<(Replay, Seq)> {
        let Engine::Log(spec) = opened.identity.engine else {
            return Err(Error::InvalidParameter {
                name: "engine",
                value: opened.identity.engine.label(),
                expected: "a log store",
            });
        };
        let wal_dir = dir.join(WAL_DIR);
        let firsts: Vec<Seq> = list_segments(&wal_dir)?.iter().map(|(s, _)| *s).collect();
        let replay = Replay {
            spec,
            offsets: vec![SEGMENT_HEADER_BYTES as u64; firsts.len()],
            firsts,
            newest: Newest::new(spec.keys),
            log_name: wal_dir.display().to_string(),
        };
        // The log is all there is: it is replayed from its start.
        Ok((replay, 0))
    }

    fn replay(state: &mut Replay, seq: Seq, record: Record<'_>) -> Result<()> {
        let segment = state
            .firsts
            .partition_point(|&f| f <= seq)
            .saturating_sub(1);
        let offset = state.offsets[segment];
        state.offsets[segment] += record.encoded_len() as u64;
        let Record::Batch { ops } = record else {
            return Err(Error::Corrupt {
                file: state.log_name.clone(),
                block: None,
                what: format!("record {seq} is not a log engine record"),
            });
        };
        for op in decode_ops(&state.log_name, seq, ops, state.spec.keys) {
            let (at, op) = op?;
            let place = Loc {
                segment,
                offset: offset + OPS_START + at as u64,
            }
            .pack();
            state.newest.set(op.key, place, op.value.is_some())?;
        }
        Ok(())
    }

    /// Builds the map from each key's newest place and maps the log's segments.
    fn finish(state: Replay, r: Recovered) -> Result<LogEngine> {
        let (live, live_key_bytes) = state.newest.live();
        let map = state.newest.build(state.spec)?;
        let mut segments = Vec::new();
        for (_, path) in list_segments(&r.base.dir.join(WAL_DIR))? {
            segments.push(Arc::new(Segment::open(&path)?));
        }
        let offset = segments.last().map_or(SEGMENT_HEADER_BYTES as u64, |s| {
            s.len.load(Ordering::Relaxed)
        });
        let inner = Arc::new(LogInner {
            keys: state.spec.keys,
            map: RwLock::new(map),
            segments: RwLock::new(segments),
            writer: Mutex::new(Writer {
                offset,
                failed: None,
                body: Vec::new(),
            }),
            applied: AtomicU64::new(r.last),
            live: AtomicU64::new(live),
            live_key_bytes: AtomicU64::new(live_key_bytes),
            base: r.base.recovered(),
        });
        Ok(LogEngine { inner })
    }
}

impl LogInner {
    /// The value of `key` now.
    pub(super) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let place = match self.map.read().get(key) {
            Some(place) if place & TOMBSTONE == 0 => place,
            _ => return Ok(None),
        };
        let segments = self.segments.read();
        let op = op_at(&segments, self.keys, place, key)?;
        Ok(op.value.map(<[u8]>::to_vec))
    }

    /// Logs `record` and puts its places in the map.
    pub(super) fn write(&self, record: Record<'_>) -> Result<()> {
        let wal = self.base.wal()?;
        let ops = store_ops(&record, self.keys)?;
        let mut st = self.writer.lock();
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        // Writers take turns, so the log's next sequence number is this record's.
        let seq = wal.last_seq() + 1;
        let (log_ops, was_live): (Vec<LogOp<'_>>, Vec<bool>) = {
            let map = self.map.read();
            ops.iter()
                .map(|&(key, value)| {
                    let old = map.get(key);
                    let op = LogOp {
                        key,
                        prev: old.map_or(NO_LOC, |p| p & !TOMBSTONE),
                        seq,
                        value,
                    };
                    (op, old.is_some_and(|p| p & TOMBSTONE == 0))
                })
                .unzip()
        };
        let mut body = std::mem::take(&mut st.body);
        body.clear();
        let mut starts = Vec::with_capacity(log_ops.len());
        for op in &log_ops {
            starts.push(body.len() as u64);
            encode_op(op, self.keys, &mut body);
        }
        let logged = Record::Batch { ops: &body };
        let bytes = logged.encoded_len() as u64;
        if st.offset > SEGMENT_HEADER_BYTES as u64 && st.offset + bytes > SEGMENT_BYTES {
            self.start_segment(wal, &mut st)?;
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
        let segments = self.segments.read();
        let segment = segments.len() - 1;
        st.offset += bytes;
        segments[segment].len.store(st.offset, Ordering::Release);
        drop(segments);
        st.body = body;
        let mut map = self.map.write();
        let mut live = self.live.load(Ordering::Relaxed);
        let mut key_bytes = self.live_key_bytes.load(Ordering::Relaxed);
        for ((op, was), start) in log_ops.iter().zip(was_live).zip(starts) {
            let place = Loc {
                segment,
                offset: record_at + OPS_START + start,
            }
            .pack();
            let value = if op.value.is_some() {
                place
            } else {
                place | TOMBSTONE
            };
            if let Err(e) = map.insert(op.key, value) {
                // The record is logged but part of it may be missing from the map: no later
                // write may build its `prev` on that; reopening rebuilds the map from the log.
                st.failed = Some(e.clone());
                return Err(e);
            }
            let (now, len) = (op.value.is_some(), op.key.len() as u64);
            live = live + u64::from(now) - u64::from(was);
            key_bytes = key_bytes + u64::from(now) * len - u64::from(was) * len;
        }
        self.live.store(live, Ordering::Relaxed);
        self.live_key_bytes.store(key_bytes, Ordering::Relaxed);
        self.applied.store(seq, Ordering::Release);
        Ok(())
    }

    /// Closes the last segment and maps the new one.
    fn start_segment(&self, wal: &Wal, st: &mut Writer) -> Result<()> {
        if self.segments.read().len() >= MAX_SEGMENTS {
            return Err(Error::InvalidParameter {
                name: "log size",
                value: format!("{MAX_SEGMENTS} segments"),
                expected: "fewer segments than a place can name (8 Mi of 1 GiB)",
            });
        }
        let first = wal.rotate()?;
        let path = segment_path(&self.base.dir.join(WAL_DIR), first);
        let segment = Segment::open(&path)?;
        st.offset = segment.len.load(Ordering::Relaxed);
        self.segments.write().push(Arc::new(segment));
        Ok(())
    }

    /// The sequence number a snapshot taken now reads at, consistent with the map.
    pub(crate) fn snapshot_seq(&self) -> Seq {
        let _map = self.map.read();
        self.applied.load(Ordering::Acquire)
    }
}
