//! The runner proves every answer: a lying index fails the run with `WrongAnswer`, an honest
//! one yields a complete record.

use lidx::{ApproxPos, StaticIndex};
use lidx_bench::dataset::Dataset;
use lidx_bench::registry::IndexSpec;
use lidx_bench::runner::{self, Bench, BenchConfig, Silent};
use lidx_bench::workload::{KeyChoice, Workload};
use lidx_bench::BenchError;

/// Claims the window `[0, 1)` for every key: right only for keys at or below the first key.
struct Liar {
    len: usize,
}

impl StaticIndex<u64> for Liar {
    fn search(&self, _key: u64) -> ApproxPos {
        ApproxPos {
            pos: 0,
            lo: 0,
            hi: self.len.min(1),
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn size_in_bytes(&self) -> usize {
        0
    }
}

fn dataset(n: u64) -> Dataset {
    Dataset {
        name: "squares".to_string(),
        keys: (0..n).map(|i| i * i).collect(),
        notes: Vec::new(),
    }
}

fn config() -> BenchConfig {
    BenchConfig {
        queries: 2_000,
        runs: 3,
        seed: 7,
        sample_every: 4,
        ..BenchConfig::default()
    }
}

#[test]
fn a_lying_index_fails_the_run() {
    let data = dataset(1_000);
    let bench = Bench::prepare(&data, config(), &mut Silent).unwrap();
    let result = bench.run_index(
        "liar",
        "liar",
        "",
        |keys| Ok(Box::new(Liar { len: keys.len() })),
        &mut Silent,
    );
    match result {
        Err(BenchError::WrongAnswer {
            index,
            key,
            expected,
            got,
        }) => {
            assert_eq!(index, "liar");
            assert_eq!(expected, data.keys.partition_point(|&k| k < key));
            assert_ne!(got, expected);
        }
        other => panic!("expected WrongAnswer, got {other:?}"),
    }
}

#[test]
fn an_honest_index_gets_a_complete_record() {
    let data = dataset(5_000);
    let specs = IndexSpec::parse_list("sorted").unwrap();
    let records = runner::run(&data, &specs, config(), &mut Silent).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.index.as_str(), r.label.as_str()), ("sorted", "sorted"));
    assert_eq!((r.n, r.queries, r.runs, r.seed), (5_000, 2_000, 3, 7));
    assert_eq!(r.workload, "lookup:uniform");
    assert!(r.mean_ns > 0.0 && r.mean_ns_min <= r.mean_ns && r.mean_ns <= r.mean_ns_max);
    assert!(r.p50_ns <= r.p99_ns && r.p99_ns <= r.p999_ns);
    // The sorted array's window is the whole array.
    assert!((r.mean_log2_window - (5_000f64).log2()).abs() < 1e-9);
    assert_eq!(r.speedup_vs_binary, Some(1.0));
    assert_eq!(r.height, Some(0));
}

#[test]
fn every_listed_index_runs_on_zipf() {
    let data = dataset(3_000);
    let specs = IndexSpec::parse_list("pgm,sorted,rs").unwrap();
    let config = BenchConfig {
        workload: Workload::Lookup(KeyChoice::Zipf { theta: 0.99 }),
        ..config()
    };
    let records = runner::run(&data, &specs, config, &mut Silent).unwrap();
    let labels: Vec<_> = records.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        ["pgm:eps=64:eps_rec=8", "sorted", "rs:bits=18:err=32"]
    );
    assert!(records.iter().all(|r| r.workload == "lookup:zipf"));
    assert!(records.iter().all(|r| r.speedup_vs_binary.is_some()));
}

#[test]
fn zero_queries_or_runs_are_rejected() {
    let data = dataset(10);
    for config in [
        BenchConfig {
            queries: 0,
            ..config()
        },
        BenchConfig {
            runs: 0,
            ..config()
        },
    ] {
        assert!(matches!(
            Bench::prepare(&data, config, &mut Silent),
            Err(BenchError::BadSpec { .. })
        ));
    }
}

#[test]
fn lookups_on_an_empty_dataset_are_refused() {
    let data = dataset(0);
    assert!(matches!(
        Bench::prepare(&data, config(), &mut Silent),
        Err(BenchError::NoKeys { .. })
    ));
}

/// An honest binary search over the whole array that takes at least 5 µs per lookup.
struct Slow {
    len: usize,
}

impl StaticIndex<u64> for Slow {
    fn search(&self, _key: u64) -> ApproxPos {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(5) {
            std::hint::spin_loop();
        }
        ApproxPos {
            pos: 0,
            lo: 0,
            hi: self.len,
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn size_in_bytes(&self) -> usize {
        0
    }
}

/// Regression: the sampled latencies clamped every value from 2,048 ns up to 2 ns, so a skip
/// list's p50 read 2 ns against a mean of 3,140 ns. A lookup that takes 5 µs must report a p50
/// of at least that.
#[test]
fn slow_lookups_report_their_latency() {
    let data = dataset(100);
    let config = BenchConfig {
        queries: 200,
        runs: 1,
        ..config()
    };
    let bench = Bench::prepare(&data, config, &mut Silent).unwrap();
    let record = bench
        .run_index(
            "slow",
            "slow",
            "",
            |keys| Ok(Box::new(Slow { len: keys.len() })),
            &mut Silent,
        )
        .unwrap();
    assert!(record.mean_ns >= 5_000.0, "{}", record.mean_ns);
    assert!(record.p50_ns >= 4_500, "p50 {} ns", record.p50_ns);
    assert!(record.p50_ns <= record.p99_ns && record.p99_ns <= record.p999_ns);
}
