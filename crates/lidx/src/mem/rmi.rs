//! A two-layer recursive model index (RMI) with linear models and per-leaf error bounds.
//!
//! Paper 000 §2.2 describes the RMI as a hierarchy of models chosen by a user specification
//! (model types per layer, branching factor), and §6.6 uses the SOSD reference configurations
//! tuned by CDFShop; paper 001 §II-A puts it among the top-down structures that, unlike PGM,
//! do not bound their error in advance. We build the classic two-layer linear/linear RMI:
//!
//! * the **root** is a least-squares line over all CDF points, scaled so that it predicts a
//!   leaf number in `0..leaves` (the prediction is truncated and clamped);
//! * each **leaf** is a least-squares line over the CDF points the root routes to it (LSA of
//!   paper 001 §IV-A over the root's partition), and stores the smallest and largest signed
//!   error it makes on those points, measured after the fact.
//!
//! What we do differently, and why:
//!
//! * **Every key gets a correct window, present or absent, duplicates included.** The SOSD RMI
//!   only guarantees its error bound for keys in the data. Here the root's slope is never
//!   negative, so the leaf number is non-decreasing in the key and each leaf owns a contiguous
//!   key range and a contiguous rank range `[first, end)`: `first` is the rank of the first CDF
//!   point routed to this leaf or a later one, `end` the next leaf's `first` (`len` for the
//!   last). Any key routed to the leaf has its lower bound in `[first, end]`. Inside the leaf
//!   the integer prediction `p = clamp(trunc(model(x)), first, end)` is non-decreasing in `x`,
//!   so for a key between two of the leaf's points its lower bound (the right point's rank,
//!   which is at most the left point's rank plus one) lies in `[p - err_hi, p - err_lo + 1]`;
//!   below the leaf's first point the lower bound is `first`, above its last point `end`, and
//!   the clamp to `[first, end]` covers both. An empty leaf has `first == end` and answers the
//!   empty window at that rank.
//! * **Duplicates**: leaves fit [`crate::model::points::cdf_points`], whose extra point after a
//!   run of equal keys makes the argument above hold for keys just after the run.
//! * **Keys whose model map is not injective** (16-byte strings): keys sharing a model value
//!   `v` have their lower bound between the first rank of `v` and the first rank after it, so,
//!   as [`ApproxPos::for_key`] does, the window's upper end is extended to the upper end of the
//!   window for `v + 1` (or `len` when `v == u64::MAX`). That costs a second leaf access for
//!   such keys only; integer and float keys never take the branch.
//! * Predictions are integers before errors are measured, and build and lookup run the same
//!   code, so the bounds hold bit for bit (no floating-point slack needed).
//!
//! A leaf is one 48-byte record (model origin, slope, intercept, rank range, two `i32` error
//! bounds) so a lookup touches one leaf line, then the window. A leaf with more than `i32::MAX`
//! keys (only with billions of keys and a badly routing root) cannot store its errors in `i32`;
//! it is marked and answers its whole rank range, which is still correct.
//!
//! The root is linear in the key, as in the paper's configuration space; on data whose CDF is
//! far from linear over the whole key range (lognormal) most keys crowd into few leaves and the
//! windows widen. That is the RMI's known weakness (paper 000 §6.6: "struggling on ...
//! lognormal"), reported by `shape()` and window widths rather than hidden.

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::model::linear::LinearModel;
use crate::model::points::{cdf_points, CdfPoint};

/// Parameters of [`Rmi`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmiParams {
    /// Number of leaf models. More leaves cost 48 bytes each and give each leaf fewer keys, so
    /// narrower windows (faster last-mile searches) until the leaf array itself stops fitting
    /// in cache. Must be in `1..=2^30`; the index never builds more leaves than keys (an empty
    /// input gets one leaf). Default: `2^20` (48 MiB of leaves on 10^6 keys or more), sized
    /// for 10^7..10^8 keys: on 50M lognormal keys it makes lookups about 2.5x faster than a
    /// binary search, where `2^16` leaves give only 1.4x (windows average 180 vs 2000 keys).
    /// SOSD's tuned RMIs use from 2^10 to 2^24 leaves depending on the data.
    pub leaves: usize,
}

