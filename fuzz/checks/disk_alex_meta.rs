//! Fuzzes the on-disk ALEX's meta block decoder: any bytes either decode to a meta block
//! whose fields agree (parameters valid, root and first data node inside their files) and
//! that re-encodes to a block decoding to the same fields, or give a typed error; never a
//! panic.

use lidx::raw::disk::alex::decode_meta;

pub fn check(data: &[u8]) {
    if let Ok(meta) = decode_meta(data, "fuzz") {
        assert!(meta.data_nodes > 0);
        let mut again = vec![0u8; data.len()];
        meta.encode(&mut again);
        assert_eq!(decode_meta(&again, "fuzz").unwrap(), meta);
    }
}
