//! What the integration tests share: small seeded tables and stores written through lidx's
//! own API, the same data's answers computed by lidx directly, and SQL run through a
//! [`SqlSession`].

#![allow(dead_code)] // each test binary uses its own part of these helpers

use std::path::Path;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::physical_plan::displayable;
use lidx::io::{DeviceKind, Storage};
use lidx::join::{Table, TableWriter};
use lidx::kv::{CreateOptions, FsyncPolicy, Store, StoreOptions, WriteBatch};
use lidx::Str16;
use lidx_datafusion::SqlSession;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The 8-byte value of a key, as `lidx table create` derives it (splitmix64).
pub fn value_of(key: u64) -> [u8; 8] {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).to_le_bytes()
}

/// `n` distinct sorted keys below `2^40`, from `seed`.
pub fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<u64> = (0..n + n / 8)
        .map(|_| rng.gen_range(0..1u64 << 40))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.truncate(n);
    keys
}

fn storage(dir: &Path) -> Storage {
    Storage::new(dir, DeviceKind::File { direct: false }, 4096).expect("storage")
}

/// Writes the `u64` table `dir/name` of `keys` with [`value_of`] values.
pub fn write_u64_table(dir: &Path, name: &str, keys: &[u64]) {
    let mut w = TableWriter::<u64>::create(&storage(dir), name, 8).expect("create table");
    for k in keys {
        w.push(k, &value_of(*k)).expect("push");
    }
    w.finish().expect("finish table");
}

/// The 16-byte string key of an integer key: big-endian, then 8 bytes of its hash (what
/// `lidx table create --string-keys` writes).
pub fn str16_of(key: u64) -> Str16 {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&key.to_be_bytes());
    s[8..].copy_from_slice(&value_of(!key));
    s
}

/// Writes the string-key table `dir/name` of `keys` (as [`str16_of`]), values [`value_of`].
pub fn write_str16_table(dir: &Path, name: &str, keys: &[u64]) {
    let mut w = TableWriter::<Str16>::create(&storage(dir), name, 8).expect("create table");
    for k in keys {
        w.push(&str16_of(*k), &value_of(*k)).expect("push");
    }
    w.finish().expect("finish table");
}

/// The records of the table `dir/name` whose keys pass `keep`, read by lidx's own scan.
pub fn table_records<K: lidx::join::TableKey>(
    dir: &Path,
    name: &str,
    keep: impl Fn(&K) -> bool,
) -> Vec<(K, Vec<u8>)> {
    let table = Table::<K>::open(&storage(dir), name).expect("open table");
    let mut scan = table.scan(0..table.len()).expect("scan");
    let mut out = Vec::new();
    while let Some(k) = scan.key() {
        if keep(&k) {
            out.push((k, scan.value().to_vec()));
        }
        scan.advance().expect("advance");
    }
    out
}

/// A store in `dir` holding `keys` as 8-byte big-endian keys with [`value_of`] values: the
/// first half merged to its table on disk, then every tenth key of it deleted and every
/// seventh updated, and the second half in the log and memory, so that a read merges both.
pub fn write_store(dir: &Path, keys: &[u64]) {
    let options = StoreOptions {
        fsync: FsyncPolicy::Never,
        ..StoreOptions::default()
    };
    let store = Store::create(dir, &CreateOptions::default(), &options).expect("create store");
    let (first, second) = keys.split_at(keys.len() / 2);
    let mut batch = WriteBatch::new();
    for k in first {
        batch.put(&k.to_be_bytes(), &value_of(*k)).expect("put");
    }
    store.write(&batch).expect("write");
    store.compact().expect("compact");
    let mut batch = WriteBatch::new();
    for (i, k) in first.iter().enumerate() {
        if i % 10 == 0 {
            batch.delete(&k.to_be_bytes()).expect("delete");
        } else if i % 7 == 0 {
            batch.put(&k.to_be_bytes(), b"updated").expect("put");
        }
    }
    for k in second {
        batch.put(&k.to_be_bytes(), &value_of(*k)).expect("put");
    }
    store.write(&batch).expect("write");
    store.close().expect("close");
}

/// The entries of the store in `dir` within `lo..=hi`, read by lidx's own range.
pub fn store_entries(dir: &Path, lo: &[u8], hi: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let options = StoreOptions {
        read_only: true,
        ..StoreOptions::default()
    };
    let store = Store::open(dir, &options).expect("open store");
    let entries = store
        .range(lo..=hi)
        .collect::<lidx::Result<Vec<_>>>()
        .expect("range");
    store.close().expect("close");
    entries
}

/// Random keys from `seed`, half of them present in `present`, the other half arbitrary.
pub fn probe_keys(present: &[u64], n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                present[rng.gen_range(0..present.len())]
            } else {
                rng.gen_range(0..1u64 << 40)
            }
        })
        .collect()
}

/// A runtime for the tests' queries.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Runs `sql` and collects its batches.
pub fn query(session: &SqlSession, sql: &str) -> Vec<RecordBatch> {
    runtime().block_on(async {
        let frame = session
            .sql(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        frame
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    })
}

/// The physical plan of `sql`, as `EXPLAIN` indents it.
pub fn physical_plan(session: &SqlSession, sql: &str) -> String {
    runtime().block_on(async {
        let frame = session.sql(sql).await.expect("plan");
        let plan = frame.create_physical_plan().await.expect("physical plan");
        let text = displayable(plan.as_ref()).indent(true).to_string();
        text
    })
}

/// The single `u64` (or `i64`, as `count(*)` returns) in the result of `sql`.
pub fn single_u64(session: &SqlSession, sql: &str) -> u64 {
    let batches = query(session, sql);
    let column = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .map(|b| b.column(0).clone())
        .unwrap_or_else(|| panic!("{sql}: no rows"));
    match column.data_type() {
        DataType::Int64 => column
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0) as u64,
        DataType::UInt64 => column.as_primitive::<UInt64Type>().value(0),
        other => panic!("{sql}: a {other} column"),
    }
}

/// The rows of two columns `key`, `value` in the batches' order: a `UInt64` key as its 8
/// big-endian bytes, a binary key as is.
pub fn rows(batches: &[RecordBatch]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for b in batches {
        let (k, v) = (b.column(0), b.column(1).as_binary::<i32>());
        for i in 0..b.num_rows() {
            let key = match k.data_type() {
                DataType::UInt64 => k
                    .as_primitive::<UInt64Type>()
                    .value(i)
                    .to_be_bytes()
                    .to_vec(),
                _ => k.as_binary::<i32>().value(i).to_vec(),
            };
            assert!(!k.is_null(i) && !v.is_null(i));
            out.push((key, v.value(i).to_vec()));
        }
    }
    out
}
