//! The `lsm` engine's files: its sorted runs ([`RunFile`]) in levels ([`Levels`]), how a
//! frozen memtable is flushed into level 0, which merge a compaction does next
//! ([`Levels::next_job`]) and how runs are merged into one ([`write_run`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::disk::byte_table::{
    key_hash, ByteTable, ByteTableKind, ByteTableParams, ByteTableWriter,
};
use crate::disk::owner::FileOwner;
use crate::error::Error;
use crate::error::Result;
use crate::io::Storage;
use crate::key::cmp_bytes;
use crate::kv::manifest::Manifest;
use crate::kv::store::dir::{encode_meta, identify, FileIdentity, StoreMeta, ValueRefs};
use crate::kv::store::engine::KeyRange;
use crate::kv::store::options::{Engine, LsmSpec};
use crate::kv::store::staged::{commit, Files, Staged, TableFile, Version};
use crate::kv::store::staged_read::{named, untag, FileCursor, Resolve, PUT, TOMBSTONE};
use crate::kv::wal::Seq;

use super::state::Compactor;
use super::values::{
    decode_ref, encode_ref, is_ref, worth_collecting, Collected, RefBytes, Segment, SegmentWriter,
};
use super::MIN_MEMTABLE;

/// The name of the run of generation `g` at level `level`.
pub(crate) fn run_name(level: usize, g: u64) -> String {
    format!("run-{level:02}-{g:010}.lbt")
}

/// The level and generation of a run's file name, if it is one.
pub(crate) fn parse_run_name(name: &str) -> Option<(usize, u64)> {
    let rest = name.strip_prefix("run-")?.strip_suffix(".lbt")?;
    let (level, g) = rest.split_once('-')?;
    let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(level, 2) || !digits(g, 10) {
        return None;
    }
    Some((level.parse().ok()?, g.parse().ok()?))
}

/// The level of each of the runs a manifest names (`files`, with what it records of each),
/// or what is wrong: a name that is not a run's or names another generation than the
/// recorded one, a run named twice, more than one run at a level below 0 of a leveled store
/// (`tiered` false; a tiered level holds any number while its merge is behind). What an
/// open refuses and `Store::check` reports.
pub(crate) fn plan_levels(
    files: &[(String, FileIdentity)],
    tiered: bool,
) -> std::result::Result<Vec<usize>, String> {
    let mut levels = Vec::with_capacity(files.len());
    let mut seen = std::collections::HashSet::new();
    for (name, recorded) in files {
        let (level, generation) =
            parse_run_name(name).ok_or_else(|| format!("{name} is named, but is not a run"))?;
        if generation != recorded.generation {
            return Err(format!(
                "{name} is of generation {generation}, the manifest records {}",
                recorded.generation
            ));
        }
        if !seen.insert(name.as_str()) {
            return Err(format!("{name} is named twice"));
        }
        if !tiered && level > 0 && levels.contains(&level) {
            return Err(format!("two runs at level {level}, which holds one"));
        }
        levels.push(level);
    }
    Ok(levels)
}

/// True for the name of a run file (the engine's leftovers, when the manifest does not name
/// it).
pub(crate) fn is_run_name(name: &str) -> bool {
    parse_run_name(name).is_some()
}

/// A sorted run on disk: its table file (removed once a compaction has replaced it and its
/// last reader lets go), its level and what the manifest records of it.
pub(crate) struct RunFile {
    file: TableFile,
    pub(crate) level: usize,
    /// What the manifest records of it.
    pub(crate) identity: FileIdentity,
    /// Bytes of values it refers to in each value log segment.
    pub(crate) refs: RefBytes,
}

impl RunFile {
    pub(crate) fn new(
        table: ByteTable,
        name: String,
        level: usize,
        identity: FileIdentity,
        storage: &Arc<Storage>,
        refs: RefBytes,
    ) -> Arc<RunFile> {
        Arc::new(RunFile {
            file: TableFile::new(table, name, storage),
            level,
            identity,
            refs,
        })
    }
}

impl std::ops::Deref for RunFile {
    type Target = TableFile;

    fn deref(&self) -> &TableFile {
        &self.file
    }
}