impl Default for RmiParams {
    fn default() -> Self {
        RmiParams { leaves: 1 << 20 }
    }
}

impl RmiParams {
    /// The largest accepted leaf count.
    pub const MAX_LEAVES: usize = 1 << 30;

    /// Parameters with `leaves` leaf models.
    pub fn new(leaves: usize) -> Self {
        RmiParams { leaves }
    }

    fn validate(&self) -> Result<()> {
        if self.leaves == 0 || self.leaves > Self::MAX_LEAVES {
            return Err(Error::InvalidParameter {
                name: "leaves",
                value: self.leaves.to_string(),
                expected: "a leaf count in 1..=2^30",
            });
        }
        Ok(())
    }
}

/// `err_lo` of a leaf whose errors do not fit in `i32`: search its whole rank range.
const WHOLE_LEAF: i32 = i32::MIN;

/// One leaf: a line, the rank range it owns and its measured error bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
struct Leaf {
    x0: u64,
    slope: f64,
    intercept: f64,
    first: u64,
    end: u64,
    /// Smallest `p - rank` over the leaf's points, or [`WHOLE_LEAF`].
    err_lo: i32,
    /// Largest `p - rank` over the leaf's points.
    err_hi: i32,
}

impl Leaf {
    /// The clamped integer prediction, identical at build and lookup.
    #[inline(always)]
    fn predict(&self, x: u64) -> i64 {
        let y = self.intercept + self.slope * x.saturating_sub(self.x0) as f64;
        // `as` saturates (NaN becomes 0); truncation is non-decreasing like the line itself.
        (y as i64).clamp(self.first as i64, self.end as i64)
    }

    #[inline(always)]
    fn window(&self, x: u64) -> ApproxPos {
        let (first, end) = (self.first as i64, self.end as i64);
        if self.err_lo == WHOLE_LEAF {
            return ApproxPos {
                pos: self.first as usize,
                lo: self.first as usize,
                hi: self.end as usize,
            };
        }
        let p = self.predict(x);
        let lo = (p - i64::from(self.err_hi)).clamp(first, end);
        let hi = (p - i64::from(self.err_lo) + 1).clamp(first, end);
        ApproxPos {
            pos: p.clamp(lo, hi) as usize,
            lo: lo as usize,
            hi: hi as usize,
        }
    }
}

/// The root: a line predicting a leaf number, truncated and clamped into the leaf range.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Root {
    model: LinearModel,
    last_leaf: usize,
}

impl Root {
    /// The leaf the root sends model-space key `x` to; non-decreasing in `x`.
    #[inline(always)]
    fn route(&self, x: u64) -> usize {
        (self.model.predict(x) as usize).min(self.last_leaf)
    }
}

/// A two-layer linear RMI over sorted keys it does not own. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct Rmi {
    root: Root,
    leaves: Vec<Leaf>,
    len: usize,
}

impl Rmi {
    /// Builds the RMI on sorted `keys` (duplicates allowed).
    ///
    /// Returns [`Error::InvalidParameter`] for a leaf count outside `1..=2^30`, and the errors
    /// of [`check_sorted`] for unsorted keys or NaN. Builds `min(params.leaves, keys.len())`
    /// leaves (at least one).
    pub fn build<K: Key>(keys: &[K], params: RmiParams) -> Result<Self> {
        params.validate()?;
        check_sorted(keys)?;
        let n = keys.len();
        let leaf_count = params.leaves.min(n.max(1));
        let scale = if n == 0 {
            0.0
        } else {
            leaf_count as f64 / n as f64
        };
        let root =
            LinearModel::fit_least_squares(cdf_points(keys).map(|p| (p.x, p.y as f64 * scale)));
        let root = Root {
            model: root,
            last_leaf: leaf_count - 1,
        };
        let mut leaves = Vec::with_capacity(leaf_count);
        let mut points = cdf_points(keys).peekable();
        for j in 0..leaf_count {
            let mine = |p: &CdfPoint| root.route(p.x) == j;
            let first = points.peek().map_or(n, |p| p.y) as u64;
            // The leaf's end is the next leaf's first: the rank of the first point after it.
            let end = points.clone().find(|p| !mine(p)).map_or(n, |p| p.y) as u64;
            let model = LinearModel::fit_least_squares(
                points.clone().take_while(mine).map(|p| (p.x, p.y as f64)),
            );
            let mut leaf = Leaf {
                x0: model.x0,
                slope: model.slope,
                intercept: model.intercept,
                first,
                end,
                err_lo: 0,
                err_hi: 0,
            };
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            while let Some(p) = points.next_if(mine) {
                let err = leaf.predict(p.x) - p.y as i64;
                lo = lo.min(err);
                hi = hi.max(err);
            }
            if lo > hi {
                // No points: the empty window at `first`.
                leaf.slope = 0.0;
                leaf.intercept = first as f64;
            } else {
                match (i32::try_from(lo), i32::try_from(hi)) {
                    (Ok(lo), Ok(hi)) if lo != WHOLE_LEAF => {
                        leaf.err_lo = lo;
                        leaf.err_hi = hi;
                    }
                    _ => leaf.err_lo = WHOLE_LEAF,
                }
            }
            leaves.push(leaf);
        }
        Ok(Rmi {
            root,
            leaves,
            len: n,
        })
    }

