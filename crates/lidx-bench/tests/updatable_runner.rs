//! The updatable runner (paper 003's six workloads) on small data: the disk B+-tree passes every
//! workload with exact block counts and a write breakdown that adds up, ratios to the B+-tree
//! come out of the same run, records round-trip through CSV, and an index that lies (drops an
//! insert, answers a wrong payload, calls a new key present, scans short) fails the run; a run on
//! files removes every file of its index (a crashed run's leftovers too) and no other file.

use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskIndex, DiskMap, WriteBreakdown};
use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx_bench::records::DiskUpdateRecord;
use lidx_bench::runner::Silent;
use lidx_bench::updatable_registry::{bench_payload, DiskMapFiles, UpdatableSpec, UpdateOptions};
use lidx_bench::updatable_report::{add_btree_ratios, table};
use lidx_bench::updatable_runner::{UpdateBench, UpdateBenchConfig};
use lidx_bench::update_workload::{UpdateWorkload, BULK_FRACTION};
use lidx_bench::BenchError;

const WORKLOADS: [&str; 6] = [
    "lookup",
    "scan",
    "write-only",
    "read-heavy",
    "write-heavy",
    "balanced",
];

fn keys() -> Vec<u64> {
    (0..20_000u64).map(|i| i * i + 7).collect()
}

fn config(workload: &str, queries: usize) -> UpdateBenchConfig {
    UpdateBenchConfig {
        workload: UpdateWorkload::parse(workload).unwrap(),
        queries,
        runs: 2,
        seed: 5,
        bulk_fraction: BULK_FRACTION,
    }
}

fn options(resident: Resident) -> UpdateOptions {
    UpdateOptions {
        payload_size: 8,
        resident,
    }
}

#[test]
fn btree_passes_every_workload_with_exact_counts() {
    let keys = keys();
    let storage = Storage::in_memory(SimProfile::named("sata-ssd").unwrap(), 4096).unwrap();
    let spec = UpdatableSpec::parse("btree").unwrap();
    for workload in WORKLOADS {
        let bench = UpdateBench::prepare("squares", &keys, config(workload, 2000)).unwrap();
        let mut records = Vec::new();
        for resident in [Resident::AllInner, Resident::None] {
            let label = format!("btree:fill=100:resident={resident:?}");
            let r = bench
                .run_spec(&label, &spec, &options(resident), &storage, &mut Silent)
                .unwrap();
            let label = UpdateWorkload::parse(workload).unwrap().label();
            assert_eq!((r.ops, r.runs, &r.workload), (2000, 2, &label));
            assert!(
                r.index_bytes > 0 && r.storage_bytes >= r.index_bytes,
                "{r:?}"
            );
            assert!(r.modeled_ops_per_s.is_some() && r.modeled_p99_us.unwrap() > 0.0);
            let writes = workload != "lookup" && workload != "scan";
            assert_eq!(r.search_us.is_some(), writes, "{workload}");
            if writes {
                assert_eq!(r.bulk_keys, 10_000);
                assert_eq!(r.final_keys, 10_000 + r.inserts);
                assert!(
                    r.leaf_write_per_op > 0.0 && r.inner_write_per_op > 0.0,
                    "{r:?}"
                );
                assert!(r.search_us.unwrap() > 0.0 && r.insert_us.unwrap() > 0.0);
                assert!(r.smo_us.unwrap() > 0.0, "10% new keys split leaves: {r:?}");
            } else {
                assert_eq!((r.bulk_keys, r.write_blocks_per_op), (20_000, 0.0));
            }
            match (workload, resident) {
                // With inner nodes in memory a lookup reads its leaf only (Table 4's last rows).
                ("lookup", Resident::AllInner) => {
                    assert_eq!((r.inner_read_per_op, r.leaf_read_per_op), (0.0, 1.0))
                }
                // 20K keys of 16 bytes in 4 KiB blocks: two levels, one inner block a lookup.
                ("lookup", Resident::None) => {
                    assert_eq!((r.inner_read_per_op, r.leaf_read_per_op), (1.0, 1.0))
                }
                ("scan", _) => assert!(r.leaf_read_per_op >= 100.0 / 255.0, "{r:?}"),
                _ => {}
            }
            records.push(r);
        }
        add_btree_ratios(&mut records);
        for r in &records {
            // Each B+-tree record is its own baseline (same resident choice).
            assert_eq!(r.throughput_vs_btree, Some(1.0), "{r:?}");
        }
        assert!(table(&records).contains(&records[0].workload));
    }
}

