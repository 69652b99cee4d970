//! `lidx repro`: the registry lists every experiment issue 17 names, cheap experiments run end
//! to end on tiny data and leave JSON lines, CSV and SVG, and bad requests (an unknown id, an
//! experiment that cannot run yet, an output that exists) are refused before anything runs.

mod common;

use common::{lidx, lidx_ok, text};

use lidx_bench::records::RecordSet;

/// Every id issue 17 asks `lidx repro list` to name.
const ISSUE_IDS: &[&str] = &[
    "000-fig3",
    "000-fig5",
    "000-fig6",
    "000-fig7",
    "000-table2",
    "001-fig10",
    "001-fig13",
    "001-fig15",
    "001-fig16",
    "001-fig17",
    "001-fig18",
    "001-table3",
    "002-table3",
    "002-table4",
    "002-table5",
    "002-fig9",
    "002-fig11",
    "002-fig12",
    "002-table7",
    "002-table8",
    "003-fig3",
    "003-fig5",
    "003-fig6",
    "003-fig7",
    "003-fig10",
    "003-fig11",
    "003-fig12",
    "003-fig13",
    "003-table4",
    "003-table5",
    "004-table1",
    "004-fig7",
    "004-fig8",
];

#[test]
fn list_names_every_experiment_of_the_issue() {
    let out = lidx_ok(&["repro", "list"]);
    let listed = text(&out.stdout);
    for id in ISSUE_IDS {
        assert!(
            listed.contains(&format!(" {id} ")),
            "{id} missing:\n{listed}"
        );
    }
    assert!(
        !listed.contains("not reproducible yet"),
        "every experiment of the issue runs:\n{listed}"
    );
    let registry: Vec<&str> = lidx_bench::repro::all().iter().map(|e| e.id).collect();
    for id in &registry {
        assert_eq!(
            registry.iter().filter(|i| *i == id).count(),
            1,
            "{id} twice"
        );
    }
}

#[test]
fn every_ready_experiment_has_a_plan_at_both_scales() {
    for scale in ["small", "full"] {
        let out = lidx_ok(&["repro", "all", "--dry-run", "--scale", scale]);
        let plans = text(&out.stdout);
        for e in lidx_bench::repro::all() {
            let ready = matches!(e.status, lidx_bench::repro::Status::Ready(_));
            assert_eq!(plans.contains(&format!("# {}:", e.id)), ready, "{}", e.id);
        }
        assert!(
            !text(&out.stderr).contains("skipping"),
            "{}",
            text(&out.stderr)
        );
    }
}

/// Issue 34's FILM comparison (paper 002 Fig. 13) is listed and plans FILM beside the hybrid
/// at both scales: at the paper's budget scaled to the keys, and at FILM's memory.
#[test]
fn fig13_plans_film_beside_the_hybrid() {
    let listed = text(&lidx_ok(&["repro", "list"]).stdout);
    assert!(listed.contains(" 002-fig13 "), "{listed}");
    for (scale, budget) in [("small", "64Ki"), ("full", "512Ki")] {
        let out = lidx_ok(&["repro", "002-fig13", "--dry-run", "--scale", scale]);
        let plan = text(&out.stdout);
        assert!(plan.contains("disk:film:mem=0"), "{plan}");
        assert!(
            plan.contains(&format!("--memory-budget {budget}")),
            "{plan}"
        );
        assert_eq!(plan.matches("lidx ycsb").count(), 2, "{plan}");
    }
}

/// Issue 34's TPC-C (paper 002 Table 8) plans the disk B+-tree first, the hybrids and the
/// second mode; at full scale also the `Store`'s hybrid engine as the eleven indexes at the
/// B+-tree's memory (at one warehouse that memory leaves each store a few KiB).
#[test]
fn table8_plans_store_indexes_at_the_btree_s_memory() {
    for (scale, kv) in [("small", false), ("full", true)] {
        let out = lidx_ok(&["repro", "002-table8", "--dry-run", "--scale", scale]);
        let plan = text(&out.stdout);
        assert!(plan.contains("--index btree,"), "{plan}");
        assert_eq!(plan.contains(",kv:hybrid,"), kv, "{plan}");
        assert!(plan.contains("--kv-memory first"), "{plan}");
        assert!(plan.contains("store:lsm"), "{plan}");
    }
}

