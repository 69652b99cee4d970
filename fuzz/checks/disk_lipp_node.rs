//! Fuzzes the on-disk LIPP's node decoders: a node header, then its slots (flag, key or child
//! address, payload) as a lookup or scan meets them. Any bytes either decode to a header whose
//! node fits before the end of the nodes with a model that predicts inside its slots, and slots
//! whose children lie after the node and inside the nodes, or give a typed error; never a
//! panic. The first 8 bytes choose the node's position and the end of the nodes.

use lidx::raw::disk::lipp::node::{encode_addr, SlotKind, NODE_HEADER};
use lidx::raw::disk::lipp::{decode_node_header, decode_slot};

const USABLE: usize = 4092;
const SLOT: usize = 17;

pub fn check(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let seed = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
    let pos = USABLE as u64 + (seed & 0xffff);
    let end = pos + (seed >> 16) % (1 << 24);
    let bytes = &data[8..];
    let Ok(header) = decode_node_header(bytes, pos, end, SLOT, 1, "fuzz") else {
        return;
    };
    assert!(header.slots >= 1 && pos + header.node_bytes(SLOT) <= end);
    for probe in [0, seed, u64::MAX, header.size, header.build_size] {
        assert!((header.predict(probe) as u64) < header.slots);
    }
    let mut again = vec![0u8; NODE_HEADER];
    header.encode(&mut again);
    assert_eq!(
        decode_node_header(&again, pos, end, SLOT, 1, "fuzz").unwrap(),
        header
    );
    let slots = bytes[NODE_HEADER..]
        .chunks_exact(SLOT)
        .take(header.slots as usize);
    for slot in slots {
        if let Ok(SlotKind::Node(child)) =
            decode_slot(slot, pos, USABLE, (USABLE as u64, end), 1, "fuzz")
        {
            assert!(child > pos && child < end);
            let raw = u64::from_le_bytes(slot[1..9].try_into().expect("8 bytes"));
            assert_eq!(encode_addr(child, USABLE), raw);
        }
    }
}