#[test]
fn records_round_trip_and_ratios_use_the_same_run() {
    let keys = keys();
    let storage = Storage::ram();
    let spec = UpdatableSpec::parse("btree:fill=50").unwrap();
    let bench = UpdateBench::prepare("squares", &keys, config("balanced", 500)).unwrap();
    let base = bench
        .run_spec(
            "btree:fill=100",
            &UpdatableSpec::parse("btree").unwrap(),
            &options(Resident::AllInner),
            &storage,
            &mut Silent,
        )
        .unwrap();
    let half = bench
        .run_spec(
            "btree:fill=50",
            &spec,
            &options(Resident::AllInner),
            &storage,
            &mut Silent,
        )
        .unwrap();
    let mut other = half.clone();
    (other.workload, other.index) = ("write-only".to_string(), "alex".to_string());
    // The first B+-tree of the list is the baseline.
    let mut records = vec![base, half, other];
    add_btree_ratios(&mut records);
    let ratio = records[1].index_bytes_vs_btree.unwrap();
    assert!(
        ratio > 1.5 && ratio < 2.5,
        "half-full nodes take about twice the blocks: {ratio}"
    );
    assert_eq!(
        records[2].throughput_vs_btree, None,
        "no B+-tree ran write-only"
    );
    let dir = tempfile::tempdir().unwrap();
    for ext in ["csv", "jsonl"] {
        let path = dir.path().join(format!("r.{ext}"));
        lidx_bench::report::write_records(&path, &records).unwrap();
        let back: Vec<DiskUpdateRecord> = lidx_bench::report::read_records(&path).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(
            back[0].index_bytes_vs_btree,
            records[0].index_bytes_vs_btree
        );
    }
}

/// How an index lies.
#[derive(Clone, Copy, Debug)]
enum Lie {
    /// Drops the insert of this key, reporting success.
    DropInsert(u64),
    /// Answers a wrong payload for this key.
    WrongPayload(u64),
    /// Reports the insert of this new key as a replacement.
    SaysPresent(u64),
    /// Scans one item short.
    ShortScan,
}

/// The B+-tree with one lie.
struct Liar {
    tree: DiskBTree<u64>,
    lie: Lie,
}

impl DiskIndex<u64> for Liar {
    fn len(&self) -> u64 {
        self.tree.len()
    }
    fn keys_fingerprint(&self) -> u64 {
        self.tree.keys_fingerprint()
    }
    fn payload_size(&self) -> usize {
        self.tree.payload_size()
    }
    fn get(&self, key: &u64, payload: &mut [u8]) -> lidx::Result<bool> {
        let found = self.tree.get(key, payload)?;
        if matches!(self.lie, Lie::WrongPayload(k) if k == *key) {
            payload[0] ^= 1;
        }
        Ok(found)
    }
    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> lidx::Result<usize> {
        let short = matches!(self.lie, Lie::ShortScan) as usize;
        self.tree.scan(start, limit - short, keys, payloads)
    }
    fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes()
    }
    fn disk_bytes(&self) -> u64 {
        self.tree.disk_bytes()
    }
    fn describe(&self) -> String {
        format!("liar {:?}", self.lie)
    }
}

