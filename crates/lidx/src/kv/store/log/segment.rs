//! The `log` engine's segments as its reads see them: each log segment mapped, with what the
//! collector counts of it ([`Segment`]), and the table of the segments a place can name, by id
//! ([`SegmentTable`]).
//!
//! A place ([`super::record::Loc`]) names a segment by its **id**, the order in which the store
//! made it (0 for its first segment). Before the collector removes any segment, the id is the
//! segment's position in the log; once it has, the checkpoint records each segment's id
//! ([`super::checkpoint`]), and segments made after it take the next ids in order.
//!
//! The table is copied on change (a new segment, segments collected) and shared as an `Arc`.
//! A segment the collector removes while a snapshot older than the removal is open is kept
//! mapped ([`Retired`]: its file unlinked, its pages still readable) for as long as that
//! snapshot may follow a `prev` link into it.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::{Advice, Mmap, MmapOptions};

use crate::error::{Error, Result};
use crate::kv::store::options::LogKeys;
use crate::kv::wal::{
    check_segment_header, Seq, FRAME_BYTES, MAX_BODY_BYTES, SEGMENT_HEADER_BYTES,
};

use super::record::{decode_op, Loc, LogOp};

/// Bytes of address space mapped per segment: the largest segment there can be (one record of
/// the largest body alone).
const MAP_BYTES: usize = SEGMENT_HEADER_BYTES + FRAME_BYTES + MAX_BODY_BYTES;

/// One log segment, mapped for reading.
pub(crate) struct Segment {
    /// Its id: what places name it by.
    pub(crate) id: usize,
    /// The sequence number of its first record (its file's name).
    pub(crate) first: Seq,
    name: String,
    map: Mmap,
    /// Bytes written and readable; nothing at or past it is read.
    pub(crate) len: AtomicU64,
    /// Operations written into it.
    pub(crate) ops: AtomicU64,
    /// Of them, those a map entry names: the newest of their key (a put, or a delete kept for
    /// a snapshot). The collector estimates a segment's live bytes as `len * live / ops`.
    pub(crate) live: AtomicU64,
}

impl Segment {
    /// Maps the segment at `path` (of the store `owner`: [`Error::ForeignFile`] otherwise;
    /// a damaged header is [`Error::Corrupt`]), whose id is `id` and first record `first`,
    /// holding `ops` operations.
    pub(crate) fn open(path: &Path, id: usize, first: Seq, owner: u128, ops: u64) -> Result<Self> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(&name, "open segment", &e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(&name, "stat segment", &e))?
            .len();
        // SAFETY: the mapping is read only and covers more than the file: bytes past its end are
        // never read (`len` bounds every read, and only grows as appends complete). The file is
        // only appended to, by this store's log, which holds the store's lock; nothing truncates
        // it while it is mapped (a log cut happens in the replay before any segment is mapped),
        // and the collector only unlinks it, which leaves the mapping readable.
        let map = unsafe { MmapOptions::new().len(MAP_BYTES).map(&file) }
            .map_err(|e| Error::io(&name, "map segment", &e))?;
        // Gets read one record at a place the map names: without this, each page fault reads
        // ahead up to 128 KiB of other records, and once the log outgrows memory that readahead
        // evicts the pages gets need (1 KiB values under a 448 MB limit: 4-7 Kops/s, p99 3.7-6.8
        // ms). LMDB maps its file the same way.
        // A hint: a kernel that refuses it changes nothing but the readahead.
        let _ = map.advise(Advice::Random);
        let header = (len as usize).min(SEGMENT_HEADER_BYTES);
        // The replay does not read a segment the checkpoint covers: its header is checked here.
        check_segment_header(&name, &map[..header], first, owner)?;
        Ok(Segment {
            id,
            first,
            name,
            map,
            len: AtomicU64::new(len),
            ops: AtomicU64::new(ops),
            live: AtomicU64::new(0),
        })
    }

    /// The segment's file, for errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Its bytes written so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        let len = (self.len.load(Ordering::Acquire) as usize).min(self.map.len());
        &self.map[..len]
    }

    /// The operation at `offset` of a store of `keys`, checked.
    fn op_at(&self, offset: u64, keys: LogKeys) -> Result<LogOp<'_>> {
        let bytes = self.bytes();
        let start = (offset as usize).min(bytes.len());
        decode_op(
            &self.name,
            &format_args!("at offset {offset}"),
            &bytes[start..],
            keys,
        )
        .map(|(op, _)| op)
    }

    /// Its live bytes as the collector estimates them (see [`Segment::live`]).
    pub(crate) fn live_bytes(&self) -> u64 {
        let ops = self.ops.load(Ordering::Relaxed);
        let live = self.live.load(Ordering::Relaxed).min(ops);
        let len = self.len.load(Ordering::Relaxed);
        if ops == 0 {
            return 0;
        }
        (u128::from(len) * u128::from(live) / u128::from(ops)) as u64
    }
}

