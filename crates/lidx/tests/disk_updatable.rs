//! Paper 003's updatable learned indexes on disk (`disk::dpgm`, `disk::fiting`) and FILM
//! (`disk::film`, paper 002 §10.5) against
//! `BTreeMap`: proptest operation sequences (insert, update, delete, get, scan) with flushes
//! and reopens, on 512-byte blocks and small parameters so that merges and resegmentations
//! happen every few operations; and the typed errors of damaged files.

use std::collections::BTreeMap;
use std::sync::Arc;

use lidx::disk::Resident;
use lidx::disk::{DiskFiting, DiskFitingParams};
use lidx::disk::{DiskIndex, DiskMap};
use lidx::disk::{DiskPgm, DiskPgmParams};
use lidx::disk::{Film, FilmParams, CACHED_ITEM_OVERHEAD};
use lidx::io::{DeviceKind, FaultPlan, IoClass, SimProfile, Storage, WriteFault};
use lidx::mem::PgmParams;
use lidx::Error;
use proptest::prelude::*;

fn small_storage() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
}

/// A fixed pseudo-random key (splitmix64).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn payload(key: u64, version: u64) -> [u8; 8] {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ version).to_le_bytes()
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64),
    Delete(u64),
    Get(u64),
    Scan(u64, usize),
    Flush,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..3000, 0u64..4).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (0u64..3000).prop_map(Op::Delete),
        2 => (0u64..3000).prop_map(Op::Get),
        1 => (0u64..3000, 1usize..40).prop_map(|(k, n)| Op::Scan(k, n)),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

/// Runs `ops` on the index `open` gives after `build`, checking every answer against a
/// `BTreeMap`; `Reopen` flushes, drops the index and opens the files again.
fn run_ops<M: DiskMap<u64>>(
    storage: &Storage,
    initial: &[u64],
    ops: &[Op],
    build: impl Fn(&Storage, &[u64]) -> M,
    open: impl Fn(&Storage) -> M,
) -> Result<(), TestCaseError> {
    let mut model: BTreeMap<u64, [u8; 8]> = initial.iter().map(|&k| (k, payload(k, 0))).collect();
    let mut index = build(storage, initial);
    let mut buf = [0u8; 8];
    for op in ops {
        match *op {
            Op::Insert(k, v) => {
                let replaced = index.insert(k, &payload(k, v)).unwrap();
                prop_assert_eq!(replaced, model.insert(k, payload(k, v)).is_some());
            }
            Op::Delete(k) => {
                prop_assert_eq!(index.delete(&k).unwrap(), model.remove(&k).is_some());
            }
            Op::Get(k) => {
                let found = index.get(&k, &mut buf).unwrap();
                prop_assert_eq!(found.then_some(buf), model.get(&k).copied());
            }
            Op::Scan(k, n) => {
                let (mut keys, mut payloads) = (Vec::new(), Vec::new());
                let got = index.scan(&k, n, &mut keys, &mut payloads).unwrap();
                let want: Vec<(u64, [u8; 8])> =
                    model.range(k..).take(n).map(|(k, v)| (*k, *v)).collect();
                prop_assert_eq!(got, want.len());
                prop_assert_eq!(keys, want.iter().map(|e| e.0).collect::<Vec<_>>());
                prop_assert_eq!(payloads, want.iter().flat_map(|e| e.1).collect::<Vec<_>>());
            }
            Op::Flush => index.flush().unwrap(),
            Op::Reopen => {
                index.flush().unwrap();
                drop(index);
                index = open(storage);
            }
        }
        prop_assert_eq!(index.len(), model.len() as u64);
    }
    index.flush().unwrap();
    drop(index);
    let index = open(storage);
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    index
        .scan(&0, usize::MAX, &mut keys, &mut payloads)
        .unwrap();
    prop_assert_eq!(keys, model.keys().copied().collect::<Vec<_>>());
    prop_assert_eq!(
        payloads,
        model.values().flatten().copied().collect::<Vec<_>>()
    );
    Ok(())
}

fn dpgm_params(base: usize) -> DiskPgmParams {
    DiskPgmParams {
        payload_size: 8,
        pgm: PgmParams::new(4, 2),
        base,
    }
}

