//! LSA: least-squares lines over fixed-size partitions of the CDF.
//!
//! Paper 001 §IV-A ("LSA", as used by XIndex) divides the stored data into fixed segments and
//! fits each with an ordinary least-squares line. Unlike Opt-PLA the user does not choose a
//! maximum error: the partition size is the knob, and the error is whatever the data gives.
//! §IV-A's point is exactly that this error is unbounded in advance (hence LSA's tail latency),
//! so every [`LsaSegment`] reports the maximum error it *measured* on its own points; an index
//! built on LSA reads its window width from there.
//!
//! What we do differently: the partitions are runs of `partition_size` consecutive CDF points
//! of [`crate::model::points`] rather than of raw keys. Without duplicates that is the same
//! thing; with duplicates it keeps every run of equal keys inside one partition (so segments
//! have strictly increasing `first_key`s, as [`Segment`] requires) and carries the extra
//! successor point that keeps windows right for absent keys after a run.
//!
//! The measured `max_error` covers the segment's own points. Absent keys that fall between a
//! segment's last point and the next segment's first key are predicted by extrapolation; an
//! index must clamp such predictions to the next segment's first rank (as the RMI in
//! [`crate::mem::rmi`] clamps to its leaf's rank range).

use crate::error::{Error, Result};
use crate::key::{check_sorted, Key};
use crate::model::linear::LinearModel;
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::segment::Segment;

/// One LSA partition: its line and the error measured on its points.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LsaSegment {
    /// The segment: first model-space key, first rank and the least-squares line.
    pub segment: Segment,
    /// Number of CDF points in the partition (`partition_size`, except for the last one).
    pub points: usize,
    /// `ceil(max |model.predict(x) - y|)` over the partition's points.
    pub max_error: usize,
}

/// Splits the CDF points of sorted `keys` into runs of `partition_size` points and fits each
/// with least squares (paper 001 §IV-A "LSA").
///
/// Smaller partitions mean more segments (more memory, a bigger upper structure) and smaller
/// measured errors (narrower windows). Returns [`Error::InvalidParameter`] when
/// `partition_size` is zero, and the errors of [`check_sorted`] for unsorted keys or NaN.
pub fn lsa<K: Key>(keys: &[K], partition_size: usize) -> Result<Vec<LsaSegment>> {
    if partition_size == 0 {
        return Err(Error::InvalidParameter {
            name: "partition_size",
            value: "0".into(),
            expected: "at least 1 CDF point per partition",
        });
    }
    check_sorted(keys)?;
    let mut out = Vec::new();
    let mut buf: Vec<CdfPoint> = Vec::with_capacity(partition_size.min(keys.len() + 1));
    let mut points = cdf_points(keys);
    loop {
        buf.clear();
        buf.extend(points.by_ref().take(partition_size));
        let Some(first) = buf.first().copied() else {
            break;
        };
        let model = LinearModel::fit_least_squares(buf.iter().map(|p| (p.x, p.y as f64)));
        let worst = buf
            .iter()
            .map(|p| (model.predict(p.x) - p.y as f64).abs())
            .fold(0.0f64, f64::max);
        out.push(LsaSegment {
            segment: Segment {
                first_key: first.x,
                first_rank: first.y,
                model,
            },
            points: buf.len(),
            max_error: worst.ceil() as usize,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_lines_have_zero_error() {
        let keys: Vec<u64> = (0..1000).map(|i| 7 * i + 3).collect();
        let segs = lsa(&keys, 100).unwrap();
        assert_eq!(segs.len(), 10);
        for (i, s) in segs.iter().enumerate() {
            assert_eq!(s.points, 100);
            assert_eq!(s.segment.first_rank, 100 * i);
            assert_eq!(s.segment.first_key, keys[100 * i]);
            assert_eq!(s.max_error, 0);
        }
    }

    #[test]
    fn last_partition_is_short_and_empty_input_gives_nothing() {
        let keys: Vec<u32> = (0..25).collect();
        let segs = lsa(&keys, 10).unwrap();
        assert_eq!(
            segs.iter().map(|s| s.points).collect::<Vec<_>>(),
            [10, 10, 5]
        );
        assert!(lsa::<u64>(&[], 10).unwrap().is_empty());
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(
            lsa(&[1u64, 2], 0),
            Err(Error::InvalidParameter {
                name: "partition_size",
                ..
            })
        ));
        assert!(matches!(
            lsa(&[3u64, 2], 4),
            Err(Error::OutOfOrder { index: 1, .. })
        ));
    }

    #[test]
    fn error_is_measured_not_bounded() {
        // A step: 50 keys packed at the bottom, 50 far above. One line cannot follow it.
        let keys: Vec<u64> = (0..50).chain((0..50).map(|i| 1_000_000 + i)).collect();
        let segs = lsa(&keys, 100).unwrap();
        assert_eq!(segs.len(), 1);
        assert!(segs[0].max_error >= 20, "{segs:?}");
        let finer = lsa(&keys, 50).unwrap();
        assert!(finer.iter().all(|s| s.max_error == 0), "{finer:?}");
    }

    #[test]
    fn duplicate_runs_stay_in_one_partition() {
        let keys = [5u64, 5, 5, 5, 9, 10, 11];
        let segs = lsa(&keys, 2).unwrap();
        // Points: (5,0) (6,4) | (9,4) (10,5) | (11,6)
        let firsts: Vec<(u64, usize)> = segs
            .iter()
            .map(|s| (s.segment.first_key, s.segment.first_rank))
            .collect();
        assert_eq!(firsts, [(5, 0), (9, 4), (11, 6)]);
    }

    proptest! {
        #[test]
        fn measured_error_covers_every_point(
            mut keys in proptest::collection::vec(0u64..10_000, 1..400),
            size in 1usize..64,
        ) {
            keys.sort_unstable();
            let segs = lsa(&keys, size).unwrap();
            let points: Vec<CdfPoint> = cdf_points(&keys).collect();
            prop_assert_eq!(segs.iter().map(|s| s.points).sum::<usize>(), points.len());
            let mut at = 0;
            for s in &segs {
                for p in &points[at..at + s.points] {
                    let err = (s.segment.model.predict(p.x) - p.y as f64).abs();
                    prop_assert!(err <= s.max_error as f64);
                }
                at += s.points;
            }
            for pair in segs.windows(2) {
                prop_assert!(pair[0].segment.first_key < pair[1].segment.first_key);
            }
        }
    }
}