    #[inline(always)]
    fn window(&self, x: u64) -> ApproxPos {
        self.leaves[self.root.route(x)].window(x)
    }

    /// Number of leaf models.
    pub fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    /// Largest window width over all leaves (`err_hi - err_lo + 1`, or the leaf's size when
    /// that is smaller): the worst case of a lookup.
    pub fn max_window(&self) -> usize {
        self.leaves
            .iter()
            .map(|l| {
                let size = (l.end - l.first) as usize;
                if l.err_lo == WHOLE_LEAF {
                    size
                } else {
                    ((i64::from(l.err_hi) - i64::from(l.err_lo) + 1) as usize).min(size)
                }
            })
            .max()
            .unwrap_or(0)
    }
}

impl<K: Key> StaticIndex<K> for Rmi {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let v = key.to_model();
        let window = self.window(v);
        if K::MODEL_INJECTIVE {
            return window;
        }
        let hi = match v.checked_add(1) {
            Some(next) => self.window(next).hi,
            None => self.len,
        };
        ApproxPos {
            hi: window.hi.max(hi),
            ..window
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.leaves.capacity() * std::mem::size_of::<Leaf>()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.leaves.len()),
            height: Some(2),
        }
    }
}

/// Encoding (kind [`Rmi::KIND`]): `n: u64, leaves: u64`, the root as `(x0: u64, slope: f64,
/// intercept: f64)`, then every leaf as `(x0: u64, slope: f64, intercept: f64, first: u64,
/// end: u64, err_lo: i32, err_hi: i32)` (48 bytes). `decode` checks `n <= 2^62`, a leaf count
/// from 1 to `min(max(n, 1), 2^30)`, finite non-negative slopes and finite intercepts, that the
/// leaves' `[first, end)` ranges tile `[0, n)` in order, and `err_lo <= err_hi` unless the leaf
/// is marked as searched whole.
impl<K: Key> Persist<K> for Rmi {
    const KIND: u32 = 4;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.len);
        out.usize(self.leaves.len());
        let root = &self.root.model;
        out.u64(root.x0);
        out.f64(root.slope);
        out.f64(root.intercept);
        for leaf in &self.leaves {
            out.u64(leaf.x0);
            out.f64(leaf.slope);
            out.f64(leaf.intercept);
            out.u64(leaf.first);
            out.u64(leaf.end);
            out.u32(leaf.err_lo as u32);
            out.u32(leaf.err_hi as u32);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        fn line(input: &mut Decoder<'_>) -> Result<LinearModel> {
            let x0 = input.u64()?;
            let slope = input.f64_finite("slope")?;
            let intercept = input.f64_finite("intercept")?;
            if slope < 0.0 {
                return Err(input.corrupt(format!("negative slope {slope}")));
            }
            Ok(LinearModel {
                x0,
                slope,
                intercept,
            })
        }
        let n = input.usize_at_most(MAX_LEN, "key count")?;
        let count = input.usize_at_most(RmiParams::MAX_LEAVES.min(n.max(1)), "leaf count")?;
        if count == 0 {
            return Err(input.corrupt("no leaves"));
        }
        let root = Root {
            model: line(input)?,
            last_leaf: count - 1,
        };
        if count > input.remaining() / 48 {
            return Err(input.corrupt(format!("{count} leaves do not fit the bytes left")));
        }
        let mut leaves = Vec::with_capacity(count);
        let mut end = 0;
        for j in 0..count {
            let model = line(input)?;
            let first = input.u64()?;
            let leaf_end = input.u64()?;
            let err_lo = input.u32()? as i32;
            let err_hi = input.u32()? as i32;
            if first != end || leaf_end < first || leaf_end > n as u64 {
                return Err(input.corrupt(format!(
                    "leaf {j} covers [{first}, {leaf_end}) after a leaf ending at {end}"
                )));
            }
            if err_lo != WHOLE_LEAF && err_lo > err_hi {
                return Err(input.corrupt(format!("leaf {j}: error {err_lo} above {err_hi}")));
            }
            end = leaf_end;
            leaves.push(Leaf {
                x0: model.x0,
                slope: model.slope,
                intercept: model.intercept,
                first,
                end,
                err_lo,
                err_hi,
            });
        }
        if end != n as u64 {
            return Err(input.corrupt(format!("leaves cover [0, {end}) of {n} keys")));
        }
        Ok(Rmi {
            root,
            leaves,
            len: n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_small_key_gets_a_correct_window(
            mut keys in proptest::collection::vec(0u64..300, 0..200),
            leaves in 1usize..80,
        ) {
            keys.sort_unstable();
            let rmi = Rmi::build(&keys, RmiParams::new(leaves)).unwrap();
            for probe in 0..302u64 {
                let truth = keys.partition_point(|k| *k < probe);
                let w = StaticIndex::<u64>::search(&rmi, probe);
                prop_assert!(w.lo <= truth && truth <= w.hi && w.hi <= keys.len(), "{probe} {w:?}");
                prop_assert!(w.lo <= w.pos && w.pos <= w.hi);
            }
        }
    }

    #[test]
    fn leaf_record_is_48_bytes() {
        assert_eq!(std::mem::size_of::<Leaf>(), 48);
    }

    #[test]
    fn linear_data_gives_tight_windows() {
        let keys: Vec<u64> = (0..100_000).map(|i| 10 * i).collect();
        let rmi = Rmi::build(&keys, RmiParams::new(64)).unwrap();
        assert!(rmi.max_window() <= 2, "{}", rmi.max_window());
        assert_eq!(rmi.lower_bound(&keys, 55), 6);
        assert_eq!(StaticIndex::<u64>::shape(&rmi).segments, Some(64));
    }

    #[test]
    fn empty_leaves_still_answer() {
        let keys = [3u64, 9, 9, 9, 1 << 40];
        let rmi = Rmi::build(&keys, RmiParams::new(1000)).unwrap();
        assert_eq!(rmi.leaf_count(), keys.len(), "never more leaves than keys");
        assert!(rmi.leaves.iter().any(|l| l.first == l.end));
        for probe in [0, 3, 4, 8, 9, 10, 1 << 39, 1 << 40, u64::MAX] {
            let truth = keys.partition_point(|k| *k < probe);
            assert_eq!(rmi.lower_bound(&keys, probe), truth, "probe {probe}");
        }
        let ranks: Vec<u64> = rmi.leaves.iter().map(|l| l.first).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]));
        assert!(rmi.leaves.windows(2).all(|w| w[0].end == w[1].first));
    }

    #[test]
    fn bad_leaf_counts_are_refused() {
        for leaves in [0, RmiParams::MAX_LEAVES + 1] {
            assert!(matches!(
                Rmi::build(&[1u64], RmiParams::new(leaves)),
                Err(Error::InvalidParameter { name: "leaves", .. })
            ));
        }
    }

    #[test]
    fn whole_leaf_marker_answers_the_rank_range() {
        let leaf = Leaf {
            x0: 0,
            slope: 1.0,
            intercept: 0.0,
            first: 10,
            end: 20,
            err_lo: WHOLE_LEAF,
            err_hi: 0,
        };
        let w = leaf.window(5);
        assert_eq!((w.lo, w.hi), (10, 20));
    }
}