/// The runs of one version, by level, each level's newest first: one run in each level below
/// 0 when leveled, up to the spec's `runs` (more while a merge is behind) when tiered.
#[derive(Default)]
pub(crate) struct Levels {
    pub(crate) levels: Vec<Vec<Arc<RunFile>>>,
    /// The log sequence number the runs hold every record up to.
    pub(crate) flushed_seq: Seq,
    /// The value log's segments the runs refer to, by generation.
    pub(crate) values: Vec<Arc<Segment>>,
}

/// The `lsm` engine's files.
pub(crate) type Runs = Arc<Levels>;

/// The `lsm` engine's state.
pub(crate) type Inner = Staged<Runs>;

/// A merge a compaction does: every run of level `from` (and, leveled, of level `from + 1`)
/// into one run at `from + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Job {
    pub(crate) from: usize,
}

impl Levels {
    /// Every run, newest first: the order reads ask them in.
    pub(crate) fn runs(&self) -> impl Iterator<Item = &Arc<RunFile>> {
        self.levels.iter().flatten()
    }

    /// Bytes of a level's runs on disk.
    fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |l| l.iter().map(|r| r.table.disk_bytes()).sum())
    }

    /// Bytes of memory of the runs' models and filters and of the value log segments'
    /// models.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.runs().map(|r| r.table.memory_bytes()).sum::<usize>()
            + self
                .values
                .iter()
                .map(|s| s.table.memory_bytes())
                .sum::<usize>()
    }

    /// The merge that is due, if any: of the levels at or past their trigger (level 0: `l0`
    /// runs; leveled, level 1: `l0` memtables of bytes, each next one `ratio` times more;
    /// tiered, every level below 0: `runs` runs), the one furthest past it, as RocksDB's
    /// compaction score picks (so level 1 is pushed down even while level 0 keeps filling).
    pub(crate) fn next_job(&self, spec: &LsmSpec, memtable: usize) -> Option<Job> {
        let mut best: Option<(f64, usize)> = None;
        let mut consider = |score: f64, level: usize| {
            if score >= 1.0 && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, level));
            }
        };
        let l0 = self.levels.first().map_or(0, Vec::len);
        consider(l0 as f64 / spec.l0 as f64, 0);
        if spec.tiered() {
            for (level, runs) in self.levels.iter().enumerate().skip(1) {
                consider(runs.len() as f64 / spec.runs as f64, level);
            }
            return best.map(|(_, from)| Job { from });
        }
        let mut target = (spec.l0 * memtable).max(1) as u64;
        for level in 1..self.levels.len() {
            let bytes = self.level_bytes(level);
            if bytes > target {
                consider(bytes as f64 / target as f64, level);
            }
            target = target.saturating_mul(spec.ratio as u64);
        }
        best.map(|(_, from)| Job { from })
    }

    /// The runs a merge of `job` reads: level `from`'s, and the next level's when leveled
    /// (tiered, the output joins the next level's runs as its newest).
    pub(crate) fn inputs(&self, job: Job, spec: &LsmSpec) -> Vec<Arc<RunFile>> {
        let next = (!spec.tiered())
            .then(|| self.levels.get(job.from + 1))
            .flatten();
        self.levels[job.from]
            .iter()
            .chain(next.into_iter().flatten())
            .cloned()
            .collect()
    }

    /// True when no run outside `inputs` lies at or below level `from`, the shallowest of
    /// them: no older version of a key can lie under the merge's output, so it drops
    /// tombstones.
    pub(crate) fn nothing_older(&self, from: usize, inputs: &[Arc<RunFile>]) -> bool {
        self.levels
            .iter()
            .skip(from)
            .flatten()
            .all(|r| inputs.iter().any(|i| i.name == r.name))
    }

    /// These levels with the runs of `inputs` (by name) gone and `output` (if any) at its
    /// level, and `flushed_seq`.
    pub(crate) fn replace(
        &self,
        inputs: &[Arc<RunFile>],
        output: Option<Arc<RunFile>>,
        flushed_seq: Seq,
    ) -> Levels {
        let mut levels: Vec<Vec<Arc<RunFile>>> = self
            .levels
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|r| !inputs.iter().any(|i| i.name == r.name))
                    .cloned()
                    .collect()
            })
            .collect();
        if let Some(run) = output {
            if levels.len() <= run.level {
                levels.resize_with(run.level + 1, Vec::new);
            }
            // Level 0's newest run first; a flush is newer than every run there.
            levels[run.level].insert(0, run);
        }
        while levels.last().is_some_and(|l| l.is_empty()) {
            levels.pop();
        }
        Levels {
            levels,
            flushed_seq,
            values: self.values.clone(),
        }
    }

    /// These levels with the value log segments `added`, and without those no run refers to
    /// any more, which are returned: to retire once a manifest without them is committed.
    pub(crate) fn settle_values(mut self, added: Vec<Arc<Segment>>) -> (Levels, Vec<Arc<Segment>>) {
        self.values.extend(added);
        let live = self.live_values();
        let (mut kept, dead): (Vec<_>, Vec<_>) = std::mem::take(&mut self.values)
            .into_iter()
            .partition(|s| live.get(&s.generation).is_some_and(|&b| b > 0));
        kept.sort_by_key(|s| s.generation);
        self.values = kept;
        (self, dead)
    }

    /// Bytes of values the runs refer to in each segment (a version a later merge drops
    /// counted until it does).
    pub(crate) fn live_values(&self) -> RefBytes {
        let mut live = RefBytes::new();
        for (&segment, &bytes) in self.runs().flat_map(|r| r.refs.iter()) {
            *live.entry(segment).or_default() += bytes;
        }
        live
    }

    /// The segments whose live bytes are under two thirds of their values: what the
    /// compaction thread collects even when no merge is due ([`Levels::collection_job`]).
    pub(crate) fn stale_values(&self) -> Vec<Arc<Segment>> {
        let live = self.live_values();
        self.values
            .iter()
            .filter(|s| {
                let live = live.get(&s.generation).copied().unwrap_or(0);
                worth_collecting(live, s.value_bytes())
            })
            .cloned()
            .collect()
    }

    /// The segments a merge of `inputs` copies the values of: the stale ones, and those
    /// holding under a quarter of `segment_bytes` of values (a flush's, of a memtable much
    /// smaller than a segment) once the inputs refer to at least a quarter of a segment in
    /// them, so that the copy is not small in turn: merged into fuller segments, so that the
    /// store does not keep thousands of small files open.
    pub(crate) fn to_collect(
        &self,
        segment_bytes: u64,
        inputs: &[Arc<RunFile>],
    ) -> Vec<Arc<Segment>> {
        let stale = self.stale_values();
        let small = |s: &Segment| s.value_bytes() < segment_bytes / 4;
        let referred = |s: &Segment| -> u64 {
            inputs
                .iter()
                .filter_map(|r| r.refs.get(&s.generation))
                .sum()
        };
        let small_bytes: u64 = self
            .values
            .iter()
            .filter(|s| small(s))
            .map(|s| referred(s))
            .sum();
        let merge_small = small_bytes >= segment_bytes / 4;
        self.values
            .iter()
            .filter(|s| {
                stale.iter().any(|t| t.generation == s.generation)
                    || (merge_small && small(s) && referred(s) > 0)
            })
            .cloned()
            .collect()
    }

    /// What a compaction merges to collect the segments `collect` when no merge is due (its
    /// inputs and the level of its output), if any run refers to them: the run newest in a
    /// level below 0 that refers most to them, rewritten alone in its place (its copy, of a
    /// newer generation, stays the newest there), or level 0 merged down as its trigger would
    /// (a copy in level 0 could take a generation older than a flush that ends after it) when
    /// level 0's runs refer to more.
    pub(crate) fn collection_job(
        &self,
        collect: &[Arc<Segment>],
        spec: &LsmSpec,
    ) -> Option<(Vec<Arc<RunFile>>, usize)> {
        let bytes = |r: &RunFile| -> u64 {
            collect
                .iter()
                .filter_map(|s| r.refs.get(&s.generation))
                .sum()
        };
        let level0: u64 = self
            .levels
            .first()
            .map_or(0, |l| l.iter().map(|r| bytes(r)).sum());
        let below = self
            .levels
            .iter()
            .skip(1)
            .filter_map(|l| l.first())
            .map(|r| (bytes(r), r))
            .filter(|(b, _)| *b > 0)
            .max_by_key(|(b, _)| *b);
        match below {
            Some((b, run)) if b >= level0 => Some((vec![Arc::clone(run)], run.level)),
            _ if level0 > 0 => Some((self.inputs(Job { from: 0 }, spec), 1)),
            _ => None,
        }
    }

    /// The segment of generation `generation`.
    fn segment(&self, generation: u64) -> Option<&Arc<Segment>> {
        self.values
            .binary_search_by_key(&generation, |s| s.generation)
            .ok()
            .map(|i| &self.values[i])
    }

    /// The value of `key` that the tagged record `tagged` of the run `run` stands for: the
    /// value, a tombstone (`None`), or the value its reference finds in the value log.
    pub(crate) fn value_of(
        &self,
        run: &str,
        key: &[u8],
        tagged: Vec<u8>,
    ) -> Result<Option<Vec<u8>>> {
        if !is_ref(&tagged) {
            return untag(tagged).map_err(|e| named(e, run));
        }
        let (generation, len) = decode_ref(&tagged).map_err(|e| named(e, run))?;
        match self.segment(generation) {
            Some(segment) => segment.value(key, len).map(Some),
            None => Err(Error::Corrupt {
                file: run.to_string(),
                block: None,
                what: format!(
                    "a record refers to the value log segment of generation {generation}, \
                     which the store does not hold"
                ),
            }),
        }
    }

    /// The manifest naming these levels' runs and then their value log segments.
    pub(crate) fn manifest(&self, store: u128, next_generation: u64) -> Manifest {
        let segments = self.values.iter();
        Manifest {
            static_files: self
                .runs()
                .map(|r| r.name.clone())
                .chain(segments.clone().map(|s| s.name.clone()))
                .collect(),
            wal_segments: Vec::new(),
            static_seq: self.flushed_seq,
            meta: encode_meta(&StoreMeta {
                next_generation,
                store,
                files: self
                    .runs()
                    .map(|r| r.identity)
                    .chain(segments.map(|s| s.identity))
                    .collect(),
                value_refs: self
                    .runs()
                    .flat_map(|r| {
                        r.refs.iter().map(|(&segment, &bytes)| ValueRefs {
                            run: r.identity.generation,
                            segment,
                            bytes,
                        })
                    })
                    .collect(),
            }),
        }
    }
}

