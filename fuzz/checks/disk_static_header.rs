//! Fuzzes the static learned index's header decoder: any bytes either decode to a header whose
//! derived sizes agree with each other (and re-encode to the same fields), or give a typed
//! error; never a panic.

use lidx::raw::disk::static_learned::header::{decode_header, HEADER_BYTES, MAGIC, VERSION};

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get the right magic and version, so the fuzzer reaches
    // the field checks.
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() >= 12 {
        data[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        data[8..12].copy_from_slice(&VERSION.to_le_bytes());
    }
    match decode_header("fuzz", &data) {
        Ok(h) => {
            assert!(h.per_block >= 1);
            assert_eq!(h.data_blocks, h.len.div_ceil(u64::from(h.per_block)));
            assert_eq!(h.model_points(), h.len.div_ceil(h.group()));
            let mut again = vec![0u8; HEADER_BYTES];
            h.encode(&mut again);
            assert_eq!(decode_header("fuzz", &again).unwrap(), h);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
