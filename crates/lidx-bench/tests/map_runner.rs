//! The insert benchmark runs every updatable map on the same split, checks what it measured,
//! and refuses static indexes before any work.

use lidx_bench::dataset::Dataset;
use lidx_bench::map_runner::{self, InsertConfig};
use lidx_bench::registry::IndexSpec;
use lidx_bench::runner::Silent;
use lidx_bench::BenchError;

fn dataset() -> Dataset {
    let mut keys: Vec<u64> = (0..5000u64).map(|i| i * i / 3 + (i % 7)).collect();
    keys.sort_unstable();
    Dataset {
        name: "test".to_string(),
        keys,
        notes: Vec::new(),
    }
}

fn config() -> InsertConfig {
    InsertConfig {
        runs: 2,
        seed: 7,
        sample_every: 4,
        huge_pages: false,
    }
}

#[test]
fn maps_insert_half_their_keys_checked() {
    let data = dataset();
    let mut distinct = data.keys.clone();
    distinct.dedup();
    let specs = IndexSpec::parse_list("btree,art,btree:leaf=4:inner=4").unwrap();
    let records = map_runner::run(&data, &specs, config(), &mut Silent).unwrap();
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record.workload, "insert");
        assert_eq!(record.n, distinct.len() as u64);
        assert_eq!(record.queries, (distinct.len() - distinct.len() / 2) as u64);
        assert!(record.mean_ns > 0.0 && record.bytes > 0, "{record:?}");
    }
}

#[test]
fn static_indexes_are_refused_with_the_map_list() {
    let specs = IndexSpec::parse_list("btree,pgm").unwrap();
    match map_runner::check_specs(&specs) {
        Err(e @ BenchError::BadSpec { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("pgm:eps=64") && message.contains("art"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    let tiny = Dataset {
        name: "one".to_string(),
        keys: vec![5],
        notes: Vec::new(),
    };
    let btree = IndexSpec::parse_list("btree").unwrap();
    assert!(matches!(
        map_runner::run(&tiny, &btree, config(), &mut Silent),
        Err(BenchError::NoKeys { .. })
    ));
}
