//! `lidx join --algo unsorted-btree|unsorted-learned` end to end: on shuffled tables written by
//! `lidx table create --shuffle`, both routes print the output count and checksum that
//! sort-merge prints on the same tables sorted, with the index creation time apart.

mod common;

use common::{json_lines, lidx, table_create};

#[test]
fn unsorted_routes_match_sort_merge_on_the_sorted_tables() {
    let tmp = tempfile::tempdir().unwrap();
    for (sub, extra) in [("sorted/", None), ("shuffled/", Some("--shuffle"))] {
        let dir = format!("{}/{sub}", tmp.path().display());
        let extra: Vec<&str> = extra.into_iter().collect();
        let created = table_create("gen:lognormal:20K", "10", &dir, &extra);
        assert_eq!(json_lines(&created).len(), 2);
    }
    let base = tmp.path().display().to_string();
    let join = |algo: &str, sub: &str, memory: &str| {
        let (l, r, o) = (
            format!("{base}/{sub}/r10"),
            format!("{base}/{sub}/large"),
            format!("{base}/{sub}/out-{algo}"),
        );
        let lines = json_lines(&common::join(
            algo,
            &l,
            &r,
            &o,
            &[
                "--force",
                "--threads",
                "2",
                "--memory",
                memory,
                "--device",
                "sim:ram",
            ],
        ));
        assert_eq!(lines.len(), 1);
        lines[0].clone()
    };
    let sorted = join("sort-merge", "sorted", "64Mi");
    assert_eq!(sorted["output_count"].as_u64(), Some(2000));
    for algo in ["unsorted-btree", "unsorted-learned"] {
        let line = join(algo, "shuffled", "16Mi");
        assert_eq!(line["algo"], algo);
        assert_eq!(line["output_count"], sorted["output_count"], "{line}");
        assert_eq!(line["checksum"], sorted["checksum"], "{line}");
        assert!(line["index_seconds"].as_f64().unwrap() > 0.0, "{line}");
        assert!(line["output_sorted"].as_bool().unwrap(), "{line}");
    }
    let too_small = lidx(&[
        "join",
        "--algo",
        "unsorted-learned",
        "--left",
        &format!("{base}/shuffled/r10"),
        "--right",
        &format!("{base}/shuffled/large"),
        "--out",
        &format!("{base}/o"),
        "--force",
        "--memory",
        "10K",
        "--device",
        "sim:ram",
    ]);
    assert_eq!(too_small.status.code(), Some(2));
}
