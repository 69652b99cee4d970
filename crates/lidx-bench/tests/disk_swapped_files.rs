//! Regression (issue 13, fix 3): on-disk benchmarks trusted file names. Two index files of the
//! same kind built with different parameters (`btree.fill=100.lidx` and `btree.fill=70.lidx`,
//! `pgm:eps=64` and `pgm:eps=16`, RadixSpline bits/err, item and page granularity, byte
//! tables of two eps) swapped in a `--dir` were each opened under the other's name, so
//! `lidx bench --on-disk` reported each one's figures under the other's label. Every file now
//! records its build parameters in its checksummed header and the spec's open checks them:
//! a swapped file is `IndexMismatch` naming the file, what it holds and what was asked.

use std::path::Path;

use lidx::io::{DeviceKind, Storage};
use lidx_bench::byte_disk_registry::{ByteIndexFiles, ByteIndexSpec};
use lidx_bench::disk_registry::{DiskIndexSpec, OpenChoice};
use lidx_bench::keyfile::Keys;
use lidx_bench::store_keys::RankedKeys;
use lidx_bench::BenchError;

fn storage(dir: &Path) -> Storage {
    Storage::new(dir, DeviceKind::File { direct: false }, 4096).unwrap()
}

/// Swaps the files `a` and `b` of `dir`.
fn swap(dir: &Path, a: &str, b: &str) {
    let tmp = dir.join("swap.tmp");
    std::fs::rename(dir.join(a), &tmp).unwrap();
    std::fs::rename(dir.join(b), dir.join(a)).unwrap();
    std::fs::rename(&tmp, dir.join(b)).unwrap();
}

/// The facts of an `IndexMismatch`, failing on any other result.
fn mismatch<T>(result: lidx_bench::Result<T>) -> (String, String, String) {
    match result {
        Err(BenchError::Index(lidx::Error::IndexMismatch { file, holds, asked })) => {
            (file, holds, asked)
        }
        Err(other) => panic!("expected IndexMismatch, got {other}"),
        Ok(_) => panic!("expected IndexMismatch, the file opened"),
    }
}

#[test]
fn swapped_numeric_files_of_one_kind_are_refused() {
    let keys: Vec<u64> = (0..5_000u64).map(|i| i * i + 3).collect();
    let pairs = [
        ("btree", "btree:fill=70"),
        ("pgm:eps=64", "pgm:eps=16"),
        ("rs:bits=12:err=32", "rs:bits=16:err=8"),
        ("pgm:eps=16:gran=item", "pgm:eps=16:gran=page"),
        ("pgm-zero:eps=32", "pgm-zero:eps=8"),
    ];
    for (a, b) in pairs {
        let dir = tempfile::tempdir().unwrap();
        let storage = storage(dir.path());
        let (a, b) = (
            DiskIndexSpec::parse(a).unwrap(),
            DiskIndexSpec::parse(b).unwrap(),
        );
        for spec in [a, b] {
            spec.build(&storage, &keys, 8).unwrap();
            spec.open(&storage, OpenChoice::default(), 8).unwrap();
        }
        swap(dir.path(), &a.file_name(), &b.file_name());
        for (asked, holds) in [(a, b), (b, a)] {
            let (file, got_holds, got_asked) =
                mismatch(asked.open(&storage, OpenChoice::default(), 8));
            assert!(file.ends_with(&asked.file_name()), "{file}");
            assert_eq!(got_holds, format!("{} with 8-byte payloads", holds.label()));
            assert_eq!(got_asked, format!("{} with 8-byte payloads", asked.label()));
        }
        // Read as whatever they hold, the files are sound: only the names lie.
        swap(dir.path(), &a.file_name(), &b.file_name());
        a.open(&storage, OpenChoice::default(), 8).unwrap();
    }
}

#[test]
fn a_file_of_another_payload_size_is_refused() {
    let keys: Vec<u64> = (0..2_000u64).collect();
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let spec = DiskIndexSpec::parse("zonemap").unwrap();
    spec.build(&storage, &keys, 16).unwrap();
    let (_, holds, asked) = mismatch(spec.open(&storage, OpenChoice::default(), 8));
    assert!(holds.ends_with("16-byte payloads"), "{holds}");
    assert!(asked.ends_with("8-byte payloads"), "{asked}");
}

#[test]
fn swapped_byte_tables_are_refused() {
    let words: Vec<Vec<u8>> = (0..3_000u32)
        .map(|i| format!("key{i:06}").into_bytes())
        .collect();
    let keys = RankedKeys::encode(&Keys::Bytes(words));
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let (a, b) = (
        ByteIndexSpec::Table { eps: 16 },
        ByteIndexSpec::Table { eps: 32 },
    );
    for spec in [a, b] {
        spec.build(&storage, &keys, 8).unwrap();
        spec.open(&storage).unwrap();
    }
    swap(dir.path(), &a.file_name(), &b.file_name());
    let (file, holds, asked) = mismatch(a.open(&storage));
    assert!(file.ends_with("byte-table.eps=16.lidx"), "{file}");
    assert!(holds.starts_with("byte-table:eps=32 "), "{holds}");
    assert!(asked.starts_with("byte-table:eps=16 "), "{asked}");
    assert!(mismatch(b.open(&storage))
        .1
        .starts_with("byte-table:eps=16 "));
}

#[test]
fn file_names_map_back_to_their_specs() {
    for text in [
        "btree:fill=70",
        "pgm:eps=64",
        "pgm-zero:pages=1.5",
        "auto:pages=1.25:gran=page",
        "rs:bits=12:err=32:gran=16",
    ] {
        let spec = DiskIndexSpec::parse(text).unwrap();
        assert_eq!(DiskIndexSpec::from_file_name(&spec.file_name()), Some(spec));
    }
    assert_eq!(DiskIndexSpec::from_file_name("mine.lidx"), None);
    assert_eq!(DiskIndexSpec::from_file_name("btree.fill=70"), None);
    let table = ByteIndexSpec::Table { eps: 16 };
    assert_eq!(
        ByteIndexSpec::from_file_name(&table.file_name()),
        Some(table)
    );
}
