//! Every persistable static index through its byte encoding: a decoded index answers exactly
//! as the original, and damaged bytes (cut short, flipped, followed by garbage) give a typed
//! error or an index that still keeps `lo <= pos <= hi <= len` on every query, never a panic.

mod common;

use common::TestKey;
use lidx::mem::BTreeParams;
use lidx::mem::Persist;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{Decoder, Encoder};
use lidx::mem::{FitingParams, FitingTree};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{PgmZero, PgmZeroParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{RadixSplineZero, RadixSplineZeroParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::mem::{ZoneMap, ZoneMapParams};
use lidx::{Error, Str16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn encode<K: TestKey, I: Persist<K>>(index: &I) -> Vec<u8> {
    let mut out = Encoder::new();
    index.encode(&mut out);
    out.into_bytes()
}

/// Decodes `bytes` as exactly one index: trailing bytes are an error.
fn decode_all<K: TestKey, I: Persist<K>>(bytes: &[u8]) -> lidx::Result<I> {
    let mut input = Decoder::new("model", bytes);
    let index = I::decode(&mut input)?;
    input.finish()?;
    Ok(index)
}

/// Round trip on every conformance dataset: same length, same window for every probe.
fn round_trips<K: TestKey, I: Persist<K>>(name: &str, build: impl Fn(&[K]) -> lidx::Result<I>) {
    for (set, keys) in common::datasets::<K>() {
        let what = format!("{name}/{}/{set}", K::NAME);
        let index = build(&keys).unwrap();
        let bytes = encode(&index);
        let decoded: I = decode_all(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(decoded.len(), index.len(), "{what}");
        assert_eq!(decoded.shape(), index.shape(), "{what}");
        for probe in common::probes(7, &keys) {
            assert_eq!(
                decoded.search(probe),
                index.search(probe),
                "{what}: {probe:?}"
            );
        }
        assert_eq!(encode(&decoded), bytes, "{what}: re-encoding differs");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            matches!(decode_all::<K, I>(&longer), Err(Error::Corrupt { .. })),
            "{what}: trailing byte accepted"
        );
    }
}

/// Every cut of a small encoding is `Corrupt`; a few hundred seeded byte flips give an error or
/// an index whose windows stay inside `[0, len]`.
fn survives_damage<K: TestKey, I: Persist<K>>(name: &str, index: &I, keys: &[K]) {
    let bytes = encode(index);
    for cut in 0..bytes.len() {
        match decode_all::<K, I>(&bytes[..cut]) {
            Err(Error::Corrupt { .. }) => {}
            Err(e) => panic!("{name}: cut at {cut} of {}: {e}", bytes.len()),
            Ok(_) => panic!("{name}: cut at {cut} of {} decoded", bytes.len()),
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0xf11b);
    let probes = common::probes(3, keys);
    let mut decoded_count = 0;
    for flip in 0..400 {
        let mut damaged = bytes.clone();
        let at = rng.gen_range(0..damaged.len());
        damaged[at] ^= rng.gen_range(1..=255u8);
        let Ok(decoded) = decode_all::<K, I>(&damaged) else {
            continue;
        };
        decoded_count += 1;
        let len = decoded.len();
        for &probe in &probes {
            let w = decoded.search(probe);
            assert!(
                w.lo <= w.pos && w.pos <= w.hi && w.hi <= len,
                "{name}: flip {flip} at byte {at}: window {w:?} for {probe:?}, len {len}"
            );
        }
    }
    assert!(
        decoded_count > 0,
        "{name}: no damaged encoding decoded, searches never ran"
    );
}

/// A small dataset with enough structure for several segments (and levels).
fn small<K: TestKey>() -> Vec<K> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5a11);
    let mut keys: Vec<K> = (0..400)
        .map(|i: u64| K::from_seed((i * i) << 40 | rng.gen_range(0..1 << 20)))
        .collect();
    keys.sort_by(|a, b| a.key_cmp(b));
    keys
}

/// Round trip and damage tests for an index type `$ty<K>` (or `$ty` alone when it is not
/// generic over the key type).
macro_rules! persist_suite {
    ($name:ident, $ty:ident, $build:expr) => {
        persist_suite!(@impl $name, $ty<u64>, $ty<Str16>, $build);
    };
    ($name:ident, $ty:ident for any key, $build:expr) => {
        persist_suite!(@impl $name, $ty, $ty, $build);
    };
    (@impl $name:ident, $u64:ty, $str:ty, $build:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn round_trip_u64() {
                round_trips::<u64, $u64>(stringify!($name), $build);
            }
            #[test]
            fn round_trip_str16() {
                round_trips::<Str16, $str>(stringify!($name), $build);
            }
            #[test]
            fn damage_u64() {
                let keys = small::<u64>();
                let index: $u64 = ($build)(&keys).unwrap();
                survives_damage(stringify!($name), &index, &keys);
            }
            #[test]
            fn damage_str16() {
                let keys = small::<Str16>();
                let index: $str = ($build)(&keys).unwrap();
                survives_damage(stringify!($name), &index, &keys);
            }
        }
    };
}

persist_suite!(pgm, Pgm, |keys| Pgm::build(keys, PgmParams::new(2, 1)));
persist_suite!(zone_map, ZoneMap, |keys| ZoneMap::build(
    keys,
    ZoneMapParams::new(16)
));
persist_suite!(sampled_pgm, SampledPgm, |keys| SampledPgm::build(
    keys,
    SampledPgmParams::new(4, 1)
));
persist_suite!(radix_spline, RadixSpline, |keys| RadixSpline::build(
    keys,
    RadixSplineParams::new(6, 2)
));
persist_suite!(rmi, Rmi for any key, |keys| Rmi::build(
    keys,
    RmiParams::new(16)
));
persist_suite!(btree_model, BTreeModel, |keys| BTreeModel::build(
    keys,
    BTreeModelParams {
        every: 8,
        tree: BTreeParams::with_slots(4, 4)
    }
));
persist_suite!(fiting, FitingTree, |keys| FitingTree::build(
    keys,
    FitingParams {
        eps: 2,
        tree: BTreeParams::with_slots(4, 4)
    }
));
persist_suite!(pgm_zero, PgmZero, |keys| PgmZero::build(
    keys,
    PgmZeroParams::new(1, 4, 1)
));
persist_suite!(radix_spline_zero, RadixSplineZero, |keys| {
    RadixSplineZero::build(keys, RadixSplineZeroParams::new(1, 4, 6))
});

#[test]
fn kinds_are_distinct() {
    let kinds = [
        <Pgm<u64> as Persist<u64>>::KIND,
        <ZoneMap<u64> as Persist<u64>>::KIND,
        <SampledPgm<u64> as Persist<u64>>::KIND,
        <RadixSpline<u64> as Persist<u64>>::KIND,
        <Rmi as Persist<u64>>::KIND,
        <BTreeModel<u64> as Persist<u64>>::KIND,
        <FitingTree<u64> as Persist<u64>>::KIND,
        <PgmZero<u64> as Persist<u64>>::KIND,
        <RadixSplineZero<u64> as Persist<u64>>::KIND,
    ];
    for (i, a) in kinds.iter().enumerate() {
        assert!(!kinds[i + 1..].contains(a), "kind {a} used twice");
    }
}
