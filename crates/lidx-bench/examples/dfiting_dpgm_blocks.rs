//! Blocks read and written per lookup, per scan and per insert of the FITing-tree and the PGM on
//! disk (paper 003 §4.2, Table 2, Table 4) beside the disk B+-tree, in one run on simulated SATA
//! SSDs (blocks in memory, so the counts are exact and the modeled time deterministic).
//!
//! ```sh
//! cargo run --release -p lidx-bench --example dfiting_dpgm_blocks [-- <keys> <ops>]
//! ```
//!
//! `<keys>` lognormal keys (default 1M, SOSD's lognormal(0, 2) x 10^9) are generated; one in
//! 101 is held out and inserted afterwards in random order (paper 003 §5.2's held-out inserts),
//! the rest bulk loaded. Then `<ops>` (default 10K) lookups of random loaded keys, as many
//! scans of 100 entries from them, and the held-out inserts (at most `<ops>`). Each index has a
//! storage of its own, so `Storage::stats` counts its blocks only.

use std::time::Instant;

use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskFiting, DiskFitingParams};
use lidx::disk::{DiskIndex, DiskMap, WriteBreakdown};
use lidx::disk::{DiskPgm, DiskPgmParams};
use lidx::io::{IoClass, IoStats, SimProfile, Storage};
use lidx_bench::generate::Generator;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn payload(key: &u64, out: &mut [u8]) {
    out.copy_from_slice(&key.wrapping_add(1).to_le_bytes());
}

/// Per-operation figures of one phase.
struct Phase {
    read_inner: f64,
    read_leaf: f64,
    read_other: f64,
    written: f64,
    modeled_us: f64,
}

fn phase(d: IoStats, ops: usize) -> Phase {
    let ops = ops.max(1) as f64;
    let inner = d.blocks_read(IoClass::Inner) as f64;
    let leaf = d.blocks_read(IoClass::Leaf) as f64;
    Phase {
        read_inner: inner / ops,
        read_leaf: leaf / ops,
        read_other: (d.read_blocks as f64 - inner - leaf) / ops,
        written: d.write_blocks as f64 / ops,
        modeled_us: d.modeled_serial_ns() as f64 / 1000.0 / ops,
    }
}

fn row(name: &str, what: &str, p: &Phase) {
    println!(
        "{name:<22} {what:<7} {:>7.3} {:>7.3} {:>7.3} {:>8.3} {:>10.1}",
        p.read_inner, p.read_leaf, p.read_other, p.written, p.modeled_us
    );
}

/// The writes of every index measured: the B+-tree's own `insert` (its `DiskMap` impl and
/// write breakdown come with the six-workload runner's branch), the learned ones' `DiskMap`.
trait Writes: DiskIndex<u64> {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool;
    fn breakdown(&self) -> Option<WriteBreakdown>;
}

impl Writes for DiskBTree<u64> {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool {
        self.insert(key, payload).unwrap()
    }
    fn breakdown(&self) -> Option<WriteBreakdown> {
        None
    }
}

impl Writes for DiskFiting {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool {
        DiskMap::insert(self, key, payload).unwrap()
    }
    fn breakdown(&self) -> Option<WriteBreakdown> {
        Some(self.write_breakdown())
    }
}

impl Writes for DiskPgm {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool {
        DiskMap::insert(self, key, payload).unwrap()
    }
    fn breakdown(&self) -> Option<WriteBreakdown> {
        Some(self.write_breakdown())
    }
}

