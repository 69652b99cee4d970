//! LeCo-compressed zone maps: the block minimums as a [`LecoArray`] (paper 002 §8), exact or
//! with "rough" separators (`LeCo-Zonemap-D`, §8.2).
//!
//! Paper 002 §8 (G5) compresses the zone map, the minimum key of every leaf page, with LeCo and
//! runs the zone map's binary search through LeCo's random access. §8.2.1 observes that the
//! search only needs its *answers* kept, so separators may move inside an interval per block,
//! "the lower bound ... is the value of the current key, and the upper bound is smaller than the
//! value of the next key", and picks the ones whose LeCo errors are narrowest.
//!
//! Here the separators are model-space values ([`Key::to_model`]). With `m_b` the model value
//! of block `b`'s minimum and `l_{b-1}` that of block `b - 1`'s last key, separator `s_b` lies
//! in `[lo_b, m_b]` where `lo_b = l_{b-1} + 1` when `l_{b-1} < m_b`, else `m_b` (a run of equal
//! model values across the boundary leaves no choice), and `lo_0 = 0`. The exact map takes
//! `s_b = m_b`; the rough one (`ROUGH = true`) lets [`LecoArray::build_within`] choose.
//!
//! Search: `j_lo` = number of separators `< v`, `j_hi` = number `<= v` (`v = key.to_model()`);
//! the window is groups `j_lo - 1 ..= j_hi - 1`, i.e. `[(j_lo - 1) * per_block, j_hi *
//! per_block)` (from 0 when `j_lo = 0`, empty when `j_hi = 0`). Why it holds for any separators
//! in their intervals, `k` any key and `lb` its lower bound:
//!
//! * `lb >= (j_lo - 1) * per_block`: for `b = j_lo - 1 >= 1`, `s_b < v` and `s_b >= lo_b`, so
//!   `l_{b-1} < v` (both cases of `lo_b`), so block `b - 1`'s last key is `< k` (the model map
//!   preserves order).
//! * `lb <= j_hi * per_block`: block `j_hi` (if any) has `s > v`, so `m > v`, so its minimum is
//!   `> k`.
//!
//! For injective key types `j_hi` is replaced by `j_lo` (block `j_lo` has `s >= v`, so `m >= v`,
//! so its minimum is `>= k`), one group as in [`ZoneMap`]. With exact separators `j_lo` is the
//! number of minimums `< k`, so the window is **identical** to [`ZoneMap::search`]'s. With rough
//! separators a key in the gap `(l_{b-1}, m_b]` may get group `b` instead of group `b - 1`: both
//! windows end or start at `b * per_block`, the lower bound, so every lower bound (and every
//! block a disk lookup reads to find it) is identical, which the tests check exhaustively on
//! small data and by proptest. Non-injective keys (strings) may get two groups when several
//! minimums share a model value.
//!
//! **Never larger than the plain zone map.** LeCo pays 24 bytes per partition and as many bits
//! per separator as the widest error in its partition; on keys with irregular gaps (S2 cell ids:
//! 534.6 KB against the plain zone map's 432.2 KB) that is more than the 8 bytes per minimum it
//! compresses. The builder compares both and keeps the plain [`ZoneMap`] when it is not larger;
//! the lookups read the same blocks either way (the windows hold the same lower bounds), so the
//! choice only trades memory against a LeCo decode per probe. [`LecoZoneMapOf::is_compressed`]
//! and [`Persist::name`] say which one a map holds, so the tools that print a model name show it.
//!
//! [`ZoneMap::search`]: crate::mem::ZoneMap

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::mem::zone_map::{ZoneMap, ZoneMapParams};
use crate::model::leco::{LecoArray, LecoParams};

/// A zone map whose separators are LeCo-compressed; exact ([`LecoZoneMap`], paper 002's
/// "LeCo-based zone map") or rough ([`RoughLecoZoneMap`], its `LeCo-Zonemap-D`); or the plain
/// [`ZoneMap`] when compressing would not make it smaller (see the module docs).
#[derive(Debug, Clone)]
pub struct LecoZoneMapOf<K, const ROUGH: bool> {
    held: Held<K>,
}

