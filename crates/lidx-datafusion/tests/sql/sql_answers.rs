//! SQL over a lidx table or store answers what lidx computes directly on the same data: the
//! count, key sum and rows of a key range, an `IN` list of present and absent keys, a full
//! scan in key order, a key filter beside a value filter, at one and at four partitions.

use crate::common::*;
use datafusion::arrow::array::AsArray;
use lidx::kv::{CreateOptions, Store, StoreOptions, WriteBatch};
use lidx::Str16;
use lidx_datafusion::SqlSession;

const N: usize = 60_000;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn u64_table_answers_equal_lidx_scans() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(N, 1);
    write_u64_table(dir.path(), "t", &keys);
    for partitions in [1, 4] {
        let mut s = SqlSession::new(partitions);
        s.register("t", &dir.path().join("t")).unwrap();
        let (lo, hi) = (keys[N / 5] + 1, keys[3 * N / 5]);
        let want = table_records::<u64>(dir.path(), "t", |k| (lo..=hi).contains(k));
        let where_ = format!("key BETWEEN {lo} AND {hi}");
        let count = single_u64(&s, &format!("SELECT count(*) FROM t WHERE {where_}"));
        assert_eq!(count, want.len() as u64);
        let sum = single_u64(&s, &format!("SELECT sum(key) FROM t WHERE {where_}"));
        assert_eq!(sum, want.iter().map(|(k, _)| k).sum::<u64>());
        let got = rows(&query(
            &s,
            &format!("SELECT key, value FROM t WHERE {where_} ORDER BY key"),
        ));
        let want_rows: Vec<_> = want
            .iter()
            .map(|(k, v)| (k.to_be_bytes().to_vec(), v.clone()))
            .collect();
        assert_eq!(got, want_rows);
        // The same range in other words: two comparisons, either side, strict ends moved.
        let other = format!(
            "SELECT key, value FROM t WHERE key > {} AND {hi} >= key ORDER BY key",
            lo - 1
        );
        assert_eq!(rows(&query(&s, &other)), want_rows);

        let probes = probe_keys(&keys, 300, 2);
        let list: Vec<String> = probes.iter().map(u64::to_string).collect();
        let sql = format!(
            "SELECT key, value FROM t WHERE key IN ({}) ORDER BY key",
            list.join(",")
        );
        let want_in = table_records::<u64>(dir.path(), "t", |k| probes.contains(k));
        assert!(
            want_in.len() >= 150 && want_in.len() < 300,
            "{} present",
            want_in.len()
        );
        let want_in: Vec<_> = want_in
            .iter()
            .map(|(k, v)| (k.to_be_bytes().to_vec(), v.clone()))
            .collect();
        assert_eq!(rows(&query(&s, &sql)), want_in);

        let all = rows(&query(&s, "SELECT key, value FROM t ORDER BY key"));
        let want_all: Vec<_> = table_records::<u64>(dir.path(), "t", |_| true)
            .iter()
            .map(|(k, v)| (k.to_be_bytes().to_vec(), v.clone()))
            .collect();
        assert_eq!(all.len(), N);
        assert_eq!(all, want_all);

        // A key filter with a filter on the value, which DataFusion evaluates itself.
        let v = value_of(keys[N / 2]);
        let sql = format!(
            "SELECT key FROM t WHERE key >= {} AND value = X'{}'",
            keys[N / 4],
            hex(&v)
        );
        assert_eq!(single_u64(&s, &sql), keys[N / 2]);
        // Keys past either end of the table, and a range that holds no key.
        let top = keys[N - 1];
        assert_eq!(
            single_u64(&s, &format!("SELECT count(*) FROM t WHERE key > {top}")),
            0
        );
        assert_eq!(single_u64(&s, "SELECT count(*) FROM t WHERE key < 0"), 0);
        assert_eq!(
            single_u64(&s, "SELECT count(*) FROM t WHERE key >= -3"),
            N as u64
        );
        let gap = format!(
            "SELECT count(*) FROM t WHERE key > {} AND key < {}",
            keys[10], keys[11]
        );
        assert_eq!(single_u64(&s, &gap), 0);
    }
}