impl Resolve for Levels {
    fn resolve(&self, file: &str, key: &[u8], tagged: Vec<u8>) -> Result<Option<Vec<u8>>> {
        self.value_of(file, key, tagged)
    }
}

/// The spec of an `lsm` store.
pub(crate) fn spec_of(inner: &Inner) -> LsmSpec {
    match inner.base.identity.engine {
        Engine::Lsm(spec) => spec,
        _ => LsmSpec::default(),
    }
}

/// The bytes a memtable may take: half of what the runs' models and filters leave of the
/// budget (one memtable is written while the frozen one is flushed), at least
/// [`MIN_MEMTABLE`].
pub(crate) fn memtable_limit(inner: &Inner, runs: &Levels) -> usize {
    let budget = inner.base.options.memory_budget;
    (budget.saturating_sub(runs.memory_bytes()) / 2).max(MIN_MEMTABLE)
}

/// One source of a merge: a run's records in order, the current one copied out.
struct Source {
    records: crate::disk::byte_table::MergeRecords,
    key: Vec<u8>,
    value: Vec<u8>,
    live: bool,
}

impl Source {
    fn new(run: &RunFile) -> Result<Source> {
        let mut s = Source {
            records: run.table.merge_records(),
            key: Vec::new(),
            value: Vec::new(),
            live: true,
        };
        s.advance()?;
        Ok(s)
    }

