//! Per-thread read buffers, reused from one point lookup to the next.
//!
//! A point lookup reads its leaf blocks into an aligned buffer and, in the byte table, joins
//! their payloads into one stream buffer. Allocating both per lookup (zeroed, so the aligned
//! one is also written once) cost a YCSB-C run of the store's hybrid engine about a tenth of
//! its CPU samples in `malloc`, `free`, `memset` and page zeroing (perf, `docs/results/peers.md`).
//! [`take`] hands the calling thread its buffers (empty ones when it has none, or when a
//! lookup on the same thread already holds them), [`give_back`] returns them for the next
//! lookup. What a lookup returns is copied out of them, so nothing outlives the lookup.
//! Buffers larger than [`KEEP_BYTES`] (a long scan's read-ahead) are dropped, not kept.

use std::cell::Cell;

use crate::io::aligned::AlignedBuf;

/// The largest buffer a thread keeps between lookups: 1 MiB.
pub(crate) const KEEP_BYTES: usize = 1 << 20;

/// A lookup's buffers: `raw` for whole blocks as read, `bytes` for what is decoded from them.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Whole blocks, aligned for `O_DIRECT`; its contents are stale, never zeroed again.
    pub raw: AlignedBuf,
    /// Bytes joined from blocks; empty when taken.
    pub bytes: Vec<u8>,
}

thread_local! {
    static SCRATCH: Cell<Option<Scratch>> = const { Cell::new(None) };
}

/// The calling thread's buffers (`bytes` empty), or new empty ones.
pub(crate) fn take() -> Scratch {
    let mut s = SCRATCH.with(Cell::take).unwrap_or_default();
    s.bytes.clear();
    s
}

/// Keeps `scratch` for the calling thread's next lookup.
pub(crate) fn give_back(mut scratch: Scratch) {
    if scratch.raw.len() > KEEP_BYTES {
        scratch.raw = AlignedBuf::default();
    }
    if scratch.bytes.capacity() > KEEP_BYTES {
        scratch.bytes = Vec::new();
    }
    SCRATCH.with(|s| s.set(Some(scratch)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_to_the_same_thread_emptied_and_big_ones_are_dropped() {
        let mut s = take();
        s.raw = AlignedBuf::zeroed(8192);
        s.bytes.extend_from_slice(b"abc");
        give_back(s);
        let s = take();
        assert_eq!(s.raw.len(), 8192);
        assert!(s.bytes.is_empty() && s.bytes.capacity() >= 3);
        // A nested lookup while the buffers are out gets empty ones.
        let nested = take();
        assert_eq!(nested.raw.len(), 0);
        give_back(nested);
        give_back(s);
        let mut s = take();
        s.raw = AlignedBuf::zeroed(KEEP_BYTES + 4096);
        give_back(s);
        assert_eq!(take().raw.len(), 0);
        std::thread::spawn(|| assert_eq!(take().raw.len(), 0))
            .join()
            .unwrap();
    }
}
