//! Sets of key ranges: what the key predicates a scan takes over come to, before the scan
//! seeks them (`pushdown` makes them from DataFusion's expressions).
//!
//! A range is half-open, `[lo, hi)` with `hi = None` for "no upper end", as everywhere in lidx.
//! A set is sorted and its ranges are disjoint and never touch, so that the seeks a scan makes
//! for it go forward only (the INLJ cursor's contract, paper 000 §4.1 optimization 2) and no
//! record is read twice. Every key type here is discrete with a least key and a successor,
//! which turns `<=` and `>` into half-open bounds exactly: `u64` (`+ 1`), a table's 16-byte
//! string key (`+ 1` as a 128-bit big-endian integer) and a store's byte strings (`s` followed
//! by a zero byte is the least string after `s`).

/// A key type ranges are made of: ordered, with a least key and a successor.
pub(crate) trait Domain: Ord + Clone {
    /// The least key.
    fn least() -> Self;
    /// The least key greater than `self`, `None` for the greatest.
    fn successor(&self) -> Option<Self>;
}

impl Domain for u64 {
    fn least() -> Self {
        0
    }
    fn successor(&self) -> Option<Self> {
        self.checked_add(1)
    }
}

/// Table keys widened to one type (`crate::table_source::SourceKey::wide`), as a table's
/// ranges travel from planning to the read that seeks them.
impl Domain for u128 {
    fn least() -> Self {
        0
    }
    fn successor(&self) -> Option<Self> {
        self.checked_add(1)
    }
}

impl Domain for [u8; 16] {
    fn least() -> Self {
        [0; 16]
    }
    fn successor(&self) -> Option<Self> {
        u128::from_be_bytes(*self)
            .checked_add(1)
            .map(u128::to_be_bytes)
    }
}

impl Domain for Vec<u8> {
    fn least() -> Self {
        Vec::new()
    }
    fn successor(&self) -> Option<Self> {
        let mut next = self.clone();
        next.push(0);
        Some(next)
    }
}

/// The keys `lo <= key < hi` (`hi = None`: no upper end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRange<K> {
    pub(crate) lo: K,
    pub(crate) hi: Option<K>,
}

impl<K: Domain> KeyRange<K> {
    /// True when `key` is in the range.
    pub(crate) fn contains(&self, key: &K) -> bool {
        *key >= self.lo && self.hi.as_ref().is_none_or(|hi| key < hi)
    }

    fn is_empty(&self) -> bool {
        self.hi.as_ref().is_some_and(|hi| *hi <= self.lo)
    }
}

/// A comparison of the key with a value, `key <op> value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl Cmp {
    /// The comparison with its sides swapped: `v < key` is `key > v`.
    pub(crate) fn flip(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Eq,
            Cmp::Lt => Cmp::Gt,
            Cmp::LtEq => Cmp::GtEq,
            Cmp::Gt => Cmp::Lt,
            Cmp::GtEq => Cmp::LtEq,
        }
    }
}

/// A sorted set of disjoint, non-touching key ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRanges<K>(Vec<KeyRange<K>>);

impl<K: Domain> KeyRanges<K> {
    /// Every key.
    pub(crate) fn all() -> Self {
        KeyRanges(vec![KeyRange {
            lo: K::least(),
            hi: None,
        }])
    }

    /// No key.
    pub(crate) fn none() -> Self {
        KeyRanges(Vec::new())
    }

    /// The keys `key <op> value`.
    pub(crate) fn compare(op: Cmp, value: K) -> Self {
        let range = |lo: K, hi: Option<K>| KeyRanges::of(vec![KeyRange { lo, hi }]);
        match op {
            Cmp::Eq => {
                let next = value.successor();
                range(value, next)
            }
            Cmp::GtEq => range(value, None),
            Cmp::Gt => match value.successor() {
                Some(next) => range(next, None),
                None => KeyRanges::none(),
            },
            Cmp::Lt => range(K::least(), Some(value)),
            Cmp::LtEq => range(K::least(), value.successor()),
        }
    }