    fn advance(&mut self) -> Result<()> {
        match self.records.next_record()? {
            Some((k, v)) => {
                self.key.clear();
                self.key.extend_from_slice(k);
                self.value.clear();
                self.value.extend_from_slice(v);
            }
            None => self.live = false,
        }
        Ok(())
    }
}

/// Where a merge writes: a new run file, its records counted.
pub(crate) struct RunWriter<'a> {
    inner: &'a Inner,
    writer: ByteTableWriter,
    name: String,
    level: usize,
    generation: u64,
    /// Drop tombstones: nothing older lies below the output.
    last_level: bool,
    tagged: Vec<u8>,
    /// Values of at least this many bytes go to the value log (0: none).
    vmin: usize,
    /// Where they go.
    values: SegmentWriter<'a>,
    /// The segments whose values are copied rather than referred to again.
    collect: Collected,
    /// Bytes of values the run refers to in each segment.
    refs: RefBytes,
}

/// A finished run (`None` when it holds no record) and the value log segments written with
/// it.
pub(crate) type Written = (Option<Arc<RunFile>>, Vec<Arc<Segment>>);

impl<'a> RunWriter<'a> {
    /// A new run at `level` for up to `records` records; the values of the segments in
    /// `collect` (by generation) are copied to new segments.
    pub(crate) fn create(
        inner: &'a Inner,
        level: usize,
        records: u64,
        last_level: bool,
        collect: Vec<Arc<Segment>>,
    ) -> Result<RunWriter<'a>> {
        let generation = inner.next_generation.fetch_add(1, Ordering::Relaxed);
        let name = run_name(level, generation);
        let params = ByteTableParams {
            model: inner.base.identity.model,
        };
        let owner = FileOwner {
            store: inner.base.store,
            generation,
        };
        let writer = ByteTableWriter::create(&inner.storage, &name, params)?
            .owned_by(owner)
            .of_kind(ByteTableKind::Run)
            .with_filter(records, spec_of(inner).bits as u32)?;
        Ok(RunWriter {
            inner,
            writer,
            name,
            level,
            generation,
            last_level,
            tagged: Vec::new(),
            vmin: spec_of(inner).vmin,
            values: SegmentWriter::new(inner),
            collect: Collected::new(collect),
            refs: RefBytes::new(),
        })
    }

    /// Writes `value` of `key` to the value log and its reference to `self.tagged`.
    fn separate(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let segment = self.values.add(key, value)?;
        self.tagged.clear();
        encode_ref(&mut self.tagged, segment, value.len() as u32);
        *self.refs.entry(segment).or_default() += value.len() as u64;
        Ok(())
    }

    /// Adds `key` with `value` (`None`: a tombstone, dropped when no run lies below the
    /// output).
    pub(crate) fn add(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        match value {
            Some(v) if self.vmin > 0 && v.len() >= self.vmin => {
                self.separate(key, v)?;
                self.writer.add(key, &self.tagged)
            }
            Some(v) => {
                self.tagged.clear();
                self.tagged.push(PUT);
                self.tagged.extend_from_slice(v);
                self.writer.add(key, &self.tagged)
            }
            None if self.last_level => Ok(()),
            None => self.writer.add(key, &[TOMBSTONE]),
        }
    }

    /// Adds a record already tagged (from run `run`), dropping a tombstone at the last level
    /// and copying a value out of a segment being collected.
    fn add_tagged(&mut self, run: &str, key: &[u8], tagged: &[u8]) -> Result<()> {
        if tagged.first() == Some(&TOMBSTONE) && self.last_level {
            return Ok(());
        }
        if !is_ref(tagged) {
            return self.writer.add(key, tagged);
        }
        let (generation, len) = decode_ref(tagged).map_err(|e| named(e, run))?;
        match self.collect.value(generation, key, len)? {
            Some(value) => {
                self.separate(key, &value)?;
                self.writer.add(key, &self.tagged)
            }
            None => {
                *self.refs.entry(generation).or_default() += u64::from(len);
                self.writer.add(key, tagged)
            }
        }
    }

    /// Finishes the run (`None` when it holds no record: its file removed) and the segments
    /// written with it, all synced.
    pub(crate) fn finish(self) -> Result<Written> {
        let segments = self.values.finish()?;
        let empty = self.writer.records() == 0;
        let table = self.writer.finish()?;
        if empty {
            drop(table);
            self.inner.storage.remove(&self.name)?;
            return Ok((None, segments));
        }
        let identity = identify(&self.inner.storage, &self.name, self.generation)?;
        let run = RunFile::new(
            table,
            self.name,
            self.level,
            identity,
            &self.inner.storage,
            self.refs,
        );
        Ok((Some(run), segments))
    }
}

