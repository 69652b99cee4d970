//! [`Range`]: the entries of a [`super::DynamicPgm`] in key order, merged from its levels.
//!
//! No key has entries in two levels (see [`super::map`]), so the merge needs no version
//! resolution: each level keeps a cursor on its next live entry, and the smallest key among
//! the cursors comes next. A tombstone is skipped where it lies. The levels are few
//! (`log2(n / base)`), so the smallest is found by a scan of the cursors.

use std::cmp::Ordering;
use std::ops::Bound;

use crate::key::Key;
use crate::mem::dynamic_pgm::level::Level;

/// Iterator over a [`super::DynamicPgm`]'s entries in a key range. See the module docs.
pub struct Range<'a, K: Key, V> {
    levels: &'a [Level<K, V>],
    /// Per level, the next live position (`usize::MAX` when the level is exhausted).
    cursors: Vec<usize>,
    end: Bound<K>,
}

impl<'a, K: Key, V> Range<'a, K, V> {
    pub(crate) fn new(levels: &'a [Level<K, V>], start: Bound<K>, end: Bound<K>) -> Self {
        let cursors = levels
            .iter()
            .map(|level| {
                let at = match &start {
                    Bound::Unbounded => 0,
                    Bound::Included(k) => level.position(k),
                    Bound::Excluded(k) => {
                        let at = level.position(k);
                        at + usize::from(
                            at < level.len() && level.keys[at].key_cmp(k) == Ordering::Equal,
                        )
                    }
                };
                level.live_from(at).unwrap_or(usize::MAX)
            })
            .collect();
        Range {
            levels,
            cursors,
            end,
        }
    }
}

impl<'a, K: Key, V> Iterator for Range<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let mut best: Option<(usize, &'a K)> = None;
        for (l, &at) in self.cursors.iter().enumerate() {
            if at == usize::MAX {
                continue;
            }
            let key = &self.levels[l].keys[at];
            if best.is_none_or(|(_, b)| key.key_lt(b)) {
                best = Some((l, key));
            }
        }
        let (l, key) = best?;
        let in_range = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => key.key_cmp(e) != Ordering::Greater,
            Bound::Excluded(e) => key.key_lt(e),
        };
        if !in_range {
            self.cursors.fill(usize::MAX);
            return None;
        }
        let level = &self.levels[l];
        let at = self.cursors[l];
        self.cursors[l] = level.live_from(at + 1).unwrap_or(usize::MAX);
        Some((
            key,
            level.values[at]
                .as_ref()
                .expect("cursors rest on live entries"),
        ))
    }
}
