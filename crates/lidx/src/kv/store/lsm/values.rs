//! The `lsm` engine's value log (`lsm:vmin=N`): values of at least `vmin` bytes live in value
//! log **segments**, and a run keeps, in their place, a **reference**: a tag, the segment's
//! generation and the value's length (13 bytes). A compaction then rewrites the reference, not
//! the value, so a large value is written about twice (the log, its segment) instead of once
//! per level.
//!
//! Where we follow and depart from WiscKey (FAST 2016, §3.3): WiscKey appends every value to
//! one circular log, which is also its write-ahead log, and its garbage collector reads the
//! log's tail and writes the live values back at the head, inserting their new addresses into
//! the LSM tree beside the user's writes. Here the log stays the store's write-ahead log, and
//! values are separated when a memtable is flushed (as RocksDB's integrated BlobDB does): a
//! flush writes its large values into new segments, in key order, so a **segment is a byte
//! table of kind `Values`**, found by key through its own learned model (one block per value
//! that fits a block) and checked like every table. A reference names its segment only; the
//! key finds the value in it.
//!
//! **Garbage** is found by compactions, the only writers of references: every run knows how
//! many bytes of values it refers to in each segment (the manifest records it), so a
//! segment's live bytes are the sum over the live runs. A compaction that drops an overwritten
//! or deleted version drops its reference, and a segment no run refers to is removed once its
//! last reader lets go. A segment whose live bytes fall under two thirds of its values (space
//! amplification over 1.5) is **collected** by compactions: each one that meets a reference to
//! it copies the value into its own new segment. When no compaction is due, the compaction
//! thread rewrites, alone and in its place, the run that refers most to such segments, so
//! collection does not wait for a level to fill (WiscKey's collector does the same work, with
//! the copy's address written back by the merge rather than by a second write path).
//!
//! A flush writes one segment of what its memtable held, so a memtable much smaller than a
//! segment makes many small ones (thousands, each an open file, for a few MiB of values with
//! the smallest budgets). A compaction whose inputs refer to at least a quarter of a segment
//! of values in segments under a quarter of one also copies those into fuller ones (which
//! are then not small, so not copied again): a value is then written three times (the log,
//! its flush's segment, the merged one) instead of twice, and the store keeps about its
//! values over a quarter of a segment files open, with the small segments level 0 holds.
//!
//! Space: a leveled store's segments hold at most 1.5 times the values its runs refer to;
//! those include versions a merge has not dropped yet, and in a tiered store a stale segment
//! that only an older run of a level refers to waits for that level's merge.
//!
//! A segment is closed before it passes [`StoreOptions::log_segment_bytes`]; a value that
//! goes to the value log must fit one, and a longer one is refused before it is logged
//! (`check_value`).
//!
//! [`StoreOptions::log_segment_bytes`]: crate::kv::store::options::StoreOptions::log_segment_bytes

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::disk::byte_table::{
    ByteTable, ByteTableKind, ByteTableParams, ByteTableWriter, MergeRecords,
};
use crate::disk::owner::FileOwner;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::kv::store::dir::{identify, FileIdentity, ValueRefs};
use crate::kv::store::staged::TableFile;

use super::levels::Inner;

/// The tag of a reference to a value in a value log segment: the segment's generation (8
/// bytes, little-endian) and the value's length (4 bytes) follow.
pub(crate) const VREF: u8 = 2;

/// Bytes of a tagged reference.
pub(crate) const REF_BYTES: usize = 13;

/// The name of the value log segment of generation `g`.
pub(crate) fn segment_name(g: u64) -> String {
    format!("values-{g:010}.lbt")
}

/// The generation of a value log segment's file name, if it is one.
pub(crate) fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("values-")?.strip_suffix(".lbt")?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// True for the name of a value log segment (the engine's leftovers, when the manifest does
/// not name it).
pub(crate) fn is_segment_name(name: &str) -> bool {
    parse_segment_name(name).is_some()
}

