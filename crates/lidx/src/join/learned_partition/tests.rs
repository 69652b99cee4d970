//! Unit tests of the learned route's parts: the bucket map, partitioning into runs, and a
//! bucket pair's join with its fallback.

use super::bucket_join::{join_bucket, JoinScratch};
use super::partition::partition;
use super::reader::BucketReader;
use super::sample::{sample_keys, BucketMap, LearnedPartitionParams, RecordVisitor};
use super::*;
use crate::error::{Error, Result};
use crate::io::Storage;
use sample::mix;

fn records(keys: &[u64]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| {
            let mut r = [0u8; 16];
            r[..8].copy_from_slice(&k.to_le_bytes());
            r[8..].copy_from_slice(&(k ^ 0xabcd).to_le_bytes());
            r
        })
        .collect()
}

fn scan_of(recs: &[u8]) -> impl FnOnce(&mut RecordVisitor<'_>) -> Result<()> + '_ {
    move |f| {
        for (i, r) in recs.chunks_exact(16).enumerate() {
            f(i as u64, r)?;
        }
        Ok(())
    }
}

#[test]
fn bucket_map_is_monotone_and_spreads() {
    let mut sample: Vec<u64> = (0..5000u64).map(|i| mix(i) >> 20).collect();
    let map = BucketMap::fit(&mut sample, 100, 4).unwrap();
    let mut prev = 0;
    let mut counts = [0usize; 100];
    for v in (0..(1u64 << 44)).step_by(1 << 30) {
        let b = map.bucket(v);
        assert!(b >= prev);
        prev = b;
    }
    for i in 0..50_000u64 {
        counts[map.bucket(mix(i + 1_000_000) >> 20)] += 1;
    }
    assert!(counts.iter().all(|&c| c > 200 && c < 900), "{counts:?}");
}

proptest::proptest! {
    /// Buckets never decrease as keys grow and stay below the bucket count, for any sample
    /// (duplicates included) and any bucket count.
    #[test]
    fn bucket_map_is_monotone(
        mut sample in proptest::collection::vec(0u64..1 << 40, 0..400),
        mut probes in proptest::collection::vec(0u64..1 << 41, 1..200),
        buckets in 1usize..500,
        eps in 1usize..32,
    ) {
        let map = BucketMap::fit(&mut sample, buckets, eps).unwrap();
        probes.sort_unstable();
        let got: Vec<usize> = probes.iter().map(|&v| map.bucket(v)).collect();
        proptest::prop_assert!(got.windows(2).all(|w| w[0] <= w[1]));
        proptest::prop_assert!(got.iter().all(|&b| b < buckets));
    }
}

#[test]
fn partition_then_join_small_arena_and_tiny_cap() {
    let storage = Storage::ram();
    let left_keys: Vec<u64> = (0..3000u64).map(|i| mix(i) % 10_000).collect();
    let right_keys: Vec<u64> = (0..2000u64).map(|i| mix(i + 77) % 10_000).collect();
    let (lr, rr) = (records(&left_keys), records(&right_keys));
    let params = LearnedPartitionParams::default();
    let mut sample = Vec::new();
    sample_keys::<u64>(&params, 0, 3000, &mut sample, scan_of(&lr)).unwrap();
    sample_keys::<u64>(&params, 1, 2000, &mut sample, scan_of(&rr)).unwrap();
    let map = BucketMap::fit(&mut sample, 20, 4).unwrap();
    let lp = partition::<u64>(storage.create("l").unwrap(), &map, 16, 700, scan_of(&lr)).unwrap();
    let rp = partition::<u64>(storage.create("r").unwrap(), &map, 16, 5000, scan_of(&rr)).unwrap();
    assert_eq!((lp.runs(), rp.runs()), (5, 1));
    let mut expected = Vec::new();
    for (i, l) in left_keys.iter().enumerate() {
        for (j, r) in right_keys.iter().enumerate() {
            if l == r {
                expected.push((
                    *l,
                    lr[i * 16..i * 16 + 16].to_vec(),
                    rr[j * 16..j * 16 + 16].to_vec(),
                ));
            }
        }
    }
    expected.sort();
    for cap in [usize::MAX / 2, 7] {
        let mut got = Vec::new();
        let (mut a, mut b) = (BucketReader::new(&lp, 2), BucketReader::new(&rp, 3));
        let mut scratch = JoinScratch::default();
        for bucket in 0..map.buckets() {
            join_bucket::<u64>(&mut a, &mut b, bucket, cap, &mut scratch, &mut |k, l, r| {
                got.push((*k, l.to_vec(), r.to_vec()));
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(got, expected, "cap {cap}");
    }
}

#[test]
fn one_key_larger_than_the_budget_is_refused() {
    let storage = Storage::ram();
    let recs = records(&[5; 10]);
    let map = BucketMap::fit::<u64>(&mut [5], 1, 4).unwrap();
    let lp = partition::<u64>(storage.create("l").unwrap(), &map, 16, 100, scan_of(&recs)).unwrap();
    let rp = partition::<u64>(storage.create("r").unwrap(), &map, 16, 100, scan_of(&recs)).unwrap();
    let (mut a, mut b) = (BucketReader::new(&lp, 1), BucketReader::new(&rp, 1));
    let err = join_bucket::<u64>(
        &mut a,
        &mut b,
        0,
        8,
        &mut JoinScratch::default(),
        &mut |_, _, _| Ok(()),
    );
    assert!(matches!(
        err,
        Err(Error::InvalidParameter { name: "memory", .. })
    ));
    let mut n = 0;
    join_bucket::<u64>(
        &mut a,
        &mut b,
        0,
        20,
        &mut JoinScratch::default(),
        &mut |_, _, _| {
            n += 1;
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(n, 100);
}
