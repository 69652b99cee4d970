//! Regression: a write-back read spanning a cached dirty block whose device copy was never
//! written (a hole past the device's end) failed with `ChecksumMismatch` on that block. The
//! read fetched the whole span from the first to the last missing block in one request, the
//! device verified the hole's (zero) trailer, and the cached copy never got a chance to answer.
//! Found by `io_write_back::cache_matches_a_block_model` (ops: write 13..15 past the cache,
//! read 0..4, write 12, read 10..14, capacity 1).

use std::sync::Arc;

use lidx::io::{BlockDevice, IoClass, PageCache, SimDevice, SimProfile, BLOCK_TRAILER};

const BS: usize = 512;

#[test]
fn a_read_around_a_dirty_hole_sees_the_cached_block() {
    let dev = Arc::new(SimDevice::new("hole", BS, SimProfile::named("ram").unwrap()).unwrap());
    for b in 0..12u64 {
        dev.write_blocks(b, &mut vec![b as u8; BS], IoClass::Leaf)
            .unwrap();
    }
    let cache = PageCache::write_back(dev.clone(), 1);
    // Two blocks do not fit a one-block cache: they go straight to the device, past block 12.
    cache
        .write_blocks(13, &mut vec![13; 2 * BS], IoClass::Leaf)
        .unwrap();
    // Block 12 is dirty in the cache and a hole on the device.
    cache
        .write_blocks(12, &mut vec![12; BS], IoClass::Leaf)
        .unwrap();
    let mut buf = vec![0u8; 4 * BS];
    cache.read_blocks(10, &mut buf, IoClass::Leaf).unwrap();
    for (i, block) in buf.chunks_exact(BS).enumerate() {
        let want = 10 + i as u8;
        assert!(
            block[..BS - BLOCK_TRAILER].iter().all(|&x| x == want),
            "block {}",
            10 + i
        );
    }
}