/// Merges `inputs` (newest first; among equal keys the newest wins) into one new run at
/// `level`, dropping tombstones when `last_level` and copying the values of the segments in
/// `collect` (sorted by generation) to new ones.
pub(crate) fn write_run(
    inner: &Inner,
    inputs: &[Arc<RunFile>],
    level: usize,
    last_level: bool,
    collect: Vec<Arc<Segment>>,
) -> Result<Written> {
    let records = inputs.iter().map(|r| r.table.len()).sum();
    let mut out = RunWriter::create(inner, level, records, last_level, collect)?;
    let mut sources: Vec<Source> = inputs
        .iter()
        .map(|r| Source::new(r))
        .collect::<Result<_>>()?;
    loop {
        let mut best: Option<usize> = None;
        for (i, s) in sources.iter().enumerate() {
            if s.live && best.is_none_or(|b| cmp_bytes(&s.key, &sources[b].key).is_lt()) {
                best = Some(i);
            }
        }
        let Some(b) = best else { break };
        out.add_tagged(&inputs[b].name, &sources[b].key, &sources[b].value)?;
        // The older versions of the key in later sources go unwritten.
        for j in 0..sources.len() {
            if j != b && sources[j].live && sources[j].key == sources[b].key {
                sources[j].advance()?;
            }
        }
        sources[b].advance()?;
    }
    out.finish()
}

