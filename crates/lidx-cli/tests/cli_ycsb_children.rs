//! Issue 32 part 3: under `lidx ycsb --memory-limit 160M` the `hybrid` engine's load was
//! killed by the memory cgroup and took the whole invocation with it, every other store's
//! results too. Now each store runs each workload in a child process of its own: a store that
//! crashes or that its memory cgroup kills is a `failed` row saying how, and the next store
//! still runs. Also: lidx's budget under a limit, and every record's `config` line.

mod common;

use common::{lidx, text};
use lidx_bench::records::KvRecord;
use lidx_bench::report::read_records;

/// `lidx ycsb` on `dataset` on files in `dir`, its records in `dir/r.jsonl`.
fn ycsb_on(
    dir: &std::path::Path,
    dataset: &str,
    workloads: &str,
    stores: &str,
    extra: &[&str],
) -> std::process::Output {
    let device = format!("file:{}", dir.join("data").display());
    let out = dir.join("r.jsonl");
    let mut args = vec![
        "ycsb",
        "--dataset",
        dataset,
        "--ops",
        "300",
        "--payload-size",
        "100",
        "--device",
        &device,
        "--workload",
        workloads,
        "--store",
        stores,
        "--seed=3",
        "--force",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    lidx(&args)
}

/// [`ycsb_on`] 4,000 keys, YCSB C and A.
fn ycsb(dir: &std::path::Path, stores: &str, extra: &[&str]) -> std::process::Output {
    ycsb_on(dir, "gen:uniform-sparse:4K", "c,a", stores, extra)
}

#[test]
fn a_crashing_store_is_a_failed_row_and_the_next_store_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    // The child of the second store aborts (SIGABRT), as a crash of an engine's code would.
    let result = ycsb(dir.path(), "log:btree,lmdb,redb", &["--child-abort", "1"]);
    let (stdout, stderr) = (text(&result.stdout), text(&result.stderr));
    // A crash is no measurement: the command says so and exits 1, after its outputs.
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("2 store run(s) failed"), "{stderr}");
    assert!(
        stdout.contains("failed: killed by signal 6 (SIGABRT)"),
        "{stdout}"
    );
    let records: Vec<KvRecord> = read_records(&dir.path().join("r.jsonl")).unwrap();
    assert_eq!(
        records.len(),
        6,
        "every store on every workload has its row"
    );
    for r in &records {
        if r.store.starts_with("peer:lmdb") {
            assert_eq!(r.failure(), Some("killed by signal 6 (SIGABRT)"), "{r:?}");
            assert!(r.ops_per_s == 0.0 && r.config.is_empty());
        } else {
            assert!(r.skipped.is_none() && r.ops_per_s > 0.0, "{r:?}");
            assert!(r.speedup_vs_btree.is_some(), "ratios to the reference");
            assert!(!r.config.is_empty(), "{r:?}");
        }
    }
    // The store after the crash ran, and said what with.
    let redb = records
        .iter()
        .find(|r| r.store.starts_with("peer:redb"))
        .unwrap();
    assert!(redb.config.starts_with("cache="), "{}", redb.config);
    assert!(stdout.contains("config of peer:redb"), "{stdout}");
    assert!(
        records[0].config.starts_with("map on the heap"),
        "{}",
        records[0].config
    );
}

#[test]
fn without_a_failure_the_children_make_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let result = ycsb(dir.path(), "hybrid,fjall", &["--memory-budget", "2M"]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let records: Vec<KvRecord> = read_records(&dir.path().join("r.jsonl")).unwrap();
    assert_eq!(records.len(), 4);
    for r in &records {
        assert!(r.skipped.is_none() && r.ops_per_s > 0.0, "{r:?}");
        assert_eq!(r.memory_budget, Some(2_000_000));
    }
    // Each child made its row from the same plan: the same reads on every store.
    assert_eq!(records[0].reads, records[1].reads);
    // Nothing of the runs is left in the device's directory.
    assert_eq!(
        std::fs::read_dir(dir.path().join("data")).unwrap().count(),
        0
    );
}

