//! The `lsm` engine's files: its sorted runs ([`RunFile`]) in levels ([`Levels`]), how a
//! frozen memtable is flushed into level 0, which merge a compaction does next
//! ([`Levels::next_job`]) and how runs are merged into one ([`write_run`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;

use crate::disk::byte_table::{
    key_hash, ByteTable, ByteTableKind, ByteTableParams, ByteTableWriter, KeyFilter, TableCursor,
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
use crate::kv::store::staged_read::{named, untag, FileCursor, Resolve, Then, PUT, TOMBSTONE};
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
/// recorded one, a run named twice. (A level below 0 holds any number of runs: disjoint
/// ones when leveled, [`Levels::check_partitions`], up to the spec's `runs` when tiered, more
/// while a merge is behind.) What an open refuses and `Store::check` reports.
pub(crate) fn plan_levels(
    files: &[(String, FileIdentity)],
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
        levels.push(level);
    }
    Ok(levels)
}

/// What is wrong with the runs of a leveled store (each with its level, name, first and last
/// keys), if anything: two runs of a level below 0 whose key ranges overlap (a get asks one
/// run a level there). What an open refuses and `Store::check` reports.
pub(crate) fn check_disjoint<'a>(
    runs: impl Iterator<Item = (usize, &'a str, &'a [u8], &'a [u8])>,
) -> std::result::Result<(), String> {
    let mut below: Vec<_> = runs.filter(|(level, ..)| *level > 0).collect();
    below.sort_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
    for pair in below.windows(2) {
        let ((level, a, _, last), (next, b, first, _)) = (pair[0], pair[1]);
        if level == next && last >= first {
            return Err(format!(
                "{a} and {b} lie at level {level} and their key ranges overlap"
            ));
        }
    }
    Ok(())
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
    /// Its key filter while the store holds it in memory ([`Levels::shed_filters`]); taken
    /// out of the table, which then answers every key with "may hold".
    filter: ArcSwapOption<KeyFilter>,
    pub(crate) level: usize,
    /// What the manifest records of it.
    pub(crate) identity: FileIdentity,
    /// Bytes of values it refers to in each value log segment.
    pub(crate) refs: RefBytes,
    /// Its first and last keys: where it lies in a partitioned level.
    pub(crate) first: Vec<u8>,
    pub(crate) last: Vec<u8>,
}

impl RunFile {
    /// The run of the open `table`, whose first and last keys are `range` (read from the
    /// table when `None`: at open).
    pub(crate) fn new(
        mut table: ByteTable,
        name: String,
        level: usize,
        identity: FileIdentity,
        storage: &Arc<Storage>,
        refs: RefBytes,
        range: Option<(Vec<u8>, Vec<u8>)>,
    ) -> Result<Arc<RunFile>> {
        let filter = ArcSwapOption::from(table.take_filter().map(Arc::new));
        let file = TableFile::new(table, name, storage);
        let (first, last) = match range {
            Some(range) => range,
            None => key_range(&file)?,
        };
        Ok(Arc::new(RunFile {
            file,
            filter,
            level,
            identity,
            refs,
            first,
            last,
        }))
    }

    /// This run under the name `name` at `level`, the same file linked there (a trivial
    /// move), its filter held if it is now.
    fn moved(&self, name: String, level: usize) -> Arc<RunFile> {
        Arc::new(RunFile {
            file: self.file.renamed(name),
            filter: ArcSwapOption::new(self.filter.load_full()),
            level,
            identity: self.identity,
            refs: self.refs.clone(),
            first: self.first.clone(),
            last: self.last.clone(),
        })
    }

    /// False when the run surely does not hold the key whose
    /// [`key_hash`](crate::disk::byte_table::key_hash) is `hash`: its filter, if held, says so.
    #[inline]
    fn may_contain_hashed(&self, hash: u64) -> bool {
        self.filter
            .load()
            .as_ref()
            .is_none_or(|f| f.may_contain_hash(hash))
    }

    /// Bytes of memory of its filter while held (0 when shed or when it has none).
    pub(crate) fn filter_bytes(&self) -> usize {
        self.filter.load().as_ref().map_or(0, |f| f.memory_bytes())
    }

    /// Bytes of memory of the table's model (its separators' index; the filter apart).
    fn model_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    /// Bytes of memory of its filter while held, after letting it go when `room` (bytes) is
    /// smaller; a filter let go is not read back (the run keeps it on disk until a merge
    /// rewrites it).
    fn hold_filter_within(&self, room: usize) -> usize {
        match self.filter_bytes() {
            bytes if bytes <= room => bytes,
            _ => {
                self.filter.store(None);
                0
            }
        }
    }

    /// Bytes of keys and tagged values it holds (what a merge's cut counts).
    fn record_bytes(&self) -> u64 {
        let header = self.table.header();
        header.key_bytes + header.value_bytes
    }

    /// True when some key lies in both its range and `first..=last`.
    fn meets(&self, first: &[u8], last: &[u8]) -> bool {
        cmp_bytes(&self.first, last).is_le() && cmp_bytes(first, &self.last).is_le()
    }

    /// True when some key lies in both its range and `other`'s.
    fn overlaps(&self, other: &RunFile) -> bool {
        self.meets(&other.first, &other.last)
    }
}

