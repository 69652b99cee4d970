//! Blocks per operation of the on-disk ALEX (paper 003 Layout #2) against the disk B+-tree in
//! the same run: paper 003 Table 4 (blocks per lookup split inner / leaf), blocks read and
//! written per insert of held-out keys (Figure 5's cause), and storage after the inserts
//! (§6.3, Figure 10).
//!
//! Keys: `lognormal` (seed 42), shuffled; `N` (default 1,000,000) are bulk loaded, the next
//! `N / 10` held out and inserted in shuffled order. Each index gets its own simulated
//! SATA SSD (`Storage::in_memory`, 4 KiB blocks, no cache) so its counters are its own.
//! Every lookup and scan is checked against the true answer.
//!
//! Run: `cargo run --release -p lidx-bench --example disk_alex_blocks [N]`.

use lidx::disk::{DiskAlex, DiskAlexParams};
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskIndex, DiskMap, StorageBytes, WriteBreakdown};
use lidx::io::{IoClass, IoStats, SimProfile, Storage};
use lidx_bench::generate::Generator;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const LOOKUPS: usize = 20_000;
const SCANS: usize = 2_000;

fn payload(k: u64) -> [u8; 8] {
    k.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes()
}

fn storage() -> Storage {
    Storage::in_memory(SimProfile::named("sata-ssd").expect("built-in"), 4096).expect("4 KiB")
}

/// Per-operation averages of a stats difference.
fn per_op(s: IoStats, ops: usize) -> String {
    let n = ops as f64;
    format!(
        "inner {:5.2}  leaf {:6.2}  read {:6.2}  written {:5.2}  modeled {:7.1} us",
        s.blocks_read(IoClass::Inner) as f64 / n,
        s.blocks_read(IoClass::Leaf) as f64 / n,
        s.read_blocks as f64 / n,
        s.write_blocks as f64 / n,
        s.modeled_serial_ns() as f64 / n / 1e3,
    )
}

/// The writes the measurement needs; the disk B+-tree has them as inherent methods.
trait Writes: DiskIndex<u64> {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool;
    fn sync(&mut self);
    fn storage(&self) -> StorageBytes;
    fn breakdown(&self) -> Option<WriteBreakdown>;
}

impl Writes for DiskAlex {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool {
        self.insert(key, payload).expect("insert")
    }
    fn sync(&mut self) {
        self.flush().expect("flush")
    }
    fn storage(&self) -> StorageBytes {
        self.storage_bytes()
    }
    fn breakdown(&self) -> Option<WriteBreakdown> {
        Some(self.write_breakdown())
    }
}

impl Writes for DiskBTree<u64> {
    fn put(&mut self, key: u64, payload: &[u8]) -> bool {
        self.insert(key, payload).expect("insert")
    }
    fn sync(&mut self) {
        self.flush().expect("flush")
    }
    fn storage(&self) -> StorageBytes {
        self.storage_bytes()
    }
    fn breakdown(&self) -> Option<WriteBreakdown> {
        None
    }
}