/// What a [`LecoZoneMapOf`] holds. The compressed form is boxed so that the plain one costs
/// no more than a [`ZoneMap`] of its own.
#[derive(Debug, Clone)]
enum Held<K> {
    Plain(ZoneMap<K>),
    Leco(Box<Compressed>),
}

/// The LeCo-compressed separators and what their search needs.
#[derive(Debug, Clone)]
struct Compressed {
    n: usize,
    per_block: usize,
    separators: LecoArray,
}

impl Compressed {
    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<LecoArray>()
            + self.separators.size_in_bytes()
    }
}

/// The LeCo-based zone map: the exact minimums, compressed.
pub type LecoZoneMap<K> = LecoZoneMapOf<K, false>;

/// `LeCo-Zonemap-D`: separators anywhere in their intervals (see the module docs).
pub type RoughLecoZoneMap<K> = LecoZoneMapOf<K, true>;

impl<K: Key, const ROUGH: bool> LecoZoneMapOf<K, ROUGH> {
    /// Builds the map on sorted `keys` (duplicates allowed), one separator per `per_block`
    /// keys. Returns `OutOfOrder` or `InvalidKey` for bad keys, `InvalidParameter` for
    /// `per_block == 0`.
    pub fn build(keys: &[K], params: ZoneMapParams) -> Result<Self> {
        let compressed = Self::build_compressed(keys, params)?;
        let plain = ZoneMap::build(keys, params)?;
        let held = Self {
            held: Held::Leco(Box::new(compressed)),
        };
        let plain = Self {
            held: Held::Plain(plain),
        };
        Ok(if held.size_in_bytes() < plain.size_in_bytes() {
            held
        } else {
            plain
        })
    }

    /// The LeCo-compressed separators, whatever their size.
    fn build_compressed(keys: &[K], params: ZoneMapParams) -> Result<Compressed> {
        if params.per_block == 0 {
            return Err(Error::InvalidParameter {
                name: "per_block",
                value: "0".to_string(),
                expected: "at least 1 key per block",
            });
        }
        check_sorted(keys)?;
        let pb = params.per_block;
        let hi: Vec<u64> = keys.iter().step_by(pb).map(|k| k.to_model()).collect();
        let separators = if ROUGH {
            let lo: Vec<u64> = hi
                .iter()
                .enumerate()
                .map(|(b, &m)| match b {
                    0 => 0,
                    _ => {
                        let last = keys[b * pb - 1].to_model();
                        if last < m {
                            last + 1
                        } else {
                            m
                        }
                    }
                })
                .collect();
            LecoArray::build_within(&lo, &hi, LecoParams::default())?
        } else {
            LecoArray::build(&hi, LecoParams::default())?
        };
        Ok(Compressed {
            n: keys.len(),
            per_block: pb,
            separators,
        })
    }

    /// Keys per group.
    pub fn per_block(&self) -> usize {
        match &self.held {
            Held::Plain(z) => z.per_block(),
            Held::Leco(c) => c.per_block,
        }
    }

    /// True when the separators are LeCo-compressed, false when the map fell back to the plain
    /// zone map because compressing would not have made it smaller.
    pub fn is_compressed(&self) -> bool {
        matches!(self.held, Held::Leco(_))
    }

    /// The compressed separators, one per group (the minimums' model values when exact), or
    /// `None` when the map holds the plain zone map.
    pub fn separators(&self) -> Option<&LecoArray> {
        match &self.held {
            Held::Plain(_) => None,
            Held::Leco(c) => Some(&c.separators),
        }
    }

    /// Bytes held.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.held {
                Held::Plain(z) => z.size_in_bytes() - std::mem::size_of::<ZoneMap<K>>(),
                Held::Leco(c) => c.size_in_bytes(),
            }
    }
}

impl<K: Key, const ROUGH: bool> StaticIndex<K> for LecoZoneMapOf<K, ROUGH> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let c = match &self.held {
            Held::Plain(z) => return z.search(key),
            Held::Leco(c) => c,
        };
        let v = key.to_model();
        let j_lo = c.separators.lower_bound(v);
        let j_hi = if K::MODEL_INJECTIVE {
            j_lo
        } else {
            c.separators.upper_bound(v)
        };
        if j_hi == 0 {
            return ApproxPos::default();
        }
        let lo = j_lo.saturating_sub(1) * c.per_block;
        let hi = (j_hi * c.per_block).min(c.n);
        ApproxPos { pos: lo, lo, hi }
    }

    fn len(&self) -> usize {
        match &self.held {
            Held::Plain(z) => z.len(),
            Held::Leco(c) => c.n,
        }
    }

    fn size_in_bytes(&self) -> usize {
        LecoZoneMapOf::size_in_bytes(self)
    }

    fn shape(&self) -> Shape {
        match &self.held {
            Held::Plain(z) => z.shape(),
            Held::Leco(c) => Shape {
                segments: Some(c.separators.len()),
                height: Some(1),
            },
        }
    }
}