fn build_dpgm(storage: &Storage, keys: &[u64], base: usize) -> DiskPgm {
    DiskPgm::build(
        storage,
        "p",
        keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        dpgm_params(base),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn dpgm_agrees_with_btreemap(
        initial in proptest::collection::btree_set(0u64..3000, 0..400),
        ops in proptest::collection::vec(op(), 1..200),
        base in prop_oneof![Just(1usize), Just(4), Just(32)],
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.into_iter().collect();
        run_ops(
            &storage,
            &keys,
            &ops,
            |s, k| build_dpgm(s, k, base),
            |s| DiskPgm::open(s, "p", true).unwrap(),
        )?;
    }
}

/// Keys at both ends of the range, an update, deletes and inserts, then a read-only reopen
/// that refuses writes and answers as the writes left it: what every disk map must do.
fn extreme_keys_and_read_only<M: DiskMap<u64>>(
    storage: &Storage,
    build: impl Fn(&Storage, &[u64]) -> M,
    open_read_only: impl Fn(&Storage) -> M,
) {
    let keys = [0u64, 1, u64::MAX - 1, u64::MAX];
    let mut index = build(storage, &keys);
    assert!(index.insert(u64::MAX, &payload(7, 7)).unwrap());
    assert!(index.delete(&0).unwrap());
    assert!(!index.delete(&0).unwrap());
    for k in 2..50u64 {
        assert!(!index.insert(k, &payload(k, 1)).unwrap());
    }
    index.flush().unwrap();
    drop(index);
    let mut ro = open_read_only(storage);
    assert!(matches!(
        ro.insert(5, &payload(5, 5)),
        Err(Error::ReadOnly { .. })
    ));
    let mut buf = [0u8; 8];
    assert!(ro.get(&u64::MAX, &mut buf).unwrap());
    assert_eq!(buf, payload(7, 7));
    assert!(!ro.get(&0, &mut buf).unwrap());
    let (mut k, mut p) = (Vec::new(), Vec::new());
    assert_eq!(ro.scan(&(u64::MAX - 1), 10, &mut k, &mut p).unwrap(), 2);
    assert_eq!(ro.len(), 51);
}

#[test]
fn dpgm_extreme_keys_and_read_only() {
    extreme_keys_and_read_only(
        &small_storage(),
        |s, k| build_dpgm(s, k, 2),
        |s| DiskPgm::open(s, "p", false).unwrap(),
    );
}

#[test]
fn dpgm_lookups_read_leaf_blocks_only() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..5000u64).map(|k| k * 7).collect();
    let mut index = build_dpgm(&storage, &keys, 16);
    for k in 0..200u64 {
        index.insert(k * 7 + 3, &payload(k, 1)).unwrap();
    }
    let before = storage.stats();
    let mut buf = [0u8; 8];
    for k in (0..5000u64).step_by(37) {
        assert!(index.get(&(k * 7), &mut buf).unwrap());
    }
    let d = storage.stats() - before;
    assert_eq!(d.blocks_read(IoClass::Inner), 0);
    assert_eq!(d.read_blocks, d.blocks_read(IoClass::Leaf));
    assert!(d.read_blocks > 0);
}

/// Every file in `dir` that `make` writes: flipping a byte in any block of it, or cutting
/// it one block short, makes `open_and_scan` fail with a typed error naming the file (and the
/// block, for a flipped byte).
fn damage_each_block(
    make: impl Fn(&Storage),
    open_and_scan: impl Fn(&Storage) -> lidx::Result<()>,
) {
    damage_each_block_or_fall_back(make, open_and_scan, |_| false);
}