/// Appends the tagged reference to a value of `len` bytes in segment `segment` to `out`.
pub(crate) fn encode_ref(out: &mut Vec<u8>, segment: u64, len: u32) {
    out.push(VREF);
    out.extend_from_slice(&segment.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
}

/// The segment and length a tagged reference names; [`Error::Corrupt`] (naming no file) when
/// it is not one.
pub(crate) fn decode_ref(tagged: &[u8]) -> Result<(u64, u32)> {
    match tagged {
        [VREF, rest @ ..] if rest.len() == REF_BYTES - 1 => {
            let segment = u64::from_le_bytes(rest[..8].try_into().unwrap_or([0; 8]));
            let len = u32::from_le_bytes(rest[8..].try_into().unwrap_or([0; 4]));
            Ok((segment, len))
        }
        _ => Err(Error::Corrupt {
            file: "a run".to_string(),
            block: None,
            what: format!(
                "a value reference of {} bytes, {REF_BYTES} expected",
                tagged.len()
            ),
        }),
    }
}

/// True when `tagged` is a reference.
pub(crate) fn is_ref(tagged: &[u8]) -> bool {
    tagged.first() == Some(&VREF)
}

/// A value log segment: its table (removed once no live run refers to it and its last reader
/// lets go) and what the manifest records of it.
pub(crate) struct Segment {
    file: TableFile,
    pub(crate) generation: u64,
    pub(crate) identity: FileIdentity,
}

impl Segment {
    pub(crate) fn new(
        table: ByteTable,
        name: String,
        identity: FileIdentity,
        storage: &Arc<Storage>,
    ) -> Arc<Segment> {
        Arc::new(Segment {
            file: TableFile::new(table, name, storage),
            generation: identity.generation,
            identity,
        })
    }

    /// Bytes of values the segment holds, live or not.
    pub(crate) fn value_bytes(&self) -> u64 {
        self.table.header().value_bytes
    }

    /// The value of `key`, which a run refers to as `len` bytes here; [`Error::Corrupt`]
    /// naming the segment when it holds none of that length.
    pub(crate) fn value(&self, key: &[u8], len: u32) -> Result<Vec<u8>> {
        match self.table.get(key)? {
            Some(v) if v.len() == len as usize => Ok(v),
            found => Err(Error::Corrupt {
                file: self.name.clone(),
                block: None,
                what: format!(
                    "a run refers to a value of {len} bytes for a key whose value here is {}",
                    found.map_or("absent".to_string(), |v| format!("of {} bytes", v.len()))
                ),
            }),
        }
    }
}

impl std::ops::Deref for Segment {
    type Target = TableFile;

    fn deref(&self) -> &TableFile {
        &self.file
    }
}

/// The segments a merge copies values out of (or `Store::check` follows references into),
/// each read once from its start as references to it come: a merge writes keys in order and
/// a segment holds its values in key order, so each one is a sequential read rather than a
/// lookup per value.
pub(crate) struct Collected {
    /// Each segment's generation, table and stream (opened at the first reference, dropped
    /// at its end).
    segments: Vec<(u64, Arc<ByteTable>, Option<MergeRecords>)>,
}

impl Collected {
    /// `segments`, sorted by generation.
    pub(crate) fn new(segments: Vec<Arc<Segment>>) -> Collected {
        Collected::of_tables(
            segments
                .into_iter()
                .map(|s| (s.generation, Arc::clone(&s.table)))
                .collect(),
        )
    }

    /// The segments' tables by generation, sorted by it.
    pub(crate) fn of_tables(tables: Vec<(u64, Arc<ByteTable>)>) -> Collected {
        Collected {
            segments: tables.into_iter().map(|(g, t)| (g, t, None)).collect(),
        }
    }

    /// The value of `key`, `len` bytes in the segment of generation `generation`, when that
    /// segment is here (`None` when it is not). Keys asked of one segment must increase;
    /// [`Error::Corrupt`] naming the segment when it holds no such value.
    pub(crate) fn value(
        &mut self,
        generation: u64,
        key: &[u8],
        len: u32,
    ) -> Result<Option<Vec<u8>>> {
        let Ok(i) = self
            .segments
            .binary_search_by_key(&generation, |(g, _, _)| *g)
        else {
            return Ok(None);
        };
        let (_, table, stream) = &mut self.segments[i];
        let records = stream.get_or_insert_with(|| table.merge_records());
        let mut ended = false;
        loop {
            match records.next_record()? {
                Some((k, v)) => match k.cmp(key) {
                    std::cmp::Ordering::Less => continue,
                    std::cmp::Ordering::Equal if v.len() == len as usize => {
                        return Ok(Some(v.to_vec()))
                    }
                    _ => break,
                },
                None => {
                    ended = true;
                    break;
                }
            }
        }
        if ended {
            *stream = None;
        }
        Err(Error::Corrupt {
            file: table.name().to_string(),
            block: None,
            what: format!("a run refers to a value of {len} bytes here that the segment lacks"),
        })
    }
}

/// True when a segment with `live` of its `total` bytes of values referred to is collected:
/// its space amplification is over 1.5.
pub(crate) fn worth_collecting(live: u64, total: u64) -> bool {
    live.saturating_mul(3) < total.saturating_mul(2)
}

/// Bytes of values a run refers to in each segment, by segment generation.
pub(crate) type RefBytes = BTreeMap<u64, u64>;

/// Where a flush or a compaction writes values: new segments of at most the store's
/// `log_segment_bytes`, in the order of their keys, and the references to them.
pub(crate) struct SegmentWriter<'a> {
    inner: &'a Inner,
    current: Option<(ByteTableWriter, String, u64, u64)>,
    written: Vec<Arc<Segment>>,
}

