//! MultiNode4: a Node4 whose keys are up to four key bytes (paper 004 §III-B, Fig. 5).
//!
//! What the paper says (§III-B): path compression stops helping as soon as two keys share a
//! path, and the chain of Node4s that follows costs one cache miss per byte. A Node4 leaves 12
//! bytes of its cache line unused, enough to widen its four one-byte keys to four bytes: the
//! multilevel Node4 "can store up to four keys with up to four bytes each while not exceeding
//! the size of a cache line (64 Bytes)", spanning up to four radix levels, with the Node4 layout
//! otherwise kept (header, keys, child pointers).
//!
//! # Layout (one 64-byte, 64-aligned cache line)
//!
//! ```text
//! offset  0..14  header   bytes owned by the tree (node type, compressed prefix); untouched here
//! offset     14  count    keys in use, 0..=4
//! offset     15  span     key bytes per fragment, 1..=4
//! offset 16..32  keys     4 x u32, sorted ascending, unused ones 0
//! offset 32..64  children 4 x u64 child words, unused ones 0
//! ```
//!
//! A *fragment* is the `span` key bytes the node consumes, read big-endian into the low bytes of
//! a `u32`, so fragment order is key-byte order. Lookup compares the fragment with all four keys
//! at once (four compares folded into a bit mask, which the compiler turns into one vector
//! compare and a move-mask on x86-64; no branch per key), masks off unused keys, and takes the
//! child at the lowest set bit. Keys are kept sorted, as in ART's Node4, so ordered iteration and
//! `lower_bound` need no sort; inserting shifts at most three entries.
//!
//! What we do differently: child words are opaque `u64`s (0 = no child), not typed pointers, so
//! the tree chooses its own pointer tagging.

use crate::error::{Error, Result};

/// Keys (and children) a [`MultiNode4`] holds.
pub(crate) const CAPACITY: usize = 4;

/// Bytes of the header area the owning tree may use.
pub(crate) const HEADER_BYTES: usize = 14;

/// A four-way node keyed by fragments of up to four key bytes, in one cache line.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiNode4 {
    header: [u8; HEADER_BYTES],
    count: u8,
    span: u8,
    keys: [u32; CAPACITY],
    children: [u64; CAPACITY],
}

/// What [`MultiNode4::insert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// The fragment was new and took a free slot.
    Inserted,
    /// The fragment was present; its previous child word is returned.
    Replaced(u64),
    /// The fragment was new but all four slots are used; nothing changed.
    Full,
}

impl MultiNode4 {
    /// An empty node spanning `span` key bytes (1..=4).
    pub fn new(span: u8) -> Result<Self> {
        if !(1..=4).contains(&span) {
            return Err(Error::InvalidParameter {
                name: "span",
                value: span.to_string(),
                expected: "1 to 4 key bytes",
            });
        }
        Ok(MultiNode4 {
            header: [0; HEADER_BYTES],
            count: 0,
            span,
            keys: [0; CAPACITY],
            children: [0; CAPACITY],
        })
    }

    /// Key bytes per fragment.
    pub fn span(&self) -> u8 {
        self.span
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True if the node holds no key.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// True if all four slots are used.
    pub fn is_full(&self) -> bool {
        self.count as usize == CAPACITY
    }

    /// The header bytes the owning tree stores here.
    pub fn header(&self) -> &[u8; HEADER_BYTES] {
        &self.header
    }

    /// Mutable access to the header bytes.
    pub fn header_mut(&mut self) -> &mut [u8; HEADER_BYTES] {
        &mut self.header
    }

    /// Bit `i` set if key `i` is in use and equals `fragment`.
    #[inline(always)]
    fn hits(&self, fragment: u32) -> u32 {
        let mut mask = 0u32;
        for (i, &k) in self.keys.iter().enumerate() {
            mask |= u32::from(k == fragment) << i;
        }
        mask & ((1u32 << self.count) - 1)
    }

    /// The child word of `fragment`, 0 if absent.
    #[inline]
    pub fn get(&self, fragment: u32) -> u64 {
        let hits = self.hits(fragment);
        // No branch: with no hit, `trailing_zeros` is 32, `& 3` picks slot 0, and the mask
        // (all ones only on a hit) turns its word into 0.
        let child = self.children[(hits.trailing_zeros() & 3) as usize];
        child & 0u64.wrapping_sub(u64::from(hits != 0))
    }

    /// Position of `fragment` among the keys, if present.
    #[inline]
    pub fn find(&self, fragment: u32) -> Option<usize> {
        let hits = self.hits(fragment);
        (hits != 0).then(|| hits.trailing_zeros() as usize)
    }

    /// The child word at position `i` (`i < CAPACITY`), in place.
    #[inline(always)]
    pub fn child_word(&self, i: usize) -> &u64 {
        &self.children[i]
    }

    /// The child word at position `i` (`i < CAPACITY`), in place and mutably: the caller keeps
    /// it non-zero for a used position.
    #[inline(always)]
    pub fn child_word_mut(&mut self, i: usize) -> &mut u64 {
        &mut self.children[i]
    }

    /// Position of the first key `>= fragment` (`len()` if none).
    #[inline]
    pub fn lower_bound(&self, fragment: u32) -> usize {
        let mut below = 0usize;
        for (i, &k) in self.keys.iter().enumerate() {
            below += usize::from((k < fragment) & (i < self.count as usize));
        }
        below
    }

    /// The `(fragment, child)` at position `i` in key order.
    pub fn entry(&self, i: usize) -> Option<(u32, u64)> {
        (i < self.len()).then(|| (self.keys[i], self.children[i]))
    }

    /// The `(fragment, child)` pairs in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u32, u64)> + '_ {
        let n = self.len();
        self.keys[..n]
            .iter()
            .copied()
            .zip(self.children[..n].iter().copied())
    }

