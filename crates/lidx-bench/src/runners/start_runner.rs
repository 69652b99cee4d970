//! START's two experiments beyond read-only lookups (paper 004), as records: the node costs of
//! Table I (§V) and the read-mostly workload of Fig. 8 (§VI-B) for ART, START (dynamic
//! programming) and START (greedy). `lidx start calibrate --json` and `lidx start bench --out`
//! write them; `lidx repro 004-table1` and `004-fig8` plot them.
//!
//! The read-mostly workload (§VI-B, YCSB-B-like): withhold `withhold` distinct keys sampled by
//! YCSB's "latest" distribution (a zipfian with theta 0.99 over ranks, rank 0 the largest
//! key), build on the rest (START tuned after the build), time inserting the withheld keys in
//! sampled order, then time `lookups` lookups of keys drawn uniformly from all of them, each
//! answer checked (the value stored with a key is the key). The three trees are kept side by
//! side and their lookup runs alternate, so the speedups (medians of per-round ratios of the
//! time per operation) are paired measurements.
//!
//! What differs from the paper: Fig. 8 plots throughput over time while the workload runs; we
//! report the whole run's time per insert, per lookup and per operation (5% inserts, 95%
//! lookups at the defaults), which is the figure's steady state.

use std::hint::black_box;
use std::time::Instant;

use lidx::mem::Art;
use lidx::mem::{CostModel, Start, StartParams, Strategy};
use lidx::OrderedMap;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::records::command_line;
use crate::records::{MixedRecord, NodeCostRecord};
use crate::workload::Zipfian;

/// Table I as records: `measured`'s costs beside the paper's.
pub fn node_cost_records(measured: &CostModel, runs: usize) -> Vec<NodeCostRecord> {
    let paper = CostModel::default();
    let command = command_line();
    measured
        .rows()
        .zip(paper.rows())
        .map(|((node, levels, c), (_, _, p))| NodeCostRecord {
            schema: crate::records::default_schema::start_nodes(),
            command: command.clone(),
            node: node.to_string(),
            levels: levels.to_string(),
            cached_ns: c.cached,
            header_cached_ns: c.header_cached,
            uncached_ns: c.uncached,
            paper_cached_ns: p.cached,
            paper_header_cached_ns: p.header_cached,
            paper_uncached_ns: p.uncached,
            runs: runs as u64,
            page_walk_ns: measured.page_walk,
            cache_bytes: measured.cache_bytes as u64,
        })
        .collect()
}

/// The read-mostly workload's sizes.
#[derive(Debug, Clone, Copy)]
pub struct MixedConfig {
    /// Keys withheld from the build and inserted (at most half the distinct keys).
    pub withhold: usize,
    /// Lookups per round.
    pub lookups: usize,
    /// Lookup rounds, at least 1.
    pub runs: usize,
    /// Seed of the sample and the lookups.
    pub seed: u64,
}

/// The name of a START tree tuned by `strategy`, as the records and `lidx start` spell it.
pub fn tree_name(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::DynamicProgramming => "start",
        Strategy::Greedy => "start-greedy",
    }
}

/// The median of `v` (not empty), as the other runners take it ([`crate::runner`]).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::runner::median(&v)
}

