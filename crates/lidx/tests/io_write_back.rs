//! The write-back page cache: random reads, writes and syncs against a `Vec` model of the
//! blocks (both cache modes), how few device writes repeated writes cost, device write errors
//! surfacing from the evicting call and from sync without losing the block, and a disk B+-tree
//! built by random inserts through write-back caches reopened from the device alone.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{
    BlockDevice, CacheMode, IoClass, IoStats, PageCache, SimDevice, SimProfile, Storage,
    BLOCK_TRAILER,
};
use lidx::{Error, Result};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const BS: usize = 512;
const PAYLOAD: usize = BS - BLOCK_TRAILER;

fn sim() -> Arc<SimDevice> {
    Arc::new(SimDevice::new("wb", BS, SimProfile::named("ram").unwrap()).unwrap())
}

/// A block whose payload is `fill` everywhere.
fn block(fill: u8, count: usize) -> Vec<u8> {
    vec![fill; BS * count]
}

/// A device that fails every write while `fail` is set.
struct FailingWrites {
    inner: Arc<SimDevice>,
    fail: AtomicBool,
}

impl BlockDevice for FailingWrites {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn block_size(&self) -> usize {
        self.inner.block_size()
    }
    fn len_blocks(&self) -> u64 {
        self.inner.len_blocks()
    }
    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        self.inner.read_blocks(first, buf, class)
    }
    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        if self.fail.load(Ordering::Relaxed) {
            return Err(Error::Io {
                file: "wb".to_string(),
                op: format!("write block {first}"),
                kind: std::io::ErrorKind::Other,
                message: "injected".to_string(),
            });
        }
        self.inner.write_blocks(first, buf, class)
    }
    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }
    fn stats(&self) -> IoStats {
        self.inner.stats()
    }
    fn describe(&self) -> String {
        "failing writes".to_string()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Read { first: u64, count: usize },
    Write { first: u64, count: usize, fill: u8 },
    Sync,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..24, 1usize..5).prop_map(|(first, count)| Op::Read { first, count }),
        4 => (0u64..24, 1usize..5, any::<u8>())
            .prop_map(|(first, count, fill)| Op::Write { first, count, fill }),
        1 => Just(Op::Sync),
    ]
}

