//! Reading result files of every kind the commands write, for `lidx report`.
//!
//! # Schema
//!
//! Every record carries `schema`, its kind and the version of that kind's fields, as
//! `<kind>/<version>` (`bench/1`), and `command`, the command line of the process that wrote it.
//! Records written before the field existed have neither; they are read as the first version
//! of the kind their fields name (each kind has a field no other kind has, [`RecordKind::ALL`]).
//! A record of a version this build does not know (a newer lidx, or a damaged file) is refused
//! with a message naming the field, `schema`; a record missing a field its version requires is
//! refused with a message naming that field (serde's `missing field`). When a kind's fields
//! change, its version goes up and this module reads the old version into the new record.
//!
//! | kind | written by | record |
//! |---|---|---|
//! | `bench` | `lidx bench`, `lidx bench --workload insert` | [`BenchRecord`] |
//! | `bench-strings` | `lidx bench` on text or `str16` keys | [`StringRecord`] |
//! | `disk` | `lidx bench --on-disk` | [`DiskRecord`] |
//! | `zero-intervals` | `lidx stats --zero-interval --json`, a record per row (`lidx repro 002-table3`; no `schema` field, known by its fields) | [`ZeroIntervalRecord`] |
//! | `disk-updatable` | `lidx bench --on-disk` with the updatable runner (paper 003; no `schema` field yet, known by its fields) | [`DiskUpdateRecord`] |
//! | `ycsb` | `lidx ycsb` | [`KvRecord`] |
//! | `curve` | `lidx ycsb --curve --csv` | [`CurvePoint`] |
//! | `dims-approx`, `dims-structure`, `dims-update` | `lidx dims approx`, `structure`, `insert` / `retrain` | [`ApproxRecord`], [`StructureRecord`], [`DimsUpdateRecord`] |
//! | `recovery` | `lidx recovery` | [`RecoveryRecord`] |
//! | `join` | `lidx join` (its JSON line, saved with `>`) | [`JoinRecord`] |
//! | `tpcc` | `lidx tpcc` | [`TpccRecord`] |
//! | `start-nodes`, `start-mixed` | `lidx start calibrate --json`, `lidx start bench --out` (paper 004 Table I, Fig. 8) | [`NodeCostRecord`], [`MixedRecord`] |
//!
//! JSON lines may mix kinds; a CSV file holds one kind (its header names the fields).
//!
//! Each kind's record is one file of this folder (`bench.rs`, `ycsb.rs`, ...), so a record is
//! found by its kind, not by the runner that writes it; the runners and the report modules
//! import them from here.

mod bench;
mod dims_approx;
mod dims_structure;
mod dims_update;
mod disk;
mod disk_update;
mod join;
mod recovery;
mod start_mixed;
mod start_nodes;
mod strings;
mod tpcc;
mod ycsb;
mod zero_interval;

pub use bench::BenchRecord;
pub use dims_approx::ApproxRecord;
pub use dims_structure::StructureRecord;
pub use dims_update::DimsUpdateRecord;
pub use disk::DiskRecord;
pub use disk_update::DiskUpdateRecord;
pub use join::JoinRecord;
pub use recovery::RecoveryRecord;
pub use start_mixed::MixedRecord;
pub use start_nodes::NodeCostRecord;
pub use strings::StringRecord;
pub use tpcc::TpccRecord;
pub use ycsb::KvRecord;
pub use zero_interval::ZeroIntervalRecord;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::error::{BenchError, Result};
use crate::plot::CurvePoint;
use crate::report::Format;

/// The version of every kind's fields this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// The kinds of records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecordKind {
    /// [`BenchRecord`].
    Bench,
    /// [`StringRecord`].
    Strings,
    /// [`DiskRecord`].
    Disk,
    /// [`KvRecord`].
    Ycsb,
    /// [`CurvePoint`].
    Curve,
    /// [`ApproxRecord`].
    Approx,
    /// [`StructureRecord`].
    Structure,
    /// [`DimsUpdateRecord`].
    Update,
    /// [`RecoveryRecord`].
    Recovery,
    /// [`JoinRecord`].
    Join,
    /// [`DiskUpdateRecord`].
    Updatable,
    /// [`ZeroIntervalRecord`].
    ZeroInterval,
    /// [`NodeCostRecord`].
    StartNodes,
    /// [`MixedRecord`].
    StartMixed,
    /// [`TpccRecord`].
    Tpcc,
}

