//! A huge-page arena for START's tuned tree: after tuning, every leaf and every ART inner node
//! (and MultiNode4) is moved into one memory block advised for transparent huge pages.
//!
//! What the paper says: START's rewired nodes rely on huge pages and rewiring for their gain
//! (§III-A); the rest of the tree (the lower Node4/Node16 levels and the leaves) stays where
//! ART's allocator put it. Its model measures node costs with a warm TLB (§IV-A).
//!
//! What we do differently, and why: on this project's VM a dependent random read on 4 KiB
//! pages costs a page walk (measured 130-470 ns, [`crate::mem::start::cost_model::measure_page_walk`])
//! on top of the cache miss, and a lookup in a 10M-key tree pays it at every level below the
//! top and again at the leaf, which no multilevel node replaces. Tuning is a bulk
//! transformation anyway (§IV-B), so START also *places* the tree: [`Start::retune`] copies
//! the nodes and leaves, in key order, into an arena of 2 MiB pages, where a few hundred TLB
//! entries cover the whole tree. Plain [`crate::mem::Art`] never uses the arena: it stays
//! the paper's ART baseline, allocated node by node by the global allocator.
//!
//! [`Start::retune`]: crate::mem::Start::retune
//!
//! # How
//!
//! * One address range is reserved per process (`PROT_NONE`, no memory) and every arena takes
//!   its blocks from it, so "is this node in an arena" is one subtraction and compare
//!   ([`contains`]): the node code frees an arena node by dropping it in place (never through
//!   the global allocator) and, where an operation wants the node as a `Box` (growing,
//!   shrinking, removing a leaf), copies it out first. Its old place is then dead until the
//!   arena is dropped, i.e. until the next tuning.
//! * A block is mapped read-write over its part of the reservation and advised with
//!   `MADV_HUGEPAGE`; dropping the arena maps the range back to `PROT_NONE` (memory returned,
//!   address space not reused: 1 TiB lasts for hundreds of thousands of tunings).
//! * If the reservation or the mapping fails (or off Linux), [`Arena::new`] returns `None` and
//!   the tree stays on the global allocator; [`crate::mem::TuneReport::arena_bytes`] is then 0.

use std::alloc::Layout;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Bytes of a transparent huge page (x86-64 and AArch64 with 4 KiB pages).
pub(crate) const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The process-wide reservation: `(base, bytes)`, or `None` if the kernel refused it.
static REGION: OnceLock<Option<(usize, usize)>> = OnceLock::new();

/// Bytes of the reservation handed out so far.
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// True if `addr` lies in memory an [`Arena`] hands out.
#[inline(always)]
pub(crate) fn contains(addr: usize) -> bool {
    match REGION.get() {
        Some(Some((base, bytes))) => addr.wrapping_sub(*base) < *bytes,
        _ => false,
    }
}

/// A bump allocator over one huge-page block; memory is released only when it is dropped.
pub(crate) struct Arena {
    base: usize,
    bytes: usize,
    used: usize,
}

impl Arena {
    /// An arena able to hold `bytes` (rounded up to whole huge pages), or `None` if the
    /// reservation is exhausted or the kernel refuses (the caller keeps the global allocator).
    pub(crate) fn new(bytes: usize) -> Option<Arena> {
        let bytes = bytes.max(1).next_multiple_of(HUGE_PAGE_BYTES);
        let (base, total) = (*REGION.get_or_init(os::reserve))?;
        let off = NEXT.fetch_add(bytes, Ordering::Relaxed);
        if off.checked_add(bytes)? > total {
            return None;
        }
        let base = base + off;
        os::commit(base, bytes).then_some(Arena {
            base,
            bytes,
            used: 0,
        })
    }

    /// Room for one value of `layout`, or `None` when full. The memory is zeroed on first
    /// touch and uninitialized as far as the caller is concerned.
    pub(crate) fn alloc(&mut self, layout: Layout) -> Option<*mut u8> {
        let start = (self.base + self.used).next_multiple_of(layout.align());
        let end = start.checked_add(layout.size())?;
        if end > self.base + self.bytes {
            return None;
        }
        self.used = end - self.base;
        Some(std::ptr::with_exposed_provenance_mut(start))
    }

    /// True if `addr` lies in this arena's block.
    #[inline]
    pub(crate) fn owns(&self, addr: usize) -> bool {
        addr.wrapping_sub(self.base) < self.bytes
    }

    /// Bytes handed out, padding included.
    #[cfg(test)]
    pub(crate) fn used_bytes(&self) -> usize {
        self.used
    }

    /// Resident bytes: the huge pages touched so far (the block is filled from its start).
    pub(crate) fn resident_bytes(&self) -> usize {
        self.used.next_multiple_of(HUGE_PAGE_BYTES)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        os::release(self.base, self.bytes);
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("bytes", &self.bytes)
            .field("used", &self.used)
            .finish()
    }
}

#[cfg(target_os = "linux")]
mod os {
    /// Address space reserved for all arenas of the process.
    const RESERVE_BYTES: usize = 1 << 40;

    pub(super) fn reserve() -> Option<(usize, usize)> {
        // SAFETY: a fresh private anonymous mapping without access; nothing refers to it. The
        // extra huge page lets the base be aligned to one.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RESERVE_BYTES + super::HUGE_PAGE_BYTES,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let base = (raw as usize).next_multiple_of(super::HUGE_PAGE_BYTES);
        Some((base, RESERVE_BYTES))
    }

    pub(super) fn commit(base: usize, bytes: usize) -> bool {
        // SAFETY: `base..base + bytes` is a part of the reservation that no arena uses (each
        // range is handed out once); MAP_FIXED replaces its `PROT_NONE` mapping.
        unsafe {
            let p = libc::mmap(
                base as *mut libc::c_void,
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return false;
            }
            libc::madvise(p, bytes, libc::MADV_HUGEPAGE);
        }
        true
    }

    pub(super) fn release(base: usize, bytes: usize) {
        // SAFETY: the range belongs to the arena being dropped, whose nodes are gone; mapping
        // it back to `PROT_NONE` returns the memory and keeps the reservation whole.
        unsafe {
            libc::mmap(
                base as *mut libc::c_void,
                bytes,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub(super) fn reserve() -> Option<(usize, usize)> {
        None
    }

    pub(super) fn commit(_base: usize, _bytes: usize) -> bool {
        false
    }

    pub(super) fn release(_base: usize, _bytes: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_inside_and_bounded() {
        let Some(mut a) = Arena::new(100) else {
            return;
        };
        let p = a.alloc(Layout::new::<u8>()).unwrap();
        let q = a.alloc(Layout::new::<u64>()).unwrap();
        assert!(contains(p.addr()) && contains(q.addr()));
        assert_eq!(q.addr() % 8, 0);
        assert_eq!(a.used_bytes(), 16);
        assert_eq!(a.resident_bytes(), HUGE_PAGE_BYTES);
        assert!(a
            .alloc(Layout::array::<u8>(HUGE_PAGE_BYTES).unwrap())
            .is_none());
        let heap = Box::new(0u64);
        assert!(!contains(std::ptr::from_ref(&*heap).addr()));
    }
}