/// `lidx repro <ids>` on 20K lognormal keys and 2K operations, into `out_dir`.
fn repro_tiny(ids: &[&str], out_dir: &std::path::Path) {
    let mut args = vec!["repro"];
    args.extend_from_slice(ids);
    args.extend([
        "--dataset",
        "gen:lognormal:20K",
        "--ops",
        "2K",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    lidx_ok(&args);
}

#[test]
fn cheap_experiments_write_records_csv_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    repro_tiny(&["002-table3", "003-fig6", "000-table2"], &out_dir);
    for (id, svgs) in [
        ("002-table3", &["models"][..]),
        ("003-fig6", &["breakdown"][..]),
        ("000-table2", &["time", "index"][..]),
    ] {
        let csv = std::fs::read_to_string(out_dir.join(format!("{id}.csv"))).unwrap();
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        assert!(lines.count() >= 2, "{id}: {csv}");
        let jsonl = std::fs::read_to_string(out_dir.join(format!("{id}.jsonl"))).unwrap();
        assert_eq!(jsonl.lines().count() + 1, csv.lines().count(), "{id}");
        for svg in svgs {
            let svg = std::fs::read_to_string(out_dir.join(format!("{id}-{svg}.svg"))).unwrap();
            assert!(svg.contains("<svg") && svg.contains("<polyline"), "{id}");
        }
        match id {
            "002-table3" => {
                assert!(header.contains("models_plain,models_zero"), "{header}");
                let mut set = RecordSet::default();
                set.read(&out_dir.join(format!("{id}.jsonl"))).unwrap();
                // Two models at four expected page counts.
                assert_eq!(set.zero_intervals.len(), 8);
                assert!(set
                    .zero_intervals
                    .iter()
                    .all(|r| r.models_zero <= r.models_plain));
            }
            "003-fig6" => {
                assert!(header.contains("search_us"), "{header}");
                // `lidx report` reads the updatable runner's records too.
                let mut set = RecordSet::default();
                set.read(&out_dir.join(format!("{id}.jsonl"))).unwrap();
                assert_eq!(set.updatable.len(), 4);
                assert!(set.updatable.iter().all(|r| r.workload == "write-only"));
            }
            _ => {
                // The join records are the kind `lidx report` reads, with their command.
                let mut set = RecordSet::default();
                set.read(&out_dir.join(format!("{id}.jsonl"))).unwrap();
                assert_eq!(set.join.len(), 4);
                assert!(set.join.iter().all(|j| j.report.algo == "inlj-pgm"));
                assert!(set.join[0].command.contains("join"), "{:?}", set.join[0]);
            }
        }
        assert!(!out_dir.join(format!("{id}.work")).exists(), "{id}");
    }
}

/// Paper 002's Fig. 12 runs `lidx ycsb` at each of its thread counts on the B+-tree and
/// hybrid-PGM-disk (its runs are a benchmark: minutes even on tiny data, the hybrid's writers
/// waiting for merges on 16 threads), and Table 7 on tiny data keeps the best configuration
/// of each structure per workload with its total space, from YCSB records `lidx report`
/// reads.
#[test]
fn threads_and_space_of_paper_002() {
    let out = lidx_ok(&["repro", "002-fig12", "--dry-run"]);
    let plan = text(&out.stdout);
    let steps: Vec<&str> = plan
        .lines()
        .filter(|l| l.starts_with("lidx ycsb"))
        .collect();
    assert_eq!(steps.len(), 5, "{plan}");
    for (step, threads) in steps.iter().zip(["1", "2", "4", "8", "16"]) {
        assert!(step.contains(&format!("--threads {threads} ")), "{step}");
        assert!(
            step.contains("--store adapter:btree,adapter:hybrid --hybrid-model cpr-pgm"),
            "{step}"
        );
        assert!(
            step.contains("--workload read-only,balanced,write-only"),
            "{step}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    repro_tiny(&["002-table7"], &out_dir);
    let best = std::fs::read_to_string(out_dir.join("002-table7-best.csv")).unwrap();
    let mut lines = best.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("dataset,workload,index,ops_per_s"),
        "{header}"
    );
    assert!(header.ends_with(",total"), "{header}");
    let rows: Vec<&str> = lines.collect();
    for workload in ["read-only", "write-only", "balanced"] {
        let btree = rows
            .iter()
            .filter(|r| r.contains(&format!(",{workload},btree,")))
            .count();
        assert_eq!(btree, 1, "{workload}: {best}");
    }
    assert!(
        rows.iter().any(|r| r.contains(",read-only,hybrid,")),
        "{best}"
    );
    let mut set = RecordSet::default();
    set.read(&out_dir.join("002-table7.jsonl")).unwrap();
    assert!(!set.ycsb.is_empty());
}

#[test]
fn unknown_ids_are_refused_with_the_known_ones() {
    let out = lidx(&["repro", "003-fig99", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("no experiment `003-fig99`"), "{err}");
    assert!(
        err.contains("003-fig6") && err.contains("000-table2"),
        "{err}"
    );
}

#[test]
fn start_experiments_write_table_one_and_the_read_mostly_records() {
    let dir = tempfile::tempdir().unwrap();
    lidx_ok(&[
        "repro",
        "004-table1",
        "004-fig8",
        "--dataset",
        "gen:lognormal:20K",
        "--ops",
        "2K",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let mut set = RecordSet::default();
    set.read(&dir.path().join("004-table1.jsonl")).unwrap();
    // Table I: the seven node kinds, each beside the paper's figures.
    assert_eq!(set.start_nodes.len(), 7);
    assert!(set.start_nodes.iter().all(|r| r.paper_uncached_ns > 0.0));
    assert!(set.start_nodes[0].command.contains("calibrate"));
    let mut set = RecordSet::default();
    set.read(&dir.path().join("004-fig8.jsonl")).unwrap();
    let trees: Vec<&str> = set.start_mixed.iter().map(|r| r.tree.as_str()).collect();
    assert_eq!(trees, ["art", "start", "start-greedy"]);
    // 2K operations: 105 inserts (5%) and 2,000 lookups.
    assert!(set
        .start_mixed
        .iter()
        .all(|r| r.inserted == 105 && r.lookups == 2_000));
    for svg in [
        "004-table1-node-costs",
        "004-fig8-time-per-op",
        "004-fig8-throughput",
    ] {
        let svg = std::fs::read_to_string(dir.path().join(format!("{svg}.svg"))).unwrap();
        assert!(svg.contains("<polyline"), "{svg}");
    }
    // The model calibrate saved stayed in the scratch directory, which is gone.
    assert!(!dir.path().join("004-table1.work").exists());
}

#[test]
fn existing_outputs_are_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("002-table3.csv");
    std::fs::write(&csv, "mine\n").unwrap();
    let args = [
        "repro",
        "002-table3",
        "--dataset",
        "gen:lognormal:5K",
        "--out",
        dir.path().to_str().unwrap(),
    ];
    let out = lidx(&args);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("002-table3.csv exists; give --force"), "{err}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "mine\n");
    assert!(!dir.path().join("002-table3.jsonl").exists());

    let out = lidx(&[&args[..], &["--force"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("dataset,"));
}
