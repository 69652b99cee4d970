//! A lidx table file (`lidx table create`, paper 000 §5.1) as the rows of a
//! [`crate::LidxTable`]: the file, its learned index, where a set of key ranges lies in it,
//! and the records of those positions, or of those ranges sought as they are read, as Arrow
//! batches.
//!
//! **The index.** The table is indexed as `lidx join --algo inlj-pgm` indexes its inner table
//! (paper 000 §5.2): a PGM with eps 128 over its keys, saved beside it as `<table>.pgm.idx`
//! and bound to the table's content fingerprint (`lidx::raw::join::table_index`). A scan loads
//! the index that file holds, or builds it from the keys (one sequential read of the table)
//! and saves it there, so a join and a query share one index; where the directory is not
//! writable it is kept in memory only. Building it checks that the keys are strictly
//! increasing: a table written with `--shuffle` is refused ([`lidx::Error::OutOfOrder`]), since
//! neither seeks nor the declared order would hold.
//!
//! **Seeking.** The key ranges a filter comes to are sorted and disjoint (`crate::ranges`), so
//! their ends are increasing keys: each is looked up as the INLJ looks up an outer key (paper
//! 000 §4.1): the PGM's cursor walks forward over its segments (optimization 1), each window
//! starts no earlier than the previous answer (optimization 2), and a window's blocks are read
//! once by a [`lidx::join::WindowReader`] that keeps them for the next lookup. A range of `n`
//! records then costs two window reads and the `n` records' blocks, whatever the table's size;
//! a range whose first key from its start is past its end, or is the last key it can hold (a
//! point's only key: every key of an `IN` list not next to another), costs one, since the
//! table's keys strictly increase. A loop of lookups whose windows are sparse in the table
//! hints the windows of the keys [`HINT_AHEAD`] ahead of the one it seeks ([`Seeker`]; not in
//! the paper), so that on a cold table the kernel reads their blocks in the background, many
//! at once, where the lookups read one window at a time.
//!
//! **Reading.** Each contiguous run of positions is read by a [`lidx::join::Table::scan`] (the
//! table's own sequential reader: 4 MiB requests and a background prefetcher on long runs,
//! just the blocks needed on short ones), and every block it reads has its checksum checked.
//! A filter of many ranges (a long `IN` list, `crate::provider`) is sought as it is read
//! ([`TableSource::read_ranges`]): a range of one record is read from the block its lookup
//! read, a longer one by a scan of its positions. Reads go through the OS page cache, which
//! keeps the table's pages for the next query ([`lidx::io::DeviceKind::FileCached`]).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lidx::io::{DeviceKind, Storage};
use lidx::join::{Table, TableKey, WindowCursor, WindowHold, WindowReader};
use lidx::mem::{Pgm, PgmCursor, PgmParams};
use lidx::raw::join::table_index::load_or_build;

use crate::batch::{ArrowKey, BatchBuilder};
use crate::pushdown::PushKey;
use crate::ranges::{KeyRange, KeyRanges};

/// Block size of table files: what `lidx table create` writes.
const BLOCK_SIZE: usize = 4096;

/// The PGM's error bound and its upper levels' as `lidx join --algo inlj-pgm` builds them, and
/// the parameter tag its saved file records: the same settings, so that the same saved file
/// serves both.
const PGM_EPS: usize = 128;
const PGM_EPS_RECURSIVE: usize = 4;
const PGM_TAG: u64 = 0;

/// A key type of table files that scans can show and seek.
pub(crate) trait SourceKey:
    TableKey + PushKey + ArrowKey + Copy + Send + Sync + 'static
{
    /// The key as a `u128` that sorts as the key does: a plan's parts hold one type of key
    /// ranges for both key types (`crate::scan::Part::TableKeys`).
    fn wide(self) -> u128;
    /// The key `wide` gave `w` as, `None` when `w` is past the greatest key (only a range
    /// made elsewhere can hold one: a `hi` of `None` widens to no end, not to a number).
    fn narrow(w: u128) -> Option<Self>;
}

impl SourceKey for u64 {
    fn wide(self) -> u128 {
        u128::from(self)
    }
    fn narrow(w: u128) -> Option<Self> {
        u64::try_from(w).ok()
    }
}

/// A 16-byte key as the big-endian number it sorts as.
impl SourceKey for [u8; 16] {
    fn wide(self) -> u128 {
        u128::from_be_bytes(self)
    }
    fn narrow(w: u128) -> Option<Self> {
        Some(w.to_be_bytes())
    }
}

