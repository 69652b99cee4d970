//! The join's fast paths and baselines: thread parts smaller than a block, copied in parallel
//! to computed offsets, give the single-threaded output byte for byte; reused output buffers
//! leave no stale record after a partial last block; the read-both baselines read both tables
//! and write an output of the smaller table's size.

use lidx::io::Storage;
use lidx::join::Baseline;
use lidx::join::{join, InljIndex, JoinAlgo, JoinParams, Table, TableRef, TableWriter};
use lidx::raw::join::baseline;

fn write(storage: &Storage, name: &str, keys: &[u64], side: u8) {
    let mut w = TableWriter::<u64>::create(storage, name, 8).unwrap();
    for &k in keys {
        w.push(&k, &(k ^ u64::from(side)).to_le_bytes()).unwrap();
    }
    w.finish().unwrap();
}

fn records(storage: &Storage, name: &str) -> Vec<Vec<u8>> {
    let t = Table::<u64>::open(storage, name).unwrap();
    let mut scan = t.scan(0..t.len()).unwrap();
    let mut out = Vec::new();
    while scan.key().is_some() {
        out.push(scan.record().to_vec());
        scan.advance().unwrap();
    }
    out
}

#[test]
fn tiny_thread_parts_copy_exactly() {
    let storage = Storage::ram();
    // 24-byte output records: 170 per block. Up to 8 threads over 40..600 outer keys give
    // parts smaller than a block, parts straddling blocks and an empty part.
    for n in [3u64, 40, 171, 600] {
        let big: Vec<u64> = (0..2 * n + 500).map(|i| i * 3).collect();
        let small: Vec<u64> = (0..n).map(|i| i * 6).collect();
        write(&storage, "big", &big, 1);
        write(&storage, "small", &small, 2);
        let at = |name| TableRef {
            storage: &storage,
            name,
        };
        let mut first = None;
        for threads in [1, 2, 3, 8] {
            let params = JoinParams {
                algo: JoinAlgo::Inlj(InljIndex::SampledPgm),
                threads,
                ..JoinParams::default()
            };
            let report = join::<u64>(at("small"), at("big"), at("out"), &params).unwrap();
            assert_eq!(report.output_count, n);
            let got = (report.checksum, records(&storage, "out"));
            match &first {
                None => first = Some(got),
                Some(want) => assert_eq!(&got, want, "n {n} threads {threads}"),
            }
        }
    }
}

#[test]
fn baselines_read_both_tables() {
    let storage = Storage::ram();
    let big: Vec<u64> = (0..5_000).collect();
    let small: Vec<u64> = (0..1_000).map(|i| i * 5).collect();
    write(&storage, "big", &big, 1);
    write(&storage, "small", &small, 2);
    let at = |name| TableRef {
        storage: &storage,
        name,
    };
    let read = baseline::run::<u64>(Baseline::ReadBoth, at("big"), at("small"), at("out")).unwrap();
    assert_eq!((read.algo.as_str(), read.output_count), ("read-both", 0));
    assert_eq!(read.bytes_written, 0);
    let tables = storage.file_bytes("big") + storage.file_bytes("small");
    // Everything but the two header blocks.
    assert_eq!(read.bytes_read, tables - 2 * 4096);
    let write =
        baseline::run::<u64>(Baseline::ReadBothWrite, at("big"), at("small"), at("out")).unwrap();
    assert_eq!(write.output_count, 1_000);
    assert_eq!(write.bytes_written, storage.file_bytes("out"));
    let out = Table::<u64>::open(&storage, "out").unwrap();
    assert_eq!(out.value_size(), 16);
    assert_eq!(out.read_keys().unwrap(), small);
    assert_eq!(
        Baseline::parse("read-both-write"),
        Some(Baseline::ReadBothWrite)
    );
    assert_eq!(Baseline::parse("sort-merge"), None);
}