/// [`damage_each_block`], except that damage to a file `falls_back` names may also leave the
/// index opening (`Ok`): an index that keeps the state of its previous flush beside the
/// newest (FILM's two header slots) opens that state when the newest is damaged.
/// `open_and_scan` checks that what it opens is one of the states `make` committed.
fn damage_each_block_or_fall_back(
    make: impl Fn(&Storage),
    open_and_scan: impl Fn(&Storage) -> lidx::Result<()>,
    falls_back: impl Fn(&str) -> bool,
) {
    let template = tempfile::tempdir().unwrap();
    {
        let storage =
            Storage::new(template.path(), DeviceKind::File { direct: false }, 4096).unwrap();
        make(&storage);
    }
    let mut files: Vec<String> = std::fs::read_dir(template.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    // A copy of the files, so that each damage starts from the index as `make` left it.
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        for f in &files {
            std::fs::copy(template.path().join(f), dir.path().join(f)).unwrap();
        }
        let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, 4096).unwrap();
        (dir, storage)
    };
    for file in &files {
        let blocks = std::fs::metadata(template.path().join(file)).unwrap().len() / 4096;
        for b in 0..blocks {
            let (dir, storage) = fresh();
            let path = dir.path().join(file);
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[b as usize * 4096 + 17] ^= 0x40;
            std::fs::write(&path, &bytes).unwrap();
            match open_and_scan(&storage) {
                Err(Error::ChecksumMismatch { file: f, block, .. }) => {
                    assert!(f.ends_with(file.as_str()), "{f} vs {file}");
                    assert_eq!(block, b, "{file}");
                }
                Ok(()) if falls_back(file) => {}
                other => panic!("{file} block {b}: {other:?}"),
            }
        }
        let (dir, storage) = fresh();
        let path = dir.path().join(file);
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len((blocks - 1) * 4096).unwrap();
        drop(f);
        let got = open_and_scan(&storage);
        assert!(
            matches!(
                got,
                Err(Error::Truncated { .. }) | Err(Error::Corrupt { .. })
            ) || (got.is_ok() && falls_back(file)),
            "{file} truncated: {got:?}"
        );
    }
}

#[test]
fn dpgm_damaged_files_give_typed_errors() {
    let make = |storage: &Storage| {
        let keys: Vec<u64> = (0..3000u64).map(|k| k * 5).collect();
        let mut index = DiskPgm::build(
            storage,
            "p",
            &keys,
            |_, k, out| out.copy_from_slice(&payload(*k, 0)),
            DiskPgmParams {
                base: 64,
                ..dpgm_params(64)
            },
        )
        .unwrap();
        for k in 0..100u64 {
            index.insert(k * 5 + 1, &payload(k, 1)).unwrap();
        }
        index.flush().unwrap();
    };
    damage_each_block(make, |s| {
        let index = DiskPgm::open(s, "p", false)?;
        let (mut k, mut p) = (Vec::new(), Vec::new());
        index.scan(&0, usize::MAX, &mut k, &mut p)?;
        Ok(())
    });
}

fn fiting_params(eps: usize, buffer: usize, resident: Resident) -> DiskFitingParams {
    DiskFitingParams {
        payload_size: 8,
        eps,
        buffer,
        resident,
    }
}

