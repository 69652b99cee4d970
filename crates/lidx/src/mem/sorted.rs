//! The sorted-array baseline: no model at all, the window is every position, so a lookup is a
//! binary search over the whole array. Every learned index is measured against it.

use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};

/// Binary search over the whole array, as a [`StaticIndex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortedArray {
    len: usize,
}

impl SortedArray {
    /// Checks that `keys` are sorted and remembers their number.
    pub fn build<K: Key>(keys: &[K]) -> Result<Self> {
        check_sorted(keys)?;
        Ok(SortedArray { len: keys.len() })
    }
}

impl<K: Key> StaticIndex<K> for SortedArray {
    #[inline]
    fn search(&self, _key: K) -> ApproxPos {
        ApproxPos::everything(self.len)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
    fn shape(&self) -> Shape {
        Shape {
            segments: None,
            height: Some(0),
        }
    }
}
