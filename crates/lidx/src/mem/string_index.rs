//! A static learned index over sorted byte-string keys of any length that stays useful when
//! many keys share long prefixes.
//!
//! # The problem
//!
//! Models learn on `u64`s. The fixed 16-byte strings of [`crate::key`] map a key to its first
//! 8 bytes, so every key sharing those 8 bytes is one point to a model and a lookup's window
//! grows with the size of that group. In a word list most keys share their first 8 bytes with
//! another key (61% of a 7.2M-word frequency list; `inter-national`, `inter-nationally`, ...),
//! and groups of thousands are common in URLs, paths and identifiers.
//!
//! # The technique
//!
//! The radix string spline (Spector, Kipf et al., "Bounding the Last Mile: Efficient Learned
//! String Indexing", AIDB @ VLDB 2021) builds a tree of radix splines: each node covers the
//! keys that share a prefix, models the next 8 bytes of each key as an integer, and sends every
//! run of keys sharing those 8 bytes that is too long for the error bound to a child node one
//! chunk deeper, through a hash table of redirects. We keep that shape with lidx's parts:
//!
//! * A node at depth `d` covers a run of keys sharing their first `d` bytes. Each key maps to
//!   a `u64` chunk: bytes `[d, d + 7)` big-endian (zero past the key's end) in the high seven
//!   bytes and `min(len - d, 8)` in the low byte. The length byte is what the paper's plain
//!   8-byte chunk lacks: with zero padding alone `a` and `a\0` map alike at every depth, and
//!   a child could never separate them. With it the map is monotone (a byte-wise smaller key
//!   never gets a larger chunk), and keys that agree on a chunk whose length byte is below 8
//!   are identical.
//! * The node fits a PGM ([`Pgm`], error `eps`, duplicates allowed: it answers a chunk's
//!   first occurrence) on its keys' chunks, instead of a radix spline: PGM's error bound is
//!   the same guarantee, and it is lidx's best-measured static model.
//! * A run of more than `threshold` keys sharing a chunk goes to a child at depth `d + 7` (a
//!   sorted array of the redirected chunks, searched by binary search: it holds few entries,
//!   and lookups on it cost less than hashing the chunk). A run of identical keys (duplicates)
//!   cannot be split by any depth: it keeps its key and answers exactly (its first position,
//!   or the position after it).
//! * Every other run holds at most `threshold` keys, so a window is the PGM's window on the
//!   chunk, widened by the longest such run: at most `2 * eps + 2 + threshold` positions.
//!
//! Where we differ from the paper: the length byte (exactness for keys that are prefixes of
//! each other, which the paper handles by padding with a byte outside the alphabet), the PGM
//! in place of the spline, and an exact answer for runs of duplicates.
//!
//! # Keys
//!
//! Any byte strings, sorted byte-wise (`memcmp` order, a prefix before its extensions),
//! duplicates allowed, the empty string included (it maps to chunk 0 and sorts first). A key
//! longer than any depth is no special case: each level consumes 7 more bytes, so a 1 KiB key
//! is at most 147 levels deep, and only if that many keys share its first 1,000 bytes. The
//! index does not own the keys; [`StringIndex::lower_bound`] takes them again, like every
//! static index.

use crate::error::{Error, Result};
use crate::index::{ApproxPos, StaticIndex};
use crate::mem::pgm::{Pgm, PgmParams};

/// Parameters of a [`StringIndex`]. Both trade memory for lookup time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringIndexParams {
    /// The PGM's error in positions (at least 1; default 32). Larger: fewer segments, less
    /// memory, wider windows.
    pub eps: usize,
    /// The longest run of keys sharing a chunk that stays in its node (default 32); a longer
    /// one gets a child node. Larger: fewer children, less memory, wider windows (a window
    /// is at most `2 * eps + 2 + threshold` wide).
    pub threshold: usize,
}

impl Default for StringIndexParams {
    fn default() -> Self {
        StringIndexParams {
            eps: 32,
            threshold: 32,
        }
    }
}

