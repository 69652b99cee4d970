//! Blocks per operation of the on-disk LIPP against the disk B+-tree (paper 003 Table 4, O2,
//! O7, O11, O16), on a simulated SATA SSD held in memory.
//!
//! `cargo run --release -p lidx-bench --example disk_lipp_blocks [-- <keys> <inserts> <lookups>]`
//! (defaults 1M, 200k, 20k): lognormal keys (seed 42), shuffled; `<keys>` bulk loaded, then
//! `<lookups>` lookups of loaded keys, then `<inserts>` inserts of held-out keys, then the
//! lookups again. Every lookup is checked. Prints blocks read per lookup split inner / leaf,
//! blocks read and written per insert, the write breakdown, and the files' bytes after the
//! build and after the inserts, for LIPP with its node headers on disk and in memory, and the
//! B+-tree with its inner nodes on disk and in memory.

use std::time::Instant;

use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskIndex, DiskMap};
use lidx::disk::{DiskLipp, DiskLippParams};
use lidx::io::{IoClass, IoStats, SimProfile, Storage};
use lidx_bench::generate::Generator;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn payload(k: u64) -> [u8; 8] {
    k.wrapping_add(1).to_le_bytes()
}

struct Lookups {
    inner: f64,
    leaf: f64,
    modeled_us: f64,
}

fn lookups(storage: &Storage, index: &dyn DiskIndex<u64>, keys: &[u64]) -> Lookups {
    let before = storage.stats();
    let mut out = [0u8; 8];
    for k in keys {
        assert!(index.get(k, &mut out).unwrap(), "key {k} lost");
        assert_eq!(out, payload(*k), "payload of {k}");
    }
    let d = storage.stats() - before;
    let n = keys.len() as f64;
    Lookups {
        inner: d.blocks_read(IoClass::Inner) as f64 / n,
        leaf: d.blocks_read(IoClass::Leaf) as f64 / n,
        modeled_us: d.modeled_serial_ns() as f64 / n / 1e3,
    }
}

fn inserts(storage: &Storage, index: &mut dyn DiskMap<u64>, keys: &[u64]) -> (IoStats, f64) {
    let before = storage.stats();
    let start = Instant::now();
    for k in keys {
        assert!(!index.insert(*k, &payload(*k)).unwrap());
    }
    index.flush().unwrap();
    (storage.stats() - before, start.elapsed().as_secs_f64())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |s| s.parse().expect("a count"))
    };
    let (n, n_inserts, n_lookups) = (arg(1, 1_000_000), arg(2, 200_000), arg(3, 20_000));
    let mut all = Generator::Lognormal.generate(n + n_inserts + n / 50, 42);
    all.dedup();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    all.shuffle(&mut rng);
    assert!(all.len() >= n + n_inserts, "too many duplicates");
    let mut loaded = all[..n].to_vec();
    let held_out = &all[n..n + n_inserts];
    loaded.sort_unstable();
    let probes: Vec<u64> = (0..n_lookups)
        .map(|i| loaded[(i * 7919 + 13) % loaded.len()])
        .collect();
    let mut after: Vec<u64> = probes.clone();
    after.extend(held_out.iter().step_by((n_inserts / n_lookups).max(1)));

    let storage = Storage::in_memory(SimProfile::named("sata-ssd").unwrap(), 4096).unwrap();
    println!(
        "{n} lognormal keys loaded, {n_inserts} held-out inserts, {n_lookups} lookups; {}, \
         4 KiB blocks, no cache",
        storage.describe()
    );
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>9} | {:>8} {:>8} {:>9} {:>8} | {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} {:>8}",
        "index", "inner", "leaf", "total", "model us", "ins rd", "ins wr", "model us",
        "wall s", "build MiB", "after MiB", "used MiB", "srch %", "ins %", "smo %", "mnt %"
    );
    for (name, lipp, resident) in [
        ("lipp (headers disk)", true, false),
        ("lipp (headers memory)", true, true),
        ("btree (inner disk)", false, false),
        ("btree (inner memory)", false, true),
    ] {
        let file = name.replace([' ', '(', ')'], "_");
        let build_start = Instant::now();
        let mut index: Box<dyn DiskMap<u64>> = if lipp {
            DiskLipp::build(
                &storage,
                &file,
                &loaded,
                |_, k, out| out.copy_from_slice(&payload(*k)),
                DiskLippParams::default(),
            )
            .unwrap();
            Box::new(DiskLipp::open(&storage, &file, true, resident).unwrap())
        } else {
            let params = DiskBTreeParams {
                resident: if resident {
                    Resident::AllInner
                } else {
                    Resident::None
                },
                ..DiskBTreeParams::default()
            };
            Box::new(
                DiskBTree::build(
                    &storage,
                    &file,
                    &loaded,
                    |_, k, out| out.copy_from_slice(&payload(*k)),
                    params,
                )
                .unwrap(),
            )
        };
        let build_s = build_start.elapsed().as_secs_f64();
        let built = index.storage_bytes().allocated;
        let l = lookups(&storage, index.as_ref(), &probes);
        let (w, wall) = inserts(&storage, index.as_mut(), held_out);
        let m = n_inserts as f64;
        let s = index.storage_bytes();
        let b = index.write_breakdown();
        let pct = |x: u64| 100.0 * x as f64 / b.total_ns().max(1) as f64;
        println!(
            "{:<22} {:>8.2} {:>8.2} {:>8.2} {:>9.1} | {:>8.2} {:>8.2} {:>9.1} {:>8.1} | {:>9.1} {:>9.1} {:>9.1} | {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
            name,
            l.inner,
            l.leaf,
            l.inner + l.leaf,
            l.modeled_us,
            w.read_blocks as f64 / m,
            w.write_blocks as f64 / m,
            w.modeled_serial_ns() as f64 / m / 1e3,
            wall,
            mib(built),
            mib(s.allocated),
            mib(s.used),
            pct(b.search_ns),
            pct(b.insert_ns),
            pct(b.smo_ns),
            pct(b.maintenance_ns),
        );
        let l2 = lookups(&storage, index.as_ref(), &after);
        println!(
            "{:<22} after inserts: lookups read {:.2} inner + {:.2} leaf blocks; build {:.1} s; {}",
            "",
            l2.inner,
            l2.leaf,
            build_s,
            index.describe()
        );
        drop(index);
        storage.remove(&file).unwrap();
    }
}
