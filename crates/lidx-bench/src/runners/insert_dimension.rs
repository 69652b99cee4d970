//! Paper 001 §IV-D and §IV-E, the insertion-strategy and retraining dimensions (`lidx dims
//! insert`, `lidx dims retrain`): insert time per strategy against reserved space (Fig. 18a),
//! retrain count and time while inserting (Fig. 18b, c), and insert time against retraining
//! time (Fig. 18d).
//!
//! The subjects ([`SUBJECTS`]): the FITing-tree with each of its three insertion strategies —
//! `buffer` (a delta buffer per segment, paper 001's Buffer), `inplace` (free slots at both
//! segment ends, Inplace) and `gap` (ALEX's gapped array as the segment, Gap) — at each
//! reserved space (`reserve` slots per segment), the dynamic PGM (`dpgm`, paper 001's other
//! Buffer index, whose reserved space is its first level, `base`), and ALEX (`alex`), whose
//! reserved space is chosen by its own density bounds (the paper: "the user cannot set the
//! exact size"), so it has no reserve. Retrains are what each map counts
//! ([`lidx::mem::RetrainStats`]): a FITing-tree segment re-segmented, a dynamic
//! PGM merge, an ALEX data node expanded, retrained or split
//! ([`lidx::mem::AlexRetrains`]).
//!
//! Protocol (that of `lidx bench --workload insert`, [`crate::map_runner`]): half the distinct
//! keys, chosen by a seeded shuffle, are bulk-loaded; the other half is inserted in the
//! shuffled order, timed in `checkpoints` equal pieces, and the map's retrain counters are read
//! after each piece. Each of `runs` runs builds the map afresh; after each, the length must be
//! every distinct key, and after the first every key must map to its rank and every lower
//! bound between keys be the next key. A record is one subject at one checkpoint (the last is
//! all inserts), each time the median over the runs (counts are the same in every run).
//!
//! Where the paper is silent: whether its insertion time includes the retraining it causes.
//! `insert_ns` does (it is what a caller of `insert` waits); Fig. 18d's "insertion time" is
//! `insert_s - retrain_s`, so that the two axes add up to the total update time the paper
//! compares.

use std::time::{Duration, Instant};

use lidx::mem::KeyMap;
use lidx::mem::{Alex, AlexParams};
use lidx::mem::{DynamicPgm, DynamicPgmParams};
use lidx::mem::{
    FitingBufferStrategy as Buffer, FitingGapStrategy as Gap, FitingInplaceStrategy as Inplace,
    FitingMap, FitingMapParams, InsertStrategy, RetrainStats,
};
use lidx::BulkLoad;

use crate::dataset::Dataset;
use crate::error::{BenchError, Result};
use crate::map_runner::{check_run, Split};
use crate::records::DimsUpdateRecord;
use crate::report::Machine;
use crate::runner::{check_positive, median, Progress};

/// The subjects, as `--indexes` names them.
pub const SUBJECTS: [&str; 5] = ["buffer", "inplace", "gap", "dpgm", "alex"];

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateConfig {
    /// Subjects, from [`SUBJECTS`].
    pub subjects: Vec<String>,
    /// Reserved spaces (each at least 1); ALEX runs once whatever they are.
    pub reserves: Vec<usize>,
    /// Segment error of the FITing-trees and level error of the dynamic PGM.
    pub eps: usize,
    /// Timed pieces of the inserts (a record each).
    pub checkpoints: usize,
    /// Runs per subject.
    pub runs: usize,
    /// Seed of the split and the insert order.
    pub seed: u64,
}

/// A map that counts its retrains.
trait Retraining: KeyMap {
    fn retrain_stats(&self) -> RetrainStats;
}

impl<S: InsertStrategy<u64, u64> + Send + Sync> Retraining for FitingMap<u64, u64, S> {
    fn retrain_stats(&self) -> RetrainStats {
        self.stats()
    }
}

impl Retraining for DynamicPgm<u64, u64> {
    fn retrain_stats(&self) -> RetrainStats {
        self.stats()
    }
}

impl Retraining for Alex<u64, u64> {
    fn retrain_stats(&self) -> RetrainStats {
        self.retrains().total()
    }
}

/// One run's readings after each piece: inserted, insert time (s), retrains.
type Readings = Vec<(usize, f64, RetrainStats)>;

/// Refuses an unknown subject or a zero count before anything runs.
pub fn check_config(config: &UpdateConfig) -> Result<()> {
    check_positive(&[
        ("run count", config.runs),
        ("checkpoint count", config.checkpoints),
    ])?;
    if config.reserves.is_empty() || config.reserves.contains(&0) {
        return Err(BenchError::BadSpec {
            what: "reserved space",
            got: format!("{:?}", config.reserves),
            expected: "slots per segment, at least 1 each".to_string(),
        });
    }
    match config
        .subjects
        .iter()
        .find(|s| !SUBJECTS.contains(&s.as_str()))
    {
        Some(bad) => Err(BenchError::BadSpec {
            what: "insertion strategy",
            got: bad.clone(),
            expected: SUBJECTS.join(", "),
        }),
        None => Ok(()),
    }
}