/// Encoding (kind 13 exact, 14 rough; kinds 11 and 12 were the tag-less form before the plain
/// fallback, given new numbers so that an old file is refused by kind, never misread): a `u8`
/// tag; tag 0: `n: u64, per_block: u64`, then the
/// separators as a [`LecoArray`]; tag 1: the plain [`ZoneMap`]'s encoding (kind 7). `decode`
/// checks, for tag 0, `n <= 2^62`, `1 <= per_block <= 2^62`, `ceil(n / per_block)` separators,
/// non-decreasing; for tag 1 what [`ZoneMap`]'s `decode` checks.
impl<K: Key, const ROUGH: bool> Persist<K> for LecoZoneMapOf<K, ROUGH> {
    const KIND: u32 = if ROUGH { 14 } else { 13 };

    fn encode(&self, out: &mut Encoder) {
        match &self.held {
            Held::Leco(c) => {
                out.u8(TAG_LECO);
                out.usize(c.n);
                out.usize(c.per_block);
                c.separators.encode(out);
            }
            Held::Plain(z) => {
                out.u8(TAG_PLAIN);
                z.encode(out);
            }
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let held = match input.u8()? {
            TAG_LECO => Held::Leco(Box::new(decode_compressed(input)?)),
            TAG_PLAIN => Held::Plain(ZoneMap::decode(input)?),
            tag => return Err(input.corrupt(format!("unknown zone map form {tag}"))),
        };
        Ok(LecoZoneMapOf { held })
    }

    /// `RoughLecoZoneMap` or `LecoZoneMap` when compressed, `ZoneMap(LeCo-larger)`
    /// when the map fell back to the plain zone map.
    fn name(&self) -> String {
        match (&self.held, ROUGH) {
            (Held::Leco(_), true) => "RoughLecoZoneMap".to_string(),
            (Held::Leco(_), false) => "LecoZoneMap".to_string(),
            (Held::Plain(_), _) => "ZoneMap(LeCo-larger)".to_string(),
        }
    }
}

/// Encoding tag of the LeCo-compressed form.
const TAG_LECO: u8 = 0;
/// Encoding tag of the plain zone map.
const TAG_PLAIN: u8 = 1;

fn decode_compressed(input: &mut Decoder<'_>) -> Result<Compressed> {
    let n = input.usize_at_most(MAX_LEN, "key count")?;
    let per_block = input.usize_at_most(MAX_LEN, "keys per block")?;
    if per_block == 0 {
        return Err(input.corrupt("keys per block is 0"));
    }
    let separators = LecoArray::decode(input)?;
    if separators.len() != n.div_ceil(per_block) {
        return Err(input.corrupt(format!(
            "{} separators for {n} keys in blocks of {per_block}",
            separators.len()
        )));
    }
    if !separators.is_non_decreasing() {
        return Err(input.corrupt("separators out of order"));
    }
    Ok(Compressed {
        n,
        per_block,
        separators,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The map with LeCo-compressed separators whatever their size, so the tests check the
    /// compressed search even where the builder would keep the plain zone map.
    fn compressed<const ROUGH: bool>(keys: &[u64], per_block: usize) -> LecoZoneMapOf<u64, ROUGH> {
        let c = LecoZoneMapOf::<u64, ROUGH>::build_compressed(keys, ZoneMapParams::new(per_block))
            .unwrap();
        LecoZoneMapOf {
            held: Held::Leco(Box::new(c)),
        }
    }

    /// Sorted distinct keys drawn uniformly from the whole range of `K` (seeded): irregular
    /// gaps, like S2 cell ids, where a line through a few block minimums misses the next one by
    /// most of its bits.
    fn random_keys<K: Key + Ord>(n: usize, seed: u64) -> Vec<K>
    where
        rand::distributions::Standard: rand::distributions::Distribution<K>,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut keys: Vec<K> = (0..n).map(|_| rng.gen()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Every key from below the first to above the last: windows identical to the plain zone
    /// map for the exact map, lower bounds identical for the rough one.
    fn check_against_zone_map(keys: &[u64], per_block: usize) {
        let params = ZoneMapParams::new(per_block);
        let plain = ZoneMap::build(keys, params).unwrap();
        let exact = LecoZoneMap::<u64>::build(keys, params).unwrap();
        let rough = RoughLecoZoneMap::<u64>::build(keys, params).unwrap();
        let probes = keys
            .iter()
            .flat_map(|&k| [k.saturating_sub(1), k, k.saturating_add(1)])
            .chain([0, u64::MAX]);
        let exact_leco = compressed::<false>(keys, per_block);
        let rough_leco = compressed::<true>(keys, per_block);
        for k in probes {
            let want = plain.lower_bound(keys, k);
            assert_eq!(exact.search(k), plain.search(k), "key {k}");
            assert_eq!(exact_leco.search(k), plain.search(k), "key {k}");
            assert_eq!(rough.lower_bound(keys, k), want, "key {k}");
            assert_eq!(rough_leco.lower_bound(keys, k), want, "key {k}");
            for w in [rough.search(k), rough_leco.search(k)] {
                assert!(w.width() <= per_block, "key {k}: {w:?}");
            }
        }
        assert!(exact.size_in_bytes() <= plain.size_in_bytes());
        assert!(rough.size_in_bytes() <= plain.size_in_bytes());
    }

    #[test]
    fn identical_to_the_zone_map_exhaustively() {
        let keys: Vec<u64> = (0..60u64).map(|i| i * 10 + (i % 4) * (i % 4)).collect();
        for pb in 1..=9 {
            for len in 0..keys.len() {
                let prefix = &keys[..len];
                let params = ZoneMapParams::new(pb);
                let plain = ZoneMap::build(prefix, params).unwrap();
                let rough = RoughLecoZoneMap::<u64>::build(prefix, params).unwrap();
                let exact = LecoZoneMap::<u64>::build(prefix, params).unwrap();
                let rough_leco = compressed::<true>(prefix, pb);
                let exact_leco = compressed::<false>(prefix, pb);
                for k in 0..200u64 {
                    assert_eq!(exact.search(k), plain.search(k));
                    assert_eq!(exact_leco.search(k), plain.search(k));
                    assert_eq!(
                        rough_leco.lower_bound(prefix, k),
                        plain.lower_bound(prefix, k),
                        "pb {pb} len {len} key {k}"
                    );
                    assert_eq!(
                        rough.lower_bound(prefix, k),
                        plain.lower_bound(prefix, k),
                        "pb {pb} len {len} key {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn rough_separators_compress_no_worse() {
        let mut state = 7u64;
        let mut key = 0u64;
        let keys: Vec<u64> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                key += 1 + (state >> 40);
                key
            })
            .collect();
        let params = ZoneMapParams::new(64);
        let exact = LecoZoneMap::<u64>::build(&keys, params).unwrap();
        let rough = RoughLecoZoneMap::<u64>::build(&keys, params).unwrap();
        let plain = ZoneMap::build(&keys, params).unwrap();
        assert!(exact.size_in_bytes() < plain.size_in_bytes());
        assert!(
            rough.size_in_bytes() <= exact.size_in_bytes(),
            "{} vs {}",
            rough.size_in_bytes(),
            exact.size_in_bytes()
        );
        check_against_zone_map(&keys, 64);
    }

    #[test]
    fn irregular_gaps_keep_the_plain_zone_map() {
        // 79 separators with random gaps: LeCo's widths are nearly the full 64 bits, and its
        // partition models and structure cost more than it saves (768 bytes against 672).
        let keys: Vec<u64> = random_keys(20_000, 2);
        let params = ZoneMapParams::new(255);
        let plain = ZoneMap::build(&keys, params).unwrap();
        let leco = compressed::<true>(&keys, 255);
        assert!(
            leco.size_in_bytes() > plain.size_in_bytes(),
            "LeCo should lose here: {} vs {}",
            leco.size_in_bytes(),
            plain.size_in_bytes()
        );
        let built = RoughLecoZoneMap::<u64>::build(&keys, params).unwrap();
        let mut e = Encoder::new();
        built.encode(&mut e);
        let bytes = e.into_bytes();
        let decoded = RoughLecoZoneMap::<u64>::decode(&mut Decoder::new("m", &bytes)).unwrap();
        for map in [built, decoded] {
            assert!(!map.is_compressed());
            assert!(map.separators().is_none());
            assert_eq!(map.size_in_bytes(), plain.size_in_bytes());
            assert_eq!(map.name(), "ZoneMap(LeCo-larger)");
            assert_eq!(map.per_block(), 255);
            for k in keys.iter().step_by(97) {
                assert_eq!(map.search(*k), plain.search(*k));
            }
        }
        assert!(!LecoZoneMap::<u64>::build(&keys, params)
            .unwrap()
            .is_compressed());
        check_against_zone_map(&keys, 255);

        // 4-byte keys: the plain zone map keeps 4 bytes per minimum, LeCo about as many bits.
        let keys: Vec<u32> = random_keys(20_000, 3);
        let plain = ZoneMap::build(&keys, params).unwrap();
        let rough = RoughLecoZoneMap::<u32>::build(&keys, params).unwrap();
        assert!(!rough.is_compressed());
        assert_eq!(rough.size_in_bytes(), plain.size_in_bytes());
    }

    #[test]
    fn smooth_keys_keep_the_compressed_map() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| i * 1_000 + rng.gen_range(0..1_000))
            .collect();
        let params = ZoneMapParams::new(255);
        let plain = ZoneMap::build(&keys, params).unwrap();
        let rough = RoughLecoZoneMap::<u64>::build(&keys, params).unwrap();
        let exact = LecoZoneMap::<u64>::build(&keys, params).unwrap();
        assert!(rough.is_compressed() && exact.is_compressed());
        assert_eq!(rough.name(), "RoughLecoZoneMap");
        assert_eq!(exact.name(), "LecoZoneMap");
        assert!(
            rough.size_in_bytes() * 4 < plain.size_in_bytes(),
            "{} vs {}",
            rough.size_in_bytes(),
            plain.size_in_bytes()
        );
        check_against_zone_map(&keys[..20_000], 255);
    }

    #[test]
    fn round_trip_and_corruption() {
        let keys: Vec<u64> = (0..3_000u64).map(|i| i * i).collect();
        let plain = RoughLecoZoneMap::<u64> {
            held: Held::Plain(ZoneMap::build(&keys, ZoneMapParams::new(16)).unwrap()),
        };
        let leco = compressed::<true>(&keys, 16);
        for rough in [leco, plain] {
            let mut e = Encoder::new();
            rough.encode(&mut e);
            let bytes = e.into_bytes();
            let back = RoughLecoZoneMap::<u64>::decode(&mut Decoder::new("m", &bytes)).unwrap();
            assert_eq!(back.is_compressed(), rough.is_compressed());
            for k in keys.iter().step_by(11) {
                assert_eq!(back.search(*k), rough.search(*k));
            }
            for at in 0..bytes.len() {
                let mut bad = bytes.clone();
                bad[at] ^= 0x81;
                if let Ok(b) = RoughLecoZoneMap::<u64>::decode(&mut Decoder::new("m", &bad)) {
                    for k in [0, 5_000, u64::MAX] {
                        let w = b.search(k);
                        assert!(w.lo <= w.pos && w.pos <= w.hi && w.hi <= b.len());
                    }
                }
            }
            let mut bad = bytes.clone();
            bad[0] = 2;
            assert!(matches!(
                RoughLecoZoneMap::<u64>::decode(&mut Decoder::new("m", &bad)),
                Err(Error::Corrupt { .. })
            ));
        }
    }

    proptest! {
        #[test]
        fn same_lower_bounds_as_the_zone_map(
            gaps in prop::collection::vec(prop_oneof![0..3u64, 0..1000u64, any::<u64>()], 0..400),
            per_block in 1usize..40,
        ) {
            let mut keys = Vec::with_capacity(gaps.len());
            let mut key = 0u64;
            for g in gaps {
                key = key.saturating_add(g);
                keys.push(key);
            }
            check_against_zone_map(&keys, per_block);
        }
    }
}
