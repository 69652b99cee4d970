//! Fuzzes the learned-inner B+-tree's header decoder: any bytes either decode to a header whose
//! fields agree (a leaf layout exists, the blocks hold the leaves, meta and free blocks, every
//! named block is in the file, slots at most the leaves) and re-encode to a header that decodes
//! the same, or give a typed error; never a panic.

use lidx::raw::disk::btree_learned::decode_header;

pub fn check(data: &[u8]) {
    if let Ok(h) = decode_header(data, "fuzz") {
        let layout = h.layout().expect("a decoded header has a leaf layout");
        assert!(layout.leaf_cap >= 2);
        assert!(1 + h.leaves + h.meta_blocks + h.free_blocks <= h.blocks);
        assert!(h.slots >= 1 && h.slots <= h.leaves);
        assert!(h.first_leaf >= 1 && h.first_leaf < h.blocks);
        assert!(h.meta_head >= 1 && h.meta_head < h.blocks);
        assert_eq!(h.free_blocks == 0, h.free_head == u64::MAX);
        assert!(h.params().leaf_target(layout.leaf_cap).is_ok());
        let mut again = vec![0u8; data.len()];
        h.encode(&mut again);
        assert_eq!(decode_header(&again, "fuzz").unwrap(), h);
    }
}
