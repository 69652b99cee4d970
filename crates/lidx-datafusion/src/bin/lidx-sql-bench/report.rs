//! What `lidx-sql-bench` measured: the files of each side with their sizes, and per group of
//! queries each side's median time (and the planning part of it) over every query and run,
//! printed as Markdown tables with each side's speed against the group's reference side
//! (Parquet for point, range and scan groups; the hash join over the same lidx tables for
//! joins), and as JSON with every sample. Point and range groups also get DataFusion's
//! planning floor (`floor`): the reference's time over it bounds what any table could reach.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};

use crate::sides::Side;
use crate::workload::Class;

/// One side's samples in a group.
pub(crate) struct SideResult {
    pub(crate) side: Side,
    plans: Vec<Duration>,
    totals: Vec<Duration>,
}

impl SideResult {
    pub(crate) fn new(side: Side) -> Self {
        SideResult {
            side,
            plans: Vec::new(),
            totals: Vec::new(),
        }
    }

    /// Records one run's planning and total time.
    pub(crate) fn push(&mut self, plan: Duration, total: Duration) {
        self.plans.push(plan);
        self.totals.push(total);
    }
}

/// The median of `samples` in milliseconds (of the middle two for an even count).
fn median_ms(samples: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    match ms.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => ms[n / 2],
        n => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
    }
}

/// A group's results.
pub(crate) struct GroupResult {
    pub(crate) class: Class,
    pub(crate) param: String,
    pub(crate) ratio: Option<u64>,
    pub(crate) queries: usize,
    /// Rows the group's queries return (for aggregates: the rows they count), all together.
    pub(crate) rows: u64,
    pub(crate) sides: Vec<SideResult>,
    /// For point and range groups, DataFusion's planning of each query over the table's
    /// `FloorTable` (see `floor`); empty for the other groups.
    pub(crate) floor: Vec<Duration>,
}

impl GroupResult {
    /// The side the others are compared with.
    fn reference(&self) -> Side {
        if self.class == Class::Join {
            Side::Lidx
        } else {
            Side::Parquet
        }
    }

    fn median_of(&self, side: Side) -> f64 {
        self.sides
            .iter()
            .find(|s| s.side == side)
            .map_or(f64::NAN, |s| median_ms(&s.totals))
    }
}

/// One table's files.
struct TableFiles {
    name: String,
    lidx_bytes: u64,
    index_bytes: u64,
    parquet_bytes: u64,
    parquet_write: Duration,
}

/// Everything measured.
pub(crate) struct Report {
    rows: u64,
    partitions: usize,
    runs: usize,
    cold: bool,
    tables: Vec<TableFiles>,
    pub(crate) groups: Vec<GroupResult>,
}

impl Report {
    /// A report on a larger table of `rows` rows, scans in `partitions` partitions, each query
    /// run `runs` times, from the disk (`cold`) or as the page cache stands.
    pub(crate) fn new(rows: u64, partitions: usize, runs: usize, cold: bool) -> Self {
        Report {
            rows,
            partitions,
            runs,
            cold,
            tables: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Records the files of the table `name`: its lidx file `path` (and its saved index
    /// beside it) and `parquet`, written in `write`.
    pub(crate) fn add_table(
        &mut self,
        name: &str,
        path: &Path,
        parquet: &Path,
        write: Duration,
    ) -> anyhow::Result<()> {
        let size = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.len())
                .with_context(|| format!("size of {}", p.display()))
        };
        let mut index = path.as_os_str().to_owned();
        index.push(".pgm.idx");
        let index = Path::new(&index);
        self.tables.push(TableFiles {
            name: name.to_string(),
            lidx_bytes: size(path)?,
            index_bytes: if index.is_file() { size(index)? } else { 0 },
            parquet_bytes: size(parquet)?,
            parquet_write: write,
        });
        Ok(())
    }

    /// Prints the report as Markdown tables.
    pub(crate) fn print(&self, out: &mut impl Write) -> anyhow::Result<()> {
        writeln!(
            out,
            "larger table: {} rows; {} partitions; medians of {} runs of each query; {}\n",
            self.rows,
            self.partitions,
            self.runs,
            if self.cold {
                "cold: each side's files dropped from the page cache before each query"
            } else {
                "warm: the page cache as each side leaves it"
            }
        )?;
        writeln!(
            out,
            "| table | lidx bytes | its PGM bytes | Parquet bytes | Parquet write s |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|")?;
        for t in &self.tables {
            writeln!(
                out,
                "| {} | {} | {} | {} | {:.2} |",
                t.name,
                t.lidx_bytes,
                t.index_bytes,
                t.parquet_bytes,
                t.parquet_write.as_secs_f64()
            )?;
        }
        writeln!(
            out,
            "\n| class | query | queries | rows | side | median ms | planning ms | x faster than ref |"
        )?;
        writeln!(out, "|---|---|---:|---:|---|---:|---:|---:|")?;
        for g in &self.groups {
            let reference = g.median_of(g.reference());
            for s in &g.sides {
                let median = median_ms(&s.totals);
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {}{} | {:.3} | {:.3} | {:.2} |",
                    g.class.name(),
                    g.param,
                    g.queries,
                    g.rows,
                    s.side.name(),
                    if s.side == g.reference() {
                        " (ref)"
                    } else {
                        ""
                    },
                    median,
                    median_ms(&s.plans),
                    reference / median
                )?;
            }
            if !g.floor.is_empty() {
                let floor = median_ms(&g.floor);
                writeln!(
                    out,
                    "| {} | {} | {} | - | datafusion floor (nothing read; the most any table could reach) | {floor:.3} | {floor:.3} | {:.2} |",
                    g.class.name(),
                    g.param,
                    g.queries,
                    reference / floor
                )?;
            }
        }
        Ok(())
    }

    /// The report as JSON, every sample included.
    pub(crate) fn json(&self) -> Value {
        let ms = |d: &Duration| d.as_secs_f64() * 1e3;
        json!({
            "rows": self.rows,
            "partitions": self.partitions,
            "runs": self.runs,
            "cold": self.cold,
            "tables": self.tables.iter().map(|t| json!({
                "name": t.name,
                "lidx_bytes": t.lidx_bytes,
                "pgm_index_bytes": t.index_bytes,
                "parquet_bytes": t.parquet_bytes,
                "parquet_write_s": t.parquet_write.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "groups": self.groups.iter().map(|g| json!({
                "class": g.class.name(),
                "param": g.param,
                "ratio": g.ratio,
                "queries": g.queries,
                "rows": g.rows,
                "reference": g.reference().name(),
                "answers_agree": true,
                "sides": g.sides.iter().map(|s| json!({
                    "side": s.side.name(),
                    "median_ms": median_ms(&s.totals),
                    "planning_median_ms": median_ms(&s.plans),
                    "speedup_vs_reference": g.median_of(g.reference()) / median_ms(&s.totals),
                    "total_ms": s.totals.iter().map(ms).collect::<Vec<_>>(),
                    "planning_ms": s.plans.iter().map(ms).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "floor": (!g.floor.is_empty()).then(|| json!({
                    "planning_median_ms": median_ms(&g.floor),
                    "max_speedup_vs_reference": g.median_of(g.reference()) / median_ms(&g.floor),
                    "planning_ms": g.floor.iter().map(ms).collect::<Vec<_>>(),
                })),
            })).collect::<Vec<_>>(),
        })
    }
}