/// The first and last keys of a run read from its file (a run is never empty).
fn key_range(file: &TableFile) -> Result<(Vec<u8>, Vec<u8>)> {
    let end = |forward| -> Result<Vec<u8>> {
        let mut cursor = file.table.cursor(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            forward,
        );
        match cursor.next_record()? {
            Some((key, _)) => Ok(key),
            None => Err(Error::Corrupt {
                file: file.name.clone(),
                block: None,
                what: "an lsm run without records".into(),
            }),
        }
    };
    Ok((end(true)?, end(false)?))
}

impl std::ops::Deref for RunFile {
    type Target = TableFile;

    fn deref(&self) -> &TableFile {
        &self.file
    }
}

/// The runs of one version, by level: level 0's newest first (they may overlap); below,
/// leveled (partitioned), runs of disjoint key ranges in key order, and tiered, up to the
/// spec's `runs` runs (more while a merge is behind), newest first.
#[derive(Default)]
pub(crate) struct Levels {
    pub(crate) levels: Vec<Vec<Arc<RunFile>>>,
    /// The log sequence number the runs hold every record up to.
    pub(crate) flushed_seq: Seq,
    /// The value log's segments the runs refer to, by generation.
    pub(crate) values: Vec<Arc<Segment>>,
    /// Leveled: the levels below 0 are partitioned (disjoint runs in key order).
    pub(crate) partitioned: bool,
    /// [`Levels::memory_bytes`] plus one, as [`Levels::shed_filters`] last left it (0 before
    /// it ran): every write asks it ([`memtable_limit`]), and summing it walks every run.
    pub(crate) memory: AtomicUsize,
}

/// The `lsm` engine's files.
pub(crate) type Runs = Arc<Levels>;

/// The `lsm` engine's state.
pub(crate) type Inner = Staged<Runs>;

/// A level a compaction empties into the next: level `from` (of a leveled store, every run
/// of it; of a tiered one, its runs into one new run at `from + 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Job {
    pub(crate) from: usize,
}

/// What a compaction does: runs it merges, runs it moves, where they go.
pub(crate) struct Plan {
    /// The runs merged into new runs at `into`, newest first.
    pub(crate) inputs: Vec<Arc<RunFile>>,
    /// The runs moved as they are (a trivial move: a run that overlaps no run of `into` and
    /// lies outside the merged runs' span), each linked under a new name at its level.
    pub(crate) moves: Vec<Move>,
    pub(crate) into: usize,
    /// No run outside the inputs can hold an older version of their keys: the merge drops
    /// tombstones.
    pub(crate) last_level: bool,
}

/// A run a compaction moves as it is, and the level it goes to: `into`, or deeper where no
/// level on the way down holds a run it overlaps ([`Levels::sink`]).
pub(crate) struct Move {
    pub(crate) run: Arc<RunFile>,
    pub(crate) to: usize,
}

impl Plan {
    /// The runs the plan takes out of their levels: its inputs and the runs it moves.
    pub(crate) fn removed(&self) -> Vec<Arc<RunFile>> {
        let moved = self.moves.iter().map(|m| &m.run);
        self.inputs.iter().chain(moved).cloned().collect()
    }
}

impl Levels {
    /// Every run, newest first: the order reads ask them in.
    pub(crate) fn runs(&self) -> impl Iterator<Item = &Arc<RunFile>> {
        self.levels.iter().flatten()
    }

