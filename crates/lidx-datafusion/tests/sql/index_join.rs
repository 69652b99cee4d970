//! The index join: it replaces DataFusion's hash join (or its sort-merge join, where hash
//! joins are not preferred) when one side is a whole lidx table and the other is small, shows in `EXPLAIN`, answers what the hash join answers (the same
//! query in a session without the rule), and is not planned when a condition fails: an outer
//! side over the limit, a key filter on the table, a join on the value, a store as the inner
//! side, an outer join.

use crate::common::*;
use lidx_datafusion::SqlSession;

struct Data {
    _dir: tempfile::TempDir,
    index: SqlSession,
    hash: SqlSession,
}

/// A table of 40,000 keys (`big`), a table of 700 of them and 300 others (`small`), a store of
/// 600 keys as 16-byte strings (`kv`), a string-key table of the 40,000 (`sbig`); one session
/// with index joins (outer sides up to `limit` rows) and one without.
fn data(partitions: usize, limit: usize) -> Data {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(40_000, 31);
    write_u64_table(dir.path(), "big", &keys);
    let mut small: Vec<u64> = probe_keys(&keys, 1_400, 32);
    small.sort_unstable();
    small.dedup();
    write_u64_table(dir.path(), "small", &small);
    write_str16_table(dir.path(), "sbig", &keys);
    let store = dir.path().join("kv");
    {
        use lidx::kv::{CreateOptions, FsyncPolicy, Store, StoreOptions, WriteBatch};
        let options = StoreOptions {
            fsync: FsyncPolicy::Never,
            ..StoreOptions::default()
        };
        let s = Store::create(&store, &CreateOptions::default(), &options).unwrap();
        let mut batch = WriteBatch::new();
        for k in probe_keys(&keys, 600, 33) {
            batch.put(&str16_of(k), b"kv").unwrap();
        }
        s.write(&batch).unwrap();
        s.close().unwrap();
    }
    let register = |s: &mut SqlSession| {
        s.register("big", &dir.path().join("big")).unwrap();
        s.register("small", &dir.path().join("small")).unwrap();
        s.register("sbig", &dir.path().join("sbig")).unwrap();
        s.register("kv", &store).unwrap();
    };
    let mut index = SqlSession::with_index_join(partitions, Some(limit));
    let mut hash = SqlSession::with_index_join(partitions, None);
    register(&mut index);
    register(&mut hash);
    Data {
        _dir: dir,
        index,
        hash,
    }
}

fn sorted_rows(s: &SqlSession, sql: &str) -> Vec<Vec<String>> {
    let mut out = rows_in_order(s, sql);
    out.sort();
    out
}

