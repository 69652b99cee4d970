//! Fuzzes the on-disk ALEX's inner node header decoder: any bytes decode to a header with a
//! power-of-two fanout and a finite, non-decreasing model that re-encodes to the same fields,
//! or give a typed error; never a panic.

use lidx::raw::disk::alex::decode_inner_header;

pub fn check(data: &[u8]) {
    if let Ok(h) = decode_inner_header(data, "fuzz", 1) {
        assert!(h.fanout() >= 2 && h.fanout().is_power_of_two());
        let mut again = vec![0u8; lidx::raw::disk::alex::INNER_HEADER_BYTES];
        h.encode(&mut again);
        assert_eq!(decode_inner_header(&again, "fuzz", 1).unwrap(), h);
    }
}