impl RecordKind {
    /// Every kind, with its name and the field only its records have.
    pub const ALL: [(RecordKind, &'static str, &'static str); 15] = [
        (RecordKind::Bench, "bench", "mean_log2_window"),
        (RecordKind::Strings, "bench-strings", "mean_window"),
        (RecordKind::Disk, "disk", "inner_blocks_per_op"),
        (RecordKind::Ycsb, "ycsb", "n_init"),
        (RecordKind::Curve, "curve", "memory_run_bytes"),
        (RecordKind::Approx, "dims-approx", "avg_error"),
        (RecordKind::Structure, "dims-structure", "structure"),
        (RecordKind::Update, "dims-update", "retrains"),
        (RecordKind::Recovery, "recovery", "recovery_s"),
        (RecordKind::Join, "join", "join_seconds"),
        (RecordKind::Updatable, "disk-updatable", "inner_read_per_op"),
        (RecordKind::ZeroInterval, "zero-intervals", "models_zero"),
        (RecordKind::StartNodes, "start-nodes", "header_cached_ns"),
        (RecordKind::StartMixed, "start-mixed", "mixed_op_ns"),
        (RecordKind::Tpcc, "tpcc", "new_order_per_min"),
    ];

    /// The kind's name, as `schema` spells it.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _, _)| *k == self)
            .map_or("", |(_, name, _)| name)
    }

    /// The `schema` value this build writes for the kind (`bench/1`).
    pub fn schema(self) -> String {
        format!("{}/{SCHEMA_VERSION}", self.name())
    }

    /// The kind whose distinctive field is among `fields`, for records without `schema`.
    fn sniff(fields: &[&str]) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, _, field)| fields.contains(field))
            .map(|(kind, _, _)| *kind)
    }

    /// Parses a `schema` value: a known kind at a version this build reads.
    fn parse_schema(text: &str) -> std::result::Result<Self, String> {
        let known = Self::ALL
            .iter()
            .map(|(_, name, _)| format!("{name}/{SCHEMA_VERSION}"))
            .collect::<Vec<_>>()
            .join(", ");
        let (name, version) = text.split_once('/').ok_or_else(|| {
            format!("field `schema` is {text:?}, not <kind>/<version>; this lidx reads {known}")
        })?;
        let kind = Self::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(k, _, _)| *k)
            .ok_or_else(|| {
                format!("field `schema` names an unknown kind {name:?}; this lidx reads {known}")
            })?;
        match version.parse::<u32>() {
            Ok(v) if (1..=SCHEMA_VERSION).contains(&v) => Ok(kind),
            Ok(v) if v > SCHEMA_VERSION => Err(format!(
                "field `schema` is {text:?}, written by a newer lidx; this one reads up to \
                 {name}/{SCHEMA_VERSION}: use a newer lidx report"
            )),
            _ => Err(format!(
                "field `schema` is {text:?}: the version is not a number from 1 to \
                 {SCHEMA_VERSION}"
            )),
        }
    }
}