/// The memory cgroups these tests need: none in a CI container without root.
fn cgroups(result: &std::process::Output) -> bool {
    let stderr = text(&result.stderr);
    if result.status.code() == Some(2) && stderr.contains("memory cgroup") {
        eprintln!("skipped: this machine cannot create a memory cgroup: {stderr}");
        return false;
    }
    true
}

#[test]
fn under_a_limit_lidx_and_the_peers_share_it_by_the_stated_rule() {
    let dir = tempfile::tempdir().unwrap();
    let limit = ["--memory-limit", "400M", "--cache-blocks", "64"];
    let result = ycsb(dir.path(), "hybrid,redb,fjall,lmdb", &limit);
    if !cgroups(&result) {
        return;
    }
    assert!(result.status.success(), "{}", text(&result.stderr));
    let stdout = text(&result.stdout);
    assert!(
        stdout.contains(
            "five eighths of the limit less the cache, the share each peer's own memory gets \
             on a workload that writes (a workload of this run does"
        ),
        "{stdout}"
    );
    let records: Vec<KvRecord> = read_records(&dir.path().join("r.jsonl")).unwrap();
    assert_eq!(records.len(), 8);
    let of = |name: &str| records.iter().find(|r| r.store.starts_with(name)).unwrap();
    // lidx: 5/8 of 400 MB (workload `a` writes; the budget is one for the run) less 64
    // blocks of 4 KiB.
    assert_eq!(
        of("store:hybrid").memory_budget,
        Some(250_000_000 - 64 * 4096)
    );
    assert!(of("store:hybrid").config.contains("cache=64x4KiB=256KiB"));
    // redb 3/4 of the limit for `c` and 5/8 for `a`, fjall a quarter; named by the limit,
    // not a budget.
    assert_eq!(of("peer:redb").store, "peer:redb,limit=400000000");
    let redb = |workload: &str| {
        records
            .iter()
            .find(|r| r.store.starts_with("peer:redb") && r.workload.starts_with(workload))
            .unwrap()
    };
    assert!(redb("c").config.starts_with("cache=286.1MiB "));
    assert!(redb("a").config.starts_with("cache=238.4MiB "));
    assert!(of("peer:fjall")
        .config
        .starts_with("cache=95.4MiB memtable=23.8MiB"));
    assert!(of("peer:lmdb").config.starts_with("map_size=1024GiB"));
    for r in &records {
        assert_eq!(r.memory_limit, Some(400_000_000));
        assert!(
            r.cgroup_peak_bytes.is_some_and(|p| p <= 400_000_000),
            "{r:?}"
        );
    }
}

#[test]
fn a_store_its_memory_cgroup_kills_is_a_failed_row_and_the_next_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    // 150,000 keys in a `log:btree`'s map on the heap do not fit in 4 MB; LMDB's pages are
    // the page cache, which the kernel reclaims instead.
    let result = ycsb_on(
        dir.path(),
        "gen:uniform-sparse:200K",
        "c",
        "log:btree,lmdb",
        &["--memory-limit", "4M"],
    );
    let out = dir.path().join("r.jsonl");
    if !cgroups(&result) {
        return;
    }
    // The cgroup's kill is the store's result (it does not fit), not a failure of the command.
    assert!(result.status.success(), "{}", text(&result.stderr));
    let records: Vec<KvRecord> = read_records(&out).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[0].failure(),
        Some("killed by the memory cgroup (limit 4.0 MB)"),
        "{:?}",
        records[0]
    );
    assert!(
        records[1].skipped.is_none() && records[1].ops_per_s > 0.0,
        "{:?}",
        records[1]
    );
    assert!(text(&result.stdout).contains("failed: killed by the memory cgroup"));
}