impl DiskMap<u64> for Liar {
    fn insert(&mut self, key: u64, payload: &[u8]) -> lidx::Result<bool> {
        match self.lie {
            Lie::DropInsert(k) if k == key => Ok(false),
            Lie::SaysPresent(k) if k == key => Ok(self.tree.insert(key, payload).is_ok()),
            _ => self.tree.insert(key, payload),
        }
    }
    fn delete(&mut self, key: &u64) -> lidx::Result<bool> {
        self.tree.delete(key)
    }
    fn flush(&mut self) -> lidx::Result<()> {
        self.tree.flush()
    }
    fn write_breakdown(&self) -> WriteBreakdown {
        DiskMap::write_breakdown(&self.tree)
    }
}

fn run_liar(
    workload: &str,
    lie: impl Fn(&UpdateBench) -> Lie,
) -> Result<DiskUpdateRecord, BenchError> {
    let keys = keys();
    let storage = Storage::ram();
    let bench = UpdateBench::prepare("squares", &keys, config(workload, 400)).unwrap();
    let lie = lie(&bench);
    bench.run_index(
        "liar",
        &storage,
        "liar.lidx",
        |bulk| {
            let tree = DiskBTree::build(
                &storage,
                "liar.lidx",
                bulk,
                bench_payload,
                DiskBTreeParams::default(),
            )?;
            Ok(Box::new(Liar { tree, lie }))
        },
        &mut Silent,
    )
}

fn inserted(bench: &UpdateBench, nth: usize) -> u64 {
    bench
        .plan()
        .ops
        .iter()
        .filter_map(|op| match op {
            lidx_bench::update_workload::Op::Insert(k) => Some(*k),
            _ => None,
        })
        .nth(nth)
        .unwrap()
}

#[test]
fn an_index_that_lies_fails_the_run() {
    let wrong = |r: Result<DiskUpdateRecord, BenchError>, op: &str| match r {
        Err(BenchError::WrongResult { index, op: got, .. }) => {
            assert_eq!((index.as_str(), got), ("liar", op))
        }
        other => panic!("expected a wrong {op}, got {other:?}"),
    };
    // A dropped insert: found missing by the final check if no lookup asked for it first.
    wrong(
        run_liar("write-only", |b| Lie::DropInsert(inserted(b, 7))),
        "len",
    );
    wrong(
        run_liar("write-heavy", |b| Lie::SaysPresent(inserted(b, 3))),
        "insert",
    );
    // A wrong payload for a key the run inserted, then looked up.
    let looked_up = |b: &UpdateBench| {
        let plan = b.plan();
        let key = plan
            .ops
            .iter()
            .find_map(|op| match op {
                lidx_bench::update_workload::Op::Get(k) if plan.bulk.binary_search(k).is_err() => {
                    Some(*k)
                }
                _ => None,
            })
            .expect("a lookup of an inserted key");
        Lie::WrongPayload(key)
    };
    wrong(run_liar("balanced", looked_up), "get");
    wrong(run_liar("scan", |_| Lie::ShortScan), "scan");
    // The truth itself passes.
    assert!(run_liar("balanced", |_| Lie::DropInsert(u64::MAX)).is_ok());
}

#[test]
fn a_run_on_files_removes_every_file_of_every_index_and_nothing_else() {
    let keys: Vec<u64> = (0..4_000u64).map(|i| i * 3 + 1).collect();
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, 4096).unwrap();
    std::fs::write(dir.path().join("users-own.lidx"), b"not the harness's").unwrap();
    let bench = UpdateBench::prepare("thirds", &keys, config("write-heavy", 400)).unwrap();
    for spec in [
        "btree",
        "alex",
        "lipp",
        "dfiting",
        "dpgm",
        "btree-learned",
        "film:mem=1000",
    ] {
        let spec = UpdatableSpec::parse(spec).unwrap();
        // A file a crashed run left behind under this index's name goes too.
        let stale = format!("{}.L9.9", spec.file_name());
        std::fs::write(dir.path().join(&stale), b"stale").unwrap();
        bench
            .run_spec(
                &spec.label(),
                &spec,
                &options(Resident::None),
                &storage,
                &mut Silent,
            )
            .unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["users-own.lidx"], "{}", spec.label());
    }
}
