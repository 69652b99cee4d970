//! Fuzzes the disk B+-tree header decoder: any bytes either decode to a header whose fields
//! agree with each other (a node layout exists, the blocks hold the nodes and the free blocks,
//! root, first leaf and free list head are blocks of the tree) or give a typed error; never a
//! panic.

use lidx::raw::disk::btree::decode_header;

pub fn check(data: &[u8]) {
    if let Ok(h) = decode_header(data, "fuzz") {
        let layout = h.layout().expect("a decoded header has a node layout");
        assert!(layout.leaf_cap >= 2 && layout.inner_cap >= 3);
        assert_eq!(h.blocks, 1 + h.leaves + h.inners + h.free_blocks);
        assert_eq!(h.free_blocks == 0, h.free_head == u64::MAX);
        assert!(h.free_blocks == 0 || (h.free_head >= 1 && h.free_head < h.blocks));
        assert!(h.root >= 1 && h.root < h.blocks);
        assert!(h.first_leaf >= 1 && h.first_leaf < h.blocks);
        assert!(h.height >= 1);
        let mut again = vec![0u8; data.len()];
        h.encode(&mut again);
        assert_eq!(decode_header(&again, "fuzz").unwrap(), h);
    }
}
