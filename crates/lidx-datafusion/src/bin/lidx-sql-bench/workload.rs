//! The queries `lidx-sql-bench` runs, drawn from the larger table's keys with a fixed seed so
//! that every side (and every run) gets the same ones, each with the answer's size it must
//! have:
//!
//! * `point`: `key IN (...)` lists of 1, 100 and 10,000 keys, half of them keys of the table
//!   (distinct, uniform over its ranks) and half keys it lacks (uniform over its key span); a
//!   list of 1 alternates between a present and an absent key from one instance to the next.
//!   The rows returned are the present keys'.
//! * `range`: `key >= a AND key < b` holding 0.001%, 0.01%, 0.1%, 1% and 10% of the rows (at
//!   least one), starting at a uniform rank; exactly that many rows.
//! * `scan`: a full-scan aggregate over both columns, one row holding the table's count.
//! * `join`: each smaller table `r<R>` (a sample of `1/R` of the keys, `lidx table create
//!   --ratio`) joined on key with the larger table and aggregated: the count is the smaller
//!   table's.
//!
//! Point and range queries return their rows (`SELECT key, value`), so that both sides read
//! and hand over the same records; the scan and the joins aggregate, so that neither side's
//! time is spent handing over millions of rows.

use clap::ValueEnum;
use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A class of queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Class {
    /// `key IN (...)` lists.
    Point,
    /// Key ranges.
    Range,
    /// A full-scan aggregate.
    Scan,
    /// Joins of each smaller table with the larger.
    Join,
}

impl Class {
    /// The class's name in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Point => "point",
            Class::Range => "range",
            Class::Scan => "scan",
            Class::Join => "join",
        }
    }
}

/// What a query's answer must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// This many rows.
    Rows(u64),
    /// One row whose first column (a `count(*)`) is this.
    Count(u64),
}

/// One query: its SQL with the tables it reads left as `{0}`, `{1}`, ... (each side names its
/// own copy of a table), and the answer's size.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub(crate) template: String,
    pub(crate) tables: Vec<String>,
    pub(crate) expect: Expect,
}

impl Query {
    /// The SQL reading the tables `name(table)` names.
    pub(crate) fn sql(&self, name: impl Fn(&str) -> String) -> String {
        let mut sql = self.template.clone();
        for (i, table) in self.tables.iter().enumerate() {
            sql = sql.replace(&format!("{{{i}}}"), &name(table));
        }
        sql
    }
}

/// A row of the report: a class, its parameter, and the instances timed together.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) class: Class,
    /// The parameter as the report shows it (`IN 100`, `0.01%`, `1/100`).
    pub(crate) param: String,
    /// For joins, the smaller table's ratio `R`.
    pub(crate) ratio: Option<u64>,
    pub(crate) queries: Vec<Query>,
}

/// Sizes of the `IN` lists.
const IN_SIZES: [usize; 3] = [1, 100, 10_000];
/// Selectivities of the ranges, in percent of the rows.
const RANGE_PERCENTS: [f64; 5] = [0.001, 0.01, 0.1, 1.0, 10.0];

/// The larger table's name (`lidx table create`'s).
pub(crate) const LARGE: &str = "large";

/// The groups of `classes` over the larger table of sorted distinct `keys`, with `instances`
/// queries per point and range group, joins with the smaller tables `ratios` (`r<R>`, with
/// their row counts), from `seed`.
pub(crate) fn groups(
    classes: &[Class],
    keys: &[u64],
    ratios: &[(u64, u64)],
    instances: usize,
    seed: u64,
) -> Vec<Group> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for &class in classes {
        match class {
            Class::Point => {
                for size in IN_SIZES {
                    let queries = (0..instances)
                        .map(|i| point(keys, size, i, &mut rng))
                        .collect();
                    out.push(Group {
                        class,
                        param: format!("IN {size}"),
                        ratio: None,
                        queries,
                    });
                }
            }
            Class::Range => {
                for percent in RANGE_PERCENTS {
                    let queries = (0..instances)
                        .map(|_| range(keys, percent, &mut rng))
                        .collect();
                    out.push(Group {
                        class,
                        param: format!("{percent}%"),
                        ratio: None,
                        queries,
                    });
                }
            }
            Class::Scan => out.push(Group {
                class,
                param: "count, bit_xor(key), max(value)".into(),
                ratio: None,
                queries: vec![Query {
                    template: "SELECT count(*), bit_xor(key), max(value) FROM {0}".into(),
                    tables: vec![LARGE.into()],
                    expect: Expect::Count(keys.len() as u64),
                }],
            }),
            Class::Join => {
                for &(ratio, rows) in ratios {
                    out.push(Group {
                        class,
                        param: format!("1/{ratio}"),
                        ratio: Some(ratio),
                        queries: vec![Query {
                            template: "SELECT count(*), bit_xor(l.key), max(l.value) \
                                       FROM {0} o JOIN {1} l ON o.key = l.key"
                                .into(),
                            tables: vec![format!("r{ratio}"), LARGE.into()],
                            expect: Expect::Count(rows),
                        }],
                    });
                }
            }
        }
    }
    out
}

/// An `IN` list of `size` keys: half present, half absent (a list of one: present for even
/// `instance`, absent for odd).
fn point(keys: &[u64], size: usize, instance: usize, rng: &mut ChaCha8Rng) -> Query {
    let present = if size == 1 {
        usize::from(instance.is_multiple_of(2))
    } else {
        (size / 2).min(keys.len())
    };
    let mut list: Vec<u64> = index::sample(rng, keys.len(), present)
        .into_iter()
        .map(|i| keys[i])
        .collect();
    let mut absent = Vec::with_capacity(size - present);
    let (lo, hi) = (keys[0], keys[keys.len() - 1]);
    // A table holding every key of its span has no absent key inside it: draw above it then,
    // or below it when it ends at `u64::MAX` (it then starts above 0: it holds fewer than
    // 2^64 keys).
    let dense = hi - lo == keys.len() as u64 - 1;
    while absent.len() < size - present {
        let k = match (dense, hi) {
            (false, _) => rng.gen_range(lo..=hi),
            (true, u64::MAX) => rng.gen_range(0..lo),
            (true, _) => rng.gen_range(hi + 1..=u64::MAX),
        };
        if keys.binary_search(&k).is_err() && !absent.contains(&k) {
            absent.push(k);
        }
    }
    list.extend(absent);
    let literals: Vec<String> = list.iter().map(u64::to_string).collect();
    Query {
        template: format!(
            "SELECT key, value FROM {{0}} WHERE key IN ({})",
            literals.join(", ")
        ),
        tables: vec![LARGE.into()],
        expect: Expect::Rows(present as u64),
    }
}

/// A range of `percent` of the rows (at least one) from a uniform rank.
fn range(keys: &[u64], percent: f64, rng: &mut ChaCha8Rng) -> Query {
    let n = keys.len();
    let rows = ((n as f64 * percent / 100.0).round() as usize).clamp(1, n);
    let start = rng.gen_range(0..=n - rows);
    let template = match keys.get(start + rows) {
        Some(end) => format!(
            "SELECT key, value FROM {{0}} WHERE key >= {} AND key < {end}",
            keys[start]
        ),
        None => format!("SELECT key, value FROM {{0}} WHERE key >= {}", keys[start]),
    };
    Query {
        template,
        tables: vec![LARGE.into()],
        expect: Expect::Rows(rows as u64),
    }
}