fn measure<I: Writes>(
    name: &str,
    index: &mut I,
    storage: &Storage,
    loaded: &[u64],
    held_out: &[u64],
    reopen_in_memory: impl Fn() -> Box<dyn DiskIndex<u64>>,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let probes: Vec<u64> = (0..LOOKUPS)
        .map(|_| *loaded.choose(&mut rng).expect("keys"))
        .collect();
    let mut out = [0u8; 8];
    let lookup = |index: &dyn DiskIndex<u64>, storage: &Storage| {
        let before = storage.stats();
        let mut out = [0u8; 8];
        for k in &probes {
            assert!(index.get(k, &mut out).expect("lookup"), "key {k} lost");
            assert_eq!(out, payload(*k));
        }
        storage.stats() - before
    };
    println!("{name}: {}", index.describe());
    let s = lookup(index, storage);
    println!("  lookup               {}", per_op(s, LOOKUPS));
    let resident = reopen_in_memory();
    let s = lookup(resident.as_ref(), storage);
    println!("  lookup, inner in mem {}", per_op(s, LOOKUPS));
    drop(resident);
    let before = storage.stats();
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    let sorted = {
        let mut s = loaded.to_vec();
        s.sort_unstable();
        s
    };
    for k in probes.iter().take(SCANS) {
        keys.clear();
        payloads.clear();
        index.scan(k, 100, &mut keys, &mut payloads).expect("scan");
        let at = sorted.partition_point(|x| x < k);
        let want = &sorted[at..(at + 100).min(sorted.len())];
        assert_eq!(keys, want, "scan from {k}");
    }
    println!(
        "  scan 100             {}",
        per_op(storage.stats() - before, SCANS)
    );
    let size_before = index.storage();
    let before = storage.stats();
    let start = std::time::Instant::now();
    for k in held_out {
        assert!(!index.put(*k, &payload(*k)));
    }
    let wall = start.elapsed();
    index.sync();
    println!(
        "  insert               {}  ({:.1} us wall each)",
        per_op(storage.stats() - before, held_out.len()),
        wall.as_secs_f64() * 1e6 / held_out.len() as f64
    );
    for k in held_out.iter().step_by(97) {
        assert!(index.get(k, &mut out).expect("lookup") && out == payload(*k));
    }
    let after = index.storage();
    println!(
        "  storage MiB: after bulk load {:.1}, after inserts allocated {:.1} used {:.1} free {:.1}",
        size_before.allocated as f64 / 1048576.0,
        after.allocated as f64 / 1048576.0,
        after.used as f64 / 1048576.0,
        after.free as f64 / 1048576.0,
    );
    if let Some(w) = index.breakdown() {
        println!(
            "  write time ms: search {:.0} insert {:.0} smo {:.0} maintenance {:.0}",
            w.search_ns as f64 / 1e6,
            w.insert_ns as f64 / 1e6,
            w.smo_ns as f64 / 1e6,
            w.maintenance_ns as f64 / 1e6,
        );
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("N: a count of keys"));
    let mut all = Generator::Lognormal.generate(n + n / 10 + n / 50, 42);
    all.dedup();
    all.shuffle(&mut ChaCha8Rng::seed_from_u64(42));
    all.truncate(n + n / 10);
    let held_out = all.split_off(n);
    let mut loaded = all;
    let shuffled = loaded.clone();
    loaded.sort_unstable();
    println!(
        "{} lognormal keys bulk loaded, {} held out inserted; sim:sata-ssd, 4 KiB blocks, no cache",
        loaded.len(),
        held_out.len()
    );

    let alex_storage = storage();
    let start = std::time::Instant::now();
    let mut alex = DiskAlex::build(
        &alex_storage,
        "alex",
        &loaded,
        |_, k, out| out.copy_from_slice(&payload(*k)),
        DiskAlexParams::default(),
    )
    .expect("alex build");
    println!("alex bulk load {:.2} s", start.elapsed().as_secs_f64());
    drop(alex);
    alex = DiskAlex::open(&alex_storage, "alex", true, false).expect("open");
    measure(
        "alex",
        &mut alex,
        &alex_storage,
        &shuffled,
        &held_out,
        || Box::new(DiskAlex::open(&alex_storage, "alex", false, true).expect("open")),
    );
    println!("  smos: {:?}", alex.smos());
    drop(alex);

    let bt_storage = storage();
    let start = std::time::Instant::now();
    let bt = DiskBTree::build(
        &bt_storage,
        "bt",
        &loaded,
        |_, k, out| out.copy_from_slice(&payload(*k)),
        DiskBTreeParams::default(),
    )
    .expect("btree build");
    println!("btree bulk load {:.2} s", start.elapsed().as_secs_f64());
    drop(bt);
    let mut bt = DiskBTree::<u64>::open(&bt_storage, "bt", Resident::None, true).expect("open");
    measure("btree", &mut bt, &bt_storage, &shuffled, &held_out, || {
        Box::new(
            DiskBTree::<u64>::open(&bt_storage, "bt", Resident::AllInner, false).expect("open"),
        )
    });
}