/// Runs the read-mostly workload (see the module docs) on `data` for ART, START (DP) and START
/// (greedy), START tuned with `model`; a record per tree, ART first.
pub fn read_mostly(
    data: &Dataset,
    config: MixedConfig,
    model: &CostModel,
) -> Result<Vec<MixedRecord>> {
    if config.runs == 0 {
        return Err(BenchError::BadSpec {
            what: "runs",
            got: "0".to_string(),
            expected: "at least 1 lookup round".to_string(),
        });
    }
    let mut all: Vec<(u64, u64)> = data.keys.iter().map(|&k| (k, k)).collect();
    all.dedup_by_key(|p| p.0);
    let n = all.len();
    if n < 2 {
        return Err(BenchError::NoKeys {
            workload: format!("START's read-mostly workload on {}", data.name),
        });
    }
    let withhold = config.withhold.min(n / 2);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5ead_0057);
    let zipf = Zipfian::new(n as u64, 0.99);
    let mut taken = vec![false; n];
    let mut inserts = Vec::with_capacity(withhold);
    let mut draws = 0usize;
    while inserts.len() < withhold {
        draws += 1;
        // Latest: rank 0 is the largest key. After many repeats, fall back to uniform ranks
        // so the sample completes.
        let rank = if draws < 100 * withhold.max(1) {
            zipf.sample(&mut rng) as usize
        } else {
            rng.gen_range(0..n)
        };
        let i = n - 1 - rank.min(n - 1);
        if !taken[i] {
            taken[i] = true;
            inserts.push(all[i]);
        }
    }
    let build: Vec<(u64, u64)> = (0..n).filter(|&i| !taken[i]).map(|i| all[i]).collect();
    let queries: Vec<u64> = (0..config.lookups)
        .map(|_| all[rng.gen_range(0..n)].0)
        .collect();
    let tuned = |strategy| StartParams {
        model: model.clone(),
        strategy,
        ..StartParams::default()
    };
    let variants = [
        None,
        Some(Strategy::DynamicProgramming),
        Some(Strategy::Greedy),
    ];
    // All three trees stay alive and their lookup runs alternate (art, start, greedy, art,
    // ...), so a slow spell of a shared machine hits each of them alike.
    let mut trees = Vec::with_capacity(variants.len());
    for variant in variants {
        let name = variant.map_or("art", tree_name);
        let t0 = Instant::now();
        let mut map: Start<u64, u64> = match variant {
            None => Start::from_art(
                Art::bulk_load(build.iter().copied())?,
                StartParams::default(),
            ),
            Some(s) => Start::bulk_load(build.iter().copied(), tuned(s))?,
        };
        let build_s = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        for &(k, v) in &inserts {
            map.insert(k, v)?;
        }
        let insert_ns = t0.elapsed().as_nanos() as f64 / inserts.len().max(1) as f64;
        trees.push((name, map, build_s, insert_ns));
    }
    let ops = (inserts.len() + queries.len()).max(1) as f64;
    let mut totals = vec![Vec::with_capacity(config.runs); trees.len()];
    let mut lookup_times = vec![Vec::with_capacity(config.runs); trees.len()];
    for _ in 0..config.runs {
        for (i, (name, map, _, insert_ns)) in trees.iter().enumerate() {
            let t0 = Instant::now();
            let mut wrong = None;
            for q in &queries {
                if black_box(map.get(q)) != Some(q) {
                    wrong = Some(*q);
                }
            }
            let lookup_ns = t0.elapsed().as_nanos() as f64 / queries.len().max(1) as f64;
            if let Some(key) = wrong {
                return Err(BenchError::WrongResult {
                    index: name.to_string(),
                    op: "get",
                    key,
                    what: format!("{:?} instead of the key itself", map.get(&key)),
                });
            }
            lookup_times[i].push(lookup_ns);
            totals[i]
                .push((insert_ns * inserts.len() as f64 + lookup_ns * queries.len() as f64) / ops);
        }
    }
    let command = command_line();
    let records = trees
        .iter()
        .enumerate()
        .map(|(i, (name, map, build_s, insert_ns))| {
            let ratios: Vec<f64> = (0..config.runs)
                .map(|r| totals[0][r] / totals[i][r])
                .collect();
            let mixed_op_ns = median(totals[i].clone());
            MixedRecord {
                schema: crate::records::default_schema::start_mixed(),
                command: command.clone(),
                dataset: data.name.clone(),
                tree: name.to_string(),
                keys: n as u64,
                built: build.len() as u64,
                inserted: inserts.len() as u64,
                lookups: queries.len() as u64,
                runs: config.runs as u64,
                build_s: *build_s,
                insert_ns: *insert_ns,
                lookup_ns: median(lookup_times[i].clone()),
                mixed_op_ns,
                mixed_ops_per_s: 1e9 / mixed_op_ns.max(f64::MIN_POSITIVE),
                speedup_vs_art: median(ratios.clone()),
                rounds: ratios
                    .iter()
                    .map(|r| format!("{r:.2}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                bytes_per_key: map.size_in_bytes() as f64 / map.len().max(1) as f64,
                node_mix: map.node_mix().to_string(),
            }
        })
        .collect();
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(n: u64) -> Dataset {
        Dataset {
            name: format!("test:{n}"),
            keys: (0..n).map(|i| i * 7 + 3).collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_three_trees_run_checked_and_art_is_the_reference() {
        let config = MixedConfig {
            withhold: 500,
            lookups: 2_000,
            runs: 3,
            seed: 7,
        };
        let records = read_mostly(&dataset(10_000), config, &CostModel::default()).unwrap();
        let trees: Vec<&str> = records.iter().map(|r| r.tree.as_str()).collect();
        assert_eq!(trees, ["art", "start", "start-greedy"]);
        for r in &records {
            assert_eq!((r.keys, r.built, r.inserted), (10_000, 9_500, 500));
            assert_eq!(r.lookups, 2_000);
            assert!(r.lookup_ns > 0.0 && r.mixed_ops_per_s > 0.0, "{r:?}");
            assert_eq!(r.rounds.split(' ').count(), 3);
        }
        assert_eq!(records[0].speedup_vs_art, 1.0);
    }

    #[test]
    fn zero_rounds_and_too_few_keys_are_refused() {
        let config = MixedConfig {
            withhold: 1,
            lookups: 1,
            runs: 0,
            seed: 7,
        };
        let model = CostModel::default();
        assert!(matches!(
            read_mostly(&dataset(100), config, &model),
            Err(BenchError::BadSpec { what: "runs", .. })
        ));
        let config = MixedConfig { runs: 1, ..config };
        assert!(matches!(
            read_mostly(&dataset(1), config, &model),
            Err(BenchError::NoKeys { .. })
        ));
    }

    #[test]
    fn table_one_pairs_each_measured_row_with_the_papers() {
        let mut measured = CostModel::default();
        measured.costs[0].cached = 1.5;
        let records = node_cost_records(&measured, 11);
        assert_eq!(records.len(), 7);
        assert_eq!(records[0].node, "Node4");
        assert_eq!(
            (records[0].cached_ns, records[0].paper_cached_ns),
            (1.5, 7.0)
        );
        assert_eq!(records[6].levels, "2-4");
        assert!(records.iter().all(|r| r.runs == 11));
    }
}
