//! ART and START as static indexes over sorted keys they do not own (the `art`/`start`
//! benchmark entries), like [`crate::mem::BTreeIndex`] for the B+-tree.
//!
//! Each distinct key maps to the position of its first occurrence. [`StaticIndex::search`]
//! answers an exact window (`lo == pos == hi`): a present key by `get` (the lookup the paper's
//! SOSD measurements time, §VI-A), an absent one by `lower_bound`.

use super::tree::{Start, StartParams};
use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::check_sorted;
use crate::map::OrderedMap;
use crate::mem::art::{Art, ArtKey};

/// A radix-tree map from distinct key to first position, used as a static index.
pub struct RadixIndex<M> {
    map: M,
    len: usize,
}

/// The distinct keys of sorted `keys` with their first positions.
fn firsts<K: ArtKey>(keys: &[K]) -> impl Iterator<Item = (K, usize)> + '_ {
    (0..keys.len())
        .filter(|&i| i == 0 || keys[i - 1].key_lt(&keys[i]))
        .map(|i| (keys[i], i))
}

impl<K: ArtKey> RadixIndex<Art<K, usize>> {
    /// An ART over sorted `keys` (duplicates allowed). Errors as [`check_sorted`].
    pub fn art(keys: &[K]) -> Result<Self> {
        check_sorted(keys)?;
        Ok(RadixIndex {
            map: Art::bulk_load(firsts(keys))?,
            len: keys.len(),
        })
    }
}

impl<K: ArtKey> RadixIndex<Start<K, usize>> {
    /// A tuned START over sorted `keys` (duplicates allowed). Errors as [`check_sorted`].
    pub fn start(keys: &[K], params: StartParams) -> Result<Self> {
        check_sorted(keys)?;
        Ok(RadixIndex {
            map: Start::bulk_load(firsts(keys), params)?,
            len: keys.len(),
        })
    }
}

impl<M> RadixIndex<M> {
    /// The underlying map.
    pub fn map(&self) -> &M {
        &self.map
    }
}

impl<K: ArtKey, M: OrderedMap<K, usize> + Send + Sync> StaticIndex<K> for RadixIndex<M> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let pos = match self.map.get(&key) {
            Some(&p) => p,
            None => self.map.lower_bound(&key).map_or(self.len, |(_, &p)| p),
        };
        ApproxPos::exact(pos)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<M>() + self.map.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: None,
            height: None,
        }
    }
}