    /// Stores `child` (non-zero) under `fragment` (below `2^(8 * span)`).
    pub fn insert(&mut self, fragment: u32, child: u64) -> Result<Insert> {
        if child == 0 {
            return Err(Error::InvalidParameter {
                name: "child",
                value: "0".to_string(),
                expected: "a non-zero child word (0 marks no child)",
            });
        }
        if self.span < 4 && fragment >> (8 * self.span as u32) != 0 {
            return Err(Error::InvalidParameter {
                name: "fragment",
                value: format!("{fragment:#x}"),
                expected: "a fragment of at most `span` key bytes",
            });
        }
        let pos = self.lower_bound(fragment);
        let n = self.len();
        if pos < n && self.keys[pos] == fragment {
            let old = std::mem::replace(&mut self.children[pos], child);
            return Ok(Insert::Replaced(old));
        }
        if n == CAPACITY {
            return Ok(Insert::Full);
        }
        self.keys.copy_within(pos..n, pos + 1);
        self.children.copy_within(pos..n, pos + 1);
        self.keys[pos] = fragment;
        self.children[pos] = child;
        self.count += 1;
        Ok(Insert::Inserted)
    }

    /// Removes `fragment` and returns its child word, if present.
    pub fn remove(&mut self, fragment: u32) -> Option<u64> {
        let hits = self.hits(fragment);
        if hits == 0 {
            return None;
        }
        let pos = hits.trailing_zeros() as usize;
        let n = self.len();
        let child = self.children[pos];
        self.keys.copy_within(pos + 1..n, pos);
        self.children.copy_within(pos + 1..n, pos);
        self.keys[n - 1] = 0;
        self.children[n - 1] = 0;
        self.count -= 1;
        Some(child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_cache_line() {
        assert_eq!(std::mem::size_of::<MultiNode4>(), 64);
        assert_eq!(std::mem::align_of::<MultiNode4>(), 64);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(MultiNode4::new(0).is_err());
        assert!(MultiNode4::new(5).is_err());
        let mut n = MultiNode4::new(2).unwrap();
        assert!(matches!(
            n.insert(0x1_0000, 1),
            Err(Error::InvalidParameter {
                name: "fragment",
                ..
            })
        ));
        assert!(matches!(
            n.insert(5, 0),
            Err(Error::InvalidParameter { name: "child", .. })
        ));
        assert!(n.is_empty());
        let mut wide = MultiNode4::new(4).unwrap();
        assert_eq!(wide.insert(u32::MAX, 9).unwrap(), Insert::Inserted);
        assert_eq!(wide.get(u32::MAX), 9);
        assert_eq!(wide.get(0), 0);
    }

    #[test]
    fn full_node_and_header() {
        let mut n = MultiNode4::new(3).unwrap();
        n.header_mut()[0] = 0xAB;
        for (i, f) in [30u32, 10, 40, 20].into_iter().enumerate() {
            assert_eq!(n.insert(f, i as u64 + 1).unwrap(), Insert::Inserted);
        }
        assert!(n.is_full());
        assert_eq!(n.insert(25, 9).unwrap(), Insert::Full);
        assert_eq!(n.insert(20, 9).unwrap(), Insert::Replaced(4));
        assert_eq!(n.header()[0], 0xAB);
        let keys: Vec<u32> = n.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [10, 20, 30, 40]);
        assert_eq!(n.entry(1), Some((20, 9)));
        assert_eq!(n.entry(4), None);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, u64),
        Remove(u32),
        Probe(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct fragments so that inserts, removals and probes hit each other.
        let frag = prop_oneof![0u32..8, Just(0xFF_FFFF), 0x10_0000u32..0x10_0008];
        prop_oneof![
            (frag.clone(), 1u64..u64::MAX).prop_map(|(f, c)| Op::Insert(f, c)),
            frag.clone().prop_map(Op::Remove),
            frag.prop_map(Op::Probe),
        ]
    }

    proptest! {
        #[test]
        fn matches_a_sorted_vec(ops in prop::collection::vec(op(), 0..60)) {
            let mut node = MultiNode4::new(3).unwrap();
            let mut model: Vec<(u32, u64)> = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(f, c) => {
                        let got = node.insert(f, c).unwrap();
                        let want = match model.binary_search_by_key(&f, |e| e.0) {
                            Ok(i) => Insert::Replaced(std::mem::replace(&mut model[i].1, c)),
                            Err(_) if model.len() == CAPACITY => Insert::Full,
                            Err(i) => {
                                model.insert(i, (f, c));
                                Insert::Inserted
                            }
                        };
                        prop_assert_eq!(got, want);
                    }
                    Op::Remove(f) => {
                        let want = model
                            .binary_search_by_key(&f, |e| e.0)
                            .ok()
                            .map(|i| model.remove(i).1);
                        prop_assert_eq!(node.remove(f), want);
                    }
                    Op::Probe(f) => {
                        let want = model.partition_point(|e| e.0 < f);
                        prop_assert_eq!(node.lower_bound(f), want);
                    }
                }
                prop_assert_eq!(node.iter().collect::<Vec<_>>(), model.clone());
                for f in (0u32..9).chain([0xFF_FFFF, 0x10_0003, 0x10_0009]) {
                    let want = model.iter().find(|e| e.0 == f).map_or(0, |e| e.1);
                    prop_assert_eq!(node.get(f), want);
                    prop_assert_eq!(node.lower_bound(f), model.partition_point(|e| e.0 < f));
                }
            }
        }
    }
}