/// Bytes of a key a node consumes: seven of data, then the length byte.
const STEP: usize = 7;

/// The chunk of `key` at depth `d`: bytes `[d, d + 7)` big-endian, zero past the end, then
/// `min(len - d, 8)` in the low byte (see the module docs).
#[inline]
fn chunk_at(key: &[u8], d: usize) -> u64 {
    let rest = key.get(d..).unwrap_or(&[]);
    let mut raw = [0u8; 8];
    let take = rest.len().min(STEP);
    raw[..take].copy_from_slice(&rest[..take]);
    raw[7] = rest.len().min(8) as u8;
    u64::from_be_bytes(raw)
}

/// What a redirected chunk leads to.
#[derive(Debug, Clone)]
enum Child {
    /// Keys sharing the chunk, one level deeper.
    Node(Box<Node>),
    /// A run of identical keys at positions `[start, start + len)`.
    Same {
        start: usize,
        len: usize,
        key: Box<[u8]>,
    },
}

/// One node: keys `[base, base + len)` of the whole set, sharing their first `depth` bytes.
#[derive(Debug, Clone)]
struct Node {
    depth: usize,
    base: usize,
    len: usize,
    pgm: Pgm<u64>,
    /// Longest run of keys sharing a chunk that was not redirected.
    widen: usize,
    /// Redirected chunks, sorted, and parallel to them what they lead to.
    redirects: Vec<u64>,
    children: Vec<Child>,
}

impl Node {
    fn build<T: AsRef<[u8]>>(
        keys: &[T],
        base: usize,
        depth: usize,
        params: StringIndexParams,
    ) -> Result<Node> {
        let chunks: Vec<u64> = keys.iter().map(|k| chunk_at(k.as_ref(), depth)).collect();
        let pgm = Pgm::build(&chunks, PgmParams::new(params.eps, 8))?;
        let mut node = Node {
            depth,
            base,
            len: keys.len(),
            pgm,
            widen: 0,
            redirects: Vec::new(),
            children: Vec::new(),
        };
        let mut i = 0;
        while i < chunks.len() {
            let mut j = i + 1;
            while j < chunks.len() && chunks[j] == chunks[i] {
                j += 1;
            }
            let run = j - i;
            if run > params.threshold {
                let (first, last) = (keys[i].as_ref(), keys[j - 1].as_ref());
                let child = if first == last {
                    Child::Same {
                        start: base + i,
                        len: run,
                        key: first.into(),
                    }
                } else {
                    let node = Node::build(&keys[i..j], base + i, depth + STEP, params)?;
                    Child::Node(Box::new(node))
                };
                node.redirects.push(chunks[i]);
                node.children.push(child);
            } else {
                node.widen = node.widen.max(run);
            }
            i = j;
        }
        Ok(node)
    }

    fn search(&self, key: &[u8]) -> ApproxPos {
        let c = chunk_at(key, self.depth);
        if let Ok(at) = self.redirects.binary_search(&c) {
            return match &self.children[at] {
                Child::Node(child) => child.search(key),
                Child::Same { start, len, key: k } => {
                    let p = if key <= &k[..] { *start } else { start + len };
                    ApproxPos {
                        pos: p,
                        lo: p,
                        hi: p,
                    }
                }
            };
        }
        let w = self.pgm.search(c);
        ApproxPos {
            pos: self.base + w.pos,
            lo: self.base + w.lo,
            hi: self.base + (w.hi + self.widen).min(self.len),
        }
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Node>()
            + self.pgm.size_in_bytes()
            + self.redirects.capacity() * 8
            + self.children.capacity() * std::mem::size_of::<Child>()
            + self
                .children
                .iter()
                .map(|c| match c {
                    Child::Node(n) => n.size_in_bytes(),
                    Child::Same { key, .. } => key.len(),
                })
                .sum::<usize>()
    }

