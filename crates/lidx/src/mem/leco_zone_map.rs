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
//! [`ZoneMap`]: crate::mem::zone_map::ZoneMap
//! [`ZoneMap::search`]: crate::mem::zone_map::ZoneMap

use std::marker::PhantomData;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::mem::zone_map::ZoneMapParams;
use crate::model::leco::{LecoArray, LecoParams};

/// A zone map whose separators are LeCo-compressed; exact ([`LecoZoneMap`], paper 002's
/// "LeCo-based zone map") or rough ([`RoughLecoZoneMap`], its `LeCo-Zonemap-D`).
#[derive(Debug, Clone)]
pub struct LecoZoneMapOf<K, const ROUGH: bool> {
    n: usize,
    per_block: usize,
    separators: LecoArray,
    _key: PhantomData<fn() -> K>,
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
        Ok(LecoZoneMapOf {
            n: keys.len(),
            per_block: pb,
            separators,
            _key: PhantomData,
        })
    }

    /// Keys per group.
    pub fn per_block(&self) -> usize {
        self.per_block
    }

    /// The separators, one per group (the minimums' model values when exact).
    pub fn separators(&self) -> &LecoArray {
        &self.separators
    }

    /// Bytes held.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<LecoArray>()
            + self.separators.size_in_bytes()
    }
}

impl<K: Key, const ROUGH: bool> StaticIndex<K> for LecoZoneMapOf<K, ROUGH> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let v = key.to_model();
        let j_lo = self.separators.lower_bound(v);
        let j_hi = if K::MODEL_INJECTIVE {
            j_lo
        } else {
            self.separators.upper_bound(v)
        };
        if j_hi == 0 {
            return ApproxPos::default();
        }
        let lo = j_lo.saturating_sub(1) * self.per_block;
        let hi = (j_hi * self.per_block).min(self.n);
        ApproxPos { pos: lo, lo, hi }
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        LecoZoneMapOf::size_in_bytes(self)
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.separators.len()),
            height: Some(1),
        }
    }
}

/// Encoding (kind 11 exact, 12 rough): `n: u64, per_block: u64`, then the separators as a
/// [`LecoArray`]. `decode` checks `n <= 2^62`, `1 <= per_block <= 2^62`, `ceil(n / per_block)`
/// separators, non-decreasing.
impl<K: Key, const ROUGH: bool> Persist<K> for LecoZoneMapOf<K, ROUGH> {
    const KIND: u32 = if ROUGH { 12 } else { 11 };

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.per_block);
        self.separators.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
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
        Ok(LecoZoneMapOf {
            n,
            per_block,
            separators,
            _key: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::zone_map::ZoneMap;
    use proptest::prelude::*;

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
        for k in probes {
            let want = plain.lower_bound(keys, k);
            assert_eq!(exact.search(k), plain.search(k), "key {k}");
            assert_eq!(rough.lower_bound(keys, k), want, "key {k}");
            let w = rough.search(k);
            assert!(w.width() <= per_block, "key {k}: {w:?}");
        }
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
                for k in 0..200u64 {
                    assert_eq!(exact.search(k), plain.search(k));
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
    fn round_trip_and_corruption() {
        let keys: Vec<u64> = (0..3_000u64).map(|i| i * i).collect();
        let rough = RoughLecoZoneMap::<u64>::build(&keys, ZoneMapParams::new(16)).unwrap();
        let mut e = Encoder::new();
        rough.encode(&mut e);
        let bytes = e.into_bytes();
        let back = RoughLecoZoneMap::<u64>::decode(&mut Decoder::new("m", &bytes)).unwrap();
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
