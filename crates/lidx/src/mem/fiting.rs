//! FITing-tree (paper 001 §II-B.1, Fig. 5): greedy eps-bounded segments as leaves, a B+-tree
//! over the segments as the inner structure.
//!
//! Segments come from [`greedy_pla`] (the shrinking cone). The paper keys its B+-tree by each
//! segment's start key and looks for the last start `<=` the query; we key our [`BTree`] by the
//! largest model-space key each segment covers (the next segment's start minus one, `u64::MAX`
//! for the last), so one `lower_bound` lands directly on the covering segment. Queries below
//! the first segment's start fall to the first segment, whose model saturates there.
//!
//! The window: the segment's prediction, clamped to at most the next segment's first rank, then
//! [`ApproxPos::for_key`] with `eps`. The clamp matters for keys between a segment's last point
//! and the next segment's start: there the line may run past the segment's data, while the
//! lower bound is exactly the next segment's first rank; because consecutive CDF points without
//! duplicates differ by one rank (see [`crate::model::points`]), the clamped prediction stays
//! within `eps + 1` of it. For string keys, `for_key` also asks for the model value after the
//! key's; when that value starts the next segment, the answer is that segment's first rank.
//!
//! This is the static FITing-tree; the paper's insert buffers are not part of it.

use std::mem::size_of;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::Key;
use crate::map::OrderedMap;
use crate::mem::btree::{BTree, BTreeParams};
use crate::mem::persist::Persist;
use crate::model::greedy_pla::greedy_pla;
use crate::model::linear::LinearModel;
use crate::model::segment::Segment;

/// Parameters of a [`FitingTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitingParams {
    /// Maximum prediction error in positions. Larger eps means fewer segments (less memory, a
    /// smaller tree) but wider windows for the last-mile search (at most `2 * eps + 2`).
    /// Default 64; 0 is allowed (exact segments).
    pub eps: usize,
    /// Node sizes of the B+-tree over the segments.
    pub tree: BTreeParams,
}

impl Default for FitingParams {
    fn default() -> Self {
        FitingParams {
            eps: 64,
            tree: BTreeParams::default(),
        }
    }
}

impl FitingParams {
    /// Default parameters with the given `eps`.
    pub fn with_eps(eps: usize) -> Self {
        FitingParams {
            eps,
            ..Self::default()
        }
    }
}

/// A static FITing-tree over sorted keys it does not own. See the module docs.
pub struct FitingTree<K: Key> {
    segments: Vec<Segment>,
    /// Largest model-space key each segment covers -> segment index.
    tree: BTree<u64, u32>,
    eps: usize,
    len: usize,
    _key: std::marker::PhantomData<fn() -> K>,
}

impl<K: Key> FitingTree<K> {
    /// Builds the index over sorted `keys` (duplicates allowed).
    ///
    /// Errors: [`crate::Error::OutOfOrder`], [`crate::Error::InvalidKey`] (NaN),
    /// [`crate::Error::InvalidParameter`] for bad tree parameters or more than `u32::MAX`
    /// segments.
    pub fn build(keys: &[K], params: FitingParams) -> Result<Self> {
        let segments = greedy_pla(keys, params.eps)?;
        if segments.len() > u32::MAX as usize {
            return Err(crate::Error::InvalidParameter {
                name: "eps",
                value: params.eps.to_string(),
                expected: "an eps large enough for at most 2^32 - 1 segments",
            });
        }
        let ends = segments.iter().enumerate().map(|(i, _)| {
            let end = segments.get(i + 1).map_or(u64::MAX, |s| s.first_key - 1);
            (end, i as u32)
        });
        let tree = BTree::bulk_load(ends, params.tree)?;
        Ok(FitingTree {
            segments,
            tree,
            eps: params.eps,
            len: keys.len(),
            _key: std::marker::PhantomData,
        })
    }

    /// The segments, in key order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }
}

impl<K: Key> StaticIndex<K> for FitingTree<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let Some((_, &i)) = self.tree.lower_bound(&key.to_model()) else {
            return ApproxPos::default();
        };
        let i = i as usize;
        let seg = &self.segments[i];
        let (next_key, next_rank) = self
            .segments
            .get(i + 1)
            .map_or((None, self.len), |s| (Some(s.first_key), s.first_rank));
        let next_rank_f = next_rank as f64;
        ApproxPos::for_key(key, self.eps, self.len, |x| {
            if next_key.is_some_and(|n| x >= n) {
                next_rank_f
            } else {
                seg.model.predict(x).min(next_rank_f)
            }
        })
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        size_of::<Self>() - size_of::<BTree<u64, u32>>()
            + self.segments.capacity() * Segment::BYTES
            + self.tree.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.segments.len()),
            height: Some(self.tree.height() + 1),
        }
    }
}

/// Encoding (kind [`FitingTree::KIND`]): `n: u64, eps: u64, leaf_slots: u64, inner_slots: u64,
/// count: u64`, then every segment as `(first_key: u64, first_rank: u64, slope: f64,
/// intercept: f64)` (the model's origin is the first key); the tree over the segments' last keys
/// is bulk-loaded again from them. `decode` checks `n <= 2^62`, `eps <= 2^62`, slot counts the
/// tree accepts, segments exactly when `n > 0` (fewer than 2^32), strictly increasing first
/// keys, first ranks from 0, non-decreasing and at most `n`, finite non-negative slopes and
/// finite intercepts.
impl<K: Key> Persist<K> for FitingTree<K> {
    const KIND: u32 = 6;

    fn encode(&self, out: &mut Encoder) {
        let (leaf_slots, inner_slots) = self.tree.slots();
        out.usize(self.len);
        out.usize(self.eps);
        out.usize(leaf_slots);
        out.usize(inner_slots);
        out.usize(self.segments.len());
        for s in &self.segments {
            out.u64(s.first_key);
            out.usize(s.first_rank);
            out.f64(s.model.slope);
            out.f64(s.model.intercept);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let len = input.usize_at_most(MAX_LEN, "key count")?;
        let eps = input.usize_at_most(MAX_LEN, "eps")?;
        let leaf_slots = input.usize_at_most(MAX_LEN, "leaf slots")?;
        let inner_slots = input.usize_at_most(MAX_LEN, "inner slots")?;
        let count = input.count(32, "segment count")?;
        if (count == 0) != (len == 0) || count > u32::MAX as usize {
            return Err(input.corrupt(format!("{count} segments over {len} keys")));
        }
        let mut segments: Vec<Segment> = Vec::with_capacity(count);
        for i in 0..count {
            let first_key = input.u64()?;
            let first_rank = input.usize_at_most(len, "segment's first rank")?;
            let slope = input.f64_finite("slope")?;
            let intercept = input.f64_finite("intercept")?;
            let in_order = segments.last().map_or(first_rank == 0, |p| {
                p.first_key < first_key && p.first_rank <= first_rank
            });
            if !in_order || slope < 0.0 {
                return Err(input.corrupt(format!("segment {i} out of order or decreasing")));
            }
            segments.push(Segment {
                first_key,
                first_rank,
                model: LinearModel {
                    x0: first_key,
                    slope,
                    intercept,
                },
            });
        }
        let ends = (0..count).map(|i| {
            let end = segments.get(i + 1).map_or(u64::MAX, |s| s.first_key - 1);
            (end, i as u32)
        });
        let tree = BTree::bulk_load(ends, BTreeParams::with_slots(leaf_slots, inner_slots))
            .map_err(|e| input.corrupt(format!("segment tree: {e}")))?;
        Ok(FitingTree {
            segments,
            tree,
            eps,
            len,
            _key: std::marker::PhantomData,
        })
    }
}