    /// The runs that may hold `key`, newest first: every run of level 0 and of a tiered
    /// level, the one run of a partitioned level whose range holds it.
    fn runs_for<'a>(&'a self, key: &'a [u8]) -> impl Iterator<Item = &'a Arc<RunFile>> + 'a {
        self.levels
            .iter()
            .enumerate()
            .flat_map(move |(level, runs)| {
                let runs: &[Arc<RunFile>] = if level == 0 || !self.partitioned {
                    runs
                } else {
                    let at = runs.partition_point(|r| cmp_bytes(&r.last, key).is_lt());
                    match runs.get(at) {
                        Some(r) if cmp_bytes(&r.first, key).is_le() => &runs[at..=at],
                        _ => &[],
                    }
                };
                runs.iter()
            })
    }

    /// Bytes of a level's runs on disk.
    fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |l| l.iter().map(|r| r.table.disk_bytes()).sum())
    }

    /// Bytes of memory of the runs' models and held filters and of the value log segments'
    /// models: what [`Levels::shed_filters`] found if it ran on these levels (every version
    /// is published after it), summed over the runs otherwise.
    pub(crate) fn memory_bytes(&self) -> usize {
        match self.memory.load(Ordering::Relaxed) {
            0 => self.model_bytes() + self.runs().map(|r| r.filter_bytes()).sum::<usize>(),
            known => known - 1,
        }
    }

    /// Bytes of memory of the runs' models and of the value log segments' models.
    fn model_bytes(&self) -> usize {
        self.runs().map(|r| r.model_bytes()).sum::<usize>()
            + self
                .values
                .iter()
                .map(|s| s.table.memory_bytes())
                .sum::<usize>()
    }

    /// Keeps the runs' filters within half of `budget` with the models: walking the runs in
    /// the order a get asks them (level 0 newest first, then each level down), each keeps
    /// its filter while the models and the filters kept so far fit, and lets it go
    /// otherwise. The runs asked first keep theirs: every get asks level 0, while a get of a
    /// key the store holds stops at the level that holds it (and most keys are in the last
    /// level, whose filter such gets never need; RocksDB's `optimize_filters_for_hits` drops
    /// that level's filters for the same reason). A run without its filter answers a get of
    /// a key it lacks with one block read. Returns the bytes of the filters kept.
    pub(crate) fn shed_filters(&self, budget: usize) -> usize {
        let models = self.model_bytes();
        let mut room = (budget / 2).saturating_sub(models);
        let mut kept = 0;
        for run in self.runs() {
            let held = run.hold_filter_within(room);
            room -= held;
            kept += held;
        }
        self.memory.store(models + kept + 1, Ordering::Relaxed);
        kept
    }

    /// Runs whose filter is on disk but not held in memory.
    pub(crate) fn shed_runs(&self) -> usize {
        self.runs()
            .filter(|r| r.table.header().filter.is_some() && r.filter_bytes() == 0)
            .count()
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

    /// What `job` does. Tiered: level `from`'s runs merged into one, the newest of the next
    /// level. Leveled: the runs of level `from` that overlap a run of the next level (or, at
    /// level 0, another run of their own) are merged, with every run of their level within
    /// their span, and with the next level's runs that meet that span (as RocksDB picks a
    /// compaction's inputs), into new runs in their place; the others, outside that span and
    /// over no run of the next level, are moved there or deeper ([`Levels::sink`]), unless
    /// they hold under a quarter of `run_bytes` of records (what a merge cuts its runs at),
    /// which are merged, so that tiny runs (of tiny memtables) are gathered into bigger ones
    /// rather than moved down one by one. So a key range written in order (a load in key
    /// order) goes down without being rewritten, and the level stays disjoint: nothing is
    /// left or moved inside the span of the merge's output.
    pub(crate) fn plan(&self, job: Job, run_bytes: u64) -> Plan {
        let into = job.from + 1;
        let from: &[Arc<RunFile>] = self.levels.get(job.from).map_or(&[], Vec::as_slice);
        if !self.partitioned {
            return self.plan_of(from.to_vec(), Vec::new(), into);
        }
        let next: &[Arc<RunFile>] = self.levels.get(into).map_or(&[], Vec::as_slice);
        let mut merged: Vec<bool> = from
            .iter()
            .map(|r| {
                r.record_bytes() < run_bytes / 4
                    || next.iter().any(|n| n.overlaps(r))
                    || (job.from == 0 && from.iter().any(|o| !Arc::ptr_eq(o, r) && o.overlaps(r)))
            })
            .collect();
        let span = |merged: &[bool]| -> Option<(&[u8], &[u8])> {
            let runs = from.iter().zip(merged).filter(|(_, &m)| m).map(|(r, _)| r);
            let first = runs.clone().map(|r| r.first.as_slice()).min()?;
            let last = runs.map(|r| r.last.as_slice()).max()?;
            Some((first, last))
        };
        // Every run within the span joins (which may widen it), until none does.
        while let Some((first, last)) = span(&merged) {
            let mut joined = false;
            for (r, m) in from.iter().zip(merged.iter_mut()) {
                if !*m && r.meets(first, last) {
                    (*m, joined) = (true, true);
                }
            }
            if !joined {
                break;
            }
        }
        let (mut inputs, mut moves) = (Vec::new(), Vec::new());
        for (r, &m) in from.iter().zip(&merged) {
            match m {
                true => inputs.push(Arc::clone(r)),
                false => moves.push(Move {
                    run: Arc::clone(r),
                    to: self.sink(r, into),
                }),
            }
        }
        if let Some((first, last)) = span(&merged) {
            inputs.extend(next.iter().filter(|n| n.meets(first, last)).cloned());
        }
        self.plan_of(inputs, moves, into)
    }

    /// The deepest level a run moved into level `into` (which holds no run it overlaps) can
    /// go to: down from `into` while the next level holds no run it overlaps. Every level
    /// it passes holds nothing of its key range, so it still lies above every older version
    /// of its keys, and the level it lands in stays disjoint. The levels' targets do not
    /// stop it: a key range written in order goes straight to the bottom, and the levels
    /// above are left empty for the writes to come (a move that stopped at `into` left
    /// every level at its target, and the next random writes merged down through all of
    /// them).
    fn sink(&self, run: &RunFile, into: usize) -> usize {
        let mut to = into;
        while self
            .levels
            .get(to + 1)
            .is_some_and(|below| !below.iter().any(|n| n.overlaps(run)))
        {
            to += 1;
        }
        to
    }

    /// The plan that merges `inputs` and makes `moves` into level `into` (or below).
    fn plan_of(&self, inputs: Vec<Arc<RunFile>>, moves: Vec<Move>, into: usize) -> Plan {
        let last_level = self.nothing_older(&inputs);
        Plan {
            inputs,
            moves,
            into,
            last_level,
        }
    }

    /// True when no run outside `inputs`, at or below the shallowest of them, overlaps one of
    /// them: no older version of their keys lies under the merge's output, so it drops
    /// tombstones.
    pub(crate) fn nothing_older(&self, inputs: &[Arc<RunFile>]) -> bool {
        let from = inputs.iter().map(|r| r.level).min().unwrap_or(0);
        self.levels
            .iter()
            .skip(from)
            .flatten()
            .filter(|r| !inputs.iter().any(|i| i.name == r.name))
            .all(|r| !inputs.iter().any(|i| i.overlaps(r)))
    }

    /// These levels with the runs of `removed` (by name) gone, `added` at their levels, and
    /// `flushed_seq`.
    pub(crate) fn replace(
        &self,
        removed: &[Arc<RunFile>],
        added: Vec<Arc<RunFile>>,
        flushed_seq: Seq,
    ) -> Levels {
        let mut levels: Vec<Vec<Arc<RunFile>>> = self
            .levels
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|r| !removed.iter().any(|i| i.name == r.name))
                    .cloned()
                    .collect()
            })
            .collect();
        for run in added.into_iter().rev() {
            if levels.len() <= run.level {
                levels.resize_with(run.level + 1, Vec::new);
            }
            // Level 0's newest run first (a flush is newer than every run there), a tiered
            // level's too; a partitioned level in key order.
            let runs = &mut levels[run.level];
            let at = match self.partitioned && run.level > 0 {
                true => runs.partition_point(|r| cmp_bytes(&r.first, &run.first).is_lt()),
                false => 0,
            };
            runs.insert(at, run);
        }
        while levels.last().is_some_and(|l| l.is_empty()) {
            levels.pop();
        }
        Levels {
            levels,
            flushed_seq,
            values: self.values.clone(),
            partitioned: self.partitioned,
            memory: AtomicUsize::default(),
        }
    }

    /// What is wrong with the runs of the partitioned levels, if anything (see
    /// [`check_disjoint`]). What an open refuses.
    pub(crate) fn check_partitions(&self) -> std::result::Result<(), String> {
        match self.partitioned {
            true => check_disjoint(self.runs().map(|r| {
                (
                    r.level,
                    r.name.as_str(),
                    r.first.as_slice(),
                    r.last.as_slice(),
                )
            })),
            false => Ok(()),
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

    /// What a compaction merges to collect the segments `collect` when no merge is due, if
    /// any run refers to them: the run below level 0 that refers most to them (of a tiered
    /// level, its newest), rewritten alone in its place (its copy, of a newer generation,
    /// stays the newest of a tiered level; a partitioned level's copy lies in its range), or
    /// level 0 merged down as its trigger would (a copy in level 0 could take a generation
    /// older than a flush that ends after it) when level 0's runs refer to more.
    pub(crate) fn collection_job(&self, collect: &[Arc<Segment>], run_bytes: u64) -> Option<Plan> {
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
            .flat_map(|l| match self.partitioned {
                true => l.as_slice(),
                false => &l[..l.len().min(1)],
            })
            .map(|r| (bytes(r), r))
            .filter(|(b, _)| *b > 0)
            .max_by_key(|(b, _)| *b);
        match below {
            Some((b, run)) if b >= level0 => {
                Some(self.plan_of(vec![Arc::clone(run)], Vec::new(), run.level))
            }
            _ if level0 > 0 => Some(self.plan(Job { from: 0 }, run_bytes)),
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

/// Where a flush or merge writes: new run files at one level, records counted, the output
/// cut into several runs where a partitioned level needs it ([`RunWriter::cut`]).
pub(crate) struct RunWriter<'a> {
    inner: &'a Inner,
    level: usize,
    /// Drop tombstones: nothing older lies below the output.
    last_level: bool,
    tagged: Vec<u8>,
    /// Values of at least this many bytes go to the value log (0: none).
    vmin: usize,
    /// Where they go.
    values: SegmentWriter<'a>,
    /// The segments whose values are copied rather than referred to again.
    collect: Collected,
    /// The records each run's filter is sized for.
    records: u64,
    /// The run being written.
    run: OpenRun,
    /// The runs finished before it, in key order.
    done: Vec<Arc<RunFile>>,
}

/// A run being written.
struct OpenRun {
    writer: ByteTableWriter,
    name: String,
    generation: u64,
    /// Bytes of values it refers to in each segment.
    refs: RefBytes,
    first: Vec<u8>,
    last: Vec<u8>,
    /// Bytes of keys and tagged values written.
    bytes: u64,
}

impl OpenRun {
    fn create(inner: &Inner, level: usize, records: u64) -> Result<OpenRun> {
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
        Ok(OpenRun {
            writer,
            name,
            generation,
            refs: RefBytes::new(),
            first: Vec::new(),
            last: Vec::new(),
            bytes: 0,
        })
    }

    fn add(&mut self, key: &[u8], tagged: &[u8]) -> Result<()> {
        self.writer.add(key, tagged)?;
        if self.first.is_empty() {
            self.first = key.to_vec();
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.bytes += (key.len() + tagged.len()) as u64;
        Ok(())
    }

    /// The finished run (`None` when it holds no record: its file removed), synced.
    fn finish(self, inner: &Inner, level: usize) -> Result<Option<Arc<RunFile>>> {
        let empty = self.writer.records() == 0;
        let table = self.writer.finish()?;
        if empty {
            drop(table);
            inner.storage.remove(&self.name)?;
            return Ok(None);
        }
        let identity = identify(&inner.storage, &self.name, self.generation)?;
        let range = Some((self.first, self.last));
        let run = RunFile::new(
            table,
            self.name,
            level,
            identity,
            &inner.storage,
            self.refs,
            range,
        )?;
        Ok(Some(run))
    }
}

/// Finished runs (in key order; none when they hold no record) and the value log segments
/// written with them.
pub(crate) type Written = (Vec<Arc<RunFile>>, Vec<Arc<Segment>>);

impl<'a> RunWriter<'a> {
    /// New runs at `level`, each for up to `records` records; the values of the segments in
    /// `collect` (by generation) are copied to new segments.
    pub(crate) fn create(
        inner: &'a Inner,
        level: usize,
        records: u64,
        last_level: bool,
        collect: Vec<Arc<Segment>>,
    ) -> Result<RunWriter<'a>> {
        Ok(RunWriter {
            inner,
            level,
            last_level,
            tagged: Vec::new(),
            vmin: spec_of(inner).vmin,
            values: SegmentWriter::new(inner),
            collect: Collected::new(collect),
            records,
            run: OpenRun::create(inner, level, records)?,
            done: Vec::new(),
        })
    }

    /// Records in the run being written.
    fn records(&self) -> u64 {
        self.run.writer.records()
    }

    /// Finishes the run being written (when it holds records) and starts the next one.
    fn cut(&mut self) -> Result<()> {
        if self.records() == 0 {
            return Ok(());
        }
        let next = OpenRun::create(self.inner, self.level, self.records)?;
        let run = std::mem::replace(&mut self.run, next);
        self.done.extend(run.finish(self.inner, self.level)?);
        Ok(())
    }

    /// Writes `value` of `key` to the value log and its reference to `self.tagged`.
    fn separate(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let segment = self.values.add(key, value)?;
        self.tagged.clear();
        encode_ref(&mut self.tagged, segment, value.len() as u32);
        *self.run.refs.entry(segment).or_default() += value.len() as u64;
        Ok(())
    }

    /// Adds `key` with `value` (`None`: a tombstone, dropped when no run lies below the
    /// output).
    pub(crate) fn add(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        match value {
            Some(v) if self.vmin > 0 && v.len() >= self.vmin => {
                self.separate(key, v)?;
                self.run.add(key, &self.tagged)
            }
            Some(v) => {
                self.tagged.clear();
                self.tagged.push(PUT);
                self.tagged.extend_from_slice(v);
                self.run.add(key, &self.tagged)
            }
            None if self.last_level => Ok(()),
            None => self.run.add(key, &[TOMBSTONE]),
        }
    }

    /// Adds a record already tagged (from run `run`), dropping a tombstone at the last level
    /// and copying a value out of a segment being collected.
    fn add_tagged(&mut self, run: &str, key: &[u8], tagged: &[u8]) -> Result<()> {
        if tagged.first() == Some(&TOMBSTONE) && self.last_level {
            return Ok(());
        }
        if !is_ref(tagged) {
            return self.run.add(key, tagged);
        }
        let (generation, len) = decode_ref(tagged).map_err(|e| named(e, run))?;
        match self.collect.value(generation, key, len)? {
            Some(value) => {
                self.separate(key, &value)?;
                self.run.add(key, &self.tagged)
            }
            None => {
                *self.run.refs.entry(generation).or_default() += u64::from(len);
                self.run.add(key, tagged)
            }
        }
    }

    /// Finishes the runs and the segments written with them, all synced.
    pub(crate) fn finish(mut self) -> Result<Written> {
        let segments = self.values.finish()?;
        let (inner, level) = (self.inner, self.level);
        self.done.extend(self.run.finish(inner, level)?);
        Ok((self.done, segments))
    }
}

/// Merges `plan`'s inputs (newest first; among equal keys the newest wins) into new runs at
/// its level, dropping tombstones at the last level, cutting the output after about
/// `cut_bytes` of records when it goes to a partitioned level, and copying the values of the
/// segments in `collect` (sorted by generation) to new ones.
pub(crate) fn write_run(
    inner: &Inner,
    plan: &Plan,
    cut_bytes: Option<u64>,
    collect: Vec<Arc<Segment>>,
) -> Result<Written> {
    let inputs = &plan.inputs;
    let records: u64 = inputs.iter().map(|r| r.table.len()).sum();
    // Each run's filter is sized for the records about `cut_bytes` hold, with room.
    let per_run = match cut_bytes {
        Some(cut) => {
            let bytes: u64 = inputs.iter().map(|r| r.record_bytes()).sum();
            let average = (bytes / records.max(1)).max(1);
            (cut / average * 3 / 2 + 16).min(records)
        }
        None => records,
    };
    let mut out = RunWriter::create(inner, plan.into, per_run, plan.last_level, collect)?;
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
        if cut_bytes.is_some_and(|c| out.run.bytes >= c) {
            out.cut()?;
        }
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
            levels.shed_filters(inner.base.options.memory_budget);
            inner.publish_files(Arc::new(levels), true)?;
        }
        inner.shared.flushed(written);
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        // One hash of the key serves every run's filter and point index.
        let hash = key_hash(key);
        for run in self.runs_for(key) {
            if !run.may_contain_hashed(hash) {
                continue;
            }
            if let Some(tagged) = run.table.get_hashed(key, hash)? {
                return self.value_of(&run.name, key, tagged);
            }
        }
        Ok(None)
    }

    /// A cursor per run of level 0 and of a tiered level; one per partitioned level, over
    /// its runs that meet `bounds` one after the other, each made when the scan reaches it,
    /// so that a short scan seeks one run of a level and makes no cursor for the others.
    fn cursors(&self, bounds: &KeyRange, forward: bool) -> Vec<FileCursor> {
        let values = (!self.values.is_empty()).then(|| Arc::clone(self) as Arc<dyn Resolve>);
        let file_cursor = |(cursor, name), then: Then| FileCursor {
            cursor,
            then,
            tagged: true,
            name,
            values: values.clone(),
        };
        let mut cursors = Vec::new();
        for (level, runs) in self.levels.iter().enumerate() {
            if !(self.partitioned && level > 0) {
                for r in runs.iter().filter(|r| bounds.meets(&r.first, &r.last)) {
                    let then: Then = Box::new(std::iter::empty());
                    cursors.push(file_cursor(cursor_of(r, bounds, forward), then));
                }
                continue;
            }
            // Disjoint runs in key order: those that meet `bounds` are one stretch of them.
            let from = runs.partition_point(|r| !bounds.reached_by(&r.last));
            let to = runs.partition_point(|r| bounds.not_passed_by(&r.first));
            let mut meeting: Vec<Arc<RunFile>> = runs[from..to.max(from)].to_vec();
            if !forward {
                meeting.reverse();
            }
            let mut meeting = meeting.into_iter();
            if let Some(first) = meeting.next() {
                let later = bounds.clone();
                let then: Then = Box::new(meeting.map(move |r| cursor_of(&r, &later, forward)));
                cursors.push(file_cursor(cursor_of(&first, bounds, forward), then));
            }
        }
        cursors
    }
}

/// A cursor over run `r` for `bounds`, with its name.
fn cursor_of(r: &RunFile, bounds: &KeyRange, forward: bool) -> (TableCursor, String) {
    (
        r.table
            .cursor(bounds.start.clone(), bounds.end.clone(), forward),
        r.name.clone(),
    )
}

/// Bytes on disk of runs and the segments written with them.
pub(crate) fn written_bytes(runs: &[Arc<RunFile>], segments: &[Arc<Segment>]) -> u64 {
    runs.iter().map(|r| r.table.disk_bytes()).sum::<u64>()
        + segments.iter().map(|s| s.table.disk_bytes()).sum::<u64>()
}

/// About the bytes of records a merge writes into one run of a partitioned level: a
/// memtable's (at least 64 KiB), so that level 1 holds about `l0` runs and a level's runs
/// are merged piecewise, as RocksDB cuts its files at `target_file_size_base`.
pub(crate) fn run_bytes(memtable: usize) -> u64 {
    memtable.max(64 << 10) as u64
}

/// Links each run `plan` moves under its name at the level it goes to: the moved runs, to be
/// committed in the old ones' place (their old names removed after the commit).
pub(crate) fn move_runs(inner: &Inner, plan: &Plan) -> Result<Vec<Arc<RunFile>>> {
    let names: Vec<String> = plan
        .moves
        .iter()
        .map(|m| run_name(m.to, m.run.identity.generation))
        .collect();
    let pairs: Vec<(&str, &str)> = plan
        .moves
        .iter()
        .zip(&names)
        .map(|(m, name)| (m.run.name.as_str(), name.as_str()))
        .collect();
    inner.storage.link(&pairs)?;
    Ok(plan
        .moves
        .iter()
        .zip(names)
        .map(|(m, name)| m.run.moved(name, m.to))
        .collect())
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
        keyed(storage, level, g, 0..records)
    }

    /// A run of the keys `keys` (as big-endian u64s) at `level`, generation `g`.
    fn keyed(
        storage: &Arc<Storage>,
        level: usize,
        g: u64,
        keys: std::ops::Range<u64>,
    ) -> Arc<RunFile> {
        written(storage, level, g, keys, None)
    }

    /// [`keyed`] for any keys in order, with a key filter sized for `filter.0` records at
    /// `filter.1` bits each when given.
    fn written(
        storage: &Arc<Storage>,
        level: usize,
        g: u64,
        keys: impl Iterator<Item = u64>,
        filter: Option<(u64, u32)>,
    ) -> Arc<RunFile> {
        let name = run_name(level, g);
        let mut w = ByteTableWriter::create(storage, &name, ByteTableParams::default())
            .unwrap()
            .of_kind(ByteTableKind::Run);
        if let Some((records, bits)) = filter {
            w = w.with_filter(records, bits).unwrap();
        }
        for i in keys {
            w.add(&i.to_be_bytes(), &[PUT; 100]).unwrap();
        }
        let table = w.finish().unwrap();
        let identity = identify(storage, &name, g).unwrap();
        RunFile::new(table, name, level, identity, storage, RefBytes::new(), None).unwrap()
    }

    fn names(runs: &[Arc<RunFile>]) -> Vec<&str> {
        runs.iter().map(|r| r.name.as_str()).collect()
    }

    /// A run of `records` 100-byte records of even keys at `level` with a key filter of 10
    /// bits a record.
    fn filtered(storage: &Arc<Storage>, level: usize, g: u64, records: u64) -> Arc<RunFile> {
        written(
            storage,
            level,
            g,
            (0..records).map(|i| i * 2),
            Some((records, 10)),
        )
    }

    #[test]
    fn filters_are_kept_from_the_first_run_a_get_asks_while_they_fit_in_half_the_budget() {
        let storage = Arc::new(Storage::ram());
        let levels = Levels {
            levels: vec![
                vec![
                    filtered(&storage, 0, 3, 1_000),
                    filtered(&storage, 0, 2, 1_000),
                ],
                vec![filtered(&storage, 1, 1, 4_000)],
                vec![filtered(&storage, 2, 0, 16_000)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        let bytes: Vec<usize> = levels.runs().map(|r| r.filter_bytes()).collect();
        assert!(bytes.iter().all(|&b| b > 0), "{bytes:?}");
        let models = levels.model_bytes();
        // Summed over the runs until the filters are shed, then as the shedding left it.
        assert_eq!(levels.memory_bytes(), models + bytes.iter().sum::<usize>());
        // An absent (odd) key the deepest run's filter rules out while it holds it.
        let deepest = levels.runs().last().unwrap();
        let absent = (1..1_000u64)
            .step_by(2)
            .map(|k| key_hash(&k.to_be_bytes()))
            .find(|&h| !deepest.may_contain_hashed(h))
            .unwrap();
        // Room for level 0 and level 1, not for level 2: the deepest run lets its filter go.
        let budget = 2 * (models + bytes[0] + bytes[1] + bytes[2]) + 1;
        assert_eq!(levels.shed_filters(budget), bytes[0] + bytes[1] + bytes[2]);
        assert_eq!(levels.shed_runs(), 1);
        assert_eq!(deepest.filter_bytes(), 0);
        assert_eq!(
            levels.memory_bytes(),
            models + bytes[0] + bytes[1] + bytes[2]
        );
        assert!(levels.memory_bytes() <= budget / 2);
        // Without its filter the run may hold any key, and still finds its own.
        assert!(deepest.may_contain_hashed(absent));
        let hash = key_hash(&2u64.to_be_bytes());
        assert!(deepest
            .table
            .get_hashed(&2u64.to_be_bytes(), hash)
            .unwrap()
            .is_some());
        // A moved run takes its filter along while it is held.
        let first = levels.runs().next().unwrap();
        assert_eq!(first.moved(run_name(1, 9), 1).filter_bytes(), bytes[0]);
        // A let-go filter is not read back when room comes, and a tighter budget goes on
        // from the deepest runs up: only the newest level-0 run fits.
        assert_eq!(
            levels.shed_filters(usize::MAX),
            bytes[0] + bytes[1] + bytes[2]
        );
        assert_eq!(levels.shed_filters(2 * (models + bytes[0])), bytes[0]);
        assert_eq!(levels.memory_bytes(), models + bytes[0]);
        assert_eq!(levels.shed_runs(), 3);
        assert!(levels.runs().next().unwrap().filter_bytes() > 0);
        // A budget the models alone fill keeps no filter.
        assert_eq!(levels.shed_filters(models), 0);
        assert_eq!(levels.memory_bytes(), models);
    }

    #[test]
    fn a_partitioned_level_moves_what_lies_outside_the_merge_s_span() {
        let storage = Arc::new(Storage::ram());
        // Level 0: two disjoint runs and two that overlap each other, and one that overlaps
        // nothing but lies between them; level 1: three runs.
        let (a, b) = (
            keyed(&storage, 0, 10, 0..10),
            keyed(&storage, 0, 11, 100..110),
        );
        let (c, d) = (
            keyed(&storage, 0, 12, 200..220),
            keyed(&storage, 0, 13, 210..230),
        );
        let e = keyed(&storage, 0, 14, 160..170);
        let (x, y, z) = (
            keyed(&storage, 1, 1, 50..60),
            keyed(&storage, 1, 2, 105..150),
            keyed(&storage, 1, 3, 300..400),
        );
        let levels = Levels {
            levels: vec![
                vec![
                    Arc::clone(&e),
                    Arc::clone(&d),
                    Arc::clone(&c),
                    Arc::clone(&b),
                    Arc::clone(&a),
                ],
                vec![Arc::clone(&x), Arc::clone(&y), Arc::clone(&z)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        assert_eq!(levels.check_partitions(), Ok(()));
        // A key is asked of level 0's runs and of the one level-1 run whose range holds it.
        let asked = |k: u64| -> Vec<String> {
            levels
                .runs_for(&k.to_be_bytes())
                .map(|r| r.name.clone())
                .collect()
        };
        assert_eq!(asked(120).len(), 6);
        assert_eq!(asked(120)[5], y.name);
        assert_eq!(asked(160).len(), 5);
        let plan = levels.plan(Job { from: 0 }, 0);
        // `b` overlaps `y`, `c` and `d` each other: merged, with `e`, which lies between them,
        // and `y`. `a` overlaps nothing outside their span: moved. `x` and `z` stay.
        let moved: Vec<_> = plan.moves.iter().map(|m| Arc::clone(&m.run)).collect();
        assert_eq!(names(&moved), [a.name.as_str()]);
        assert_eq!(plan.moves[0].to, 1);
        assert_eq!(
            names(&plan.inputs),
            [
                e.name.as_str(),
                d.name.as_str(),
                c.name.as_str(),
                b.name.as_str(),
                y.name.as_str()
            ]
        );
        assert_eq!(plan.into, 1);
        // Runs under a quarter of what a merge cuts at are merged, not moved.
        assert!(levels.plan(Job { from: 0 }, 1 << 20).moves.is_empty());
        // Nothing lies under level 1: the merge drops tombstones. With a level-2 run under
        // `b`'s keys it would not; under none of the inputs' keys, it still does.
        assert!(plan.last_level);
        let deeper = |keys| Levels {
            levels: vec![
                levels.levels[0].clone(),
                levels.levels[1].clone(),
                vec![keyed(&storage, 2, 20, keys)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        assert!(!deeper(100..101).plan(Job { from: 0 }, 0).last_level);
        assert!(deeper(500..600).plan(Job { from: 0 }, 0).last_level);
        // Outputs and moved runs take their places in key order.
        let out = keyed(&storage, 1, 30, 100..230);
        let moved = a.moved(run_name(1, 10), 1);
        let removed = plan.removed();
        let next = levels.replace(&removed, vec![Arc::clone(&out), Arc::clone(&moved)], 0);
        assert!(next.levels[0].is_empty());
        assert_eq!(
            names(&next.levels[1]),
            [
                moved.name.as_str(),
                x.name.as_str(),
                out.name.as_str(),
                z.name.as_str()
            ]
        );
        assert_eq!(next.check_partitions(), Ok(()));
        // Overlapping runs at one level are refused.
        let bad = Levels {
            levels: vec![
                vec![],
                vec![Arc::clone(&y), keyed(&storage, 1, 40, 140..160)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        assert!(bad.check_partitions().is_err());
    }

    #[test]
    fn a_moved_run_sinks_past_every_level_that_holds_none_of_its_keys() {
        let storage = Arc::new(Storage::ram());
        // Level 0: `a` overlaps nothing below it down to level 3; `b` overlaps a level-2
        // run; `c` overlaps a level-1 run, so it is merged.
        let a = keyed(&storage, 0, 10, 0..10);
        let b = keyed(&storage, 0, 11, 100..110);
        let c = keyed(&storage, 0, 12, 200..210);
        let levels = Levels {
            levels: vec![
                vec![Arc::clone(&c), Arc::clone(&b), Arc::clone(&a)],
                vec![keyed(&storage, 1, 1, 205..206)],
                vec![keyed(&storage, 2, 2, 105..106)],
                vec![keyed(&storage, 3, 3, 20..300)],
                vec![keyed(&storage, 4, 4, 5..6)],
            ],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        let plan = levels.plan(Job { from: 0 }, 0);
        let to: Vec<(&str, usize)> = plan
            .moves
            .iter()
            .map(|m| (m.run.name.as_str(), m.to))
            .collect();
        // `a` (keys 0..10) passes levels 1 to 3, whose runs do not meet it, and stops above
        // level 4's; `b` stops at level 1, above level 2's run.
        assert_eq!(to, [(b.name.as_str(), 1), (a.name.as_str(), 3)]);
        assert_eq!(names(&plan.inputs)[0], c.name.as_str());
        // The levels the runs land in stay disjoint, and every older version of a key lies
        // below its newer one.
        let moved: Vec<_> = plan
            .moves
            .iter()
            .map(|m| m.run.moved(run_name(m.to, m.run.identity.generation), m.to))
            .collect();
        let next = levels.replace(&plan.removed(), moved, 0);
        assert_eq!(next.check_partitions(), Ok(()));
        assert_eq!(names(&next.levels[3])[0], run_name(3, 10));
        assert_eq!(next.levels[3].len(), 2);
        // Level 1 holds `b`; its own run was an input of `c`'s merge (output not added here).
        assert_eq!(names(&next.levels[1]), [run_name(1, 11)]);
        // A level-1 push into an empty level 2 with nothing below moves into level 2.
        let lone = Levels {
            levels: vec![vec![], vec![keyed(&storage, 1, 5, 0..10)]],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        let plan = lone.plan(Job { from: 1 }, 0);
        assert_eq!(plan.moves.len(), 1);
        assert_eq!(plan.moves[0].to, 2);
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
            partitioned: false,
            memory: AtomicUsize::default(),
        };
        // Two of three runs at level 1, one at level 2: nothing due, whatever the bytes.
        assert_eq!(under.next_job(&tiered, 1), None);
        let r3 = run(&storage, 1, 5, 10);
        let full = under.replace(&[], vec![Arc::clone(&r3)], 0);
        let job = full.next_job(&tiered, 1).expect("level 1 holds three runs");
        assert_eq!(job, Job { from: 1 });
        // It reads level 1's runs only, newest first, and keeps tombstones: level 2 holds an
        // older run. With level 2's run among the inputs, nothing would be older.
        let plan = full.plan(job, 0);
        let inputs = plan.inputs;
        assert_eq!(
            names(&inputs),
            [r3.name.as_str(), r0.name.as_str(), r1.name.as_str()]
        );
        assert!(plan.moves.is_empty());
        assert!(!plan.last_level);
        let mut all = inputs.clone();
        all.push(Arc::clone(&r2));
        assert!(full.nothing_older(&all));
        // Its output joins level 2 as the newest run there.
        let out = run(&storage, 2, 6, 30);
        let merged = full.replace(&inputs, vec![Arc::clone(&out)], 0);
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
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        assert_eq!(levels.next_job(&spec(10, 4), bytes), None);
        // Level 0 full: it goes.
        let full = Levels {
            levels: vec![vec![Arc::clone(&small); 4], vec![Arc::clone(&big)]],
            flushed_seq: 0,
            values: Vec::new(),
            partitioned: true,
            memory: AtomicUsize::default(),
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
            partitioned: true,
            memory: AtomicUsize::default(),
        };
        // A flush: the new run first at level 0.
        let d = run(&storage, 0, 4, 5);
        let flushed = levels.replace(&[], vec![Arc::clone(&d)], 9);
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
        let compacted = flushed.replace(&[a, b, Arc::clone(&c)], vec![Arc::clone(&e)], 9);
        assert_eq!(
            names(&compacted),
            vec![vec![d.name.clone()], vec![e.name.clone()]]
        );
        // An empty output: the level goes, and trailing empty levels with it.
        let gone = compacted.replace(&[e], Vec::new(), 9);
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
        assert_eq!(plan_levels(&ok), Ok(vec![0, 0, 2]));
        // A level holds several runs (disjoint ones when leveled: checked once they are open).
        let two = files(&[("run-01-0000000003.lbt", 3), ("run-01-0000000002.lbt", 2)]);
        assert_eq!(plan_levels(&two), Ok(vec![1, 1]));
        for bad in [
            files(&[("table-0000000001.lbt", 1)]),
            files(&[("run-00-0000000003.lbt", 4)]),
            files(&[("run-00-0000000003.lbt", 3), ("run-00-0000000003.lbt", 3)]),
            files(&[("run-+1-0000000003.lbt", 3)]),
        ] {
            assert!(plan_levels(&bad).is_err(), "{bad:?}");
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