/// `ranges` widened ([`SourceKey::wide`]): the same ranges in the same order.
pub(crate) fn widen<K: SourceKey>(ranges: &[KeyRange<K>]) -> KeyRanges<u128> {
    KeyRanges::of(
        ranges
            .iter()
            .map(|r| KeyRange {
                lo: r.lo.wide(),
                hi: r.hi.map(K::wide),
            })
            .collect(),
    )
}

/// Keys whose windows a loop of lookups hints ahead of the key it seeks ([`Seeker::pace`]):
/// reads in flight on a cold table. The disk behind the measurement in
/// [`lidx::io::BlockDevice::will_need`]'s file device gave 128 ms for 10,000 reads hinted 16
/// ahead, 92 ms 64 ahead and 85 ms 256 ahead (597 ms unhinted).
const HINT_AHEAD: usize = 64;

/// Blocks read in order that cost about as much as one window hinted and read apart: only a
/// loop whose windows are fewer than one per this many blocks of the span they fall in tries
/// hints ([`Seeker::plan`]); a denser one lets the window reader read ahead in long requests.
/// Measured on the Intel VM's disk: a hinted window of two blocks about 8 us (10,000 of them
/// over a 160 MB table in 80-84 ms from two threads), a block read in order about 4 us (the
/// table read whole in 4 MiB requests, 120-194 ms).
const BLOCKS_PER_HINTED_WINDOW: u64 = 2;

/// Lookups of keys in non-decreasing order in a table, as lidx's INLJ makes them (paper 000
/// §4.1): the PGM's cursor walks its segments forward, each window starts no earlier than the
/// previous answer, and the window reader keeps the blocks it read for the next lookup.
///
/// Not in the paper, whose INLJ reads through the OS page cache one window at a time: a loop
/// of lookups whose windows are sparse in the table ([`Seeker::plan`]) hints the windows of
/// the keys [`HINT_AHEAD`] ahead of the one it seeks ([`Seeker::pace`], a second cursor over
/// the PGM), so that on a cold table the kernel reads their blocks while the lookups before
/// them run; a dense loop keeps the window reader's readahead, which reads its span in long
/// requests. A warm table pays one system call per hinted window (about 0.2 us on the Intel
/// VM). On the Zen 4 VM of session 51 hints made a cold sparse join slower (a hint took about
/// 14 us to submit there, measured while a build ran); a trial that timed each loop's first
/// lookups with and without hints did not tell the two cases apart on the Intel VM (its
/// short window is dominated by the first reads' wait) and is not kept
/// (`docs/results/datafusion.md`, session 58).
pub(crate) struct Seeker<'t, K> {
    cursor: PgmCursor<'t, K>,
    reader: WindowReader<'t, K>,
    floor: u64,
    table: &'t Table<K>,
    index: &'t Pgm<K>,
    /// Whether the loop hints ([`Seeker::plan`]).
    hinting: bool,
    /// The cursor of the keys hinted ahead, the index in the loop of the next key to hint,
    /// and the first record block not yet hinted.
    ahead: PgmCursor<'t, K>,
    next_hint: usize,
    hinted_end: u64,
}