#[test]
fn string_key_table_answers_equal_lidx_scans() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(N / 2, 3);
    write_str16_table(dir.path(), "s", &keys);
    let mut s = SqlSession::new(3);
    s.register("s", &dir.path().join("s")).unwrap();
    let (lo, hi) = (str16_of(keys[100]), str16_of(keys[9_000]));
    let want: Vec<(Vec<u8>, Vec<u8>)> =
        table_records::<Str16>(dir.path(), "s", |k| (lo..=hi).contains(k))
            .into_iter()
            .map(|(k, v)| (k.to_vec(), v))
            .collect();
    let sql = format!(
        "SELECT key, value FROM s WHERE key BETWEEN X'{}' AND X'{}' ORDER BY key",
        hex(&lo),
        hex(&hi)
    );
    assert_eq!(rows(&query(&s, &sql)), want);
    assert_eq!(want.len(), 8_901);
    // A literal shorter than the keys: every key whose first 8 bytes are at least keys[100]'s.
    let sql = format!(
        "SELECT count(*) FROM s WHERE key >= X'{}'",
        hex(&keys[100].to_be_bytes())
    );
    assert_eq!(single_u64(&s, &sql), (keys.len() - 100) as u64);
    let probes = probe_keys(&keys, 50, 4);
    let list: Vec<String> = probes
        .iter()
        .map(|k| format!("X'{}'", hex(&str16_of(*k))))
        .collect();
    let sql = format!(
        "SELECT key, value FROM s WHERE key IN ({}) ORDER BY key",
        list.join(",")
    );
    let want_in: Vec<(Vec<u8>, Vec<u8>)> = table_records::<Str16>(dir.path(), "s", |k| {
        probes.iter().any(|p| str16_of(*p) == *k)
    })
    .into_iter()
    .map(|(k, v)| (k.to_vec(), v))
    .collect();
    assert_eq!(rows(&query(&s, &sql)), want_in);
    let all = rows(&query(&s, "SELECT * FROM s ORDER BY key"));
    assert_eq!(all.len(), keys.len());
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn store_answers_equal_lidx_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("kv");
    let keys = keys(N / 2, 5);
    write_store(&store_dir, &keys);
    for partitions in [1, 4] {
        let mut s = SqlSession::new(partitions);
        s.register("kv", &store_dir).unwrap();
        let (lo, hi) = (keys[1_000].to_be_bytes(), keys[25_000].to_be_bytes());
        let want = store_entries(&store_dir, &lo, &hi);
        let where_ = format!("key BETWEEN X'{}' AND X'{}'", hex(&lo), hex(&hi));
        let count = single_u64(&s, &format!("SELECT count(*) FROM kv WHERE {where_}"));
        assert_eq!(count, want.len() as u64);
        let sql = format!("SELECT key, value FROM kv WHERE {where_} ORDER BY key");
        assert_eq!(rows(&query(&s, &sql)), want);
        // Deleted keys are gone and updated ones show their new value.
        assert!(want.iter().any(|(_, v)| v == b"updated"));
        assert!(want.len() < 24_001);

        let probes = probe_keys(&keys, 200, 6);
        let list: Vec<String> = probes
            .iter()
            .map(|k| format!("X'{}'", hex(&k.to_be_bytes())))
            .collect();
        let sql = format!(
            "SELECT key, value FROM kv WHERE key IN ({}) ORDER BY key",
            list.join(",")
        );
        let mut want_in: Vec<_> = probes
            .iter()
            .flat_map(|k| store_entries(&store_dir, &k.to_be_bytes(), &k.to_be_bytes()))
            .collect();
        want_in.sort();
        want_in.dedup();
        assert_eq!(rows(&query(&s, &sql)), want_in);

        let all = rows(&query(&s, "SELECT key, value FROM kv ORDER BY key"));
        assert_eq!(all, store_entries(&store_dir, &[0], &[0xff; 9]));
        let unordered = rows(&query(&s, "SELECT key, value FROM kv"));
        assert_eq!(unordered.len(), all.len());
    }
}