impl Files for Runs {
    type Shared = Compactor;

    fn full(inner: &Inner, version: &Version<Runs>) -> bool {
        let mem = version.mem.read();
        mem.len() > 0 && mem.memory_bytes() >= memtable_limit(inner, &version.files)
    }

    /// Flushes the frozen memtable into a new run at level 0 (tombstones kept unless no run
    /// lies below), commits and publishes it, and wakes the compaction thread.
    fn merge(inner: &Inner) -> Result<()> {
        // Waits first, holding no version: runs a compaction retires meanwhile are removed.
        inner.shared.wait_for_room(inner, &spec_of(inner))?;
        let version = inner.current();
        let Some(frozen) = version.frozen.clone() else {
            return Ok(());
        };
        let frozen_seq = version.frozen_seq;
        let (run, segments) = {
            let frozen = frozen.read();
            let last_level = version.files.runs().next().is_none();
            let mut out = RunWriter::create(inner, 0, frozen.len() as u64, last_level, Vec::new())?;
            for (k, v) in frozen.newest_entries(Seq::MAX) {
                out.add(k, v)?;
            }
            out.finish()?
        };
        let written = written_bytes(&run, &segments);
        {
            let mut manifest = inner.manifest.lock();
            let current = inner.current();
            // A flush drops no reference: no segment dies.
            let (levels, _) = current
                .files
                .replace(&[], run, frozen_seq)
                .settle_values(segments);
            let next = inner.next_generation.load(Ordering::Relaxed);
            commit(&mut manifest, &levels.manifest(inner.base.store, next))?;
            inner.publish_files(Arc::new(levels), true)?;
        }
        inner.shared.flushed(written);
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        // One hash of the key serves every run's filter and point index.
        let hash = key_hash(key);
        for run in self.runs() {
            if !run.table.may_contain_hashed(hash) {
                continue;
            }
            if let Some(tagged) = run.table.get_hashed(key, hash)? {
                return self.value_of(&run.name, key, tagged);
            }
        }
        Ok(None)
    }

    fn cursors(&self, bounds: &KeyRange, forward: bool) -> Vec<FileCursor> {
        self.runs()
            .map(|r| FileCursor {
                cursor: r
                    .table
                    .cursor(bounds.start.clone(), bounds.end.clone(), forward),
                tagged: true,
                name: r.name.clone(),
                values: (!self.values.is_empty()).then(|| Arc::clone(self) as Arc<dyn Resolve>),
            })
            .collect()
    }
}

