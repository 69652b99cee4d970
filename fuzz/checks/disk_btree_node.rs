//! Fuzzes the disk B+-tree node decoder and its free-list block decoder (a block the free list
//! names is read with the latter): the first bytes choose the layout (block size, key type,
//! payload size) and the file's block count, the rest is the block. Any input either decodes to
//! a node that can be read in full (every key and payload in bounds, keys strictly ascending,
//! ids inside the file, searches answer), or to a free-list block whose ids are ascending blocks
//! of the file that re-encodes to the same bytes, or gives a typed error; never a panic.

use lidx::raw::disk::btree::free::{decode_free_block, encode_free_block, FreeLayout};
use lidx::raw::disk::btree::node::{child_index, decode_node, Node, NodeLayout};
use lidx::{Key, Str16};

fn check_node<K: Key>(bytes: &[u8], layout: &NodeLayout, blocks: u64) {
    match decode_node::<K>(bytes, layout, 1, blocks, "fuzz") {
        Ok(Node::Leaf(leaf)) => {
            assert!(leaf.len() <= layout.leaf_cap);
            for i in 0..leaf.len() {
                assert_eq!(leaf.payload(i).len(), layout.payload_size);
                if i > 0 {
                    assert!(leaf.key(i - 1).key_lt(&leaf.key(i)));
                }
                assert_eq!(leaf.find(&leaf.key(i)), Ok(i));
            }
            assert!(leaf.lower_bound(&K::MAX) <= leaf.len());
            assert!(leaf.sibling().is_none_or(|s| s >= 1 && s < blocks));
        }
        Ok(Node::Inner(inner)) => {
            assert_eq!(inner.children.len(), inner.keys.len() + 1);
            assert!(inner.children.len() <= layout.inner_cap);
            assert!(inner.children.iter().all(|&c| c >= 1 && c < blocks));
            assert!(child_index(&inner.keys, &K::MAX) < inner.children.len());
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fn check_free(bytes: &[u8], blocks: u64) {
    let layout = FreeLayout {
        usable: bytes.len(),
    };
    match decode_free_block(bytes, &layout, 1, blocks, "fuzz") {
        Ok(free) => {
            assert!(free.ids.len() <= layout.ids_per_block());
            assert!(free.ids.windows(2).all(|w| w[0] < w[1]));
            assert!(free.ids.iter().all(|&id| id >= 2 && id < blocks));
            assert!(free.next.is_none_or(|n| n >= 2 && n < blocks));
            let mut again = vec![0u8; bytes.len()];
            encode_free_block(&mut again, &layout, &free.ids, free.next);
            assert_eq!(
                decode_free_block(&again, &layout, 1, blocks, "fuzz").unwrap(),
                free
            );
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

pub fn check(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let usable = if data[0] & 1 == 0 { 508 } else { 4092 };
    let payload_size = usize::from(data[1] % 64);
    let blocks = u64::from(data[2]) * 37;
    let node = &data[4..];
    let mut bytes = vec![0u8; usable];
    let n = node.len().min(usable);
    bytes[..n].copy_from_slice(&node[..n]);
    check_free(&bytes, blocks);
    match data[3] % 3 {
        0 => {
            if let Some(layout) = NodeLayout::new(usable, 8, payload_size) {
                check_node::<u64>(&bytes, &layout, blocks);
                check_node::<f64>(&bytes, &layout, blocks);
            }
        }
        1 => {
            if let Some(layout) = NodeLayout::new(usable, 16, payload_size) {
                check_node::<Str16>(&bytes, &layout, blocks);
            }
        }
        _ => {
            if let Some(layout) = NodeLayout::new(usable, 4, payload_size) {
                check_node::<u32>(&bytes, &layout, blocks);
            }
        }
    }
}
