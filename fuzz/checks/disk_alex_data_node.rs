//! Fuzzes the on-disk ALEX's data node header decoder: any bytes decode to a header whose
//! counts fit its capacity and that re-encodes to the same fields, or give a typed error;
//! never a panic.

use lidx::raw::disk::alex::decode_data_header;

pub fn check(data: &[u8]) {
    if let Ok(h) = decode_data_header(data, "fuzz", 1) {
        assert!(h.num_keys() <= h.capacity() && h.capacity() > 0);
        assert!(h.node_bytes(16) > h.bitmap_bytes());
        let mut again = vec![0u8; lidx::raw::disk::alex::DATA_HEADER_BYTES];
        h.encode(&mut again);
        assert_eq!(decode_data_header(&again, "fuzz", 1).unwrap(), h);
    }
}
