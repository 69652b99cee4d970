//! The checked benchmark of indexes over byte-string keys (text datasets): what `lidx bench`
//! runs when the dataset holds text keys.
//!
//! Indexes (`--index`, comma-separated; named in [`lidx::catalog::StringIndexSpec`]):
//!
//! * `sorted`: binary search over the whole sorted array (the baseline every ratio is to);
//! * `head8[:eps=32]`: a PGM on each key's first 8 bytes (big-endian, zero-padded: what the
//!   16-byte string key type gives a model), its window widened by the largest group of keys
//!   sharing those 8 bytes, as it must be to stay exact: the index a fixed-width string key
//!   gets, for comparison;
//! * `strings[:eps=32][:threshold=32]`: [`lidx::mem::StringIndex`], the index made for
//!   byte strings of any length.
//!
//! Lookups are uniform over present keys (seeded); every answer is checked against the key's
//! true position (the first occurrence of a duplicated key). `mean_ns` is the median over runs
//! of the mean time per lookup back to back (a throughput figure, as in [`crate::report`]);
//! windows are the mean and largest `hi - lo` over the queries.

use std::hint::black_box;
use std::time::Instant;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{StringIndex, StringIndexParams};
use lidx::raw::key::head8;
use lidx::{ApproxPos, StaticIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use lidx::catalog::StringIndexSpec;

use crate::error::{BenchError, Result};
use crate::records::StringRecord;
use crate::runner::Progress;

/// A way to get a window for a key.
trait Windowed {
    fn window(&self, key: &[u8]) -> ApproxPos;
}

struct Whole(usize);

impl Windowed for Whole {
    fn window(&self, _: &[u8]) -> ApproxPos {
        ApproxPos {
            pos: self.0 / 2,
            lo: 0,
            hi: self.0,
        }
    }
}

struct Head8 {
    pgm: Pgm<u64>,
    widen: usize,
    n: usize,
}

impl Windowed for Head8 {
    fn window(&self, key: &[u8]) -> ApproxPos {
        let w = self.pgm.search(head8(key));
        ApproxPos {
            hi: (w.hi + self.widen).min(self.n),
            ..w
        }
    }
}

impl Windowed for StringIndex {
    fn window(&self, key: &[u8]) -> ApproxPos {
        self.search(key)
    }
}

fn build(spec: StringIndexSpec, keys: &[Vec<u8>]) -> Result<(Box<dyn Windowed>, u64)> {
    Ok(match spec {
        StringIndexSpec::Sorted {} => (Box::new(Whole(keys.len())), 0),
        StringIndexSpec::Head8 { eps } => {
            let heads: Vec<u64> = keys.iter().map(|k| head8(k)).collect();
            let pgm = Pgm::build(&heads, PgmParams::new(eps, 8))?;
            let mut widen = 0;
            let mut i = 0;
            while i < heads.len() {
                let j = i + heads[i..].partition_point(|&h| h == heads[i]);
                widen = widen.max(j - i);
                i = j;
            }
            let bytes = pgm.size_in_bytes() as u64;
            (
                Box::new(Head8 {
                    pgm,
                    widen,
                    n: keys.len(),
                }),
                bytes,
            )
        }
        StringIndexSpec::Strings { eps, threshold } => {
            let index = StringIndex::build(keys, StringIndexParams { eps, threshold })?;
            let bytes = index.size_in_bytes() as u64;
            (Box::new(index), bytes)
        }
    })
}

/// Runs every spec on sorted `keys` with `queries` uniform lookups of present keys, `runs`
/// timed runs each; every answer checked.
pub fn run(
    dataset: &str,
    keys: &[Vec<u8>],
    specs: &[StringIndexSpec],
    queries: usize,
    runs: usize,
    seed: u64,
    progress: &mut dyn Progress,
) -> Result<Vec<StringRecord>> {
    if keys.is_empty() {
        return Err(BenchError::NoKeys {
            workload: "lookup".to_string(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let picks: Vec<usize> = (0..queries).map(|_| rng.gen_range(0..keys.len())).collect();
    // The true answer: the first occurrence of the picked key.
    let truth: Vec<usize> = picks
        .iter()
        .map(|&i| keys[..i].partition_point(|k| k < &keys[i]))
        .collect();
    let mut records = Vec::new();
    for &spec in specs {
        let label = spec.label();
        progress.begin(&label, (queries * (runs + 1)) as u64);
        let started = Instant::now();
        let (index, bytes) = build(spec, keys)?;
        let build_s = started.elapsed().as_secs_f64();
        let (mut sum, mut max) = (0usize, 0usize);
        for &i in &picks {
            let w = index.window(&keys[i]);
            sum += w.hi - w.lo;
            max = max.max(w.hi - w.lo);
        }
        progress.advance(queries as u64);
        let mut means = Vec::with_capacity(runs);
        for _ in 0..runs.max(1) {
            let started = Instant::now();
            for (&i, &want) in picks.iter().zip(&truth) {
                let key = &keys[i][..];
                let w = black_box(index.as_ref()).window(key);
                let got = w.lo + keys[w.lo..w.hi].partition_point(|k| &k[..] < key);
                if got != want {
                    return Err(BenchError::WrongResult {
                        index: label,
                        op: "lower_bound",
                        key: i as u64,
                        what: format!("answered {got}, the key is at {want}"),
                    });
                }
            }
            means.push(started.elapsed().as_nanos() as f64 / queries.max(1) as f64);
            progress.advance(queries as u64);
        }
        progress.end();
        means.sort_by(f64::total_cmp);
        records.push(StringRecord {
            schema: crate::records::RecordKind::Strings.schema(),
            command: crate::records::command_line(),
            dataset: dataset.to_string(),
            n: keys.len() as u64,
            index: label,
            build_s,
            bytes,
            mean_window: sum as f64 / queries.max(1) as f64,
            max_window: max as u64,
            mean_ns: means[means.len() / 2],
            speedup_vs_binary: None,
        });
    }
    let base = records
        .iter()
        .find(|r| r.index == "sorted")
        .map(|r| r.mean_ns);
    for r in &mut records {
        r.speedup_vs_binary = base.map(|b| b / r.mean_ns);
    }
    Ok(records)
}

/// The terminal table of a text benchmark.
pub fn table(records: &[StringRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "build s",
        "bytes/key",
        "mean window",
        "max window",
        "mean ns (throughput)",
        "speedup",
    ]);
    for r in records {
        table.add_row(vec![
            r.index.clone(),
            format!("{:.2}", r.build_s),
            format!("{:.3}", r.bytes as f64 / r.n.max(1) as f64),
            format!("{:.1}", r.mean_window),
            r.max_window.to_string(),
            format!("{:.0}", r.mean_ns),
            r.speedup_vs_binary
                .map_or("-".to_string(), |s| format!("{s:.2}x")),
        ]);
    }
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Silent;

    #[test]
    fn specs_parse_and_every_index_answers_right() {
        let specs =
            StringIndexSpec::parse_list("sorted,head8:eps=4,strings:eps=2:threshold=3").unwrap();
        assert_eq!(specs[2].label(), "strings:eps=2:threshold=3");
        assert!(StringIndexSpec::parse_list("pgm").is_err());
        assert!(StringIndexSpec::parse_list("strings:threshold=0").is_err());
        let mut keys = crate::words::generate(5000, 3);
        keys.insert(10, keys[10].clone());
        let records = run("w", &keys, &specs, 2000, 2, 1, &mut Silent).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].speedup_vs_binary, Some(1.0));
        assert!(records[2].max_window <= 2 * 2 + 2 + 3);
    }
}