fn build_fiting(storage: &Storage, keys: &[u64], params: DiskFitingParams) -> DiskFiting {
    DiskFiting::build(
        storage,
        "f",
        keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        params,
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn dfiting_agrees_with_btreemap(
        initial in proptest::collection::btree_set(0u64..3000, 0..400),
        ops in proptest::collection::vec(op(), 1..200),
        eps in prop_oneof![Just(0usize), Just(2), Just(16)],
        buffer in prop_oneof![Just(1usize), Just(4), Just(40)],
        on_disk in any::<bool>(),
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.into_iter().collect();
        let resident = if on_disk { Resident::None } else { Resident::AllInner };
        run_ops(
            &storage,
            &keys,
            &ops,
            |s, k| build_fiting(s, k, fiting_params(eps, buffer, resident)),
            |s| DiskFiting::open(s, "f", true, resident).unwrap(),
        )?;
    }
}

#[test]
fn dfiting_extreme_keys_and_read_only() {
    let storage = small_storage();
    let keys = [1u64, 2, u64::MAX - 1, u64::MAX];
    let mut index = build_fiting(&storage, &keys, fiting_params(2, 2, Resident::None));
    assert!(index.insert(u64::MAX, &payload(7, 7)).unwrap());
    assert!(!index.insert(0, &payload(0, 1)).unwrap());
    assert!(index.delete(&1).unwrap());
    assert!(!index.delete(&1).unwrap());
    for k in 3..60u64 {
        assert!(!index.insert(k, &payload(k, 1)).unwrap());
    }
    index.flush().unwrap();
    drop(index);
    let mut ro = DiskFiting::open(&storage, "f", false, Resident::AllInner).unwrap();
    assert!(matches!(ro.delete(&5), Err(Error::ReadOnly { .. })));
    let mut buf = [0u8; 8];
    assert!(ro.get(&u64::MAX, &mut buf).unwrap());
    assert_eq!(buf, payload(7, 7));
    assert!(ro.get(&0, &mut buf).unwrap());
    assert!(!ro.get(&1, &mut buf).unwrap());
    let (mut k, mut p) = (Vec::new(), Vec::new());
    assert_eq!(ro.scan(&(u64::MAX - 1), 10, &mut k, &mut p).unwrap(), 2);
    assert_eq!(ro.len(), 61);
}

/// Paper 003 Table 4's split: with the inner part on disk a lookup reads inner blocks (one per
/// level of the inner tree, its leaves included) and leaf blocks (the window's); with it in
/// memory, leaf blocks only.
#[test]
fn dfiting_lookups_split_inner_and_leaf_blocks() {
    let keys: Vec<u64> = (0..20_000u64).map(|k| k * k / 3 + k).collect();
    for resident in [Resident::None, Resident::AllInner] {
        let storage = small_storage();
        let index = build_fiting(&storage, &keys, fiting_params(4, 8, resident));
        let before = storage.stats();
        let mut buf = [0u8; 8];
        let probes = (0..20_000usize).step_by(97).count() as u64;
        for i in (0..20_000usize).step_by(97) {
            assert!(index.get(&keys[i], &mut buf).unwrap());
        }
        let d = storage.stats() - before;
        let inner = d.blocks_read(IoClass::Inner);
        let leaf = d.blocks_read(IoClass::Leaf);
        assert_eq!(d.read_blocks, inner + leaf);
        assert!(leaf >= probes && leaf <= 2 * probes, "{leaf} leaf blocks");
        if resident == Resident::None {
            let height = u64::from(index.inner_height());
            assert!(inner >= height * probes && inner <= (height + 1) * probes);
        } else {
            assert_eq!(inner, 0);
        }
    }
}

#[test]
fn dfiting_damaged_files_give_typed_errors() {
    let make = |storage: &Storage| {
        // No resegmentation, so every block of the files belongs to the index (a replaced
        // segment's blocks are dead: nothing reads them).
        let mut keys: Vec<u64> = (1..220u64).map(mix).collect();
        keys.sort_unstable();
        let mut index = build_fiting(storage, &keys, fiting_params(0, 8, Resident::None));
        assert!(index.inner_height() >= 2, "{} segments", index.segments());
        for k in 0..5u64 {
            index.insert(mix(k + 10_000), &payload(k, 1)).unwrap();
        }
        index.flush().unwrap();
    };
    damage_each_block(make, |s| {
        let index = DiskFiting::open(s, "f", false, Resident::None)?;
        index.verify()?;
        Ok(())
    });
}

/// Paper 003 Table 2's worst-case I/O costs, checked per operation on 100K random keys in
/// 4 KiB blocks (`B` = 240 flagged records a block, `P` segments, `M` records a segment):
///
/// * FITing-tree lookup `log_B P + 2 eps / B`: the inner tree's height (plus one leaf when the
///   wanted entry opens the next inner leaf, module docs) and the window's blocks, which
///   `2 eps + 3` records can spread over one block more than `2 eps / B` rounds to; an absent
///   key adds the meta block and the buffer blocks.
/// * FITing-tree insert `2 log_B P + 1 + 2 M / B`: without a resegmentation, per insert, the
///   lookup's reads and the meta and buffer blocks written; with them, amortized over all
///   inserts (a resegmentation reads the segment and writes the new ones, `2 M / B`, plus the
///   inner tree's path for each new segment and the two neighbours' meta blocks).
/// * PGM lookup `log(N / B)`: with the models in memory, each disk level costs its window's
///   blocks; there are at most `log2(N / base)` levels.
/// * PGM insert `log(N / B)` amortized: blocks read and written over all inserts, per insert.
#[test]
fn table2_bounds_hold() {
    let mut keys: Vec<u64> = (0..100_000u64).map(mix).collect();
    keys.sort_unstable();
    let (held, loaded): (Vec<u64>, Vec<u64>) = keys.iter().partition(|k| *k % 10 == 0);
    let eps = 64usize;
    let per = 240f64;
    let window_blocks = ((2 * eps + 3) as f64 / per).ceil() as u64 + 1;
    let log2 = |x: f64| x.log2().ceil().max(1.0) as u64;
    let mut buf = [0u8; 8];

    let storage = Storage::ram();
    let mut fit = build_fiting(&storage, &loaded, fiting_params(eps, 256, Resident::None));
    let height = u64::from(fit.inner_height());
    let buffer_blocks = (256f64 / per).ceil() as u64;
    let lookup_bound = height + 1 + window_blocks + 1 + buffer_blocks;
    for k in loaded.iter().step_by(50) {
        let before = storage.stats();
        assert!(fit.get(k, &mut buf).unwrap());
        let d = storage.stats() - before;
        assert!(d.blocks_read(IoClass::Inner) <= height + 1, "{d:?}");
        assert!(d.blocks_read(IoClass::Leaf) <= window_blocks, "{d:?}");
    }
    let mut resegmentations = 0;
    let before_all = storage.stats();
    for k in &held {
        let segments = fit.segments();
        let before = storage.stats();
        fit.insert(*k, &payload(*k, 1)).unwrap();
        let d = storage.stats() - before;
        if fit.segments() == segments && d.write_blocks <= 1 + buffer_blocks {
            assert!(d.read_blocks <= lookup_bound, "{d:?}");
        } else {
            resegmentations += 1;
        }
    }
    assert!(resegmentations > 0);
    // Resegmentations, amortized over the inserts: `2 log_B P + 1 + 2 M / B` with `M` the
    // records a segment holds on average plus a full buffer.
    let d = storage.stats() - before_all;
    let height = u64::from(fit.inner_height()) as f64;
    let m = fit.len() as f64 / fit.segments() as f64 + 256.0;
    let bound = 2.0 * (height + 1.0) + 1.0 + 2.0 * (m / per).ceil() + lookup_bound as f64;
    let amortized = (d.read_blocks + d.write_blocks) as f64 / held.len() as f64;
    assert!(amortized <= bound, "{amortized} blocks an insert > {bound}");
    for k in held.iter().step_by(25) {
        let before = storage.stats();
        assert!(fit.get(k, &mut buf).unwrap());
        let d = storage.stats() - before;
        assert!(d.read_blocks <= lookup_bound + 1, "{d:?}");
    }

    let storage = Storage::ram();
    let mut pgm = DiskPgm::build(
        &storage,
        "p",
        &loaded,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        DiskPgmParams {
            payload_size: 8,
            pgm: PgmParams::new(eps, 8),
            base: 256,
        },
    )
    .unwrap();
    let before = storage.stats();
    for k in &held {
        pgm.insert(*k, &payload(*k, 1)).unwrap();
    }
    let d = storage.stats() - before;
    let n = keys.len() as f64;
    let amortized = (d.read_blocks + d.write_blocks) as f64 / held.len() as f64;
    assert!(
        amortized <= log2(n / per) as f64,
        "{amortized} blocks an insert"
    );
    let levels = log2(n / 256.0);
    let (_, disk_levels) = pgm.level_sizes();
    assert!(disk_levels.len() as u64 <= levels);
    for k in keys.iter().step_by(50) {
        let before = storage.stats();
        assert!(pgm.get(k, &mut buf).unwrap());
        let d = storage.stats() - before;
        assert!(
            d.read_blocks <= disk_levels.len() as u64 * window_blocks,
            "{d:?}"
        );
        assert!(d.read_blocks <= log2(n / per) * window_blocks, "{d:?}");
    }
}

/// FILM with `mem` bytes of cached items: 0 evicts every item as it comes, 480 caches 20 items.
fn build_film(storage: &Storage, keys: &[u64], eps: usize, mem: u64) -> Film {
    Film::build(
        storage,
        "film",
        keys,
        |_, k, out| out.copy_from_slice(&payload(*k, 0)),
        FilmParams {
            payload_size: 8,
            eps,
            memory_limit: mem,
        },
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every operation FILM takes (inserts anywhere, updates, deletes, gets that swap items
    /// in, scans, flushes, reopens) agrees with a `BTreeMap`, with tiny errors (refits every
    /// few writes) and tiny caches (evictions on almost every write).
    #[test]
    fn film_agrees_with_btreemap(
        initial in proptest::collection::btree_set(0u64..3000, 0..400),
        ops in proptest::collection::vec(op(), 1..200),
        eps in prop_oneof![Just(1usize), Just(4), Just(64)],
        mem in prop_oneof![Just(0u64), Just(480), Just(1 << 20)],
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.into_iter().collect();
        run_ops(
            &storage,
            &keys,
            &ops,
            |s, k| build_film(s, k, eps, mem),
            |s| Film::open(s, "film", true).unwrap(),
        )?;
    }

    /// FILM's invariants after any writes: the cache holds at most what the memory limit
    /// allows, every item costs its key and locator in memory (at least 16 bytes, cached or
    /// not), and the files' dead records never exceed what they hold.
    #[test]
    fn film_keeps_its_memory_limit(
        initial in proptest::collection::btree_set(0u64..100_000, 0..2000),
        writes in proptest::collection::vec((0u64..100_000, any::<bool>()), 0..500),
        mem in 0u64..4000,
    ) {
        let storage = small_storage();
        let keys: Vec<u64> = initial.into_iter().collect();
        let mut film = build_film(&storage, &keys, 8, mem);
        let limit = (mem / (8 + CACHED_ITEM_OVERHEAD) as u64) as usize;
        let mut buf = [0u8; 8];
        for (k, read) in writes {
            if read {
                film.get(&k, &mut buf).unwrap();
            } else {
                film.insert(k, &payload(k, 1)).unwrap();
            }
            prop_assert!(film.cached_items() <= limit);
        }
        prop_assert!(film.memory_bytes() as u64 >= 16 * film.len());
        let bytes = film.storage_bytes();
        prop_assert!(bytes.used + bytes.free <= bytes.allocated);
    }
}

#[test]
fn film_swaps_items_in_and_appends_evictions() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..2000u64).map(|k| k * 3).collect();
    // 20 items cached: the 20 highest keys.
    let mut film = build_film(&storage, &keys, 16, 20 * 24);
    assert_eq!(film.cached_items(), 20);
    let memory = film.memory_bytes();
    let mut buf = [0u8; 8];
    let before = storage.stats();
    assert!(film.get(&(5999 - 2), &mut buf).unwrap());
    assert_eq!(
        (storage.stats() - before).read_blocks,
        0,
        "a cached item reads nothing"
    );
    assert!(film.get(&30, &mut buf).unwrap());
    assert_eq!(buf, payload(30, 0));
    assert_eq!(
        (storage.stats() - before).read_blocks,
        1,
        "an item on disk reads its page"
    );
    assert_eq!(film.stats().swap_ins, 1);
    assert_eq!(
        film.stats().evictions,
        1,
        "the coldest cached item made room"
    );
    // The swapped-in item takes the slot the chain was built with room for; only the free
    // list's first allocation (4 slots) is new.
    assert!(
        film.memory_bytes() <= memory + 16,
        "{memory} -> {}",
        film.memory_bytes()
    );
    let before = storage.stats();
    assert!(film.get(&30, &mut buf).unwrap());
    assert_eq!(
        (storage.stats() - before).read_blocks,
        0,
        "swapped in: cached now"
    );
    // Appends beyond the last key, far more than the cache holds, refit the last leaf.
    for k in 0..3000u64 {
        assert!(!film.insert(10_000 + k, &payload(k, 2)).unwrap());
    }
    assert!(film.stats().refits > 0);
    assert_eq!(film.len(), 5000);
    film.flush().unwrap();
    drop(film);
    let ro = Film::open(&storage, "film", false).unwrap();
    assert_eq!(ro.cached_items(), 20);
    for k in (0..3000u64).step_by(7) {
        assert!(ro.get(&(10_000 + k), &mut buf).unwrap());
        assert_eq!(buf, payload(k, 2));
    }
    assert!(ro.get(&30, &mut buf).unwrap());
    assert_eq!(
        ro.stats().swap_ins,
        0,
        "a read-only handle does not swap in"
    );
}

/// With no memory for items, a read leaves the item on disk: swapping it in would evict it
/// at once and append a copy of what the disk already holds (paper 002 Fig. 13's `mem=0`).
#[test]
fn film_without_memory_reads_without_writing() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..2000u64).collect();
    let film = build_film(&storage, &keys, 16, 0);
    assert_eq!(film.cached_items(), 0);
    let (before, bytes) = (storage.stats(), film.disk_bytes());
    let mut buf = [0u8; 8];
    for k in (0..2000u64).step_by(3) {
        assert!(film.get(&k, &mut buf).unwrap());
        assert_eq!(buf, payload(k, 0));
    }
    let d = storage.stats() - before;
    assert_eq!(d.write_blocks, 0, "reads write nothing: {d:?}");
    assert_eq!(film.disk_bytes(), bytes);
    assert_eq!((film.stats().swap_ins, film.stats().evictions), (0, 0));
}

