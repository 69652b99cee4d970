//! The on-disk runner over byte-string keys on a free in-memory device: both byte-key indexes
//! answer lookups (one leaf block each) and scans checked against the sorted keys; a wrong
//! value, a missing key or a wrong scan fails the run; a file holding the other structure is
//! a typed error, not a figure.

use lidx::disk::ByteBTree;
use lidx::disk::{ByteTableParams, ByteTableWriter};
use lidx::io::Storage;
use lidx::mem::StringIndexParams;
use lidx_bench::byte_disk_registry::{ByteIndexFiles, ByteIndexSpec};
use lidx_bench::byte_disk_runner::ByteDiskBench;
use lidx_bench::disk_registry::{self, OpenChoice};
use lidx_bench::disk_runner::DiskBenchConfig;
use lidx_bench::disk_workload::DiskWorkload;
use lidx_bench::keyfile::Keys;
use lidx_bench::runner::Silent;
use lidx_bench::store_keys::RankedKeys;
use lidx_bench::BenchError;

fn words() -> RankedKeys {
    RankedKeys::encode(&Keys::Bytes(lidx_bench::words::generate(5000, 3)))
}

fn config(workload: &str) -> DiskBenchConfig {
    DiskBenchConfig {
        workload: DiskWorkload::parse(workload).unwrap(),
        queries: 400,
        runs: 2,
        threads: 2,
        seed: 7,
    }
}

const SPECS: [ByteIndexSpec; 2] = [ByteIndexSpec::Table { eps: 16 }, ByteIndexSpec::BTree {}];

#[test]
fn both_indexes_answer_lookups_and_scans_checked() {
    let keys = words();
    let storage = Storage::ram();
    for spec in SPECS {
        spec.build(&storage, &keys, 8).unwrap();
    }
    let lookups = ByteDiskBench::prepare("words", &keys, 8, config("lookup")).unwrap();
    let scans = ByteDiskBench::prepare("words", &keys, 8, config("scan:50")).unwrap();
    for spec in SPECS {
        let index = spec.open(&storage).unwrap();
        assert_eq!(index.len(), keys.len() as u64, "{spec:?}");
        let r = lookups
            .run_index(&spec.label(), index.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert_eq!(
            (r.blocks_per_op, r.inner_blocks_per_op, r.leaf_blocks_per_op),
            (1.0, 0.0, 1.0),
            "{spec:?}: one leaf block per lookup"
        );
        assert_eq!((r.n, r.queries, r.threads), (keys.len() as u64, 400, 2));
        let r = scans
            .run_index(&spec.label(), index.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap();
        assert!(r.leaf_blocks_per_op >= 1.0, "{spec:?}: {r:?}");
        assert_eq!(r.workload, "scan:50");
    }
}

/// A byte table whose values (or keys) are not what the benchmarks store: every kind of wrong
/// answer fails the run with `WrongResult`.
#[test]
fn a_damaged_answer_fails_the_run() {
    let keys = words();
    let storage = Storage::ram();
    let spec = ByteIndexSpec::Table { eps: 16 };
    // The table the spec names (eps 16), so that opening it by the spec accepts it.
    let params = ByteTableParams {
        model: StringIndexParams {
            eps: 16,
            ..StringIndexParams::default()
        },
    };
    let write = |skip: Option<usize>, value: &dyn Fn(&[u8]) -> Vec<u8>| {
        let mut writer = ByteTableWriter::create(&storage, &spec.file_name(), params).unwrap();
        for rank in (0..keys.len()).filter(|&r| Some(r) != skip) {
            writer.add(keys.get(rank), &value(keys.get(rank))).unwrap();
        }
        writer.finish().unwrap();
        spec.open(&storage).unwrap()
    };
    let right = |key: &[u8]| {
        let mut v = vec![0u8; 8];
        lidx_bench::disk_workload::payload_of_bytes(key, &mut v);
        v
    };
    let wrong_values = write(None, &|key| {
        let mut v = right(key);
        v[0] ^= 1;
        v
    });
    let missing = write(Some(keys.len() / 2), &right);
    for (workload, index, op) in [
        ("lookup", &wrong_values, "get"),
        ("scan:20", &wrong_values, "scan"),
        ("scan:5000", &missing, "scan"),
    ] {
        let bench = ByteDiskBench::prepare("words", &keys, 8, config(workload)).unwrap();
        let err = bench
            .run_index("damaged", index.as_ref(), &storage, 0.0, &mut Silent)
            .unwrap_err();
        assert!(
            matches!(&err, BenchError::WrongResult { op: got, .. } if *got == op),
            "{workload}: {err}"
        );
    }
    // A lookup of the key the table lacks is caught too: every key is looked up once.
    let all = DiskBenchConfig {
        queries: 50_000,
        ..config("lookup")
    };
    let bench = ByteDiskBench::prepare("words", &keys, 8, all).unwrap();
    let err = bench
        .run_index("missing", missing.as_ref(), &storage, 0.0, &mut Silent)
        .unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
}

/// Each file says what it is: a byte table where a byte B+-tree's files are expected, a byte
/// B+-tree's pages where a byte table is expected, or either opened as a numeric index, is
/// `BadMagic`.
#[test]
fn a_file_of_the_other_kind_is_a_typed_error() {
    let keys = words();
    let storage = Storage::ram();
    let table = ByteIndexSpec::Table { eps: 32 };
    drop(ByteBTree::create(&storage, &table.file_name()).unwrap());
    for name in (ByteIndexSpec::BTree {}).file_names() {
        let mut writer =
            ByteTableWriter::create(&storage, &name, ByteTableParams::default()).unwrap();
        writer.add(keys.get(0), b"v").unwrap();
        writer.finish().unwrap();
    }
    for spec in [table, ByteIndexSpec::BTree {}] {
        let err = spec.open(&storage).err().expect("the other kind");
        assert!(
            matches!(err, BenchError::Index(lidx::Error::BadMagic { .. })),
            "{spec:?}: {err}"
        );
        let err = disk_registry::open(&storage, &spec.file_name(), OpenChoice::default())
            .err()
            .expect("not a numeric index");
        assert!(
            matches!(err, BenchError::Index(lidx::Error::BadMagic { .. })),
            "{spec:?} as numeric: {err}"
        );
    }
}