/// Bytes on disk of a run and the segments written with it.
pub(crate) fn written_bytes(run: &Option<Arc<RunFile>>, segments: &[Arc<Segment>]) -> u64 {
    run.as_ref().map_or(0, |r| r.table.disk_bytes())
        + segments.iter().map(|s| s.table.disk_bytes()).sum::<u64>()
}

/// Marks `runs` replaced and `segments` no longer referred to: each file goes when its last
/// reader lets go.
pub(crate) fn retire(runs: &[Arc<RunFile>], segments: &[Arc<Segment>]) {
    for r in runs {
        r.retire();
    }
    for s in segments {
        s.retire();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Storage;

    /// A run of `records` 100-byte records at `level`, generation `g`, on `storage`.
    fn run(storage: &Arc<Storage>, level: usize, g: u64, records: u64) -> Arc<RunFile> {
        let name = run_name(level, g);
        let mut w = ByteTableWriter::create(storage, &name, ByteTableParams::default())
            .unwrap()
            .of_kind(ByteTableKind::Run);
        for i in 0..records {
            w.add(&i.to_be_bytes(), &[PUT; 100]).unwrap();
        }
        let table = w.finish().unwrap();
        let identity = identify(storage, &name, g).unwrap();
        RunFile::new(table, name, level, identity, storage, RefBytes::new())
    }

    fn spec(ratio: usize, l0: usize) -> LsmSpec {
        LsmSpec {
            ratio,
            l0,
            bits: 10,
            runs: 1,
            vmin: 0,
        }
    }

    #[test]
    fn a_tiered_level_merges_its_runs_alone_once_it_holds_its_count() {
        let storage = Arc::new(Storage::ram());
        let tiered = LsmSpec {
            runs: 3,
            ..spec(10, 4)
        };
        let (r0, r1, r2) = (
            run(&storage, 1, 4, 10),
            run(&storage, 1, 3, 10),
            run(&storage, 2, 1, 2_000),
        );
        let under = Levels {
            levels: vec![
                vec![],
                vec![Arc::clone(&r0), Arc::clone(&r1)],
                vec![Arc::clone(&r2)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
        };
        // Two of three runs at level 1, one at level 2: nothing due, whatever the bytes.
        assert_eq!(under.next_job(&tiered, 1), None);
        let r3 = run(&storage, 1, 5, 10);
        let full = under.replace(&[], Some(Arc::clone(&r3)), 0);
        let job = full.next_job(&tiered, 1).expect("level 1 holds three runs");
        assert_eq!(job, Job { from: 1 });
        // It reads level 1's runs only, newest first, and keeps tombstones: level 2 holds an
        // older run. Leveled, the same job would read level 2's run too.
        let inputs = full.inputs(job, &tiered);
        let names: Vec<&str> = inputs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [r3.name.as_str(), r0.name.as_str(), r1.name.as_str()]
        );
        assert!(!full.nothing_older(1, &inputs));
        assert_eq!(full.inputs(job, &spec(10, 4)).len(), 4);
        assert!(full.nothing_older(1, &full.inputs(job, &spec(10, 4))));
        // Its output joins level 2 as the newest run there.
        let out = run(&storage, 2, 6, 30);
        let merged = full.replace(&inputs, Some(Arc::clone(&out)), 0);
        let level2: Vec<&str> = merged.levels[2].iter().map(|r| r.name.as_str()).collect();
        assert_eq!(level2, [out.name.as_str(), r2.name.as_str()]);
        assert!(merged.levels[1].is_empty());
    }

    #[test]
    fn the_level_furthest_past_its_trigger_merges_first() {
        let storage = Arc::new(Storage::ram());
        let (small, big) = (run(&storage, 0, 1, 10), run(&storage, 1, 2, 2_000));
        let bytes = big.table.disk_bytes() as usize;
        // Nothing due: two of four runs at level 0, level 1 under its target.
        let levels = Levels {
            levels: vec![
                vec![Arc::clone(&small), Arc::clone(&small)],
                vec![Arc::clone(&big)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
        };
        assert_eq!(levels.next_job(&spec(10, 4), bytes), None);
        // Level 0 full: it goes.
        let full = Levels {
            levels: vec![vec![Arc::clone(&small); 4], vec![Arc::clone(&big)]],
            flushed_seq: 0,
            values: Vec::new(),
        };
        assert_eq!(full.next_job(&spec(10, 4), bytes), Some(Job { from: 0 }));
        // Level 1 at 8 times its target (memtables of a 32nd of its bytes, 4 of them) beats
        // level 0 at its trigger: it is pushed down though level 0 is full.
        assert_eq!(
            full.next_job(&spec(10, 4), bytes / 32),
            Some(Job { from: 1 })
        );
    }

    #[test]
    fn replacing_runs_keeps_the_others_and_places_the_output() {
        let storage = Arc::new(Storage::ram());
        let (a, b, c) = (
            run(&storage, 0, 3, 5),
            run(&storage, 0, 2, 5),
            run(&storage, 1, 1, 5),
        );
        let levels = Levels {
            levels: vec![vec![Arc::clone(&a), Arc::clone(&b)], vec![Arc::clone(&c)]],
            flushed_seq: 7,
            values: Vec::new(),
        };
        // A flush: the new run first at level 0.
        let d = run(&storage, 0, 4, 5);
        let flushed = levels.replace(&[], Some(Arc::clone(&d)), 9);
        let names = |l: &Levels| -> Vec<Vec<String>> {
            l.levels
                .iter()
                .map(|runs| runs.iter().map(|r| r.name.clone()).collect())
                .collect()
        };
        assert_eq!(
            names(&flushed),
            vec![
                vec![d.name.clone(), a.name.clone(), b.name.clone()],
                vec![c.name.clone()]
            ]
        );
        assert_eq!(flushed.flushed_seq, 9);
        // A compaction of level 0 and 1 into a new level 1, while `d` arrived: `d` stays.
        let e = run(&storage, 1, 5, 15);
        let compacted = flushed.replace(&[a, b, Arc::clone(&c)], Some(Arc::clone(&e)), 9);
        assert_eq!(
            names(&compacted),
            vec![vec![d.name.clone()], vec![e.name.clone()]]
        );
        // An empty output: the level goes, and trailing empty levels with it.
        let gone = compacted.replace(&[e], None, 9);
        assert_eq!(names(&gone), vec![vec![d.name.clone()]]);
        let m = compacted.manifest(7, 6);
        assert_eq!(m.static_files, vec![d.name.clone(), run_name(1, 5)]);
        assert_eq!(m.static_seq, 9);
    }

    #[test]
    fn a_manifest_s_runs_are_placed_or_refused() {
        let id = |generation| FileIdentity {
            generation,
            bytes: 0,
            header_crc: 0,
        };
        let files = |list: &[(&str, u64)]| -> Vec<(String, FileIdentity)> {
            list.iter().map(|&(n, g)| (n.to_string(), id(g))).collect()
        };
        let ok = files(&[
            ("run-00-0000000003.lbt", 3),
            ("run-00-0000000002.lbt", 2),
            ("run-02-0000000001.lbt", 1),
        ]);
        assert_eq!(plan_levels(&ok, false), Ok(vec![0, 0, 2]));
        // A tiered store's level holds several runs.
        let two = files(&[("run-01-0000000003.lbt", 3), ("run-01-0000000002.lbt", 2)]);
        assert_eq!(plan_levels(&two, true), Ok(vec![1, 1]));
        for bad in [
            files(&[("table-0000000001.lbt", 1)]),
            files(&[("run-00-0000000003.lbt", 4)]),
            files(&[("run-00-0000000003.lbt", 3), ("run-00-0000000003.lbt", 3)]),
            files(&[("run-01-0000000003.lbt", 3), ("run-01-0000000002.lbt", 2)]),
            files(&[("run-+1-0000000003.lbt", 3)]),
        ] {
            assert!(plan_levels(&bad, false).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn run_names_round_trip_and_others_are_not_runs() {
        assert_eq!(run_name(3, 42), "run-03-0000000042.lbt");
        assert_eq!(parse_run_name(&run_name(3, 42)), Some((3, 42)));
        for other in [
            "table-0000000001.lbt",
            "run-3-0000000042.lbt",
            "run-03-42.lbt",
            "run-03-0000000042.lbf",
        ] {
            assert!(!is_run_name(other), "{other}");
        }
    }
}