    /// The set of the keys in any of `ranges`, in any order, possibly overlapping or empty.
    pub(crate) fn of(mut ranges: Vec<KeyRange<K>>) -> Self {
        ranges.retain(|r| !r.is_empty());
        ranges.sort_by(|a, b| a.lo.cmp(&b.lo));
        let mut out: Vec<KeyRange<K>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match out.last_mut() {
                // Overlapping or touching the last range: extend it.
                Some(last) if last.hi.as_ref().is_none_or(|hi| r.lo <= *hi) => {
                    last.hi = match (last.hi.take(), r.hi) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                _ => out.push(r),
            }
        }
        KeyRanges(out)
    }

    /// The keys in `self` or in `other`.
    pub(crate) fn union(self, other: Self) -> Self {
        let mut all = self.0;
        all.extend(other.0);
        KeyRanges::of(all)
    }

    /// The keys in both `self` and `other`.
    pub(crate) fn intersect(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (&self.0[i], &other.0[j]);
            let lo = a.lo.clone().max(b.lo.clone());
            let hi = match (&a.hi, &b.hi) {
                (Some(x), Some(y)) => Some(x.clone().min(y.clone())),
                (Some(x), None) => Some(x.clone()),
                (None, y) => y.clone(),
            };
            out.push(KeyRange { lo, hi });
            // Advance the range that ends first (an open end ends last).
            let a_first = match (&a.hi, &b.hi) {
                (Some(x), Some(y)) => x <= y,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if a_first {
                i += 1;
            } else {
                j += 1;
            }
        }
        KeyRanges::of(out)
    }

    /// The ranges, ascending.
    pub(crate) fn ranges(&self) -> &[KeyRange<K>] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ranges: &[(u64, Option<u64>)]) -> KeyRanges<u64> {
        KeyRanges::of(ranges.iter().map(|&(lo, hi)| KeyRange { lo, hi }).collect())
    }

    /// Every key of `0..64` (and `u64::MAX`) in the set, to compare sets by their members.
    fn members(s: &KeyRanges<u64>) -> Vec<u64> {
        (0..64)
            .chain([u64::MAX])
            .filter(|k| s.ranges().iter().any(|r| r.contains(k)))
            .collect()
    }

    #[test]
    fn comparisons_are_exact_at_the_ends_of_the_domain() {
        assert_eq!(
            members(&KeyRanges::compare(Cmp::Gt, u64::MAX)),
            Vec::<u64>::new()
        );
        assert_eq!(members(&KeyRanges::compare(Cmp::LtEq, u64::MAX)).len(), 65);
        assert_eq!(members(&KeyRanges::compare(Cmp::Lt, 0)), Vec::<u64>::new());
        assert_eq!(
            members(&KeyRanges::compare(Cmp::Eq, u64::MAX)),
            vec![u64::MAX]
        );
        assert_eq!(members(&KeyRanges::compare(Cmp::LtEq, 3)), vec![0, 1, 2, 3]);
        assert_eq!(
            members(&KeyRanges::compare(Cmp::Gt, 61)),
            vec![62, 63, u64::MAX]
        );
        let top = [u8::MAX; 16];
        assert_eq!(KeyRanges::compare(Cmp::Gt, top), KeyRanges::none());
        assert_eq!(KeyRanges::compare(Cmp::LtEq, top), KeyRanges::all());
    }

    #[test]
    fn union_and_intersection_agree_with_sets_of_members() {
        let a = set(&[(5, Some(10)), (1, Some(3)), (9, Some(20)), (30, None)]);
        assert_eq!(a, set(&[(1, Some(3)), (5, Some(20)), (30, None)]));
        let b = set(&[(0, Some(6)), (12, Some(13)), (19, Some(31)), (40, Some(41))]);
        let both: Vec<u64> = members(&a)
            .into_iter()
            .filter(|k| members(&b).contains(k))
            .collect();
        assert_eq!(members(&a.intersect(&b)), both);
        let mut either = members(&a);
        either.extend(members(&b));
        either.sort_unstable();
        either.dedup();
        assert_eq!(members(&a.clone().union(b)), either);
        // Touching ranges become one, so no record is read twice.
        assert_eq!(set(&[(1, Some(3)), (3, Some(4))]), set(&[(1, Some(4))]));
        assert_eq!(a.intersect(&KeyRanges::none()), KeyRanges::none());
        assert_eq!(a.intersect(&KeyRanges::all()), a);
    }
}