/// Checks that blocks `first..` of `dev` hold the model's payloads.
fn check_read(dev: &dyn BlockDevice, model: &[Option<u8>], first: u64, count: usize) {
    let mut buf = block(0, count);
    dev.read_blocks(first, &mut buf, IoClass::Leaf).unwrap();
    for (i, b) in buf.chunks_exact(BS).enumerate() {
        let want = model[first as usize + i].expect("only written blocks are read");
        assert!(
            b[..PAYLOAD].iter().all(|&x| x == want),
            "block {}",
            first as usize + i
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Starts from a device of 12 written blocks; writes may land past its end (leaving gaps).
    /// Reads touch only written blocks and must see the model; after every sync the device
    /// alone must hold the model (write-through: after every write).
    #[test]
    fn cache_matches_a_block_model(
        ops in prop::collection::vec(op(), 1..80),
        capacity in 0usize..7,
        write_back in any::<bool>(),
    ) {
        let dev = sim();
        let mut model: Vec<Option<u8>> = vec![None; 32];
        for b in 0..12 {
            dev.write_blocks(b, &mut block(b as u8, 1), IoClass::Leaf).unwrap();
            model[b as usize] = Some(b as u8);
        }
        let mode = if write_back { CacheMode::WriteBack } else { CacheMode::WriteThrough };
        let cache = PageCache::with_mode(Arc::clone(&dev) as Arc<dyn BlockDevice>, capacity, mode);
        let device_matches = |model: &[Option<u8>]| {
            for (b, m) in model.iter().enumerate() {
                if m.is_some() {
                    check_read(dev.as_ref(), model, b as u64, 1);
                }
            }
        };
        for op in ops {
            match op {
                Op::Read { first, count } => {
                    let range = first as usize..first as usize + count;
                    if model[range].iter().all(Option::is_some) {
                        check_read(&cache, &model, first, count);
                    }
                }
                Op::Write { first, count, fill } => {
                    cache.write_blocks(first, &mut block(fill, count), IoClass::Leaf).unwrap();
                    for m in &mut model[first as usize..first as usize + count] {
                        *m = Some(fill);
                    }
                    if !write_back {
                        device_matches(&model);
                    }
                }
                Op::Sync => {
                    cache.sync().unwrap();
                    prop_assert_eq!(cache.dirty_blocks(), 0);
                    device_matches(&model);
                }
            }
            let end = model.iter().rposition(Option::is_some).unwrap() as u64 + 1;
            prop_assert_eq!(cache.len_blocks(), end);
        }
        cache.sync().unwrap();
        device_matches(&model);
    }
}

#[test]
fn repeated_writes_to_few_blocks_reach_the_device_once() {
    let dev = sim();
    let cache = PageCache::write_back(Arc::clone(&dev) as Arc<dyn BlockDevice>, 4);
    let mut cache_writes = 0;
    for round in 0..500u32 {
        for b in 0..4u64 {
            let mut buf = block(round as u8, 1);
            cache.write_blocks(b, &mut buf, IoClass::Leaf).unwrap();
            cache_writes += 1;
        }
    }
    assert_eq!(dev.stats().write_requests, 0, "all absorbed before sync");
    cache.sync().unwrap();
    let s = cache.stats();
    assert_eq!(cache_writes, 2000);
    assert_eq!(
        (s.write_requests, s.write_blocks, s.syncs),
        (1, 4, 1),
        "one coalesced request at sync"
    );
    let mut buf = block(0, 4);
    dev.read_blocks(0, &mut buf, IoClass::Leaf).unwrap();
    assert!(buf.chunks_exact(BS).all(|b| b[0] == (499 % 256) as u8));
}

#[test]
fn eviction_writes_runs_of_dirty_neighbours() {
    let dev = sim();
    let cache = PageCache::write_back(Arc::clone(&dev) as Arc<dyn BlockDevice>, 8);
    for b in 0..8u64 {
        cache
            .write_blocks(b, &mut block(b as u8, 1), IoClass::Leaf)
            .unwrap();
    }
    cache
        .write_blocks(100, &mut block(1, 1), IoClass::Leaf)
        .unwrap();
    let s = dev.stats();
    assert_eq!(
        (s.write_requests, s.write_blocks),
        (1, 8),
        "0..8 in one request"
    );
    assert_eq!(cache.dirty_blocks(), 1, "the neighbours stay cached, clean");
}

#[test]
fn a_failed_write_back_is_returned_and_the_block_kept() {
    let inner = sim();
    for b in 0..8 {
        inner
            .write_blocks(b, &mut block(0, 1), IoClass::Leaf)
            .unwrap();
    }
    let dev = Arc::new(FailingWrites {
        inner: Arc::clone(&inner),
        fail: AtomicBool::new(false),
    });
    let cache = PageCache::write_back(Arc::clone(&dev) as Arc<dyn BlockDevice>, 2);
    cache
        .write_blocks(0, &mut block(7, 1), IoClass::Leaf)
        .unwrap();
    cache
        .write_blocks(4, &mut block(8, 1), IoClass::Leaf)
        .unwrap();
    dev.fail.store(true, Ordering::Relaxed);

    let err = cache.write_blocks(2, &mut block(9, 1), IoClass::Leaf);
    assert!(matches!(err, Err(Error::Io { .. })), "{err:?}");
    let err = cache.read_blocks(6, &mut block(0, 1), IoClass::Leaf);
    assert!(matches!(err, Err(Error::Io { .. })), "{err:?}");
    assert!(matches!(cache.sync(), Err(Error::Io { .. })));
    assert_eq!(cache.dirty_blocks(), 2, "nothing lost");
    let mut buf = block(0, 1);
    cache.read_blocks(0, &mut buf, IoClass::Leaf).unwrap();
    assert_eq!(buf[0], 7);

    dev.fail.store(false, Ordering::Relaxed);
    cache.sync().unwrap();
    assert_eq!(cache.dirty_blocks(), 0);
    for (b, want) in [(0, 7), (4, 8)] {
        inner.read_blocks(b, &mut buf, IoClass::Leaf).unwrap();
        assert_eq!(buf[0], want, "block {b}");
    }
}

/// With a cache smaller than the tree (evictions during the build) and one that holds it all
/// (the device sees each block about once).
#[test]
fn a_tree_built_through_write_back_caches_reopens_from_the_device() {
    for cache_blocks in [16, 512] {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), BS)
            .unwrap()
            .with_write_back_cache(cache_blocks);
        assert!(storage.describe().contains("write-back"));
        let params = DiskBTreeParams {
            payload_size: 8,
            fill_factor: 1.0,
            resident: Resident::AllInner,
        };
        let mut keys: Vec<u64> = (0..3000u64).map(|i| i * 7 + 1).collect();
        keys.shuffle(&mut ChaCha8Rng::seed_from_u64(5));
        let mut tree = DiskBTree::<u64>::build(&storage, "t", &[], |_, _, _| {}, params).unwrap();
        let mut model = BTreeMap::new();
        for (i, &k) in keys.iter().enumerate() {
            assert!(!tree.insert(k, &(i as u64).to_le_bytes()).unwrap());
            model.insert(k, i as u64);
        }
        tree.flush().unwrap();
        let written = storage.stats().write_blocks;
        if cache_blocks == 512 {
            assert!(
                written < keys.len() as u64 / 5,
                "{written} blocks written for {} inserts",
                keys.len()
            );
        }

        let reopened = DiskBTree::<u64>::open(&storage, "t", Resident::None, false).unwrap();
        let mut found = [0u8; 8];
        for (&k, &v) in &model {
            assert!(reopened.get(&k, &mut found).unwrap(), "key {k}");
            assert_eq!(u64::from_le_bytes(found), v);
            assert!(!reopened.get(&(k + 1), &mut found).unwrap());
        }
    }
}