/// The command line of this process, its words joined by spaces (words with spaces or quotes
/// quoted), as the `command` of the records it writes.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, word)| {
            let word = if i == 0 {
                Path::new(&word)
                    .file_name()
                    .map_or(word.clone(), |n| n.to_string_lossy().into_owned())
            } else {
                word
            };
            if word.is_empty() || word.contains(|c: char| c.is_whitespace() || "'\"".contains(c)) {
                format!("'{}'", word.replace('\'', r"'\''"))
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `schema` defaults of records read without the field: the first version of each kind.
pub mod default_schema {
    use super::RecordKind;

    /// `bench/1`.
    pub fn bench() -> String {
        RecordKind::Bench.schema()
    }
    /// `bench-strings/1`.
    pub fn strings() -> String {
        RecordKind::Strings.schema()
    }
    /// `disk/1`.
    pub fn disk() -> String {
        RecordKind::Disk.schema()
    }
    /// `ycsb/1`.
    pub fn ycsb() -> String {
        RecordKind::Ycsb.schema()
    }
    /// `curve/1`.
    pub fn curve() -> String {
        RecordKind::Curve.schema()
    }
    /// `dims-approx/1`.
    pub fn approx() -> String {
        RecordKind::Approx.schema()
    }
    /// `dims-structure/1`.
    pub fn structure() -> String {
        RecordKind::Structure.schema()
    }
    /// `dims-update/1`.
    pub fn update() -> String {
        RecordKind::Update.schema()
    }
    /// `recovery/1`.
    pub fn recovery() -> String {
        RecordKind::Recovery.schema()
    }
    /// `join/1`.
    pub fn join() -> String {
        RecordKind::Join.schema()
    }
    /// `start-nodes/1`.
    pub fn start_nodes() -> String {
        RecordKind::StartNodes.schema()
    }
    /// `start-mixed/1`.
    pub fn start_mixed() -> String {
        RecordKind::StartMixed.schema()
    }
    /// `tpcc/1`.
    pub fn tpcc() -> String {
        RecordKind::Tpcc.schema()
    }
}

/// What one input file held.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSummary {
    /// The file.
    pub path: PathBuf,
    /// Records per kind, in kind order.
    pub kinds: BTreeMap<RecordKind, usize>,
    /// The distinct values of `command`, `cpu`, `cores`, `dataset`, `device` and
    /// `lidx_version` over its records, where they have them (`command` is empty in records
    /// written before it existed and not listed).
    pub facts: BTreeMap<&'static str, Vec<String>>,
}

/// The records of a set of files, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordSet {
    /// One per file, in the order read.
    pub files: Vec<FileSummary>,
    /// `bench` records.
    pub bench: Vec<BenchRecord>,
    /// `bench-strings` records.
    pub strings: Vec<StringRecord>,
    /// `disk` records.
    pub disk: Vec<DiskRecord>,
    /// `ycsb` records.
    pub ycsb: Vec<KvRecord>,
    /// `curve` points.
    pub curve: Vec<CurvePoint>,
    /// `dims-approx` records.
    pub approx: Vec<ApproxRecord>,
    /// `dims-structure` records.
    pub structure: Vec<StructureRecord>,
    /// `dims-update` records.
    pub update: Vec<DimsUpdateRecord>,
    /// `recovery` records.
    pub recovery: Vec<RecoveryRecord>,
    /// `join` records.
    pub join: Vec<JoinRecord>,
    /// `disk-updatable` records.
    pub updatable: Vec<DiskUpdateRecord>,
    /// `zero-intervals` records.
    pub zero_intervals: Vec<ZeroIntervalRecord>,
    /// `start-nodes` records.
    pub start_nodes: Vec<NodeCostRecord>,
    /// `start-mixed` records.
    pub start_mixed: Vec<MixedRecord>,
    /// `tpcc` records.
    pub tpcc: Vec<TpccRecord>,
}

/// The fields a [`FileSummary`] collects.
const FACTS: [&str; 6] = [
    "command",
    "cpu",
    "cores",
    "dataset",
    "device",
    "lidx_version",
];

/// One record before it is typed: a JSON object or a CSV row with its header.
enum Row<'a> {
    Json(serde_json::Value),
    Csv(&'a csv::StringRecord, &'a csv::StringRecord),
}