impl<K: SourceKey> Seeker<'_, K> {
    /// Plans the reads of a loop about to seek `n` keys, `first` the smallest and `last` the
    /// largest: hints ([`Seeker::pace`], the reader's readahead off) when its windows are
    /// fewer than one per [`BLOCKS_PER_HINTED_WINDOW`] blocks of the span from `first`'s to
    /// `last`'s, the reader's readahead otherwise.
    pub(crate) fn plan(&mut self, first: K, last: K, n: usize) {
        let per = self.table.records_per_block().max(1) as u64;
        // A loop's keys start afresh: so do its hints.
        self.ahead = self.index.cursor();
        self.hinted_end = 0;
        let lo = self.ahead.window(first).lo as u64;
        let hi = self.index.cursor().window(last).hi as u64;
        let span = hi.max(lo) / per - lo / per + 1;
        let sparse = (n as u64).saturating_mul(BLOCKS_PER_HINTED_WINDOW) < span;
        self.hinting = sparse;
        self.next_hint = 0;
        self.reader.set_readahead(!sparse);
    }

    /// Called before the loop's lookup `i` (counting from 0 after [`Seeker::plan`], once for
    /// each `i` in order): in a loop that hints, hints the windows of the keys up to
    /// [`HINT_AHEAD`] after `i` and before `end`. `key(j)` is the loop's key `j`, `None` when
    /// none is left to seek from `j` on. In a loop that does not hint (a dense one: every
    /// lookup of a 1/1 join) it costs one comparison.
    #[inline(always)]
    pub(crate) fn pace(&mut self, i: usize, end: usize, key: impl Fn(usize) -> Option<K>) {
        if !self.hinting {
            return;
        }
        while self.next_hint < end.min(i.saturating_add(HINT_AHEAD)) {
            let Some(k) = key(self.next_hint) else {
                self.next_hint = usize::MAX;
                break;
            };
            self.hint(k);
            self.next_hint += 1;
        }
    }

    /// Hints the blocks of `key`'s window, `key` `>=` every key hinted before; blocks an
    /// earlier hint covered are not hinted again.
    fn hint(&mut self, key: K) {
        let w = self.ahead.window(key);
        let per = self.table.records_per_block().max(1) as u64;
        let (lo, hi) = (w.lo as u64, (w.hi as u64).max(w.lo as u64));
        if hi / per >= self.hinted_end {
            let lo = lo.max(self.hinted_end * per);
            self.table.will_need(lo, hi);
            self.hinted_end = hi / per + 1;
        }
    }

    /// The position of the first record whose key is `>= key`, which is `>=` every key
    /// asked before.
    pub(crate) fn lower_bound(&mut self, key: K) -> lidx::Result<u64> {
        let w = self.cursor.window(key);
        let lo = (w.lo as u64).max(self.floor);
        let hi = (w.hi as u64).max(lo);
        let pos = self.reader.lower_bound(lo, hi, key)?;
        self.floor = pos;
        Ok(pos)
    }

    /// The record at the last answer, when it is in the table: its key and value.
    pub(crate) fn found(&self) -> Option<(K, &[u8])> {
        self.reader.found()
    }

    /// Puts the seeker's blocks and readahead aside for the next batch of keys
    /// ([`TableSource::seeker_resuming`]).
    pub(crate) fn into_hold(self) -> WindowHold {
        self.reader.into_hold()
    }
}

/// An open table, its index, and its first and last keys.
pub(crate) struct TableSource<K> {
    path: PathBuf,
    table: Arc<Table<K>>,
    /// `None` for an empty table, which needs no index.
    index: Option<Pgm<K>>,
    /// How the index came to be in memory, in lidx's words (`IndexLoad::describe`).
    origin: Option<String>,
    first_last: Option<(K, K)>,
}

impl<K: SourceKey> TableSource<K> {
    /// Opens the table at `path` (which exists) in `storage`, its directory, and loads or
    /// builds its index.
    pub(crate) fn open(path: &Path, storage: &Storage, name: &str) -> lidx::Result<Self> {
        let table = Table::<K>::open(storage, name)?;
        let (index, origin, first_last) = if table.is_empty() {
            (None, None, None)
        } else {
            let saved = format!("{name}.pgm.idx");
            let (index, load) = load_or_build(storage, &saved, &table, PGM_TAG, |keys: &[K]| {
                Pgm::build(keys, PgmParams::new(PGM_EPS, PGM_EPS_RECURSIVE))
            })?;
            let first_last = (table.key_at(0)?, table.key_at(table.len() - 1)?);
            (Some(index), Some(load.describe()), Some(first_last))
        };
        Ok(TableSource {
            path: path.to_path_buf(),
            table: Arc::new(table),
            index,
            origin,
            first_last,
        })
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Records in the table.
    pub(crate) fn len(&self) -> u64 {
        self.table.len()
    }

    /// Records in each block of the table.
    pub(crate) fn records_per_block(&self) -> usize {
        self.table.records_per_block()
    }

    /// Bytes of a record's value.
    pub(crate) fn value_size(&self) -> usize {
        self.table.value_size()
    }

    /// Bytes of a record.
    pub(crate) fn record_size(&self) -> usize {
        self.table.record_size()
    }

    /// The first and last keys, `None` for an empty table.
    pub(crate) fn first_last(&self) -> Option<&(K, K)> {
        self.first_last.as_ref()
    }

    /// How the index came to be in memory, `None` for an empty table.
    pub(crate) fn index_origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// A seeker over the table, `None` for an empty table.
    pub(crate) fn seeker(&self) -> Option<Seeker<'_, K>> {
        self.seeker_resuming(None)
    }

