//! Fuzzes the join table header decoder: any bytes either decode to a header whose record fits
//! a block and that re-encodes to the same bytes, or give a typed error; never a panic.

use lidx::join::TableHeader;
use lidx::raw::join::table::HEADER_BYTES;

pub fn check(data: &[u8]) {
    // The first byte picks the block payload, so several block sizes are covered.
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let payload = (512usize << (pick % 5)) - 4;
    match TableHeader::decode("fuzz", bytes, payload) {
        Ok(h) => {
            assert!(h.records_per_block(payload) >= 1);
            assert!(h.blocks(payload) >= 1);
            let mut again = [0u8; HEADER_BYTES];
            h.encode(&mut again);
            assert_eq!(&again[..], &bytes[..HEADER_BYTES]);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
