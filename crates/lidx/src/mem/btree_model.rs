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

use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::map::OrderedMap;
use crate::mem::btree::{BTree, BTreeParams};

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