/// A page a flush wrote is never written again: evictions after the flush go to a new page.
#[test]
fn film_writes_a_flushed_page_once() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..10u64).collect();
    let mut film = build_film(&storage, &keys, 16, 0);
    let pages = || storage.file_bytes("film.data") / storage.block_size() as u64;
    let built = pages();
    film.insert(100, &payload(100, 1)).unwrap();
    film.flush().unwrap();
    assert_eq!(pages(), built + 1);
    film.insert(101, &payload(101, 1)).unwrap();
    film.flush().unwrap();
    assert_eq!(pages(), built + 2, "the flushed page was written again");
    drop(film);
    let ro = Film::open(&storage, "film", false).unwrap();
    let mut buf = [0u8; 8];
    for k in keys.iter().chain(&[100, 101]) {
        assert!(ro.get(k, &mut buf).unwrap(), "{k}");
    }
}

/// Every key and payload of `film`, by a scan.
fn film_contents(film: &Film) -> BTreeMap<u64, Vec<u8>> {
    let (mut keys, mut payloads) = (Vec::new(), Vec::new());
    film.scan(&0, usize::MAX, &mut keys, &mut payloads).unwrap();
    keys.into_iter()
        .zip(payloads.chunks_exact(8).map(<[u8]>::to_vec))
        .collect()
}

