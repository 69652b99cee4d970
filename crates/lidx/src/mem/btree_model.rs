//! The B+-tree read as a model (paper 000 §5.2, after Kraska et al.): the inner nodes of a
//! B+-tree over sorted data are a "learned index" whose output is a leaf, i.e. a window of
//! positions, and the leaves are the data itself. Paper 000 builds only that inner part, by
//! sampling every 256th key of the table (the key that would start each leaf) into an
//! STX-BTree (§6.1: "the leaf nodes map the key to the block offset").
//!
//! We do the same with our [`BTree`]: the key at every `every`-th position (positions `0`,
//! `every`, `2 * every`, ...) is a sample, mapped to its sample number. A query finds the first
//! sample `>= key`, number `j`; every sample before it is `< key`, so
//! `(j - 1) * every < lower_bound(key) <= j * every` and the window is
//! `[(j - 1) * every + 1, j * every]` (`[0, 0]` for `j = 0`, and up to the end of the data when
//! no sample is `>= key`): at most `every - 1` positions, the run of keys between two samples.
//!
//! Duplicates: several samples may share a key; the tree keeps each distinct sample key once,
//! with its *first* sample number, which is exactly what the argument above needs (all earlier
//! samples are smaller). The paper's tables hold distinct keys and do not say.

use std::mem::size_of;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::map::OrderedMap;
use crate::mem::btree::{BTree, BTreeParams};
use crate::mem::persist::Persist;

/// Parameters of a [`BTreeModel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BTreeModelParams {
    /// Sampling stride: one key in `every` goes into the tree. Larger strides shrink the tree
    /// (about `len / every` entries) but widen the window (at most `every - 1` positions) the
    /// last-mile search must cover. Default 256, as in paper 000 §6.1. Must be at least 1.
    pub every: usize,
    /// Node sizes of the tree over the samples.
    pub tree: BTreeParams,
}

impl Default for BTreeModelParams {
    fn default() -> Self {
        BTreeModelParams {
            every: 256,
            tree: BTreeParams::default(),
        }
    }
}

impl BTreeModelParams {
    /// Default parameters with the given sampling stride.
    pub fn with_every(every: usize) -> Self {
        BTreeModelParams {
            every,
            ..Self::default()
        }
    }
}

/// A B+-tree over every `every`-th key, used as a model. See the module docs.
pub struct BTreeModel<K: Key> {
    /// Distinct sample key -> number of its first sample.
    tree: BTree<K, usize>,
    every: usize,
    samples: usize,
    len: usize,
}

impl<K: Key> BTreeModel<K> {
    /// Builds the model over sorted `keys` (duplicates allowed).
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::InvalidKey`] (NaN), [`Error::InvalidParameter`]
    /// for `every == 0` or bad tree parameters.
    pub fn build(keys: &[K], params: BTreeModelParams) -> Result<Self> {
        if params.every == 0 {
            return Err(Error::InvalidParameter {
                name: "every",
                value: "0".into(),
                expected: "a sampling stride of at least 1, such as 256",
            });
        }
        check_sorted(keys)?;
        let every = params.every;
        let samples = keys.len().div_ceil(every);
        let firsts = (0..samples)
            .filter(|&j| j == 0 || keys[(j - 1) * every].key_lt(&keys[j * every]))
            .map(|j| (keys[j * every], j));
        Ok(BTreeModel {
            tree: BTree::bulk_load(firsts, params.tree)?,
            every,
            samples,
            len: keys.len(),
        })
    }
}

impl<K: Key> StaticIndex<K> for BTreeModel<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let j = self
            .tree
            .lower_bound(&key)
            .map_or(self.samples, |(_, &j)| j);
        if j == 0 {
            return ApproxPos::default();
        }
        let lo = (j - 1) * self.every + 1;
        let hi = (j * self.every).min(self.len);
        ApproxPos {
            pos: lo + (hi - lo) / 2,
            lo,
            hi,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        size_of::<Self>() - size_of::<BTree<K, usize>>() + self.tree.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.samples),
            height: Some(self.tree.height()),
        }
    }
}

/// Encoding (kind [`BTreeModel::KIND`]): `n: u64, every: u64, leaf_slots: u64, inner_slots: u64,
/// count: u64`, then the `count` sampled keys with their sample numbers as `(key, j: u64)`; the
/// tree is bulk-loaded again from them. `decode` checks `n <= 2^62`, `1 <= every <= 2^62`, slot
/// counts the tree accepts, that the keys are valid and strictly increasing (the tree's own
/// checks), and that the sample numbers strictly increase from 0 and stay below
/// `ceil(n / every)`, with no samples exactly when `n == 0`.
impl<K: Key> Persist<K> for BTreeModel<K> {
    const KIND: u32 = 5;

    fn encode(&self, out: &mut Encoder) {
        let (leaf_slots, inner_slots) = self.tree.slots();
        out.usize(self.len);
        out.usize(self.every);
        out.usize(leaf_slots);
        out.usize(inner_slots);
        out.usize(self.tree.len());
        for (k, &j) in self.tree.iter() {
            out.key(k);
            out.usize(j);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let len = input.usize_at_most(MAX_LEN, "key count")?;
        let every = input.usize_at_most(MAX_LEN, "sampling stride")?;
        if every == 0 {
            return Err(input.corrupt("sampling stride is 0"));
        }
        let samples = len.div_ceil(every);
        let leaf_slots = input.usize_at_most(MAX_LEN, "leaf slots")?;
        let inner_slots = input.usize_at_most(MAX_LEN, "inner slots")?;
        let count = input.count(K::SIZE + 8, "sample count")?;
        if count > samples || (count == 0) != (samples == 0) {
            return Err(input.corrupt(format!("{count} samples of {samples}")));
        }
        let mut pairs = Vec::with_capacity(count);
        for i in 0..count {
            let key: K = input.key()?;
            let j = input.usize_at_most(samples - 1, "sample number")?;
            let in_order = pairs.last().map_or(j == 0, |&(_, p)| p < j);
            if !in_order {
                return Err(input.corrupt(format!("sample number {j} out of order at {i}")));
            }
            pairs.push((key, j));
        }
        let tree = BTree::bulk_load(pairs, BTreeParams::with_slots(leaf_slots, inner_slots))
            .map_err(|e| input.corrupt(format!("sample tree: {e}")))?;
        Ok(BTreeModel {
            tree,
            every,
            samples,
            len,
        })
    }
}
