//! What the two disk B+-trees share: [`crate::disk::btree`] (fixed-width keys and payloads,
//! nodes one per block written in place, paper 003's baseline) and [`crate::disk::byte_btree`]
//! (byte keys and values of any length, copy-on-write leaves under inner nodes kept only in
//! memory, the store's `btree` engine).
//!
//! Both are one structure: inner levels that route a key to a leaf through sorted separators,
//! built bottom-up in one pass and cut into nodes the same way whether a bulk load fills them
//! or a split overflows one ([`pack`]); a descent and a verification check that every key of a
//! node lies in the range its parents give it ([`outside`]). Those are written once, here, and each tree
//! supplies only what its key form decides: how a separator is stored and compared (a fixed
//! key, or a shortest byte prefix), what a node is (a block of the file, or an `Arc`'d node in
//! memory), and how a write lands (in place, or on a new block).
//!
//! What stays in each tree, and why:
//! * The node and leaf formats. Each is a file format that tests, fuzz corpora and
//!   `docs/format.md` describe byte for byte (fixed offsets from the capacity in `btree/node`,
//!   a slot array with overflow runs in `byte_btree/leaf`), so they are each tree's codec.
//! * The inner levels in memory. The typed tree decodes its top levels into a flat arena of
//!   exactly sized key vectors and writes every change through to the node's block (one file
//!   serves every `Resident` mode, and a lookup walks the arena without pointer chasing); the
//!   byte tree's inner nodes exist only in memory, shared by snapshots through `Arc` and copied
//!   on write, and a checkpoint writes their leaves as an image instead of nodes.
//! * The write policy and free space. The typed tree rewrites a node in its block, borrows and
//!   merges underfull nodes and keeps single free blocks in a heap whose memory it reports
//!   exactly (a test checks it against the allocator), persisted as a chain of blocks; the byte
//!   tree writes every changed leaf to a new block, retires the old one until no reader and no
//!   checkpoint needs it, and keeps free extents (overflow runs are several blocks) in the
//!   checkpoint image.

pub(crate) mod pack;

/// The first index in `0..len` for which `is_less(i)` is `Ok(false)`, by bisection, when
/// `is_less` is true on a prefix and false after it, or the first error it returns: the lower
/// bound over records whose comparison may read (a byte key's overflow run) or fail (a
/// damaged record).
pub(crate) fn try_lower_bound_by<E>(
    len: usize,
    mut is_less: impl FnMut(usize) -> Result<bool, E>,
) -> Result<usize, E> {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if is_less(mid)? {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// True when keys from `first` to `last` reach outside `lo <= k < hi` (`None` = unbounded),
/// with `lt` the keys' order: the check a descent and a verification make on every node
/// against the range its parents give it.
#[inline]
pub(crate) fn outside<K: ?Sized>(
    first: &K,
    last: &K,
    lo: Option<&K>,
    hi: Option<&K>,
    lt: impl Fn(&K, &K) -> bool,
) -> bool {
    lo.is_some_and(|lo| lt(first, lo)) || hi.is_some_and(|hi| !lt(last, hi))
}