/// A crash in the middle of a flush leaves the state before it or after it. Format 2 wrote
/// the snapshot over the committed one in `<name>`, then the header: a write torn in the
/// snapshot left neither, and open refused the index ("a flush was cut short") although its
/// last flush had committed. Here every write request of a flush in turn fails (torn: half
/// its blocks written; or failed, or out of space, or the sync after it failing) on a device
/// that then dies, in the build's flush's successor and in later ones (so that snapshots go
/// both before and past the committed one), with evictions, updates and deletes since the
/// last flush; the files reopened on a sound device hold exactly one of the two states.
#[test]
fn film_a_crash_during_a_flush_leaves_the_state_before_or_after_it() {
    const ROUNDS: u64 = 3;
    // Round r: inserts of new keys (evicting others), updates and deletes, then a flush.
    let round = |film: &mut Film, model: &mut BTreeMap<u64, Vec<u8>>, r: u64| {
        for i in 0..300 + 200 * r {
            let k = 100_000 * (r + 1) + i * 7;
            film.insert(k, &payload(k, r)).unwrap();
            model.insert(k, payload(k, r).to_vec());
        }
        for k in (r * 40..r * 40 + 600).step_by(3) {
            film.insert(k * 2, &payload(k, r + 10)).unwrap();
            model.insert(k * 2, payload(k, r + 10).to_vec());
        }
        for k in (r * 90..r * 90 + 300).step_by(5) {
            let k = k * 2 + 1;
            assert_eq!(film.delete(&k).unwrap(), model.remove(&k).is_some());
        }
    };
    let keys: Vec<u64> = (0..3000u64).collect();
    let mut struck = 0;
    for fault in WriteFault::ALL {
        for last in 0..ROUNDS {
            for after in 0.. {
                let plan = FaultPlan::new();
                let storage = small_storage().with_faults(Arc::clone(&plan));
                let mut film = build_film(&storage, &keys, 16, 200 * 24);
                let mut model = film_contents(&film);
                for r in 0..last {
                    round(&mut film, &mut model, r);
                    film.flush().unwrap();
                }
                let before = model.clone();
                round(&mut film, &mut model, last);
                plan.sticky(true);
                plan.fail_write_after(after, fault);
                let flushed = film.flush();
                drop(film);
                plan.disarm();
                let film = Film::open(&storage, "film", true)
                    .unwrap_or_else(|e| panic!("{fault:?} at write {after} of flush {last}: {e}"));
                let got = film_contents(&film);
                if flushed.is_ok() {
                    assert_eq!(plan.injected(), 0);
                    assert!(got == model, "{fault:?}: flush {last} lost its state");
                    break;
                }
                struck += 1;
                assert!(
                    got == before || got == model,
                    "{fault:?} at write {after} of flush {last}: neither state"
                );
            }
        }
    }
    assert!(struck >= 4 * ROUNDS as usize * 3, "{struck} flushes struck");
}