fn run(
    name: &str,
    storage: &Storage,
    index: &mut dyn Writes,
    lookups: &[u64],
    inserts: &[u64],
    build_s: f64,
) {
    let mut buf = vec![0u8; index.payload_size()];
    let before = storage.stats();
    for k in lookups {
        assert!(index.get(k, &mut buf).unwrap(), "{name}: key {k} missing");
    }
    row(
        name,
        "lookup",
        &phase(storage.stats() - before, lookups.len()),
    );
    let before = storage.stats();
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    for k in lookups {
        keys.clear();
        payloads.clear();
        index.scan(k, 100, &mut keys, &mut payloads).unwrap();
        assert_eq!(keys[0], *k, "{name}: scan from {k}");
    }
    row(
        name,
        "scan100",
        &phase(storage.stats() - before, lookups.len()),
    );
    let before = storage.stats();
    for k in inserts {
        let mut p = [0u8; 8];
        payload(k, &mut p);
        assert!(!index.put(*k, &p), "{name}: {k} was present");
    }
    row(
        name,
        "insert",
        &phase(storage.stats() - before, inserts.len()),
    );
    let before = storage.stats();
    for k in inserts {
        assert!(
            index.get(k, &mut buf).unwrap(),
            "{name}: inserted {k} missing"
        );
    }
    row(
        name,
        "lookup'",
        &phase(storage.stats() - before, inserts.len()),
    );
    let split = index.breakdown().map_or(String::new(), |b| {
        format!(
            "; insert time (wall + modeled) search/insert/smo/maintenance {:.0}/{:.0}/{:.0}/{:.0} ms in all",
            b.search_ns as f64 / 1e6,
            b.insert_ns as f64 / 1e6,
            b.smo_ns as f64 / 1e6,
            b.maintenance_ns as f64 / 1e6,
        )
    });
    println!(
        "{name:<22} build {build_s:.2} s, memory {} KiB, disk {} MiB{split}",
        index.memory_bytes() / 1024,
        index.disk_bytes() >> 20,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map_or(1_000_000, |s| s.parse().expect("<keys>"));
    let ops: usize = args.get(2).map_or(10_000, |s| s.parse().expect("<ops>"));
    let mut all = Generator::Lognormal.generate(n, 42);
    all.dedup();
    let (mut loaded, mut held) = (Vec::new(), Vec::new());
    for (i, k) in all.iter().enumerate() {
        if i % 101 == 50 {
            held.push(*k);
        } else {
            loaded.push(*k);
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    held.shuffle(&mut rng);
    held.truncate(ops);
    let lookups: Vec<u64> = (0..ops)
        .map(|_| *loaded.choose(&mut rng).expect("keys"))
        .collect();
    println!(
        "{} lognormal keys loaded, {} lookups and scans, {} inserts; sim:sata-ssd, 4 KiB blocks",
        loaded.len(),
        lookups.len(),
        held.len()
    );
    println!(
        "{:<22} {:<7} {:>7} {:>7} {:>7} {:>8} {:>10}",
        "index", "op", "inner", "leaf", "other", "written", "modeled us"
    );
    let storage = || {
        Storage::in_memory(SimProfile::named("sata-ssd").expect("profile"), 4096).expect("storage")
    };
    for (label, resident) in [
        ("disk", Resident::None),
        ("inner-in-memory", Resident::AllInner),
    ] {
        let s = storage();
        let t = Instant::now();
        let mut tree = DiskBTree::build(
            &s,
            "bt",
            &loaded,
            |_, k, out| payload(k, out),
            DiskBTreeParams {
                resident,
                ..DiskBTreeParams::default()
            },
        )
        .unwrap();
        run(
            &format!("btree {label}"),
            &s,
            &mut tree,
            &lookups,
            &held,
            t.elapsed().as_secs_f64(),
        );
        let s = storage();
        let t = Instant::now();
        let mut fit = DiskFiting::build(
            &s,
            "fit",
            &loaded,
            |_, k, out| payload(k, out),
            DiskFitingParams {
                resident,
                ..DiskFitingParams::default()
            },
        )
        .unwrap();
        let label = format!("dfiting {label}");
        run(
            &label,
            &s,
            &mut fit,
            &lookups,
            &held,
            t.elapsed().as_secs_f64(),
        );
        println!(
            "{label:<22} {} segments, inner height {}",
            fit.segments(),
            fit.inner_height()
        );
    }
    let s = storage();
    let t = Instant::now();
    let mut pgm = DiskPgm::build(
        &s,
        "pgm",
        &loaded,
        |_, k, out| payload(k, out),
        DiskPgmParams::default(),
    )
    .unwrap();
    run(
        "dpgm",
        &s,
        &mut pgm,
        &lookups,
        &held,
        t.elapsed().as_secs_f64(),
    );
    let (level0, levels) = pgm.level_sizes();
    println!("dpgm                   level 0: {level0} records, disk levels {levels:?}");
}
