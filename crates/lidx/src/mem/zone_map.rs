//! Zone map: the minimum key of every block of keys, binary-searched. The baseline a disk-resident
//! learned index is compared with.
//!
//! Paper 002 §3 (the "zone map" / fence-pointer baseline of the disk experiments) and paper 003
//! §6.2 keep, per data block, the smallest key it holds and find a key's block by a binary search
//! over those minimums; the block is then read and searched. We keep the minimum of every group of
//! `per_block` consecutive keys (the number of records a disk block holds) and answer
//! [`StaticIndex::search`] with the group that can hold the lower bound:
//!
//! * `j` = number of group minimums `< key` (a branchless binary search over the minimums);
//! * group `j` (if any) starts with a key `>= key`, so `lower_bound(key) <= j * per_block`;
//! * group `j - 1` starts with a key `< key`, so `lower_bound(key) > (j - 1) * per_block`.
//!
//! The window is therefore `[(j - 1) * per_block, min(j * per_block, len))`: group `j - 1`, whose
//! `hi` may equal the start of group `j` (the lower bound is then group `j`'s first key). A key
//! at or below the first minimum gets the empty window `[0, 0)`. This holds with duplicates
//! (equal keys spanning groups: the first occurrence is in the earliest group whose successor
//! starts at or above the key) and for every key type, strings included, since the minimums are
//! the keys themselves rather than model-space values. A window is at most `per_block` wide.
//!
//! What we do differently: nothing is learned, so nothing is approximated; the only parameter is
//! the group size, which a disk index sets to its records per block.

use std::cmp::Ordering;

use crate::codec::{Decoder, Encoder};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::search;

/// Parameters of a [`ZoneMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneMapParams {
    /// Keys per group (per disk block), at least 1. Larger means fewer minimums to keep and
    /// search (less memory) but a wider window (a longer last-mile search, or a bigger block).
    pub per_block: usize,
}

impl Default for ZoneMapParams {
    /// 255: the 16-byte key + payload records (8-byte key, 8-byte payload) a 4 KiB block holds
    /// once its 4-byte checksum trailer is taken out.
    fn default() -> Self {
        ZoneMapParams { per_block: 255 }
    }
}

impl ZoneMapParams {
    /// Groups of `per_block` keys.
    pub fn new(per_block: usize) -> Self {
        ZoneMapParams { per_block }
    }

    fn validate(&self) -> Result<()> {
        if self.per_block == 0 {
            return Err(Error::InvalidParameter {
                name: "per_block",
                value: "0".to_string(),
                expected: "at least 1 key per block",
            });
        }
        Ok(())
    }
}

/// The minimum key of every group of `per_block` consecutive keys (see the module docs).
#[derive(Debug, Clone)]
pub struct ZoneMap<K> {
    n: usize,
    per_block: usize,
    /// `mins[g] = keys[g * per_block]`.
    mins: Vec<K>,
}

impl<K: Key> ZoneMap<K> {
    /// Builds the zone map on sorted `keys` (duplicates allowed). Returns `OutOfOrder` or
    /// `InvalidKey` for bad keys, `InvalidParameter` for `per_block == 0`.
    pub fn build(keys: &[K], params: ZoneMapParams) -> Result<Self> {
        params.validate()?;
        check_sorted(keys)?;
        Ok(ZoneMap {
            n: keys.len(),
            per_block: params.per_block,
            mins: keys.iter().step_by(params.per_block).copied().collect(),
        })
    }

    /// Keys per group.
    pub fn per_block(&self) -> usize {
        self.per_block
    }

    /// The minimum key of every group, in order.
    pub fn mins(&self) -> &[K] {
        &self.mins
    }

    /// Bytes of the structure and its minimums.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.mins.capacity() * std::mem::size_of::<K>()
    }
}

impl<K: Key> StaticIndex<K> for ZoneMap<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let j = search::branchless_lower_bound(&self.mins, key);
        if j == 0 {
            return ApproxPos::default();
        }
        let lo = (j - 1) * self.per_block;
        let hi = j.saturating_mul(self.per_block).min(self.n);
        ApproxPos { pos: lo, lo, hi }
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        ZoneMap::size_in_bytes(self)
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.mins.len()),
            height: Some(1),
        }
    }
}

/// Encoding (kind [`ZoneMap::KIND`]): `n: u64, per_block: u64, count: u64, count keys`.
/// `decode` checks `per_block >= 1`, `count == ceil(n / per_block)` and that the minimums are
/// valid keys in non-decreasing order.
impl<K: Key> Persist<K> for ZoneMap<K> {
    const KIND: u32 = 7;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.per_block);
        out.usize(self.mins.len());
        for k in &self.mins {
            out.key(k);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let n = input.usize_at_most(usize::MAX, "key count")?;
        let per_block = input.usize_at_most(usize::MAX, "keys per block")?;
        if per_block == 0 {
            return Err(input.corrupt("keys per block is 0"));
        }
        let count = input.count(K::SIZE, "block count")?;
        if count != n.div_ceil(per_block) {
            return Err(input.corrupt(format!(
                "{count} block minimums for {n} keys in blocks of {per_block}"
            )));
        }
        let mut mins = Vec::with_capacity(count);
        for _ in 0..count {
            let k: K = input.key()?;
            if let Some(why) = k.invalid_reason() {
                return Err(input.corrupt(format!("invalid block minimum: {why}")));
            }
            if mins
                .last()
                .is_some_and(|p: &K| p.key_cmp(&k) == Ordering::Greater)
            {
                return Err(input.corrupt("block minimums out of order"));
            }
            mins.push(k);
        }
        Ok(ZoneMap { n, per_block, mins })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_one_group() {
        let keys: Vec<u64> = (0..100u64).map(|i| i * 10).collect();
        let zm = ZoneMap::build(&keys, ZoneMapParams::new(8)).unwrap();
        assert_eq!(zm.mins().len(), 13);
        assert_eq!(zm.search(0), ApproxPos::default());
        let w = zm.search(85);
        assert_eq!((w.lo, w.hi), (8, 16));
        let w = zm.search(80);
        assert_eq!(
            (w.lo, w.hi),
            (0, 8),
            "the lower bound may be the next group's start"
        );
        let w = zm.search(5_000);
        assert_eq!((w.lo, w.hi), (96, 100));
    }

    #[test]
    fn zero_per_block_is_refused() {
        let err = ZoneMap::build(&[1u64], ZoneMapParams::new(0)).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameter {
                name: "per_block",
                ..
            }
        ));
    }
}