fn rows_in_order(s: &SqlSession, sql: &str) -> Vec<Vec<String>> {
    let batches = query(s, sql);
    let mut out = Vec::new();
    for b in &batches {
        for i in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| datafusion::arrow::util::display::array_value_to_string(c, i).unwrap())
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn index_join_replaces_a_sort_merge_join_where_hash_joins_are_not_preferred() {
    let d = data(2, 5_000);
    for s in [&d.index, &d.hash] {
        runtime().block_on(async {
            let set = "SET datafusion.optimizer.prefer_hash_join = false";
            s.context().sql(set).await.unwrap().collect().await.unwrap();
        });
    }
    let sql = "SELECT small.key, small.value, big.value FROM small JOIN big ON small.key = big.key";
    let plan = physical_plan(&d.index, sql);
    assert!(plan.contains("LidxIndexJoinExec"), "{plan}");
    assert!(!plan.contains("SortMergeJoinExec"), "{plan}");
    let merge_plan = physical_plan(&d.hash, sql);
    assert!(merge_plan.contains("SortMergeJoinExec"), "{merge_plan}");
    let got = sorted_rows(&d.index, sql);
    assert_eq!(got, sorted_rows(&d.hash, sql));
    assert!(!got.is_empty());
}

#[test]
fn index_join_replaces_the_hash_join_and_answers_the_same() {
    for partitions in [1, 3] {
        let d = data(partitions, 5_000);
        for sql in [
            "SELECT small.key, small.value, big.value FROM small JOIN big ON small.key = big.key",
            "SELECT big.key, big.value, small.key FROM big JOIN small ON big.key = small.key",
            "SELECT count(*) FROM big JOIN small ON small.key = big.key",
            "SELECT big.value FROM small, big WHERE small.key = big.key AND small.value > X'80'",
            "SELECT kv.key, sbig.value FROM kv JOIN sbig ON kv.key = sbig.key",
            "SELECT s.key, b.value FROM (SELECT key FROM small UNION ALL SELECT key FROM small) s \
             JOIN big b ON s.key = b.key",
        ] {
            let plan = physical_plan(&d.index, sql);
            assert!(plan.contains("LidxIndexJoinExec"), "{sql}:\n{plan}");
            assert!(!plan.contains("HashJoinExec"), "{sql}:\n{plan}");
            let hash_plan = physical_plan(&d.hash, sql);
            assert!(hash_plan.contains("HashJoinExec"), "{sql}:\n{hash_plan}");
            let got = sorted_rows(&d.index, sql);
            assert_eq!(got, sorted_rows(&d.hash, sql), "{sql}");
            assert!(!got.is_empty(), "{sql}");
        }
        // What the plan above the join needs from it (an order, a distribution by group) is
        // added for it: the same rows, in the same order where the query asks for one.
        for sql in [
            "SELECT small.key, big.value FROM small JOIN big ON small.key = big.key ORDER BY small.key",
            "SELECT big.key FROM small JOIN big ON small.key = big.key ORDER BY big.key DESC LIMIT 7",
            "SELECT big.value, count(*) AS n FROM small JOIN big ON small.key = big.key \
             GROUP BY big.value ORDER BY big.value",
        ] {
            let plan = physical_plan(&d.index, sql);
            assert!(plan.contains("LidxIndexJoinExec"), "{sql}:\n{plan}");
            assert_eq!(rows_in_order(&d.index, sql), rows_in_order(&d.hash, sql), "{sql}");
        }
        let matched = single_u64(
            &d.index,
            "SELECT count(*) FROM small JOIN big ON small.key = big.key",
        );
        assert!((650..=750).contains(&matched), "{matched}");
    }
}

#[test]
fn index_join_reads_on_across_many_small_batches_in_any_key_order() {
    // Batches of 16 outer rows: each partition's join resumes the reader its last batch put
    // aside, whether the next batch's keys come after the last one's (the outer table's scan),
    // before them (a descending outer side, a second pass of a UNION ALL), or both.
    let d = data(2, 5_000);
    for s in [&d.index, &d.hash] {
        runtime().block_on(async {
            let set = "SET datafusion.execution.batch_size = 16";
            s.context().sql(set).await.unwrap().collect().await.unwrap();
        });
    }
    for sql in [
        "SELECT small.key, big.value FROM small JOIN big ON small.key = big.key",
        "SELECT s.key, b.value FROM (SELECT key FROM small ORDER BY key DESC) s \
         JOIN big b ON s.key = b.key",
        "SELECT s.key, b.value FROM (SELECT key FROM small UNION ALL SELECT key FROM small) s \
         JOIN big b ON s.key = b.key",
        "SELECT kv.key, sbig.value FROM kv JOIN sbig ON kv.key = sbig.key",
    ] {
        let plan = physical_plan(&d.index, sql);
        assert!(plan.contains("LidxIndexJoinExec"), "{sql}:\n{plan}");
        let got = sorted_rows(&d.index, sql);
        assert_eq!(got, sorted_rows(&d.hash, sql), "{sql}");
        assert!(got.len() > 100, "{sql}: {} rows", got.len());
    }
}

#[test]
fn index_join_is_not_planned_when_a_condition_fails() {
    let d = data(2, 5_000);
    for sql in [
        // The outer side is over the limit (the tables are both larger than 5,000 rows).
        "SELECT count(*) FROM big JOIN sbig ON big.value = sbig.value",
        "SELECT count(*) FROM big b1 JOIN big b2 ON b1.key = b2.key",
        // A key filter on the table leaves it not a whole table.
        "SELECT count(*) FROM small JOIN big ON small.key = big.key WHERE big.key > 1000",
        // DataFusion carries a key filter on the outer side over to the table's key too.
        "SELECT big.value FROM small, big WHERE small.key = big.key AND small.key > 500000000000",
        // A join on the value, not the key.
        "SELECT count(*) FROM small JOIN big ON small.value = big.value",
        // The inner side would be a store, which has no learned index.
        "SELECT count(*) FROM small JOIN kv ON small.value = kv.value",
        // Not an inner join.
        "SELECT count(*) FROM small LEFT JOIN big ON small.key = big.key",
    ] {
        let plan = physical_plan(&d.index, sql);
        assert!(!plan.contains("LidxIndexJoinExec"), "{sql}:\n{plan}");
        assert_eq!(
            sorted_rows(&d.index, sql),
            sorted_rows(&d.hash, sql),
            "{sql}"
        );
    }
    // The limit is the rule's parameter: under it, the same query is an index join.
    let tight = data(2, 500);
    let sql = "SELECT count(*) FROM small JOIN big ON small.key = big.key";
    assert!(!physical_plan(&tight.index, sql).contains("LidxIndexJoinExec"));
    assert!(physical_plan(&d.index, sql).contains("LidxIndexJoinExec"));
}