    /// A seeker over the table (`None` for an empty table) for keys in non-decreasing order
    /// from now on, reading on with the blocks and readahead an earlier seeker put aside
    /// ([`Seeker::into_hold`]), if any: its keys may be larger or smaller than these.
    pub(crate) fn seeker_resuming(&self, hold: Option<WindowHold>) -> Option<Seeker<'_, K>> {
        self.index.as_ref().map(|index| Seeker {
            cursor: index.cursor(),
            reader: match hold {
                Some(hold) => self.table.resume_window_reader(hold),
                None => self.table.window_reader(),
            },
            floor: 0,
            table: &self.table,
            index,
            hinting: false,
            ahead: index.cursor(),
            next_hint: 0,
            hinted_end: 0,
        })
    }

    /// True when the index predicts at most `rows` records in each of `ranges` (no block is
    /// read: the PGM's predictions are within its eps, 128, of the true positions).
    pub(crate) fn predicts_at_most(&self, ranges: &KeyRanges<K>, rows: u64) -> bool {
        let Some(index) = &self.index else {
            return true;
        };
        let mut cursor = index.cursor();
        ranges.ranges().iter().all(|r| {
            // A point holds one record at most: no prediction needed.
            if r.hi.is_some() && r.hi == r.lo.successor() {
                return true;
            }
            let lo = cursor.window(r.lo).pos as u64;
            let hi = r.hi.map_or(self.len(), |hi| cursor.window(hi).pos as u64);
            hi.saturating_sub(lo) <= rows
        })
    }

    /// The positions of the records whose keys are in `ranges`: ascending, disjoint runs,
    /// none empty (module docs: each range's start is an INLJ lookup, and its end unless the
    /// first key settles it).
    pub(crate) fn positions(&self, ranges: &KeyRanges<K>) -> lidx::Result<Vec<Range<u64>>> {
        let Some(mut seeker) = self.seeker() else {
            return Ok(Vec::new());
        };
        let ranges = ranges.ranges();
        let mut runs = Vec::with_capacity(ranges.len());
        if let (Some(first), Some(last)) = (ranges.first(), ranges.last()) {
            seeker.plan(first.lo, last.lo, ranges.len());
        }
        for (i, range) in ranges.iter().enumerate() {
            seeker.pace(i, ranges.len(), |j| Some(ranges[j].lo));
            let start = seeker.lower_bound(range.lo)?;
            let first = seeker.found().map(|(key, _)| key);
            let end = match (range.hi, first) {
                (None, _) => self.table.len(),
                // The first key from `lo` on is past the range, or is the last key the range
                // can hold (keys are strictly increasing): no second lookup. This is every key
                // of an `IN` list not next to another.
                (Some(hi), Some(first)) if first >= hi => start,
                (Some(hi), Some(first)) if first.successor() == Some(hi) => start + 1,
                (Some(hi), _) => seeker.lower_bound(hi)?,
            };
            if start < end {
                runs.push(start..end);
            }
            if end == self.table.len() {
                break;
            }
        }
        Ok(runs)
    }

    /// Reads the records at `runs` into batches of at most `batch_rows` rows, giving each to
    /// `send`, which returns false when no more are wanted.
    pub(crate) fn read(
        &self,
        runs: &[Range<u64>],
        out: &mut BatchBuilder<K>,
        batch_rows: usize,
        send: &mut dyn FnMut(&mut BatchBuilder<K>) -> bool,
    ) -> lidx::Result<()> {
        for run in runs {
            if !self.read_run(run.clone(), out, batch_rows, send)? {
                return Ok(());
            }
        }
        if out.rows() > 0 {
            send(out);
        }
        Ok(())
    }

    /// Reads the records whose keys are in `ranges` (widened, [`SourceKey::wide`]), at most
    /// `limit`, into batches as [`TableSource::read`] does. Each range is sought as
    /// [`TableSource::positions`] seeks it; a range that holds one record (an `IN` list's
    /// key) takes it from the block its lookup read, so that block is read once.
    pub(crate) fn read_ranges(
        &self,
        ranges: &KeyRanges<u128>,
        limit: Option<usize>,
        out: &mut BatchBuilder<K>,
        batch_rows: usize,
        send: &mut dyn FnMut(&mut BatchBuilder<K>) -> bool,
    ) -> lidx::Result<()> {
        let Some(mut seeker) = self.seeker() else {
            return Ok(());
        };
        let len = self.table.len();
        let mut left = limit.map_or(u64::MAX, |l| l as u64);
        let ranges = ranges.ranges();
        let first = ranges.first().and_then(|r| K::narrow(r.lo));
        let last = ranges.iter().rev().find_map(|r| K::narrow(r.lo));
        if let (Some(first), Some(last)) = (first, last) {
            seeker.plan(first, last, ranges.len());
        }
        for (i, range) in ranges.iter().enumerate() {
            // No key is as large as `lo`: none is left.
            let Some(lo) = K::narrow(range.lo) else {
                break;
            };
            if left == 0 {
                break;
            }
            // A limit may stop the loop early: hint no further ahead than it could read.
            let end = usize::try_from(left)
                .map_or(ranges.len(), |l| ranges.len().min(i.saturating_add(l)));
            seeker.pace(i, end, |j| K::narrow(ranges[j].lo));
            // `hi` past the greatest key: the range runs to the end.
            let hi = range.hi.and_then(K::narrow);
            let start = seeker.lower_bound(lo)?;
            if start == len {
                break;
            }
            let end = match (hi, seeker.found()) {
                (Some(hi), Some((first, _))) if first >= hi => continue,
                (Some(hi), Some((first, value))) if first.successor() == Some(hi) => {
                    out.push(|| first, || value);
                    left -= 1;
                    if out.rows() == batch_rows && !send(out) {
                        return Ok(());
                    }
                    continue;
                }
                (Some(hi), _) => seeker.lower_bound(hi)?,
                (None, _) => len,
            };
            let end = end.min(start.saturating_add(left));
            left -= end - start;
            if start < end && !self.read_run(start..end, out, batch_rows, send)? {
                return Ok(());
            }
            if end == len {
                break;
            }
        }
        if out.rows() > 0 {
            send(out);
        }
        Ok(())
    }

    /// Reads the records at `run` into `out`, giving it to `send` each time it holds
    /// `batch_rows`; false when `send` wants no more.
    fn read_run(
        &self,
        run: Range<u64>,
        out: &mut BatchBuilder<K>,
        batch_rows: usize,
        send: &mut dyn FnMut(&mut BatchBuilder<K>) -> bool,
    ) -> lidx::Result<bool> {
        let mut scan = self.table.scan(run)?;
        while let Some(key) = scan.key() {
            out.push(|| key, || scan.value());
            if out.rows() == batch_rows && !send(out) {
                return Ok(false);
            }
            scan.advance()?;
        }
        Ok(true)
    }
}

