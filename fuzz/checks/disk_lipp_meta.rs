//! Fuzzes the on-disk LIPP's meta block decoder: any bytes either decode to a meta block whose
//! fields agree (parameters valid, the root a node position inside the nodes, live and dead
//! bytes within them) and re-encode to a block that decodes the same, or give a typed error;
//! never a panic.

use lidx::raw::disk::lipp::decode_meta;

pub fn check(data: &[u8]) {
    if let Ok(m) = decode_meta(data, "fuzz") {
        m.params.validate().expect("decoded parameters are valid");
        let usable = m.usable() as u64;
        assert!(m.root >= usable && m.root < m.end);
        assert!(m.live_bytes + m.dead_bytes <= m.end - usable);
        let mut again = vec![0u8; data.len()];
        m.encode(&mut again);
        assert_eq!(decode_meta(&again, "fuzz").unwrap(), m);
    }
}