/// The segments places can name, by id; see the module docs.
#[derive(Clone, Default)]
pub(crate) struct SegmentTable {
    /// The id of `slots[0]`: every id below it is gone.
    base: usize,
    /// `None`: a segment the collector removed.
    slots: Vec<Option<Arc<Segment>>>,
}

impl SegmentTable {
    /// The table of `segments`, in id order.
    pub(crate) fn new(segments: Vec<Arc<Segment>>) -> SegmentTable {
        let mut table = SegmentTable {
            base: segments.first().map_or(0, |s| s.id),
            slots: Vec::new(),
        };
        for s in segments {
            table.push(s);
        }
        table
    }

    /// Adds `segment`, whose id is above every id in the table.
    pub(crate) fn push(&mut self, segment: Arc<Segment>) {
        if self.slots.is_empty() {
            self.base = segment.id;
        }
        let at = segment.id - self.base;
        if self.slots.len() <= at {
            self.slots.resize(at + 1, None);
        }
        self.slots[at] = Some(segment);
    }

    /// This table without the segments whose ids are in `gone`.
    pub(crate) fn without(&self, gone: &[usize]) -> SegmentTable {
        let mut table = self.clone();
        for &id in gone {
            if let Some(slot) = id
                .checked_sub(table.base)
                .and_then(|at| table.slots.get_mut(at))
            {
                *slot = None;
            }
        }
        let lead = table.slots.iter().take_while(|s| s.is_none()).count();
        table.slots.drain(..lead);
        table.base += lead;
        table
    }

    /// The segment of id `id`.
    #[inline]
    pub(crate) fn get(&self, id: usize) -> Option<&Arc<Segment>> {
        self.slots.get(id.checked_sub(self.base)?)?.as_ref()
    }

    /// The segments, by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Segment>> {
        self.slots.iter().flatten()
    }

    /// The segment new records go to.
    pub(crate) fn head(&self) -> Option<&Arc<Segment>> {
        self.slots.last().and_then(Option::as_ref)
    }

    /// The id the next segment gets.
    pub(crate) fn next_id(&self) -> usize {
        self.base + self.slots.len()
    }

    /// Bytes of every segment.
    pub(crate) fn bytes(&self) -> u64 {
        self.iter().map(|s| s.len.load(Ordering::Relaxed)).sum()
    }

    /// The live bytes of every segment, as estimated ([`Segment::live_bytes`]).
    pub(crate) fn live_bytes(&self) -> u64 {
        self.iter().map(|s| s.live_bytes()).sum()
    }
}

/// Segments the collector removed while snapshots older than the removal were open, each
/// with the sequence number of the last write before its removal: a snapshot at a sequence
/// number below it may still follow a `prev` link into it. Kept mapped (their files are
/// unlinked) until no such snapshot is open.
pub(crate) type Retired = parking_lot::RwLock<Vec<(Seq, Arc<Segment>)>>;

/// Calls `f` with the operation at `place` of a store of `keys`, which must be on `key`:
/// found in `table`, or for a snapshot's read (`retired` given), among the segments the
/// collector removed since the snapshot was taken.
pub(crate) fn with_op<R>(
    table: &SegmentTable,
    retired: Option<&Retired>,
    keys: LogKeys,
    place: u64,
    key: &[u8],
    f: impl FnOnce(LogOp<'_>) -> R,
) -> Result<R> {
    let id = Loc::unpack(place).segment;
    if let Some(segment) = table.get(id) {
        return op_in(segment, keys, place, key).map(f);
    }
    let retired = retired.map(|r| r.read());
    let segment = retired
        .as_ref()
        .and_then(|r| r.iter().find(|(_, s)| s.id == id))
        .map(|(_, s)| s)
        .ok_or_else(|| Error::Corrupt {
            file: "log".to_string(),
            block: None,
            what: format!("a place names segment {id}, which the store does not have"),
        })?;
    op_in(segment, keys, place, key).map(f)
}

/// The operation at `place` in `segment`, which must be on `key`.
fn op_in<'s>(segment: &'s Segment, keys: LogKeys, place: u64, key: &[u8]) -> Result<LogOp<'s>> {
    let loc = Loc::unpack(place);
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

/// Adds one to the live operations of the segment `place` names in `table`, or takes one away.
pub(crate) fn count_live(table: &SegmentTable, place: u64, add: bool) {
    if let Some(s) = table.get(Loc::unpack(place).segment) {
        if add {
            s.live.fetch_add(1, Ordering::Relaxed);
        } else {
            // Saturating: the count is an estimate for the collector, never a reason to fail.
            let _ = s
                .live
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }
}