impl<'a> SegmentWriter<'a> {
    pub(crate) fn new(inner: &'a Inner) -> SegmentWriter<'a> {
        SegmentWriter {
            inner,
            current: None,
            written: Vec::new(),
        }
    }

    /// Writes `value` under `key` (above every key written before) and returns the
    /// generation of the segment it went to.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) -> Result<u64> {
        let limit = self.inner.base.options.log_segment_bytes;
        let bytes = (key.len() + value.len()) as u64;
        if self
            .current
            .as_ref()
            .is_some_and(|(_, _, _, held)| held + bytes > limit)
        {
            self.close()?;
        }
        let open = match self.current.take() {
            Some(open) => open,
            None => self.open()?,
        };
        let (writer, _, generation, held) = self.current.insert(open);
        writer.add(key, value)?;
        *held += bytes;
        Ok(*generation)
    }

    /// A new segment's writer, its name, generation and bytes written (none yet).
    fn open(&self) -> Result<(ByteTableWriter, String, u64, u64)> {
        let generation = self.inner.next_generation.fetch_add(1, Ordering::Relaxed);
        let name = segment_name(generation);
        let params = ByteTableParams {
            model: self.inner.base.identity.model,
        };
        let owner = FileOwner {
            store: self.inner.base.store,
            generation,
        };
        let writer = ByteTableWriter::create(&self.inner.storage, &name, params)?
            .owned_by(owner)
            .of_kind(ByteTableKind::Values);
        Ok((writer, name, generation, 0))
    }

    /// Finishes the open segment, if any.
    fn close(&mut self) -> Result<()> {
        if let Some((writer, name, generation, _)) = self.current.take() {
            let table = writer.finish()?;
            let identity = identify(&self.inner.storage, &name, generation)?;
            self.written
                .push(Segment::new(table, name, identity, &self.inner.storage));
        }
        Ok(())
    }

    /// The segments written, each finished and synced.
    pub(crate) fn finish(mut self) -> Result<Vec<Arc<Segment>>> {
        self.close()?;
        Ok(self.written)
    }
}

/// The files a manifest names split into runs (each with the bytes of values it refers to in
/// each segment) and value log segments (each with its generation), or what is wrong: a
/// reference of a file that is not a run or to one that is not a segment, a pair recorded
/// twice or with no bytes, a segment no run refers to (a compaction removes those before its
/// commit). What an open refuses and `Store::check` reports.
#[allow(clippy::type_complexity)]
pub(crate) fn plan_values(
    files: &[(String, FileIdentity)],
    value_refs: &[ValueRefs],
) -> std::result::Result<
    (
        Vec<(String, FileIdentity, RefBytes)>,
        Vec<(String, FileIdentity)>,
    ),
    String,