/// Storage over the directory of the table file `path`, and the file's name in it; buffered
/// reads whose pages the OS page cache keeps, as it keeps any file's (a query engine's reads
/// are warm where the cache allows; lidx's benchmark devices drop them instead).
pub(crate) fn storage_of(path: &Path) -> lidx::Result<(Storage, String)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let storage = Storage::new(&dir, DeviceKind::FileCached, BLOCK_SIZE)?;
    Ok((storage, name))
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Sorted distinct keys with runs of neighbours (`k`, `k + 1`, ...) and gaps, so that
    /// ranges end right after a present key, on a present key and inside gaps.
    fn keys(n: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
        let mut keys = Vec::with_capacity(n);
        let mut k = 10u64;
        while keys.len() < n {
            k += if rng.gen_bool(0.5) {
                1
            } else {
                rng.gen_range(2..50)
            };
            keys.push(k);
        }
        keys
    }

    /// The positions `positions` must give, by a scan of the sorted keys.
    fn expected(keys: &[u64], ranges: &KeyRanges<u64>) -> Vec<Range<u64>> {
        ranges
            .ranges()
            .iter()
            .map(|r| {
                let start = keys.partition_point(|k| *k < r.lo) as u64;
                let end =
                    r.hi.map_or(keys.len(), |hi| keys.partition_point(|k| *k < hi)) as u64;
                start..end
            })
            .filter(|r| r.start < r.end)
            .collect()
    }

    /// A table of `keys` (each key's value its first 8 bytes, little-endian for `u64`) in
    /// `dir`.
    fn table<K: SourceKey>(
        dir: &Path,
        keys: &[K],
        value: impl Fn(&K) -> [u8; 8],
    ) -> TableSource<K> {
        let storage =
            Storage::new(dir, DeviceKind::File { direct: false }, BLOCK_SIZE).expect("storage");
        table_in(&storage, dir, keys, value)
    }

    /// A table of `keys` as [`table`] writes it, in `storage` (over `dir`).
    fn table_in<K: SourceKey>(
        storage: &Storage,
        dir: &Path,
        keys: &[K],
        value: impl Fn(&K) -> [u8; 8],
    ) -> TableSource<K> {
        let mut w = lidx::join::TableWriter::<K>::create(storage, "t", 8).expect("create");
        for k in keys {
            w.push(k, &value(k)).expect("push");
        }
        w.finish().expect("finish");
        TableSource::<K>::open(&dir.join("t"), storage, "t").expect("open")
    }

    /// The keys and values `read_ranges` gives for `ranges`, at most `limit`, in batches of
    /// `batch_rows`, asking for no more after `stop` batches.
    fn read<K: SourceKey>(
        source: &TableSource<K>,
        ranges: &KeyRanges<u128>,
        limit: Option<usize>,
        batch_rows: usize,
        stop: usize,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        use datafusion::arrow::array::{Array, AsArray, RecordBatch};
        use datafusion::arrow::datatypes::{DataType, UInt64Type};

        let schema = crate::batch::schema_of::<K>();
        let mut out = BatchBuilder::<K>::new(schema, vec![0, 1], batch_rows, 8);
        let mut batches: Vec<RecordBatch> = Vec::new();
        source
            .read_ranges(ranges, limit, &mut out, batch_rows, &mut |b| {
                batches.push(b.finish().expect("batch"));
                batches.len() < stop
            })
            .expect("read");
        assert!(batches.len() <= stop);
        let mut got = Vec::new();
        for b in &batches {
            assert!(b.num_rows() <= batch_rows);
            let (k, v) = (b.column(0), b.column(1).as_binary::<i32>());
            for i in 0..b.num_rows() {
                let key = match k.data_type() {
                    DataType::UInt64 => k
                        .as_primitive::<UInt64Type>()
                        .value(i)
                        .to_be_bytes()
                        .to_vec(),
                    _ => k.as_binary::<i32>().value(i).to_vec(),
                };
                got.push((key, v.value(i).to_vec()));
            }
        }
        got
    }

    /// Points (present, absent, neighbours of present keys) and ranges of every length, some
    /// ending right after a key, some open; up to `most` of them.
    fn ranges(keys: &[u64], most: usize, rng: &mut ChaCha8Rng) -> KeyRanges<u64> {
        let last = *keys.last().expect("keys");
        let mut ranges = Vec::new();
        for _ in 0..rng.gen_range(1..most) {
            let lo = if rng.gen_bool(0.6) {
                keys[rng.gen_range(0..keys.len())] + rng.gen_range(0..2)
            } else {
                rng.gen_range(0..last + 10)
            };
            let hi = match rng.gen_range(0..4) {
                0 => Some(lo + 1),
                1 => Some(lo + rng.gen_range(1..4)),
                2 => Some(lo + rng.gen_range(1..2_000)),
                _ => (!rng.gen_bool(0.1)).then(|| lo + rng.gen_range(1..20)),
            };
            ranges.push(KeyRange { lo, hi });
        }
        KeyRanges::of(ranges)
    }

    /// A table of `n` keys in storage that keeps pages in the OS page cache (so hints are
    /// taken and counted), and the storage.
    fn cached_table(dir: &Path, n: usize) -> (Vec<u64>, Storage, TableSource<u64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let keys = keys(n, &mut rng);
        let storage = Storage::new(dir, DeviceKind::FileCached, BLOCK_SIZE).expect("storage");
        let source = table_in(&storage, dir, &keys, |k| k.to_le_bytes());
        (keys, storage, source)
    }

    /// The record blocks of the windows of `keys`: what hinting them must hint, each once.
    fn window_blocks(source: &TableSource<u64>, keys: &[u64]) -> u64 {
        let per = source.records_per_block() as u64;
        let last = source.len() - 1;
        let mut cursor = source.index.as_ref().expect("index").cursor();
        let blocks: std::collections::BTreeSet<u64> = keys
            .iter()
            .flat_map(|&k| {
                let w = cursor.window(k);
                (w.lo as u64).min(last) / per..=(w.hi as u64).min(last) / per
            })
            .collect();
        blocks.len() as u64
    }

    /// Blocks hinted to `storage`'s devices while `run` runs.
    fn hinted(storage: &Storage, run: impl FnOnce()) -> u64 {
        let before = storage.stats();
        run();
        (storage.stats() - before).hinted_blocks
    }

    fn points(keys: &[u64]) -> KeyRanges<u64> {
        KeyRanges::of(
            keys.iter()
                .map(|&k| KeyRange {
                    lo: k,
                    hi: Some(k + 1),
                })
                .collect(),
        )
    }

    #[test]
    fn a_sparse_loop_hints_each_window_once_and_no_further_than_ahead() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (keys, storage, source) = cached_table(dir.path(), 100_000);
        // 100 keys 1,000 records apart, then 50 each with the key two records after it.
        let apart: Vec<u64> = keys.iter().step_by(1_000).copied().collect();
        let pairs: Vec<u64> = (0..keys.len() - 2)
            .step_by(2_000)
            .flat_map(|i| [keys[i], keys[i + 2]])
            .collect();
        for sought in [&apart, &pairs] {
            let n = sought.len();
            let mut seeker = source.seeker().expect("seeker");
            seeker.plan(sought[0], sought[n - 1], n);
            // Before the first lookup: the windows of the first HINT_AHEAD keys.
            let first = hinted(&storage, || seeker.pace(0, n, |j| Some(sought[j])));
            assert_eq!(first, window_blocks(&source, &sought[..HINT_AHEAD]));
            let rest = hinted(&storage, || {
                for (i, &k) in sought.iter().enumerate() {
                    seeker.pace(i, n, |j| Some(sought[j]));
                    seeker.lower_bound(k).expect("seek");
                    assert_eq!(seeker.found().map(|(f, _)| f), Some(k));
                }
            });
            assert_eq!(first + rest, window_blocks(&source, sought));
        }
        // A key that does not narrow ends the hints.
        let mut seeker = source.seeker().expect("seeker");
        seeker.plan(apart[0], apart[apart.len() - 1], apart.len());
        let got = hinted(&storage, || {
            seeker.pace(0, apart.len(), |j| (j < 3).then(|| apart[j]))
        });
        assert_eq!(got, window_blocks(&source, &apart[..3]));
    }

    #[test]
    fn sparse_loops_hint_and_dense_ones_read_ahead() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (keys, storage, source) = cached_table(dir.path(), 100_000);
        let read_all = |ranges: &KeyRanges<u64>, limit: Option<usize>, rows: usize| {
            let got = read(&source, &widen(ranges.ranges()), limit, 1024, usize::MAX);
            assert_eq!(got.len(), rows);
        };
        let plan = |ranges: &KeyRanges<u64>, rows: usize| {
            let runs = source.positions(ranges).expect("positions");
            assert_eq!(
                runs.iter().map(|r| r.end - r.start).sum::<u64>(),
                rows as u64
            );
        };
        // Every key sought (392 blocks, thousands of windows): dense, nothing hinted, and the
        // reader reads ahead (a few long requests, not one per window).
        let all = points(&keys);
        assert_eq!(hinted(&storage, || read_all(&all, None, keys.len())), 0);
        let before = storage.stats();
        assert_eq!(hinted(&storage, || plan(&all, keys.len())), 0);
        let requests = (storage.stats() - before).read_requests;
        assert!(
            requests < 40,
            "{requests} read requests for a dense walk of 392 blocks"
        );
        // One key whose window spans two blocks (its whole span): nothing hinted.
        let one = points(&keys[50_000..50_001]);
        assert_eq!(hinted(&storage, || read_all(&one, None, 1)), 0);
        // 64 keys 1,500 records apart: sparse, every window hinted, by both loops.
        let sparse: Vec<u64> = keys.iter().step_by(1_500).take(64).copied().collect();
        let windows = window_blocks(&source, &sparse);
        assert_eq!(
            hinted(&storage, || read_all(&points(&sparse), None, 64)),
            windows
        );
        assert_eq!(hinted(&storage, || plan(&points(&sparse), 64)), windows);
        // A limit of 3 records hints no window past the third.
        let got = hinted(&storage, || read_all(&points(&sparse), Some(3), 3));
        assert_eq!(got, window_blocks(&source, &sparse[..3]));
    }

    #[test]
    fn positions_equal_a_scan_for_points_and_ranges() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let keys = keys(20_000, &mut rng);
        let source = table(dir.path(), &keys, |k| k.to_le_bytes());
        for round in 0..300 {
            let ranges = ranges(&keys, 40, &mut rng);
            assert_eq!(
                source.positions(&ranges).expect("positions"),
                expected(&keys, &ranges),
                "round {round}: {ranges:?}"
            );
        }
    }

    #[test]
    fn ranges_sought_when_read_give_the_records_a_scan_gives() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let keys = keys(20_000, &mut rng);
        let source = table(dir.path(), &keys, |k| k.to_le_bytes());
        for round in 0..200 {
            let ranges = ranges(&keys, 300, &mut rng);
            let mut want: Vec<(Vec<u8>, Vec<u8>)> = expected(&keys, &ranges)
                .into_iter()
                .flat_map(|run| keys[run.start as usize..run.end as usize].to_vec())
                .map(|k| (k.to_be_bytes().to_vec(), k.to_le_bytes().to_vec()))
                .collect();
            let limit = rng.gen_bool(0.3).then(|| rng.gen_range(0..want.len() + 3));
            if let Some(limit) = limit {
                want.truncate(limit);
            }
            let batch_rows = rng.gen_range(1..100);
            // Sometimes the reader wants no more after a few batches.
            let stop = if rng.gen_bool(0.2) {
                rng.gen_range(1..4)
            } else {
                usize::MAX
            };
            want.truncate(stop.saturating_mul(batch_rows));
            let got = read(&source, &widen(ranges.ranges()), limit, batch_rows, stop);
            assert_eq!(
                got, want,
                "round {round}, limit {limit:?}, stop {stop}: {ranges:?}"
            );
        }
    }

    #[test]
    fn ranges_at_the_ends_of_the_key_domain_read_what_they_hold() {
        use crate::ranges::Cmp;

        let dir = tempfile::tempdir().expect("tempdir");
        let top = u64::MAX;
        let keys = [0, 1, 7, top - 2, top - 1, top];
        let source = table(dir.path(), &keys, |k| k.to_le_bytes());
        let rows = |ks: &[u64]| -> Vec<(Vec<u8>, Vec<u8>)> {
            ks.iter()
                .map(|k| (k.to_be_bytes().to_vec(), k.to_le_bytes().to_vec()))
                .collect()
        };
        let wide = |lo: u128, hi: Option<u128>| KeyRanges::of(vec![KeyRange { lo, hi }]);
        let all = |r: &KeyRanges<u128>| read(&source, r, None, 4, usize::MAX);
        // Past the greatest key: nothing; an end past it: to the last key.
        assert_eq!(all(&wide(u128::from(top) + 1, None)), rows(&[]));
        assert_eq!(
            all(&wide(u128::from(top - 1), Some(1 << 70))),
            rows(&[top - 1, top])
        );
        // Ranges as filters make them: the greatest key alone, the keys from one on, and
        // points around both ends.
        let eq_top = KeyRanges::compare(Cmp::Eq, top);
        assert_eq!(all(&widen(eq_top.ranges())), rows(&[top]));
        let from = KeyRanges::compare(Cmp::GtEq, top - 2);
        assert_eq!(all(&widen(from.ranges())), rows(&[top - 2, top - 1, top]));
        let points = (0..100)
            .chain(top - 100..=top)
            .map(|k| KeyRanges::compare(Cmp::Eq, k))
            .fold(KeyRanges::none(), KeyRanges::union);
        assert_eq!(all(&widen(points.ranges())), rows(&keys));

        // 16-byte keys, the greatest among them.
        let dir = tempfile::tempdir().expect("tempdir");
        let keys: Vec<[u8; 16]> = [0u128, 5, u128::MAX - 1, u128::MAX]
            .iter()
            .map(|k| k.to_be_bytes())
            .collect();
        let source = table(dir.path(), &keys, |k| k[8..].try_into().expect("8 bytes"));
        let rows = |ks: &[[u8; 16]]| -> Vec<(Vec<u8>, Vec<u8>)> {
            ks.iter().map(|k| (k.to_vec(), k[8..].to_vec())).collect()
        };
        let eq_top = KeyRanges::compare(Cmp::Eq, [0xff; 16]);
        let got = read(&source, &widen(eq_top.ranges()), None, 4, usize::MAX);
        assert_eq!(got, rows(&keys[3..]));
        let from = KeyRanges::compare(Cmp::Gt, 4u128.to_be_bytes());
        let got = read(&source, &widen(from.ranges()), Some(2), 4, usize::MAX);
        assert_eq!(got, rows(&keys[1..3]));
    }
}
