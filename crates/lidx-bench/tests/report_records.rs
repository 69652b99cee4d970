//! `lidx report`'s reading of result files: records of every kind found by their `schema` or,
//! in files written before it existed, by their fields; a newer schema or a missing field is
//! refused naming the field; the page escapes what the files hold.

use std::path::Path;

use lidx_bench::records::{RecordKind, RecordSet};
use lidx_bench::{charts, findings, page, BenchError};

fn results(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/results")
        .join(name)
}

const BENCH_V0: &str = r#"{"dataset":"lognormal:100K","n":99999,"workload":"lookup:uniform","index":"pgm","label":"pgm:eps=64","params":"eps=64","build_s":0.01,"build_keys_per_s":1e7,"bytes":1448,"bytes_per_key":0.0145,"mean_ns":95.5,"mean_ns_min":90.0,"mean_ns_max":99.0,"p50_ns":120,"p99_ns":400,"p999_ns":900,"sample_every":16,"huge_pages":false,"mean_log2_window":6.9,"segments":12,"height":2,"speedup_vs_binary":1.8,"runs":1,"queries":10000,"seed":42,"cpu":"AMD EPYC","cores":2,"lidx_version":"0.1.0"}"#;

fn err_text(e: BenchError) -> String {
    e.to_string()
}

#[test]
fn files_without_schema_are_read_as_version_one() {
    let mut set = RecordSet::default();
    // Written by earlier lidx runs: no `schema`, no `command`.
    set.read(&results("dims-insert-lognormal-10m.csv")).unwrap();
    set.read(&results("ycsb-curve-balanced-lognormal-10m.csv"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("bench.jsonl");
    std::fs::write(&bench, format!("{BENCH_V0}\n\n{BENCH_V0}\n")).unwrap();
    set.read(&bench).unwrap();
    assert!(!set.update.is_empty());
    assert!(!set.curve.is_empty());
    assert_eq!(set.bench.len(), 2);
    assert_eq!(set.bench[0].schema, "bench/1");
    assert_eq!(set.bench[0].command, "");
    assert_eq!(set.update[0].schema, "dims-update/1");
    assert_eq!(set.files.len(), 3);
    assert_eq!(set.files[2].kinds.get(&RecordKind::Bench), Some(&2));
    assert!(!set.files[2].facts.contains_key("command"));
    assert_eq!(set.files[2].facts["cpu"], vec!["AMD EPYC".to_string()]);
}

#[test]
fn written_records_carry_their_schema_and_round_trip() {
    let mut set = RecordSet::default();
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.jsonl");
    std::fs::write(&old, format!("{BENCH_V0}\n")).unwrap();
    set.read(&old).unwrap();
    let mut record = set.bench[0].clone();
    record.schema = RecordKind::Bench.schema();
    record.command = "lidx bench --dataset 'a b'".to_string();
    for name in ["new.jsonl", "new.csv"] {
        let path = dir.path().join(name);
        lidx_bench::report::write_records(&path, std::slice::from_ref(&record)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("bench/1"), "{text}");
        let mut again = RecordSet::default();
        again.read(&path).unwrap();
        assert_eq!(again.bench, vec![record.clone()]);
        assert_eq!(
            again.files[0].facts["command"],
            vec![record.command.clone()]
        );
    }
}

#[test]
fn a_newer_schema_or_a_missing_field_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let newer = write(
        "newer.jsonl",
        BENCH_V0.replacen('{', r#"{"schema":"bench/2","#, 1),
    );
    let e = err_text(RecordSet::default().read(&newer).unwrap_err());
    assert!(e.contains("`schema`") && e.contains("newer"), "{e}");
    assert!(e.contains("line 1"), "{e}");

    let unknown = write(
        "unknown.jsonl",
        BENCH_V0.replacen('{', r#"{"schema":"teapot/1","#, 1),
    );
    let e = err_text(RecordSet::default().read(&unknown).unwrap_err());
    assert!(e.contains("`schema`") && e.contains("teapot"), "{e}");

    let missing = write("missing.jsonl", BENCH_V0.replace(r#""mean_ns":95.5,"#, ""));
    let e = err_text(RecordSet::default().read(&missing).unwrap_err());
    assert!(
        e.contains("`mean_ns`") && e.contains("`bench` record"),
        "{e}"
    );

    let csv = write("missing.csv", "dataset,n,loaded,inserted,strategy,index,reserve,insert_ns,insert_s,retrains\nx,1,1,0,gap,gap,1,1.0,1.0,0\n".to_string());
    let e = err_text(RecordSet::default().read(&csv).unwrap_err());
    assert!(e.contains("line 2") && e.contains("missing field"), "{e}");

    let nothing = write("nothing.jsonl", r#"{"a":1}"#.to_string());
    let e = err_text(RecordSet::default().read(&nothing).unwrap_err());
    assert!(
        e.contains("`schema`") && e.contains("mean_log2_window"),
        "{e}"
    );
}

#[test]
fn the_page_escapes_what_the_files_hold() {
    let dir = tempfile::tempdir().unwrap();
    let evil = BENCH_V0
        .replace(r#""index":"pgm""#, r#""index":"<script>alert(1)</script>""#)
        .replace(
            r#""cpu":"AMD EPYC""#,
            r#""cpu":"<img src=x onerror=alert(2)>""#,
        )
        .replacen('{', r#"{"command":"lidx bench --dataset '<b>'","#, 1);
    let path = dir.path().join("evil.jsonl");
    std::fs::write(&path, format!("{evil}\n")).unwrap();
    let md = dir.path().join("evil.md");
    std::fs::write(
        &md,
        "# <h1>x</h1>\n\n| a | b |\n|---|---|\n| <script>bad()</script> | `<i>` |\n",
    )
    .unwrap();
    let mut set = RecordSet::default();
    set.read(&path).unwrap();
    let tables = findings::read(&md).unwrap();
    let charts = charts::charts(&set).unwrap();
    assert!(!charts.is_empty());
    let html = page::render("<title>", &set, &charts, &tables);
    assert!(!html.contains("<script"), "unescaped script");
    assert!(!html.contains("<img"), "unescaped img");
    assert!(!html.contains("<b>") && !html.contains("<i>") && !html.contains("<h1>x"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("<code>&lt;i&gt;</code>"));
    assert!(html.contains("&lt;title&gt;"));
}
