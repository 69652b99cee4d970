//! The learned-inner B+-tree (`lidx::disk::BTreeLearned`) against the disk B+-tree with every
//! inner node in memory (`Resident::AllInner`, paper 003 §6.2), on one simulated device each:
//! lookups, scans of 100 entries, inserts of held-out keys, then lookups and scans again.
//! Every answer is checked. Prints blocks per operation (inner / leaf reads, writes), modeled
//! device time per operation, and memory.
//!
//! ```text
//! cargo run --release -p lidx-bench --example btree_learned_vs_btree -- \
//!     [keys=2M] [dataset=gen:lognormal:<keys>] [profile=sata-ssd] [inserts=10%] [eps=1024]
//! ```
//!
//! Inserted keys are the held-out part of the shuffled dataset, as in paper 003 §5.2: the
//! dataset is shuffled, the first `keys - inserts` are bulk loaded, the rest inserted.

use std::time::Instant;

use lidx::disk::{BTreeLearned, BTreeLearnedParams};
use lidx::disk::{DiskBTree, DiskBTreeParams};
use lidx::disk::{DiskIndex, DiskMap};
use lidx::io::{IoClass, IoStats, SimProfile, Storage};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Measured {
    blocks_inner: f64,
    blocks_leaf: f64,
    blocks_written: f64,
    modeled_us: f64,
}

fn per_op(d: IoStats, ops: usize) -> Measured {
    let n = ops.max(1) as f64;
    Measured {
        blocks_inner: d.blocks_read(IoClass::Inner) as f64 / n,
        blocks_leaf: d.blocks_read(IoClass::Leaf) as f64 / n,
        blocks_written: d.write_blocks as f64 / n,
        modeled_us: d.modeled_serial_ns() as f64 / n / 1000.0,
    }
}

fn row(what: &str, name: &str, m: &Measured) {
    println!(
        "{what:<16} {name:<14} {:>8.3} {:>8.3} {:>8.3} {:>10.2}",
        m.blocks_inner, m.blocks_leaf, m.blocks_written, m.modeled_us
    );
}

fn payload(k: u64) -> [u8; 8] {
    k.rotate_left(17).to_le_bytes()
}

fn lookups(index: &dyn DiskIndex<u64>, storage: &Storage, probes: &[u64]) -> Measured {
    let before = storage.stats();
    let mut buf = [0u8; 8];
    for k in probes {
        assert!(index.get(k, &mut buf).expect("lookup"), "key {k} missing");
        assert_eq!(buf, payload(*k), "payload of {k}");
    }
    per_op(storage.stats() - before, probes.len())
}

fn scans(
    index: &dyn DiskIndex<u64>,
    storage: &Storage,
    starts: &[u64],
    sorted: &[u64],
) -> Measured {
    let before = storage.stats();
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    for s in starts {
        keys.clear();
        payloads.clear();
        index.scan(s, 100, &mut keys, &mut payloads).expect("scan");
        let at = sorted.partition_point(|k| k < s);
        let want = &sorted[at..(at + 100).min(sorted.len())];
        assert_eq!(keys, want, "scan from {s}");
    }
    per_op(storage.stats() - before, starts.len())
}