/// A flush whose header was written but whose sync failed, retried in the same process and
/// torn in its snapshot: the retry writes the same generation over the snapshot the first
/// attempt's header names, so open passes over that header and opens the state before both.
#[test]
fn film_a_retried_flush_torn_again_leaves_the_state_before_it() {
    let plan = FaultPlan::new();
    let storage = small_storage().with_faults(Arc::clone(&plan));
    let keys: Vec<u64> = (0..3000u64).collect();
    let mut film = build_film(&storage, &keys, 16, 200 * 24);
    film.flush().unwrap();
    let before = film_contents(&film);
    for k in 5000..5300u64 {
        film.insert(k, &payload(k, 1)).unwrap();
    }
    // Write 0 the open page, 1 the snapshot, 2 the header: the sync after it fails.
    plan.fail_write_after(2, WriteFault::FailSync);
    assert!(film.flush().is_err());
    plan.disarm();
    for k in 6000..6100u64 {
        film.insert(k, &payload(k, 2)).unwrap();
    }
    plan.fail_write_after(1, WriteFault::Torn);
    assert!(film.flush().is_err());
    drop(film);
    plan.disarm();
    let film = Film::open(&storage, "film", false).unwrap();
    assert!(
        film_contents(&film) == before,
        "not the state before the flushes"
    );
}