#[test]
fn a_table_joins_a_store_on_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(20_000, 7);
    write_u64_table(dir.path(), "t", &keys);
    let store_dir = dir.path().join("kv");
    write_store(&store_dir, &keys[..10_000]);
    let mut s = SqlSession::new(2);
    s.register("t", &dir.path().join("t")).unwrap();
    s.register("kv", &store_dir).unwrap();
    // The store's keys are the table's keys big-endian: join through the value's bytes.
    let live = store_entries(&store_dir, &[0], &[0xff; 9]);
    let sql = "SELECT count(*) FROM kv JOIN t ON kv.value = t.value";
    let want = live
        .iter()
        .filter(|(_, v)| v.as_slice() != b"updated")
        .count();
    assert_eq!(single_u64(&s, sql), want as u64);
}

#[test]
fn long_key_lists_answer_as_short_ones() {
    // More key ranges than a scan seeks while it is planned: its partitions seek their share
    // as they read. Present and absent keys, neighbours (whose ranges touch and merge) and
    // ranges, on both key types, whole, counted and cut by a limit.
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(N, 5);
    write_u64_table(dir.path(), "t", &keys);
    write_str16_table(dir.path(), "s", &keys);
    let mut probes = probe_keys(&keys, 400, 6);
    probes.extend(keys[1_000..1_040].iter().map(|k| k + 1));
    probes.extend_from_slice(&keys[1_000..1_040]);
    let ranges: Vec<(u64, u64)> = (0..20)
        .map(|i| (keys[i * 2_900 + 7], keys[i * 2_900 + 12] + 1))
        .collect();
    let list: Vec<String> = probes.iter().map(u64::to_string).collect();
    let between: Vec<String> = ranges
        .iter()
        .map(|(lo, hi)| format!("key BETWEEN {lo} AND {hi}"))
        .collect();
    let filter = format!("key IN ({}) OR {}", list.join(","), between.join(" OR "));
    let keep = |k: &u64| probes.contains(k) || ranges.iter().any(|(lo, hi)| (lo..=hi).contains(&k));
    let want: Vec<_> = table_records::<u64>(dir.path(), "t", keep)
        .into_iter()
        .map(|(k, v)| (k.to_be_bytes().to_vec(), v))
        .collect();
    assert!(want.len() > 330, "{} rows", want.len());
    let str_list: Vec<String> = probes
        .iter()
        .map(|k| format!("X'{}'", hex(&str16_of(*k))))
        .collect();
    let want_str: Vec<(Vec<u8>, Vec<u8>)> = table_records::<Str16>(dir.path(), "s", |k| {
        probes.iter().any(|p| str16_of(*p) == *k)
    })
    .into_iter()
    .map(|(k, v)| (k.to_vec(), v))
    .collect();
    for partitions in [1, 3] {
        let mut s = SqlSession::new(partitions);
        s.register("t", &dir.path().join("t")).unwrap();
        s.register("s", &dir.path().join("s")).unwrap();
        let sql = format!("SELECT key, value FROM t WHERE {filter} ORDER BY key");
        assert_eq!(rows(&query(&s, &sql)), want, "{partitions} partitions");
        let count = format!("SELECT count(*) FROM t WHERE {filter}");
        assert_eq!(single_u64(&s, &count), want.len() as u64);
        // A limit without an order: the first rows in key order, from one partition.
        let limited = format!("SELECT key, value FROM t WHERE {filter} LIMIT 7");
        assert_eq!(rows(&query(&s, &limited)), want[..7]);
        let sql = format!(
            "SELECT key, value FROM s WHERE key IN ({}) ORDER BY key",
            str_list.join(",")
        );
        assert_eq!(rows(&query(&s, &sql)), want_str, "{partitions} partitions");
        let count = format!(
            "SELECT count(*) FROM s WHERE key IN ({})",
            str_list.join(",")
        );
        assert_eq!(single_u64(&s, &count), want_str.len() as u64);
    }
}