    fn count(&self, nodes: &mut usize, depth: &mut usize) {
        *nodes += 1;
        *depth = (*depth).max(self.depth / STEP + 1);
        for c in &self.children {
            if let Child::Node(n) = c {
                n.count(nodes, depth);
            }
        }
    }
}

/// The learned index over sorted byte strings (see the module docs).
#[derive(Debug, Clone)]
pub struct StringIndex {
    root: Option<Node>,
    n: usize,
    params: StringIndexParams,
}

impl StringIndex {
    /// Builds the index on byte-wise sorted `keys` (duplicates allowed). Returns `OutOfOrder`
    /// (with both keys, escaped) for a key below its predecessor and `InvalidParameter` for an
    /// `eps` or `threshold` of 0.
    pub fn build<T: AsRef<[u8]>>(keys: &[T], params: StringIndexParams) -> Result<StringIndex> {
        if params.eps == 0 || params.threshold == 0 {
            return Err(Error::InvalidParameter {
                name: if params.eps == 0 { "eps" } else { "threshold" },
                value: "0".to_string(),
                expected: "at least 1",
            });
        }
        if let Some(i) = (1..keys.len()).find(|&i| keys[i].as_ref() < keys[i - 1].as_ref()) {
            return Err(Error::OutOfOrder {
                index: i,
                previous: escape(keys[i - 1].as_ref()),
                got: escape(keys[i].as_ref()),
            });
        }
        let root = if keys.is_empty() {
            None
        } else {
            Some(Node::build(keys, 0, 0, params)?)
        };
        Ok(StringIndex {
            root,
            n: keys.len(),
            params,
        })
    }

    /// The window `[lo, hi)` (with `lo <= lower_bound(key) <= hi`) and a guess inside it.
    pub fn search(&self, key: &[u8]) -> ApproxPos {
        self.root
            .as_ref()
            .map_or_else(ApproxPos::default, |r| r.search(key))
    }

    /// Position of the first key `>= key` in `keys` (the keys the index was built on), `len`
    /// when none: [`StringIndex::search`], then binary search in the window.
    pub fn lower_bound<T: AsRef<[u8]>>(&self, keys: &[T], key: &[u8]) -> usize {
        let w = self.search(key);
        w.lo + keys[w.lo..w.hi].partition_point(|k| k.as_ref() < key)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for an index over no key.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The parameters it was built with.
    pub fn params(&self) -> StringIndexParams {
        self.params
    }

    /// The widest window any lookup can get: `2 * eps + 2 + threshold`.
    pub fn max_window(&self) -> usize {
        2 * self.params.eps + 2 + self.params.threshold
    }

    /// Bytes of memory: the nodes, their PGMs, redirects and the keys of duplicate runs.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.root.as_ref().map_or(0, Node::size_in_bytes)
    }

    /// Nodes in the tree and its depth in levels (0 for an empty index).
    pub fn nodes_and_depth(&self) -> (usize, usize) {
        let (mut nodes, mut depth) = (0, 0);
        if let Some(r) = &self.root {
            r.count(&mut nodes, &mut depth);
        }
        (nodes, depth)
    }
}

/// A key for a message: printable ASCII as is, other bytes as `\xNN`, at most 64 bytes shown.
pub fn escape(key: &[u8]) -> String {
    let shown = &key[..key.len().min(64)];
    let mut s = shown.escape_ascii().to_string();
    if key.len() > 64 {
        s.push_str(&format!("... ({} bytes)", key.len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_monotone_and_tell_prefixes_apart() {
        let keys: [&[u8]; 7] = [b"", b"a", b"a\0", b"a\0\0", b"a\0b", b"ab", b"abcdefghij"];
        for d in [0, 1, 7] {
            for w in keys.windows(2) {
                assert!(chunk_at(w[0], d) <= chunk_at(w[1], d), "{d} {w:?}");
            }
        }
        assert!(chunk_at(b"a", 0) < chunk_at(b"a\0", 0));
    }
}
