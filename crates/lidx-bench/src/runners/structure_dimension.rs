//! Paper 001 §IV-B's second design dimension, the index structure (`lidx dims structure`): the
//! structures of RMI (two stages, XIndex), ATS (ALEX's asymmetric tree), BTREE (FITing-tree)
//! and LRS (PGM's recursive levels) over the same leaves, timed from the root to the leaf
//! against the leaf count (Fig. 17c).
//!
//! The leaves are Opt-PLA segments of the keys at each `eps` (more eps, fewer leaves); every
//! structure is built over the leaves' first keys and answers, for a query key, the leaf that
//! holds it. RMI is [`lidx::mem::Rmi`] with a second stage of one model per 16 leaves; BTREE is
//! [`lidx::mem::BTreeIndex`] (lidx's B+-tree, 16/15 slots); LRS is [`lidx::mem::Pgm`] over
//! the leaf keys with PGM's recursive error 8 (each level an Opt-PLA of the one below, the
//! last-level error 8 too); ATS is lidx's ALEX ([`lidx::mem::MapSpec`] `alex`) from first key
//! to leaf, whose inner nodes are the asymmetric tree and whose data nodes stand in for the
//! leaves' directory. Where the paper is silent: its structures come with their own
//! approximation algorithms (it says so, §IV-B); here all four route to the same leaves, so
//! only the structure differs.
//!
//! Timed: a tight loop of root-to-leaf lookups over uniform queries of present keys, each
//! answer checked first against a binary search of the leaf keys; `lookup_ns` is the median
//! of `runs` loops.

use std::hint::black_box;
use std::time::Instant;

use lidx::mem::BTreeIndex;
use lidx::mem::BTreeParams;
use lidx::mem::MapSpec;
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::model::optimal_pla;
use lidx::StaticIndex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::map_index::MapIndex;
use crate::records::StructureRecord;
use crate::report::Machine;
use crate::runner::{check_positive, median, Progress};

/// The structures, as `--structures` names them.
pub const STRUCTURES: [&str; 4] = ["rmi", "ats", "btree", "lrs"];

fn build(structure: &str, leaf_keys: &[u64]) -> Result<Box<dyn StaticIndex<u64>>> {
    Ok(match structure {
        "rmi" => Box::new(Rmi::build(
            leaf_keys,
            RmiParams::new((leaf_keys.len() / 16).max(1)),
        )?),
        "btree" => Box::new(BTreeIndex::build(leaf_keys, BTreeParams::default())?),
        "lrs" => Box::new(Pgm::build(leaf_keys, PgmParams::new(8, 8))?),
        "ats" => Box::new(MapIndex::build(&MapSpec::parse("alex")?, leaf_keys)?),
        other => {
            return Err(BenchError::BadSpec {
                what: "structure",
                got: other.to_string(),
                expected: STRUCTURES.join(", "),
            })
        }
    })
}

/// The leaf of `key` through `index` over `leaf_keys` (the last leaf whose first key is at or
/// below it).
#[inline]
fn leaf_of(index: &dyn StaticIndex<u64>, leaf_keys: &[u64], key: u64) -> usize {
    let p = index.lower_bound(leaf_keys, key);
    if p < leaf_keys.len() && leaf_keys[p] == key {
        p
    } else {
        p.saturating_sub(1)
    }
}

/// Runs every structure over the leaves of every `eps` on `dataset`.
pub fn run(
    dataset: &Dataset,
    structures: &[String],
    eps: &[usize],
    queries: usize,
    runs: usize,
    seed: u64,
    progress: &mut dyn Progress,
) -> Result<Vec<StructureRecord>> {
    check_positive(&[("query count", queries), ("run count", runs)])?;
    for s in structures {
        if !STRUCTURES.contains(&s.as_str()) {
            return Err(BenchError::BadSpec {
                what: "structure",
                got: s.clone(),
                expected: STRUCTURES.join(", "),
            });
        }
    }
    let mut keys = dataset.keys.clone();
    keys.dedup();
    if keys.is_empty() {
        return Err(BenchError::NoKeys {
            workload: "dims structure".to_string(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let picks: Vec<u64> = (0..queries)
        .map(|_| keys[rng.gen_range(0..keys.len())])
        .collect();
    let cpu = Machine::detect().cpu;
    let mut records = Vec::new();
    progress.begin("index structures", (eps.len() * structures.len()) as u64);
    for &e in eps {
        let leaf_keys: Vec<u64> = optimal_pla(&keys, e)?.iter().map(|s| s.first_key).collect();
        let truth: Vec<usize> = picks
            .iter()
            .map(|&q| leaf_keys.partition_point(|&k| k <= q) - 1)
            .collect();
        for structure in structures {
            let index = build(structure, &leaf_keys)?;
            let index: &dyn StaticIndex<u64> = black_box(index.as_ref());
            for (&q, &want) in picks.iter().zip(&truth) {
                let got = leaf_of(index, &leaf_keys, q);
                if got != want {
                    return Err(BenchError::WrongAnswer {
                        index: format!("{structure} over eps {e} leaves"),
                        key: q,
                        expected: want,
                        got,
                    });
                }
            }
            let mut times: Vec<f64> = (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    let mut folded = 0usize;
                    for &q in &picks {
                        folded = folded.wrapping_add(leaf_of(index, &leaf_keys, q));
                    }
                    black_box(folded);
                    start.elapsed().as_nanos() as f64 / picks.len() as f64
                })
                .collect();
            times.sort_by(f64::total_cmp);
            records.push(StructureRecord {
                schema: crate::records::RecordKind::Structure.schema(),
                command: crate::records::command_line(),
                dataset: dataset.name.clone(),
                n: keys.len() as u64,
                structure: structure.clone(),
                eps: e as u64,
                leaves: leaf_keys.len() as u64,
                lookup_ns: median(&times),
                bytes: index.size_in_bytes() as u64,
                queries: picks.len() as u64,
                runs: runs as u64,
                cpu: cpu.clone(),
            });
            progress.advance(1);
        }
    }
    progress.end();
    Ok(records)
}