/// Runs every subject at every reserve on `dataset`, in order (subjects outer).
pub fn run(
    dataset: &Dataset,
    config: &UpdateConfig,
    progress: &mut dyn Progress,
) -> Result<Vec<DimsUpdateRecord>> {
    check_config(config)?;
    if dataset.keys.len() < 2 {
        return Err(BenchError::NoKeys {
            workload: "dims insert".to_string(),
        });
    }
    let split = Split::new(&dataset.keys, config.seed);
    let cpu = Machine::detect().cpu;
    let eps = config.eps;
    let mut records = Vec::new();
    for subject in &config.subjects {
        let reserves: Vec<Option<usize>> = if subject == "alex" {
            vec![None]
        } else {
            config.reserves.iter().copied().map(Some).collect()
        };
        for reserve in reserves {
            let r = reserve.unwrap_or(0);
            let index = match subject.as_str() {
                "dpgm" => format!("dpgm:eps={eps}:eps_rec=8:base={r}"),
                "alex" => "alex".to_string(),
                fiting => format!("fiting-{fiting}:eps={eps}:reserve={r}"),
            };
            let fiting = FitingMapParams::new(eps, r);
            let run = Run {
                split: &split,
                label: &index,
                config,
            };
            let (readings, bytes) = match subject.as_str() {
                "buffer" => {
                    run.measure::<FitingMap<u64, u64, Buffer<u64, u64>>>(&fiting, progress)?
                }
                "inplace" => {
                    run.measure::<FitingMap<u64, u64, Inplace<u64, u64>>>(&fiting, progress)?
                }
                "gap" => run.measure::<FitingMap<u64, u64, Gap<u64, u64>>>(&fiting, progress)?,
                "dpgm" => run
                    .measure::<DynamicPgm<u64, u64>>(&DynamicPgmParams::new(eps, 8, r), progress)?,
                _ => run.measure::<Alex<u64, u64>>(&AlexParams::default(), progress)?,
            };
            for (inserted, insert_s, stats) in readings {
                records.push(DimsUpdateRecord {
                    schema: crate::records::RecordKind::Update.schema(),
                    command: crate::records::command_line(),
                    dataset: dataset.name.clone(),
                    n: split.distinct.len() as u64,
                    loaded: split.loaded.len() as u64,
                    inserted: inserted as u64,
                    strategy: subject.clone(),
                    index: index.clone(),
                    reserve: reserve.map(|r| r as u64),
                    insert_ns: insert_s * 1e9 / inserted.max(1) as f64,
                    insert_s,
                    retrains: stats.count,
                    retrain_s: stats.total.as_secs_f64(),
                    retrain_avg_us: stats.average().as_secs_f64() * 1e6,
                    bytes,
                    runs: config.runs as u64,
                    seed: config.seed,
                    cpu: cpu.clone(),
                });
            }
        }
    }
    Ok(records)
}

/// One subject's runs: the keys, its label, the configuration.
struct Run<'a> {
    split: &'a Split,
    label: &'a str,
    config: &'a UpdateConfig,
}

impl Run<'_> {
    /// Runs the protocol `config.runs` times on map type `M` built with `params`: the median
    /// readings at each checkpoint, and the map's bytes after all inserts.
    fn measure<M: Retraining + BulkLoad<u64, u64>>(
        &self,
        params: &M::Params,
        progress: &mut dyn Progress,
    ) -> Result<(Readings, u64)> {
        let (split, config) = (self.split, self.config);
        let piece = split.inserts.len().div_ceil(config.checkpoints).max(1);
        let mut runs: Vec<Readings> = Vec::with_capacity(config.runs);
        let mut bytes = 0;
        progress.begin(
            &format!("inserts {}", self.label),
            (split.inserts.len() * config.runs) as u64,
        );
        for run in 0..config.runs {
            let mut map = M::load_sorted(split.loaded.clone(), params)?;
            let (mut inserted, mut elapsed, mut replaced) = (0, 0.0, 0usize);
            let mut readings = Vec::with_capacity(config.checkpoints);
            for chunk in split.inserts.chunks(piece) {
                let start = Instant::now();
                for &(key, value) in chunk {
                    replaced += usize::from(KeyMap::insert(&mut map, key, value)?.is_some());
                }
                elapsed += start.elapsed().as_secs_f64();
                inserted += chunk.len();
                readings.push((inserted, elapsed, map.retrain_stats()));
                progress.advance(chunk.len() as u64);
            }
            check_run(self.label, &map, split, replaced, run == 0)?;
            bytes = KeyMap::size_in_bytes(&map) as u64;
            runs.push(readings);
        }
        progress.end();
        let medians = (0..runs[0].len())
            .map(|i| {
                let mut insert: Vec<f64> = runs.iter().map(|r| r[i].1).collect();
                let mut retrain: Vec<f64> =
                    runs.iter().map(|r| r[i].2.total.as_secs_f64()).collect();
                insert.sort_by(f64::total_cmp);
                retrain.sort_by(f64::total_cmp);
                let stats = RetrainStats {
                    count: runs[0][i].2.count,
                    total: Duration::from_secs_f64(median(&retrain)),
                };
                (runs[0][i].0, median(&insert), stats)
            })
            .collect();
        Ok((medians, bytes))
    }
}
