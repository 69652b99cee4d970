//! [`Arena`]: the memory of a shared CLOCK cache's blocks, one slot of `block_size` bytes per
//! place in the cache's ring, in a few large anonymous mappings asking for transparent huge
//! pages, instead of one heap allocation per block.
//!
//! Why: profiled on the `lsm` engine's in-memory YCSB-C (750K records of 100 bytes, 128 MiB
//! cache), a cached get's time is a chain of dependent cache misses, and with each block its
//! own 4 KiB allocation nearly every block touched is also a TLB miss (32K blocks over 32K
//! pages, far past the TLB's reach). In 2 MiB pages the same 128 MiB is 64 TLB entries. The
//! cache's hash table shrinks too: an entry holds the block's slot, not a boxed slice.
//!
//! Memory is reserved lazily: a chunk of [`CHUNK_BYTES`] (the last one only as large as the
//! capacity needs) is mapped when the ring first reaches a slot in it, and the kernel backs a
//! mapping's pages only when a block is first written there, so a cache that never fills
//! never holds its capacity. Each mapping asks for 2 MiB alignment room so that its pages
//! can all be huge; what is resident is at most the capacity's bytes rounded up to huge
//! pages. `/sys/kernel/mm/transparent_hugepage/enabled` set to `never` leaves 4 KiB pages,
//! as before. No `unsafe`: the mappings are `memmap2`'s.
//!
//! Measured (the command in [`crate::io::cache`]'s docs, six invocations alternated with the
//! build before, both filling the cache on write): `lsm` 1,037 to 1,267 Kops/s (medians),
//! 0.99x to 1.20x LMDB in the same invocations; the run's resident memory is unchanged (193
//! MB, now 170 MB of it in huge pages, against 82 MB).

use memmap2::MmapMut;

use crate::error::{Error, Result};

/// Bytes of one mapping (16 MiB: eight huge pages); slots per chunk are the largest power of
/// two of blocks that fits (at least one).
pub(crate) const CHUNK_BYTES: usize = 16 << 20;
/// A huge page: each chunk's blocks start on one.
const HUGE_PAGE: usize = 2 << 20;

/// Slots of `block_size` bytes for a cache of `capacity` blocks; see the module docs.
pub(crate) struct Arena {
    block_size: usize,
    capacity: usize,
    /// Slots per chunk, as a shift: slot `s` is in chunk `s >> shift`.
    shift: u32,
    chunks: Vec<Chunk>,
}

/// One mapping and where its first slot starts in it (the first huge page boundary).
struct Chunk {
    map: MmapMut,
    start: usize,
}

impl Arena {
    /// An arena of `capacity` slots of `block_size` bytes, nothing mapped yet.
    pub(crate) fn new(capacity: usize, block_size: usize) -> Arena {
        let per_chunk = (CHUNK_BYTES / block_size.max(1)).max(1);
        Arena {
            block_size,
            capacity,
            shift: per_chunk.ilog2(),
            chunks: Vec::new(),
        }
    }

    /// Maps the chunk of `slot` (and any before it) if not mapped yet. `slot` is below the
    /// capacity.
    pub(crate) fn reserve(&mut self, slot: u32) -> Result<()> {
        let needed = (slot as usize >> self.shift) + 1;
        while self.chunks.len() < needed {
            let first = self.chunks.len() << self.shift;
            let slots = (1usize << self.shift).min(self.capacity.saturating_sub(first));
            let bytes = slots * self.block_size;
            let map = MmapMut::map_anon(bytes + HUGE_PAGE).map_err(|e| {
                Error::io(
                    "the shared block cache",
                    format!("map {bytes} bytes of memory for its blocks"),
                    &e,
                )
            })?;
            let start = map.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
            #[cfg(target_os = "linux")]
            {
                // Advice only: a kernel without transparent huge pages keeps small ones.
                let _ = map.advise_range(memmap2::Advice::HugePage, start, bytes);
            }
            self.chunks.push(Chunk { map, start });
        }
        Ok(())
    }

    /// The bytes of `slot` (reserved).
    #[inline]
    pub(crate) fn block(&self, slot: u32) -> &[u8] {
        let chunk = &self.chunks[slot as usize >> self.shift];
        let at = chunk.start + (slot as usize & ((1 << self.shift) - 1)) * self.block_size;
        &chunk.map[at..at + self.block_size]
    }

    /// The bytes of `slot` (reserved), to write.
    #[inline]
    pub(crate) fn block_mut(&mut self, slot: u32) -> &mut [u8] {
        let chunk = &mut self.chunks[slot as usize >> self.shift];
        let at = chunk.start + (slot as usize & ((1 << self.shift) - 1)) * self.block_size;
        &mut chunk.map[at..at + self.block_size]
    }

    /// Bytes mapped so far (not all resident: see the module docs).
    #[cfg(test)]
    fn mapped_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.map.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_keep_their_bytes_apart_across_chunks_and_map_lazily() {
        // 4 KiB blocks: 4096 slots a chunk; a capacity of 5000 needs two chunks, the second
        // only 904 slots long.
        let (cap, bs) = (5000, 4096);
        let mut arena = Arena::new(cap, bs);
        assert_eq!(
            arena.mapped_bytes(),
            0,
            "nothing mapped before a slot is used"
        );
        arena.reserve(0).unwrap();
        assert_eq!(arena.mapped_bytes(), CHUNK_BYTES + HUGE_PAGE);
        let slots = [0u32, 1, 4095, 4096, 4999];
        arena.reserve(4999).unwrap();
        assert_eq!(
            arena.mapped_bytes(),
            CHUNK_BYTES + (cap - 4096) * bs + 2 * HUGE_PAGE
        );
        for &s in &slots {
            arena.block_mut(s).fill(s as u8 ^ 0x5A);
            *arena.block_mut(s).last_mut().unwrap() = (s >> 8) as u8;
        }
        for &s in &slots {
            let b = arena.block(s);
            assert_eq!(b.len(), bs);
            assert!(b[..bs - 1].iter().all(|&x| x == s as u8 ^ 0x5A), "slot {s}");
            assert_eq!(b[bs - 1], (s >> 8) as u8);
        }
        // Every slot's bytes start on a huge page boundary's block grid.
        for c in &arena.chunks {
            assert_eq!((c.map.as_ptr() as usize + c.start) % HUGE_PAGE, 0);
        }
    }

    #[test]
    fn odd_block_sizes_and_a_capacity_under_a_chunk() {
        let mut arena = Arena::new(3, 512);
        arena.reserve(2).unwrap();
        assert_eq!(arena.mapped_bytes(), 3 * 512 + HUGE_PAGE);
        arena.block_mut(2).fill(7);
        assert!(arena.block(1).iter().all(|&x| x == 0));
        assert!(arena.block(2).iter().all(|&x| x == 7));
        // A block larger than a chunk: one slot a chunk.
        let mut big = Arena::new(2, CHUNK_BYTES * 2);
        assert_eq!(big.shift, 0);
        big.reserve(1).unwrap();
        big.block_mut(1)[CHUNK_BYTES * 2 - 1] = 9;
        assert_eq!(big.block(1)[CHUNK_BYTES * 2 - 1], 9);
        assert_eq!(big.block(0)[0], 0);
    }
}