impl Row<'_> {
    fn field(&self, name: &str) -> Option<String> {
        match self {
            Row::Json(v) => match v.get(name)? {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            },
            Row::Csv(header, row) => header
                .iter()
                .position(|h| h == name)
                .and_then(|i| row.get(i))
                .map(str::to_string),
        }
    }

    fn kind(&self) -> std::result::Result<RecordKind, String> {
        if let Some(schema) = self.field("schema").filter(|s| !s.is_empty()) {
            return RecordKind::parse_schema(&schema);
        }
        let fields: Vec<&str> = match self {
            Row::Json(serde_json::Value::Object(map)) => map.keys().map(String::as_str).collect(),
            Row::Json(_) => return Err("not a JSON object".to_string()),
            Row::Csv(header, _) => header.iter().collect(),
        };
        RecordKind::sniff(&fields).ok_or_else(|| {
            let known = RecordKind::ALL
                .iter()
                .map(|(_, name, field)| format!("`{field}` ({name})"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("no field `schema`, and none of the fields that name a kind: {known}")
        })
    }

    fn decode<T: DeserializeOwned>(&self) -> std::result::Result<T, String> {
        match self {
            Row::Json(v) => T::deserialize(v).map_err(|e| e.to_string()),
            Row::Csv(header, row) => row.deserialize(Some(header)).map_err(|e| e.to_string()),
        }
    }
}

impl RecordSet {
    /// Reads `path` (JSON lines or CSV, by extension) and adds its records.
    pub fn read(&mut self, path: &Path) -> Result<()> {
        let format = Format::for_path(path)?;
        let io = |source| BenchError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut summary = FileSummary {
            path: path.to_path_buf(),
            kinds: BTreeMap::new(),
            facts: BTreeMap::new(),
        };
        let file = BufReader::new(File::open(path).map_err(io)?);
        let mut add = |line: usize, row: Row<'_>| -> Result<()> {
            self.add(&mut summary, &row)
                .map_err(|message| BenchError::Report {
                    path: path.to_path_buf(),
                    message: format!("line {line}: {message}"),
                })
        };
        match format {
            Format::JsonLines => {
                for (i, line) in file.lines().enumerate() {
                    let line = line.map_err(io)?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    let value = serde_json::from_str(&line).map_err(|e| BenchError::Report {
                        path: path.to_path_buf(),
                        message: format!("line {}: not JSON: {e}", i + 1),
                    })?;
                    add(i + 1, Row::Json(value))?;
                }
            }
            Format::Csv => {
                let mut reader = csv::Reader::from_reader(file);
                let header = reader
                    .headers()
                    .map_err(|e| BenchError::Report {
                        path: path.to_path_buf(),
                        message: format!("line 1: not a CSV header: {e}"),
                    })?
                    .clone();
                for (i, row) in reader.records().enumerate() {
                    let row = row.map_err(|e| BenchError::Report {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })?;
                    add(i + 2, Row::Csv(&header, &row))?;
                }
            }
        }
        self.files.push(summary);
        Ok(())
    }

    fn add(&mut self, summary: &mut FileSummary, row: &Row<'_>) -> std::result::Result<(), String> {
        let kind = row.kind()?;
        let typed = |e: String| format!("a `{}` record: {e}", kind.name());
        match kind {
            RecordKind::Bench => self.bench.push(row.decode().map_err(typed)?),
            RecordKind::Strings => self.strings.push(row.decode().map_err(typed)?),
            RecordKind::Disk => self.disk.push(row.decode().map_err(typed)?),
            RecordKind::Ycsb => self.ycsb.push(row.decode().map_err(typed)?),
            RecordKind::Curve => self.curve.push(row.decode().map_err(typed)?),
            RecordKind::Approx => self.approx.push(row.decode().map_err(typed)?),
            RecordKind::Structure => self.structure.push(row.decode().map_err(typed)?),
            RecordKind::Update => self.update.push(row.decode().map_err(typed)?),
            RecordKind::Recovery => self.recovery.push(row.decode().map_err(typed)?),
            RecordKind::Join => self.join.push(row.decode().map_err(typed)?),
            RecordKind::Updatable => self.updatable.push(row.decode().map_err(typed)?),
            RecordKind::ZeroInterval => self.zero_intervals.push(row.decode().map_err(typed)?),
            RecordKind::StartNodes => self.start_nodes.push(row.decode().map_err(typed)?),
            RecordKind::StartMixed => self.start_mixed.push(row.decode().map_err(typed)?),
            RecordKind::Tpcc => self.tpcc.push(row.decode().map_err(typed)?),
        }
        *summary.kinds.entry(kind).or_default() += 1;
        for fact in FACTS {
            if let Some(value) = row.field(fact).filter(|v| !v.is_empty()) {
                let values = summary.facts.entry(fact).or_default();
                if !values.contains(&value) {
                    values.push(value);
                }
            }
        }
        Ok(())
    }

    /// True when no file held a record.
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(|f| f.kinds.is_empty())
    }
}