> {
    let (segments, runs): (Vec<_>, Vec<_>) = files
        .iter()
        .cloned()
        .partition(|(name, _)| parse_segment_name(name).is_some());
    let mut runs: Vec<(String, FileIdentity, RefBytes)> = runs
        .into_iter()
        .map(|(name, id)| (name, id, RefBytes::new()))
        .collect();
    for r in value_refs {
        if !segments.iter().any(|(_, id)| id.generation == r.segment) {
            return Err(format!(
                "a run refers to the value log segment of generation {}, which it does not name",
                r.segment
            ));
        }
        let Some((name, _, refs)) = runs.iter_mut().find(|(_, id, _)| id.generation == r.run)
        else {
            return Err(format!(
                "value references of generation {}, which names no run",
                r.run
            ));
        };
        if r.bytes == 0 || refs.insert(r.segment, r.bytes).is_some() {
            return Err(format!(
                "{name}'s references to segment {} recorded twice or with no bytes",
                r.segment
            ));
        }
    }
    if let Some((name, _)) = segments
        .iter()
        .find(|(_, id)| !value_refs.iter().any(|r| r.segment == id.generation))
    {
        return Err(format!("{name} is named, but no run refers to it"));
    }
    Ok((runs, segments))
}

/// [`Error::InvalidParameter`] for a value that goes to the value log (`vmin` is not 0 and it
/// has at least `vmin` bytes) but is longer than a segment: checked before a write is logged.
pub(crate) fn check_value(len: usize, vmin: usize, segment_bytes: u64) -> Result<()> {
    if vmin > 0 && len >= vmin && len as u64 > segment_bytes {
        return Err(Error::InvalidParameter {
            name: "value length",
            value: format!("{len} bytes, over the value log's segments of {segment_bytes}"),
            expected: "a value no longer than the lsm engine's value log segment: open the \
                       store with larger log segment bytes (up to 1 GiB)",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_round_trip_and_others_are_refused() {
        let mut tagged = Vec::new();
        encode_ref(&mut tagged, 1234567, 4096);
        assert_eq!(tagged.len(), REF_BYTES);
        assert!(is_ref(&tagged));
        assert_eq!(decode_ref(&tagged).unwrap(), (1234567, 4096));
        assert!(decode_ref(&tagged[..REF_BYTES - 1]).is_err());
        assert!(decode_ref(&[VREF]).is_err());
        assert!(decode_ref(&[0, 1, 2]).is_err());
    }

    #[test]
    fn segment_names_round_trip_and_runs_are_not_segments() {
        assert_eq!(segment_name(42), "values-0000000042.lbt");
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        for other in [
            "run-00-0000000042.lbt",
            "values-42.lbt",
            "values-000000004x.lbt",
        ] {
            assert_eq!(parse_segment_name(other), None, "{other}");
        }
    }

    #[test]
    fn a_manifest_s_value_references_are_planned_or_refused() {
        let id = |generation| FileIdentity {
            generation,
            bytes: 0,
            header_crc: 0,
        };
        let files = vec![
            ("run-01-0000000003.lbt".to_string(), id(3)),
            (segment_name(2), id(2)),
        ];
        let refs = |run, segment, bytes| ValueRefs {
            run,
            segment,
            bytes,
        };
        let (runs, segments) = plan_values(&files, &[refs(3, 2, 100)]).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].2, RefBytes::from([(2, 100)]));
        assert_eq!(segments, vec![(segment_name(2), id(2))]);
        for bad in [
            vec![],                                 // a segment no run refers to
            vec![refs(3, 9, 100)],                  // a segment the manifest does not name
            vec![refs(2, 2, 100)],                  // references of a segment, not a run
            vec![refs(3, 2, 0)],                    // no bytes
            vec![refs(3, 2, 100), refs(3, 2, 100)], // twice
        ] {
            assert!(plan_values(&files, &bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_segment_is_collected_past_one_and_a_half_times_its_live_bytes() {
        assert!(!worth_collecting(100, 100));
        assert!(!worth_collecting(67, 100));
        assert!(worth_collecting(66, 100));
        assert!(worth_collecting(0, 1));
    }

    #[test]
    fn only_a_separated_value_longer_than_a_segment_is_refused() {
        assert!(check_value(5000, 0, 4096).is_ok());
        assert!(check_value(100, 200, 50).is_ok());
        assert!(check_value(4096, 100, 4096).is_ok());
        let e = check_value(4097, 100, 4096).unwrap_err();
        assert!(e.to_string().contains("log segment bytes"), "{e}");
    }
}