/// `IN` lists whose literals the session types itself (`ListLiteralTypes`: non-negative
/// numbers into `UInt64` keys, strings into binary keys) and those it leaves to DataFusion (a
/// negative number, `NULL`) answer as SQL says, `NOT IN` included, with keys on both sides of
/// `i64::MAX` (numbers SQL spells `Int64` and `UInt64` in one list).
#[test]
fn in_lists_of_every_literal_kind_answer_as_sql_says() {
    let dir = tempfile::tempdir().unwrap();
    let mut keys = keys(2_000, 7);
    keys.extend([1u64 << 63, u64::MAX - 1]);
    write_u64_table(dir.path(), "t", &keys);
    let mut s = SqlSession::new(2);
    s.register("t", &dir.path().join("t")).unwrap();
    let (a, b, big, top) = (keys[10], keys[1_500], 1u64 << 63, u64::MAX - 1);
    let n = keys.len() as u64;
    let in_list = |list: &str| -> Vec<u64> {
        rows(&query(
            &s,
            &format!("SELECT key, value FROM t WHERE key IN ({list}) ORDER BY key"),
        ))
        .into_iter()
        .map(|(k, _)| u64::from_be_bytes(k.try_into().unwrap()))
        .collect()
    };
    assert_eq!(
        in_list(&format!("{b}, {a}, {big}, {top}")),
        vec![a, b, big, top]
    );
    // -2 as a u64 would be `top`.
    assert_eq!(in_list(&format!("-2, {a}, {}", a + 1)), vec![a]);
    assert_eq!(in_list(&format!("NULL, {b}")), vec![b]);
    let count = |filter: &str| single_u64(&s, &format!("SELECT count(*) FROM t WHERE {filter}"));
    assert_eq!(count(&format!("key NOT IN ({a}, {b}, {big})")), n - 3);
    assert_eq!(count(&format!("key NOT IN (-2, {a})")), n - 1);
    assert_eq!(count(&format!("key NOT IN (NULL, {a})")), 0);
    // The session types the list before DataFusion's coercion: no cast is left to fold.
    let analyzed = runtime().block_on(async {
        let state = s.context().state();
        let plan = state
            .create_logical_plan(&format!("SELECT key FROM t WHERE key IN ({a}, {b})"))
            .await
            .unwrap();
        state
            .analyzer()
            .execute_and_check(plan, state.config_options(), |_, _| {})
            .unwrap()
            .to_string()
    });
    assert!(
        analyzed.contains(&format!("UInt64({a})")) && !analyzed.contains("CAST"),
        "{analyzed}"
    );
    // An unaliased list in the output and in GROUP BY keeps the name the query gives it.
    let grouped = query(
        &s,
        &format!("SELECT key IN ({a}, {b}), count(*) FROM t GROUP BY 1 ORDER BY 1"),
    );
    let header = grouped[0].schema().field(0).name().clone();
    assert!(
        header.contains("Int64") && !header.contains("UInt64"),
        "{header}"
    );
    let counts: Vec<u64> = grouped
        .iter()
        .flat_map(|b| {
            let c = b
                .column(1)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            (0..b.num_rows())
                .map(|i| c.value(i) as u64)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(counts, vec![n - 2, 2]);

    let store_dir = dir.path().join("kv");
    let store = Store::create(
        &store_dir,
        &CreateOptions::default(),
        &StoreOptions::default(),
    )
    .expect("create store");
    let mut batch = WriteBatch::new();
    for word in ["apple", "kiwi", "pear", "plum"] {
        batch.put(word.as_bytes(), b"v").expect("put");
    }
    store.write(&batch).expect("write");
    store.close().expect("close");
    let mut s = SqlSession::new(2);
    s.register("kv", &store_dir).unwrap();
    let words =
        |sql: &str| -> Vec<Vec<u8>> { rows(&query(&s, sql)).into_iter().map(|(k, _)| k).collect() };
    assert_eq!(
        words("SELECT key, value FROM kv WHERE key IN ('pear', 'fig', 'apple') ORDER BY key"),
        vec![b"apple".to_vec(), b"pear".to_vec()]
    );
    assert_eq!(
        words("SELECT key, value FROM kv WHERE key IN ('kiwi', X'706c756d') ORDER BY key"),
        vec![b"kiwi".to_vec(), b"plum".to_vec()]
    );
    assert_eq!(
        single_u64(
            &s,
            "SELECT count(*) FROM kv WHERE key NOT IN ('kiwi', 'fig')"
        ),
        3
    );
}