#[test]
fn film_extreme_keys_and_read_only() {
    let storage = small_storage();
    extreme_keys_and_read_only(
        &storage,
        |s, k| build_film(s, k, 2, 48),
        |s| Film::open(s, "film", false).unwrap(),
    );
    let mut index = build_film(&storage, &[1, 2], 2, 48);
    assert!(matches!(
        index.insert(3, &[0u8; 4]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        Film::build(
            &storage,
            "bad",
            &[3, 3],
            |_, _, _| {},
            FilmParams::default()
        ),
        Err(Error::DuplicateKey { .. })
    ));
    assert!(matches!(
        Film::build(
            &storage,
            "bad",
            &[3],
            |_, _, _| {},
            FilmParams {
                eps: 0,
                ..FilmParams::default()
            }
        ),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn film_damaged_files_give_typed_errors() {
    let keys: Vec<u64> = (0..3000u64).map(|k| k * 5).collect();
    let built: BTreeMap<u64, Vec<u8>> = keys.iter().map(|&k| (k, payload(k, 0).to_vec())).collect();
    let mut flushed = built.clone();
    flushed.extend((0..100u64).map(|k| (k * 5 + 1, payload(k, 1).to_vec())));
    let make = |storage: &Storage| {
        let mut index = build_film(storage, &keys, 16, 100 * 24);
        for k in 0..100u64 {
            index.insert(k * 5 + 1, &payload(k, 1)).unwrap();
        }
        index.flush().unwrap();
    };
    // Damage to `film` (a header slot, a snapshot) may open the build's state, or the flushed
    // one: the two header slots hold both. Never another state, and never `film.data`'s
    // damage unnoticed.
    damage_each_block_or_fall_back(
        make,
        |s| {
            let index = Film::open(s, "film", false)?;
            let (mut k, mut p) = (Vec::new(), Vec::new());
            index.scan(&0, usize::MAX, &mut k, &mut p)?;
            let got: BTreeMap<u64, Vec<u8>> = k
                .into_iter()
                .zip(p.chunks_exact(8).map(<[u8]>::to_vec))
                .collect();
            assert!(got == flushed || got == built, "neither committed state");
            Ok(())
        },
        |file| file == "film",
    );
}

/// Another build's data file under this FILM's data name (same keys, same parameters) is
/// refused on open: the data header records the pair id of the build that wrote it.
#[test]
fn film_refuses_another_build_s_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(
        dir.path(),
        DeviceKind::parse("file-buffered").unwrap(),
        4096,
    )
    .unwrap();
    let keys: Vec<u64> = (0..3000u64).collect();
    drop(build_film(&storage, &keys, 16, 0));
    std::fs::copy(dir.path().join("film.data"), dir.path().join("saved.data")).unwrap();
    drop(build_film(&storage, &keys, 16, 0));
    assert!(Film::open(&storage, "film", false).is_ok());
    std::fs::copy(dir.path().join("saved.data"), dir.path().join("film.data")).unwrap();
    let err = Film::open(&storage, "film", false).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
}

/// A scan reads each data page once: items evicted together (a bulk load's, in key order)
/// share their page.
#[test]
fn film_scans_read_each_page_once() {
    let storage = small_storage();
    let keys: Vec<u64> = (0..2000u64).map(|k| k * 3).collect();
    let film = build_film(&storage, &keys, 16, 0);
    // 512-byte blocks: 31 records of 16 bytes a page.
    let before = storage.stats();
    let (mut k, mut p) = (Vec::new(), Vec::new());
    assert_eq!(film.scan(&0, 100, &mut k, &mut p).unwrap(), 100);
    assert_eq!(k, keys[..100].to_vec());
    assert_eq!((storage.stats() - before).read_blocks, 100u64.div_ceil(31));
}
