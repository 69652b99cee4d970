//! An updatable map ([`lidx::mem::MapSpec`]) used as a static index, where a structure must
//! answer `lower_bound` for absent keys too (paper 004's structure dimension, `lidx dims
//! structure`). `lidx bench --index alex` does not go through it: it times the map's own `get`
//! (`crate::runner`).
//!
//! Each distinct key maps to the position of its first occurrence; [`StaticIndex::search`]
//! answers an exact window (`lo == pos == hi`): a present key by `get` (the lookup paper 001
//! times), an absent one by `lower_bound`.

use lidx::mem::{KeyMap, MapSpec};
use lidx::{ApproxPos, Shape, StaticIndex};

use crate::error::Result;

/// A map from each distinct key to its first position.
pub struct MapIndex {
    map: Box<dyn KeyMap>,
    len: usize,
}

impl MapIndex {
    /// The map `spec` bulk-loaded with the distinct keys of sorted `keys`.
    pub fn build(spec: &MapSpec, keys: &[u64]) -> Result<MapIndex> {
        Ok(MapIndex {
            map: spec.build(first_positions(keys)?)?,
            len: keys.len(),
        })
    }
}

/// Each distinct key of sorted `keys` with the position of its first occurrence, in key order:
/// the entries a map is bulk-loaded with so that its `get` answers a present key's lower bound.
/// `OutOfOrder` when `keys` are not sorted.
pub fn first_positions(keys: &[u64]) -> Result<Vec<(u64, u64)>> {
    lidx::raw::key::check_sorted(keys)?;
    Ok((0..keys.len())
        .filter(|&i| i == 0 || keys[i - 1] < keys[i])
        .map(|i| (keys[i], i as u64))
        .collect())
}

impl StaticIndex<u64> for MapIndex {
    #[inline]
    fn search(&self, key: u64) -> ApproxPos {
        let pos = match self.map.get(key) {
            Some(p) => p as usize,
            None => self
                .map
                .lower_bound(key)
                .map_or(self.len, |(_, p)| p as usize),
        };
        ApproxPos {
            pos,
            lo: pos,
            hi: pos,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.map.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: None,
            height: None,
        }
    }
}
