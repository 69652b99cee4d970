//! The on-disk runner on a free in-memory device: block counts per class are exact, scans and
//! lookups are checked, and an index whose payloads are wrong fails the run.

use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{SimProfile, Storage};
use lidx_bench::dataset::Dataset;
use lidx_bench::disk_registry::{self, DiskIndexSpec, OpenChoice};
use lidx_bench::disk_runner::{DiskBench, DiskBenchConfig};
use lidx_bench::disk_workload::DiskWorkload;
use lidx_bench::runner::Silent;
use lidx_bench::BenchError;

fn dataset() -> Dataset {
    Dataset {
        name: "squares".to_string(),
        keys: (0..20_000u64).map(|i| i * i + 7).collect(),
        notes: Vec::new(),
    }
}

fn config(workload: &str, threads: usize) -> DiskBenchConfig {
    DiskBenchConfig {
        workload: DiskWorkload::parse(workload).unwrap(),
        queries: 500,
        runs: 2,
        threads,
        seed: 5,
    }
}

#[test]
fn block_counts_are_exact_and_answers_checked() {
    let data = dataset();
    let storage = Storage::ram();
    for spec in ["btree", "pgm:eps=16", "zonemap"] {
        let spec = DiskIndexSpec::parse(spec).unwrap();
        spec.build(&storage, &data.keys, 8).unwrap();
    }
    for threads in [1, 3] {
        let bench = DiskBench::prepare(&data, &data.keys, config("lookup", threads)).unwrap();
        let open = |name: &str, resident| {
            let choice = OpenChoice {
                resident,
                ..OpenChoice::default()
            };
            disk_registry::open(&storage, name, choice).unwrap()
        };
        let tree = open("btree.fill=100.lidx", Resident::AllInner);
        let r = bench
            .run_index("btree", tree.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert_eq!(
            (r.blocks_per_op, r.inner_blocks_per_op, r.leaf_blocks_per_op),
            (1.0, 0.0, 1.0)
        );
        assert_eq!(r.threads, threads as u64);
        // Storage after the runs: a bulk-loaded tree uses every block of its file.
        assert_eq!(r.used_bytes, Some(r.disk_bytes));
        assert_eq!(r.free_bytes, Some(0));
        let tree = open("btree.fill=100.lidx", Resident::None);
        let r = bench
            .run_index("btree", tree.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert_eq!(
            r.inner_blocks_per_op, 1.0,
            "20K keys: a root above the leaves"
        );
        assert_eq!(
            r.modeled_us.map(|m| m >= 0.0),
            Some(true),
            "simulated: modeled time"
        );
    }
    let bench = DiskBench::prepare(&data, &data.keys, config("scan:150", 2)).unwrap();
    for name in [
        "btree.fill=100.lidx",
        "pgm.eps=16.eps_rec=8.gran=item.lidx",
        "zonemap.gran=item.lidx",
    ] {
        let index = disk_registry::open(&storage, name, OpenChoice::default()).unwrap();
        let r = bench
            .run_index(name, index.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert!(
            r.leaf_blocks_per_op >= 1.0,
            "{name}: a scan of 150 reads at least a block"
        );
    }
}

#[test]
fn a_wrong_payload_fails_the_run() {
    let data = dataset();
    let storage = Storage::in_memory(SimProfile::named("nvme").unwrap(), 4096).unwrap();
    let tree = DiskBTree::build(
        &storage,
        "t",
        &data.keys,
        |i, _, out: &mut [u8]| out.fill(i as u8),
        DiskBTreeParams::default(),
    )
    .unwrap();
    let bench = DiskBench::prepare(&data, &data.keys, config("lookup", 1)).unwrap();
    let err = bench
        .run_index("t", &tree, &storage, 0.0, &mut Silent)
        .unwrap_err();
    assert!(
        matches!(err, BenchError::WrongResult { op: "get", .. }),
        "{err}"
    );
}

#[test]
fn zero_interval_models_read_their_pages() {
    let data = dataset();
    let storage = Storage::ram();
    for text in [
        "pgm-zero:eps=0",
        "rs-zero:eps=0:bits=10",
        "pgm-zero:pages=1.2",
    ] {
        let spec = DiskIndexSpec::parse(text).unwrap();
        assert_eq!(DiskIndexSpec::parse(&spec.label()).unwrap(), spec, "{text}");
        spec.build(&storage, &data.keys, 8).unwrap();
    }
    assert!(DiskIndexSpec::parse("pgm-zero:eps=1:gran=page").is_err());
    assert!(DiskIndexSpec::parse("rs-zero:eps=1:pages=2").is_err());
    let bench = DiskBench::prepare(&data, &data.keys, config("lookup", 1)).unwrap();
    for (name, most) in [
        ("pgm-zero.eps=0.eps_rec=8.gran=item.lidx", 1.0),
        ("rs-zero.eps=0.bits=10.gran=item.lidx", 1.0),
        ("pgm-zero.pages=1.2.eps_rec=8.gran=item.lidx", 1.2),
    ] {
        let index = disk_registry::open(&storage, name, OpenChoice::default()).unwrap();
        let r = bench
            .run_index(name, index.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert!(r.leaf_blocks_per_op >= 1.0, "{name}: {r:?}");
        assert!(r.leaf_blocks_per_op <= most + 0.05, "{name}: {r:?}");
    }
}
