//! [`Level`]: one sorted run of the dynamic PGM, its entries' keys in one array (what its PGM
//! and the last-mile search read), their values beside them, `None` marking a tombstone.
//!
//! The first level (the buffer) has no model and is searched by a binary search over all of
//! it; every other level is immutable between merges and, from
//! [`super::DynamicPgmParams::min_indexed`] entries on, carries a [`Pgm`] over its keys (paper
//! 001 §II-B, "a learned index at each layer"); smaller levels are binary-searched, as the
//! PGM-index's `DynamicPGMIndex` does below its `MinIndexedLevel`. A level's PGM is rebuilt by
//! every merge into it, and every insert passes through every level's merges, so each indexed
//! level costs every insert one key's share of a PGM build; small levels are cheap to search
//! without one.

use std::cmp::Ordering;

use crate::error::Result;
use crate::index::StaticIndex;
use crate::key::Key;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::search;

/// One sorted run of disjoint keys. See the module docs.
pub(crate) struct Level<K: Key, V> {
    pub(crate) keys: Vec<K>,
    /// Parallel to `keys`; `None` is a tombstone.
    pub(crate) values: Vec<Option<V>>,
    /// Live (not tombstoned) entries.
    pub(crate) live: usize,
    index: Option<Pgm<K>>,
}

impl<K: Key, V> Level<K, V> {
    /// An empty level without a model.
    pub(crate) fn empty() -> Self {
        Level {
            keys: Vec::new(),
            values: Vec::new(),
            live: 0,
            index: None,
        }
    }

    /// A level over sorted, distinct, live entries, with a PGM over its keys when `pgm` is
    /// given.
    pub(crate) fn sorted(
        keys: Vec<K>,
        values: Vec<Option<V>>,
        pgm: Option<PgmParams>,
    ) -> Result<Self> {
        let index = pgm.map(|p| Pgm::build(&keys, p)).transpose()?;
        Ok(Level {
            live: keys.len(),
            keys,
            values,
            index,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Position of the first key `>= key`.
    #[inline]
    pub(crate) fn position(&self, key: &K) -> usize {
        match &self.index {
            Some(pgm) => pgm.lower_bound(&self.keys, *key),
            None => search::branchless_binary(&self.keys, *key),
        }
    }

    /// Position of `key` if the level holds an entry (live or tombstone) for it.
    #[inline]
    pub(crate) fn find(&self, key: &K) -> Option<usize> {
        if self.keys.is_empty() {
            return None;
        }
        let at = self.position(key);
        (at < self.keys.len() && self.keys[at].key_cmp(key) == Ordering::Equal).then_some(at)
    }

    /// The first live position `>= at`, if any.
    #[inline]
    pub(crate) fn live_from(&self, mut at: usize) -> Option<usize> {
        while at < self.values.len() {
            if self.values[at].is_some() {
                return Some(at);
            }
            at += 1;
        }
        None
    }

    /// Bytes of keys, values and the model.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<K>()
            + self.values.capacity() * std::mem::size_of::<Option<V>>()
            + self.index.as_ref().map_or(0, Pgm::size_in_bytes)
    }

    /// Moves the entries out, leaving the level empty and without a model.
    pub(crate) fn take(&mut self) -> (Vec<K>, Vec<Option<V>>) {
        self.index = None;
        self.live = 0;
        (
            std::mem::take(&mut self.keys),
            std::mem::take(&mut self.values),
        )
    }
}

/// Merges two sorted runs of disjoint keys into one, dropping tombstones: no key is in two
/// runs (see [`super::map`]'s invariant), so a tombstone hides nothing older and goes.
pub(crate) fn merge_live<K: Key, V>(
    a: (Vec<K>, Vec<Option<V>>),
    b: (Vec<K>, Vec<Option<V>>),
) -> (Vec<K>, Vec<Option<V>>) {
    let capacity = a.0.len() + b.0.len();
    let (mut keys, mut values) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    let mut a = a.0.into_iter().zip(a.1).peekable();
    let mut b = b.0.into_iter().zip(b.1).peekable();
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0.key_lt(&y.0),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let (k, v) = if take_a { a.next() } else { b.next() }.expect("peeked");
        if v.is_some() {
            keys.push(k);
            values.push(v);
        }
    }
    (keys, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn merge_keeps_order_and_drops_tombstones(
            keys in proptest::collection::btree_set(any::<u32>(), 0..300),
            split in proptest::collection::vec(any::<(bool, bool)>(), 300),
        ) {
            let (mut a, mut b) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
            for (k, &(left, dead)) in keys.iter().zip(&split) {
                let run = if left { &mut a } else { &mut b };
                run.0.push(*k);
                run.1.push((!dead).then_some(*k));
            }
            let want: Vec<u32> = keys.iter().zip(&split).filter(|(_, s)| !s.1).map(|(k, _)| *k).collect();
            let (keys, values) = merge_live(a, b);
            prop_assert_eq!(&keys, &want);
            prop_assert!(values.iter().zip(&keys).all(|(v, k)| *v == Some(*k)));
            let level = Level::sorted(keys.clone(), values, Some(PgmParams::new(2, 1))).unwrap();
            for (i, k) in keys.iter().enumerate() {
                prop_assert_eq!(level.find(k), Some(i));
                if let Some(next) = k.checked_add(1) {
                    prop_assert_eq!(level.position(&next), i + 1);
                }
            }
        }
    }
}