/// `insert` is the index's insert (the disk B+-tree's is inherent, not `DiskMap`'s).
fn inserts(
    mut insert: impl FnMut(u64, &[u8]) -> lidx::Result<bool>,
    storage: &Storage,
    keys: &[u64],
) -> (Measured, f64) {
    let before = storage.stats();
    let t = Instant::now();
    for &k in keys {
        assert!(!insert(k, &payload(k)).expect("insert"));
    }
    let secs = t.elapsed().as_secs_f64();
    (per_op(storage.stats() - before, keys.len()), secs)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args
        .first()
        .and_then(|a| lidx_bench::dataset::parse_count(a))
        .unwrap_or(2_000_000);
    let spec = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| format!("gen:lognormal:{n}"));
    let profile_name = args.get(2).map_or("sata-ssd", String::as_str);
    let insert_fraction = args
        .get(3)
        .and_then(|a| a.trim_end_matches('%').parse::<f64>().ok())
        .unwrap_or(10.0)
        / 100.0;
    let eps = args
        .get(4)
        .and_then(|a| a.parse::<usize>().ok())
        .unwrap_or(BTreeLearnedParams::default().eps);
    let profile = SimProfile::named(profile_name).expect("a profile of lidx::io::SimProfile");

    let data = lidx_bench::dataset::load(&spec, 42).expect("dataset");
    let mut keys = data.keys;
    keys.dedup();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    keys.shuffle(&mut rng);
    let held = (keys.len() as f64 * insert_fraction) as usize;
    let (held_out, loaded) = keys.split_at(held);
    let mut loaded = loaded.to_vec();
    loaded.sort_unstable();
    let held_out = held_out.to_vec();
    let probes: Vec<u64> = (0..200_000)
        .map(|_| loaded[rng.gen_range(0..loaded.len())])
        .collect();
    let starts: Vec<u64> = probes[..20_000].to_vec();
    println!(
        "dataset {} ({} keys loaded, {} inserted), device sim:{profile_name}, 4 KiB blocks, \
         btree-learned eps {eps}",
        data.name,
        loaded.len(),
        held_out.len()
    );

    let bt_storage = Storage::in_memory(profile.clone(), 4096).expect("storage");
    let bl_storage = Storage::in_memory(profile, 4096).expect("storage");
    let t = Instant::now();
    let mut bt = DiskBTree::build(
        &bt_storage,
        "bt",
        &loaded,
        |_, k, out| out.copy_from_slice(&payload(*k)),
        DiskBTreeParams::default(),
    )
    .expect("B+-tree build");
    let bt_build = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut bl = BTreeLearned::build(
        &bl_storage,
        "bl",
        &loaded,
        |_, k, out| out.copy_from_slice(&payload(*k)),
        BTreeLearnedParams {
            eps,
            ..BTreeLearnedParams::default()
        },
    )
    .expect("learned build");
    let bl_build = t.elapsed().as_secs_f64();
    let memory = |bt: &DiskBTree<u64>, bl: &BTreeLearned<u64>, when: &str| {
        println!(
            "memory {when}: B+-tree inner nodes {} bytes on disk ({} in memory), {} leaves; \
             btree-learned {} bytes ({} segments, {} split leaves), {} leaves",
            bt.inner_bytes_on_disk(),
            bt.memory_bytes(),
            bt.leaf_count(),
            bl.memory_bytes(),
            bl.segment_count(),
            bl.split_count(),
            bl.leaf_count()
        );
    };
    println!(
        "build: B+-tree {bt_build:.2} s, btree-learned {bl_build:.2} s (wall, shared machine)"
    );
    memory(&bt, &bl, "after build");
    println!(
        "{:<16} {:<14} {:>8} {:>8} {:>8} {:>10}",
        "operation", "index", "inner/op", "leaf/op", "writ/op", "model us/op"
    );
    let sorted_loaded = loaded.clone();
    row("lookup", "btree", &lookups(&bt, &bt_storage, &probes));
    row(
        "lookup",
        "btree-learned",
        &lookups(&bl, &bl_storage, &probes),
    );
    row(
        "scan 100",
        "btree",
        &scans(&bt, &bt_storage, &starts, &sorted_loaded),
    );
    row(
        "scan 100",
        "btree-learned",
        &scans(&bl, &bl_storage, &starts, &sorted_loaded),
    );
    let (m, secs) = inserts(|k, p| bt.insert(k, p), &bt_storage, &held_out);
    row("insert", "btree", &m);
    let bt_insert_secs = secs;
    let (m, secs) = inserts(|k, p| bl.insert(k, p), &bl_storage, &held_out);
    row("insert", "btree-learned", &m);
    let b = bl.write_breakdown();
    println!(
        "insert wall: B+-tree {bt_insert_secs:.2} s, btree-learned {secs:.2} s; btree-learned \
         breakdown search {} ms, insert {} ms, smo {} ms, maintenance {} ms ({} retrains)",
        b.search_ns / 1_000_000,
        b.insert_ns / 1_000_000,
        b.smo_ns / 1_000_000,
        b.maintenance_ns / 1_000_000,
        bl.retrain_count()
    );
    let mut all = loaded;
    all.extend_from_slice(&held_out);
    all.sort_unstable();
    let probes2: Vec<u64> = (0..200_000)
        .map(|_| all[rng.gen_range(0..all.len())])
        .collect();
    row(
        "lookup after",
        "btree",
        &lookups(&bt, &bt_storage, &probes2),
    );
    row(
        "lookup after",
        "btree-learned",
        &lookups(&bl, &bl_storage, &probes2),
    );
    row(
        "scan after",
        "btree",
        &scans(&bt, &bt_storage, &probes2[..20_000], &all),
    );
    row(
        "scan after",
        "btree-learned",
        &scans(&bl, &bl_storage, &probes2[..20_000], &all),
    );
    memory(&bt, &bl, "after inserts");
    bt.flush().expect("flush");
    DiskMap::flush(&mut bl).expect("flush");
    println!(
        "storage after inserts: B+-tree {} bytes, btree-learned {} bytes",
        bt.storage_bytes().used,
        bl.storage_bytes().used
    );
}
