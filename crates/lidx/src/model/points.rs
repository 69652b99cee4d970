//! The points of the empirical CDF a model must fit, with duplicates handled once, here.
//!
//! For each distinct model value `v` whose keys occupy ranks `[a, b)` we emit `(v, a)`: a
//! present key's lower bound is its first occurrence. When `b - a > 1` (duplicates, or distinct
//! strings sharing a model value) we also emit `(v + 1, b)`, unless the next distinct value is
//! `v + 1` itself (which then carries rank `b`) or `v == u64::MAX`. An eps-bounded fit of these
//! points predicts within eps of `b` for every key above `v` and below the next value, so the
//! windows of [`crate::ApproxPos::from_prediction`] stay correct for absent keys even right after
//! a long run of duplicates. Without duplicates the stream is exactly `(key_i, i)`.
//!
//! PGM's own code (paper 001 §IV-A's Opt-PLA) only documents behaviour for distinct keys; this
//! is our extension, and it costs one extra point per duplicated value.

use crate::key::Key;

/// A CDF point: model-space key and rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CdfPoint {
    /// Model-space key (`Key::to_model`).
    pub x: u64,
    /// Rank (position) the model should predict for `x`.
    pub y: usize,
}

/// The CDF points of sorted `keys`, as described in the module docs.
pub fn cdf_points<K: Key>(keys: &[K]) -> CdfPoints<'_, K> {
    CdfPoints {
        keys,
        next: 0,
        pending: None,
    }
}

/// Iterator returned by [`cdf_points`].
#[derive(Debug, Clone)]
pub struct CdfPoints<'a, K> {
    keys: &'a [K],
    next: usize,
    pending: Option<CdfPoint>,
}

impl<K: Key> Iterator for CdfPoints<'_, K> {
    type Item = CdfPoint;

    #[inline]
    fn next(&mut self) -> Option<CdfPoint> {
        if let Some(p) = self.pending.take() {
            return Some(p);
        }
        let a = self.next;
        let v = self.keys.get(a)?.to_model();
        let mut b = a + 1;
        while b < self.keys.len() && self.keys[b].to_model() == v {
            b += 1;
        }
        self.next = b;
        if b - a > 1 && v != u64::MAX {
            let next_is_successor = self.keys.get(b).is_some_and(|k| k.to_model() == v + 1);
            if !next_is_successor {
                self.pending = Some(CdfPoint { x: v + 1, y: b });
            }
        }
        Some(CdfPoint { x: v, y: a })
    }
}

/// Points with ranks far beyond any test array, for properties that must hold for huge ranks:
/// `x` and `y` advance by the given `(dx, dy)` gaps from `(gaps[0].0, base)`, stopping at
/// `u64::MAX`.
#[cfg(test)]
pub(crate) fn huge_rank_points(gaps: &[(u64, usize)], base: usize) -> Vec<CdfPoint> {
    let mut points = Vec::new();
    let (mut x, mut y) = (gaps[0].0, base);
    for &(dx, dy) in gaps {
        points.push(CdfPoint { x, y });
        x = x.saturating_add(dx);
        y += dy;
        if x == u64::MAX {
            break;
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(keys: &[u64]) -> Vec<(u64, usize)> {
        cdf_points(keys).map(|p| (p.x, p.y)).collect()
    }

    #[test]
    fn distinct_keys_are_rank_points() {
        assert_eq!(pts(&[3, 7, 9]), vec![(3, 0), (7, 1), (9, 2)]);
        assert_eq!(pts(&[]), vec![]);
    }

    #[test]
    fn duplicates_add_a_successor_point() {
        assert_eq!(pts(&[3, 3, 3, 9]), vec![(3, 0), (4, 3), (9, 3)]);
        assert_eq!(pts(&[3, 3, 4]), vec![(3, 0), (4, 2)]);
        assert_eq!(pts(&[5, 5]), vec![(5, 0), (6, 2)]);
        assert_eq!(pts(&[u64::MAX, u64::MAX]), vec![(u64::MAX, 0)]);
    }

    #[test]
    fn strings_sharing_a_prefix_are_one_model_value() {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        a[15] = 1;
        b[15] = 2;
        assert_eq!(
            cdf_points(&[a, b]).collect::<Vec<_>>(),
            vec![CdfPoint { x: 0, y: 0 }, CdfPoint { x: 1, y: 2 }]
        );
    }
}
